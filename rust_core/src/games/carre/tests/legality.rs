//! The legal actions listed are exactly the ones the rule check accepts.

use super::*;

/// Every (card, square, cell) and discard the hand allows, by the rule check alone.
fn brute_force_legal(s: &State, seat: u8) -> Vec<Move> {
    let mut out = vec![];
    if s.phase != Phase::Action || seat != s.current {
        return out;
    }
    if s.check_go_out(seat).is_ok() {
        out.push(Move::GoOut);
    }
    for card in 0..52u8 {
        if s.hands[seat as usize] & bit(card) == 0 {
            continue;
        }
        for owner in [seat, 1 - seat] {
            for idx in 0..9 {
                if s.check_place(seat, card, owner, idx).is_ok() {
                    out.push(Move::Place(card, owner, idx));
                }
            }
        }
        out.push(Move::Discard(card));
    }
    out
}

#[test]
fn legal_actions_match_the_rule_check_exactly() {
    let mut checked = 0;
    random_states(60, 7, "random", |s| {
        for seat in 0..2u8 {
            let mut moves = Moves::new();
            s.gen_moves(seat, &mut moves);
            let mut got = moves.as_slice().to_vec();
            let mut want = brute_force_legal(s, seat);
            assert_eq!(got.len(), want.len());
            got.sort_by_key(|m| format!("{m:?}"));
            want.sort_by_key(|m| format!("{m:?}"));
            assert_eq!(got, want);
            got.dedup();
            assert_eq!(got.len(), want.len(), "duplicate legal action");
            // The proto form round-trips through decide.
            for a in Carre::legal_actions(s, seat as u32) {
                assert!(try_act(s, seat as u32, &a).is_ok());
            }
            checked += 1;
        }
    });
    assert!(checked > 1000);
}
