//! Hidden information: what views and redacted events show each viewer, and the rendering.

use super::round_vectors::dealt;
use super::turn_vectors::tv1_state;
use super::*;

/// What `viewer` may not see, rewritten at random consistently with what it may see:
/// hidden row cards (not in its knowledge) and, when `deck` is set, the draw pile order are
/// permuted among themselves; a hidden number in another seat's hand is exchanged with a
/// hidden number in a row. Positions in `pinned` keep their card.
fn scramble(
    s: &State,
    viewer: Viewer,
    pinned: &[(usize, usize)],
    deck: bool,
    hand: bool,
    rng: &mut Rng,
) -> State {
    let mut c = s.clone();
    let known = match viewer {
        Viewer::Seat(v) => s.known[v as usize],
        _ => 0,
    };
    let mut places: Vec<(usize, usize)> = vec![];
    for p in 0..s.n() {
        if !s.is_active(p) {
            continue;
        }
        for sl in 0..4 {
            if known & bit(p, sl) == 0 && !pinned.contains(&(p, sl)) {
                places.push((p, sl));
            }
        }
    }
    let mut vals: Vec<u8> = places.iter().map(|&(p, sl)| s.rows[p][sl]).collect();
    let nrow = vals.len();
    if deck {
        vals.extend_from_slice(c.draw.cards());
    }
    rng.shuffle(&mut vals);
    for (i, &(p, sl)) in places.iter().enumerate() {
        c.rows[p][sl] = vals[i];
    }
    if deck {
        let n = c.draw.len();
        c.draw.c[..n].copy_from_slice(&vals[nrow..]);
    }
    let hidden_hand = s.pending <= 9 && viewer != Viewer::Seat(s.current as u32);
    if hand && hidden_hand {
        let numbers: Vec<&(usize, usize)> = places
            .iter()
            .filter(|&&(p, sl)| c.rows[p][sl] <= 9)
            .collect();
        if !numbers.is_empty() {
            let &(p, sl) = numbers[rng.index(numbers.len())];
            std::mem::swap(&mut c.pending, &mut c.rows[p][sl]);
        }
    }
    c
}

fn enc_view(s: &State, v: Viewer) -> Vec<u8> {
    RatATatCat::view(s, v).encode_to_vec()
}

#[test]
fn hidden_information_never_leaks() {
    let mut checked_views = 0;
    let mut checked_events = 0;
    for seats in 2..=6u32 {
        let config = cfg_with(seats, &[("memory_aid", "on")]);
        let mut pick = Rng::from_u64(seats as u64);
        for game in 0..12u64 {
            let mut s = RatATatCat::initial(&config);
            let seed = conformance::seed_bytes(game);
            let mut seq = 1;
            let evs = RatATatCat::start(&s, &mut Rng::for_command(&seed, seq)).unwrap();
            for e in &evs {
                RatATatCat::evolve(&mut s, e).unwrap();
            }
            seq += evs.len() as u64;
            while RatATatCat::outcome(&s).is_none() {
                let actor = s.current as u32;
                let moves = RatATatCat::legal_actions(&s, actor);
                let a = moves[pick.index(moves.len())];
                let pinned: Vec<(usize, usize)> = match &a.kind {
                    Some(A::TakeDiscard(x)) => vec![(actor as usize, x.slot as usize - 1)],
                    Some(A::ReplaceCard(x)) => vec![(actor as usize, x.slot as usize - 1)],
                    Some(A::PeekCard(x)) => vec![(actor as usize, x.slot as usize - 1)],
                    _ => vec![],
                };
                let evs =
                    RatATatCat::decide(&s, actor, &a, &mut Rng::for_command(&seed, seq)).unwrap();
                let round_ends = evs
                    .iter()
                    .any(|e| matches!(e.kind, Some(E::RoundRevealed(_)) | Some(E::MatchEnded(_))));
                if pick.index(3) == 0 {
                    let viewers: Vec<Viewer> = (0..seats)
                        .map(Viewer::Seat)
                        .chain(std::iter::once(Viewer::Spectator))
                        .collect();
                    for &v in &viewers {
                        // Views: everything hidden may change, including the deck order.
                        let c = scramble(&s, v, &[], true, true, &mut pick);
                        assert_eq!(
                            enc_view(&s, v),
                            enc_view(&c, v),
                            "view leaks to {v:?}\n{}",
                            RatATatCat::render(&s, Viewer::Auditor)
                        );
                        if let Viewer::Seat(me) = v {
                            assert_eq!(
                                RatATatCat::position(&s, me),
                                RatATatCat::position(&c, me),
                                "position leaks to seat {me}"
                            );
                        }
                        checked_views += 1;
                        // What the viewer may see is in its view.
                        let view = RatATatCat::view(&s, v);
                        assert_eq!(view.discard_pile, s.discard.bottom_first_pb());
                        assert_eq!(view.draw_pile_size as usize, s.draw.len());
                        if let Viewer::Seat(me) = v {
                            let me = me as usize;
                            if s.is_active(me) {
                                for sl in 0..4 {
                                    let k = view.players[me].known[sl];
                                    if s.known[me] & bit(me, sl) != 0 {
                                        assert_eq!(k, pbc(s.rows[me][sl]));
                                    } else {
                                        assert_eq!(k, CARD_FACE_DOWN);
                                    }
                                }
                            }
                            if s.pending != NONE && me == s.current as usize {
                                assert_eq!(view.pending, pbc(s.pending));
                            }
                        }
                        if s.pending != NONE && is_power(s.pending) {
                            assert_eq!(
                                view.pending,
                                pbc(s.pending),
                                "a drawn power card is public"
                            );
                        }
                        // Events of the next action: same draw pile, hand and touched slots.
                        if !round_ends {
                            let c = scramble(&s, v, &pinned, false, false, &mut pick);
                            let evs2 = RatATatCat::decide(
                                &c,
                                actor,
                                &a,
                                &mut Rng::for_command(&seed, seq),
                            )
                            .unwrap();
                            assert_eq!(evs.len(), evs2.len());
                            for (e1, e2) in evs.iter().zip(&evs2) {
                                let r1 = RatATatCat::redact(e1, v).map(|e| e.encode_to_vec());
                                let r2 = RatATatCat::redact(e2, v).map(|e| e.encode_to_vec());
                                assert_eq!(
                                    r1,
                                    r2,
                                    "event {} leaks to {v:?}",
                                    RatATatCat::event_type(e1)
                                );
                                checked_events += 1;
                            }
                        }
                    }
                }
                for e in &evs {
                    RatATatCat::evolve(&mut s, e).unwrap();
                }
                seq += evs.len() as u64;
            }
        }
    }
    assert!(
        checked_views > 5_000 && checked_events > 5_000,
        "{checked_views} {checked_events}"
    );
}

#[test]
fn private_events_reach_their_seat_only() {
    let s = dealt(3, 0, &[]);
    let evs = RatATatCat::start(
        &RatATatCat::initial(&cfg_with(3, &[("first_dealer", "0")])),
        &mut Rng::from_u64(11),
    )
    .unwrap();
    let Some(E::RoundDealt(d)) = RatATatCat::redact(&evs[0], Viewer::Seat(1)).unwrap().kind else {
        panic!()
    };
    assert!(
        d.draw_pile.is_empty()
            && d.rows
                .iter()
                .all(|r| r.cards.iter().all(|&c| c == CARD_FACE_DOWN))
    );
    assert_eq!(d.draw_pile_size, 41);
    for e in &evs[1..] {
        let Some(E::InitialPeek(p)) = &e.kind else {
            panic!()
        };
        for v in 0..3u32 {
            let Some(E::InitialPeek(r)) = RatATatCat::redact(e, Viewer::Seat(v)).unwrap().kind
            else {
                panic!()
            };
            if v == p.seat {
                assert_eq!(
                    (r.slot1, r.slot4),
                    (pbc(s.rows[v as usize][0]), pbc(s.rows[v as usize][3]))
                );
            } else {
                assert_eq!((r.slot1, r.slot4), (0, 0));
            }
        }
        let Some(E::InitialPeek(r)) = RatATatCat::redact(e, Viewer::Spectator).unwrap().kind else {
            panic!()
        };
        assert_eq!((r.slot1, r.slot4), (0, 0));
        assert_eq!(RatATatCat::redact(e, Viewer::Auditor).as_ref(), Some(e));
    }
    // Face-down rows stay face down in every player's view, memory aid off by default.
    for v in 0..3u32 {
        let view = RatATatCat::view(&s, Viewer::Seat(v));
        assert!(view
            .players
            .iter()
            .all(|p| p.row.iter().all(|&c| c == CARD_FACE_DOWN) && p.known.is_empty()));
    }
    let audit = RatATatCat::view(&s, Viewer::Auditor);
    assert_eq!(audit.draw_pile.len(), 41);
    assert!(audit
        .players
        .iter()
        .all(|p| p.row.iter().all(|&c| c != 0 && c != CARD_FACE_DOWN)));
}

#[test]
fn render_shows_what_the_viewer_sees() {
    let mut s = tv1_state();
    play(&mut s, draw());
    let audit = RatATatCat::render(&s, Viewer::Auditor);
    assert!(
        audit.contains("D2") && audit.contains("P0 to act"),
        "{audit}"
    );
    let p1 = RatATatCat::render(&s, Viewer::Seat(1));
    assert!(!p1.contains("D2") && p1.contains("[  ?  ?  ?  ? ]"), "{p1}");
}
