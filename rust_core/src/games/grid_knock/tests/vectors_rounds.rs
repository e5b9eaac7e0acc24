//! Test vectors TV11-TV17 (docs/rules/grid_knock.md, section 9): forced moves, scoring, rounds,
//! the end of the match and illegal targets.

use super::*;

#[test]
fn tv11_domain_completed_by_someone_else_forced_keep() {
    let mut st = Pos::new(2)
        .opt("target_score", "1000")
        .drow(0, 1, &["1", "2", "3", "4", "5"])
        .drow(0, 2, &["6", "7", "8", "9", "10"])
        .drow(0, 3, &["?5", "11", "12", "0", "-1"])
        .build(1, &[4], &[3, 7, 9]);
    st.val[sl(1, 1, 1) as usize] = 2; // D1 keeps other face-down cards anyway
                                      // P1: draw, discard and reveal (1,3,4).
    play(&mut st, 1, Move::DrawFromPile);
    let evs = play(&mut st, 1, Move::DiscardAndReveal(sl(1, 3, 4)));
    assert!(matches!(
        evs[0],
        Ev::DiscardedAndRevealed { revealed: 5, .. }
    ));
    assert_eq!(
        st.closer,
        u8::MAX,
        "P0 is not tested at the end of P1's turn"
    );
    assert_eq!(st.active, 0);
    play(&mut st, 0, Move::DrawFromPile);
    assert_eq!(st.drawn_card, 7);
    let moves = legal(&st, 0);
    assert_eq!(moves.len(), 15);
    assert!(moves.iter().all(|m| matches!(m, Move::KeepSwap(_))));
    assert_eq!(
        reason(&refused(&st, 0, Move::DiscardAndReveal(sl(0, 1, 1)))),
        "NOT_FACE_DOWN"
    );
    play(&mut st, 0, Move::KeepSwap(sl(0, 1, 1)));
    while st.phase == Phase::Triples {
        play(&mut st, 0, Move::EndTriples);
    }
    assert_eq!(st.closer, 0);
    assert_eq!(st.active, 1);
    let round = st.round;
    simple_turn(&mut st);
    assert_eq!(st.round, round + 1, "P1's final turn ends the round");
}

#[test]
fn tv12_scoring_double_counted_column_no_removal_closer_penalty() {
    let b0 = [[1, 2, 3, 4], [0, 0, 5, -1], [2, 2, 1, 6]];
    let b1 = [[7, 8, -2, 3], [9, 1, 1, 2], [10, 0, 4, 2]];
    let mut p = Pos::new(2);
    for r in 0..3 {
        for c in 0..4 {
            p = p.at(sl(0, r + 1, c + 1), &b0[r as usize][c as usize].to_string());
            p = p.at(sl(1, r + 1, c + 1), &b1[r as usize][c as usize].to_string());
        }
    }
    let mut st = p.build(0, &[5], &[]);
    st.closer = 0;
    let sc = gk::score_round(&st);
    assert_eq!((sc.raw_scores[0], sc.raw_scores[1]), (32, 54));
    assert_eq!((sc.round_scores[0], sc.round_scores[1]), (32, 54));
    st.closer = 1;
    let sc = gk::score_round(&st);
    assert_eq!((sc.round_scores[0], sc.round_scores[1]), (32, 108));
    assert!(sc.closer_doubled);
    // The 2-2-2 triple in D0 row 3 is not removed at the final reveal: scored through apply.
    st.phase = Phase::RoundEndPending;
    st.final_taken = 0b11;
    let mut evs = vec![];
    gk::auto_steps(&mut st, &mut rng(), &mut evs).unwrap();
    assert!(matches!(&evs[0], Ev::RoundScored(s) if s.raw_scores[0] == 32));
    // Ties and non-positive closers.
    let tie = |a: [i8; 2], bb: [i8; 2], closer: u8| {
        let mut p = Pos::new(2);
        for r in 1..=3 {
            for c in 1..=4 {
                p = p.at(sl(0, r, c), "0").at(sl(1, r, c), "0");
            }
        }
        p = p
            .at(sl(0, 1, 1), &a[0].to_string())
            .at(sl(0, 1, 2), &a[1].to_string());
        p = p
            .at(sl(1, 1, 1), &bb[0].to_string())
            .at(sl(1, 1, 2), &bb[1].to_string());
        let mut st = p.build(0, &[], &[]);
        st.closer = closer;
        gk::score_round(&st)
    };
    let sc = tie([10, 10], [10, 10], 0);
    assert_eq!((sc.raw_scores[0], sc.round_scores[0]), (20, 40));
    let sc = tie([-2, -1], [-2, -2], 0);
    assert_eq!(
        (sc.raw_scores[0], sc.raw_scores[1], sc.round_scores[0]),
        (-3, -4, -3)
    );
}

#[test]
fn tv13_final_round_order_and_dealer_rotation() {
    let mut st = Pos::new(4).opt("target_score", "1000").build(1, &[5], &[]);
    st.dealer = 3;
    st.first = 0;
    // P1 has everything face up but one card, which he flips now.
    for &s in &st.cfg.dom[1].clone() {
        st.up |= 1u128 << s;
    }
    let last = sl(1, 2, 2);
    st.up &= !(1u128 << last);
    play(&mut st, 1, Move::DrawFromPile);
    pass_all(&mut st);
    play(&mut st, 1, Move::DiscardAndReveal(last));
    while st.phase == Phase::Triples {
        play(&mut st, 1, Move::EndTriples);
    }
    assert_eq!(st.closer, 1);
    let mut order = vec![];
    let round = st.round;
    while st.round == round {
        order.push(st.active);
        simple_turn(&mut st);
    }
    assert_eq!(order, vec![2, 3, 0]);
    assert_eq!((st.dealer, st.first), (0, 1));
}

#[test]
fn tv14_reshuffle_keeps_the_top_discard() {
    let mut st = Pos::new(3).build(0, &[], &[]);
    st.draw_len = 0;
    st.disc[..5].copy_from_slice(&[5, -2, 9, 0, 7]);
    st.disc_len = 5;
    let s2 = st.clone();
    let evs = GridKnock::decide(&st, 0, &gk::to_action(Move::DrawFromPile), &mut rng()).unwrap();
    let evs: Vec<Ev> = evs.iter().map(|e| gk::pb_to_ev(e).unwrap()).collect();
    match &evs[0] {
        Ev::Reshuffled {
            draw_pile,
            draw_pile_size,
            discard_top,
        } => {
            assert_eq!((*draw_pile_size, *discard_top), (4, 7));
            let mut p = draw_pile[..4].to_vec();
            p.sort();
            assert_eq!(p, vec![-2, 0, 5, 9]);
            assert!(matches!(evs[1], Ev::Drawn { value, .. } if value == draw_pile[3]));
        }
        e => panic!("expected a reshuffle, got {e:?}"),
    }
    for e in &evs {
        gk::apply(&mut st, e).unwrap();
    }
    assert_eq!(discard(&st), vec![7]);
    assert_eq!(st.draw_len, 3);
    let mut st = s2;
    let evs = play(&mut st, 0, Move::TakeFromDiscard);
    assert_eq!(evs, vec![Ev::TookDiscard { seat: 0, value: 7 }]);
    assert_eq!(discard(&st), vec![5, -2, 9, 0]);
    assert_eq!(st.draw_len, 0);
}

fn tv15_state(s0: [&str; 2]) -> State {
    let mut p = Pos::new(3).opt("target_score", "100");
    for o in 0..3 {
        for r in 1..=3 {
            for c in 1..=4 {
                p = p.at(sl(o, r, c), "0");
            }
        }
    }
    p = p
        .at(sl(0, 1, 1), s0[0])
        .at(sl(0, 1, 2), s0[1])
        .at(sl(1, 1, 1), "7");
    let mut st = p.build(0, &[], &[]);
    st.totals[..3].copy_from_slice(&[90, 80, 87]);
    st.closer = 2;
    st.final_taken = 0b111;
    st.phase = Phase::RoundEndPending;
    st
}

#[test]
fn tv15_end_of_game_and_shared_win() {
    let mut st = tv15_state(["12", "1"]);
    let mut evs = vec![];
    gk::auto_steps(&mut st, &mut rng(), &mut evs).unwrap();
    assert_eq!(&st.totals[..3], &[103, 87, 87]);
    let o = GridKnock::outcome(&st).expect("over");
    assert_eq!(o.winners, vec![1, 2]);
    assert_eq!(o.scores, vec![103, 87, 87]);
    assert!(o.lower_is_better && !o.aborted);
    // 9, 7, 0: nobody reaches 100, a new round is dealt.
    let mut st = tv15_state(["8", "1"]);
    let mut evs = vec![];
    // A full deck is needed for the next deal: rebuild the piles from what is missing.
    st.up = st.filled;
    let mut st2 = st.clone();
    st2.disc_len = 0;
    gk::auto_steps(&mut st2, &mut rng(), &mut evs).unwrap_or(());
    assert_eq!(&st2.totals[..3], &[99, 87, 87]);
    assert!(GridKnock::outcome(&st2).is_none());
    assert_eq!(st2.round, 2);
    let _ = st;
}

#[test]
fn tv16_empty_domain_passes_and_closes() {
    let mut p = Pos::new(3).opt("target_score", "1000");
    for r in 1..=3 {
        p = p.at(sl(2, r, 4), "__");
        for c in 1..=4 {
            p = p.at(sl(1, r, c), "__");
        }
    }
    let mut st = p.build(0, &[5], &[]);
    assert_eq!(st.cnt(1), 0);
    st.phase = Phase::TurnEndPending;
    let mut evs = vec![];
    gk::auto_steps(&mut st, &mut rng(), &mut evs).unwrap();
    assert!(evs.contains(&Ev::EmptyPassed { seat: 1 }));
    assert_eq!(st.closer, 1);
    assert_eq!(st.active, 2);
    simple_turn(&mut st);
    assert_eq!(st.active, 0);
    let before = st.round;
    let mut all = vec![];
    // P0's final turn, then scoring.
    let a = st.active;
    all.extend(play(&mut st, a, Move::DrawFromPile));
    pass_all(&mut st);
    let mv = legal(&st, 0)
        .into_iter()
        .find(|m| matches!(m, Move::DiscardAndReveal(_)))
        .unwrap();
    all.extend(play(&mut st, 0, mv));
    while st.phase == Phase::Triples {
        all.extend(play(&mut st, 0, Move::EndTriples));
    }
    assert_eq!(st.round, before + 1);
    let sc = all
        .iter()
        .find_map(|e| {
            if let Ev::RoundScored(s) = e {
                Some(s.clone())
            } else {
                None
            }
        })
        .unwrap();
    assert_eq!(
        (
            sc.raw_scores[1],
            sc.round_scores[1],
            sc.closer,
            sc.closer_doubled
        ),
        (0, 0, 1, false)
    );
}

#[test]
fn tv17_illegal_targets() {
    let mut st = Pos::new(3).at(sl(0, 1, 1), "__").build(0, &[5], &[3]);
    play(&mut st, 0, Move::DrawFromPile);
    pass_all(&mut st);
    assert_eq!(
        reason(&refused(&st, 0, Move::KeepSwap(sl(0, 1, 1)))),
        "EMPTY_SLOT"
    );
    assert_eq!(
        reason(&refused(&st, 0, Move::KeepSwap(sl(2, 1, 1)))),
        "NOT_IN_DOMAIN"
    );
    // reveal_initial outside the own block.
    let cfg = GridKnock::checked_config(3, &Options::new()).unwrap();
    let init = GridKnock::initial(&cfg);
    let mut st0 = init.clone();
    for e in GridKnock::start(&init, &mut rng()).unwrap() {
        GridKnock::evolve(&mut st0, &e).unwrap();
    }
    assert_eq!(
        reason(&refused(&st0, 0, Move::RevealInitial(sl(1, 1, 4)))),
        "NOT_OWN_BLOCK"
    );
    // Triples: a face-down cell, and cells not consecutive in the compressed line.
    let mut st = Pos::new(3)
        .drow(0, 1, &["4", "4", "?4", "4", "9"])
        .build(0, &[5], &[]);
    st.phase = Phase::Triples;
    st.tri_owner = 0;
    st.tri_ctx = gk::Ctx::Reveal;
    let cells: Vec<u8> = (0..5).map(|d| dc(&st, 0, 1, d)).collect();
    let d = |k: usize| cells[k];
    assert_eq!(
        reason(&refused(&st, 0, Move::DiscardTriple([d(0), d(1), d(2)]))),
        "NOT_A_TRIPLE"
    );
    st.up |= 1u128 << d(2);
    st.val[d(2) as usize] = 7;
    assert_eq!(
        reason(&refused(&st, 0, Move::DiscardTriple([d(0), d(1), d(3)]))),
        "NOT_A_TRIPLE"
    );
}
