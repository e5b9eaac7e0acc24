//! Deciding: an action checked and turned into events, the legal actions, host commands, the
//! opening deal and the outcome.

use crate::error::{CoreError, CoreResult};
use crate::game::Seat;
use crate::proto::rat_a_tat_cat as pb;
use crate::proto::Outcome;
use crate::rng::Rng;

use pb::action::Kind as A;
use pb::event::Kind as E;

use super::state::{is_power, pbc, MatchMode, Phase, State, NONE, REASONS};
use super::wire::{slot_of, Out};

fn wrong_phase(what: &str, phase: Phase) -> CoreError {
    CoreError::rule(
        "WRONG_PHASE",
        format!("{what} is not possible now: {}", phase_words(phase)),
    )
}

/// What the table waits for in `phase`, for a refusal.
fn phase_words(phase: Phase) -> &'static str {
    match phase {
        Phase::TurnStart => "the turn starts with taking the discard or drawing from the pile",
        Phase::Drawn => "the drawn card must be kept, discarded or used",
        Phase::Draw2First | Phase::Draw2Second => "a Draw 2 card is being played",
        Phase::Peek => "a Peek card is being played: choose a card to look at",
        Phase::Swap => "a Swap card is being played: choose cards to swap, or skip",
        Phase::EndOfTurn => "the turn is ending: end it, or call \u{201c}Rat-a-tat cat!\u{201d}",
        _ => "the round is not being played",
    }
}

/// Checks `action` by `seat` (awaited: the registry checks the turn), then applies it to
/// `state` and appends its events. Every check comes before the first event, so a refused action changes nothing; after that only a bug
/// can fail (`Corrupt`).
pub(super) fn act(
    state: &mut State,
    seat: Seat,
    action: &pb::Action,
    rng: &mut Rng,
    events: &mut Vec<pb::Event>,
) -> CoreResult<()> {
    if state.phase == Phase::NotStarted {
        return Err(CoreError::rule(
            "NOT_STARTED",
            "the match has not been dealt yet",
        ));
    }
    let Some(kind) = action.kind.as_ref() else {
        return Err(CoreError::malformed("the action names no move"));
    };
    let ph = state.phase;
    let me = seat as usize;
    match kind {
        A::TakeDiscard(a) => {
            let slot = slot_of(a.slot)?;
            if ph != Phase::TurnStart {
                return Err(wrong_phase("taking the discard", ph));
            }
            let Some(top) = state.discard.top() else {
                return Err(CoreError::corrupt(
                    "empty discard pile at turn start".to_string(),
                ));
            };
            if is_power(top) {
                return Err(CoreError::rule(
                    "DISCARD_IS_POWER",
                    "the top of the discard pile is a dead power card: draw from the pile",
                ));
            }
            let e = E::DiscardTaken(pb::DiscardTaken {
                seat,
                slot: a.slot,
                taken: pbc(top),
                replaced: pbc(state.rows[me][slot]),
            });
            Out { s: state, events }.emit(e)
        }
        A::DrawFromPile(_) => {
            if ph != Phase::TurnStart {
                return Err(wrong_phase("drawing from the pile", ph));
            }
            Out { s: state, events }.draw_and_refill(rng).map(drop)
        }
        A::ReplaceCard(a) => {
            let slot = slot_of(a.slot)?;
            if !ph.holding() {
                return Err(wrong_phase("replacing a card", ph));
            }
            if is_power(state.pending) {
                return Err(CoreError::rule(
                    "POWER_CARD_CANNOT_BE_KEPT",
                    "a drawn power card cannot go into your row: use it or discard it",
                ));
            }
            let e = E::CardReplaced(pb::CardReplaced {
                seat,
                slot: a.slot,
                placed: pbc(state.pending),
                replaced: pbc(state.rows[me][slot]),
            });
            Out { s: state, events }.emit(e)
        }
        A::DiscardDrawn(_) => {
            if !ph.holding() {
                return Err(wrong_phase("discarding a drawn card", ph));
            }
            let discarded = E::DrawnDiscarded(pb::DrawnDiscarded {
                seat,
                card: pbc(state.pending),
            });
            let mut out = Out { s: state, events };
            out.emit(discarded)?;
            if ph == Phase::Draw2First {
                out.draw_and_refill(rng)?;
            }
            Ok(())
        }
        A::UsePower(_) => {
            if !ph.holding() {
                return Err(wrong_phase("using a power", ph));
            }
            if !is_power(state.pending) {
                return Err(CoreError::rule(
                    "NOT_A_POWER_CARD",
                    "the card in hand is a number card, it has no power",
                ));
            }
            let e = E::PowerUsed(pb::PowerUsed {
                seat,
                power: pbc(state.pending),
            });
            let mut out = Out { s: state, events };
            out.emit(e)?;
            if out.s.phase == Phase::DrawingFirst {
                out.draw_and_refill(rng)?;
            }
            Ok(())
        }
        A::PeekCard(a) => {
            let slot = slot_of(a.slot)?;
            if ph != Phase::Peek {
                return Err(wrong_phase("peeking", ph));
            }
            let e = E::CardPeeked(pb::CardPeeked {
                seat,
                slot: a.slot,
                card: pbc(state.rows[me][slot]),
            });
            Out { s: state, events }.emit(e)
        }
        A::SwapCards(a) => {
            slot_of(a.own_slot)?;
            slot_of(a.target_slot)?;
            if a.target_seat as usize >= state.n() {
                return Err(CoreError::malformed(format!(
                    "target seat {} is not in this {}-seat match",
                    a.target_seat,
                    state.n()
                )));
            }
            if ph != Phase::Swap {
                return Err(wrong_phase("swapping", ph));
            }
            if a.target_seat == seat {
                return Err(CoreError::rule(
                    "SWAP_WITH_SELF",
                    "a swap must take a card of another player",
                ));
            }
            if !state.is_active(a.target_seat as usize) {
                return Err(CoreError::rule(
                    "TARGET_ELIMINATED",
                    "that player is eliminated and has no cards",
                ));
            }
            Out { s: state, events }.emit(E::CardsSwapped(pb::CardsSwapped {
                seat,
                own_slot: a.own_slot,
                target_seat: a.target_seat,
                target_slot: a.target_slot,
            }))
        }
        A::SkipSwap(_) => {
            if ph != Phase::Swap {
                return Err(wrong_phase("skipping a swap", ph));
            }
            Out { s: state, events }.emit(E::SwapSkipped(pb::SwapSkipped { seat }))
        }
        A::CallRatATatCat(_) => {
            if ph != Phase::EndOfTurn {
                return Err(wrong_phase("calling Rat-a-tat cat", ph));
            }
            if state.caller != NONE {
                return Err(CoreError::rule(
                    "ALREADY_CALLED",
                    format!("seat {} has already called this round", state.caller),
                ));
            }
            let mut out = Out { s: state, events };
            out.emit(E::Called(pb::Called { seat }))?;
            out.end_turn(rng)
        }
        A::EndTurn(_) => {
            if ph != Phase::EndOfTurn {
                return Err(wrong_phase("ending the turn", ph));
            }
            Out { s: state, events }.end_turn(rng)
        }
    }
}

pub(super) fn host_command(s: &State, command: &str, _rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
    debug_assert_eq!(command, "stop_after_round");
    if s.cfg.mode != MatchMode::Timed {
        return Err(CoreError::rule(
            "NOT_TIMED",
            "the host can end only a timed match after the round",
        ));
    }
    if s.stop_requested {
        return Err(CoreError::rule(
            "ALREADY_REQUESTED",
            "the match already stops after this round",
        ));
    }
    Ok(vec![pb::Event {
        kind: Some(E::StopRequested(pb::StopRequested {})),
    }])
}

pub(super) fn open(
    state: &mut State,
    rng: &mut Rng,
    events: &mut Vec<pb::Event>,
) -> CoreResult<()> {
    if state.phase != Phase::NotStarted {
        return Err(CoreError::rule(
            "ALREADY_STARTED",
            "the match has already been dealt",
        ));
    }
    let dealer = match state.cfg.first_dealer {
        Some(d) => d,
        None => rng.below(state.cfg.seats as u64) as u8,
    };
    Out { s: state, events }.deal(dealer, rng)
}

pub(super) fn legal_actions_into(s: &State, seat: Seat, v: &mut Vec<pb::Action>) {
    if !s.phase.awaiting() || seat != s.current as u32 {
        return;
    }
    let act = |k: A| pb::Action { kind: Some(k) };
    match s.phase {
        Phase::TurnStart => {
            if s.discard.top().is_some_and(|c| !is_power(c)) {
                v.extend((1..=4).map(|slot| act(A::TakeDiscard(pb::TakeDiscard { slot }))));
            }
            v.push(act(A::DrawFromPile(pb::DrawFromPile {})));
        }
        Phase::Drawn | Phase::Draw2First | Phase::Draw2Second => {
            if is_power(s.pending) {
                v.push(act(A::UsePower(pb::UsePower {})));
            } else {
                v.extend((1..=4).map(|slot| act(A::ReplaceCard(pb::ReplaceCard { slot }))));
            }
            v.push(act(A::DiscardDrawn(pb::DiscardDrawn {})));
        }
        Phase::Peek => v.extend((1..=4).map(|slot| act(A::PeekCard(pb::PeekCard { slot })))),
        Phase::Swap => {
            for own_slot in 1..=4 {
                for t in 0..s.n() {
                    if t as u32 == seat || !s.is_active(t) {
                        continue;
                    }
                    for target_slot in 1..=4 {
                        v.push(act(A::SwapCards(pb::SwapCards {
                            own_slot,
                            target_seat: t as u32,
                            target_slot,
                        })));
                    }
                }
            }
            v.push(act(A::SkipSwap(pb::SkipSwap {})));
        }
        Phase::EndOfTurn => {
            if s.caller == NONE {
                v.push(act(A::CallRatATatCat(pb::CallRatATatCat {})));
            }
            v.push(act(A::EndTurn(pb::EndTurn {})));
        }
        _ => {}
    }
}

pub(super) fn outcome(s: &State) -> Option<Outcome> {
    if s.phase != Phase::Over {
        return None;
    }
    Some(Outcome {
        scores: s.totals[..s.n()].iter().map(|&t| t as i64).collect(),
        winners: State::seat_list(s.winners),
        reason: REASONS
            .get(s.end_reason as usize)
            .copied()
            .unwrap_or("")
            .into(),
        lower_is_better: true,
        aborted: s.aborted,
        description: String::new(), // worded by the registry (Game::outcome_sentence)
    })
}
