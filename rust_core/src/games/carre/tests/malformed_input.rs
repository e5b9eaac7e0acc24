//! Malformed and illegal input is refused without a panic; `evolve` refuses events that do not fit.

use super::*;

#[test]
fn malformed_and_illegal_input_is_refused_without_panic() {
    let mut s = pos(0);
    give(&mut s, 0, &["5H", "JS"]);
    give(&mut s, 1, &["7D"]);
    fill(&mut s, 10);
    let malformed = |a: pb::Action| {
        assert!(
            matches!(try_act(&s, 0, &a), Err(CoreError::Malformed(_))),
            "{a:?}"
        );
    };
    malformed(pb::Action { kind: None });
    malformed(pb::Action {
        kind: Some(pb::action::Kind::Discard(pb::Discard { card: None })),
    });
    for (r, su) in [
        (0, 1),
        (14, 1),
        (-1, 2),
        (5, 0),
        (5, 5),
        (i32::MAX, i32::MIN),
    ] {
        let card = Some(pb::Card { rank: r, suit: su });
        malformed(pb::Action {
            kind: Some(pb::action::Kind::Discard(pb::Discard { card })),
        });
        malformed(pb::Action {
            kind: Some(pb::action::Kind::Place(pb::Place {
                card,
                square: 1,
                cell: 5,
            })),
        });
    }
    for cell in [0, 10, u32::MAX] {
        malformed(place("5H", true, cell));
    }
    for sq in [0, 3, -1, i32::MAX] {
        let mut a = place("5H", true, 5);
        if let Some(pb::action::Kind::Place(p)) = a.kind.as_mut() {
            p.square = sq;
        }
        malformed(a);
    }
    // A seat beyond the match is not awaited (the registry calls it malformed before that).
    assert_eq!(reason(try_act(&s, 2, &discard("5H"))), "NOT_YOUR_TURN");
    assert_eq!(
        reason(try_act(&s, u32::MAX, &discard("5H"))),
        "NOT_YOUR_TURN"
    );
    // Wrong seat, card not held, wrong phase, game over.
    assert_eq!(reason(try_act(&s, 1, &discard("7D"))), "NOT_YOUR_TURN");
    assert_eq!(reason(try_act(&s, 0, &discard("7D"))), "NOT_IN_HAND");
    assert_eq!(reason(try_act(&s, 0, &place("7D", true, 7))), "NOT_IN_HAND");
    assert_eq!(reason(try_act(&s, 0, &place("5H", false, 4))), "WRONG_CELL");
    let mut t = s;
    t.phase = Phase::Drawing;
    assert_eq!(reason(try_act(&t, 0, &discard("5H"))), "NOT_YOUR_TURN");
    assert!(Carre::legal_actions(&t, 0).is_empty());
    t.phase = Phase::Over;
    assert_eq!(reason(try_act(&t, 0, &discard("5H"))), "GAME_OVER");
    let fresh = Carre::initial(&Config::default());
    assert_eq!(reason(try_act(&fresh, 0, &go_out())), "NOT_YOUR_TURN");
    assert!(Carre::legal_actions(&s, 7).is_empty());
    assert!(Carre::bot_action(&s, 1, "random", &mut Rng::from_u64(1)).is_err());
    assert!(Carre::bot_action(&s, 0, "nobody", &mut Rng::from_u64(1)).is_err());
    let mut started = Carre::initial(&Config::default());
    for e in Carre::start(&started, &mut Rng::from_u64(1)).unwrap() {
        Carre::evolve(&mut started, &e).unwrap();
    }
    assert_eq!(
        reason(Carre::start(&started, &mut Rng::from_u64(1))),
        "ALREADY_STARTED"
    );
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng::from_u64(77);
    let mut states = vec![];
    random_states(3, 900, "random", |s| states.push(*s));
    let mut buf = [0u8; 64];
    for i in 0..20_000 {
        let s = &states[i % states.len()];
        let len = rng.index(buf.len());
        for b in buf[..len].iter_mut() {
            *b = rng.below(256) as u8;
        }
        if let Ok(a) = pb::Action::decode(&buf[..len]) {
            let _ = Carre::decide(s, s.current as u32, &a, &mut Rng::from_u64(1));
        }
        if let Ok(e) = pb::Event::decode(&buf[..len]) {
            let mut t = *s;
            let _ = Carre::evolve(&mut t, &e);
            let _ = Carre::redact(&e, Viewer::Seat(0));
        }
    }
}

#[test]
fn evolve_rejects_events_that_do_not_fit() {
    let cfg = Config::default();
    let mut s = State::new(cfg);
    let mut rng = Rng::from_u64(3);
    let evs = Carre::start(&s, &mut rng).unwrap();
    let corrupt = |s: &State, e: &pb::Event| {
        let mut t = *s;
        assert!(
            matches!(Carre::evolve(&mut t, e), Err(CoreError::Corrupt(_))),
            "{e:?}"
        );
    };
    // Out of order, and redacted (card-less) copies of the deal and the draw.
    corrupt(&s, &evs[1]);
    corrupt(&s, &pb::Event { kind: None });
    Carre::evolve(&mut s, &evs[0]).unwrap();
    corrupt(&s, &evs[0]);
    corrupt(&s, &Carre::redact(&evs[1], Viewer::Seat(0)).unwrap());
    let mut dup = evs[1].clone();
    if let Some(Ev::RoundDealt(d)) = dup.kind.as_mut() {
        d.stock[0] = d.stock[1];
    }
    corrupt(&s, &dup);
    Carre::evolve(&mut s, &evs[1]).unwrap();
    corrupt(
        &s,
        &Carre::redact(&evs[2], Viewer::Seat(1 - evs_seat(&evs[2]))).unwrap(),
    );
    Carre::evolve(&mut s, &evs[2]).unwrap();
    // An action event from the wrong seat, an illegal placement, a bad score.
    let seat = s.current as u32;
    let a = Carre::legal_actions(&s, seat).pop().unwrap();
    let good = Carre::decide(&s, seat, &a, &mut rng).unwrap();
    let mut wrong = good[0].clone();
    if let Some(Ev::CardDiscarded(d)) = wrong.kind.as_mut() {
        d.seat = 1 - seat;
    }
    corrupt(&s, &wrong);
    let placed = pb::Event {
        kind: Some(Ev::CardPlaced(pb::CardPlaced {
            seat,
            card: Some(card_pb(0)),
            square_owner: 5,
            cell: 1,
            face_down: false,
        })),
    };
    corrupt(&s, &placed);
    corrupt(
        &s,
        &pb::Event {
            kind: Some(Ev::WentOut(pb::WentOut {
                seat,
                raw_points: 0,
            })),
        },
    );
    corrupt(
        &s,
        &pb::Event {
            kind: Some(Ev::MatchEnded(pb::MatchEnded::default())),
        },
    );
    corrupt(
        &s,
        &pb::Event {
            kind: Some(Ev::RoundScored(pb::RoundScored::default())),
        },
    );
}

fn evs_seat(e: &pb::Event) -> u32 {
    match &e.kind {
        Some(Ev::CardDrawn(d)) => d.seat,
        _ => 0,
    }
}
