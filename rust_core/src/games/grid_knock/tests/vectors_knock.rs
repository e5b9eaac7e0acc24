//! Test vectors TV7-TV10 (docs/rules/grid_knock.md, section 9) and AMB32: knocking.

use super::*;

fn tv07_pos() -> State {
    Pos::new(4)
        .drow(2, 1, &["5", "2", "2", "?9", "8"])
        .drow(2, 2, &["?4", "7", "0", "1", "?12"])
        .drow(2, 3, &["3", "?10", "11", "4", "6"])
        .drow(0, 3, &["5", "12", "?2", "7", "?1"])
        .at(sl(0, 1, 1), "4")
        .at(sl(0, 2, 1), "-1")
        .build(0, &[10], &[2])
}

pub(super) fn tv07_until_accept() -> State {
    let mut st = tv07_pos();
    let evs = play(&mut st, 0, Move::DrawFromPile);
    assert_eq!(
        evs,
        vec![Ev::Drawn {
            seat: 0,
            value: 2,
            knock_eligible: 0b1110
        }]
    );
    assert_eq!(
        GridKnock::to_act(&st).to_vec(),
        vec![1, 2, 3],
        "all of E answer at once"
    );
    play(&mut st, 1, Move::PassKnock);
    play(&mut st, 2, Move::Knock);
    let evs = play(&mut st, 3, Move::PassKnock);
    assert_eq!(
        evs,
        vec![
            Ev::KnockAnswered {
                seat: 3,
                answer: pb::KnockAnswer::Pass
            },
            Ev::KnockWindowClosed { knockers: 0b100 }
        ]
    );
    assert_eq!(
        legal(&st, 0),
        vec![Move::AcceptKnock(2), Move::RefuseKnocks]
    );
    st
}

#[test]
fn tv07_full_knock_non_adjacent_knocker() {
    let mut st = tv07_until_accept();
    play(&mut st, 0, Move::AcceptKnock(2));
    let evs = play(&mut st, 2, Move::KnockerSwap(sl(2, 1, 3)));
    assert_eq!(
        evs[0],
        Ev::KnockerSwapped {
            knocker: 2,
            slot: sl(2, 1, 3),
            placed: 2,
            removed: 9,
            removed_was_face_up: false
        }
    );
    assert_eq!(st.held_card, 9);
    play(
        &mut st,
        2,
        Move::DiscardTriple([sl(2, 1, 1), sl(2, 1, 2), sl(2, 1, 3)]),
    );
    assert_eq!(discard(&st), vec![10, 2, 2, 2]);
    assert_eq!(st.phase, Phase::TakeFromKnocker);
    let takes: Vec<Move> = legal(&st, 0);
    assert_eq!(takes.len(), 12, "every non-empty slot of D2");
    assert_eq!(
        reason(&refused(&st, 0, Move::TakeFromKnocker(sl(2, 1, 2)))),
        "EMPTY_SLOT"
    );
    play(&mut st, 0, Move::TakeFromKnocker(sl(2, 2, 2)));
    assert_eq!((st.taken_card, st.reserved_slot), (0, sl(2, 2, 2)));
    let evs = play(&mut st, 0, Move::ReturnSwap(sl(0, 3, 1)));
    assert!(evs.contains(&Ev::ExchangedCardDiscarded { seat: 0, value: 12 }));
    assert!(evs.contains(&Ev::HeldCardPlaced {
        knocker: 2,
        slot: sl(2, 2, 2),
        value: 9
    }));
    assert_eq!(discard(&st), vec![10, 2, 2, 2, 12]);
    assert_eq!(st.val[sl(0, 3, 1) as usize], 0);
    assert_eq!(st.val[sl(2, 2, 2) as usize], 9);
    assert_eq!((st.cnt(2), st.cnt(0)), (12, 15));
    assert_eq!(st.closer, u8::MAX);
    assert_eq!(st.active, 1);
    gk::invariants(&st).unwrap();
}

/// Applies a host command's events; returns them as internal events.
fn host(st: &mut State, command: &str) -> Result<Vec<Ev>, CoreError> {
    let evs = GridKnock::host_command(st, command, &mut rng())?;
    evs.iter()
        .try_for_each(|e| GridKnock::evolve(st, e))
        .unwrap();
    Ok(evs.iter().map(|e| gk::pb_to_ev(e).unwrap()).collect())
}

#[test]
fn amb32_closing_the_knock_window_passes_for_the_seats_still_to_answer() {
    let mut st = tv07_pos();
    play(&mut st, 0, Move::DrawFromPile);
    play(&mut st, 2, Move::Knock);
    let evs = host(&mut st, "close_knock_window").unwrap();
    assert_eq!(
        evs,
        vec![
            Ev::KnockAnswered {
                seat: 1,
                answer: pb::KnockAnswer::Pass
            },
            Ev::KnockAnswered {
                seat: 3,
                answer: pb::KnockAnswer::Pass
            },
            Ev::KnockWindowClosed { knockers: 0b100 },
        ]
    );
    assert_eq!(
        legal(&st, 0),
        vec![Move::AcceptKnock(2), Move::RefuseKnocks],
        "the knock stands"
    );
    // The same state as if seats 1 and 3 had passed themselves.
    let mut by_hand = tv07_pos();
    play(&mut by_hand, 0, Move::DrawFromPile);
    play(&mut by_hand, 2, Move::Knock);
    play(&mut by_hand, 1, Move::PassKnock);
    play(&mut by_hand, 3, Move::PassKnock);
    assert_eq!(st, by_hand);
}

#[test]
fn amb32_a_timed_out_pass_looks_like_any_other_pass() {
    let mut st = tv07_pos();
    play(&mut st, 0, Move::DrawFromPile);
    let timed_out = GridKnock::host_command(&st, "close_knock_window", &mut rng()).unwrap();
    let passed = GridKnock::decide(&st, 1, &gk::to_action(Move::PassKnock), &mut rng()).unwrap();
    for viewer in [
        Viewer::Seat(0),
        Viewer::Seat(1),
        Viewer::Seat(2),
        Viewer::Spectator,
        Viewer::Auditor,
    ] {
        assert_eq!(
            GridKnock::redact(&timed_out[0], viewer).map(|e| e.encode_to_vec()),
            GridKnock::redact(&passed[0], viewer).map(|e| e.encode_to_vec()),
            "{viewer:?}"
        );
    }
}

#[test]
fn amb32_no_knock_window_no_closing_it() {
    let mut st = tv07_pos();
    let before = st.clone();
    let e = host(&mut st, "close_knock_window").unwrap_err();
    assert_eq!(reason(&e), "NO_KNOCK_WINDOW");
    assert_eq!(st, before);
    play(&mut st, 0, Move::DrawFromPile);
    pass_all(&mut st);
    assert_eq!(
        reason(&host(&mut st, "close_knock_window").unwrap_err()),
        "NO_KNOCK_WINDOW"
    );
    let info = crate::registry::find("grid_knock").unwrap().info();
    assert_eq!(info.host_commands, vec!["close_knock_window".to_string()]);
}

#[test]
fn amb32_an_open_window_runs_the_timer_until_it_closes() {
    use crate::game::Timer;
    let mut st = tv07_pos();
    assert_eq!(GridKnock::timer(&st), None, "no window, no timer");
    play(&mut st, 0, Move::DrawFromPile);
    let timer = GridKnock::timer(&st).expect("a window is open");
    assert_eq!((timer.command, timer.seconds), ("close_knock_window", 60));
    play(&mut st, 2, Move::Knock);
    assert_eq!(
        GridKnock::timer(&st),
        Some(timer),
        "an answer does not restart the clock"
    );
    let mut untimed = st.clone();
    untimed.cfg.knock_timeout = 0;
    assert_eq!(
        GridKnock::timer(&untimed),
        None,
        "knock_timeout 0: only the host closes it"
    );
    let mut later = st.clone();
    later.turns += 1;
    assert_ne!(
        GridKnock::timer(&later).map(|t: Timer| t.key),
        Some(timer.key),
        "the next turn's window is another wait"
    );
    host(&mut st, "close_knock_window").unwrap();
    assert_eq!(GridKnock::timer(&st), None);
    let opts = |v: &str| Options::from([("knock_timeout".to_string(), v.to_string())]);
    assert_eq!(
        GridKnock::checked_config(3, &opts("5"))
            .unwrap()
            .knock_timeout,
        5
    );
    for bad in ["-1", "86401", "soon"] {
        assert!(
            matches!(
                GridKnock::checked_config(3, &opts(bad)),
                Err(CoreError::InvalidOption(_))
            ),
            "{bad}"
        );
    }
}

#[test]
fn tv07b_knocker_keeps_triple_active_takes_x_back() {
    let mut st = tv07_until_accept();
    play(&mut st, 0, Move::AcceptKnock(2));
    play(&mut st, 2, Move::KnockerSwap(sl(2, 1, 3)));
    play(&mut st, 2, Move::EndTriples);
    play(&mut st, 0, Move::TakeFromKnocker(sl(2, 1, 3)));
    assert_eq!(st.taken_card, 2);
    play(&mut st, 0, Move::ReturnSwap(sl(0, 3, 1)));
    let row: Vec<i8> = (0..5).map(|d| st.val[dc(&st, 2, 1, d) as usize]).collect();
    assert_eq!(row, vec![5, 2, 2, 9, 8]);
}

#[test]
fn tv07c_refuse_keeps_x() {
    let mut st = tv07_until_accept();
    play(&mut st, 0, Move::RefuseKnocks);
    assert_eq!((st.phase, st.drawn_card), (Phase::DecideDrawn, 2));
    assert_eq!(st.knocker, u8::MAX);
}

#[test]
fn tv08_overlap_restriction() {
    // K = P1, A's left neighbour.
    let mut st = Pos::new(3).build(0, &[10], &[2]);
    play(&mut st, 0, Move::DrawFromPile);
    play(&mut st, 1, Move::Knock);
    play(&mut st, 2, Move::PassKnock);
    play(&mut st, 0, Move::AcceptKnock(1));
    play(&mut st, 1, Move::KnockerSwap(sl(1, 1, 1)));
    while st.phase == Phase::Triples {
        play(&mut st, 1, Move::EndTriples);
    }
    for r in 1..=3 {
        assert_eq!(
            reason(&refused(&st, 0, Move::TakeFromKnocker(sl(1, r, 4)))),
            "IN_OWN_DOMAIN"
        );
    }
    let takes = legal(&st, 0);
    assert!(
        takes.contains(&Move::TakeFromKnocker(sl(1, 2, 3)))
            && takes.contains(&Move::TakeFromKnocker(sl(2, 1, 4)))
    );
    assert_eq!(takes.len(), 12);
    // K = P2, A's right neighbour; P2 may swap into P0's column 4.
    let mut st = Pos::new(3).build(0, &[10], &[2]);
    play(&mut st, 0, Move::DrawFromPile);
    play(&mut st, 1, Move::PassKnock);
    play(&mut st, 2, Move::Knock);
    play(&mut st, 0, Move::AcceptKnock(2));
    play(&mut st, 2, Move::KnockerSwap(sl(0, 2, 4)));
    while st.phase == Phase::Triples {
        play(&mut st, 2, Move::EndTriples);
    }
    for r in 1..=3 {
        assert_eq!(
            reason(&refused(&st, 0, Move::TakeFromKnocker(sl(0, r, 4)))),
            "IN_OWN_DOMAIN"
        );
    }
    let takes = legal(&st, 0);
    assert_eq!(takes.len(), 12);
    assert!(takes
        .iter()
        .all(|m| matches!(m, Move::TakeFromKnocker(s) if s / 12 == 2)));
}

fn tv09_pos(b: bool) -> State {
    let mut p = Pos::new(3)
        .drow(2, 1, &["?8", "__", "__", "__", "__"])
        .drow(2, 2, &["4", "4", "?11", "__", "__"])
        .drow(2, 3, &["?1", "__", "__", "__", "__"]);
    if b {
        p = p
            .at(sl(0, 1, 4), "__")
            .at(sl(0, 3, 4), "__")
            .at(sl(2, 1, 3), "7");
        for r in 1..=3 {
            p = p.at(sl(1, r, 4), "__");
            for c in 1..=4 {
                if (r, c) != (2, 4) {
                    p = p.at(sl(0, r, c), "__");
                }
            }
        }
    }
    p.build(0, &[9], &[4])
}

#[test]
fn tv09_knocker_left_with_shared_cards_only_y_discarded() {
    let mut st = tv09_pos(false);
    assert_eq!(st.cnt(2), 5);
    play(&mut st, 0, Move::DrawFromPile);
    assert!(st.eligible >> 2 & 1 == 1);
    play(&mut st, 1, Move::PassKnock);
    play(&mut st, 2, Move::Knock);
    play(&mut st, 0, Move::AcceptKnock(2));
    play(&mut st, 2, Move::KnockerSwap(sl(2, 2, 2)));
    assert_eq!(st.held_card, 11);
    let evs = play(
        &mut st,
        2,
        Move::DiscardTriple([sl(0, 2, 4), sl(2, 2, 1), sl(2, 2, 2)]),
    );
    assert!(evs.contains(&Ev::HeldCardDiscarded {
        knocker: 2,
        value: 11
    }));
    assert_eq!(discard(&st), vec![9, 4, 4, 4, 11]);
    assert_eq!(st.cnt(0), 14);
    assert_eq!(st.active, 1);
    gk::invariants(&st).unwrap();
    // With cnt(D2) = 3 before the draw, P2 may not knock.
    let mut st = tv09_pos(false);
    st.val[sl(2, 2, 2) as usize] = i8::MIN;
    st.filled &= !(1u128 << sl(2, 2, 2));
    st.val[sl(0, 3, 4) as usize] = i8::MIN;
    st.filled &= !(1u128 << sl(0, 3, 4));
    assert_eq!(st.cnt(2), 3);
    play(&mut st, 0, Move::DrawFromPile);
    assert_eq!(st.eligible, 0b010);
    assert_eq!(reason(&refused(&st, 2, Move::Knock)), "NOT_YOUR_TURN");
}

#[test]
fn tv09b_active_seat_left_with_no_card_y_discarded_and_closes() {
    let mut st = tv09_pos(true);
    assert_eq!((st.cnt(2), st.cnt(0)), (4, 1));
    play(&mut st, 0, Move::DrawFromPile);
    play(&mut st, 1, Move::PassKnock);
    play(&mut st, 2, Move::Knock);
    play(&mut st, 0, Move::AcceptKnock(2));
    play(&mut st, 2, Move::KnockerSwap(sl(2, 2, 2)));
    let evs = play(
        &mut st,
        2,
        Move::DiscardTriple([sl(0, 2, 4), sl(2, 2, 1), sl(2, 2, 2)]),
    );
    assert!(evs.contains(&Ev::HeldCardDiscarded {
        knocker: 2,
        value: 11
    }));
    assert_eq!(discard(&st), vec![9, 4, 4, 4, 11]);
    assert_eq!(st.cnt(0), 0);
    assert_eq!(st.closer, 0);
    gk::invariants(&st).unwrap();
}

#[test]
fn tv10_who_may_knock() {
    // (a) N = 2: no window.
    let mut st = Pos::new(2).build(0, &[10], &[2]);
    play(&mut st, 0, Move::DrawFromPile);
    assert_eq!((st.eligible, st.phase), (0, Phase::DecideDrawn));
    // (b) N = 3, cnt(D1) = 3, cnt(D2) = 4 -> E = {P2}.
    let mut p = Pos::new(3);
    for r in 1..=3 {
        for c in 1..=4 {
            if !(r == 1 && c <= 3) {
                p = p.at(sl(1, r, c), "__");
            }
            if !(r == 1 && c == 1) {
                p = p.at(sl(2, r, c), "__");
            }
        }
    }
    let mut st = p.build(0, &[10], &[2]);
    assert_eq!((st.cnt(1), st.cnt(2)), (3, 4));
    play(&mut st, 0, Move::DrawFromPile);
    assert_eq!(st.eligible, 0b100);
    // (c) take_from_discard: no window whatever the counts.
    let mut st = Pos::new(3).build(0, &[10], &[2]);
    play(&mut st, 0, Move::TakeFromDiscard);
    assert_eq!((st.eligible, st.phase), (0, Phase::SwapDiscard));
    // (d) N = 4, P1 closed.
    let mut st = Pos::new(4).build(2, &[10], &[2, 3, 4]);
    st.closer = 1;
    st.final_taken = 0b0010;
    play(&mut st, 2, Move::DrawFromPile);
    assert_eq!(st.eligible, 0b1001, "P3 and P0");
    let mut st = Pos::new(4).build(3, &[10], &[2]);
    st.closer = 1;
    st.final_taken = 0b0110;
    play(&mut st, 3, Move::DrawFromPile);
    assert_eq!(st.eligible, 0b0001, "P0 only");
    let mut st = Pos::new(4)
        .opt("target_score", "1000")
        .build(0, &[10], &[2]);
    st.closer = 1;
    st.final_taken = 0b1110;
    play(&mut st, 0, Move::DrawFromPile);
    assert_eq!(st.eligible, 0);
    let r = st.round;
    let mv = legal(&st, 0)[0];
    play(&mut st, 0, mv);
    while st.phase == Phase::Triples {
        play(&mut st, 0, Move::EndTriples);
    }
    assert_eq!(st.round, r + 1, "after P0's turn the round ends");
}
