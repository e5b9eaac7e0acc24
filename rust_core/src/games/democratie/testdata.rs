//! What the shared harnesses play of Démocratie (`crate::testdata`).

use crate::testdata::{Forfeit, Silent, TestData, Winners};

pub(super) const TEST_DATA: TestData = TestData {
    variants: &[
        &[("target", "1"), ("max_deals", "2")],
        &[("max_deals", "1")],
    ],
    known_violations: &[],
    golden: &[(2, &[("target", "1")]), (3, &[("target", "1")])],
    pinned_matches: 40,
    pinned_digest: "da6b02e31138437840d3c913b08852511c106a99a056121b12c4c0f21f9099bd",
    short: &[("target", "1")],
    silent: &[Silent {
        policy: "weakest_card",
        seats: &[2, 3, 6],
        options: &[("target", "3")],
        matches: 8,
        max_steps: 50_000,
    }],
    forfeits: &[
        Forfeit {
            seats: &[2, 3, 6],
            options: &[],
            answers: 0,
        },
        Forfeit {
            seats: &[3, 4],
            options: &[("target", "9")],
            answers: 60,
        },
    ],
    forfeit_winners: Winners::HighestOtherScore,
};
