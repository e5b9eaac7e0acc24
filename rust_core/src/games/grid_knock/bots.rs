//! The bots (`random`, `greedy`) and the match clocks' timeout moves (§11): the default move
//! of a timed-out seat, or its forfeit.

use crate::error::{CoreError, CoreResult};
use crate::game::{Game, Seat};
use crate::proto::grid_knock as pb;
use crate::rng::Rng;

use super::rules::legal_moves;
use super::state::{forfeit_winners, to_act_mask, triples, Ev, Move};
use super::state::{Phase, State, NONE};
use super::wire::{ev_to_pb, to_action};
use super::GridKnock;

// ------------------------------------------------------------------------------------------
// Match clocks

/// The timeout policy `default_move` (match clocks, docs/rules/grid_knock.md §11).
pub(super) const TIMEOUT_DEFAULT_MOVE: &str = "default_move";
/// The timeout policy `forfeit`: the match ends, the timed-out seat losing (§11).
pub(super) const TIMEOUT_FORFEIT: &str = "forfeit";

/// The default move of `seat` now (§11), from its legal moves: the one that commits it the
/// least. In a knock window `pass_knock` (a timeout is a pass, AMB32, as the seed says);
/// `refuse_knocks` (A keeps X); `draw_from_pile` rather than taking the discard; with X drawn,
/// `discard_and_reveal` of its first face-down slot (X is discarded, §4.2), else a swap;
/// `end_triples` (leaving triples is always allowed, R6); where the rules force a slot (the
/// initial reveal, a swap, taking from the knocker), the first one listed.
pub(super) fn default_move(st: &State, seat: u8) -> Option<Move> {
    let mut moves = Vec::new();
    legal_moves(st, seat, &mut moves);
    let rank = |m: &Move| match m {
        Move::PassKnock => 0,
        Move::RefuseKnocks => 0,
        Move::EndTriples => 0,
        Move::DrawFromPile => 0,
        Move::DiscardAndReveal(_) => 1,
        Move::Knock
        | Move::AcceptKnock(_)
        | Move::TakeFromDiscard
        | Move::DiscardTriple(_)
        | Move::BadTriple => 3,
        _ => 2,
    };
    moves
        .iter()
        .enumerate()
        .min_by_key(|&(i, m)| (rank(m), i))
        .map(|(_, &m)| m)
}

/// A timed-out seat's default moves (§11): one after the other while it is awaited within the
/// same turn (or the same initial reveal), so one timeout answers for the seat until others
/// are awaited (a knock window it opened by drawing) or its turn ends.
pub(super) fn timeout_default_move(
    st: &State,
    seat: Seat,
    policy: &str,
    rng: &mut Rng,
) -> CoreResult<Vec<pb::Event>> {
    if policy != TIMEOUT_DEFAULT_MOVE && policy != TIMEOUT_FORFEIT {
        return Err(CoreError::Unsupported(format!(
            "grid_knock has no timeout policy {policy:?}"
        )));
    }
    if seat as usize >= st.n() || to_act_mask(st) >> seat & 1 == 0 {
        return Err(CoreError::not_your_turn());
    }
    if policy == TIMEOUT_FORFEIT {
        let seat = seat as u8;
        return Ok(vec![ev_to_pb(&Ev::Forfeited {
            seat,
            winners: forfeit_winners(st, seat),
        })]);
    }
    let (turns, reveal) = (st.turns, st.phase == Phase::InitialReveal);
    let mut state = st.clone();
    let mut events = Vec::new();
    // A turn is a handful of steps; the bound only guards against a rules bug looping.
    for _ in 0..32 {
        let Some(mv) = default_move(&state, seat as u8) else {
            break;
        };
        GridKnock::play(&mut state, seat, &to_action(mv), rng, &mut events)?;
        let awaited = to_act_mask(&state) >> seat & 1 == 1;
        if !awaited || state.turns != turns || (state.phase == Phase::InitialReveal) != reveal {
            break;
        }
    }
    Ok(events)
}

/// Whether `seat`'s turn goes on after its step from `before` to `after` (`Game::turn_continues`):
/// the condition `timeout_default_move` loops on (still awaited, in the same turn or the same
/// initial reveal).
pub(super) fn turn_continues(before: &State, after: &State, seat: Seat) -> bool {
    to_act_mask(after) >> seat & 1 == 1
        && after.turns == before.turns
        && (after.phase == Phase::InitialReveal) == (before.phase == Phase::InitialReveal)
}

// ------------------------------------------------------------------------------------------
// Bots

const EXPECTED: f32 = 760.0 / 150.0;

fn known(st: &State, s: u8) -> f32 {
    if st.is_up(s) {
        st.val[s as usize] as f32
    } else {
        EXPECTED
    }
}

/// Best slot of `seat`'s domain to swap `card` into, with its estimated gain (public info only).
fn best_keep(st: &State, seat: u8, card: i8) -> (f32, u8) {
    let mut best = (f32::MIN, NONE);
    for &s in &st.cfg.dom[seat as usize] {
        if !st.is_filled(s) {
            continue;
        }
        let mut g = known(st, s) - card as f32;
        // A triple through s would let the seat throw three cards away.
        let mut t = st.clone();
        t.val[s as usize] = card;
        t.up |= 1u128 << s;
        let tr = triples(&t, seat);
        if tr.cells[..tr.len].iter().any(|c| c.contains(&s)) {
            g += 3.0 * (card.max(0) as f32) + 1.0;
        }
        if g > best.0 {
            best = (g, s);
        }
    }
    best
}

pub(super) fn greedy(st: &State, seat: u8, legal: &[Move], rng: &mut Rng) -> Move {
    let a = st.active;
    let fallback = legal[rng.index(legal.len())];
    match st.phase {
        Phase::ChooseSource => {
            let can_draw = legal.contains(&Move::DrawFromPile);
            match st.discard_top() {
                Some(t) if !can_draw || best_keep(st, a, t).0 >= 4.0 => Move::TakeFromDiscard,
                _ if can_draw => Move::DrawFromPile,
                _ => fallback,
            }
        }
        Phase::KnockWindow => {
            if best_keep(st, seat, st.drawn_card).0 >= 6.0 {
                Move::Knock
            } else {
                Move::PassKnock
            }
        }
        Phase::KnockDecision => {
            let gx = best_keep(st, a, st.drawn_card)
                .0
                .max(if st.face_down_in(a) != 0 {
                    1.0
                } else {
                    f32::MIN
                });
            let mut best = (gx + 1.0, Move::RefuseKnocks);
            for k in 0..st.n() as u8 {
                if st.knockers >> k & 1 == 0 {
                    continue;
                }
                let cand = st.filled & st.cfg.dom_mask[k as usize] & !st.cfg.dom_mask[a as usize];
                for &q in &st.cfg.dom[k as usize] {
                    if cand >> q & 1 == 1 && st.is_up(q) {
                        let g = best_keep(st, a, st.val[q as usize]).0;
                        if g > best.0 {
                            best = (g, Move::AcceptKnock(k));
                        }
                    }
                }
            }
            best.1
        }
        Phase::DecideDrawn | Phase::SwapDiscard => {
            let (g, s) = best_keep(st, a, st.drawn_card);
            let down = st.face_down_in(a);
            if st.phase == Phase::SwapDiscard || g >= 2.0 || down == 0 {
                if s != NONE {
                    return Move::KeepSwap(s);
                }
                return fallback;
            }
            // Flip a face-down card, preferring the own block over the borrowed column.
            let own = down & !st.cfg.dom_mask[(a as usize + 1) % st.n()];
            let pick = if own != 0 { own } else { down };
            Move::DiscardAndReveal(pick.trailing_zeros() as u8)
        }
        Phase::KnockerSwap => {
            let (_, s) = best_keep(st, seat, st.drawn_card);
            if s != NONE {
                Move::KnockerSwap(s)
            } else {
                fallback
            }
        }
        Phase::Triples => {
            let t = triples(st, seat);
            match t.cells[..t.len].iter().find(|c| st.val[c[0] as usize] > 0) {
                Some(c) => Move::DiscardTriple(*c),
                None => Move::EndTriples,
            }
        }
        Phase::TakeFromKnocker => {
            let mut best = (f32::MAX, fallback);
            for m in legal {
                if let Move::TakeFromKnocker(q) = *m {
                    let k = known(st, q);
                    if k < best.0 {
                        best = (k, *m);
                    }
                }
            }
            best.1
        }
        Phase::ReturnSwap => {
            let (_, s) = best_keep(st, a, st.taken_card);
            if s != NONE {
                Move::ReturnSwap(s)
            } else {
                fallback
            }
        }
        _ => fallback,
    }
}

/// The move of bot `bot` (`greedy`, else `random`) for `seat`.
pub(super) fn bot_action(
    state: &State,
    seat: Seat,
    bot: &str,
    rng: &mut Rng,
) -> CoreResult<pb::Action> {
    if seat as usize >= state.n() {
        return Err(CoreError::malformed(format!(
            "seat {seat} is not in this match"
        )));
    }
    let mut moves = Vec::new();
    legal_moves(state, seat as u8, &mut moves);
    if moves.is_empty() {
        return Err(CoreError::not_your_turn());
    }
    let mv = match bot {
        "greedy" => greedy(state, seat as u8, &moves, rng),
        _ => moves[rng.index(moves.len())],
    };
    Ok(to_action(mv))
}
