//! One module per game, each implementing [`crate::game::Game`]; registered in
//! [`crate::registry::games`].

pub mod carre;
pub mod democratie;
pub mod grid_knock;
pub mod inline_cards;
pub mod qwirkle;
pub mod rat_a_tat_cat;
