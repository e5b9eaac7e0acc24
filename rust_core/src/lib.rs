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
pub mod rollout;
pub mod words;

#[cfg(feature = "python")]
mod python;

/// Generated protobuf types: `tablier.v1` (shared messages) and one `tablier.<game>.v1`
/// package per game (proto/tablier/<game>/v1/<game>.proto). The module tree mirrors the
/// packages, so generated code refers across packages (a game's view to `tablier.v1.Viewer`).
pub mod proto {
    pub mod tablier {
        pub mod v1 {
            include!(concat!(env!("OUT_DIR"), "/tablier.v1.rs"));
        }
        pub mod qwirkle {
            pub mod v1 {
                include!(concat!(env!("OUT_DIR"), "/tablier.qwirkle.v1.rs"));
            }
        }
        pub mod rat_a_tat_cat {
            pub mod v1 {
                include!(concat!(env!("OUT_DIR"), "/tablier.rat_a_tat_cat.v1.rs"));
            }
        }
        pub mod democratie {
            pub mod v1 {
                include!(concat!(env!("OUT_DIR"), "/tablier.democratie.v1.rs"));
            }
        }
        pub mod grid_knock {
            pub mod v1 {
                include!(concat!(env!("OUT_DIR"), "/tablier.grid_knock.v1.rs"));
            }
        }
        pub mod carre {
            pub mod v1 {
                include!(concat!(env!("OUT_DIR"), "/tablier.carre.v1.rs"));
            }
        }
    }
    pub use tablier::carre::v1 as carre;
    pub use tablier::democratie::v1 as democratie;
    pub use tablier::grid_knock::v1 as grid_knock;
    pub use tablier::qwirkle::v1 as qwirkle;
    pub use tablier::rat_a_tat_cat::v1 as rat_a_tat_cat;
    pub use tablier::v1::*;
}

/// Version of the rules core, stored with every event it produced.
pub const CORE_VERSION: &str = env!("CARGO_PKG_VERSION");
