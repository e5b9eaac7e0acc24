//! tablier's rules core: one decider per game behind the [`game::Game`] trait, a type-erased
//! registry the service drives with protobuf bytes, and the shared conformance harness.
//!
//! Nothing here does I/O. `decide` is pure given its RNG; `evolve` never draws randomness,
//! so replaying stored events always rebuilds the same state.

pub mod clock;
pub mod conformance;
pub mod error;
pub mod fork;
pub mod game;
pub mod games;
pub mod registry;
pub mod rng;
pub mod rollout;
pub mod testdata;
pub mod words;

#[cfg(feature = "python")]
mod python;

/// Generated protobuf types: `tablier.v1` (shared messages) and one `tablier.<game>.v1`
/// package per game (proto/tablier/<game>/v1/<game>.proto). The module tree mirrors the
/// packages, so generated code refers across packages (a game's view to `tablier.v1.Viewer`);
/// `build.rs` writes it from the packages of the proto directory, so no game is listed here.
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/proto_modules.rs"));
}

/// Version of the rules core, stored with every event it produced.
pub const CORE_VERSION: &str = env!("CARGO_PKG_VERSION");
