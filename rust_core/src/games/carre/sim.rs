//! The simulation hot path: a whole round of uniformly random moves on the internal
//! representation (no protobuf), for the benches and the bounds test.

use super::cards::{bit, DECK, HAND, STOCK};
use super::state::{Config, Phase, State};
use crate::rng::Rng;

/// Deals a round from a fresh shuffle (`Rng::shuffle`).
pub(super) fn shuffled_deal(
    starter: u8,
    rng: &mut Rng,
) -> ([u64; 2], [[u8; HAND]; 2], [u8; STOCK]) {
    let mut deck: [u8; DECK] = [0; DECK];
    for (i, c) in deck.iter_mut().enumerate() {
        *c = i as u8;
    }
    rng.shuffle(&mut deck);
    let mut hands = [0u64; 2];
    let mut order = [[0u8; HAND]; 2];
    for i in 0..2 * HAND {
        let seat = if i % 2 == 0 { starter } else { 1 - starter } as usize;
        hands[seat] |= bit(deck[i]);
        order[seat][i / 2] = deck[i];
    }
    let mut stock = [0u8; STOCK];
    stock.copy_from_slice(&deck[2 * HAND..]);
    (hands, order, stock)
}

/// Plays one round from a fresh deal with uniformly random legal moves, on the internal
/// representation (no protobuf). Returns the raw points of both squares at round end.
pub fn simulate_random_round(rng: &mut Rng) -> [u32; 2] {
    let mut s = State::new(Config::default());
    s.phase = Phase::Dealing;
    let starter = rng.below(2) as u8;
    let (hands, _, stock) = shuffled_deal(starter, rng);
    s.deal(1, starter, hands, &stock);
    loop {
        match s.phase {
            Phase::Drawing => {
                s.draw();
            }
            Phase::Passing => s.pass(),
            Phase::Action => {
                let seat = s.current;
                match s.random_move(seat, rng) {
                    Some(mv) => s.apply_move(seat, mv),
                    None => break,
                }
            }
            _ => break,
        }
    }
    [s.raw(0), s.raw(1)]
}
