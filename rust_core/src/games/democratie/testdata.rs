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
    pinned_digest: "155d17fe8b15ab0c5212efce3799d67388da4175cc01bad073253bbefff3761a",
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
