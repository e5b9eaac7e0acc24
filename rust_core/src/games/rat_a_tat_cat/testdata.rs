//! What the shared harnesses play of Rat-a-Tat Cat (`crate::testdata`).

use crate::testdata::{Forfeit, Silent, TestData, Winners};

const ONE_ROUND: crate::testdata::Opts = &[("match_mode", "fixed_rounds"), ("rounds", "1")];

pub(super) const TEST_DATA: TestData = TestData {
    variants: &[
        &[("point_limit", "40"), ("max_turns_per_round", "6")],
        &[
            ("match_mode", "fixed_rounds"),
            ("rounds", "2"),
            ("memory_aid", "on"),
        ],
        &[("admin_turn_cap", "7")],
    ],
    known_violations: &[],
    golden: &[(2, ONE_ROUND), (3, ONE_ROUND)],
    pinned_matches: 40,
    pinned_digest: "42eb9c943f28e9cc6f7038b2c7b8f8417e6efd6794219112802b1acc97a45602",
    short: ONE_ROUND,
    silent: &[
        Silent {
            policy: "draw_and_discard",
            seats: &[2, 4],
            options: &[],
            matches: 6,
            max_steps: 200_000,
        },
        Silent {
            policy: "draw_and_discard",
            seats: &[2, 4],
            options: &[("match_mode", "fixed_rounds"), ("rounds", "2")],
            matches: 6,
            max_steps: 200_000,
        },
        Silent {
            policy: "draw_and_discard",
            seats: &[2, 4],
            options: &[("match_mode", "elimination"), ("point_limit", "60")],
            matches: 6,
            max_steps: 200_000,
        },
    ],
    forfeits: &[
        Forfeit {
            seats: &[2, 3, 6],
            options: &[],
            answers: 0,
        },
        // A seat that stops answering later, once rounds were scored: the totals decide.
        Forfeit {
            seats: &[2, 4],
            options: &[("match_mode", "fixed_rounds"), ("rounds", "6")],
            answers: 12,
        },
    ],
    forfeit_winners: Winners::LowestOtherScore,
};
