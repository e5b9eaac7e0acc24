//! What the shared test harnesses play of each game, declared by the game itself (its
//! folder's `testdata.rs`, reachable as [`crate::game::Game::TEST_DATA`] and through the
//! registry): `rust_core/tests/conformance.rs` and `rust_core/tests/timeouts.rs` iterate the
//! registry and hold no table of games.
//!
//! Nothing here changes what a game does: these are option sets, seat counts and the digests
//! the recorded behaviour must keep.

/// Options as `name = value` pairs.
pub type Opts = &'static [(&'static str, &'static str)];

pub struct TestData {
    /// Option sets the conformance harness plays besides the defaults: the variants and the
    /// administrative caps that end matches early. A set naming `ages` is played only at the
    /// seat count it lists ages for.
    pub variants: &'static [Opts],
    /// Violations the harness finds that the rules have not fixed yet: (seat count, text the
    /// violation contains). Reported, not failing, until fixed; normally empty.
    pub known_violations: &'static [(u32, &'static str)],
    /// Recorded matches (seat count, options keeping them short), each compared with the
    /// text in the game's `tests/golden/<id>-<seats>.txt`.
    pub golden: &'static [(u32, Opts)],
    /// Seeded matches per seat count hashed into [`TestData::pinned_digest`].
    pub pinned_matches: u64,
    /// SHA-256 (hex) of every byte of those matches: events, redactions, views, legal action
    /// lists. Speed work must not move it; if it moves, behaviour moved.
    pub pinned_digest: &'static str,
    /// Options that keep a match short, for the matches played through the registry with a
    /// clock and every timeout policy.
    pub short: Opts,
    /// Matches with one silent seat timing out under a policy, played to their end.
    pub silent: &'static [Silent],
    /// Matches where a seat stops answering under the `forfeit` policy.
    pub forfeits: &'static [Forfeit],
    /// Who wins a forfeited match.
    pub forfeit_winners: Winners,
}

/// Seeded matches where one seat (the first, then the last) never answers and times out under
/// `policy` every time it is awaited.
pub struct Silent {
    pub policy: &'static str,
    pub seats: &'static [u32],
    pub options: Opts,
    /// Seeded matches per seat count and silent seat.
    pub matches: u64,
    /// Steps after which a match that has not ended fails.
    pub max_steps: u64,
}

/// Matches where a seat answers `answers` times, then forfeits at its first timeout.
pub struct Forfeit {
    pub seats: &'static [u32],
    pub options: Opts,
    pub answers: u64,
}

/// The winners of a forfeited match, by the game's scoring as it stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Winners {
    /// The other seats with the lowest score (penalty points).
    LowestOtherScore,
    /// The other seats with the highest score.
    HighestOtherScore,
    /// Every other seat (a two-seat game: the opponent).
    EveryOtherSeat,
}

impl Winners {
    /// The winners when seat `silent` forfeits with `scores`.
    pub fn of(self, scores: &[i64], silent: u32) -> Vec<u32> {
        let others = (0..scores.len() as u32).filter(|&s| s != silent);
        let key = |s: u32| match self {
            Winners::LowestOtherScore => -scores[s as usize],
            Winners::HighestOtherScore => scores[s as usize],
            Winners::EveryOtherSeat => 0,
        };
        let top = others.clone().map(key).max().unwrap_or(0);
        others.filter(|&s| key(s) == top).collect()
    }
}
