//! Test vectors TV1-TV6 (docs/rules/grid_knock.md, section 9): domains and triples.

use super::*;

#[test]
fn tv01_domain_mapping() {
    let c3 = GridKnock::checked_config(3, &Options::new()).unwrap();
    let st = GridKnock::initial(&c3);
    for r in 1..=3 {
        assert_eq!(dc(&st, 0, r, 0), sl(1, r, 4));
        assert_eq!(dc(&st, 1, r, 0), sl(2, r, 4));
        assert_eq!(dc(&st, 2, r, 0), sl(0, r, 4));
        for d in 1..=4 {
            assert_eq!(dc(&st, 0, r, d), sl(0, r, d));
        }
    }
    let s = sl(0, 2, 4);
    assert!(
        c3.dom_mask[0] >> s & 1 == 1
            && c3.dom_mask[2] >> s & 1 == 1
            && c3.dom_mask[1] >> s & 1 == 0
    );
    let s = sl(0, 2, 3);
    assert!(
        c3.dom_mask[0] >> s & 1 == 1
            && c3.dom_mask[1] >> s & 1 == 0
            && c3.dom_mask[2] >> s & 1 == 0
    );
    assert_eq!(gk::slot_domains(3, sl(0, 2, 4)), (0, Some(2)));
    assert_eq!(gk::slot_domains(3, sl(0, 2, 3)), (0, None));
    let c2 = GridKnock::checked_config(2, &Options::new()).unwrap();
    let st2 = GridKnock::initial(&c2);
    for r in 1..=3 {
        assert_eq!(dc(&st2, 0, r, 0), sl(1, r, 4));
        assert_eq!(dc(&st2, 1, r, 0), sl(0, r, 4));
        for d in 1..=4 {
            assert_eq!(dc(&st2, 0, r, d), sl(0, r, d));
            assert_eq!(dc(&st2, 1, r, d), sl(1, r, d));
        }
    }
}

#[test]
fn tv02_cross_boundary_triple_and_no_triple_across_domain_edge() {
    let mut st = Pos::new(3)
        .at(sl(1, 2, 1), "?3")
        .at(sl(1, 2, 2), "?3")
        .at(sl(1, 2, 3), "?8")
        .at(sl(1, 2, 4), "7")
        .at(sl(0, 2, 1), "7")
        .at(sl(0, 2, 2), "7")
        .at(sl(0, 2, 3), "?1")
        .at(sl(0, 2, 4), "?2")
        .at(sl(0, 1, 1), "?4")
        .at(sl(0, 1, 2), "9")
        .at(sl(0, 1, 3), "5")
        .at(sl(0, 1, 4), "5")
        .at(sl(2, 1, 1), "5")
        .at(sl(2, 1, 2), "?6")
        .at(sl(2, 1, 3), "1")
        .at(sl(2, 1, 4), "0")
        .build(0, &[9], &[]);
    let t0 = gk::triples(&st, 0);
    assert_eq!(
        &t0.cells[..t0.len],
        &[[sl(1, 2, 4), sl(0, 2, 1), sl(0, 2, 2)]]
    );
    assert_eq!(gk::triples(&st, 1).len, 0);
    assert_eq!(
        gk::triples(&st, 2).len,
        0,
        "5 5 | 5 across the D0/D2 edge is no triple"
    );
    // P0 discards it in a window of his.
    st.phase = Phase::Triples;
    st.tri_owner = 0;
    st.tri_ctx = gk::Ctx::Reveal;
    play(
        &mut st,
        0,
        Move::DiscardTriple([sl(0, 2, 2), sl(1, 2, 4), sl(0, 2, 1)]),
    );
    assert_eq!((st.cnt(0), st.cnt(1), st.cnt(2)), (12, 14, 15));
    assert_eq!(discard(&st), vec![9, 7, 7, 7]);
}

pub(super) fn tv03_pos() -> State {
    Pos::new(3)
        .drow(0, 1, &["7", "?1", "?12", "9", "?3"])
        .drow(0, 2, &["0", "5", "4", "?4", "2"])
        .drow(0, 3, &["-1", "8", "4", "10", "?4"])
        .build(0, &[7, 8, 4], &[])
}

#[test]
fn tv03_take_discard_keep_column_triple_then_w_on_top() {
    let mut st = tv03_pos();
    let evs = play(&mut st, 0, Move::TakeFromDiscard);
    assert_eq!(evs, vec![Ev::TookDiscard { seat: 0, value: 4 }]);
    assert_eq!(
        st.phase,
        Phase::SwapDiscard,
        "no knock window after take_from_discard"
    );
    assert_eq!(discard(&st), vec![7, 8]);
    assert_eq!(
        reason(&refused(&st, 0, Move::DiscardAndReveal(sl(0, 1, 1)))),
        "MUST_SWAP"
    );
    assert!(legal(&st, 0).iter().all(|m| matches!(m, Move::KeepSwap(_))));
    play(&mut st, 0, Move::KeepSwap(sl(0, 1, 2)));
    assert_eq!(st.exchanged_card, 12);
    assert_eq!(
        triple_moves(&st, 0),
        vec![[sl(0, 1, 2), sl(0, 2, 2), sl(0, 3, 2)]]
    );
    play(
        &mut st,
        0,
        Move::DiscardTriple([sl(0, 1, 2), sl(0, 2, 2), sl(0, 3, 2)]),
    );
    assert_eq!(discard(&st), vec![7, 8, 4, 4, 4, 12]);
    assert_eq!(st.cnt(0), 12);
    assert_eq!(st.active, 1, "turn over");
    gk::invariants(&st).unwrap();
}

#[test]
fn tv04_discard_and_reveal_triple_goes_on_top_of_x() {
    let pos = || {
        Pos::new(3)
            .drow(0, 1, &["3", "?5", "1", "1", "?2"])
            .drow(0, 2, &["?8", "2", "0", "7", "9"])
            .drow(0, 3, &["1", "?0", "6", "6", "?6"])
            .build(0, &[3], &[10])
    };
    let mut st = pos();
    let evs = play(&mut st, 0, Move::DrawFromPile);
    assert_eq!(
        evs,
        vec![Ev::Drawn {
            seat: 0,
            value: 10,
            knock_eligible: 0b110
        }]
    );
    pass_all(&mut st);
    play(&mut st, 0, Move::DiscardAndReveal(sl(0, 3, 4)));
    assert_eq!(discard(&st), vec![3, 10]);
    assert_eq!(
        triple_moves(&st, 0),
        vec![[sl(0, 3, 2), sl(0, 3, 3), sl(0, 3, 4)]]
    );
    play(
        &mut st,
        0,
        Move::DiscardTriple([sl(0, 3, 2), sl(0, 3, 3), sl(0, 3, 4)]),
    );
    assert_eq!(discard(&st), vec![3, 10, 6, 6, 6]);
    assert_eq!((st.cnt(0), st.cnt(2)), (12, 14));
    gk::invariants(&st).unwrap();
    // Variant: end_triples keeps the triple on the table.
    let mut st = pos();
    play(&mut st, 0, Move::DrawFromPile);
    pass_all(&mut st);
    play(&mut st, 0, Move::DiscardAndReveal(sl(0, 3, 4)));
    play(&mut st, 0, Move::EndTriples);
    assert_eq!(discard(&st), vec![3, 10]);
    assert_eq!(gk::triples(&st, 0).len, 1);
}

fn tv05_pos() -> State {
    Pos::new(3)
        .at(sl(1, 1, 4), "2")
        .at(sl(1, 2, 4), "6")
        .at(sl(1, 3, 4), "?7")
        .at(sl(0, 1, 1), "0")
        .at(sl(0, 1, 2), "6")
        .at(sl(0, 1, 3), "9")
        .at(sl(0, 1, 4), "?5")
        .at(sl(0, 2, 1), "6")
        .at(sl(0, 2, 2), "?3")
        .at(sl(0, 2, 3), "6")
        .at(sl(0, 2, 4), "11")
        .at(sl(0, 3, 1), "1")
        .at(sl(0, 3, 2), "6")
        .at(sl(0, 3, 3), "-1")
        .at(sl(0, 3, 4), "12")
        .build(0, &[5], &[6])
}

fn tv05_after_keep() -> State {
    let mut st = tv05_pos();
    assert_eq!(gk::triples(&st, 0).len, 0);
    play(&mut st, 0, Move::DrawFromPile);
    pass_all(&mut st);
    play(&mut st, 0, Move::KeepSwap(sl(0, 2, 2)));
    assert_eq!(st.exchanged_card, 3);
    st
}

#[test]
fn tv05_row_and_column_through_one_card_then_chain() {
    let st = tv05_after_keep();
    let row_a = [sl(1, 2, 4), sl(0, 2, 1), sl(0, 2, 2)];
    let row_b = [sl(0, 2, 1), sl(0, 2, 2), sl(0, 2, 3)];
    let col = [sl(0, 1, 2), sl(0, 2, 2), sl(0, 3, 2)];
    assert_eq!(
        triple_moves(&st, 0),
        vec![sorted(row_a), sorted(row_b), sorted(col)]
    );
    // Four cells, or both lines at once: illegal.
    let four = pb::Action {
        kind: Some(pb::action::Kind::DiscardTriple(pb::DiscardTriple {
            cells: [sl(1, 2, 4), sl(0, 2, 1), sl(0, 2, 2), sl(0, 2, 3)]
                .iter()
                .map(|&s| pb::Slot {
                    owner: (s / 12) as u32,
                    row: (s % 12 / 4 + 1) as u32,
                    col: (s % 4 + 1) as u32,
                })
                .collect(),
        })),
    };
    assert_eq!(
        reason(&GridKnock::decide(&st, 0, &four, &mut rng()).unwrap_err()),
        "NOT_A_TRIPLE"
    );
    // Path A: column first, then the chain created by the gap.
    let mut a = st.clone();
    play(&mut a, 0, Move::DiscardTriple(col));
    let chain = [sl(1, 2, 4), sl(0, 2, 1), sl(0, 2, 3)];
    assert_eq!(triple_moves(&a, 0), vec![sorted(chain)]);
    play(&mut a, 0, Move::DiscardTriple(chain));
    assert_eq!(discard(&a), vec![5, 6, 6, 6, 6, 6, 6, 3]);
    assert_eq!(a.cnt(0), 9);
    assert!(
        a.filled >> sl(1, 2, 4) & 1 == 0,
        "(1,2,4) is empty in D1 too"
    );
    // Path B: row d1-d3 first.
    let mut b = st.clone();
    play(&mut b, 0, Move::DiscardTriple(row_b));
    assert_eq!(discard(&b), vec![5, 6, 6, 6, 3]);
    assert_eq!(b.cnt(0), 12);
    // Path C: row d0-d2 first.
    let mut c = st.clone();
    play(&mut c, 0, Move::DiscardTriple(row_a));
    assert_eq!(discard(&c), vec![5, 6, 6, 6, 3]);
    assert_eq!(c.cnt(0), 12);
    gk::invariants(&a).unwrap();
}

#[test]
fn tv06_four_identical_cards_in_a_row() {
    let mut st = Pos::new(3)
        .drow(0, 1, &["3", "3", "?8", "3", "5"])
        .drow(0, 2, &["0", "1", "2", "4", "?7"])
        .drow(0, 3, &["?9", "10", "11", "-1", "12"])
        .build(0, &[6], &[3]);
    play(&mut st, 0, Move::DrawFromPile);
    pass_all(&mut st);
    play(&mut st, 0, Move::KeepSwap(sl(0, 1, 2)));
    assert_eq!(st.exchanged_card, 8);
    let t1 = [sl(1, 1, 4), sl(0, 1, 1), sl(0, 1, 2)];
    let t2 = [sl(0, 1, 1), sl(0, 1, 2), sl(0, 1, 3)];
    assert_eq!(triple_moves(&st, 0), vec![sorted(t1), sorted(t2)]);
    let mut b = st.clone();
    play(&mut st, 0, Move::DiscardTriple(t2));
    assert_eq!(discard(&st), vec![6, 3, 3, 3, 8]);
    play(&mut b, 0, Move::DiscardTriple(t1));
    assert!(b.filled >> sl(1, 1, 4) & 1 == 0 && b.filled >> sl(0, 1, 3) & 1 == 1);
}
