//! Hidden information: views and redactions do not depend on hidden cards.

use super::*;

/// Random reachable state: start a match and play `steps` random legal moves.
fn random_state(n: u32, seed: u64, steps: usize) -> Option<State> {
    let cfg = GridKnock::checked_config(n, &Options::new()).unwrap();
    let mut st = GridKnock::initial(&cfg);
    let mut r = Rng::from_u64(seed);
    let mut evs = vec![];
    gk::auto_steps(&mut st, &mut r, &mut evs).unwrap();
    let mut moves = vec![];
    for _ in 0..steps {
        let mask = gk::to_act_mask(&st);
        if mask == 0 {
            return None;
        }
        let seats: Vec<u8> = (0..8).filter(|i| mask >> i & 1 == 1).collect();
        let seat = seats[r.index(seats.len())];
        gk::legal_moves(&st, seat, &mut moves);
        let mv = moves[r.index(moves.len())];
        gk::act(&mut st, seat, mv, &mut r, &mut evs).unwrap();
    }
    (gk::to_act_mask(&st) != 0).then_some(st)
}

#[test]
fn hidden_information_views_and_redactions_do_not_depend_on_hidden_cards() {
    let mut checked_events = 0;
    let mut checked = 0;
    let (mut hidden_changed, mut sealed_changed) = (0, 0);
    for seed in 0..300u64 {
        let n = [3u32, 4, 5, 2][seed as usize % 4];
        let Some(st) = random_state(n, seed, (seed as usize * 7) % 120) else {
            continue;
        };
        let mut r = Rng::from_u64(seed ^ 99);
        let mask = gk::to_act_mask(&st);
        let seats: Vec<u8> = (0..8).filter(|i| mask >> i & 1 == 1).collect();
        let actor = seats[r.index(seats.len())];
        let mut moves = vec![];
        gk::legal_moves(&st, actor, &mut moves);
        let mv = moves[r.index(moves.len())];
        let orig_events = GridKnock::decide(
            &st,
            actor as u32,
            &gk::to_action(mv),
            &mut Rng::from_u64(seed),
        )
        .unwrap();
        let orig_int: Vec<Ev> = orig_events
            .iter()
            .map(|e| gk::pb_to_ev(e).unwrap())
            .collect();
        let reveals_all = orig_int.iter().any(|e| matches!(e, Ev::RoundScored(_)));
        let reveals_y = orig_int
            .iter()
            .any(|e| matches!(e, Ev::HeldCardPlaced { .. } | Ev::HeldCardDiscarded { .. }));
        let closes_window = orig_int
            .iter()
            .any(|e| matches!(e, Ev::KnockWindowClosed { .. }));
        for s in 0..n as u8 {
            // Places hidden from s that this action does not reveal to s.
            let mut fixed: Vec<u8> = vec![];
            match mv {
                Move::KeepSwap(p)
                | Move::DiscardAndReveal(p)
                | Move::TakeFromKnocker(p)
                | Move::ReturnSwap(p) => fixed.push(p),
                Move::KnockerSwap(p) if s == actor => fixed.push(p),
                Move::RevealInitial(p) => fixed.push(p),
                _ => {}
            }
            if orig_int
                .iter()
                .any(|e| matches!(e, Ev::InitialRevealed { .. }))
            {
                // The simultaneous flip shows every chosen card.
                for i in 0..n as usize {
                    fixed.extend(st.init_choice[i].iter().copied().filter(|&x| x != u8::MAX));
                }
            }
            let mut hidden_slots: Vec<u8> = (0..(12 * n) as u8)
                .filter(|&x| st.filled >> x & 1 == 1 && st.up >> x & 1 == 0 && !fixed.contains(&x))
                .collect();
            let draw_hidden = if matches!(mv, Move::DrawFromPile) {
                st.draw_len.saturating_sub(1)
            } else {
                st.draw_len
            } as usize;
            // Collect the hidden values, permute them, put them back.
            let mut vals: Vec<i8> = hidden_slots.iter().map(|&x| st.val[x as usize]).collect();
            vals.extend_from_slice(&st.draw[..draw_hidden]);
            let y_hidden = st.held_card != i8::MIN
                && !st.held_card_was_face_up
                && s != st.knocker
                && !reveals_y;
            if y_hidden {
                vals.push(st.held_card);
            }
            r.shuffle(&mut vals);
            let mut alt = st.clone();
            let mut it = vals.into_iter();
            for &x in &hidden_slots {
                alt.val[x as usize] = it.next().unwrap();
            }
            for k in 0..draw_hidden {
                alt.draw[k] = it.next().unwrap();
            }
            if y_hidden {
                alt.held_card = it.next().unwrap();
            }
            // Sealed initial choices of the others move to another face-down card of their block.
            let flips_initial = orig_int
                .iter()
                .any(|e| matches!(e, Ev::InitialRevealed { .. }));
            if alt.phase == Phase::InitialReveal && !flips_initial {
                for o in (0..n as usize).filter(|&o| o != s as usize) {
                    for k in 0..alt.init_cnt[o] as usize {
                        let cands: Vec<u8> = (o as u8 * 12..o as u8 * 12 + 12)
                            .filter(|&x| {
                                alt.up >> x & 1 == 0
                                    && !alt.init_choice[o].contains(&x)
                                    && mv != Move::RevealInitial(x)
                            })
                            .collect();
                        if !cands.is_empty() && r.index(2) == 1 {
                            alt.init_choice[o][k] = cands[r.index(cands.len())];
                            sealed_changed += 1;
                        }
                    }
                }
            }
            if alt.val != st.val || alt.draw != st.draw || alt.held_card != st.held_card {
                hidden_changed += 1;
            }
            // Sealed knock answers of the others.
            if !closes_window {
                if alt.answered & !(1 << s) != 0 {
                    sealed_changed += 1;
                }
                let others = alt.answered & !(1 << s);
                alt.knocked ^= others;
            }
            hidden_slots.clear();
            gk::invariants(&alt).unwrap();
            let v = Viewer::Seat(s as u32);
            assert_eq!(
                GridKnock::view(&st, v).encode_to_vec(),
                GridKnock::view(&alt, v).encode_to_vec(),
                "seed {seed}: view of seat {s} depends on hidden information"
            );
            assert_eq!(
                GridKnock::position(&st, s as u32),
                GridKnock::position(&alt, s as u32),
                "seed {seed}: position of seat {s} depends on hidden information"
            );
            assert_eq!(
                GridKnock::view(&st, Viewer::Spectator).encode_to_vec(),
                GridKnock::view(&alt, Viewer::Spectator).encode_to_vec()
            );
            checked += 1;
            // What s may know is in its view.
            let view = GridKnock::view(&st, v);
            for x in 0..(12 * n) as usize {
                if st.up >> x & 1 == 1 {
                    assert_eq!(view.slots[x].value, Some(st.val[x] as i32));
                } else {
                    assert_eq!(view.slots[x].value, None);
                }
            }
            if st.knocker == s && st.held_card != i8::MIN {
                assert_eq!(view.held_card, Some(st.held_card as i32));
            }
            if st.answered >> s & 1 == 1 {
                assert_ne!(view.own_knock_answer, 0);
            }
            if reveals_all {
                continue;
            }
            // Same public action on the copy: the redactions for s are identical.
            let alt_events = GridKnock::decide(
                &alt,
                actor as u32,
                &gk::to_action(mv),
                &mut Rng::from_u64(seed),
            )
            .unwrap_or_else(|e| {
                panic!("seed {seed}: {mv:?} legal in original but not in copy: {e}")
            });
            assert_eq!(
                orig_events.len(),
                alt_events.len(),
                "seed {seed}: event count differs"
            );
            for (a, b) in orig_events.iter().zip(&alt_events) {
                let ra = GridKnock::redact(a, v).map(|e| e.encode_to_vec());
                let rb = GridKnock::redact(b, v).map(|e| e.encode_to_vec());
                let sa = GridKnock::redact(a, Viewer::Spectator).map(|e| e.encode_to_vec());
                let sb = GridKnock::redact(b, Viewer::Spectator).map(|e| e.encode_to_vec());
                assert_eq!(sa, sb, "seed {seed}: a spectator sees a difference");
                assert_eq!(
                    ra, rb,
                    "seed {seed}: seat {s} sees a difference in {:?} vs {:?}",
                    a, b
                );
                checked_events += 1;
            }
        }
    }
    assert!(
        checked > 500 && checked_events > 500,
        "{checked} views, {checked_events} events"
    );
    assert!(
        hidden_changed > 400 && sealed_changed > 20,
        "copies differed: {hidden_changed} hidden, {sealed_changed} sealed"
    );
}

#[test]
fn spectator_and_auditor_views() {
    let st = random_state(4, 5, 60).unwrap();
    let spec = GridKnock::view(&st, Viewer::Spectator);
    let aud = GridKnock::view(&st, Viewer::Auditor);
    assert!(spec.draw_pile.is_empty() && !aud.draw_pile.is_empty());
    assert!(aud
        .slots
        .iter()
        .all(|s| s.state == pb::SlotState::Empty as i32 || s.value.is_some()));
    assert!(spec
        .slots
        .iter()
        .all(|s| s.state != pb::SlotState::FaceDown as i32 || s.value.is_none()));
    let text = GridKnock::render(&st, Viewer::Seat(0));
    assert!(text.contains("Grid Knock"));
    eprintln!("{text}");
    let text = GridKnock::render(&st, Viewer::Auditor);
    eprintln!("{text}");
    assert!(text.lines().count() >= 5);
}
