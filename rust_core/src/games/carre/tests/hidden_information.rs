//! Hidden information: views and redactions do not depend on what the viewer may not see.

use super::*;

#[derive(Clone, Copy, PartialEq)]
enum Slot {
    Any,
    JackOnly,
    JackOrQueen,
}

/// A copy of `s` where everything `seat` may not see is shuffled consistently with the
/// rules: the other hand, the stock order, and the identities of the other seat's
/// face-down cards (a Jack in `seat`'s square stays a Jack; in its own square a J or Q).
fn scramble_hidden(s: &State, seat: u8, rng: &mut Rng) -> State {
    let o = 1 - seat;
    let mut cards = vec![];
    let mut slots = vec![];
    let mut h = s.hands[o as usize];
    while h != 0 {
        cards.push(h.trailing_zeros() as u8);
        slots.push(Slot::Any);
        h &= h - 1;
    }
    for &x in &s.stock[s.stock_pos as usize..] {
        cards.push(x);
        slots.push(Slot::Any);
    }
    for e in &s.log[..s.n_placed as usize] {
        if e.down && e.by == o {
            cards.push(e.card);
            slots.push(if e.cell / 9 == seat {
                Slot::JackOnly
            } else {
                Slot::JackOrQueen
            });
        }
    }
    let fits = |slot: Slot, card: u8| match slot {
        Slot::Any => true,
        Slot::JackOnly => rank(card) == JACK,
        Slot::JackOrQueen => rank(card) == JACK || rank(card) == QUEEN,
    };
    if cards.len() > 1 {
        for _ in 0..400 {
            let (i, j) = (rng.index(cards.len()), rng.index(cards.len()));
            if fits(slots[i], cards[j]) && fits(slots[j], cards[i]) {
                cards.swap(i, j);
            }
        }
    }
    let mut t = *s;
    let mut k = 0;
    let n_hand = s.hands[o as usize].count_ones() as usize;
    t.hands[o as usize] = cards[..n_hand].iter().fold(0, |acc, &x| acc | bit(x));
    k += n_hand;
    for p in t.stock_pos as usize..STOCK {
        t.stock[p] = cards[k];
        k += 1;
    }
    for e in t.log[..t.n_placed as usize].iter_mut() {
        if e.down && e.by == o {
            e.card = cards[k];
            k += 1;
        }
    }
    t
}

fn enc<M: Message>(m: &M) -> Vec<u8> {
    m.encode_to_vec()
}

#[test]
fn views_and_redactions_do_not_depend_on_hidden_cards() {
    let mut rng = Rng::from_u64(2024);
    let mut compared = 0;
    let mut differed = 0;
    random_states(150, 100, "random", |s| {
        if s.phase != Phase::Action {
            return;
        }
        for seat in 0..2u8 {
            let t = scramble_hidden(s, seat, &mut rng);
            Carre::check_invariants(&t).unwrap();
            if t.hands != s.hands || t.stock != s.stock {
                differed += 1;
            }
            let v = Viewer::Seat(seat as u32);
            assert_eq!(enc(&Carre::view(s, v)), enc(&Carre::view(&t, v)));
            // The evaluator's position of the seat is the same whatever it cannot see.
            assert_eq!(
                Carre::position(s, seat as u32),
                Carre::position(&t, seat as u32)
            );
            assert_eq!(
                Carre::legal_actions(s, seat as u32),
                Carre::legal_actions(&t, seat as u32)
            );
            assert_eq!(Carre::render(s, v), Carre::render(&t, v));
            if seat == s.current {
                // The next public action (this seat's own) and every automatic step after it
                // (the opponent's draw, scoring, the next deal) look identical to `seat`.
                let legal = Carre::legal_actions(s, seat as u32);
                let a = &legal[rng.index(legal.len())];
                let k = rng.next_u64();
                let e1 = Carre::decide(s, seat as u32, a, &mut Rng::from_u64(k)).unwrap();
                let e2 = Carre::decide(&t, seat as u32, a, &mut Rng::from_u64(k)).unwrap();
                let r1: Vec<_> = e1
                    .iter()
                    .map(|e| Carre::redact(e, v).map(|e| enc(&e)))
                    .collect();
                let r2: Vec<_> = e2
                    .iter()
                    .map(|e| Carre::redact(e, v).map(|e| enc(&e)))
                    .collect();
                assert_eq!(r1, r2);
                compared += 1;
            }
        }
        // Spectators: both seats' secrets may change.
        let mut r2 = Rng::from_u64(compared as u64);
        let t = scramble_hidden(&scramble_hidden(s, 0, &mut r2), 1, &mut r2);
        assert_eq!(
            enc(&Carre::view(s, Viewer::Spectator)),
            enc(&Carre::view(&t, Viewer::Spectator))
        );
    });
    assert!(compared > 1000, "{compared}");
    assert!(differed > 1000, "{differed}");
}

#[test]
fn each_viewer_sees_exactly_what_it_may() {
    let mut n = 0;
    random_states(60, 300, "greedy", |s| {
        for viewer in [
            Viewer::Seat(0),
            Viewer::Seat(1),
            Viewer::Spectator,
            Viewer::Auditor,
        ] {
            let v = Carre::view(s, viewer);
            for p in 0..2u32 {
                let hand: Vec<pb::Card> = (0..52u8)
                    .filter(|&x| s.hands[p as usize] & bit(x) != 0)
                    .map(card_pb)
                    .collect();
                let pl = &v.players[p as usize];
                assert_eq!(pl.hand_count as usize, hand.len());
                if viewer.sees_private_of(p) {
                    assert_eq!(pl.hand, hand);
                } else {
                    assert!(pl.hand.is_empty());
                }
            }
            for o in 0..2u8 {
                for i in 0..9u8 {
                    let cell = &v.squares[o as usize].cells[i as usize];
                    let pile: Vec<&Entry> = s.pile(o, i).collect();
                    assert_eq!(cell.pile.len(), pile.len());
                    for (pe, e) in cell.pile.iter().zip(pile) {
                        assert_eq!((pe.face_down, pe.placed_by), (e.down, e.by as u32));
                        let visible = !e.down || viewer.sees_private_of(e.by as u32);
                        assert_eq!(pe.card, if visible { Some(card_pb(e.card)) } else { None });
                    }
                }
                assert_eq!(v.squares[o as usize].raw_points, s.raw(o));
            }
            assert_eq!(v.discard.len(), s.n_discard as usize);
            assert_eq!(v.stock_size as usize, s.stock_left());
            assert_eq!(
                v.stock.len(),
                if viewer == Viewer::Auditor {
                    s.stock_left()
                } else {
                    0
                }
            );
            n += 1;
        }
    });
    assert!(n > 1000);
}

#[test]
fn redaction_of_deal_and_draw() {
    let cfg = Carre::checked_config(2, &opts(&[("first_starter", "1")])).unwrap();
    let evs = Carre::start(&Carre::initial(&cfg), &mut Rng::from_u64(5)).unwrap();
    for seat in 0..2u32 {
        let Some(Ev::RoundDealt(d)) = Carre::redact(&evs[1], Viewer::Seat(seat)).unwrap().kind
        else {
            panic!()
        };
        assert!(d.stock.is_empty() && d.stock_size == 36);
        assert_eq!(d.hands[seat as usize].cards.len(), 8);
        assert!(d.hands[1 - seat as usize].cards.is_empty());
        assert_eq!(d.hands[1 - seat as usize].count, 8);
        let Some(Ev::CardDrawn(dr)) = Carre::redact(&evs[2], Viewer::Seat(seat)).unwrap().kind
        else {
            panic!()
        };
        assert_eq!(dr.seat, 1);
        assert_eq!(dr.card.is_some(), seat == 1);
    }
    let Some(Ev::RoundDealt(d)) = Carre::redact(&evs[1], Viewer::Spectator).unwrap().kind else {
        panic!()
    };
    assert!(d.hands.iter().all(|h| h.cards.is_empty()) && d.stock.is_empty());
    assert_eq!(
        Carre::redact(&evs[1], Viewer::Auditor).as_ref(),
        Some(&evs[1])
    );
}
