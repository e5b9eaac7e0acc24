//! Qwirkle: the test vectors of docs/rules/qwirkle.md (section 9), hidden information, bad input
//! (conformance: tests/conformance.rs).

use prost::Message;

use crate::error::CoreError;
use crate::game::{Game, OptionValues, Options, Viewer};
use crate::proto::qwirkle as pb;
use crate::rng::Rng;

use super::state::is_blocked;
use super::state::parse_options;
use super::tiles::{group_size, id_of_type, select, LineSet, ALL_IDS, ALL_TYPES};
use super::{count_plays, parse_type, Board, Phase, Qwirkle, State};

// ------------------------------------------------------------------------------------------------
// Test support: build positions directly.

impl State {
    /// A TURN-phase state from a board, hands and bag given as type codes (tiles not listed are
    /// out of play, as in the spec's test vectors). Panics on bad fixtures (tests only).
    fn fixture(
        seats: u32,
        board: &[(i32, i32, &str)],
        hands: &[&[&str]],
        bag: &[&str],
        current: u32,
    ) -> State {
        let config =
            parse_options(seats, &OptionValues::defaults(&Qwirkle::options())).expect("seats");
        let mut st = Qwirkle::initial(&config);
        let mut pool = ALL_IDS;
        let mut take = |code: &str| -> u32 {
            let t = parse_type(code).expect("tile code");
            let id = id_of_type(pool, t).expect("at most 3 copies");
            pool &= !(1u128 << id);
            id
        };
        for &(x, y, c) in board {
            let id = take(c);
            st.board.put(x, y, id);
        }
        for (s, h) in hands.iter().enumerate() {
            for c in h.iter() {
                st.hands[s] |= 1u128 << take(c);
            }
        }
        st.bag = 0;
        for c in bag {
            st.bag |= 1u128 << take(c);
        }
        st.phase = if st.board.is_empty() {
            Phase::Opening
        } else {
            Phase::Turn
        };
        st.current = current;
        st
    }

    /// Ids of the tiles on the table.
    fn board_ids(&self) -> u128 {
        self.board.ids
    }
}

impl Board {
    fn len(&self) -> usize {
        self.tiles.len()
    }
}

#[test]
fn masks() {
    let rc = parse_type("RC").unwrap();
    let set = LineSet::default().with(rc);
    let acc = set.accepts();
    assert_eq!(acc.count_ones(), 10);
    assert_eq!(acc & (1 << rc), 0);
    assert_eq!(group_size(ALL_TYPES), 6);
    assert_eq!(select(0b1011000, 2), 6);
    assert_eq!(select(1u128 << 100 | 1, 1), 100);
}

type Ev = pb::event::Kind;

fn t(code: &str) -> u32 {
    parse_type(code).unwrap() as u32
}

fn play_action(pl: &[(i32, i32, &str)]) -> pb::Action {
    pb::Action {
        kind: Some(pb::action::Kind::Play(pb::Play {
            placements: pl
                .iter()
                .map(|&(x, y, c)| pb::Placement {
                    x,
                    y,
                    tile_type: t(c),
                })
                .collect(),
        })),
    }
}

fn exchange_action(codes: &[&str]) -> pb::Action {
    pb::Action {
        kind: Some(pb::action::Kind::Exchange(pb::Exchange {
            tile_types: codes.iter().map(|c| t(c)).collect(),
        })),
    }
}

fn opening_action(codes: &[&str]) -> pb::Action {
    pb::Action {
        kind: Some(pb::action::Kind::Opening(pb::OpeningPlay {
            tile_types: codes.iter().map(|c| t(c)).collect(),
        })),
    }
}

fn pass_action() -> pb::Action {
    pb::Action {
        kind: Some(pb::action::Kind::Pass(pb::Pass {})),
    }
}

fn decide(st: &State, seat: u32, a: &pb::Action) -> Result<Vec<pb::Event>, CoreError> {
    crate::game::decide_checked::<Qwirkle>(st, seat, a, &mut Rng::from_u64(7))
}

fn apply(st: &mut State, evs: &[pb::Event]) {
    for e in evs {
        Qwirkle::evolve(st, e).unwrap();
    }
}

fn points(evs: &[pb::Event]) -> u32 {
    evs.iter()
        .find_map(|e| match &e.kind {
            Some(Ev::Placed(p)) => Some(p.points),
            _ => None,
        })
        .unwrap()
}

fn end(evs: &[pb::Event]) -> Option<pb::Ended> {
    evs.iter().find_map(|e| match &e.kind {
        Some(Ev::Ended(x)) => Some(x.clone()),
        _ => None,
    })
}

fn score_of(st: &State, seat: u32, pl: &[(i32, i32, &str)]) -> u32 {
    points(&decide(st, seat, &play_action(pl)).unwrap())
}

fn reason(r: Result<Vec<pb::Event>, CoreError>) -> &'static str {
    match r {
        Err(CoreError::Rule { reason, message }) => {
            crate::words::refusal_plain(&message).unwrap();
            reason
        }
        Err(CoreError::Malformed(_)) => "MALFORMED",
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => "OK",
    }
}

const SIX: [&str; 6] = ["BC", "BX", "BD", "BS", "BE", "BL"];

/// A TURN state on `board` with `hand` for seat 0, and six spare tiles in the bag.
fn pos(board: &[(i32, i32, &str)], hand: &[&str]) -> State {
    State::fixture(
        2,
        board,
        &[hand, &["PC"]],
        &["GC", "GX", "GD", "GS", "GE", "GL"],
        0,
    )
}

fn hand_types(st: &State, seat: u32) -> Vec<String> {
    let mut v: Vec<String> = (0..108u32)
        .filter(|&id| st.hands[seat as usize] & (1u128 << id) != 0)
        .map(|id| super::tiles::type_code((id / 3) as u8))
        .collect();
    v.sort();
    v
}

fn codes(v: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

fn ids_of(codes: &[&str], taken: &mut u128) -> Vec<u32> {
    codes
        .iter()
        .map(|c| {
            let ty = t(c);
            let id = (3 * ty..3 * ty + 3)
                .find(|&i| *taken & (1u128 << i) == 0)
                .unwrap();
            *taken |= 1u128 << id;
            id
        })
        .collect()
}

/// A SETUP state dealt the given hands (the rest in the bag).
fn dealt(seats: u32, ages: &str, hands: &[&[&str]]) -> State {
    let mut opts = Options::new();
    opts.insert("ages".into(), ages.into());
    let cfg = Qwirkle::checked_config(seats, &opts).unwrap();
    let mut st = Qwirkle::initial(&cfg);
    let mut taken = 0u128;
    let hands = hands
        .iter()
        .enumerate()
        .map(|(s, h)| pb::SeatTiles {
            seat: s as u32,
            count: 6,
            tile_ids: ids_of(h, &mut taken),
        })
        .collect();
    Qwirkle::evolve(
        &mut st,
        &pb::Event {
            kind: Some(Ev::Dealt(pb::Dealt { hands })),
        },
    )
    .unwrap();
    st
}

fn announce(st: &State, g: &[u32], start: u32) -> Result<(), CoreError> {
    let mut s = st.clone();
    Qwirkle::evolve(
        &mut s,
        &pb::Event {
            kind: Some(Ev::Announced(pb::Announced {
                group_sizes: g.to_vec(),
                start_seat: start,
            })),
        },
    )
}

fn announced(mut st: State, g: &[u32], start: u32) -> State {
    Qwirkle::evolve(
        &mut st,
        &pb::Event {
            kind: Some(Ev::Announced(pb::Announced {
                group_sizes: g.to_vec(),
                start_seat: start,
            })),
        },
    )
    .unwrap();
    st
}

// ---------------------------------------------------------------------------------------------
// Section 9 vectors

#[test]
fn tv01_start_player_duplicates_and_age() {
    let hands: [&[&str]; 3] = [
        &["RC", "RC", "RS", "RS", "RD", "RD"],
        &["OC", "OX", "OD", "OS", "PL", "PL"],
        &["GC", "BC", "YC", "PC", "GX", "GX"],
    ];
    // Born 1994, 1980, 1973: ages 32, 46, 53.
    let st = dealt(3, "32,46,53", &hands);
    assert_eq!(
        (0..3)
            .map(|s| group_size(st.hand_types(s)))
            .collect::<Vec<_>>(),
        vec![3, 4, 4]
    );
    assert!(announce(&st, &[3, 4, 4], 1).is_err());
    assert!(announce(&st, &[3, 4, 4], 2).is_ok());
    let st2 = dealt(3, "32,46,46", &hands);
    assert!(announce(&st2, &[3, 4, 4], 1).is_ok());
    let st3 = dealt(3, "", &hands);
    assert!(announce(&st3, &[3, 4, 4], 1).is_ok());
    // The real start() announces the same way.
    let mut s = Qwirkle::initial(&Qwirkle::checked_config(3, &Options::new()).unwrap());
    let evs = Qwirkle::start(&s, &mut Rng::from_u64(3)).unwrap();
    apply(&mut s, &evs);
    assert_eq!(s.phase, Phase::Opening);
    let st = announced(st, &[3, 4, 4], 2);
    let evs = decide(&st, 2, &opening_action(&["GC", "BC", "YC", "PC"])).unwrap();
    let mut st = st;
    apply(&mut st, &evs);
    assert_eq!(st.current, 0);
}

#[test]
fn tv02_opening_play_legality() {
    let hands: [&[&str]; 3] = [
        &["RC", "RC", "RS", "RS", "RD", "RD"],
        &["OC", "OX", "OD", "OS", "PL", "PL"],
        &["GC", "BC", "YC", "PC", "GX", "GX"],
    ];
    let st = announced(dealt(3, "32,46,53", &hands), &[3, 4, 4], 2);
    assert_eq!(st.bag.count_ones(), 90);
    assert_eq!(
        reason(decide(&st, 2, &opening_action(&["GC", "BC", "YC"]))),
        "WRONG_OPENING_SIZE"
    );
    assert_eq!(
        reason(decide(&st, 2, &opening_action(&["GC", "GX"]))),
        "WRONG_OPENING_SIZE"
    );
    assert_eq!(
        reason(decide(&st, 2, &opening_action(&["GC", "GX", "GX", "BC"]))),
        "NOT_A_GROUP"
    );
    assert_eq!(
        reason(decide(&st, 2, &exchange_action(&["GX"]))),
        "WRONG_PHASE"
    );
    assert_eq!(
        reason(decide(&st, 2, &play_action(&[(0, 0, "GC")]))),
        "WRONG_PHASE"
    );
    assert_eq!(
        reason(decide(&st, 0, &opening_action(&["GC", "BC", "YC", "PC"]))),
        "NOT_YOUR_TURN"
    );
    // One opening per group (AMB23): the 24 orders of the circles are one listed move, its
    // tiles in ascending type order; another order sent is still laid as sent (below).
    assert_eq!(
        Qwirkle::legal_actions(&st, 2),
        vec![opening_action(&["YC", "GC", "BC", "PC"])]
    );
    let evs = decide(&st, 2, &opening_action(&["GC", "BC", "YC", "PC"])).unwrap();
    assert_eq!(points(&evs), 4);
    let mut st = st;
    apply(&mut st, &evs);
    assert_eq!(
        [
            st.board.at(0, 0),
            st.board.at(1, 0),
            st.board.at(2, 0),
            st.board.at(3, 0)
        ],
        [
            t("GC") as u8 + 1,
            t("BC") as u8 + 1,
            t("YC") as u8 + 1,
            t("PC") as u8 + 1
        ]
    );
    assert_eq!(st.bag.count_ones(), 86);
    assert_eq!(st.scores[2], 4);
    assert_eq!(st.current, 0);
    assert_eq!(st.phase, Phase::Turn);
    assert_eq!(st.hands[2].count_ones(), 6);
}

#[test]
fn tv03_opening_qwirkle() {
    let st = dealt(
        2,
        "",
        &[
            &["RC", "RX", "RD", "RS", "RE", "RL"],
            &["OC", "OX", "OD", "GS", "GS", "BL"],
        ],
    );
    assert!(announce(&st, &[6, 3], 0).is_ok());
    let mut st = announced(st, &[6, 3], 0);
    assert_eq!(st.bag.count_ones(), 96);
    let evs = decide(
        &st,
        0,
        &opening_action(&["RC", "RX", "RD", "RS", "RE", "RL"]),
    )
    .unwrap();
    assert_eq!(points(&evs), 12);
    apply(&mut st, &evs);
    assert_eq!(st.bag.count_ones(), 90);
}

#[test]
fn tv04_lone_opening_tile() {
    let st = dealt(
        2,
        "66,36",
        &[
            &["RC", "OX", "YD", "GS", "BE", "PL"],
            &["RX", "OD", "YS", "GE", "BL", "PC"],
        ],
    );
    assert!(announce(&st, &[1, 1], 1).is_err());
    let mut st = announced(st, &[1, 1], 0);
    assert_eq!(Qwirkle::legal_actions(&st, 0).len(), 6);
    let evs = decide(&st, 0, &opening_action(&["YD"])).unwrap();
    assert_eq!(points(&evs), 1);
    apply(&mut st, &evs);
    assert_eq!(st.board.at(0, 0), t("YD") as u8 + 1);
    assert_eq!(st.hands[0].count_ones(), 6);
    assert_eq!(st.bag.count_ones(), 95);
}

#[test]
fn tv05_simple_extension() {
    let st = pos(
        &[(0, 0, "RC"), (1, 0, "RS")],
        &["RD", "BX", "GE", "YL", "PC", "OS"],
    );
    let evs = decide(&st, 0, &play_action(&[(2, 0, "RD")])).unwrap();
    assert_eq!(points(&evs), 3);
    assert!(evs
        .iter()
        .any(|e| matches!(&e.kind, Some(Ev::Drew(d)) if d.count == 1)));
}

#[test]
fn tv06_one_tile_two_lines() {
    let st = pos(&[(0, 0, "RC"), (1, 0, "RS"), (0, 1, "BC")], &["BS"]);
    assert_eq!(score_of(&st, 0, &[(1, 1, "BS")]), 4);
}

#[test]
fn tv07_duplicate_at_line_end() {
    let st = pos(&[(0, 0, "RC"), (1, 0, "RS"), (2, 0, "RD")], &["RC"]);
    assert_eq!(
        reason(decide(&st, 0, &play_action(&[(3, 0, "RC")]))),
        "INVALID_LINE"
    );
}

#[test]
fn tv08_identical_neighbour() {
    let st = pos(&[(0, 0, "RC")], &["RC"]);
    assert_eq!(
        reason(decide(&st, 0, &play_action(&[(1, 0, "RC")]))),
        "INVALID_LINE"
    );
}

#[test]
fn tv09_matches_neighbour_not_line() {
    let st = pos(&[(0, 0, "RC"), (1, 0, "RS")], &["BS"]);
    assert_eq!(
        reason(decide(&st, 0, &play_action(&[(2, 0, "BS")]))),
        "INVALID_LINE"
    );
}

#[test]
fn tv10_line_of_two_has_its_attribute() {
    let st = pos(&[(0, 0, "RC"), (1, 0, "BC")], &["BS"]);
    assert_eq!(
        reason(decide(&st, 0, &play_action(&[(2, 0, "BS")]))),
        "INVALID_LINE"
    );
}

#[test]
fn tv11_placed_share_attribute_line_does_not() {
    let st = pos(&[(0, 0, "BC"), (1, 0, "RC")], &["RS", "RD"]);
    assert_eq!(
        reason(decide(&st, 0, &play_action(&[(2, 0, "RS"), (3, 0, "RD")]))),
        "INVALID_LINE"
    );
}

#[test]
fn tv12_both_ends_in_one_play() {
    let st = pos(&[(0, 0, "RC"), (1, 0, "RS")], &["RD", "RX"]);
    assert_eq!(score_of(&st, 0, &[(-1, 0, "RD"), (2, 0, "RX")]), 4);
}

#[test]
fn tv13_empty_cell_between_placed() {
    let st = pos(&[(0, 0, "RC"), (1, 0, "RS")], &["RD", "RX"]);
    assert_eq!(
        reason(decide(&st, 0, &play_action(&[(2, 0, "RD"), (4, 0, "RX")]))),
        "GAP_IN_LINE"
    );
}

#[test]
fn tv14_not_one_row_or_column() {
    let st = pos(&[(0, 0, "RC"), (1, 0, "RS")], &["RD", "BS"]);
    assert_eq!(
        reason(decide(&st, 0, &play_action(&[(2, 0, "RD"), (1, 1, "BS")]))),
        "NOT_ONE_LINE"
    );
    assert_eq!(score_of(&st, 0, &[(2, 0, "RD")]), 3);
    assert_eq!(score_of(&st, 0, &[(1, 1, "BS")]), 2);
}

#[test]
fn tv15_not_connected() {
    let st = pos(&[(0, 0, "RC"), (1, 0, "RS")], &["RD"]);
    assert_eq!(
        reason(decide(&st, 0, &play_action(&[(3, 0, "RD")]))),
        "NOT_CONNECTED"
    );
    assert_eq!(
        reason(decide(&st, 0, &play_action(&[(2, 1, "RD")]))),
        "NOT_CONNECTED"
    );
}

const TV16: [(i32, i32, &str); 7] = [
    (0, 0, "RC"),
    (1, 0, "RS"),
    (3, 0, "RD"),
    (4, 0, "RC"),
    (1, 1, "BS"),
    (2, 1, "BX"),
    (3, 1, "BD"),
];

#[test]
fn tv16_gap_fill_creates_duplicate() {
    let st = pos(&TV16, &["RX"]);
    assert!(st.board.lines_valid().is_ok());
    assert_eq!(
        reason(decide(&st, 0, &play_action(&[(2, 0, "RX")]))),
        "INVALID_LINE"
    );
    // (2,0) is dead for every tile.
    let all: u64 = (1u64 << 36) - 1;
    let mut n = 0;
    super::plays::enumerate_plays(&st.board, all, |p| {
        if p.placements().any(|(x, y, _)| (x, y) == (2, 0)) {
            n += 1;
        }
    });
    assert_eq!(n, 0);
}

#[test]
fn tv17_gap_fill_legal() {
    let st = pos(
        &[
            (0, 0, "RC"),
            (1, 0, "RS"),
            (3, 0, "RD"),
            (4, 0, "RE"),
            (1, 1, "BS"),
            (2, 1, "BX"),
            (3, 1, "BD"),
        ],
        &["RX"],
    );
    assert_eq!(score_of(&st, 0, &[(2, 0, "RX")]), 7);
}

#[test]
fn tv18_parallel_play() {
    let st = pos(
        &[(0, 0, "RC"), (1, 0, "RS"), (2, 0, "RD")],
        &["BC", "BS", "BD"],
    );
    assert_eq!(
        score_of(&st, 0, &[(0, 1, "BC"), (1, 1, "BS"), (2, 1, "BD")]),
        9
    );
}

const TV19: [(i32, i32, &str); 7] = [
    (0, 0, "RC"),
    (1, 0, "RS"),
    (2, 0, "RD"),
    (3, 0, "RX"),
    (3, 1, "YX"),
    (4, 1, "YL"),
    (3, 2, "GX"),
];
const TV19_HAND: [&str; 6] = ["YC", "YS", "YD", "YE", "OC", "PL"];

#[test]
fn tv19_extension_with_perpendiculars() {
    let st = pos(&TV19, &TV19_HAND);
    assert_eq!(
        score_of(&st, 0, &[(0, 1, "YC"), (1, 1, "YS"), (2, 1, "YD")]),
        11
    );
}

#[test]
fn tv20_both_sides_completing_qwirkle() {
    let mut st = pos(&TV19, &TV19_HAND);
    let evs = decide(
        &st,
        0,
        &play_action(&[(0, 1, "YC"), (1, 1, "YS"), (2, 1, "YD"), (5, 1, "YE")]),
    )
    .unwrap();
    assert_eq!(points(&evs), 18);
    let drew: u32 = evs
        .iter()
        .filter_map(|e| {
            if let Some(Ev::Drew(d)) = &e.kind {
                Some(d.count)
            } else {
                None
            }
        })
        .sum();
    assert_eq!(drew, 4);
    apply(&mut st, &evs[..1]);
    assert_eq!(hand_types(&st, 0), codes(&["OC", "PL"]));
}

#[test]
fn tv21_bad_perpendicular_spoils_play() {
    let st = pos(&TV19, &TV19_HAND);
    assert_eq!(
        reason(decide(
            &st,
            0,
            &play_action(&[(0, 1, "YC"), (1, 1, "YS"), (2, 1, "YE")])
        )),
        "INVALID_LINE"
    );
}

#[test]
fn tv22_duplicate_in_perpendicular() {
    let st = pos(&[(0, 0, "RC"), (0, 1, "OC")], &["RC", "RS", "YC", "YS"]);
    assert_eq!(
        reason(decide(&st, 0, &play_action(&[(0, 2, "RC"), (1, 2, "RS")]))),
        "INVALID_LINE"
    );
    assert_eq!(score_of(&st, 0, &[(0, 2, "YC"), (1, 2, "YS")]), 5);
}

#[test]
fn tv23_one_tile_two_qwirkles() {
    let board = [
        (0, 0, "RC"),
        (1, 0, "RX"),
        (2, 0, "RD"),
        (3, 0, "RS"),
        (4, 0, "RE"),
        (4, 1, "OE"),
        (5, 1, "OL"),
        (5, 2, "YL"),
        (5, 3, "GL"),
        (5, 4, "BL"),
        (5, 5, "PL"),
    ];
    let st = pos(&board, &["RL"]);
    assert_eq!(score_of(&st, 0, &[(5, 0, "RL")]), 24);
}

#[test]
fn tv24_line_of_six_is_closed() {
    let board = [
        (0, 0, "RC"),
        (1, 0, "RX"),
        (2, 0, "RD"),
        (3, 0, "RS"),
        (4, 0, "RE"),
        (5, 0, "RL"),
    ];
    let st = pos(&board, &["BL", "RC"]);
    assert_eq!(
        reason(decide(&st, 0, &play_action(&[(6, 0, "BL")]))),
        "INVALID_LINE"
    );
    assert_eq!(
        reason(decide(&st, 0, &play_action(&[(6, 0, "RC")]))),
        "INVALID_LINE"
    );
    let all: u64 = (1u64 << 36) - 1;
    super::plays::enumerate_plays(&st.board, all, |p| {
        assert!(p
            .placements()
            .all(|(x, y, _)| (x, y) != (6, 0) && (x, y) != (-1, 0)));
    });
}

#[test]
fn tv25_exchange_limited_by_bag() {
    let mut st = State::fixture(
        2,
        &[(0, 0, "YC")],
        &[&["RC", "RC", "OX", "YD", "BS", "BE"], &["PC"]],
        &["GD", "PL"],
        0,
    );
    assert_eq!(
        reason(decide(&st, 0, &exchange_action(&["RC", "RC", "OX"]))),
        "BAG_TOO_SMALL"
    );
    assert_eq!(
        reason(decide(&st, 0, &exchange_action(&[]))),
        "EMPTY_EXCHANGE"
    );
    let evs = decide(&st, 0, &exchange_action(&["RC", "RC"])).unwrap();
    apply(&mut st, &evs);
    assert_eq!(
        hand_types(&st, 0),
        codes(&["OX", "YD", "BS", "BE", "GD", "PL"])
    );
    assert_eq!(st.bag.count_ones(), 2);
    assert_eq!(st.bag, st.bag & (0b111u128 << (3 * t("RC"))));
    assert_eq!(st.scores[0], 0);
    assert_eq!(st.current, 1);
}

const TWO_ROWS: [(i32, i32, &str); 12] = [
    (0, 0, "RC"),
    (1, 0, "RX"),
    (2, 0, "RD"),
    (3, 0, "RS"),
    (4, 0, "RE"),
    (5, 0, "RL"),
    (0, 1, "OC"),
    (1, 1, "OX"),
    (2, 1, "OD"),
    (3, 1, "OS"),
    (4, 1, "OE"),
    (5, 1, "OL"),
];

#[test]
fn tv26_no_play_exchange_mandatory() {
    let bag = ["YC", "YX", "GD", "GS", "BE", "BL", "PC", "PX", "PD", "PS"];
    let st = State::fixture(
        2,
        &TWO_ROWS,
        &[&["RC", "RX", "OD", "OS", "RL", "OE"], &["YD"]],
        &bag,
        0,
    );
    assert!(!is_blocked(&st));
    let acts = Qwirkle::legal_actions(&st, 0);
    assert_eq!(acts.len(), 63);
    assert!(acts
        .iter()
        .all(|a| matches!(a.kind, Some(pb::action::Kind::Exchange(_)))));
    assert_eq!(reason(decide(&st, 0, &pass_action())), "PASS_NOT_ALLOWED");
    assert_ne!(reason(decide(&st, 0, &play_action(&[(0, -1, "RC")]))), "OK");
    assert_ne!(reason(decide(&st, 0, &play_action(&[(6, 0, "RC")]))), "OK");
}

#[test]
fn tv27_empty_bag_pass_only_without_play() {
    let st = State::fixture(2, &TWO_ROWS, &[&["RC", "OD"], &["YC", "RS"]], &[], 0);
    assert_eq!(Qwirkle::legal_actions(&st, 0), vec![pass_action()]);
    let mut st1 = st.clone();
    st1.current = 1;
    let acts = Qwirkle::legal_actions(&st1, 1);
    assert_eq!(
        acts,
        vec![play_action(&[(0, -1, "YC")]), play_action(&[(0, 2, "YC")])]
    );
    assert_eq!(score_of(&st1, 1, &[(0, -1, "YC")]), 3);
    assert_eq!(score_of(&st1, 1, &[(0, 2, "YC")]), 3);
    assert_eq!(reason(decide(&st1, 1, &pass_action())), "PASS_NOT_ALLOWED");
    // P0's pass is accepted and hands the turn over.
    let mut s = st.clone();
    let evs = decide(&s, 0, &pass_action()).unwrap();
    apply(&mut s, &evs);
    assert_eq!(s.current, 1);
}

#[test]
fn tv28_blocked_bag_empty() {
    let st = State::fixture(2, &TWO_ROWS, &[&["RC", "OD"], &["RS", "OX"]], &[], 0);
    assert!(is_blocked(&st));
    // Reached by a play: P1 completes the orange row; the check at the start of P0's turn ends it.
    let board: Vec<_> = TWO_ROWS[..11].to_vec();
    let mut st = State::fixture(2, &board, &[&["RC", "OD"], &["RS", "OX", "OL"]], &[], 1);
    st.scores = [5, 7, 0, 0];
    let evs = decide(&st, 1, &play_action(&[(5, 1, "OL")])).unwrap();
    assert_eq!(points(&evs), 14);
    let e = end(&evs).unwrap();
    assert_eq!(e.reason, pb::EndReason::Blocked as i32);
    assert_eq!(e.bonus, 0);
    apply(&mut st, &evs);
    let o = Qwirkle::outcome(&st).unwrap();
    assert_eq!(
        (o.scores, o.reason.as_str(), o.aborted),
        (vec![5, 21], "BLOCKED", false)
    );
    assert!(Qwirkle::to_act(&st).is_empty());
}

#[test]
fn tv29_blocked_with_tiles_in_bag() {
    let mut board = Vec::new();
    for y in 0..6 {
        for x in 0..6 {
            board.push((
                x,
                y,
                [
                    "RC", "RX", "RD", "RS", "RE", "RL", "OC", "OX", "OD", "OS", "OE", "OL", "YC",
                    "YX", "YD", "YS", "YE", "YL", "GC", "GX", "GD", "GS", "GE", "GL", "BC", "BX",
                    "BD", "BS", "BE", "BL", "PC", "PX", "PD", "PS", "PE", "PL",
                ][(6 * y + x) as usize],
            ));
        }
    }
    let mut st = State::fixture(
        2,
        &board,
        &[
            &["RC", "RX", "RD", "RS", "RE", "RL"],
            &["OC", "OX", "OD", "OS", "OE", "OL"],
        ],
        &[],
        0,
    );
    st.bag = ((1u128 << 108) - 1) & !st.board_ids() & !st.hands[0] & !st.hands[1];
    assert_eq!(st.bag.count_ones(), 60);
    assert!(Qwirkle::check_invariants(&st).is_ok());
    assert!(is_blocked(&st));
}

#[test]
fn tv30_partial_refill() {
    let mut st = State::fixture(
        2,
        &[(0, 0, "RC")],
        &[&["RX", "RD", "RS", "RE", "BC", "GC"], &["PC"]],
        &["PL", "YS"],
        0,
    );
    let evs = decide(
        &st,
        0,
        &play_action(&[(1, 0, "RX"), (2, 0, "RD"), (3, 0, "RS"), (4, 0, "RE")]),
    )
    .unwrap();
    assert_eq!(points(&evs), 5);
    assert!(end(&evs).is_none());
    apply(&mut st, &evs);
    assert_eq!(hand_types(&st, 0), codes(&["BC", "GC", "PL", "YS"]));
    assert_eq!(st.bag, 0);
    assert_eq!(st.phase, Phase::Turn);
}

#[test]
fn tv31_normal_end() {
    let mut st = State::fixture(
        2,
        &[(0, 0, "GC"), (1, 0, "GX")],
        &[&["BL", "YE", "OC"], &["GD", "GS"]],
        &[],
        1,
    );
    st.scores = [40, 35, 0, 0];
    let mut a = st.clone();
    let evs = decide(&a, 1, &play_action(&[(2, 0, "GD"), (3, 0, "GS")])).unwrap();
    assert_eq!(points(&evs), 4);
    let e = end(&evs).unwrap();
    assert_eq!(
        (e.reason, e.bonus, e.bonus_seat),
        (pb::EndReason::HandEmptied as i32, 6, 1)
    );
    apply(&mut a, &evs);
    let o = Qwirkle::outcome(&a).unwrap();
    assert_eq!(
        (o.scores, o.winners, o.reason.as_str()),
        (vec![40, 45], vec![1], "HAND_EMPTIED")
    );
    // Variant: one tile, the game goes on with P0.
    let mut b = st.clone();
    let evs = decide(&b, 1, &play_action(&[(2, 0, "GD")])).unwrap();
    assert_eq!(points(&evs), 3);
    assert!(end(&evs).is_none());
    apply(&mut b, &evs);
    assert_eq!((b.scores[1], b.current, b.phase), (38, 0, Phase::Turn));
}

#[test]
fn tv32_last_play_is_a_qwirkle() {
    let mut st = State::fixture(
        2,
        &[(0, 0, "GC"), (1, 0, "GX"), (2, 0, "GD"), (3, 0, "GS")],
        &[&["GE", "GL"], &["RC"]],
        &[],
        0,
    );
    let evs = decide(&st, 0, &play_action(&[(4, 0, "GE"), (5, 0, "GL")])).unwrap();
    assert_eq!(points(&evs), 12);
    apply(&mut st, &evs);
    assert_eq!(st.scores[0], 18);
    assert_eq!(Qwirkle::outcome(&st).unwrap().reason, "HAND_EMPTIED");
}

fn counts(board: &[(i32, i32, &str)], hand: &[&str]) -> ([u32; 6], u32) {
    let b = Board::from_types(
        &board
            .iter()
            .map(|&(x, y, c)| (x, y, t(c) as u8))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let h = hand.iter().fold(0u64, |m, c| m | 1 << t(c));
    count_plays(&b, h)
}

const REDS: [&str; 6] = ["RC", "RX", "RD", "RS", "RE", "RL"];

#[test]
fn tv33_move_generator_counts() {
    let row: Vec<_> = (0..6).map(|x| (x, 0, REDS[x as usize])).collect();
    assert_eq!(
        counts(&row, &REDS),
        ([60, 670, 2744, 7746, 13124, 9334], 24),
        "A"
    );
    assert_eq!(
        counts(&[(0, 0, "RX"), (1, 0, "RS")], &REDS),
        ([28, 378, 1792, 5952, 12672, 13200], 16),
        "B"
    );
    assert_eq!(
        counts(
            &[(0, 0, "RC"), (1, 0, "RS"), (0, 1, "BC")],
            &["BS", "BD", "RD", "YC", "GS", "RS"]
        ),
        ([11, 27, 6, 0, 0, 0], 7),
        "C"
    );
    assert_eq!(
        counts(&TV19, &TV19_HAND),
        ([12, 61, 122, 147, 0, 0], 18),
        "D"
    );
    assert_eq!(
        counts(&[(0, 0, "RC")], &REDS),
        ([20, 320, 1680, 6000, 13440, 14400], 14),
        "E"
    );
    assert_eq!(
        counts(&TWO_ROWS, &["YC", "RS"]),
        ([2, 0, 0, 0, 0, 0], 3),
        "F"
    );
    let _ = SIX;
}

/// Every enumerated play passes the move checker with the same score, on positions from
/// greedy matches.
#[test]
fn enumerated_plays_agree_with_the_checker() {
    for seed in 0..6 {
        let (states, _) = greedy_match(2, seed);
        for st in states.iter().step_by(3) {
            if st.phase != Phase::Turn {
                continue;
            }
            let seat = st.current;
            for a in Qwirkle::legal_actions(st, seat) {
                if let Some(pb::action::Kind::Play(_)) = &a.kind {
                    decide(st, seat, &a).unwrap();
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Matches

fn greedy_match(seats: u32, seed: u64) -> (Vec<State>, Vec<pb::Event>) {
    let cfg = Qwirkle::checked_config(seats, &Options::new()).unwrap();
    let mut st = Qwirkle::initial(&cfg);
    let mut rng = Rng::from_u64(seed);
    let mut events = Qwirkle::start(&st, &mut rng).unwrap();
    apply(&mut st, &events);
    let mut states = vec![];
    while Qwirkle::outcome(&st).is_none() {
        states.push(st.clone());
        let seat = Qwirkle::to_act(&st).first().unwrap();
        let a = Qwirkle::bot_action(&st, seat, "greedy", &mut rng).unwrap();
        let evs = Qwirkle::decide(&st, seat, &a, &mut rng).unwrap();
        apply(&mut st, &evs);
        events.extend(evs);
    }
    states.push(st);
    (states, events)
}

#[test]
fn greedy_matches_end_by_the_rules() {
    for seats in 2..=4 {
        for seed in 0..5 {
            let (states, _) = greedy_match(seats, seed);
            let o = Qwirkle::outcome(states.last().unwrap()).unwrap();
            assert!(!o.aborted);
            assert!(o.reason == "HAND_EMPTIED" || o.reason == "BLOCKED");
        }
    }
}

#[test]
fn idle_cap_aborts() {
    let mut opts = Options::new();
    opts.insert("max_idle_turns".into(), "3".into());
    let cfg = Qwirkle::checked_config(2, &opts).unwrap();
    let mut st = Qwirkle::initial(&cfg);
    let mut rng = Rng::from_u64(1);
    let evs = Qwirkle::start(&st, &mut rng).unwrap();
    apply(&mut st, &evs);
    let s = st.current;
    let a = Qwirkle::bot_action(&st, s, "greedy", &mut rng).unwrap();
    let evs = Qwirkle::decide(&st, s, &a, &mut rng).unwrap();
    apply(&mut st, &evs);
    for i in 0..3 {
        let s = st.current;
        let id = (0..108)
            .find(|&id| st.hands[s as usize] & (1u128 << id) != 0)
            .unwrap();
        let evs = Qwirkle::decide(
            &st,
            s,
            &pb::Action {
                kind: Some(pb::action::Kind::Exchange(pb::Exchange {
                    tile_types: vec![id / 3],
                })),
            },
            &mut rng,
        )
        .unwrap();
        assert_eq!(end(&evs).is_some(), i == 2);
        apply(&mut st, &evs);
    }
    let o = Qwirkle::outcome(&st).unwrap();
    assert!(o.aborted);
    assert_eq!(o.reason, "IDLE_CAP");
    // Spec §10.4: the cap is reported as an abort, not a result, so nobody wins.
    assert!(o.winners.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Hidden information

/// Permutes the tiles seat `s` cannot see among the hidden places it cannot see (bag and the
/// hands of seats other than `s` and `keep`), and swaps copies of a type between `keep`'s hand
/// and those places.
fn scramble(st: &State, s: u32, keep: u32, rng: &mut Rng) -> State {
    let mut out = st.clone();
    let seats = st.config.seats;
    let mut pool: Vec<u32> = Vec::new();
    let places: Vec<u32> = (0..seats).filter(|&p| p != s && p != keep).collect();
    for &p in &places {
        pool.extend((0..108).filter(|&id| st.hands[p as usize] & (1u128 << id) != 0));
    }
    pool.extend((0..108).filter(|&id| st.bag & (1u128 << id) != 0));
    rng.shuffle(&mut pool);
    let mut it = pool.into_iter();
    for &p in &places {
        let n = st.hands[p as usize].count_ones();
        out.hands[p as usize] = 0;
        for _ in 0..n {
            out.hands[p as usize] |= 1u128 << it.next().unwrap();
        }
    }
    out.bag = it.fold(0u128, |m, id| m | 1u128 << id);
    // Copy swap for the actor: the same type, another physical tile.
    if keep != s {
        let hidden = out.bag | places.iter().fold(0u128, |m, &p| m | out.hands[p as usize]);
        for id in 0..108u32 {
            if out.hands[keep as usize] & (1u128 << id) == 0 {
                continue;
            }
            let ty = id / 3;
            if let Some(other) = (3 * ty..3 * ty + 3).find(|&o| hidden & (1u128 << o) != 0) {
                out.hands[keep as usize] &= !(1u128 << id);
                out.hands[keep as usize] |= 1u128 << other;
                if out.bag & (1u128 << other) != 0 {
                    out.bag = (out.bag & !(1u128 << other)) | 1u128 << id;
                } else {
                    for &p in &places {
                        if out.hands[p as usize] & (1u128 << other) != 0 {
                            out.hands[p as usize] =
                                (out.hands[p as usize] & !(1u128 << other)) | 1u128 << id;
                        }
                    }
                }
                break;
            }
        }
    }
    assert!(Qwirkle::check_invariants(&out).is_ok());
    out
}

#[test]
fn hidden_information_does_not_leak() {
    let mut checked = 0;
    for seats in 2..=4u32 {
        for seed in 0..8u64 {
            let (states, _) = greedy_match(seats, seed);
            let mut rng = Rng::from_u64(seed + 99);
            for st in states.iter().step_by(4) {
                if Qwirkle::outcome(st).is_some() {
                    continue;
                }
                let actor = st.current;
                let action =
                    Qwirkle::bot_action(st, actor, "greedy", &mut Rng::from_u64(5)).unwrap();
                for s in 0..seats {
                    let copy = scramble(st, s, actor, &mut rng);
                    let v1 = Qwirkle::view(st, Viewer::Seat(s)).encode_to_vec();
                    let v2 = Qwirkle::view(&copy, Viewer::Seat(s)).encode_to_vec();
                    assert_eq!(v1, v2, "view of seat {s} depends on hidden tiles");
                    assert_eq!(
                        Qwirkle::view(st, Viewer::Spectator).encode_to_vec(),
                        Qwirkle::view(&copy, Viewer::Spectator).encode_to_vec()
                    );
                    // What s may see is there.
                    let v = Qwirkle::view(st, Viewer::Seat(s));
                    assert_eq!(
                        v.seats[s as usize].hand_tile_ids.len() as u32,
                        st.hands[s as usize].count_ones()
                    );
                    assert_eq!(v.board.len(), st.board.len());
                    assert!(v.bag_tile_ids.is_empty());
                    for o in 0..seats {
                        assert_eq!(
                            v.seats[o as usize].hand_count,
                            st.hands[o as usize].count_ones()
                        );
                        if o != s {
                            assert!(v.seats[o as usize].hand_tile_ids.is_empty());
                        }
                    }
                    if s == actor {
                        continue;
                    }
                    let e1 = Qwirkle::decide(st, actor, &action, &mut Rng::from_u64(11)).unwrap();
                    let e2 =
                        Qwirkle::decide(&copy, actor, &action, &mut Rng::from_u64(11)).unwrap();
                    let r1: Vec<Vec<u8>> = e1
                        .iter()
                        .filter_map(|e| Qwirkle::redact(e, Viewer::Seat(s)))
                        .map(|e| e.encode_to_vec())
                        .collect();
                    let r2: Vec<Vec<u8>> = e2
                        .iter()
                        .filter_map(|e| Qwirkle::redact(e, Viewer::Seat(s)))
                        .map(|e| e.encode_to_vec())
                        .collect();
                    assert_eq!(
                        r1, r2,
                        "events redacted for seat {s} depend on hidden tiles"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 200, "{checked}");
}

#[test]
fn deal_is_redacted_for_other_seats() {
    let st = Qwirkle::initial(&Qwirkle::checked_config(3, &Options::new()).unwrap());
    let evs = Qwirkle::start(&st, &mut Rng::from_u64(4)).unwrap();
    let Some(Ev::Dealt(d)) = Qwirkle::redact(&evs[0], Viewer::Seat(1)).unwrap().kind else {
        panic!()
    };
    assert!(d.hands[0].tile_ids.is_empty() && d.hands[2].tile_ids.is_empty());
    assert_eq!(d.hands[1].tile_ids.len(), 6);
    assert!(d.hands.iter().all(|h| h.count == 6));
    let Some(Ev::Dealt(d)) = Qwirkle::redact(&evs[0], Viewer::Spectator).unwrap().kind else {
        panic!()
    };
    assert!(d.hands.iter().all(|h| h.tile_ids.is_empty()));
    assert_eq!(Qwirkle::redact(&evs[0], Viewer::Auditor).unwrap(), evs[0]);
}

// ---------------------------------------------------------------------------------------------
// Bad input

#[test]
fn malformed_and_illegal_input_is_refused() {
    let st = pos(
        &[(0, 0, "RC"), (1, 0, "RS")],
        &["RD", "RX", "BS", "GE", "YL", "PC"],
    );
    assert!(matches!(
        decide(&st, 0, &pb::Action { kind: None }),
        Err(CoreError::Malformed(_))
    ));
    // A seat beyond the match is not awaited (the registry calls it malformed before that).
    assert_eq!(
        reason(decide(&st, 9, &play_action(&[(2, 0, "RD")]))),
        "NOT_YOUR_TURN"
    );
    assert_eq!(
        reason(decide(&st, 1, &play_action(&[(2, 0, "RD")]))),
        "NOT_YOUR_TURN"
    );
    let far = pb::Action {
        kind: Some(pb::action::Kind::Play(pb::Play {
            placements: vec![pb::Placement {
                x: i32::MAX,
                y: i32::MIN,
                tile_type: 0,
            }],
        })),
    };
    assert_eq!(reason(decide(&st, 0, &far)), "NOT_CONNECTED");
    let bad_type = pb::Action {
        kind: Some(pb::action::Kind::Play(pb::Play {
            placements: vec![pb::Placement {
                x: 2,
                y: 0,
                tile_type: 36,
            }],
        })),
    };
    assert_eq!(reason(decide(&st, 0, &bad_type)), "MALFORMED");
    let bad_type = pb::Action {
        kind: Some(pb::action::Kind::Exchange(pb::Exchange {
            tile_types: vec![u32::MAX],
        })),
    };
    assert_eq!(reason(decide(&st, 0, &bad_type)), "MALFORMED");
    assert_eq!(reason(decide(&st, 0, &play_action(&[]))), "EMPTY_PLAY");
    assert_eq!(
        reason(decide(&st, 0, &play_action(&[(2, 0, "GC")]))),
        "NOT_IN_HAND"
    );
    assert_eq!(
        reason(decide(&st, 0, &play_action(&[(1, 0, "RD")]))),
        "CELL_OCCUPIED"
    );
    assert_eq!(
        reason(decide(&st, 0, &play_action(&[(2, 0, "RD"), (2, 0, "RX")]))),
        "DUPLICATE_CELL"
    );
    let seven: Vec<(i32, i32, &str)> = (2..9).map(|x| (x, 0, "RD")).collect();
    assert_eq!(
        reason(decide(&st, 0, &play_action(&seven))),
        "TOO_MANY_TILES"
    );
    assert_eq!(
        reason(decide(&st, 0, &exchange_action(&["RD", "RD"]))),
        "NOT_IN_HAND"
    );
    assert_eq!(
        reason(decide(
            &st,
            0,
            &exchange_action(&["RD", "RX", "BS", "GE", "YL", "PC", "PC"])
        )),
        "NOT_IN_HAND"
    );
    assert_eq!(reason(decide(&st, 0, &pass_action())), "PASS_NOT_ALLOWED");
    assert_eq!(
        reason(decide(&st, 0, &opening_action(&["RD"]))),
        "WRONG_PHASE"
    );
    // Setup and game over.
    let fresh = Qwirkle::initial(&Qwirkle::checked_config(2, &Options::new()).unwrap());
    assert_eq!(reason(decide(&fresh, 0, &pass_action())), "NOT_STARTED");
    let mut over = st.clone();
    over.phase = Phase::Over;
    assert_eq!(reason(decide(&over, 0, &pass_action())), "GAME_OVER");
    // Options.
    let opt = |k: &str, v: &str| {
        let mut o = Options::new();
        o.insert(k.into(), v.into());
        Qwirkle::checked_config(2, &o)
    };
    assert!(matches!(
        opt("colour", "1"),
        Err(CoreError::InvalidOption(_))
    ));
    assert!(matches!(
        opt("ages", "1,2,3"),
        Err(CoreError::InvalidOption(_))
    ));
    assert!(matches!(
        opt("ages", "1,x"),
        Err(CoreError::InvalidOption(_))
    ));
    assert!(matches!(
        opt("max_idle_turns", "0"),
        Err(CoreError::InvalidOption(_))
    ));
    assert!(opt("max_idle_turns", "50").is_ok());
    assert!(matches!(
        Qwirkle::checked_config(5, &Options::new()),
        Err(CoreError::InvalidOption(_))
    ));
}

#[test]
fn corrupt_events_are_rejected() {
    let st = pos(&[(0, 0, "RC")], &["RD", "RX", "BS", "GE", "YL", "PC"]);
    let hid = st.hands[0].trailing_zeros();
    let bad = [
        pb::Event { kind: None },
        pb::Event {
            kind: Some(Ev::Placed(pb::Placed {
                seat: 0,
                opening: false,
                placements: vec![pb::Placement {
                    x: 0,
                    y: 0,
                    tile_type: 0,
                }],
                tile_ids: vec![0],
                points: 2,
            })),
        },
        pb::Event {
            kind: Some(Ev::Placed(pb::Placed {
                seat: 0,
                opening: false,
                placements: vec![pb::Placement {
                    x: 900,
                    y: 0,
                    tile_type: 0,
                }],
                tile_ids: vec![500],
                points: 2,
            })),
        },
        pb::Event {
            kind: Some(Ev::Placed(pb::Placed {
                seat: 0,
                opening: false,
                placements: vec![pb::Placement {
                    x: i32::MIN,
                    y: i32::MIN,
                    tile_type: hid / 3,
                }],
                tile_ids: vec![hid],
                points: 2,
            })),
        },
        pb::Event {
            kind: Some(Ev::Drew(pb::Drew {
                seat: 7,
                count: 1,
                tile_ids: vec![1],
            })),
        },
        // Out of turn (with tiles in the bag a pass is a timed-out seat's, docs/rules/qwirkle.md §11).
        pb::Event {
            kind: Some(Ev::Passed(pb::Passed { seat: 1 })),
        },
        pb::Event {
            kind: Some(Ev::Exchanged(pb::Exchanged {
                seat: 0,
                count: 1,
                drawn_ids: vec![200],
                returned_ids: vec![],
            })),
        },
        pb::Event {
            kind: Some(Ev::Ended(pb::Ended {
                reason: 99,
                bonus_seat: 0,
                bonus: 0,
                final_scores: vec![0, 0],
                aborted: false,
            })),
        },
        pb::Event {
            kind: Some(Ev::Dealt(pb::Dealt { hands: vec![] })),
        },
    ];
    for e in bad {
        let mut s = st.clone();
        assert!(
            matches!(Qwirkle::evolve(&mut s, &e), Err(CoreError::Corrupt(_))),
            "{e:?}"
        );
    }
}

#[test]
fn evaluator_validates_and_counts() {
    let p = |board: Vec<(i32, i32, &str)>, hand: Vec<&str>| pb::Position {
        board: board
            .into_iter()
            .map(|(x, y, c)| pb::BoardTile {
                x,
                y,
                tile_type: t(c),
            })
            .collect(),
        hand_types: hand.into_iter().map(t).collect(),
        bag_empty: false,
        ..Default::default()
    };
    let e = Qwirkle::evaluate(&p(vec![(0, 0, "RC")], REDS.to_vec()).encode_to_vec()).unwrap();
    let e = pb::Evaluation::decode(&e[..]).unwrap();
    assert_eq!(
        (e.total, e.best_score, e.counts_per_k.clone()),
        (35860, 14, vec![20, 320, 1680, 6000, 13440, 14400])
    );
    let mut pos = p(
        vec![(0, 0, "GC"), (1, 0, "GX"), (2, 0, "GD"), (3, 0, "GS")],
        vec!["GE", "GL"],
    );
    pos.bag_empty = true;
    let e = pb::Evaluation::decode(&Qwirkle::evaluate(&pos.encode_to_vec()).unwrap()[..]).unwrap();
    assert_eq!(e.best_score, 18);
    for bad in [
        p(vec![(0, 0, "RC"), (1, 0, "RC")], vec![]),
        p(vec![(0, 0, "RC"), (0, 0, "RX")], vec![]),
        p(vec![(90, 0, "RC")], vec![]),
        p(vec![(i32::MIN, i32::MIN, "RC")], vec![]),
        p(vec![(0, 0, "RC"), (5, 5, "RC"), (9, 9, "RC")], vec!["RC"]),
        p(vec![], vec!["RC"; 7]),
    ] {
        assert!(
            matches!(
                Qwirkle::evaluate(&bad.encode_to_vec()),
                Err(CoreError::Malformed(_))
            ),
            "{bad:?}"
        );
    }
    assert!(matches!(
        Qwirkle::evaluate(&[0xff, 0xff, 0xff]),
        Err(CoreError::Malformed(_))
    ));
    let big = pb::Position {
        board: vec![pb::BoardTile {
            x: 0,
            y: 0,
            tile_type: 99,
        }],
        hand_types: vec![],
        bag_empty: false,
        ..Default::default()
    };
    assert!(matches!(
        Qwirkle::evaluate(&big.encode_to_vec()),
        Err(CoreError::Malformed(_))
    ));
    // Random bytes never panic.
    let mut rng = Rng::from_u64(3);
    for _ in 0..2000 {
        let n = rng.index(40);
        let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
        let _ = Qwirkle::evaluate(&bytes);
    }
}

#[test]
fn render_and_views_follow_the_viewer() {
    let (states, _) = greedy_match(3, 1);
    let st = &states[states.len() / 2];
    let r = Qwirkle::render(st, Viewer::Seat(0));
    assert!(r.contains("seat 1") && r.contains("tiles"));
    let a = Qwirkle::view(st, Viewer::Auditor);
    assert_eq!(a.bag_tile_ids.len() as u32, st.bag.count_ones());
    assert_eq!(a.board_tile_ids.len(), st.board.len());
    assert!(a.seats.iter().all(|s| s.hand_visible));
    let v = Qwirkle::view(st, Viewer::Spectator);
    assert!(v
        .seats
        .iter()
        .all(|s| !s.hand_visible && s.hand_tile_ids.is_empty()));
}

/// Brute force for plays of one and two tiles on positions from greedy matches: every legal
/// (cell, type) set the checker accepts is enumerated once, with the same score.
#[test]
fn enumeration_complete_for_small_plays() {
    use std::collections::BTreeMap;
    let mut positions = 0;
    for seed in 0..3 {
        let (states, _) = greedy_match(2, seed);
        for st in states.iter().skip(4).step_by(9).take(3) {
            if st.phase != Phase::Turn {
                continue;
            }
            positions += 1;
            let seat = st.current;
            let types = st.hand_types(seat);
            let mut counts = [0u8; 36];
            for id in 0..108 {
                if st.hands[seat as usize] & (1u128 << id) != 0 {
                    counts[id / 3] += 1;
                }
            }
            let mut listed: BTreeMap<Vec<(i32, i32, u8)>, u32> = BTreeMap::new();
            super::plays::enumerate_plays(&st.board, types, |p| {
                if p.len() <= 2 {
                    let mut v: Vec<_> = p.placements().collect();
                    v.sort();
                    assert!(listed.insert(v, p.score).is_none(), "play listed twice");
                }
            });
            let tiles: Vec<(i32, i32)> = (-20..=20)
                .flat_map(|y| (-20..=20).map(move |x| (x, y)))
                .filter(|&(x, y)| st.board.at(x, y) != 0)
                .collect();
            let (x0, x1) = (
                tiles.iter().map(|t| t.0).min().unwrap() - 6,
                tiles.iter().map(|t| t.0).max().unwrap() + 6,
            );
            let (y0, y1) = (
                tiles.iter().map(|t| t.1).min().unwrap() - 6,
                tiles.iter().map(|t| t.1).max().unwrap() + 6,
            );
            let hand: Vec<u8> = (0..36u8).filter(|&t| types & (1 << t) != 0).collect();
            let mut found: BTreeMap<Vec<(i32, i32, u8)>, u32> = BTreeMap::new();
            let code = |t: u8| super::tiles::type_code(t);
            for y in y0..=y1 {
                for x in x0..=x1 {
                    if st.board.at(x, y) != 0 {
                        continue;
                    }
                    for &a in &hand {
                        if let Ok(evs) = decide(st, seat, &play_action(&[(x, y, &code(a))])) {
                            found.insert(vec![(x, y, a)], points(&evs));
                        }
                        for (dx, dy) in [(1, 0), (0, 1)] {
                            for d in 1..=5 {
                                let (x2, y2) = (x + dx * d, y + dy * d);
                                for &b in &hand {
                                    if let Ok(evs) = decide(
                                        st,
                                        seat,
                                        &play_action(&[(x, y, &code(a)), (x2, y2, &code(b))]),
                                    ) {
                                        let mut v = vec![(x, y, a), (x2, y2, b)];
                                        v.sort();
                                        found.insert(v, points(&evs));
                                    }
                                }
                            }
                        }
                    }
                }
            }
            let _ = counts;
            assert_eq!(listed, found);
        }
    }
    assert!(positions >= 5);
}

/// The service's path: the registry drives the game with bytes only.
#[test]
fn registry_drives_a_match_with_bytes() {
    let g = crate::registry::find("qwirkle").unwrap();
    let info = g.info();
    assert_eq!(
        (info.min_players, info.max_players, info.bots.clone()),
        (
            2,
            4,
            vec![
                "random".to_string(),
                "evaluator".to_string(),
                "greedy".to_string()
            ]
        )
    );
    assert_eq!(info.position_type, "tablier.qwirkle.v1.Position");
    assert!(g.new_match(5, &Options::new()).is_err());
    let mut m = g.new_match(2, &Options::new()).unwrap();
    let seed = [9u8; 32];
    let mut seq = 1u64;
    for e in m.start(&mut Rng::for_command(&seed, seq)).unwrap() {
        m.apply(&e.payload).unwrap();
        seq += 1;
    }
    let mut guard = 0;
    while m.outcome().is_none() && guard < 500 {
        guard += 1;
        let seat = m.to_act()[0];
        let a = m
            .bot_action(seat, "greedy", &mut Rng::for_command(&seed, seq))
            .unwrap();
        assert!(m.legal_actions(seat).unwrap().contains(&a));
        let evs = m
            .decide(seat, &a, &mut Rng::for_command(&seed, seq))
            .unwrap();
        for e in evs {
            assert!(m
                .redact(&e.payload, Viewer::Seat(1 - seat))
                .unwrap()
                .is_some());
            m.apply(&e.payload).unwrap();
            seq += 1;
        }
        assert!(m
            .decide(seat, &[0xff, 0x01], &mut Rng::from_u64(0))
            .is_err());
    }
    assert!(m.outcome().is_some());
    assert_eq!(m.state_hash().len(), 32);
    assert!(!m.render(Viewer::Spectator).unwrap().is_empty());
}

/// Random actions (cells anywhere, types out of range, any sizes) are refused or accepted,
/// never a panic; accepted ones were listed as legal.
#[test]
fn random_actions_never_panic() {
    let (states, _) = greedy_match(3, 42);
    let mut rng = Rng::from_u64(8);
    let coord = |rng: &mut Rng| match rng.index(10) {
        0 => i32::MIN,
        1 => i32::MAX,
        2 => rng.index(400) as i32 - 200,
        _ => rng.index(16) as i32 - 8,
    };
    for st in states.iter().step_by(2) {
        let seat = st.current;
        let legal = Qwirkle::legal_actions(st, seat);
        for _ in 0..150 {
            let k = rng.index(9);
            let a = match rng.index(4) {
                0 => pb::Action {
                    kind: Some(pb::action::Kind::Play(pb::Play {
                        placements: (0..k)
                            .map(|_| pb::Placement {
                                x: coord(&mut rng),
                                y: coord(&mut rng),
                                tile_type: rng.index(40) as u32,
                            })
                            .collect(),
                    })),
                },
                1 => pb::Action {
                    kind: Some(pb::action::Kind::Exchange(pb::Exchange {
                        tile_types: (0..k).map(|_| rng.index(40) as u32).collect(),
                    })),
                },
                2 => pb::Action {
                    kind: Some(pb::action::Kind::Opening(pb::OpeningPlay {
                        tile_types: (0..k).map(|_| rng.index(40) as u32).collect(),
                    })),
                },
                _ => pass_action(),
            };
            for s in 0..3 {
                if decide(st, s, &a).is_ok() {
                    assert_eq!(s, seat);
                    if let Some(pb::action::Kind::Play(p)) = &a.kind {
                        // Listed in some order of its placements.
                        let mut want: Vec<_> = p
                            .placements
                            .iter()
                            .map(|q| (q.x, q.y, q.tile_type))
                            .collect();
                        want.sort();
                        assert!(legal.iter().any(|l| match &l.kind {
                            Some(pb::action::Kind::Play(lp)) => {
                                let mut got: Vec<_> = lp
                                    .placements
                                    .iter()
                                    .map(|q| (q.x, q.y, q.tile_type))
                                    .collect();
                                got.sort();
                                got == want
                            }
                            _ => false,
                        }));
                    }
                }
            }
        }
    }
}

/// Random events never panic `evolve` or `redact`; the state is only ever Corrupt-refused or
/// changed by a fitting event.
#[test]
fn random_events_never_panic() {
    let (states, _) = greedy_match(2, 5);
    let mut rng = Rng::from_u64(12);
    let mut r = |n: usize| rng.index(n) as u32;
    for st in states.iter().step_by(5) {
        for _ in 0..200 {
            let ids =
                |r: &mut dyn FnMut(usize) -> u32| (0..r(8)).map(|_| r(120)).collect::<Vec<u32>>();
            let kind = match r(7) {
                0 => Ev::Dealt(pb::Dealt {
                    hands: (0..r(5))
                        .map(|s| pb::SeatTiles {
                            seat: s,
                            count: r(8),
                            tile_ids: ids(&mut r),
                        })
                        .collect(),
                }),
                1 => Ev::Announced(pb::Announced {
                    group_sizes: (0..r(5)).map(|_| r(8)).collect(),
                    start_seat: r(6),
                }),
                2 => Ev::Placed(pb::Placed {
                    seat: r(5),
                    opening: r(2) == 0,
                    placements: (0..r(8))
                        .map(|_| pb::Placement {
                            x: r(300) as i32 - 150,
                            y: r(300) as i32 - 150,
                            tile_type: r(40),
                        })
                        .collect(),
                    tile_ids: ids(&mut r),
                    points: r(100),
                }),
                3 => Ev::Drew(pb::Drew {
                    seat: r(6),
                    count: r(8),
                    tile_ids: ids(&mut r),
                }),
                4 => Ev::Exchanged(pb::Exchanged {
                    seat: r(6),
                    count: r(8),
                    drawn_ids: ids(&mut r),
                    returned_ids: ids(&mut r),
                }),
                5 => Ev::Passed(pb::Passed { seat: r(6) }),
                _ => Ev::Ended(pb::Ended {
                    reason: r(6) as i32,
                    bonus_seat: r(6),
                    bonus: r(10),
                    final_scores: (0..r(4)).map(|_| r(50) as i64).collect(),
                    aborted: r(2) == 0,
                }),
            };
            let e = pb::Event { kind: Some(kind) };
            for v in [
                Viewer::Seat(0),
                Viewer::Seat(1),
                Viewer::Spectator,
                Viewer::Auditor,
            ] {
                let _ = Qwirkle::redact(&e, v);
            }
            let mut s = st.clone();
            if Qwirkle::evolve(&mut s, &e).is_ok() {
                let _ = Qwirkle::view(&s, Viewer::Auditor);
            }
        }
    }
}

#[test]
fn illegal_or_misscored_play_in_the_log_is_corrupt() {
    let st = pos(
        &[(0, 0, "RC"), (1, 0, "RS")],
        &["RD", "BX", "GE", "YL", "PC", "OS"],
    );
    let evs = decide(&st, 0, &play_action(&[(2, 0, "RD")])).unwrap();
    let Some(Ev::Placed(good)) = evs[0].kind.clone() else {
        panic!()
    };
    let mut s = st.clone();
    assert!(Qwirkle::evolve(&mut s, &evs[0]).is_ok());
    let mut wrong_score = good.clone();
    wrong_score.points = 4;
    let mut illegal = good.clone();
    illegal.placements[0].x = 5;
    for p in [wrong_score, illegal] {
        let mut s = st.clone();
        assert!(matches!(
            Qwirkle::evolve(
                &mut s,
                &pb::Event {
                    kind: Some(Ev::Placed(p))
                }
            ),
            Err(CoreError::Corrupt(_))
        ));
    }
}

// ------------------------------------------------------------------------------------------------
// Match clocks (§11): the `pass` timeout policy.

#[test]
fn timeout_pass_is_a_pass_even_with_tiles_in_the_bag() {
    let config = Qwirkle::checked_config(2, &Options::new()).unwrap();
    let mut state = Qwirkle::initial(&config);
    for e in Qwirkle::start(&state, &mut Rng::from_u64(3)).unwrap() {
        Qwirkle::evolve(&mut state, &e).unwrap();
    }
    // The opening play cannot be passed: the first listed opening is made (R9).
    let seat = Qwirkle::to_act(&state).first().unwrap();
    let opening = Qwirkle::timeout_events(&state, seat, "pass", &mut Rng::from_u64(4)).unwrap();
    let first = Qwirkle::legal_actions(&state, seat).remove(0);
    assert_eq!(
        opening,
        Qwirkle::decide(&state, seat, &first, &mut Rng::from_u64(4)).unwrap()
    );
    for e in &opening {
        Qwirkle::evolve(&mut state, e).unwrap();
    }
    // After it the next seat, with tiles in the bag, passes: nothing else changes.
    let next = Qwirkle::to_act(&state).first().unwrap();
    assert_ne!(next, seat);
    let before = Qwirkle::view(&state, Viewer::Auditor);
    let passed = Qwirkle::timeout_events(&state, next, "pass", &mut Rng::from_u64(5)).unwrap();
    assert!(
        matches!(passed[..], [pb::Event { kind: Some(pb::event::Kind::Passed(pb::Passed { seat: s })) }] if s == next)
    );
    Qwirkle::evolve(&mut state, &passed[0]).unwrap();
    let after = Qwirkle::view(&state, Viewer::Auditor);
    assert!(before.bag_count > 0);
    assert_eq!(
        (after.bag_tile_ids, after.board),
        (before.bag_tile_ids, before.board)
    );
    assert_eq!(
        after.turns_without_placement,
        before.turns_without_placement + 1
    );
    assert_eq!(Qwirkle::to_act(&state).first(), Some(seat));
    // Only the awaited seat times out, and only with a policy the game offers.
    assert!(Qwirkle::timeout_events(&state, next, "pass", &mut Rng::from_u64(5)).is_err());
    assert!(Qwirkle::timeout_events(&state, seat, "resign", &mut Rng::from_u64(5)).is_err());
}

/// The greedy bot's play (`best_play`, which searches only the spans that beat the best score
/// so far) is the first play of the highest score in the rules' order, as every play listed
/// gives it, in random matches' positions (many hands, boards and scores).
#[test]
fn best_play_is_the_first_play_of_the_best_score() {
    use super::plays::{best_play, enumerate_plays};
    // The best play as `best_play` answers it: its cells with their tile types, and its score.
    type Best = Option<(Vec<(i32, i32, u8)>, u32)>;
    let mut checked = 0;
    for seed in 0..40u64 {
        let cfg = Qwirkle::checked_config(2 + (seed % 3) as u32, &Options::new()).unwrap();
        let mut st = Qwirkle::initial(&cfg);
        let mut rng = Rng::from_u64(seed);
        let evs = Qwirkle::start(&st, &mut rng).unwrap();
        apply(&mut st, &evs);
        while Qwirkle::outcome(&st).is_none() {
            let seat = st.current;
            for s in 0..st.seats() {
                let hand = st.hand_types(s);
                let mut want: Best = None;
                enumerate_plays(&st.board, hand, |p| {
                    if want.as_ref().is_none_or(|w| p.score > w.1) {
                        want = Some((p.placements().collect(), p.score));
                    }
                });
                assert_eq!(best_play(&st.board, hand), want, "seed {seed}");
                checked += 1;
            }
            let moves = Qwirkle::legal_actions(&st, seat);
            let a = &moves[rng.index(moves.len())];
            let evs = Qwirkle::decide(&st, seat, a, &mut rng).unwrap();
            apply(&mut st, &evs);
        }
    }
    assert!(checked > 1000, "{checked} positions");
}
