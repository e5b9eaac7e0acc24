//! The bots ("random", "memory") and the timeout policies' moves.

use crate::error::{CoreError, CoreResult};
use crate::game::{Game, Seat};
use crate::proto::rat_a_tat_cat as pb;
use crate::rng::Rng;

use pb::action::Kind as A;
use pb::event::Kind as E;

use super::rules::act;
use super::state::{bit, is_power, Phase, State, NONE, PK, REASONS, R_FORFEIT, SW};
use super::RatATatCat;

// ------------------------------------------------------------------ the "memory" bot

/// The timeout policy `draw_and_discard` (match clocks, docs/rules/rat_a_tat_cat.md §11).
pub(super) const TIMEOUT_DRAW_AND_DISCARD: &str = "draw_and_discard";
/// The timeout policy `forfeit`: the match ends, the seat to act losing (§11).
pub(super) const TIMEOUT_FORFEIT: &str = "forfeit";

/// The quietest legal move of the seat to act in each phase of its turn (§4.2): a turn always
/// has one (no pass, no knock), and these change the seat's row the least.
fn quiet_action(s: &State) -> Option<pb::Action> {
    let kind = match s.phase {
        Phase::TurnStart => A::DrawFromPile(pb::DrawFromPile {}),
        Phase::Drawn | Phase::Draw2First | Phase::Draw2Second => {
            A::DiscardDrawn(pb::DiscardDrawn {})
        }
        Phase::Peek => A::PeekCard(pb::PeekCard { slot: 1 }),
        Phase::Swap => A::SkipSwap(pb::SkipSwap {}),
        Phase::EndOfTurn => A::EndTurn(pb::EndTurn {}),
        _ => return None,
    };
    Some(pb::Action { kind: Some(kind) })
}

/// A timed-out seat's turn, completed with the quietest moves (§11): `draw_from_pile`,
/// `discard_drawn` (from `DRAW2_FIRST` it draws card #2, R6, which is discarded too), and
/// `end_turn` without a call (R9: a call is never forced); a turn left in `PEEK` or `SWAP` by a
/// power the seat used itself peeks at slot 1 or skips the swap (R4, R5). Each move is decided
/// as the seat's own, so every draw and reshuffle (R7) is recorded as usual.
pub(super) fn timeout_draw_and_discard(
    s: &State,
    seat: Seat,
    policy: &str,
    rng: &mut Rng,
) -> CoreResult<Vec<pb::Event>> {
    if policy == TIMEOUT_FORFEIT && s.phase.awaiting() && seat == s.current as u32 {
        return Ok(vec![pb::Event {
            kind: Some(E::MatchEnded(pb::MatchEnded {
                winners: State::seat_list(s.forfeit_winners()),
                reason: REASONS[R_FORFEIT as usize].into(),
                aborted: false,
                totals: s.totals[..s.n()].to_vec(),
            })),
        }]);
    }
    if policy != TIMEOUT_DRAW_AND_DISCARD && policy != TIMEOUT_FORFEIT {
        return Err(CoreError::Unsupported(format!(
            "rat_a_tat_cat has no timeout policy {policy:?}"
        )));
    }
    if !s.phase.awaiting() || seat != s.current as u32 {
        return Err(CoreError::not_your_turn());
    }
    let mut state = s.clone();
    let mut events = Vec::with_capacity(6);
    // A turn is at most: draw, a Draw 2 chain of discards (bounded by the pile), end_turn.
    for _ in 0..64 {
        let Some(action) = quiet_action(&state) else {
            break;
        };
        let ends_turn = state.phase == Phase::EndOfTurn;
        act(&mut state, seat, &action, rng, &mut events)?;
        if ends_turn || !state.phase.awaiting() || state.current as u32 != seat {
            break;
        }
    }
    Ok(events)
}

/// Whether `seat`'s turn goes on after its step from `before` to `after` (`Game::turn_continues`):
/// the condition `timeout_draw_and_discard` loops on.
pub(super) fn turn_continues(before: &State, after: &State, seat: Seat) -> bool {
    before.phase != Phase::EndOfTurn && after.phase.awaiting() && after.current as u32 == seat
}

/// Heuristic bot: keeps what it has seen (its own knowledge bits only), treats an unknown card
/// (or an inert power card, replaced at reveal) as worth 5, the deck mean.
/// Keeps the drawn card in `slot` when it lowers that card by `margin` at least (`gain`), else
/// discards it.
pub(super) fn keep_or_discard(gain: f32, margin: f32, slot: usize) -> A {
    if gain >= margin {
        A::ReplaceCard(pb::ReplaceCard {
            slot: slot as u32 + 1,
        })
    } else {
        A::DiscardDrawn(pb::DiscardDrawn {})
    }
}

/// Peeks at the first own card not known, inner slots first.
pub(super) fn peek_unknown(knows: impl Fn(usize) -> bool) -> A {
    let sl = [1usize, 2, 0, 3]
        .into_iter()
        .find(|&sl| !knows(sl))
        .unwrap_or(1);
    A::PeekCard(pb::PeekCard {
        slot: sl as u32 + 1,
    })
}

/// A Swap of the own card `own` (expected `w` points) for the card of another active seat
/// expected lowest by `est` (the first of equals), when that lowers it by `min` at least; else
/// no swap.
pub(super) fn swap_or_skip(
    s: &State,
    me: usize,
    (own, w): (usize, f32),
    min: f32,
    est: impl Fn(usize, usize) -> f32,
) -> A {
    let mut target: Option<(usize, usize, f32)> = None;
    for q in (0..s.n()).filter(|&q| q != me && s.is_active(q)) {
        for sl in 0..4 {
            let e = est(q, sl);
            if target.is_none_or(|t| e < t.2) {
                target = Some((q, sl, e));
            }
        }
    }
    match target {
        Some((q, sl, e)) if w - e >= min => A::SwapCards(pb::SwapCards {
            own_slot: own as u32 + 1,
            target_seat: q as u32,
            target_slot: sl as u32 + 1,
        }),
        _ => A::SkipSwap(pb::SkipSwap {}),
    }
}

fn memory_bot(s: &State, me: usize) -> pb::Action {
    let act = |k: A| pb::Action { kind: Some(k) };
    let est = |p: usize, sl: usize| -> f32 {
        if s.known[me] & bit(p, sl) != 0 && s.rows[p][sl] <= 9 {
            s.rows[p][sl] as f32
        } else {
            5.0
        }
    };
    let worst = || -> (usize, f32) {
        let mut best = (0usize, -1.0f32);
        for sl in 0..4 {
            // Unknown cards rank just below a known card of equal estimate.
            let e = est(me, sl)
                + if s.known[me] & bit(me, sl) == 0 {
                    0.1
                } else {
                    0.0
                };
            if e > best.1 {
                best = (sl, e);
            }
        }
        best
    };
    match s.phase {
        Phase::TurnStart => {
            if let Some(top) = s.discard.top().filter(|&c| !is_power(c)) {
                let (sl, w) = worst();
                if w - top as f32 >= 2.0 {
                    return act(A::TakeDiscard(pb::TakeDiscard {
                        slot: sl as u32 + 1,
                    }));
                }
            }
            act(A::DrawFromPile(pb::DrawFromPile {}))
        }
        Phase::Drawn | Phase::Draw2First | Phase::Draw2Second => {
            let c = s.pending;
            if is_power(c) {
                let useful = match c {
                    PK => (0..4).any(|sl| s.known[me] & bit(me, sl) == 0),
                    SW => worst().1 >= 6.0,
                    _ => true,
                };
                return act(if useful {
                    A::UsePower(pb::UsePower {})
                } else {
                    A::DiscardDrawn(pb::DiscardDrawn {})
                });
            }
            let (sl, w) = worst();
            let margin = if s.phase == Phase::Draw2First {
                1.5
            } else {
                0.5
            };
            act(keep_or_discard(w - c as f32, margin, sl))
        }
        Phase::Peek => act(peek_unknown(|sl| s.known[me] & bit(me, sl) != 0)),
        Phase::Swap => act(swap_or_skip(s, me, worst(), 2.0, est)),
        Phase::EndOfTurn => {
            if s.caller == NONE {
                let unknown = (0..4).filter(|&sl| s.known[me] & bit(me, sl) == 0).count();
                let sum: f32 = (0..4).map(|sl| est(me, sl)).sum();
                if unknown <= 1 && sum <= 12.0 {
                    return act(A::CallRatATatCat(pb::CallRatATatCat {}));
                }
            }
            act(A::EndTurn(pb::EndTurn {}))
        }
        _ => act(A::EndTurn(pb::EndTurn {})),
    }
}

pub(super) fn bot_action(
    s: &State,
    seat: Seat,
    bot: &str,
    rng: &mut Rng,
) -> CoreResult<pb::Action> {
    let mut moves = RatATatCat::legal_actions(s, seat);
    if moves.is_empty() {
        return Err(CoreError::not_your_turn());
    }
    if bot != "memory" {
        let i = rng.index(moves.len());
        return Ok(moves.swap_remove(i));
    }
    Ok(memory_bot(s, seat as usize))
}
