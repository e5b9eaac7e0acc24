//! What the shared harnesses play of Grid Knock (`crate::testdata`).

use crate::testdata::{Forfeit, Silent, TestData, Winners};

pub(super) const TEST_DATA: TestData = TestData {
    variants: &[
        &[
            ("closer_penalty", "none"),
            ("knocking", "off"),
            ("target_score", "30"),
        ],
        &[("turn_cap", "10")],
    ],
    known_violations: &[],
    golden: &[(2, &[("target_score", "1")]), (3, &[("target_score", "1")])],
    pinned_matches: 5,
    pinned_digest: "9bcec4c35c469a187766c373bc8c930c396320a91641a57345e6b5d9c6159713",
    short: &[("target_score", "1")],
    silent: &[
        Silent {
            policy: "default_move",
            seats: &[2, 3, 5],
            options: &[("target_score", "60")],
            matches: 6,
            max_steps: 20_000,
        },
        Silent {
            policy: "default_move",
            seats: &[2, 3, 5],
            options: &[],
            matches: 6,
            max_steps: 20_000,
        },
    ],
    forfeits: &[
        Forfeit {
            seats: &[2, 3, 5],
            options: &[],
            answers: 0,
        },
        Forfeit {
            seats: &[3],
            options: &[("target_score", "300")],
            answers: 60,
        },
    ],
    forfeit_winners: Winners::LowestOtherScore,
};
