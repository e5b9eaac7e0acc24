//! The protobuf boundary: actions to moves and back, events to the wire and back.

use crate::error::{CoreError, CoreResult};
use crate::proto::grid_knock as pb;

use super::events::{Ev, Move, Scoring};
use super::state::DECK_SIZE;

pub(super) fn pslot(s: u8) -> pb::Slot {
    pb::Slot {
        owner: (s / 12) as u32,
        row: (s % 12 / 4 + 1) as u32,
        col: (s % 4 + 1) as u32,
    }
}

fn slot_index(p: &pb::Slot, n: usize) -> Option<u8> {
    if (p.owner as usize) < n && (1..=3).contains(&p.row) && (1..=4).contains(&p.col) {
        Some((p.owner * 12 + (p.row - 1) * 4 + (p.col - 1)) as u8)
    } else {
        None
    }
}

fn action_slot(p: &Option<pb::Slot>, n: usize) -> CoreResult<u8> {
    match p {
        None => Err(CoreError::malformed("the action needs a slot")),
        Some(p) => slot_index(p, n).ok_or_else(|| {
            CoreError::malformed(format!(
                "slot (owner {}, row {}, col {}) does not exist: owner < {n}, row 1..3, col 1..4",
                p.owner, p.row, p.col
            ))
        }),
    }
}

pub(super) fn to_move(action: &pb::Action, n: usize) -> CoreResult<Move> {
    use pb::action::Kind as K;
    Ok(match &action.kind {
        None => return Err(CoreError::malformed("empty action")),
        Some(K::RevealInitial(a)) => Move::RevealInitial(action_slot(&a.slot, n)?),
        Some(K::DrawFromPile(_)) => Move::Draw,
        Some(K::TakeFromDiscard(_)) => Move::TakeDiscard,
        Some(K::Knock(_)) => Move::Knock,
        Some(K::PassKnock(_)) => Move::PassKnock,
        Some(K::AcceptKnock(a)) => {
            if a.knocker as usize >= n {
                return Err(CoreError::malformed(format!(
                    "seat {} is not in this match",
                    a.knocker
                )));
            }
            Move::Accept(a.knocker as u8)
        }
        Some(K::RefuseKnocks(_)) => Move::Refuse,
        Some(K::KeepSwap(a)) => Move::Keep(action_slot(&a.slot, n)?),
        Some(K::DiscardAndReveal(a)) => Move::DiscardReveal(action_slot(&a.slot, n)?),
        Some(K::KnockerSwap(a)) => Move::KnockerSwap(action_slot(&a.slot, n)?),
        Some(K::DiscardTriple(a)) => {
            let mut cells = Vec::with_capacity(a.cells.len());
            for c in &a.cells {
                cells.push(action_slot(&Some(*c), n)?);
            }
            if cells.len() != 3
                || cells[0] == cells[1]
                || cells[1] == cells[2]
                || cells[0] == cells[2]
            {
                Move::BadTriple
            } else {
                Move::Triple([cells[0], cells[1], cells[2]])
            }
        }
        Some(K::EndTriples(_)) => Move::EndTriples,
        Some(K::TakeFromKnocker(a)) => Move::Take(action_slot(&a.slot, n)?),
        Some(K::ReturnSwap(a)) => Move::Return(action_slot(&a.slot, n)?),
    })
}

pub(super) fn to_action(mv: Move) -> pb::Action {
    use pb::action::Kind as K;
    let s = |s: u8| Some(pslot(s));
    let kind = match mv {
        Move::RevealInitial(x) => K::RevealInitial(pb::RevealInitial { slot: s(x) }),
        Move::Draw => K::DrawFromPile(pb::DrawFromPile {}),
        Move::TakeDiscard => K::TakeFromDiscard(pb::TakeFromDiscard {}),
        Move::Knock => K::Knock(pb::Knock {}),
        Move::PassKnock => K::PassKnock(pb::PassKnock {}),
        Move::Accept(k) => K::AcceptKnock(pb::AcceptKnock { knocker: k as u32 }),
        Move::Refuse => K::RefuseKnocks(pb::RefuseKnocks {}),
        Move::Keep(x) => K::KeepSwap(pb::KeepSwap { slot: s(x) }),
        Move::DiscardReveal(x) => K::DiscardAndReveal(pb::DiscardAndReveal { slot: s(x) }),
        Move::KnockerSwap(x) => K::KnockerSwap(pb::KnockerSwap { slot: s(x) }),
        Move::Triple(c) => K::DiscardTriple(pb::DiscardTriple {
            cells: c.iter().map(|&x| pslot(x)).collect(),
        }),
        Move::BadTriple => K::DiscardTriple(pb::DiscardTriple { cells: vec![] }),
        Move::EndTriples => K::EndTriples(pb::EndTriples {}),
        Move::Take(x) => K::TakeFromKnocker(pb::TakeFromKnocker { slot: s(x) }),
        Move::Return(x) => K::ReturnSwap(pb::ReturnSwap { slot: s(x) }),
    };
    pb::Action { kind: Some(kind) }
}

pub(super) fn mask_list(m: u8) -> Vec<u32> {
    (0..8).filter(|i| m >> i & 1 == 1).collect()
}

fn list_mask(l: &[u32]) -> CoreResult<u8> {
    let mut m = 0u8;
    for &i in l {
        if i >= 8 || m >> i & 1 == 1 {
            return Err(CoreError::corrupt("seat list"));
        }
        m |= 1 << i;
    }
    Ok(m)
}

pub(super) fn ev_to_pb(ev: &Ev) -> pb::Event {
    use pb::event::Kind as K;
    let i = |v: i8| v as i32;
    let kind = match ev {
        Ev::Dealt {
            round,
            dealer,
            nblock,
            cards,
        } => {
            let nb = *nblock as usize;
            K::Dealt(pb::Dealt {
                round: *round,
                dealer: *dealer as u32,
                first_player: ((*dealer as usize + 1) % (nb / 12).max(1)) as u32,
                blocks: cards[..nb].iter().map(|&v| i(v)).collect(),
                draw_pile: cards[nb + 1..].iter().map(|&v| i(v)).collect(),
                draw_pile_size: (DECK_SIZE - nb - 1) as u32,
                discard_start: i(cards[nb]),
            })
        }
        Ev::InitialChosen { seat, slot } => K::InitialChosen(pb::InitialChosen {
            seat: *seat as u32,
            slot: Some(pslot(*slot)),
        }),
        Ev::InitialRevealed { slots, vals, len } => K::InitialRevealed(pb::InitialRevealed {
            cards: (0..*len as usize)
                .map(|k| pb::Card {
                    slot: Some(pslot(slots[k])),
                    value: i(vals[k]),
                })
                .collect(),
        }),
        Ev::Reshuffled { pile, len, top } => K::Reshuffled(pb::Reshuffled {
            draw_pile: pile[..*len as usize].iter().map(|&v| i(v)).collect(),
            draw_pile_size: *len as u32,
            discard_top: i(*top),
        }),
        Ev::Drawn {
            seat,
            value,
            eligible,
        } => K::Drawn(pb::Drawn {
            seat: *seat as u32,
            value: i(*value),
            knock_eligible: mask_list(*eligible),
        }),
        Ev::TookDiscard { seat, value } => K::TookDiscard(pb::TookDiscard {
            seat: *seat as u32,
            value: i(*value),
        }),
        Ev::KnockAnswered { seat, knock } => K::KnockAnswered(pb::KnockAnswered {
            seat: *seat as u32,
            answer: if *knock {
                pb::KnockAnswer::Knock
            } else {
                pb::KnockAnswer::Pass
            } as i32,
        }),
        Ev::KnockClosed { knockers } => K::KnockWindowClosed(pb::KnockWindowClosed {
            knockers: mask_list(*knockers),
        }),
        Ev::Accepted { seat, knocker } => K::KnockAccepted(pb::KnockAccepted {
            seat: *seat as u32,
            knocker: *knocker as u32,
        }),
        Ev::Refused { seat } => K::KnocksRefused(pb::KnocksRefused { seat: *seat as u32 }),
        Ev::Kept {
            seat,
            slot,
            placed,
            removed,
        } => K::Kept(pb::Kept {
            seat: *seat as u32,
            slot: Some(pslot(*slot)),
            placed: i(*placed),
            removed: i(*removed),
        }),
        Ev::DiscardedRevealed {
            seat,
            discarded,
            slot,
            revealed,
        } => K::DiscardedAndRevealed(pb::DiscardedAndRevealed {
            seat: *seat as u32,
            discarded: i(*discarded),
            slot: Some(pslot(*slot)),
            revealed: i(*revealed),
        }),
        Ev::KnockerSwapped {
            knocker,
            slot,
            placed,
            removed,
            removed_up,
        } => K::KnockerSwapped(pb::KnockerSwapped {
            knocker: *knocker as u32,
            slot: Some(pslot(*slot)),
            placed: i(*placed),
            removed: Some(i(*removed)),
            removed_was_face_up: *removed_up,
        }),
        Ev::Triple { seat, cells, value } => K::TripleDiscarded(pb::TripleDiscarded {
            seat: *seat as u32,
            cells: cells.iter().map(|&s| pslot(s)).collect(),
            value: i(*value),
        }),
        Ev::TriplesEnded { seat, auto } => K::TriplesEnded(pb::TriplesEnded {
            seat: *seat as u32,
            automatic: *auto,
        }),
        Ev::Taken {
            seat,
            knocker,
            slot,
            value,
        } => K::TookFromKnocker(pb::TookFromKnocker {
            seat: *seat as u32,
            knocker: *knocker as u32,
            slot: Some(pslot(*slot)),
            value: i(*value),
        }),
        Ev::Returned {
            seat,
            slot,
            placed,
            removed,
        } => K::ReturnSwapped(pb::ReturnSwapped {
            seat: *seat as u32,
            slot: Some(pslot(*slot)),
            placed: i(*placed),
            removed: i(*removed),
        }),
        Ev::WDiscarded { seat, value } => K::ExchangedCardDiscarded(pb::ExchangedCardDiscarded {
            seat: *seat as u32,
            value: i(*value),
        }),
        Ev::YPlaced {
            knocker,
            slot,
            value,
        } => K::HeldCardPlaced(pb::HeldCardPlaced {
            knocker: *knocker as u32,
            slot: Some(pslot(*slot)),
            value: i(*value),
        }),
        Ev::YDiscarded { knocker, value } => K::HeldCardDiscarded(pb::HeldCardDiscarded {
            knocker: *knocker as u32,
            value: i(*value),
        }),
        Ev::EmptyPassed { seat } => K::EmptyPassed(pb::EmptyPassed { seat: *seat as u32 }),
        Ev::TurnEnded {
            seat,
            closed,
            round_over,
            next,
        } => K::TurnEnded(pb::TurnEnded {
            seat: *seat as u32,
            closed: *closed,
            round_over: *round_over,
            next_player: *next as u32,
        }),
        Ev::RoundScored(sc) => {
            let seats = (sc.seats as usize).min(8);
            K::RoundScored(pb::RoundScored {
                round: sc.round,
                revealed: (0..96u8)
                    .filter(|&s| sc.revealed >> s & 1 == 1)
                    .map(|s| pb::Card {
                        slot: Some(pslot(s)),
                        value: i(sc.vals[s as usize]),
                    })
                    .collect(),
                raw_scores: sc.raw[..seats].iter().map(|&v| v as i64).collect(),
                round_scores: sc.scores[..seats].iter().map(|&v| v as i64).collect(),
                totals: sc.totals[..seats].iter().map(|&v| v as i64).collect(),
                closer: sc.closer as u32,
                closer_doubled: sc.doubled,
                match_over: sc.over,
                winners: mask_list(sc.winners),
            })
        }
        Ev::Aborted { turns } => K::MatchAborted(pb::MatchAborted { turns: *turns }),
        Ev::Forfeited { seat, winners } => K::Forfeited(pb::Forfeited { seat: *seat as u32, winners: mask_list(*winners) }),
    };
    pb::Event { kind: Some(kind) }
}

fn int_card(v: i32) -> CoreResult<i8> {
    if (-2..=12).contains(&v) {
        Ok(v as i8)
    } else {
        Err(CoreError::corrupt("card value"))
    }
}

fn ev_slot(p: &Option<pb::Slot>) -> CoreResult<u8> {
    p.as_ref()
        .and_then(|p| slot_index(p, 8))
        .ok_or_else(|| CoreError::corrupt("slot"))
}

fn ev_seat(s: u32) -> CoreResult<u8> {
    if s < 8 {
        Ok(s as u8)
    } else {
        Err(CoreError::corrupt("seat"))
    }
}

pub(super) fn pb_to_ev(e: &pb::Event) -> CoreResult<Ev> {
    use pb::event::Kind as K;
    let c = int_card;
    Ok(match &e.kind {
        None => return Err(CoreError::corrupt("empty event")),
        Some(K::Dealt(d)) => {
            let nb = d.blocks.len();
            if nb % 12 != 0 || nb > 96 || nb + 1 + d.draw_pile.len() != DECK_SIZE {
                return Err(CoreError::corrupt("deal sizes"));
            }
            let mut cards = [0i8; DECK_SIZE];
            for (k, &v) in d
                .blocks
                .iter()
                .chain(std::iter::once(&d.discard_start))
                .chain(d.draw_pile.iter())
                .enumerate()
            {
                cards[k] = c(v)?;
            }
            Ev::Dealt {
                round: d.round,
                dealer: ev_seat(d.dealer)?,
                nblock: nb as u8,
                cards,
            }
        }
        Some(K::InitialChosen(x)) => Ev::InitialChosen {
            seat: ev_seat(x.seat)?,
            slot: ev_slot(&x.slot)?,
        },
        Some(K::InitialRevealed(x)) => {
            if x.cards.len() > 16 {
                return Err(CoreError::corrupt("initial reveal size"));
            }
            let mut slots = [0u8; 16];
            let mut vals = [0i8; 16];
            for (k, card) in x.cards.iter().enumerate() {
                slots[k] = ev_slot(&card.slot)?;
                vals[k] = c(card.value)?;
            }
            Ev::InitialRevealed {
                slots,
                vals,
                len: x.cards.len() as u8,
            }
        }
        Some(K::Reshuffled(x)) => {
            if x.draw_pile.len() >= DECK_SIZE {
                return Err(CoreError::corrupt("reshuffle size"));
            }
            let mut pile = [0i8; DECK_SIZE];
            for (k, &v) in x.draw_pile.iter().enumerate() {
                pile[k] = c(v)?;
            }
            Ev::Reshuffled {
                pile,
                len: x.draw_pile.len() as u8,
                top: c(x.discard_top)?,
            }
        }
        Some(K::Drawn(x)) => Ev::Drawn {
            seat: ev_seat(x.seat)?,
            value: c(x.value)?,
            eligible: list_mask(&x.knock_eligible)?,
        },
        Some(K::TookDiscard(x)) => Ev::TookDiscard {
            seat: ev_seat(x.seat)?,
            value: c(x.value)?,
        },
        Some(K::KnockAnswered(x)) => Ev::KnockAnswered {
            seat: ev_seat(x.seat)?,
            knock: match pb::KnockAnswer::try_from(x.answer) {
                Ok(pb::KnockAnswer::Knock) => true,
                Ok(pb::KnockAnswer::Pass) => false,
                _ => return Err(CoreError::corrupt("sealed knock answer")),
            },
        },
        Some(K::KnockWindowClosed(x)) => Ev::KnockClosed {
            knockers: list_mask(&x.knockers)?,
        },
        Some(K::KnockAccepted(x)) => Ev::Accepted {
            seat: ev_seat(x.seat)?,
            knocker: ev_seat(x.knocker)?,
        },
        Some(K::KnocksRefused(x)) => Ev::Refused {
            seat: ev_seat(x.seat)?,
        },
        Some(K::Kept(x)) => Ev::Kept {
            seat: ev_seat(x.seat)?,
            slot: ev_slot(&x.slot)?,
            placed: c(x.placed)?,
            removed: c(x.removed)?,
        },
        Some(K::DiscardedAndRevealed(x)) => Ev::DiscardedRevealed {
            seat: ev_seat(x.seat)?,
            discarded: c(x.discarded)?,
            slot: ev_slot(&x.slot)?,
            revealed: c(x.revealed)?,
        },
        Some(K::KnockerSwapped(x)) => Ev::KnockerSwapped {
            knocker: ev_seat(x.knocker)?,
            slot: ev_slot(&x.slot)?,
            placed: c(x.placed)?,
            removed: c(x.removed.ok_or_else(|| CoreError::corrupt("redacted held card"))?)?,
            removed_up: x.removed_was_face_up,
        },
        Some(K::TripleDiscarded(x)) => {
            if x.cells.len() != 3 {
                return Err(CoreError::corrupt("triple size"));
            }
            let cells = [
                ev_slot(&Some(x.cells[0]))?,
                ev_slot(&Some(x.cells[1]))?,
                ev_slot(&Some(x.cells[2]))?,
            ];
            Ev::Triple {
                seat: ev_seat(x.seat)?,
                cells,
                value: c(x.value)?,
            }
        }
        Some(K::TriplesEnded(x)) => Ev::TriplesEnded {
            seat: ev_seat(x.seat)?,
            auto: x.automatic,
        },
        Some(K::TookFromKnocker(x)) => Ev::Taken {
            seat: ev_seat(x.seat)?,
            knocker: ev_seat(x.knocker)?,
            slot: ev_slot(&x.slot)?,
            value: c(x.value)?,
        },
        Some(K::ReturnSwapped(x)) => Ev::Returned {
            seat: ev_seat(x.seat)?,
            slot: ev_slot(&x.slot)?,
            placed: c(x.placed)?,
            removed: c(x.removed)?,
        },
        Some(K::ExchangedCardDiscarded(x)) => Ev::WDiscarded {
            seat: ev_seat(x.seat)?,
            value: c(x.value)?,
        },
        Some(K::HeldCardPlaced(x)) => Ev::YPlaced {
            knocker: ev_seat(x.knocker)?,
            slot: ev_slot(&x.slot)?,
            value: c(x.value)?,
        },
        Some(K::HeldCardDiscarded(x)) => Ev::YDiscarded {
            knocker: ev_seat(x.knocker)?,
            value: c(x.value)?,
        },
        Some(K::EmptyPassed(x)) => Ev::EmptyPassed {
            seat: ev_seat(x.seat)?,
        },
        Some(K::TurnEnded(x)) => Ev::TurnEnded {
            seat: ev_seat(x.seat)?,
            closed: x.closed,
            round_over: x.round_over,
            next: ev_seat(x.next_player)?,
        },
        Some(K::RoundScored(x)) => {
            let seats = x.totals.len();
            if seats > 8 || x.raw_scores.len() != seats || x.round_scores.len() != seats {
                return Err(CoreError::corrupt("score sizes"));
            }
            let mut sc = Scoring {
                seats: seats as u8,
                round: x.round,
                revealed: 0,
                vals: [0; 96],
                raw: [0; 8],
                scores: [0; 8],
                totals: [0; 8],
                closer: ev_seat(x.closer)?,
                doubled: x.closer_doubled,
                over: x.match_over,
                winners: list_mask(&x.winners)?,
            };
            for card in &x.revealed {
                let s = ev_slot(&card.slot)?;
                sc.revealed |= 1u128 << s;
                sc.vals[s as usize] = c(card.value)?;
            }
            let small = |v: i64| i32::try_from(v).map_err(|_| CoreError::corrupt("score"));
            for k in 0..seats {
                sc.raw[k] = small(x.raw_scores[k])?;
                sc.scores[k] = small(x.round_scores[k])?;
                sc.totals[k] = small(x.totals[k])?;
            }
            Ev::RoundScored(Box::new(sc))
        }
        Some(K::MatchAborted(x)) => Ev::Aborted { turns: x.turns },
        Some(K::Forfeited(x)) => Ev::Forfeited {
            seat: u8::try_from(x.seat).map_err(|_| CoreError::corrupt("forfeit seat"))?,
            winners: list_mask(&x.winners)?,
        },
    })
}
