//! What the shared harnesses play of Carré (`crate::testdata`).

use crate::testdata::{Forfeit, Silent, TestData, Winners};

pub(super) const TEST_DATA: TestData = TestData {
    variants: &[&[
        ("rounds_per_match", "2"),
        ("allow_go_out_without_draw", "false"),
        ("tiebreak_extra_rounds", "true"),
        ("cell_of_rank", "276951438"),
        ("first_starter", "1"),
    ]],
    known_violations: &[],
    golden: &[(2, &[("rounds_per_match", "1")])],
    pinned_matches: 40,
    pinned_digest: "1083c0ae9b7818aa7ad9691e8c15754d00910e477effdd18c274840b84704e58",
    short: &[("rounds_per_match", "1")],
    silent: &[
        Silent {
            policy: "discard",
            seats: &[2],
            options: &[],
            matches: 30,
            max_steps: 2_000,
        },
        Silent {
            policy: "discard",
            seats: &[2],
            options: &[("tiebreak_extra_rounds", "true")],
            matches: 10,
            max_steps: 4_000,
        },
    ],
    forfeits: &[
        Forfeit {
            seats: &[2],
            options: &[],
            answers: 0,
        },
        Forfeit {
            seats: &[2],
            options: &[],
            answers: 70,
        },
    ],
    forfeit_winners: Winners::EveryOtherSeat,
};
