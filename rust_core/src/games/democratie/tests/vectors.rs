//! The test vectors of the rules (TV1-TV22), trick resolution against the §4.3 pseudo-code,
//! and the deal cap (AMB17).

use super::*;

#[test]
fn tv01_deck_composition_and_points() {
    assert_eq!(deck_size(3), 48);
    assert_eq!(deck_size(2), 48);
    assert_eq!(deck_size(5), 48);
    assert_eq!(deck_size(4), 50);
    assert_eq!(deck_size(6), 49);
    for s in 0..4 {
        assert_eq!(suit_points(deck_mask(3), s), 25);
        assert_eq!(
            cards_of(suit_mask(s as u8))
                .map(|c| points(c) as u32)
                .sum::<u32>(),
            25
        );
    }
    assert_eq!(
        cards_of(deck_mask(3))
            .map(|c| points(c) as u32)
            .sum::<u32>(),
        100
    );
    assert_eq!(points(X1), 0);
    assert_eq!(points(X2), 0);
    assert_eq!(card_name(0), "5C");
    assert_eq!(card_name(47), "6S");
    for code in 1..=50 {
        let id = from_pb(code).unwrap();
        assert_eq!(parse_card(&card_name(id)), Some(id));
        assert!(pb::Card::try_from(code)
            .unwrap()
            .as_str_name()
            .ends_with(&card_name(id)));
    }
    // Strength order 5 > 4 > 3 > A > K > Q > J > 10 > 9 > 8 > 7 > 6.
    let order: Vec<u8> = "5H 4H 3H AH KH QH JH TH 9H 8H 7H 6H"
        .split(' ')
        .map(|x| strength(c(x)))
        .collect();
    assert!(order.windows(2).all(|w| w[0] > w[1]));
    assert_eq!(strength(X1), strength(c("5S")));
}

#[test]
fn tv02_canonical_deal_two_players_unshuffled() {
    let mut st = Democratie::initial(&config(2));
    st.phase = pb::Phase::DealSetup;
    st.dealer = 0;
    // The unshuffled deck, 5C on top: bottom first, as the event lists it.
    let deck: Vec<i32> = (0..48).rev().map(to_pb).collect();
    let shuffled = ev(pb::event::Kind::DeckShuffled(pb::DeckShuffled {
        deal_no: 1,
        dealer: 0,
        deck_size: 48,
        deck,
    }));
    Democratie::evolve(&mut st, &shuffled).unwrap();
    let mut out = vec![];
    run_automatic(&mut st, &mut out, &mut Rng::from_u64(0)).unwrap();
    assert_eq!(st.hands[1], cards("5C AC JC 8C 5D AD JD 8D"));
    assert_eq!(st.hands[0], cards("4C KC TC 7C 4D KD TD 7D"));
    // The first card was flipped already: 6D is the vote card, the rest bottom to top.
    assert_eq!(st.vote_card, c("6D"));
    assert_eq!(st.trump, 1);
    let pile: Vec<u8> = st.vote_pile[..st.vote_len as usize].to_vec();
    assert_eq!(
        pile,
        ["3C", "QC", "9C", "6C", "3D", "QD", "9D"].map(c).to_vec()
    );
    assert_eq!(st.stock_slice().len(), 24);
    assert_eq!(
        st.stock_slice().iter().fold(0, |m, &x| m | bit(x)),
        suit_mask(2) | suit_mask(3)
    );
    // Day 2: play day 1 out (any cards), then the same dealer deals the rest.
    let mut rng = Rng::from_u64(3);
    while st.day == 1 {
        let seat = Democratie::to_act(&st).first().unwrap();
        let a = Democratie::bot_action(&st, seat, "random", &mut rng).unwrap();
        let evs = Democratie::decide(&st, seat, &a, &mut rng).unwrap();
        apply_all(&mut st, &evs);
    }
    assert_eq!(st.dealer, 0);
    assert_eq!(st.hands[1], cards("5H AH JH 8H 5S AS JS 8S"));
    assert_eq!(st.hands[0], cards("4H KH TH 7H 4S KS TS 7S"));
    assert_eq!(st.vote_card, c("6S"));
    let pile: Vec<u8> = st.vote_pile[..st.vote_len as usize].to_vec();
    assert_eq!(
        pile,
        ["3H", "QH", "9H", "6H", "3S", "QS", "9S"].map(c).to_vec()
    );
    assert_eq!(st.stock_slice().len(), 0);
}

#[test]
fn tv03_deal_sizes_six_players() {
    let st = started(6, 5);
    for i in 0..6 {
        assert_eq!(st.hands[i].count_ones(), 4);
    }
    assert_eq!(st.vote_len + 1, 4); // one already turned up
    assert_eq!(st.stock_slice().len(), 21);
    assert_eq!(day_size(6, 1) + day_size(6, 2), 7);
    let (hands, _) = deal_day(&st.stock_slice()[..21], 6, st.dealer as usize, 3);
    assert!(hands[..6].iter().all(|h| h.count_ones() == 3));
}

#[test]
fn tv04_normal_trump_trick() {
    let st = wins(3, "KH", &["9H", "5S", "AH"], 2, "9H 5S AH KH");
    assert_eq!(suit_points(st.captured[2], 2), 6);
    assert_eq!(suit_points(st.captured[2], 3), 5);
}

#[test]
fn tv05_five_six_exception_with_other_trumps() {
    let (r, _) = trick(4, "JD", &["5D", "6D", "4D", "X1"]);
    assert!(r.five_six_rule);
    let st = wins(4, "JD", &["5D", "6D", "4D", "X1"], 1, "5D 6D 4D X1 JD");
    assert_eq!(suit_points(st.captured[1], 1), 11);
}

#[test]
fn tv06_six_of_trump_only_trump() {
    wins(3, "7C", &["6C", "KS", "5H"], 0, "6C KS 5H 7C");
}

#[test]
fn tv07_five_of_trump_against_non_trump_six() {
    wins(2, "QS", &["5S", "6H"], 0, "5S 6H QS");
}

#[test]
fn tv08_vote_card_six_of_trump_does_not_compete() {
    let st = wins(2, "6H", &["5H", "4H"], 0, "5H 4H 6H");
    assert_eq!(suit_points(st.captured[0], 2), 9);
}

#[test]
fn tv09_no_trump_played_three_beats_ace() {
    wins(3, "TC", &["3D", "AH", "KS"], 0, "3D AH KS TC");
}

#[test]
fn tv10_tie_between_fives() {
    let st = ties(4, "8H", &["5C", "5S", "AD", "7C"]);
    // Hearts still capturable: 25 minus the discarded 8H.
    assert_eq!(25 - suit_points(st.discard, 2), 24);
}

#[test]
fn tv11_trump_beats_would_be_tie_and_joker() {
    wins(4, "7D", &["5C", "5S", "X1", "6D"], 3, "5C 5S X1 6D 7D");
}

#[test]
fn tv12_joker_loses_to_trump() {
    wins(
        6,
        "9S",
        &["X1", "7S", "5H", "4D", "6C", "QH"],
        1,
        "X1 7S 5H 4D 6C QH 9S",
    );
}

#[test]
fn tv13_joker_ties_with_five() {
    ties(4, "4C", &["X1", "5D", "KH", "3S"]);
}

#[test]
fn tv14_joker_wins_without_trump_five_or_joker() {
    let st = wins(4, "AC", &["X2", "4H", "3S", "TD"], 0, "X2 4H 3S TD AC");
    let total: u8 = (0..4).map(|s| suit_points(st.captured[0], s)).sum();
    assert_eq!(total, 11);
}

#[test]
fn tv15_two_jokers_tie() {
    ties(4, "KD", &["X1", "X2", "9H", "6S"]);
}

#[test]
fn tv16_joker_vote_card_means_no_trump() {
    wins(4, "X1", &["4H", "6H", "3D", "AS"], 0, "4H 6H 3D AS X1");
    let (r, _) = trick(4, "X2", &["5H", "6H", "7D", "8S"]);
    assert!(!r.tie && r.winner == 0 && !r.five_six_rule && !r.trump_trick);
    ties(4, "X1", &["X2", "5S", "KC", "QC"]);
}

#[test]
fn tv17_deal_scoring() {
    let piles = [
        cards("5S 4S AS JS | 5H 3H KH | 6C 7C | 4D AD QD TD"),
        cards("3S KS QS TS 9S | 4H AH QH JH TH | 5C 4C 3C KC | 5D 3D 6D"),
        cards("8S 7S 6S | 9H 7H 6H | AC QC JC TC 9C 8C | KD JD 9D 8D 7D"),
    ];
    assert_eq!(piles.iter().map(|m| m.count_ones()).sum::<u32>() + 1, 48);
    let s = score_piles(&piles);
    assert_eq!(s[0], ([1, 10, 10, 14], 1));
    assert_eq!(s[1], ([14, 8, 12, 9], 1));
    assert_eq!(s[2], ([10, 7, 2, 2], 0));
    // Through the state machine: the scoring event carries the same numbers.
    let mut st = Democratie::initial(&config(3));
    st.phase = pb::Phase::DealScoring;
    st.deal_no = 1;
    st.day = 2;
    st.captured[..3].copy_from_slice(&piles);
    st.discard = cards("8H");
    let mut out = vec![];
    run_automatic(&mut st, &mut out, &mut Rng::from_u64(1)).unwrap();
    let Some(pb::event::Kind::DealScored(d)) = &out[0].kind else {
        panic!("{out:?}")
    };
    assert_eq!(
        d.seats.iter().map(|s| s.tribes_gained).collect::<Vec<_>>(),
        vec![1, 1, 0]
    );
    assert_eq!(d.seats[1].points, vec![14, 8, 12, 9]);
    assert_eq!(st.tribes[..3], [1, 1, 0]);
}

#[test]
fn tv18_match_end_and_tie_at_target() {
    assert_eq!(match_check(&[7, 7, 7], 7, 5, 200), MatchCheck::Continue);
    assert_eq!(match_check(&[7, 8, 9], 7, 6, 200), MatchCheck::Winner(2));
    assert_eq!(match_check(&[9, 7, 3], 7, 6, 200), MatchCheck::Winner(0));
    assert_eq!(match_check(&[6, 6, 5], 7, 6, 200), MatchCheck::Continue);
    // Administrative cap (AMB17), only when no winner is decided.
    assert_eq!(match_check(&[7, 7, 7], 7, 200, 200), MatchCheck::Cap);
    assert_eq!(match_check(&[7, 8, 7], 7, 200, 200), MatchCheck::Winner(1));
    // (a) through the state machine: a three-way tie at the target goes on, dealer passes left.
    let mut st = Democratie::initial(&config(3));
    st.phase = pb::Phase::DealScoring;
    st.deal_no = 3;
    st.day = 2;
    st.dealer = 1;
    st.tribes[..3].copy_from_slice(&[6, 5, 6]);
    // A: 1 tribe (spades), B: 2 (clubs, diamonds), C: 1 (hearts).
    st.captured[0] = suit_mask(3);
    st.captured[1] = suit_mask(0) | suit_mask(1);
    st.captured[2] = suit_mask(2);
    let mut out = vec![];
    run_automatic(&mut st, &mut out, &mut Rng::from_u64(1)).unwrap();
    assert_eq!(st.tribes[..3], [7, 7, 7]);
    assert!(st.phase == pb::Phase::TrickCommit && st.dealer == 2 && st.deal_no == 4);
    assert!(Democratie::outcome(&st).is_none());
    // (b) next deal: C reaches 9 alone and wins.
    let mut st2 = st;
    st2.phase = pb::Phase::DealScoring;
    st2.vote_card = NO_CARD;
    st2.vote_len = 0;
    st2.stock_pos = st2.stock_end;
    st2.hands = [0; MAX_SEATS];
    st2.captured = [0; MAX_SEATS];
    st2.captured[1] = suit_mask(0);
    st2.captured[2] = suit_mask(1) | suit_mask(2) | suit_mask(3);
    let mut out = vec![];
    run_automatic(&mut st2, &mut out, &mut Rng::from_u64(1)).unwrap();
    let o = Democratie::outcome(&st2).unwrap();
    assert_eq!(o.scores, vec![7, 8, 10]);
    assert_eq!(o.winners, vec![2]);
    assert!(!o.aborted);
}

/// TV19 state: n = 3, day 1, trick 5 of 6, vote QD face up, one card left in the vote pile.
fn tv19_state() -> State {
    let mut st = Democratie::initial(&config(3));
    st.phase = pb::Phase::TrickCommit;
    st.deal_no = 1;
    st.day = 1;
    st.trick_no = 5;
    st.hands[0] = cards("5C 9H");
    st.hands[1] = cards("QH 3C");
    st.hands[2] = cards("AS 7D");
    st.vote_card = c("QD");
    st.trump = 1;
    st.vote_pile[0] = c("6S");
    st.vote_len = 1;
    let used = st.hands[0] | st.hands[1] | st.hands[2] | bit(st.vote_card) | bit(st.vote_pile[0]);
    let rest: Vec<u8> = cards_of(deck_mask(3) & !used).collect();
    for (i, &x) in rest[..24].iter().enumerate() {
        st.stock[i] = x;
    }
    st.stock_end = 24;
    for (k, &x) in rest[24..].iter().enumerate() {
        st.captured[k % 3] |= bit(x);
    }
    Democratie::check_invariants(&st).unwrap();
    st
}

#[test]
fn tv19_simultaneous_commit_protocol() {
    let mut st = tv19_state();
    let mut rng = Rng::from_u64(1);
    // 1. P1 commits QH: P1 sees it, others only "P1 committed".
    let evs = Democratie::decide(&st, 1, &commit(c("QH")), &mut rng).unwrap();
    assert_eq!(evs.len(), 1);
    let own = Democratie::redact(&evs[0], Viewer::Seat(1)).unwrap();
    assert_eq!(own, evs[0]);
    let other = Democratie::redact(&evs[0], Viewer::Seat(0)).unwrap();
    assert_eq!(
        other,
        ev(pb::event::Kind::CardCommitted(pb::CardCommitted {
            seat: 1,
            card: 0
        }))
    );
    assert_eq!(
        Democratie::redact(&evs[0], Viewer::Spectator).unwrap(),
        other
    );
    apply_all(&mut st, &evs);
    let v0 = Democratie::view(&st, Viewer::Seat(0));
    assert_eq!(v0.seat_info[1].hand_count, 1);
    assert!(v0.seat_info[1].committed);
    assert_eq!(
        Democratie::view(&st, Viewer::Seat(1)).my_commit,
        to_pb(c("QH"))
    );
    assert_eq!(v0.my_commit, 0);
    assert_eq!(Democratie::to_act(&st).to_vec(), vec![0, 2]);
    // 2. P1 cannot change its commit.
    let before = st;
    assert_eq!(
        rule_reason(Democratie::decide(&st, 1, &commit(c("3C")), &mut rng)),
        "ALREADY_COMMITTED"
    );
    assert_eq!(st, before);
    // 3. P2 asking for QH (P1's commit) gets exactly the error of any card it lacks.
    let e1 = Democratie::decide(&st, 2, &commit(c("QH")), &mut rng).unwrap_err();
    let e2 = Democratie::decide(&st, 2, &commit(c("4S")), &mut rng).unwrap_err();
    let e3 = Democratie::decide(&st, 2, &commit(c("5C")), &mut rng).unwrap_err();
    assert_eq!(e1, e2);
    assert_eq!(e1, e3);
    assert!(matches!(
        e1,
        CoreError::Rule {
            reason: "CARD_NOT_IN_HAND",
            ..
        }
    ));
    // 4. P2 commits AS: still in the commit phase, no foreign card ids in views.
    let evs = Democratie::decide(&st, 2, &commit(c("AS")), &mut rng).unwrap();
    apply_all(&mut st, &evs);
    assert_eq!(st.phase, pb::Phase::TrickCommit);
    let v0 = Democratie::view(&st, Viewer::Seat(0));
    let bytes = v0.encode_to_vec();
    assert!(v0.hand == vec![to_pb(c("5C")), to_pb(c("9H"))] && v0.my_commit == 0);
    assert!(Democratie::view(&st, Viewer::Spectator).hand.is_empty());
    // 5. P0's commit is the last: reveal and resolution in the same transition.
    let evs = Democratie::decide(&st, 0, &commit(c("5C")), &mut rng).unwrap();
    let kinds: Vec<&str> = evs.iter().map(Democratie::event_type).collect();
    assert_eq!(
        &kinds[..4],
        &[
            "card_committed",
            "trick_revealed",
            "trick_resolved",
            "vote_card_flipped"
        ]
    );
    let Some(pb::event::Kind::TrickRevealed(r)) = &evs[1].kind else {
        panic!()
    };
    assert_eq!(*r.played, ["5C", "QH", "AS"].map(|x| to_pb(c(x))));
    for s in 0..3 {
        assert_eq!(
            Democratie::redact(&evs[1], Viewer::Seat(s)).unwrap(),
            evs[1]
        );
    }
    let captured_before = st.captured[0];
    apply_all(&mut st, &evs[..3]);
    assert_eq!(st.captured[0], captured_before | cards("5C QH AS QD"));
    assert!(!bytes.is_empty());
}

#[test]
fn tv20_illegal_actions_outside_the_commit_phase() {
    // DAY_DEAL (after the shuffle, before the deal).
    let mut st = Democratie::initial(&config(3));
    let evs = Democratie::start(&st, &mut Rng::from_u64(4)).unwrap();
    Democratie::evolve(&mut st, &evs[0]).unwrap();
    Democratie::evolve(&mut st, &evs[1]).unwrap();
    assert_eq!(st.phase, pb::Phase::DayDeal);
    assert_eq!(
        rule_reason(Democratie::decide(
            &st,
            0,
            &commit(c("9H")),
            &mut Rng::from_u64(0)
        )),
        "WRONG_PHASE"
    );
    // TRICK_REVEAL / TRICK_RESOLVE / DEAL_SCORING: replay the last commit's events one by one.
    let mut st = tv19_state();
    let mut rng = Rng::from_u64(1);
    for (s, card) in [(1, "QH"), (2, "AS")] {
        let evs = Democratie::decide(&st, s, &commit(c(card)), &mut rng).unwrap();
        apply_all(&mut st, &evs);
    }
    let evs = Democratie::decide(&st, 0, &commit(c("5C")), &mut rng).unwrap();
    let mut seen = vec![];
    for e in &evs {
        Democratie::evolve(&mut st, e).unwrap();
        if st.phase != pb::Phase::TrickCommit {
            seen.push(st.phase);
            assert_eq!(
                rule_reason(Democratie::decide(&st, 0, &commit(c("9H")), &mut rng)),
                "WRONG_PHASE"
            );
        }
    }
    assert!(seen.contains(&pb::Phase::TrickReveal) && seen.contains(&pb::Phase::TrickResolve));
    // A card already played in an earlier trick.
    assert_eq!(st.phase, pb::Phase::TrickCommit);
    assert_eq!(
        rule_reason(Democratie::decide(&st, 0, &commit(c("5C")), &mut rng)),
        "CARD_NOT_IN_HAND"
    );
    // DEAL_SCORING and MATCH_END.
    let mut st = Democratie::initial(&config(3));
    st.phase = pb::Phase::DealScoring;
    assert_eq!(
        rule_reason(Democratie::decide(&st, 0, &commit(c("9H")), &mut rng)),
        "WRONG_PHASE"
    );
    st.phase = pb::Phase::MatchEnd;
    assert_eq!(
        rule_reason(Democratie::decide(&st, 0, &commit(c("9H")), &mut rng)),
        "WRONG_PHASE"
    );
}

#[test]
fn tv21_day_and_deal_transitions_five_players() {
    let mut st = started(5, 21);
    let mut rng = Rng::from_u64(21);
    let dealer = st.dealer;
    assert_eq!(st.stock_slice().len(), 24);
    let mut day2_seen = false;
    loop {
        let seat = Democratie::to_act(&st).first().unwrap();
        let a = Democratie::bot_action(&st, seat, "random", &mut rng).unwrap();
        let evs = Democratie::decide(&st, seat, &a, &mut rng).unwrap();
        for e in &evs {
            let captured_before = st.captured;
            let phase_before = st.phase;
            Democratie::evolve(&mut st, e).unwrap();
            Democratie::check_invariants(&st).unwrap();
            match &e.kind {
                Some(pb::event::Kind::DayDealt(d)) if d.day == 2 => {
                    assert_eq!(phase_before, pb::Phase::DayEnd);
                    assert_eq!(d.dealer, dealer as u32);
                    assert_eq!(d.stock_left, 0);
                    assert!(d.hands.iter().all(|h| h.count == 4));
                    assert_eq!(st.captured, captured_before);
                    day2_seen = true;
                }
                Some(pb::event::Kind::DealScored(_)) => {
                    assert_eq!(phase_before, pb::Phase::DealScoring);
                    assert!(day2_seen);
                }
                Some(pb::event::Kind::DeckShuffled(d)) => {
                    assert_eq!(phase_before, pb::Phase::MatchCheck);
                    assert_eq!(d.dealer, (dealer as u32 + 1) % 5);
                    assert_eq!(d.deck.len(), 48);
                    return;
                }
                Some(pb::event::Kind::MatchEnded(_)) => panic!("one deal cannot reach 7 tribes"),
                _ => {}
            }
        }
    }
}

#[test]
fn tv22_five_and_six_of_trump_two_players() {
    let st = wins(2, "9C", &["5C", "6C"], 1, "5C 6C 9C");
    assert_eq!(suit_points(st.captured[1], 0), 6);
}

/// §4.3 pseudo-code, written as plainly as possible.
fn reference_resolve(played: &[u8], trump: u8) -> Option<usize> {
    let is_trump = |c: u8| trump < 4 && !is_joker(c) && c / 12 == trump;
    let t: Vec<usize> = (0..played.len()).filter(|&i| is_trump(played[i])).collect();
    if !t.is_empty() {
        let five = t.iter().any(|&i| played[i].is_multiple_of(12));
        if let Some(&j) = t.iter().find(|&&j| played[j] % 12 == 11) {
            if five {
                return Some(j);
            }
        }
        return t.iter().copied().max_by_key(|&i| strength(played[i]));
    }
    let m = played.iter().map(|&c| strength(c)).max().unwrap();
    let w: Vec<usize> = (0..played.len())
        .filter(|&i| strength(played[i]) == m)
        .collect();
    if w.len() == 1 {
        Some(w[0])
    } else {
        None
    }
}

#[test]
fn resolve_trick_agrees_with_the_spec_pseudocode() {
    let mut rng = Rng::from_u64(12);
    for _ in 0..100_000 {
        let n = 2 + rng.index(5);
        let mut deck: Vec<u8> = (0..deck_size(n) as u8).collect();
        rng.shuffle(&mut deck);
        let trump = suit_of(deck[n]);
        let got = resolve_trick(&deck[..n], trump);
        assert_eq!(
            got.winner.map(|w| w as usize),
            reference_resolve(&deck[..n], trump),
            "{:?} trump {trump}",
            &deck[..n]
        );
    }
}

#[test]
fn resolution_rules_not_in_the_vectors() {
    // AMB12: 5 and 6 of the same non-trump suit: the 5 wins.
    assert_eq!(resolve_trick(&[c("5H"), c("6H")], 0).winner, Some(0));
    // A lone 6 of trump beats everything else.
    assert_eq!(resolve_trick(&[c("5H"), c("6C"), X1], 0).winner, Some(1));
    // 5 of trump without the 6 beats other trumps.
    assert_eq!(
        resolve_trick(&[c("4C"), c("5C"), c("3C")], 0).winner,
        Some(1)
    );
    // Three-way tie with a Joker.
    assert_eq!(resolve_trick(&[c("5S"), c("5H"), X1], 1).winner, None);
    // No trump suit at all (Joker vote).
    assert_eq!(resolve_trick(&[c("AH"), c("3C")], NO_TRUMP).winner, Some(1));
}

#[test]
fn short_matches_end_on_the_deal_cap() {
    // With one deal max, some matches end on the cap.
    let mut opts = Options::new();
    opts.insert("target".into(), "1".into());
    opts.insert("max_deals".into(), "1".into());
    let config = Democratie::checked_config(4, &opts).unwrap();
    let mut capped = 0;
    for seed in 0..200 {
        let mut rep = conformance::Report::default();
        let p =
            conformance::play_checked::<Democratie>(&config, 4, seed, 50_000, &mut rep).unwrap();
        assert!(rep.violations.is_empty(), "{:?}", rep.violations);
        let o = Democratie::outcome(&p.state).unwrap();
        if o.aborted {
            capped += 1;
            assert!(o.winners.is_empty() && o.reason == "DEAL_CAP");
        } else {
            assert_eq!(o.winners.len(), 1);
        }
    }
    assert!(capped > 0);
}
