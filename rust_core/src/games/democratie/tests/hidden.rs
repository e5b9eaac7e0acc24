//! Hidden information (§7): what a viewer cannot see does not change what it is shown.

use super::*;

/// Redistributes what `seat` may not see: other hands and their sealed commits, the stock
/// and the unturned vote pile, keeping every zone's size.
fn perturb(st: &State, seat: usize, rng: &mut Rng) -> State {
    let n = st.n();
    let mut pool: Vec<u8> = vec![];
    for i in (0..n).filter(|&i| i != seat) {
        pool.extend(cards_of(st.hands[i]));
        if st.commits[i] != NO_CARD {
            pool.push(st.commits[i]);
        }
    }
    pool.extend_from_slice(st.stock_slice());
    pool.extend_from_slice(&st.vote_pile[..st.vote_len as usize]);
    rng.shuffle(&mut pool);
    let mut it = pool.into_iter();
    let mut out = *st;
    for i in (0..n).filter(|&i| i != seat) {
        let k = st.hands[i].count_ones();
        out.hands[i] = (0..k).fold(0, |m, _| m | bit(it.next().unwrap()));
        if st.commits[i] != NO_CARD {
            out.commits[i] = it.next().unwrap();
        }
    }
    for k in st.stock_pos as usize..st.stock_end as usize {
        out.stock[k] = it.next().unwrap();
    }
    for k in 0..st.vote_len as usize {
        out.vote_pile[k] = it.next().unwrap();
    }
    assert!(it.next().is_none());
    Democratie::check_invariants(&out).unwrap();
    out
}

fn redacted_bytes(evs: &[pb::Event], v: Viewer) -> Vec<Vec<u8>> {
    evs.iter()
        .filter_map(|e| Democratie::redact(e, v))
        .map(|e| e.encode_to_vec())
        .collect()
}

#[test]
fn hidden_information_property() {
    let mut checked = 0;
    for n in 2..=6u32 {
        for seed in 0..60u64 {
            let mut rng = Rng::from_u64(seed * 31 + n as u64);
            let mut st = started(n, seed);
            let steps = rng.index(60);
            for _ in 0..steps {
                let awaited = Democratie::to_act(&st);
                if awaited.is_empty() {
                    break;
                }
                let seat = awaited.nth(rng.index(awaited.len())).unwrap();
                let a = Democratie::bot_action(&st, seat, "random", &mut rng).unwrap();
                let evs = Democratie::decide(&st, seat, &a, &mut rng).unwrap();
                apply_all(&mut st, &evs);
            }
            if st.phase != pb::Phase::TrickCommit {
                continue;
            }
            for s in 0..n as usize {
                let copy = perturb(&st, s, &mut rng);
                // The evaluator's position of the seat is the same whatever it cannot see.
                assert_eq!(
                    Democratie::position(&st, s as Seat),
                    Democratie::position(&copy, s as Seat)
                );
                for v in [Viewer::Seat(s as Seat), Viewer::Spectator] {
                    assert_eq!(
                        Democratie::view(&st, v).encode_to_vec(),
                        Democratie::view(&copy, v).encode_to_vec()
                    );
                    assert_eq!(Democratie::render(&st, v), Democratie::render(&copy, v));
                }
                // What s may see is in its view.
                let view = Democratie::view(&st, Viewer::Seat(s as Seat));
                assert_eq!(view.hand, mask_to_pb(st.hands[s]));
                assert_eq!(view.my_commit, to_pb(st.commits[s]));
                assert_eq!(view.vote_card, to_pb(st.vote_card));
                assert_eq!(view.discard, mask_to_pb(st.discard));
                assert!(view.hidden.is_none());
                // The next public action: a commit that is not the last one.
                let awaited = Democratie::to_act(&st);
                if awaited.len() < 2 {
                    continue;
                }
                for t in awaited.iter() {
                    let k = rng.index(st.hands[t as usize].count_ones() as usize);
                    let pick = |x: &State| cards_of(x.hands[t as usize]).nth(k).unwrap();
                    let ea = Democratie::decide(&st, t, &commit(pick(&st)), &mut Rng::from_u64(5))
                        .unwrap();
                    let eb =
                        Democratie::decide(&copy, t, &commit(pick(&copy)), &mut Rng::from_u64(5))
                            .unwrap();
                    assert_eq!(
                        redacted_bytes(&ea, Viewer::Seat(s as Seat)),
                        redacted_bytes(&eb, Viewer::Seat(s as Seat))
                    );
                    assert_eq!(
                        redacted_bytes(&ea, Viewer::Spectator),
                        redacted_bytes(&eb, Viewer::Spectator)
                    );
                    let mut a2 = st;
                    let mut b2 = copy;
                    apply_all(&mut a2, &ea);
                    apply_all(&mut b2, &eb);
                    assert_eq!(
                        Democratie::view(&a2, Viewer::Seat(s as Seat)).encode_to_vec(),
                        Democratie::view(&b2, Viewer::Seat(s as Seat)).encode_to_vec()
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 500, "only {checked} checks");
}

#[test]
fn redacted_commit_is_byte_identical_whatever_the_card() {
    let st = started(4, 8);
    let seat = Democratie::to_act(&st).first().unwrap();
    let mut seen: Vec<Vec<u8>> = vec![];
    for a in Democratie::legal_actions(&st, seat) {
        let evs = Democratie::decide(&st, seat, &a, &mut Rng::from_u64(0)).unwrap();
        for v in (0..4)
            .filter(|&x| x != seat)
            .map(Viewer::Seat)
            .chain([Viewer::Spectator])
        {
            let b = redacted_bytes(&evs, v);
            assert_eq!(b.len(), 1);
            seen.push(b[0].clone());
        }
        let own = redacted_bytes(&evs, Viewer::Seat(seat));
        assert_ne!(own[0], seen[0], "the owner sees its card");
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn deal_events_hide_other_hands_and_deck_order() {
    let mut rng = Rng::from_u64(77);
    for n in 2..=6u32 {
        let st = Democratie::initial(&config(n));
        let evs = Democratie::start(&st, &mut Rng::from_u64(n as u64)).unwrap();
        for e in &evs {
            let mut other = e.clone();
            match &mut other.kind {
                Some(pb::event::Kind::DeckShuffled(d)) => d.deck.reverse(),
                Some(pb::event::Kind::DayDealt(d)) => {
                    // Swap cards among every hand but seat 0's and the vote pile.
                    let mut pool: Vec<i32> = d.vote_pile.clone();
                    for h in &d.hands[1..] {
                        pool.extend(&h.cards);
                    }
                    rng.shuffle(&mut pool);
                    let mut it = pool.into_iter();
                    for v in d.vote_pile.iter_mut() {
                        *v = it.next().unwrap();
                    }
                    for h in &mut d.hands[1..] {
                        let mut cs: Vec<i32> =
                            (0..h.cards.len()).map(|_| it.next().unwrap()).collect();
                        cs.sort();
                        h.cards = cs;
                    }
                }
                _ => {}
            }
            for v in [Viewer::Seat(0), Viewer::Spectator] {
                assert_eq!(
                    redacted_bytes(std::slice::from_ref(e), v),
                    redacted_bytes(&[other.clone()], v)
                );
            }
            if let Some(pb::event::Kind::DayDealt(d)) =
                &Democratie::redact(e, Viewer::Seat(0)).unwrap().kind
            {
                assert_eq!(d.hands[0].cards.len(), d.hands[0].count as usize);
                assert!(d.hands[1..].iter().all(|h| h.cards.is_empty()) && d.vote_pile.is_empty());
            }
        }
    }
}

#[test]
fn render_and_views_by_viewer() {
    let st = started(4, 3);
    let r0 = Democratie::render(&st, Viewer::Seat(0));
    let ra = Democratie::render(&st, Viewer::Auditor);
    let first = card_name(cards_of(st.hands[1]).next().unwrap());
    assert!(ra.contains(&first));
    assert!(r0.contains("5 cards"));
    let va = Democratie::view(&st, Viewer::Auditor);
    let h = va.hidden.unwrap();
    assert_eq!(h.stock.len(), 25);
    assert_eq!(h.hands.len(), 4);
}
