//! Test vectors of spec section 9, TV14 to TV22: the call, the reveal, reshuffles, scoring and
//! the end of the match.

use super::turn_vectors::tv1_state;
use super::*;

/// A full-deck 3- or 4-seat state dealt by the engine with a fixed dealer.
pub(super) fn dealt(n: u32, dealer: u32, opts: &[(&str, &str)]) -> State {
    let d = dealer.to_string();
    let mut o = vec![("first_dealer", d.as_str())];
    o.extend_from_slice(opts);
    let mut s = RatATatCat::initial(&cfg_with(n, &o));
    for e in RatATatCat::start(&s, &mut Rng::from_u64(11)).unwrap() {
        RatATatCat::evolve(&mut s, &e).unwrap();
    }
    s
}

/// A quiet turn: draw, discard what was drawn (using nothing), so the turn ends at once.
pub(super) fn quiet_turn(s: &mut State) {
    // Make the top of the draw pile a number for a predictable turn.
    let top = s.draw.top().unwrap();
    if is_power(top) {
        let n = s.draw.len();
        let i = (0..n).rev().find(|&i| !is_power(s.draw.c[i])).unwrap();
        s.draw.c.swap(i, n - 1);
    }
    play(s, draw());
    play(s, discard());
    assert_eq!(s.phase, Phase::EndOfTurn);
}

#[test]
fn tv14_call_and_final_round() {
    let mut s = dealt(3, 2, &[]);
    assert_eq!(s.current, 0);
    quiet_turn(&mut s);
    play(&mut s, end());
    assert_eq!(s.current, 1);
    quiet_turn(&mut s);
    assert_eq!(legal(&s), vec![call(), end()]);
    play(&mut s, call());
    assert_eq!((s.caller, s.current, s.phase), (1, 2, Phase::TurnStart));
    quiet_turn(&mut s);
    assert_eq!(legal(&s), vec![end()]);
    assert_eq!(reason(refused(&s, call())), "ALREADY_CALLED");
    play(&mut s, end());
    assert_eq!(s.current, 0);
    quiet_turn(&mut s);
    let evs = play(&mut s, end());
    let kinds: Vec<_> = evs.iter().map(RatATatCat::event_type).collect();
    assert_eq!(&kinds[..2], &["turn_ended", "round_revealed"]);
    assert!(kinds.contains(&"round_scored"));
    let Some(E::TurnEnded(t)) = &evs[0].kind else {
        panic!()
    };
    assert!(t.round_over && t.next_seat == 1);
    // The next round is dealt at once: P0 deals, P1 starts.
    assert_eq!((s.round, s.dealer, s.current), (2, 0, 1));
}

#[test]
fn tv15_call_on_first_turn_round_length() {
    let mut s = dealt(4, 0, &[]);
    assert_eq!(s.current, 1);
    quiet_turn(&mut s);
    assert!(legal(&s).contains(&call()));
    play(&mut s, call());
    let mut turns = 1;
    for expect in [2u8, 3, 0] {
        assert_eq!(s.current, expect);
        quiet_turn(&mut s);
        play(&mut s, end());
        turns += 1;
    }
    assert_eq!(turns, 4);
    assert_eq!(s.round, 2, "the round ended after exactly four turns");
}

#[test]
fn tv16_swap_against_caller_then_scoring() {
    // P0 has called; P1 takes its final turn.
    let mut s = State::test_position(
        cfg(2),
        &[[0, 0, 1, 2], [6, 9, 4, 3]],
        &[SW, 5, 5, 5],
        &[7],
        1,
        1,
    );
    s.caller = 0;
    play(&mut s, draw());
    play(&mut s, power());
    play(&mut s, swap(2, 0, 1));
    assert_eq!(s.rows[1], [6, 0, 4, 3]);
    assert_eq!(s.rows[0], [9, 0, 1, 2]);
    let evs = play(&mut s, end());
    let scored = evs
        .iter()
        .find_map(|e| match &e.kind {
            Some(E::RoundScored(r)) => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        scored
            .scores
            .iter()
            .map(|x| x.round_score)
            .collect::<Vec<_>>(),
        vec![12, 13]
    );
    assert!(!evs.iter().any(|e| matches!(e.kind, Some(E::RevealDraw(_)))));
}

#[test]
fn tv17_reveal_with_power_replacement_and_redraws() {
    let rows = [[3, 0, D2, 1], [0, 2, PK, 1], [SW, 4, 4, PK]];
    let mut s = State::test_position(cfg(3), &rows, &[D2, 5, 9, SW, 6, 2, 8, 4, 4], &[7, 3], 2, 0);
    s.caller = 1;
    s.phase = Phase::EndOfTurn;
    // P0 ends the last turn before the caller: reveal.
    let evs = play(&mut s, end());
    let draws: Vec<(u32, u32, u8)> = evs
        .iter()
        .filter_map(|e| match &e.kind {
            Some(E::RevealDraw(d)) => Some((d.seat, d.slot, from_pbc(d.card).unwrap())),
            _ => None,
        })
        .collect();
    assert_eq!(
        draws,
        vec![
            (1, 3, D2),
            (1, 3, 5),
            (2, 1, 9),
            (2, 4, SW),
            (2, 4, 6),
            (0, 3, 2)
        ]
    );
    assert_eq!(s.last_rows[0], [3, 0, 2, 1]);
    assert_eq!(s.last_rows[1], [0, 2, 5, 1]);
    assert_eq!(s.last_rows[2], [9, 4, 4, 6]);
    assert_eq!(&s.last_scores[..3], &[6, 8, 23]);
    // Discard after the reveal (the next round was dealt in the same decision, so rebuild it).
    let mut t = State::test_position(cfg(3), &rows, &[D2, 5, 9, SW, 6, 2, 8, 4, 4], &[7, 3], 2, 0);
    t.caller = 1;
    t.phase = Phase::Reveal;
    t.revealed = true;
    for e in evs
        .iter()
        .filter(|e| matches!(e.kind, Some(E::RevealDraw(_))))
    {
        RatATatCat::evolve(&mut t, e).unwrap();
    }
    assert_eq!(discard_pile(&t), vec![D2, PK, SW, SW, PK, D2, 7, 3]);
    assert_eq!(t.draw.top(), Some(8));
}

#[test]
fn tv18_reshuffle_when_draw_empties() {
    let mut s = State::test_position(
        cfg(2),
        &[[1, 1, 1, 1], [2, 2, 2, 2]],
        &[6],
        &[PK, 3, 8, SW, 2],
        1,
        0,
    );
    let evs = RatATatCat::decide(&s, 0, &draw(), &mut Rng::from_u64(5)).unwrap();
    assert_eq!(evs.len(), 2);
    assert_eq!(RatATatCat::event_type(&evs[1]), "pile_reshuffled");
    // Injected outcome: shuffled [SW, 8, 2, PK, 3], SW flipped back, reshuffled [8, 2, SW, 3, PK].
    let injected = ev(E::PileReshuffled(pb::PileReshuffled {
        flipped_powers: cards(&[SW]),
        discard_top: pbc(8),
        draw_pile: pile(&[2, SW, 3, PK]),
        draw_pile_size: 4,
    }));
    RatATatCat::evolve(&mut s, &evs[0]).unwrap();
    RatATatCat::evolve(&mut s, &injected).unwrap();
    RatATatCat::check_invariants(&s).unwrap();
    assert_eq!(discard_pile(&s), vec![8]);
    assert_eq!(
        s.draw.cards().iter().rev().copied().collect::<Vec<_>>(),
        vec![2, SW, 3, PK]
    );
    assert_eq!((s.pending, s.phase), (6, Phase::Drawn));
    assert_eq!(legal(&s).len(), 5);
    // Players see the flips but not the new order.
    let Some(E::PileReshuffled(r)) = RatATatCat::redact(&injected, Viewer::Seat(0)).unwrap().kind
    else {
        panic!()
    };
    assert!(r.draw_pile.is_empty() && r.draw_pile_size == 4 && r.flipped_powers == cards(&[SW]));
    play(&mut s, discard());
    assert_eq!(discard_pile(&s), vec![6, 8]);
    play(&mut s, end());
    assert!(legal(&s).contains(&take(1)));
    // A reshuffle that does not hold the old discard pile is corrupt.
    let mut t = State::test_position(
        cfg(2),
        &[[1, 1, 1, 1], [2, 2, 2, 2]],
        &[6],
        &[PK, 3, 8, SW, 2],
        1,
        0,
    );
    RatATatCat::evolve(&mut t, &evs[0]).unwrap();
    let wrong = ev(E::PileReshuffled(pb::PileReshuffled {
        flipped_powers: vec![],
        discard_top: pbc(9),
        draw_pile: pile(&[2, SW, 3, PK]),
        draw_pile_size: 4,
    }));
    assert!(matches!(
        RatATatCat::evolve(&mut t, &wrong),
        Err(CoreError::Corrupt(_))
    ));
}

/// The reveal of a test position (rows, piles top first; P0 called, P1 ended the last turn):
/// the events of `end_turn`, and the table right after the reveal replacements (the next
/// round is dealt in the same decision, so the reveal's events are replayed up to the scoring).
fn reveal_of(rows: &[[u8; 4]], draw: &[u8], discard: &[u8]) -> (Vec<pb::Event>, State) {
    let position = || {
        let mut s = State::test_position(cfg(2), rows, draw, discard, 0, 1);
        s.caller = 0;
        s.phase = Phase::EndOfTurn;
        s
    };
    let mut s = position();
    let evs = play(&mut s, end());
    let mut t = position();
    for e in evs
        .iter()
        .take_while(|e| !matches!(e.kind, Some(E::RoundScored(_))))
    {
        RatATatCat::evolve(&mut t, e).unwrap();
        RatATatCat::check_invariants(&t).unwrap();
    }
    assert_eq!((t.phase, t.pending), (Phase::Reveal, NONE));
    (evs, t)
}

/// The cards a reshuffle put in the new draw pile and face up, as sorted multisets.
fn reshuffled(evs: &[pb::Event]) -> Vec<Vec<u8>> {
    evs.iter()
        .filter_map(|e| match &e.kind {
            Some(E::PileReshuffled(r)) => {
                let mut c: Vec<u8> = r
                    .draw_pile
                    .iter()
                    .chain([&r.discard_top])
                    .map(|&c| from_pbc(c).unwrap())
                    .collect();
                c.sort();
                Some(c)
            }
            _ => None,
        })
        .collect()
}

#[test]
fn reveal_draw_that_empties_the_pile_reshuffles_before_the_replaced_card_is_discarded() {
    // R7, §4.2 REVEAL step 2, AMB9. P0's SW is replaced by the last card of the draw pile,
    // a 5: the pile is reshuffled at once from the discard pile [7, 3, 8] alone (the SW is
    // still in the row), and only then does the SW go face up on the new discard pile.
    let (evs, t) = reveal_of(&[[0, 2, SW, 1], [1, 1, 1, 1]], &[5], &[7, 3, 8]);
    assert_eq!(reshuffled(&evs), vec![vec![3, 7, 8]]);
    assert_eq!(t.rows[0], [0, 2, 5, 1]);
    let flipped = t.discard.cards()[0];
    assert_eq!(discard_pile(&t), vec![SW, flipped]);
    assert!(!t.draw.cards().contains(&SW) && t.draw.len() == 2);
}

#[test]
fn reveal_draw_of_a_power_card_that_empties_the_pile_keeps_it_out_of_the_reshuffle() {
    // The last card of the draw pile is a PK: it is held while the discard pile [7, 3, 8, 4]
    // is reshuffled, then goes face up on the new discard, and the next draw fills the slot.
    let (evs, t) = reveal_of(&[[0, 2, SW, 1], [1, 1, 1, 1]], &[PK], &[7, 3, 8, 4]);
    assert_eq!(reshuffled(&evs), vec![vec![3, 4, 7, 8]]);
    let flipped = t.discard.cards()[0];
    let filled = t.rows[0][2];
    assert!(filled <= 9 && filled != flipped);
    assert_eq!(discard_pile(&t), vec![SW, PK, flipped]);
    assert_eq!(t.draw.len(), 2);
    assert!(!t.draw.cards().iter().any(|&c| is_power(c)));
}

#[test]
fn reveal_reshuffles_recorded_before_the_fix_still_replay() {
    // A log of the old core shuffled the replaced SW into the new draw pile: it replays as
    // recorded, through the same states as before (the reveal draw still puts the SW on the
    // discard pile; only the reshuffle leaves it out). The new shape replays too; anything
    // else is corrupt.
    let position = || {
        let mut s =
            State::test_position(cfg(2), &[[0, 2, SW, 1], [1, 1, 1, 1]], &[5], &[7, 3], 0, 1);
        s.caller = 0;
        s.phase = Phase::Reveal;
        s.revealed = true;
        let draw = ev(E::RevealDraw(pb::RevealDraw {
            seat: 0,
            slot: 3,
            card: pbc(5),
        }));
        RatATatCat::evolve(&mut s, &draw).unwrap();
        s
    };
    let reshuffle = |top: u8, draw: &[u8]| {
        ev(E::PileReshuffled(pb::PileReshuffled {
            flipped_powers: vec![],
            discard_top: pbc(top),
            draw_pile: pile(draw),
            draw_pile_size: draw.len() as u32,
        }))
    };
    let mut old = position();
    assert_eq!(
        (discard_pile(&old), old.pending, old.rows[0]),
        (vec![SW, 7, 3], NONE, [0, 2, 5, 1])
    );
    RatATatCat::evolve(&mut old, &reshuffle(7, &[SW, 3])).unwrap();
    RatATatCat::check_invariants(&old).unwrap();
    assert_eq!(
        (discard_pile(&old), old.draw.len(), old.pending),
        (vec![7], 2, NONE)
    );
    let mut new = position();
    RatATatCat::evolve(&mut new, &reshuffle(7, &[3])).unwrap();
    RatATatCat::check_invariants(&new).unwrap();
    assert_eq!(
        (discard_pile(&new), old.rows[0], new.pending),
        (vec![SW, 7], [0, 2, 5, 1], NONE)
    );
    let mut bad = position();
    assert!(matches!(
        RatATatCat::evolve(&mut bad, &reshuffle(7, &[8])),
        Err(CoreError::Corrupt(_))
    ));
}

/// Plays the round of `s` to its end with the given row scores by rigging the rows, then
/// calling at once.
fn finish_round_with(s: &mut State, scores: &[(usize, [u8; 4])]) -> Vec<pb::Event> {
    for &(p, row) in scores {
        s.rows[p] = row;
    }
    s.test_mode = true;
    quiet_turn(s);
    play(s, call());
    let mut evs = vec![];
    while s.phase.awaiting() && s.round_ok_to_continue() {
        quiet_turn(s);
        evs = play(s, end());
        if evs
            .iter()
            .any(|e| matches!(e.kind, Some(E::RoundScored(_))))
        {
            break;
        }
    }
    evs
}

impl State {
    fn round_ok_to_continue(&self) -> bool {
        self.caller != NONE
    }
}

#[test]
fn tv19_elimination_and_simultaneous_crossing() {
    let mut s = dealt(3, 2, &[]);
    s.totals = [95, 80, 99, 0, 0, 0];
    s.round = 4;
    // Rows scoring P0 5, P1 12, P2 0, with cards that keep the deck's counts plausible.
    let evs = finish_round_with(
        &mut s,
        &[(0, [1, 1, 1, 2]), (1, [3, 3, 3, 3]), (2, [0, 0, 0, 0])],
    );
    let Some(E::RoundScored(r)) = evs
        .iter()
        .find_map(|e| match &e.kind {
            Some(k @ E::RoundScored(_)) => Some(Some(k.clone())),
            _ => None,
        })
        .flatten()
    else {
        panic!()
    };
    assert_eq!(r.eliminated, vec![0]);
    assert_eq!(&s.totals[..3], &[100, 92, 99]);
    assert!(!s.is_active(0));
    assert_eq!(
        (s.dealer, s.current),
        (1, 2),
        "P0 is skipped: P1 deals, P2 starts"
    );
    assert!(s.rows[0] == [NONE; 4]);
    // Next round: P1 scores 9 (101), P2 scores 4 (103): both out, P1 wins alone.
    finish_round_with(&mut s, &[(1, [0, 0, 0, 9]), (2, [1, 1, 1, 1])]);
    let o = RatATatCat::outcome(&s).expect("over");
    assert_eq!(o.scores, vec![100, 101, 103]);
    assert_eq!(o.winners, vec![1]);
    assert_eq!(o.reason, "ALL_ELIMINATED");
    assert!(o.lower_is_better && !o.aborted);
}

#[test]
fn tv20_fixed_rounds_and_tie() {
    let mut s = dealt(3, 0, &[("match_mode", "fixed_rounds"), ("rounds", "3")]);
    for (a, b, c) in [(10u8, 4u8, 15u8), (7, 12, 3), (5, 6, 9)] {
        let row = |v: u8| {
            [
                v.min(9),
                v.saturating_sub(9).min(9),
                v.saturating_sub(18),
                0,
            ]
        };
        finish_round_with(&mut s, &[(0, row(a)), (1, row(b)), (2, row(c))]);
    }
    let o = RatATatCat::outcome(&s).expect("over after 3 rounds");
    assert_eq!(o.scores, vec![22, 22, 27]);
    assert_eq!(o.winners, vec![0, 1]);
    assert_eq!(o.reason, "ROUNDS_COMPLETED");
}

#[test]
fn tv21_discarding_drawn_power_unused() {
    let mut s = State::test_position(
        cfg(2),
        &[[1, 1, 1, 1], [2, 2, 2, 2]],
        &[D2, 4, 5],
        &[3],
        1,
        0,
    );
    play(&mut s, draw());
    play(&mut s, discard());
    assert_eq!(s.discard.top(), Some(D2));
    assert_eq!(s.phase, Phase::EndOfTurn);
    assert_eq!(s.draw.top(), Some(4));
    play(&mut s, end());
    assert_eq!(legal(&s), vec![draw()]);
}

#[test]
fn tv22_score_bounds_and_conservation() {
    let mut s = State::test_position(cfg(2), &[[0, 0, 0, 0], [9, 9, 9, 9]], &[5], &[3], 1, 0);
    assert_eq!((s.row_score(0), s.row_score(1)), (0, 36));
    let t = tv1_state();
    let rows: usize = 8;
    assert_eq!(rows + t.draw.len() + t.discard.len(), 54);
    // A full-game state that loses a card is reported.
    s.test_mode = false;
    assert!(RatATatCat::check_invariants(&s).is_err());
    let mut u = tv1_state();
    u.draw.pop();
    assert!(RatATatCat::check_invariants(&u)
        .unwrap_err()
        .contains("conserved"));
}
