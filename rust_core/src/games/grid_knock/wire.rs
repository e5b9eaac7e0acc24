//! The protobuf boundary: actions to moves and back, events to the wire and back. [`Ev`] mirrors
//! the wire's events one-to-one (same names), so each conversion is a change of types: seat
//! `u8` to `u32`, slot index to `Slot`, card `i8` to `i32`, seat mask to seat list.

use crate::error::{CoreError, CoreResult};
use crate::proto::grid_knock as pb;

use super::state::DECK_SIZE;
use super::state::{Card, Ev, Move, RoundScored};

/// The wire's `Slot` of slot index `slot`.
pub(super) fn wire_slot(slot: u8) -> pb::Slot {
    pb::Slot {
        owner: (slot / 12) as u32,
        row: (slot % 12 / 4 + 1) as u32,
        col: (slot % 4 + 1) as u32,
    }
}

fn slot_index(slot: &pb::Slot, seats: usize) -> Option<u8> {
    let pb::Slot { owner, row, col } = *slot;
    if (owner as usize) < seats && (1..=3).contains(&row) && (1..=4).contains(&col) {
        Some((owner * 12 + (row - 1) * 4 + (col - 1)) as u8)
    } else {
        None
    }
}

fn action_slot(slot: &Option<pb::Slot>, seats: usize) -> CoreResult<u8> {
    match slot {
        None => Err(CoreError::malformed("the action needs a slot")),
        Some(slot) => slot_index(slot, seats).ok_or_else(|| {
            CoreError::malformed(format!(
                "slot (owner {}, row {}, col {}) does not exist: owner < {seats}, row 1..3, col 1..4",
                slot.owner, slot.row, slot.col
            ))
        }),
    }
}

pub(super) fn to_move(action: &pb::Action, seats: usize) -> CoreResult<Move> {
    use pb::action::Kind;
    let slot = |slot: &Option<pb::Slot>| action_slot(slot, seats);
    Ok(match &action.kind {
        None => return Err(CoreError::malformed("empty action")),
        Some(Kind::RevealInitial(message)) => Move::RevealInitial(slot(&message.slot)?),
        Some(Kind::DrawFromPile(_)) => Move::DrawFromPile,
        Some(Kind::TakeFromDiscard(_)) => Move::TakeFromDiscard,
        Some(Kind::Knock(_)) => Move::Knock,
        Some(Kind::PassKnock(_)) => Move::PassKnock,
        Some(Kind::AcceptKnock(message)) => {
            if message.knocker as usize >= seats {
                return Err(CoreError::malformed(format!(
                    "seat {} is not in this match",
                    message.knocker
                )));
            }
            Move::AcceptKnock(message.knocker as u8)
        }
        Some(Kind::RefuseKnocks(_)) => Move::RefuseKnocks,
        Some(Kind::KeepSwap(message)) => Move::KeepSwap(slot(&message.slot)?),
        Some(Kind::DiscardAndReveal(message)) => Move::DiscardAndReveal(slot(&message.slot)?),
        Some(Kind::KnockerSwap(message)) => Move::KnockerSwap(slot(&message.slot)?),
        Some(Kind::DiscardTriple(message)) => {
            let mut cells = Vec::with_capacity(message.cells.len());
            for cell in &message.cells {
                cells.push(slot(&Some(*cell))?);
            }
            if cells.len() != 3
                || cells[0] == cells[1]
                || cells[1] == cells[2]
                || cells[0] == cells[2]
            {
                Move::BadTriple
            } else {
                Move::DiscardTriple([cells[0], cells[1], cells[2]])
            }
        }
        Some(Kind::EndTriples(_)) => Move::EndTriples,
        Some(Kind::TakeFromKnocker(message)) => Move::TakeFromKnocker(slot(&message.slot)?),
        Some(Kind::ReturnSwap(message)) => Move::ReturnSwap(slot(&message.slot)?),
    })
}

pub(super) fn to_action(mv: Move) -> pb::Action {
    use pb::action::Kind;
    let to_slot = |slot: u8| Some(wire_slot(slot));
    let kind = match mv {
        Move::RevealInitial(slot) => Kind::RevealInitial(pb::RevealInitial {
            slot: to_slot(slot),
        }),
        Move::DrawFromPile => Kind::DrawFromPile(pb::DrawFromPile {}),
        Move::TakeFromDiscard => Kind::TakeFromDiscard(pb::TakeFromDiscard {}),
        Move::Knock => Kind::Knock(pb::Knock {}),
        Move::PassKnock => Kind::PassKnock(pb::PassKnock {}),
        Move::AcceptKnock(knocker) => Kind::AcceptKnock(pb::AcceptKnock {
            knocker: knocker.into(),
        }),
        Move::RefuseKnocks => Kind::RefuseKnocks(pb::RefuseKnocks {}),
        Move::KeepSwap(slot) => Kind::KeepSwap(pb::KeepSwap {
            slot: to_slot(slot),
        }),
        Move::DiscardAndReveal(slot) => Kind::DiscardAndReveal(pb::DiscardAndReveal {
            slot: to_slot(slot),
        }),
        Move::KnockerSwap(slot) => Kind::KnockerSwap(pb::KnockerSwap {
            slot: to_slot(slot),
        }),
        Move::DiscardTriple(cells) => Kind::DiscardTriple(pb::DiscardTriple {
            cells: cells.iter().map(|&cell| wire_slot(cell)).collect(),
        }),
        Move::BadTriple => Kind::DiscardTriple(pb::DiscardTriple { cells: vec![] }),
        Move::EndTriples => Kind::EndTriples(pb::EndTriples {}),
        Move::TakeFromKnocker(slot) => Kind::TakeFromKnocker(pb::TakeFromKnocker {
            slot: to_slot(slot),
        }),
        Move::ReturnSwap(slot) => Kind::ReturnSwap(pb::ReturnSwap {
            slot: to_slot(slot),
        }),
    };
    pb::Action { kind: Some(kind) }
}

/// The seats of seat mask `mask`, in order.
pub(super) fn seat_list(mask: u8) -> Vec<u32> {
    (0..8).filter(|seat| mask >> seat & 1 == 1).collect()
}

fn seat_mask(seats: &[u32]) -> CoreResult<u8> {
    let mut mask = 0u8;
    for &seat in seats {
        if seat >= 8 || mask >> seat & 1 == 1 {
            return Err(CoreError::corrupt("seat list"));
        }
        mask |= 1 << seat;
    }
    Ok(mask)
}

pub(super) fn ev_to_pb(ev: &Ev) -> pb::Event {
    use pb::event::Kind;
    let to_slot = |slot: u8| Some(wire_slot(slot));
    let values = |cards: &[i8]| -> Vec<i32> { cards.iter().map(|&card| card.into()).collect() };
    let kind = match *ev {
        Ev::Dealt {
            round,
            dealer,
            blocks_len,
            cards: ref deal,
        } => {
            let blocks_len = blocks_len as usize;
            Kind::Dealt(pb::Dealt {
                round,
                dealer: dealer.into(),
                first_player: ((dealer as usize + 1) % (blocks_len / 12).max(1)) as u32,
                blocks: values(&deal[..blocks_len]),
                draw_pile: values(&deal[blocks_len + 1..]),
                draw_pile_size: (DECK_SIZE - blocks_len - 1) as u32,
                discard_start: deal[blocks_len].into(),
            })
        }
        Ev::InitialChosen { seat, slot } => Kind::InitialChosen(pb::InitialChosen {
            seat: seat.into(),
            slot: to_slot(slot),
        }),
        Ev::InitialRevealed {
            cards: ref revealed,
            len,
        } => Kind::InitialRevealed(pb::InitialRevealed {
            cards: revealed[..len as usize]
                .iter()
                .map(|card| pb::Card {
                    slot: to_slot(card.slot),
                    value: card.value.into(),
                })
                .collect(),
        }),
        Ev::Reshuffled {
            ref draw_pile,
            draw_pile_size,
            discard_top,
        } => Kind::Reshuffled(pb::Reshuffled {
            draw_pile: values(&draw_pile[..draw_pile_size as usize]),
            draw_pile_size: draw_pile_size.into(),
            discard_top: discard_top.into(),
        }),
        Ev::Drawn {
            seat,
            value,
            knock_eligible,
        } => Kind::Drawn(pb::Drawn {
            seat: seat.into(),
            value: value.into(),
            knock_eligible: seat_list(knock_eligible),
        }),
        Ev::TookDiscard { seat, value } => Kind::TookDiscard(pb::TookDiscard {
            seat: seat.into(),
            value: value.into(),
        }),
        Ev::KnockAnswered { seat, answer } => Kind::KnockAnswered(pb::KnockAnswered {
            seat: seat.into(),
            answer: answer.into(),
        }),
        Ev::KnockWindowClosed { knockers } => Kind::KnockWindowClosed(pb::KnockWindowClosed {
            knockers: seat_list(knockers),
        }),
        Ev::KnockAccepted { seat, knocker } => Kind::KnockAccepted(pb::KnockAccepted {
            seat: seat.into(),
            knocker: knocker.into(),
        }),
        Ev::KnocksRefused { seat } => Kind::KnocksRefused(pb::KnocksRefused { seat: seat.into() }),
        Ev::Kept {
            seat,
            slot,
            placed,
            removed,
        } => Kind::Kept(pb::Kept {
            seat: seat.into(),
            slot: to_slot(slot),
            placed: placed.into(),
            removed: removed.into(),
        }),
        Ev::DiscardedAndRevealed {
            seat,
            discarded,
            slot,
            revealed,
        } => Kind::DiscardedAndRevealed(pb::DiscardedAndRevealed {
            seat: seat.into(),
            discarded: discarded.into(),
            slot: to_slot(slot),
            revealed: revealed.into(),
        }),
        Ev::KnockerSwapped {
            knocker,
            slot,
            placed,
            removed,
            removed_was_face_up,
        } => Kind::KnockerSwapped(pb::KnockerSwapped {
            knocker: knocker.into(),
            slot: to_slot(slot),
            placed: placed.into(),
            removed: Some(removed.into()),
            removed_was_face_up,
        }),
        Ev::TripleDiscarded { seat, cells, value } => Kind::TripleDiscarded(pb::TripleDiscarded {
            seat: seat.into(),
            cells: cells.iter().map(|&cell| wire_slot(cell)).collect(),
            value: value.into(),
        }),
        Ev::TriplesEnded { seat, automatic } => Kind::TriplesEnded(pb::TriplesEnded {
            seat: seat.into(),
            automatic,
        }),
        Ev::TookFromKnocker {
            seat,
            knocker,
            slot,
            value,
        } => Kind::TookFromKnocker(pb::TookFromKnocker {
            seat: seat.into(),
            knocker: knocker.into(),
            slot: to_slot(slot),
            value: value.into(),
        }),
        Ev::ReturnSwapped {
            seat,
            slot,
            placed,
            removed,
        } => Kind::ReturnSwapped(pb::ReturnSwapped {
            seat: seat.into(),
            slot: to_slot(slot),
            placed: placed.into(),
            removed: removed.into(),
        }),
        Ev::ExchangedCardDiscarded { seat, value } => {
            Kind::ExchangedCardDiscarded(pb::ExchangedCardDiscarded {
                seat: seat.into(),
                value: value.into(),
            })
        }
        Ev::HeldCardPlaced {
            knocker,
            slot,
            value,
        } => Kind::HeldCardPlaced(pb::HeldCardPlaced {
            knocker: knocker.into(),
            slot: to_slot(slot),
            value: value.into(),
        }),
        Ev::HeldCardDiscarded { knocker, value } => {
            Kind::HeldCardDiscarded(pb::HeldCardDiscarded {
                knocker: knocker.into(),
                value: value.into(),
            })
        }
        Ev::EmptyPassed { seat } => Kind::EmptyPassed(pb::EmptyPassed { seat: seat.into() }),
        Ev::TurnEnded {
            seat,
            closed,
            round_over,
            next_player,
        } => Kind::TurnEnded(pb::TurnEnded {
            seat: seat.into(),
            closed,
            round_over,
            next_player: next_player.into(),
        }),
        Ev::RoundScored(ref scored) => {
            let seats = (scored.seats as usize).min(8);
            let per_seat = |scores: &[i32; 8]| -> Vec<i64> {
                scores[..seats].iter().map(|&v| v.into()).collect()
            };
            Kind::RoundScored(pb::RoundScored {
                round: scored.round,
                revealed: (0..96u8)
                    .filter(|&slot| scored.revealed >> slot & 1 == 1)
                    .map(|slot| pb::Card {
                        slot: to_slot(slot),
                        value: scored.revealed_values[slot as usize].into(),
                    })
                    .collect(),
                raw_scores: per_seat(&scored.raw_scores),
                round_scores: per_seat(&scored.round_scores),
                totals: per_seat(&scored.totals),
                closer: scored.closer.into(),
                closer_doubled: scored.closer_doubled,
                match_over: scored.match_over,
                winners: seat_list(scored.winners),
            })
        }
        Ev::MatchAborted { turns } => Kind::MatchAborted(pb::MatchAborted { turns }),
        Ev::Forfeited { seat, winners } => Kind::Forfeited(pb::Forfeited {
            seat: seat.into(),
            winners: seat_list(winners),
        }),
    };
    pb::Event { kind: Some(kind) }
}

/// A card value read back from an event.
fn event_card(value: i32) -> CoreResult<i8> {
    if (-2..=12).contains(&value) {
        Ok(value as i8)
    } else {
        Err(CoreError::corrupt("card value"))
    }
}

fn event_slot(slot: &Option<pb::Slot>) -> CoreResult<u8> {
    slot.as_ref()
        .and_then(|slot| slot_index(slot, 8))
        .ok_or_else(|| CoreError::corrupt("slot"))
}

fn event_seat(seat: u32) -> CoreResult<u8> {
    if seat < 8 {
        Ok(seat as u8)
    } else {
        Err(CoreError::corrupt("seat"))
    }
}

pub(super) fn pb_to_ev(event: &pb::Event) -> CoreResult<Ev> {
    use pb::event::Kind;
    let (card, seat, slot) = (event_card, event_seat, event_slot);
    Ok(match &event.kind {
        None => return Err(CoreError::corrupt("empty event")),
        Some(Kind::Dealt(dealt)) => {
            let blocks_len = dealt.blocks.len();
            if blocks_len % 12 != 0
                || blocks_len > 96
                || blocks_len + 1 + dealt.draw_pile.len() != DECK_SIZE
            {
                return Err(CoreError::corrupt("deal sizes"));
            }
            let mut cards = [0i8; DECK_SIZE];
            let deal = dealt
                .blocks
                .iter()
                .chain([&dealt.discard_start])
                .chain(&dealt.draw_pile);
            for (k, &value) in deal.enumerate() {
                cards[k] = card(value)?;
            }
            Ev::Dealt {
                round: dealt.round,
                dealer: seat(dealt.dealer)?,
                blocks_len: blocks_len as u8,
                cards,
            }
        }
        Some(Kind::InitialChosen(chosen)) => Ev::InitialChosen {
            seat: seat(chosen.seat)?,
            slot: slot(&chosen.slot)?,
        },
        Some(Kind::InitialRevealed(revealed)) => {
            if revealed.cards.len() > 16 {
                return Err(CoreError::corrupt("initial reveal size"));
            }
            let mut cards = [Card::default(); 16];
            for (k, flipped) in revealed.cards.iter().enumerate() {
                cards[k] = Card {
                    slot: slot(&flipped.slot)?,
                    value: card(flipped.value)?,
                };
            }
            Ev::InitialRevealed {
                cards,
                len: revealed.cards.len() as u8,
            }
        }
        Some(Kind::Reshuffled(reshuffled)) => {
            if reshuffled.draw_pile.len() >= DECK_SIZE {
                return Err(CoreError::corrupt("reshuffle size"));
            }
            let mut draw_pile = [0i8; DECK_SIZE];
            for (k, &value) in reshuffled.draw_pile.iter().enumerate() {
                draw_pile[k] = card(value)?;
            }
            Ev::Reshuffled {
                draw_pile,
                draw_pile_size: reshuffled.draw_pile.len() as u8,
                discard_top: card(reshuffled.discard_top)?,
            }
        }
        Some(Kind::Drawn(drawn)) => Ev::Drawn {
            seat: seat(drawn.seat)?,
            value: card(drawn.value)?,
            knock_eligible: seat_mask(&drawn.knock_eligible)?,
        },
        Some(Kind::TookDiscard(took)) => Ev::TookDiscard {
            seat: seat(took.seat)?,
            value: card(took.value)?,
        },
        Some(Kind::KnockAnswered(answered)) => Ev::KnockAnswered {
            seat: seat(answered.seat)?,
            answer: match pb::KnockAnswer::try_from(answered.answer) {
                Ok(answer @ (pb::KnockAnswer::Knock | pb::KnockAnswer::Pass)) => answer,
                _ => return Err(CoreError::corrupt("sealed knock answer")),
            },
        },
        Some(Kind::KnockWindowClosed(closed)) => Ev::KnockWindowClosed {
            knockers: seat_mask(&closed.knockers)?,
        },
        Some(Kind::KnockAccepted(accepted)) => Ev::KnockAccepted {
            seat: seat(accepted.seat)?,
            knocker: seat(accepted.knocker)?,
        },
        Some(Kind::KnocksRefused(refused)) => Ev::KnocksRefused {
            seat: seat(refused.seat)?,
        },
        Some(Kind::Kept(kept)) => Ev::Kept {
            seat: seat(kept.seat)?,
            slot: slot(&kept.slot)?,
            placed: card(kept.placed)?,
            removed: card(kept.removed)?,
        },
        Some(Kind::DiscardedAndRevealed(discarded)) => Ev::DiscardedAndRevealed {
            seat: seat(discarded.seat)?,
            discarded: card(discarded.discarded)?,
            slot: slot(&discarded.slot)?,
            revealed: card(discarded.revealed)?,
        },
        Some(Kind::KnockerSwapped(swapped)) => Ev::KnockerSwapped {
            knocker: seat(swapped.knocker)?,
            slot: slot(&swapped.slot)?,
            placed: card(swapped.placed)?,
            removed: card(
                swapped
                    .removed
                    .ok_or_else(|| CoreError::corrupt("redacted held card"))?,
            )?,
            removed_was_face_up: swapped.removed_was_face_up,
        },
        Some(Kind::TripleDiscarded(triple)) => {
            if triple.cells.len() != 3 {
                return Err(CoreError::corrupt("triple size"));
            }
            let cell = |k: usize| slot(&Some(triple.cells[k]));
            Ev::TripleDiscarded {
                seat: seat(triple.seat)?,
                cells: [cell(0)?, cell(1)?, cell(2)?],
                value: card(triple.value)?,
            }
        }
        Some(Kind::TriplesEnded(ended)) => Ev::TriplesEnded {
            seat: seat(ended.seat)?,
            automatic: ended.automatic,
        },
        Some(Kind::TookFromKnocker(took)) => Ev::TookFromKnocker {
            seat: seat(took.seat)?,
            knocker: seat(took.knocker)?,
            slot: slot(&took.slot)?,
            value: card(took.value)?,
        },
        Some(Kind::ReturnSwapped(swapped)) => Ev::ReturnSwapped {
            seat: seat(swapped.seat)?,
            slot: slot(&swapped.slot)?,
            placed: card(swapped.placed)?,
            removed: card(swapped.removed)?,
        },
        Some(Kind::ExchangedCardDiscarded(discarded)) => Ev::ExchangedCardDiscarded {
            seat: seat(discarded.seat)?,
            value: card(discarded.value)?,
        },
        Some(Kind::HeldCardPlaced(placed)) => Ev::HeldCardPlaced {
            knocker: seat(placed.knocker)?,
            slot: slot(&placed.slot)?,
            value: card(placed.value)?,
        },
        Some(Kind::HeldCardDiscarded(discarded)) => Ev::HeldCardDiscarded {
            knocker: seat(discarded.knocker)?,
            value: card(discarded.value)?,
        },
        Some(Kind::EmptyPassed(passed)) => Ev::EmptyPassed {
            seat: seat(passed.seat)?,
        },
        Some(Kind::TurnEnded(ended)) => Ev::TurnEnded {
            seat: seat(ended.seat)?,
            closed: ended.closed,
            round_over: ended.round_over,
            next_player: seat(ended.next_player)?,
        },
        Some(Kind::RoundScored(scored)) => {
            let seats = scored.totals.len();
            if seats > 8 || scored.raw_scores.len() != seats || scored.round_scores.len() != seats {
                return Err(CoreError::corrupt("score sizes"));
            }
            let mut round_scored = RoundScored {
                seats: seats as u8,
                round: scored.round,
                revealed: 0,
                revealed_values: [0; 96],
                raw_scores: [0; 8],
                round_scores: [0; 8],
                totals: [0; 8],
                closer: seat(scored.closer)?,
                closer_doubled: scored.closer_doubled,
                match_over: scored.match_over,
                winners: seat_mask(&scored.winners)?,
            };
            for revealed in &scored.revealed {
                let index = slot(&revealed.slot)?;
                round_scored.revealed |= 1u128 << index;
                round_scored.revealed_values[index as usize] = card(revealed.value)?;
            }
            let score = |v: i64| i32::try_from(v).map_err(|_| CoreError::corrupt("score"));
            for k in 0..seats {
                round_scored.raw_scores[k] = score(scored.raw_scores[k])?;
                round_scored.round_scores[k] = score(scored.round_scores[k])?;
                round_scored.totals[k] = score(scored.totals[k])?;
            }
            Ev::RoundScored(Box::new(round_scored))
        }
        Some(Kind::MatchAborted(aborted)) => Ev::MatchAborted {
            turns: aborted.turns,
        },
        Some(Kind::Forfeited(forfeited)) => Ev::Forfeited {
            seat: u8::try_from(forfeited.seat).map_err(|_| CoreError::corrupt("forfeit seat"))?,
            winners: seat_mask(&forfeited.winners)?,
        },
    })
}
