//! Test vectors of spec section 9, TV1 to TV13: the deal and a turn's moves and powers.

use super::*;

/// TV1 as an injected deal event: 44 filler cards complete the deck.
pub(super) fn tv1_state() -> State {
    let mut s = RatATatCat::initial(&cfg(2));
    let mut rest: Vec<u8> = full_deck().to_vec();
    for c in [3, 7, 0, 9, D2, 5, 1, 8, PK, 4] {
        let i = rest.iter().position(|&x| x == c).unwrap();
        rest.remove(i);
    }
    // After the PK went back and the pile was reshuffled, the top is 4.
    let mut draw = vec![4u8];
    draw.extend(rest.iter().copied());
    draw.push(PK);
    let top = draw.remove(0);
    let dealt = ev(E::RoundDealt(pb::RoundDealt {
        round: 1,
        dealer: 1,
        first_player: 0,
        rows: vec![
            SeatRow {
                seat: 0,
                cards: [3, 0, D2, 1].map(pbc).into(),
            },
            SeatRow {
                seat: 1,
                cards: [7, 9, 5, 8].map(pbc).into(),
            },
        ],
        flipped_powers: cards(&[PK]),
        discard_top: pbc(top),
        draw_pile_size: draw.len() as u32,
        draw_pile: pile(&draw),
    }));
    RatATatCat::evolve(&mut s, &dealt).unwrap();
    for (p, a, b) in [(0u32, 3u8, 1u8), (1, 7, 8)] {
        let e = ev(E::InitialPeek(pb::InitialPeek {
            seat: p,
            slot1: pbc(a),
            slot4: pbc(b),
        }));
        RatATatCat::evolve(&mut s, &e).unwrap();
    }
    RatATatCat::check_invariants(&s).unwrap();
    s
}

#[test]
fn tv01_deal_and_initial_state() {
    let s = tv1_state();
    assert_eq!(s.rows[0], [3, 0, D2, 1]);
    assert_eq!(s.rows[1], [7, 9, 5, 8]);
    assert_eq!(discard_pile(&s), vec![4]);
    assert_eq!(s.draw.len(), 45);
    assert_eq!(s.current, 0);
    assert_eq!(s.phase, Phase::TurnStart);
    assert_eq!(legal(&s).len(), 5);
    // Initial peek knowledge: P0 knows slots 1 and 4 only.
    assert_eq!(s.known[0], bit(0, 0) | bit(0, 3));
    assert_eq!(s.known[1], bit(1, 0) | bit(1, 3));
    // The deal the engine makes itself follows the same slot order (k-th card to slot k/A).
    let mut t = RatATatCat::initial(&cfg_with(2, &[("first_dealer", "1")]));
    let evs = RatATatCat::start(&t, &mut Rng::from_u64(3)).unwrap();
    let Some(E::RoundDealt(d)) = &evs[0].kind else {
        panic!()
    };
    assert_eq!((d.dealer, d.first_player, d.draw_pile_size), (1, 0, 45));
    assert_eq!(evs.len(), 3);
    for e in &evs {
        RatATatCat::evolve(&mut t, e).unwrap();
    }
    RatATatCat::check_invariants(&t).unwrap();
}

#[test]
fn tv01_engine_deal_order_and_flip() {
    let mut deck = [0u8; DECK];
    let head = [3, 7, 0, 9, D2, 5, 1, 8, PK];
    let mut rest = full_deck().to_vec();
    for c in head {
        let i = rest.iter().position(|&x| x == c).unwrap();
        rest.remove(i);
    }
    deck[..9].copy_from_slice(&head);
    deck[9..].copy_from_slice(&rest);
    let mut s = RatATatCat::initial(&cfg(2));
    let mut events = vec![];
    let mut out = Out {
        s: &mut s,
        events: &mut events,
    };
    out.deal_deck(1, deck, &mut Rng::from_u64(2)).unwrap();
    assert_eq!(out.s.rows[0], [3, 0, D2, 1]);
    assert_eq!(out.s.rows[1], [7, 9, 5, 8]);
    let Some(E::RoundDealt(d)) = &out.events[0].kind else {
        panic!()
    };
    assert_eq!(d.flipped_powers, cards(&[PK]), "the flipped PK goes back");
    assert!(from_pbc(d.discard_top).is_some_and(|c| c <= 9));
    assert_eq!((d.draw_pile_size, out.s.current), (45, 0));
    RatATatCat::check_invariants(out.s).unwrap();
}

#[test]
fn tv02_take_discard_replacing_dealt_power_blocks_next_player() {
    let mut s = tv1_state();
    play(&mut s, take(3));
    assert_eq!(s.rows[0], [3, 0, 4, 1]);
    assert_eq!(discard_pile(&s), vec![D2]);
    assert_eq!(s.phase, Phase::EndOfTurn);
    assert_eq!(legal(&s), vec![call(), end()]);
    play(&mut s, end());
    assert_eq!((s.current, s.phase), (1, Phase::TurnStart));
    assert_eq!(legal(&s), vec![draw()]);
    assert_eq!(reason(refused(&s, take(2))), "DISCARD_IS_POWER");
}

#[test]
fn tv03_draw_number_and_replace() {
    let mut s = State::test_position(
        cfg(2),
        &[[3, 0, 4, 1], [7, 9, 5, 8]],
        &[2, 6, 6],
        &[D2],
        0,
        1,
    );
    let evs = play(&mut s, draw());
    let hidden = RatATatCat::redact(&evs[0], Viewer::Seat(0)).unwrap();
    let Some(E::CardDrawn(d)) = hidden.kind else {
        panic!()
    };
    assert_eq!(d.card, CARD_HIDDEN_NUMBER);
    assert_eq!(s.phase, Phase::Drawn);
    assert_eq!(legal(&s).len(), 5);
    assert!(!legal(&s).contains(&power()));
    play(&mut s, replace(2));
    assert_eq!(s.rows[1], [7, 2, 5, 8]);
    assert_eq!(discard_pile(&s), vec![9, D2]);
    assert_eq!(s.phase, Phase::EndOfTurn);
}

#[test]
fn tv04_drawn_power_cannot_go_into_row() {
    let mut s = State::test_position(
        cfg(2),
        &[[3, 0, 4, 1], [7, 2, 5, 8]],
        &[PK, 6, 6],
        &[9, D2],
        1,
        0,
    );
    let evs = play(&mut s, draw());
    let seen = RatATatCat::redact(&evs[0], Viewer::Seat(1)).unwrap();
    let Some(E::CardDrawn(d)) = seen.kind else {
        panic!()
    };
    assert_eq!(d.card, pbc(PK), "a power card is shown to all");
    assert_eq!(legal(&s), vec![power(), discard()]);
    assert_eq!(reason(refused(&s, replace(1))), "POWER_CARD_CANNOT_BE_KEPT");
}

#[test]
fn tv05_peek() {
    let mut s = State::test_position(
        cfg(2),
        &[[3, 0, 4, 1], [7, 2, 5, 8]],
        &[PK, 6, 6],
        &[9, D2],
        1,
        0,
    );
    play(&mut s, draw());
    play(&mut s, power());
    assert_eq!(discard_pile(&s), vec![PK, 9, D2]);
    assert_eq!(s.phase, Phase::Peek);
    assert_eq!(legal(&s), (1..=4).map(peek).collect::<Vec<_>>());
    let evs = play(&mut s, peek(2));
    let Some(E::CardPeeked(mine)) = RatATatCat::redact(&evs[0], Viewer::Seat(0)).unwrap().kind
    else {
        panic!()
    };
    assert_eq!((mine.slot, mine.card), (2, pbc(0)));
    let Some(E::CardPeeked(theirs)) = RatATatCat::redact(&evs[0], Viewer::Seat(1)).unwrap().kind
    else {
        panic!()
    };
    assert_eq!(
        (theirs.slot, theirs.card),
        (2, 0),
        "others learn the slot, not the value"
    );
    assert_eq!(s.rows[0], [3, 0, 4, 1]);
    assert_eq!(s.phase, Phase::EndOfTurn);
    assert!(s.known[0] & bit(0, 1) != 0 && s.known[1] & bit(0, 1) == 0);
}

pub(super) fn tv6_swap_phase() -> State {
    let mut s = State::test_position(
        cfg(3),
        &[[1, 6, 2, 9], [0, 3, 4, 4], [5, PK, 7, 0]],
        &[SW, 8, 6],
        &[3],
        2,
        0,
    );
    play(&mut s, draw());
    play(&mut s, power());
    assert_eq!(s.discard.top(), Some(SW));
    assert_eq!(s.phase, Phase::Swap);
    s
}

#[test]
fn tv06_swap() {
    let mut s = tv6_swap_phase();
    assert_eq!(legal(&s).len(), 33);
    assert_eq!(reason(refused(&s, swap(1, 0, 2))), "SWAP_WITH_SELF");
    assert!(matches!(
        refused(&s, swap(1, 1, 5)),
        CoreError::Malformed(_)
    ));
    let evs = play(&mut s, swap(4, 2, 4));
    assert_eq!(s.rows[0], [1, 6, 2, 0]);
    assert_eq!(s.rows[2], [5, PK, 7, 9]);
    assert_eq!(s.rows[1], [0, 3, 4, 4]);
    assert_eq!(s.phase, Phase::EndOfTurn);
    // No value in the event, for anybody.
    assert_eq!(RatATatCat::event_type(&evs[0]), "cards_swapped");
}

#[test]
fn tv07_declining_a_swap() {
    let mut s = tv6_swap_phase();
    play(&mut s, skip());
    assert_eq!(s.rows[0], [1, 6, 2, 9]);
    assert_eq!(s.discard.top(), Some(SW));
    assert_eq!(s.phase, Phase::EndOfTurn);
}

fn d2_start(draw_pile: &[u8]) -> State {
    State::test_position(cfg(2), &[[8, 1, 3, 6], [2, 2, 7, 0]], draw_pile, &[3], 1, 0)
}

#[test]
fn tv08_draw2_discard_first_keep_second() {
    let mut s = d2_start(&[D2, 9, 4, 7, 5]);
    play(&mut s, draw());
    assert_eq!(legal(&s), vec![power(), discard()]);
    play(&mut s, power());
    assert_eq!((s.pending, s.phase), (9, Phase::Draw2First));
    assert_eq!(discard_pile(&s), vec![D2, 3]);
    assert_eq!(legal(&s).len(), 5);
    play(&mut s, discard());
    assert_eq!(discard_pile(&s), vec![9, D2, 3]);
    assert_eq!((s.pending, s.phase), (4, Phase::Draw2Second));
    play(&mut s, replace(1));
    assert_eq!(s.rows[0], [4, 1, 3, 6]);
    assert_eq!(s.row_score(0), 14);
    assert_eq!(discard_pile(&s), vec![8, 9, D2, 3]);
    assert_eq!(s.draw.top(), Some(7));
    assert_eq!(s.phase, Phase::EndOfTurn);
}

#[test]
fn tv09_draw2_keeping_first_forfeits_second() {
    let mut s = d2_start(&[D2, 0, 4, 5]);
    play(&mut s, draw());
    play(&mut s, power());
    assert_eq!((s.pending, s.phase), (0, Phase::Draw2First));
    play(&mut s, replace(1));
    assert_eq!(s.rows[0], [0, 1, 3, 6]);
    assert_eq!(discard_pile(&s), vec![8, D2, 3]);
    assert_eq!(s.phase, Phase::EndOfTurn);
    assert_eq!(s.draw.top(), Some(4));
}

#[test]
fn tv10_draw2_as_card_one_restarts() {
    let start = || {
        let mut s = d2_start(&[D2, D2, 9, 6, 2, 5]);
        play(&mut s, draw());
        play(&mut s, power());
        assert_eq!(discard_pile(&s), vec![D2, 3]);
        assert_eq!((s.pending, s.phase), (D2, Phase::Draw2First));
        s
    };
    // Branch A
    let mut s = start();
    play(&mut s, power());
    assert_eq!(discard_pile(&s), vec![D2, D2, 3]);
    assert_eq!((s.pending, s.phase), (9, Phase::Draw2First));
    play(&mut s, discard());
    assert_eq!(discard_pile(&s), vec![9, D2, D2, 3]);
    assert_eq!((s.pending, s.phase), (6, Phase::Draw2Second));
    play(&mut s, discard());
    assert_eq!(discard_pile(&s), vec![6, 9, D2, D2, 3]);
    assert_eq!(s.phase, Phase::EndOfTurn);
    assert_eq!(s.draw.top(), Some(2));
    assert_eq!(s.rows[0], [8, 1, 3, 6]);
    // Branch B
    let mut s = start();
    play(&mut s, discard());
    assert_eq!(discard_pile(&s), vec![D2, D2, 3]);
    assert_eq!((s.pending, s.phase), (9, Phase::Draw2Second));
    play(&mut s, discard());
    assert_eq!(discard_pile(&s), vec![9, D2, D2, 3]);
    assert_eq!(s.phase, Phase::EndOfTurn);
    assert_eq!(s.draw.top(), Some(6));
}

#[test]
fn tv11_draw2_as_card_two_restarts() {
    let mut s = d2_start(&[D2, 7, D2, 1, 5, 4]);
    play(&mut s, draw());
    play(&mut s, power());
    assert_eq!((s.pending, s.phase), (7, Phase::Draw2First));
    play(&mut s, discard());
    assert_eq!((s.pending, s.phase), (D2, Phase::Draw2Second));
    assert_eq!(discard_pile(&s), vec![7, D2, 3]);
    play(&mut s, power());
    assert_eq!(discard_pile(&s), vec![D2, 7, D2, 3]);
    assert_eq!((s.pending, s.phase), (1, Phase::Draw2First));
    play(&mut s, replace(1));
    assert_eq!(s.rows[0], [1, 1, 3, 6]);
    assert_eq!(discard_pile(&s), vec![8, D2, 7, D2, 3]);
    assert_eq!(s.phase, Phase::EndOfTurn);
    assert_eq!(s.draw.top(), Some(5));
}

#[test]
fn tv12_swap_inside_draw2_forfeits_remaining_draw() {
    let start = || {
        let mut s = d2_start(&[D2, SW, 0, 5]);
        play(&mut s, draw());
        play(&mut s, power());
        assert_eq!((s.pending, s.phase), (SW, Phase::Draw2First));
        assert_eq!(legal(&s), vec![power(), discard()]);
        s
    };
    let mut s = start();
    play(&mut s, power());
    assert_eq!(discard_pile(&s), vec![SW, D2, 3]);
    assert_eq!(s.phase, Phase::Swap);
    assert_eq!(legal(&s).len(), 17);
    play(&mut s, skip());
    assert_eq!(s.phase, Phase::EndOfTurn);
    assert_eq!(s.draw.top(), Some(0));
    let mut s = start();
    play(&mut s, discard());
    assert_eq!(discard_pile(&s), vec![SW, D2, 3]);
    assert_eq!((s.pending, s.phase), (0, Phase::Draw2Second));
    play(&mut s, replace(1));
    assert_eq!(s.rows[0], [0, 1, 3, 6]);
    assert_eq!(discard_pile(&s), vec![8, SW, D2, 3]);
}

#[test]
fn tv13_peek_inside_draw2() {
    let mut s = d2_start(&[D2, PK, 5, 4]);
    play(&mut s, draw());
    play(&mut s, power());
    play(&mut s, power());
    assert_eq!(s.phase, Phase::Peek);
    let evs = play(&mut s, peek(3));
    let Some(E::CardPeeked(p)) = &evs[0].kind else {
        panic!()
    };
    assert_eq!(p.card, pbc(3));
    assert_eq!(s.phase, Phase::EndOfTurn);
    assert_eq!(s.draw.top(), Some(5));
}
