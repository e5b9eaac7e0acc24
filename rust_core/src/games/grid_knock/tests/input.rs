//! Malformed, out-of-turn and out-of-phase input is refused; options and variants.

use super::vectors_knock::tv07_until_accept;
use super::vectors_triples::tv03_pos;
use super::*;

#[test]
fn malformed_and_out_of_turn_input_is_refused_without_panic() {
    let st = tv03_pos();
    let slot = |o, r, c| {
        Some(pb::Slot {
            owner: o,
            row: r,
            col: c,
        })
    };
    let keep = |s| pb::Action {
        kind: Some(pb::action::Kind::KeepSwap(pb::KeepSwap { slot: s })),
    };
    for bad in [
        slot(3, 1, 1),
        slot(0, 0, 1),
        slot(0, 4, 1),
        slot(0, 1, 0),
        slot(0, 1, 5),
        slot(u32::MAX, 1, 1),
        None,
    ] {
        let e = GridKnock::decide(&st, 0, &keep(bad), &mut rng()).unwrap_err();
        assert!(matches!(e, CoreError::Malformed(_)), "{e:?}");
    }
    let e = GridKnock::decide(&st, 0, &pb::Action { kind: None }, &mut rng()).unwrap_err();
    assert!(matches!(e, CoreError::Malformed(_)));
    let e = GridKnock::decide(&st, 7, &gk::to_action(Move::DrawFromPile), &mut rng()).unwrap_err();
    assert!(matches!(e, CoreError::Malformed(_)));
    assert_eq!(
        reason(&refused(&st, 1, Move::DrawFromPile)),
        "NOT_YOUR_TURN"
    );
    assert_eq!(
        reason(&refused(&st, 0, Move::KeepSwap(sl(0, 1, 1)))),
        "WRONG_PHASE"
    );
    assert_eq!(reason(&refused(&st, 0, Move::Knock)), "WRONG_PHASE");
    let accept = pb::Action {
        kind: Some(pb::action::Kind::AcceptKnock(pb::AcceptKnock {
            knocker: 99,
        })),
    };
    assert!(matches!(
        GridKnock::decide(&st, 0, &accept, &mut rng()).unwrap_err(),
        CoreError::Malformed(_)
    ));
    let tri = pb::Action {
        kind: Some(pb::action::Kind::DiscardTriple(pb::DiscardTriple {
            cells: vec![pb::Slot {
                owner: 9,
                row: 1,
                col: 1,
            }],
        })),
    };
    assert!(matches!(
        GridKnock::decide(&st, 0, &tri, &mut rng()).unwrap_err(),
        CoreError::Malformed(_)
    ));
    // Knock decision with a seat that did not knock.
    let mut k = tv07_until_accept();
    assert_eq!(
        reason(&refused(&k, 0, Move::AcceptKnock(1))),
        "NOT_A_KNOCKER"
    );
    assert_eq!(reason(&refused(&k, 2, Move::RefuseKnocks)), "NOT_YOUR_TURN");
    play(&mut k, 0, Move::AcceptKnock(2));
    assert_eq!(
        reason(&refused(&k, 0, Move::KnockerSwap(sl(2, 1, 1)))),
        "NOT_YOUR_TURN"
    );
    assert_eq!(
        reason(&refused(&k, 2, Move::KnockerSwap(sl(0, 1, 1)))),
        "NOT_IN_DOMAIN"
    );
    assert_eq!(
        reason(&refused(&k, 2, Move::KeepSwap(sl(2, 1, 1)))),
        "WRONG_PHASE"
    );
}

#[test]
fn events_that_do_not_fit_are_corrupt_not_panics() {
    let cfg = GridKnock::checked_config(4, &Options::new()).unwrap();
    let init = GridKnock::initial(&cfg);
    let start = GridKnock::start(&init, &mut rng()).unwrap();
    // A redacted deal cannot be replayed.
    let red = GridKnock::redact(&start[0], Viewer::Seat(0)).unwrap();
    let mut s = init.clone();
    assert!(matches!(
        GridKnock::evolve(&mut s, &red),
        Err(CoreError::Corrupt(_))
    ));
    let mut s = init.clone();
    GridKnock::evolve(&mut s, &start[0]).unwrap();
    // Out of order / out of range events.
    let bogus = [
        gk::ev_to_pb(&Ev::Drawn {
            seat: 0,
            value: 3,
            knock_eligible: 0,
        }),
        gk::ev_to_pb(&Ev::TurnEnded {
            seat: 0,
            closed: false,
            round_over: false,
            next_player: 1,
        }),
        gk::ev_to_pb(&Ev::InitialChosen { seat: 0, slot: 95 }),
        gk::ev_to_pb(&Ev::InitialChosen { seat: 6, slot: 1 }),
        pb::Event { kind: None },
        pb::Event {
            kind: Some(pb::event::Kind::KnockAnswered(pb::KnockAnswered {
                seat: 200,
                answer: 1,
            })),
        },
        pb::Event {
            kind: Some(pb::event::Kind::Kept(pb::Kept {
                seat: 0,
                slot: None,
                placed: 99,
                removed: 0,
            })),
        },
    ];
    for b in &bogus {
        let mut t = s.clone();
        assert!(
            matches!(GridKnock::evolve(&mut t, b), Err(CoreError::Corrupt(_))),
            "{b:?}"
        );
    }
    // Garbage bytes through the registry.
    let g = crate::registry::find("grid_knock").unwrap();
    let mut m = g.new_match(4, &Options::new()).unwrap();
    assert!(m.apply(&[0xff, 0xff, 0xff]).is_err());
    assert!(m.decide(0, &[0x0a, 0x05, 0xff], &mut rng()).is_err());
}

#[test]
fn options_are_validated() {
    let o = |k: &str, v: &str| {
        let mut m = Options::new();
        m.insert(k.into(), v.into());
        m
    };
    assert!(GridKnock::checked_config(3, &Options::new()).is_ok());
    for bad in [
        o("colour", "red"),
        o("target_score", "0"),
        o("target_score", "x"),
        o("knocking", "maybe"),
        o("closer_penalty", "triple"),
        o("turn_cap", "5"),
    ] {
        assert!(
            matches!(
                GridKnock::checked_config(3, &bad),
                Err(CoreError::InvalidOption(_))
            ),
            "{bad:?}"
        );
    }
    assert!(matches!(
        GridKnock::checked_config(1, &Options::new()),
        Err(CoreError::InvalidOption(_))
    ));
    assert!(matches!(
        GridKnock::checked_config(9, &Options::new()),
        Err(CoreError::InvalidOption(_))
    ));
    let c = GridKnock::checked_config(3, &o("knocking", "off")).unwrap();
    assert!(!c.knocking);
    let c = GridKnock::checked_config(3, &o("closer_penalty", "none")).unwrap();
    assert!(!c.closer_penalty);
}

#[test]
fn variants_knocking_off_and_no_closer_penalty() {
    let mut st = Pos::new(3).opt("knocking", "off").build(0, &[10], &[2]);
    play(&mut st, 0, Move::DrawFromPile);
    assert_eq!((st.eligible, st.phase), (0, Phase::DecideDrawn));
    let mut p = Pos::new(2).opt("closer_penalty", "none");
    for r in 1..=3 {
        for c in 1..=4 {
            p = p.at(sl(0, r, c), "5").at(sl(1, r, c), "1");
        }
    }
    let mut st = p.build(0, &[], &[]);
    st.closer = 0;
    let sc = gk::score_round(&st);
    assert_eq!(
        (sc.raw_scores[0], sc.round_scores[0], sc.closer_doubled),
        (sc.raw_scores[0], sc.raw_scores[0], false)
    );
    assert!(sc.raw_scores[0] > sc.raw_scores[1]);
}

#[test]
fn initial_reveal_is_sealed_then_simultaneous() {
    let cfg = GridKnock::checked_config(3, &Options::new()).unwrap();
    let mut st = GridKnock::initial(&cfg);
    for e in GridKnock::start(&st.clone(), &mut rng()).unwrap() {
        GridKnock::evolve(&mut st, &e).unwrap();
    }
    assert_eq!(GridKnock::to_act(&st).to_vec(), vec![0, 1, 2]);
    let evs = GridKnock::decide(
        &st,
        1,
        &gk::to_action(Move::RevealInitial(sl(1, 1, 1))),
        &mut rng(),
    )
    .unwrap();
    assert_eq!(evs.len(), 1);
    let other = GridKnock::redact(&evs[0], Viewer::Seat(0)).unwrap();
    let own = GridKnock::redact(&evs[0], Viewer::Seat(1)).unwrap();
    assert_ne!(other, own);
    assert!(matches!(&other.kind, Some(pb::event::Kind::InitialChosen(c)) if c.slot.is_none()));
    for e in &evs {
        GridKnock::evolve(&mut st, e).unwrap();
    }
    assert_eq!(st.up, 0, "nothing flipped before everybody chose");
    for (seat, c) in [(0u8, 1u8), (0, 2), (1, 2), (2, 1), (2, 4)] {
        play(&mut st, seat, Move::RevealInitial(sl(seat, 3, c)));
    }
    assert_eq!(st.up.count_ones(), 6);
    assert_eq!(st.phase, Phase::ChooseSource);
    assert_eq!(st.active, st.first);
}

#[test]
fn turn_cap_aborts_the_match() {
    let mut o = Options::new();
    o.insert("turn_cap".into(), "10".into());
    let cfg = GridKnock::checked_config(2, &o).unwrap();
    let mut st = GridKnock::initial(&cfg);
    let mut r = rng();
    let mut evs = vec![];
    gk::auto_steps(&mut st, &mut r, &mut evs).unwrap();
    let mut moves = vec![];
    while GridKnock::outcome(&st).is_none() {
        let seat = gk::to_act_mask(&st).trailing_zeros() as u8;
        gk::legal_moves(&st, seat, &mut moves);
        // Swap face-up cards only (never ends a round) when possible.
        let mv = moves
            .iter()
            .copied()
            .find(|m| matches!(m, Move::KeepSwap(s) if st.up >> s & 1 == 1))
            .unwrap_or(moves[0]);
        let mv = if mv == Move::DrawFromPile && moves.contains(&Move::TakeFromDiscard) {
            Move::TakeFromDiscard
        } else {
            mv
        };
        gk::act(&mut st, seat, mv, &mut r, &mut evs).unwrap();
    }
    let o = GridKnock::outcome(&st).unwrap();
    assert!(o.aborted);
    assert!(o.winners.is_empty());
    assert_eq!(st.turns, 10);
}
