//! tablier's rules core: one decider per game behind the [`game::Game`] trait, a type-erased
//! registry the service drives with protobuf bytes, and the shared conformance harness.
//!
//! Nothing here does I/O. `decide` is pure given its RNG; `evolve` never draws randomness,
//! so replaying stored events always rebuilds the same state.

pub mod clock;
pub mod conformance;
pub mod error;
pub mod game;
pub mod games;
pub mod registry;
pub mod rng;

#[cfg(feature = "python")]
mod python;

/// Generated protobuf types (proto/tablier/v1).
pub mod proto {
    pub mod tablier {
        pub mod v1 {
            include!(concat!(env!("OUT_DIR"), "/tablier.v1.rs"));
            pub mod qwirkle {
                include!(concat!(env!("OUT_DIR"), "/tablier.v1.qwirkle.rs"));
            }
            pub mod rat_a_tat_cat {
                include!(concat!(env!("OUT_DIR"), "/tablier.v1.rat_a_tat_cat.rs"));
            }
            pub mod democratie {
                include!(concat!(env!("OUT_DIR"), "/tablier.v1.democratie.rs"));
            }
            pub mod grid_knock {
                include!(concat!(env!("OUT_DIR"), "/tablier.v1.grid_knock.rs"));
            }
            pub mod carre {
                include!(concat!(env!("OUT_DIR"), "/tablier.v1.carre.rs"));
            }
        }
    }
    pub use tablier::v1::*;
}

/// Version of the rules core, stored with every event it produced.
pub const CORE_VERSION: &str = env!("CARGO_PKG_VERSION");
