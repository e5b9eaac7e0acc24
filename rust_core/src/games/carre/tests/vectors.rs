//! The spec's test vectors (docs/rules/carre.md §9).

use super::*;

#[test]
fn tv01_deal_and_first_draw() {
    let mut opts = Options::new();
    opts.insert("first_starter".into(), "0".into());
    let cfg = Carre::checked_config(2, &opts).unwrap();
    let mut s = Carre::initial(&cfg);
    let evs = Carre::start(&s, &mut Rng::from_u64(42)).unwrap();
    let mut deck: Vec<u8> = (0..52).collect();
    Rng::from_u64(42).shuffle(&mut deck);
    let d: Vec<pb::Card> = deck.iter().map(|&x| card_pb(x)).collect();
    assert_eq!(evs.len(), 3);
    let Some(Ev::RoundDealt(dealt)) = &evs[1].kind else {
        panic!("{evs:?}")
    };
    assert_eq!((dealt.round, dealt.starter, dealt.dealer), (1, 0, 1));
    let p1: Vec<pb::Card> = (0..8).map(|i| d[2 * i]).collect();
    let p2: Vec<pb::Card> = (0..8).map(|i| d[2 * i + 1]).collect();
    assert_eq!(dealt.hands[0].cards, p1);
    assert_eq!(dealt.hands[1].cards, p2);
    assert_eq!(
        dealt.stock,
        d[16..].iter().rev().copied().collect::<Vec<_>>()
    );
    let Some(Ev::CardDrawn(first)) = &evs[2].kind else {
        panic!()
    };
    assert_eq!(
        (first.seat, first.card, first.stock_size),
        (0, Some(d[16]), 35)
    );
    for e in &evs {
        Carre::evolve(&mut s, e).unwrap();
    }
    assert_eq!(s.hands[0].count_ones(), 9);
    assert_eq!(s.hands[1].count_ones(), 8);
    assert_eq!(s.stock_left(), 35);
    assert!(s.n_placed == 0 && s.n_discard == 0);
    assert!(!Carre::legal_actions(&s, 0).contains(&go_out()));
    // Discard-only play: 36 draws, the 36th (d51) by the dealer P2; 52 turns in all.
    let mut draws = vec![(0u32, d[16])];
    let mut turns = 0;
    let mut end = None;
    while end.is_none() {
        let seat = Carre::to_act(&s).first().unwrap();
        let a = Carre::legal_actions(&s, seat)
            .into_iter()
            .find(|a| matches!(a.kind, Some(pb::action::Kind::Discard(_))))
            .unwrap();
        turns += 1;
        for e in act(&mut s, seat, &a) {
            match e.kind {
                Some(Ev::CardDrawn(dr)) if end.is_none() => draws.push((dr.seat, dr.card.unwrap())),
                Some(Ev::RoundScored(r)) => end = Some(r),
                _ => {}
            }
        }
    }
    assert_eq!(turns, 52);
    assert_eq!(draws.len(), 36);
    assert_eq!(draws[35], (1, d[51]));
    assert_eq!(end.unwrap().end, pb::RoundEnd::Exhaustion as i32);
}

#[test]
fn tv02_pip_card_on_its_own_cell() {
    let mut s = pos(0);
    give(&mut s, 0, &["5H"]);
    fill(&mut s, 10);
    assert_eq!(reason(try_act(&s, 0, &place("5H", true, 4))), "WRONG_CELL");
    act(&mut s, 0, &place("5H", true, 5));
    assert_eq!(pile_codes(&s, 0, 5), ["5H"]);
}

#[test]
fn tv03_pip_card_in_the_opponents_square() {
    let mut s = pos(0);
    give(&mut s, 0, &["7C"]);
    pile(&mut s, 1, 7, &["7S"]);
    fill(&mut s, 10);
    assert_eq!(
        reason(try_act(&s, 0, &place("7C", false, 7))),
        "CELL_FACE_UP"
    );

    let mut s = pos(0);
    give(&mut s, 0, &["7C"]);
    pile(&mut s, 1, 7, &["7S", "v:JD"]);
    fill(&mut s, 10);
    act(&mut s, 0, &place("7C", false, 7));
    assert_eq!(pile_codes(&s, 1, 7), ["7S", "v:JD", "7C"]);
    assert_eq!(s.mask[1][6], card_mask(c("7C")));
}

#[test]
fn tv04_ten() {
    let mut s = pos(0);
    give(&mut s, 0, &["TH"]);
    pile(&mut s, 0, 3, &["3S"]);
    pile(&mut s, 0, 4, &["4C", "v:QD"]);
    fill(&mut s, 10);
    assert!(try_act(&s, 0, &place("TH", true, 2)).is_ok());
    assert_eq!(
        reason(try_act(&s, 0, &place("TH", true, 3))),
        "CELL_FACE_UP"
    );
    assert!(try_act(&s, 0, &place("TH", true, 4)).is_ok());
    assert_eq!(
        reason(try_act(&s, 0, &place("TH", false, 2))),
        "OWN_SQUARE_ONLY"
    );
    // AMB21: own-square check comes before the cell state, whatever P2's cell holds.
    pile(&mut s, 1, 2, &["2S"]);
    assert_eq!(
        reason(try_act(&s, 0, &place("TH", false, 2))),
        "OWN_SQUARE_ONLY"
    );
}

#[test]
fn tv05_king() {
    let mut s = pos(0);
    give(&mut s, 0, &["KD"]);
    pile(&mut s, 0, 5, &["5S"]);
    pile(&mut s, 0, 1, &["AS", "KC"]);
    fill(&mut s, 10);
    let mut t = s;
    act(&mut t, 0, &place("KD", true, 5));
    assert_eq!(pile_codes(&t, 0, 5), ["5S", "KD"]);
    assert!(try_act(&s, 0, &place("KD", true, 1)).is_ok());
    assert!(try_act(&s, 0, &place("KD", true, 6)).is_ok());
    assert_eq!(
        reason(try_act(&s, 0, &place("KD", false, 5))),
        "OWN_SQUARE_ONLY"
    );
}

#[test]
fn tv06_jack() {
    let mut s = pos(0);
    give(&mut s, 0, &["JH"]);
    pile(&mut s, 1, 5, &["5S"]);
    pile(&mut s, 1, 4, &["4C", "v:QD"]);
    pile(&mut s, 0, 1, &["AS"]);
    fill(&mut s, 10);
    assert_eq!(s.log[1].by, 1, "P2's own Queen");
    let mut t = s;
    act(&mut t, 0, &place("JH", false, 5));
    assert_eq!(pile_codes(&t, 1, 5), ["5S", "v:JH"]);
    let v = Carre::view(&t, Viewer::Seat(1));
    let top = v.squares[1].cells[4].pile.last().copied().unwrap();
    assert_eq!((top.face_down, top.placed_by, top.card), (true, 0, None));
    assert_eq!(
        reason(try_act(&s, 0, &place("JH", false, 6))),
        "CELL_NOT_FACE_UP"
    );
    assert_eq!(
        reason(try_act(&s, 0, &place("JH", false, 4))),
        "CELL_NOT_FACE_UP"
    );
    assert!(try_act(&s, 0, &place("JH", true, 1)).is_ok());
}

#[test]
fn tv07_queen() {
    let mut s = pos(0);
    give(&mut s, 0, &["QC"]);
    pile(&mut s, 0, 9, &["9S"]);
    pile(&mut s, 1, 5, &["5D"]);
    fill(&mut s, 10);
    let mut t = s;
    act(&mut t, 0, &place("QC", true, 9));
    assert_eq!(pile_codes(&t, 0, 9), ["9S", "v:QC"]);
    assert_eq!(
        reason(try_act(&s, 0, &place("QC", true, 8))),
        "CELL_NOT_FACE_UP"
    );
    assert_eq!(
        reason(try_act(&s, 0, &place("QC", false, 5))),
        "OWN_SQUARE_ONLY"
    );
}

#[test]
fn tv08_scoring_a_mixed_square() {
    let mut s = pos(0);
    square(&mut s, 0, TV08);
    fill(&mut s, 10);
    assert_eq!(lines_of(&s, 0), [2, 0, 0, 1, 0, 0, 2, 1]);
    assert_eq!(s.raw(0), 6);
    assert_eq!(base_score(6), 7);
    assert!(is_legal(&s, 0, &go_out()));
}

fn tv09_position() -> State {
    let mut s = pos(1);
    square(&mut s, 0, TV08);
    give(&mut s, 1, &["JH"]);
    give(&mut s, 0, &["5C", "KS"]);
    fill(&mut s, 10);
    s
}

#[test]
fn tv09_a_jack_breaks_lines() {
    let mut s = tv09_position();
    act(&mut s, 1, &place("JH", false, 5));
    assert_eq!(pile_codes(&s, 0, 5), ["5S", "v:JH"]);
    assert_eq!(lines_of(&s, 0), [2, 0, 0, 1, 0, 0, 0, 0]);
    assert_eq!(s.raw(0), 3);
    assert_eq!(Carre::to_act(&s).to_vec(), vec![0]);
    assert!(!is_legal(&s, 0, &go_out()));
    assert_eq!(reason(try_act(&s, 0, &go_out())), "GO_OUT_BELOW_5");
}

#[test]
fn tv10_re_covering_a_face_down_cell() {
    let mut s = tv09_position();
    act(&mut s, 1, &place("JH", false, 5));
    act(&mut s, 0, &place("5C", true, 5));
    assert_eq!(pile_codes(&s, 0, 5), ["5S", "v:JH", "5C"]);
    assert_eq!(lines_of(&s, 0), [2, 0, 0, 1, 0, 0, 1, 1]);
    assert_eq!(s.raw(0), 5);
    // P2 plays elsewhere (a discard), then P1 draws and may go out.
    let d = Carre::legal_actions(&s, 1)
        .into_iter()
        .rev()
        .find(|a| matches!(a.kind, Some(pb::action::Kind::Discard(_))))
        .unwrap();
    act(&mut s, 1, &d);
    assert!(is_legal(&s, 0, &go_out()));
    let r = scored(&act(&mut s, 0, &go_out()));
    assert_eq!(r.end, pb::RoundEnd::WentOut as i32);
    assert_eq!(
        (
            r.scores[0].raw_points,
            r.scores[0].round_score,
            r.scores[0].went_out
        ),
        (5, 4, true)
    );
}

#[test]
fn tv11_king_over_a_face_down_card() {
    let mut s = tv09_position();
    act(&mut s, 1, &place("JH", false, 5));
    act(&mut s, 0, &place("KS", true, 5));
    assert_eq!(pile_codes(&s, 0, 5), ["5S", "v:JH", "KS"]);
    assert_eq!(lines_of(&s, 0), [2, 0, 0, 1, 0, 0, 2, 1]);
    assert_eq!((s.raw(0), base_score(s.raw(0))), (6, 7));
}

#[test]
fn tv12_the_doubling_table() {
    for (raw, score) in [
        (0, 0),
        (4, 4),
        (5, 5),
        (6, 7),
        (7, 9),
        (8, 11),
        (10, 15),
        (14, 23),
        (16, 27),
    ] {
        assert_eq!(base_score(raw), score, "raw {raw}");
    }
    for (raw, score) in [(5, 4), (6, 6), (7, 8), (10, 14), (16, 26)] {
        assert_eq!(base_score(raw) - 1, score, "raw {raw} went out");
    }
}

#[test]
fn tv13_square_entirely_of_one_suit() {
    let mut s = pos(0);
    square(&mut s, 0, "AH 2H 3H / 4H 5H 6H / 7H 8H 9H");
    fill(&mut s, 10);
    assert_eq!(lines_of(&s, 0), [2; 8]);
    s.went_out = 0;
    s.phase = Phase::Scoring;
    let r = s.round_result();
    assert_eq!((r.raw[0], r.score[0]), (16, 26));
    assert_eq!(base_score(16), 27);
}

#[test]
fn tv14_the_seeds_ten_points_example() {
    let mut s = pos(0);
    square(&mut s, 0, "AS 2S 3S / 4S 5S 6S / 7S 8S 9H");
    assert_eq!(lines_of(&s, 0), [2, 2, 0, 2, 2, 0, 0, 2]);
    assert_eq!((s.raw(0), base_score(10)), (10, 15));
}

#[test]
fn tv15_colour_lines_face_down_blocker_ten_and_king() {
    let mut s = pos(0);
    square(&mut s, 0, "AH 2D 3H / 4C 5S 6C / 7D 8S+v:JS 9D");
    square(&mut s, 1, "TS 2S KS / 4H 5D 6H / .. 8C 9C");
    assert_eq!(lines_of(&s, 0), [1, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(s.raw(0), 2);
    assert_eq!(lines_of(&s, 1), [2, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(s.raw(1), 3);
}

#[test]
fn tv16_spoiling_the_opponent_with_a_pip_card() {
    let mut s = pos(0);
    give(&mut s, 0, &["5H"]);
    pile(&mut s, 1, 4, &["4S"]);
    pile(&mut s, 1, 6, &["6S"]);
    fill(&mut s, 10);
    act(&mut s, 0, &place("5H", false, 5));
    assert_eq!(lines_of(&s, 1)[1], 0);
    // R16: a black King placed directly on the 5H repairs the row for P2 (only the rule
    // check matters here, so the King is simply put in P2's hand).
    let mut t = s;
    t.hands[1] |= bit(c("KC"));
    assert!(t.check_place(1, c("KC"), 1, 4).is_ok());
    t.place(1, c("KC"), 1, 4, false);
    assert_eq!(lines_of(&t, 1)[1], 1, "4S KC 6S: all black");
}

#[test]
fn tv17_going_out() {
    let mut s = pos(0);
    square(&mut s, 0, "AS 2S 3S / 4C 5C 6H / 7C 8D 9S");
    square(&mut s, 1, "AC 2C 3C / 4S 5S 6S / 7S 8S 9H");
    give(&mut s, 0, &["TD", "KH"]);
    give(&mut s, 1, &["TC"]);
    fill(&mut s, 10);
    assert_eq!((s.raw(0), s.raw(1)), (5, 7));
    assert_eq!(lines_of(&s, 1), [2, 2, 0, 1, 1, 0, 0, 1]);
    let mut t = s;
    let evs = act(&mut t, 0, &go_out());
    assert!(matches!(
        evs[0].kind,
        Some(Ev::WentOut(pb::WentOut {
            seat: 0,
            raw_points: 5
        }))
    ));
    let r = scored(&evs);
    assert_eq!((r.scores[0].round_score, r.scores[1].round_score), (4, 9));
    assert_eq!((r.scores[0].went_out, r.scores[1].went_out), (true, false));
    // The next round was dealt at once: P2 got no further turn in round 1.
    assert!(matches!(evs[2].kind, Some(Ev::RoundDealt(_))));
    assert_eq!(t.round, 2);
    // Timing: after a card play the turn is over and go_out is no longer offered to P1.
    let mut t = s;
    act(&mut t, 0, &discard("TD"));
    assert!(Carre::legal_actions(&t, 0).is_empty());
    assert_eq!(reason(try_act(&t, 0, &go_out())), "NOT_YOUR_TURN");
    // Negative case: raw 4.
    let mut n = pos(0);
    square(&mut n, 0, "AS 2H 3S / .. 5S .. / 7S .. 9S");
    fill(&mut n, 10);
    assert_eq!(n.raw(0), 4);
    assert_eq!(reason(try_act(&n, 0, &go_out())), "GO_OUT_BELOW_5");
}

#[test]
fn tv18_the_last_stock_card() {
    let mut s = State::new(Config::default());
    s.round = 1;
    s.phase = Phase::Drawing;
    s.current = 1;
    for i in 0..8u8 {
        s.hands[0] |= bit(i);
        s.hands[1] |= bit(8 + i);
    }
    fill(&mut s, 1);
    let mut evs = vec![];
    Carre::auto_steps(&mut s, &mut Rng::from_u64(1), &mut evs).unwrap();
    assert!(matches!(
        evs[0].kind,
        Some(Ev::CardDrawn(pb::CardDrawn {
            seat: 1,
            stock_size: 0,
            ..
        }))
    ));
    assert_eq!((s.stock_left(), s.hands[1].count_ones()), (0, 9));
    Carre::check_invariants(&s).unwrap();
    let mut seats = vec![];
    let mut emptied_first = None;
    loop {
        let seat = Carre::to_act(&s).first().unwrap();
        seats.push(seat);
        let a = Carre::legal_actions(&s, seat).pop().unwrap(); // a discard
        let evs = act(&mut s, seat, &a);
        if emptied_first.is_none() && s.hands[seat as usize] == 0 {
            emptied_first = Some(seat);
        }
        if matches!(
            evs.last().unwrap().kind,
            Some(Ev::RoundDealt(_)) | Some(Ev::CardDrawn(_))
        ) || s.round > 1
        {
            break;
        }
        Carre::check_invariants(&s).unwrap();
        assert!(!s.drew || seats.len() == 1);
    }
    // P2's turn with the last card, then 16 turns without draws.
    assert_eq!(seats.len(), 17);
    assert_eq!(seats[1..], [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
    assert_eq!(emptied_first, Some(0));
}

fn tv19_position() -> State {
    let mut s = pos(0);
    give(&mut s, 0, &["JS"]);
    give(&mut s, 1, &["4D"]);
    pile(&mut s, 0, 4, &["4S", "v:QH"]);
    fill(&mut s, 0);
    s
}

#[test]
fn tv19_forced_discard_and_end_by_exhaustion() {
    let mut s = tv19_position();
    assert_eq!(Carre::legal_actions(&s, 0), vec![discard("JS")]);
    act(&mut s, 0, &discard("JS"));
    assert_eq!(Carre::to_act(&s).to_vec(), vec![1]);
    assert_eq!(
        Carre::legal_actions(&s, 1),
        vec![place("4D", true, 4), place("4D", false, 4), discard("4D")]
    );
    let evs = act(&mut s, 1, &place("4D", false, 4));
    let r = scored(&evs);
    assert_eq!(r.end, pb::RoundEnd::Exhaustion as i32);
    assert!(r
        .scores
        .iter()
        .all(|x| !x.went_out && x.round_score == x.base_score));
}

#[test]
fn tv20_going_out_with_an_empty_stock() {
    let mut s = pos(0);
    square(&mut s, 0, "AS 2S 3S / 4C 5C 6H / 7C 8D 9S");
    give(&mut s, 0, &["3C", "8H"]);
    give(&mut s, 1, &["3D", "8C"]);
    fill(&mut s, 0);
    assert_eq!(s.raw(0), 5);
    assert!(!s.drew);
    assert!(is_legal(&s, 0, &go_out()));
    let r = scored(&act(&mut s.clone(), 0, &go_out()));
    assert_eq!(r.scores[0].round_score, 4);
    // With the AMB9 flag off, the same go_out is refused.
    s.cfg.go_out_without_draw = false;
    assert!(!is_legal(&s, 0, &go_out()));
    assert_eq!(reason(try_act(&s, 0, &go_out())), "GO_OUT_WITHOUT_DRAW");
}

#[test]
fn tv21_pip_card_cannot_cover_a_king_queen_reopens() {
    let mut s = pos(0);
    give(&mut s, 0, &["AH", "QH"]);
    pile(&mut s, 0, 1, &["KS"]);
    fill(&mut s, 10);
    assert_eq!(
        reason(try_act(&s, 0, &place("AH", true, 1))),
        "CELL_FACE_UP"
    );
    act(&mut s, 0, &place("QH", true, 1));
    assert_eq!(pile_codes(&s, 0, 1), ["KS", "v:QH"]);
    let d = Carre::legal_actions(&s, 1).pop().unwrap();
    act(&mut s, 1, &d);
    act(&mut s, 0, &place("AH", true, 1));
    assert_eq!(pile_codes(&s, 0, 1), ["KS", "v:QH", "AH"]);
}

#[test]
fn tv22_the_opponent_hijacks_your_face_down_cell() {
    let mut s = pos(1);
    square(&mut s, 0, "AS 2S 3S / 4C 5S+v:QD 6H / 7C 8D 9S");
    give(&mut s, 1, &["5H"]);
    fill(&mut s, 10);
    act(&mut s, 1, &place("5H", false, 5));
    assert_eq!(pile_codes(&s, 0, 5), ["5S", "v:QD", "5H"]);
    assert_eq!(lines_of(&s, 0), [2, 0, 0, 1, 0, 0, 0, 0]);
    assert_eq!(s.raw(0), 3);
}

#[test]
fn tv23_jack_on_a_king_and_hidden_views() {
    let mut s = pos(1);
    pile(&mut s, 0, 5, &["5S", "KD"]);
    pile(&mut s, 0, 3, &["3S"]);
    give(&mut s, 1, &["JC"]);
    give(&mut s, 0, &["QD"]);
    fill(&mut s, 10);
    let evs = act(&mut s, 1, &place("JC", false, 5));
    assert_eq!(pile_codes(&s, 0, 5), ["5S", "KD", "v:JC"]);
    let top =
        |v: &pb::View, cell: usize| v.squares[0].cells[cell - 1].pile.last().copied().unwrap();
    let t1 = top(&Carre::view(&s, Viewer::Seat(0)), 5);
    assert_eq!((t1.face_down, t1.placed_by, t1.card), (true, 1, None));
    let t2 = top(&Carre::view(&s, Viewer::Seat(1)), 5);
    assert_eq!(
        (t2.face_down, t2.placed_by, t2.card),
        (true, 1, Some(card_pb(c("JC"))))
    );
    // The event itself is redacted the same way.
    let Some(Ev::CardPlaced(p)) = Carre::redact(&evs[0], Viewer::Seat(0)).unwrap().kind else {
        panic!()
    };
    assert_eq!(p.card, None);
    let Some(Ev::CardPlaced(p)) = Carre::redact(&evs[0], Viewer::Seat(1)).unwrap().kind else {
        panic!()
    };
    assert_eq!(p.card, Some(card_pb(c("JC"))));
    act(&mut s, 0, &place("QD", true, 3));
    let t = top(&Carre::view(&s, Viewer::Seat(1)), 3);
    assert_eq!((t.face_down, t.placed_by, t.card), (true, 0, None));
    assert_eq!(
        top(&Carre::view(&s, Viewer::Seat(0)), 3).card,
        Some(card_pb(c("QD")))
    );
    assert_eq!(top(&Carre::view(&s, Viewer::Spectator), 3).card, None);
    assert_eq!(
        top(&Carre::view(&s, Viewer::Auditor), 3).card,
        Some(card_pb(c("QD")))
    );
}

#[test]
fn tv24_largest_set_of_legal_actions() {
    let mut s = pos(0);
    give(
        &mut s,
        0,
        &["JS", "JH", "JD", "JC", "QS", "QH", "QD", "QC", "KS"],
    );
    square(&mut s, 0, "AS 2S 3S / 4S 5S 6S / 7S 8S 9S");
    square(&mut s, 1, "AH 2H 3H / 4H 5H 6H / 7H 8H 9H");
    fill(&mut s, 10);
    let legal = Carre::legal_actions(&s, 0);
    assert_eq!(legal.len(), 127);
    let count = |f: &dyn Fn(&pb::Action) -> bool| legal.iter().filter(|a| f(a)).count();
    let placed_rank = |a: &pb::Action, r: i32| matches!(&a.kind, Some(pb::action::Kind::Place(p)) if p.card.as_ref().unwrap().rank == r);
    assert_eq!(count(&|a| placed_rank(a, 11)), 72);
    assert_eq!(count(&|a| placed_rank(a, 12)), 36);
    assert_eq!(count(&|a| placed_rank(a, 13)), 9);
    assert_eq!(
        count(&|a| matches!(a.kind, Some(pb::action::Kind::Discard(_)))),
        9
    );
    assert_eq!(legal[0], go_out());
}

#[test]
fn tv25_match_totals_starters_and_tie() {
    let run = |rounds: [(u8, [u8; 2], [u8; 2]); 4]| -> State {
        let mut s = State::new(Config::default());
        s.first_starter = 0;
        assert_eq!([1, 2, 3, 4].map(|r| s.expected_starter(r)), [0, 1, 0, 1]);
        for (i, (went, raw, score)) in rounds.into_iter().enumerate() {
            s.round = i as u8 + 1;
            s.record_round(RoundRec {
                went_out: went,
                raw,
                score,
            });
        }
        assert_eq!(s.phase, Phase::Ending);
        let mut evs = vec![];
        Carre::auto_steps(&mut s, &mut Rng::from_u64(0), &mut evs).unwrap();
        assert!(matches!(evs[0].kind, Some(Ev::MatchEnded(_))));
        assert_eq!(s.phase, Phase::Over);
        s
    };
    let s = run([
        (NONE, [6, 3], [7, 3]),
        (1, [2, 5], [2, 4]),
        (NONE, [10, 0], [15, 0]),
        (NONE, [1, 8], [1, 11]),
    ]);
    let o = Carre::outcome(&s).unwrap();
    assert_eq!(
        (o.scores, o.winners, o.aborted),
        (vec![25, 18], vec![0], false)
    );
    let s = run([
        (NONE, [6, 3], [7, 3]),
        (NONE, [3, 6], [3, 7]),
        (NONE, [5, 5], [5, 5]),
        (NONE, [5, 5], [5, 5]),
    ]);
    let o = Carre::outcome(&s).unwrap();
    assert_eq!(
        (o.scores, o.winners, o.reason.as_str()),
        (vec![20, 20], vec![0, 1], "DRAW")
    );
}
