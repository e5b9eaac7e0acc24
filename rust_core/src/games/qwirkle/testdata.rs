//! What the shared harnesses play of Qwirkle (`crate::testdata`).

use crate::testdata::{Forfeit, Silent, TestData, Winners};

pub(super) const TEST_DATA: TestData = TestData {
    variants: &[
        &[("ages", "30,40,30,20")],
        &[("max_idle_turns", "1")],
        &[("max_idle_turns", "3")],
    ],
    known_violations: &[],
    golden: &[(2, &[]), (3, &[])],
    pinned_matches: 10,
    pinned_digest: "2bb41654b3557cc965b84d03b6a073515991e2b25ff35ca763c494233f29d9f2",
    short: &[],
    silent: &[Silent {
        policy: "pass",
        seats: &[2, 3, 4],
        options: &[],
        matches: 12,
        max_steps: 5_000,
    }],
    forfeits: &[
        Forfeit {
            seats: &[2, 3, 4],
            options: &[],
            answers: 0,
        },
        Forfeit {
            seats: &[2, 4],
            options: &[],
            answers: 8,
        },
    ],
    forfeit_winners: Winners::HighestOtherScore,
};
