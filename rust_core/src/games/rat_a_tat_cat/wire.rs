//! Rat-a-Tat Cat on the wire: the inline `SeatRow` message, action fields read in, and the
//! events a command builds (`Out`, applied to a scratch state as they are made).

use crate::error::{CoreError, CoreResult};
use crate::games::inline_cards::{inline_message, InlineCards};
use crate::proto::rat_a_tat_cat as pb;
use crate::rng::Rng;

use pb::event::Kind as E;

use super::state::apply_event;
use super::state::{
    full_deck, is_power, pbc, MatchMode, Phase, Pile, State, DECK, MAXP, NONE, REASONS, R_CAP,
};

/// `tablier.rat_a_tat_cat.v1.SeatRow` with its cards inline (see [`InlineCards`]): every deal
/// and every reveal holds one row per seat.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Debug)]
pub struct SeatRow {
    pub seat: u32,
    pub cards: InlineCards<4>,
}

inline_message!(SeatRow { 1 => seat, 2 => cards });

pub(super) fn slot_of(v: u32) -> CoreResult<usize> {
    if (1..=4).contains(&v) {
        Ok(v as usize - 1)
    } else {
        Err(CoreError::malformed(format!(
            "slot must be 1 to 4, not {v}"
        )))
    }
}

// ------------------------------------------------------------------ event construction helpers

/// A scratch state and the events that lead to it.
pub(super) struct Out<'a> {
    pub(super) s: &'a mut State,
    pub(super) events: &'a mut Vec<pb::Event>,
}

impl Out<'_> {
    /// Applies the event to the scratch state and records it.
    pub(super) fn emit(&mut self, kind: E) -> CoreResult<()> {
        let ev = pb::Event { kind: Some(kind) };
        apply_event::<false>(self.s, &ev)?;
        self.events.push(ev);
        Ok(())
    }

    /// Draws the top card into hand; reshuffles at once if that empties the pile (R7).
    fn draw(&mut self) -> CoreResult<u8> {
        let Some(card) = self.s.draw.top() else {
            return Err(CoreError::corrupt(
                "the draw pile is empty at a draw".to_string(),
            ));
        };
        let seat = self.s.current as u32;
        self.s.drew()?;
        let left = self.s.draw.len() as u32;
        self.events.push(pb::Event {
            kind: Some(E::CardDrawn(pb::CardDrawn {
                seat,
                card: pbc(card),
                draw_pile_size: left,
            })),
        });
        Ok(card)
    }

    fn reshuffle_if_empty(&mut self, rng: &mut Rng) -> CoreResult<()> {
        if self.s.draw.len() > 0 {
            return Ok(());
        }
        // At reveal, the card the emptying draw sent to the discard pile (its top) stays out
        // of the reshuffle and ends on top of the new discard pile (see `PileReshuffled`).
        let n = self.s.discard.len() - (self.s.phase == Phase::Reveal) as usize;
        let mut cards = self.s.discard.c;
        let cards = &mut cards[..n];
        if !cards.iter().any(|&c| c <= 9) {
            return Err(CoreError::corrupt(
                "no number card left to flip after a reshuffle".to_string(),
            ));
        }
        rng.shuffle32(cards);
        let mut flipped = Vec::new();
        while is_power(cards[0]) {
            flipped.push(pbc(cards[0]));
            rng.shuffle32(cards);
        }
        // Bottom first: the pile's top (the next card drawn) last.
        let draw: Vec<i32> = cards[1..].iter().rev().map(|&c| pbc(c)).collect();
        self.emit(E::PileReshuffled(pb::PileReshuffled {
            flipped_powers: flipped,
            discard_top: pbc(cards[0]),
            draw_pile_size: draw.len() as u32,
            draw_pile: draw,
        }))
    }

    pub(super) fn draw_and_refill(&mut self, rng: &mut Rng) -> CoreResult<u8> {
        let c = self.draw()?;
        self.reshuffle_if_empty(rng)?;
        Ok(c)
    }

    /// Shuffle and deal a round (section 3.2), with the initial peeks.
    pub(super) fn deal(&mut self, dealer: u8, rng: &mut Rng) -> CoreResult<()> {
        let mut deck = full_deck();
        rng.shuffle32(&mut deck);
        self.deal_deck(dealer, deck, rng)
    }

    /// Deals a shuffled deck (top first); `rng` only reshuffles after a power card is flipped.
    pub(super) fn deal_deck(
        &mut self,
        dealer: u8,
        mut deck: [u8; DECK],
        rng: &mut Rng,
    ) -> CoreResult<()> {
        let a = self.s.active_count();
        let mut order = [0u8; MAXP];
        let mut p = dealer;
        for o in order.iter_mut().take(a) {
            p = self.s.next_active(p);
            *o = p;
        }
        let mut rows = [[NONE; 4]; MAXP];
        // One card to each seat in turn, four times: card k goes to seat k % a, slot k / a.
        for (slot, round) in deck.chunks_exact(a).take(4).enumerate() {
            for (&p, &c) in order[..a].iter().zip(round) {
                rows[p as usize][slot] = c;
            }
        }
        let rest = &mut deck[4 * a..];
        let mut flipped = Vec::new();
        while is_power(rest[0]) {
            flipped.push(pbc(rest[0]));
            rng.shuffle32(rest);
        }
        // Bottom first: the pile's top (the next card drawn) last.
        let draw: Vec<i32> = rest[1..].iter().rev().map(|&c| pbc(c)).collect();
        // A filtered iterator has no exact size: size the vector once instead of growing it.
        let mut seat_rows: Vec<SeatRow> = Vec::with_capacity(a);
        seat_rows.extend(
            (0..self.s.n())
                .filter(|&p| self.s.is_active(p))
                .map(|p| SeatRow {
                    seat: p as u32,
                    cards: rows[p].map(pbc).into(),
                }),
        );
        let round = self.s.round + 1;
        let dealt = pb::RoundDealt {
            round,
            dealer: dealer as u32,
            first_player: order[0] as u32,
            rows: seat_rows,
            flipped_powers: flipped,
            discard_top: pbc(rest[0]),
            draw_pile_size: draw.len() as u32,
            draw_pile: draw,
        };
        // The table is set from the cards in hand rather than by reading them back from the
        // event (the conformance harness checks it equals applying the event).
        self.s.dealt(
            rows,
            Pile::from_top_first(&rest[1..])?,
            rest[0],
            dealer,
            round,
        )?;
        self.events.push(pb::Event {
            kind: Some(E::RoundDealt(dealt)),
        });
        for (p, row) in rows.iter().enumerate().take(self.s.n()) {
            if self.s.is_active(p) {
                self.s.initial_peek(p);
                self.events.push(pb::Event {
                    kind: Some(E::InitialPeek(pb::InitialPeek {
                        seat: p as u32,
                        slot1: pbc(row[0]),
                        slot4: pbc(row[3]),
                    })),
                });
            }
        }
        Ok(())
    }

    pub(super) fn end_turn(&mut self, rng: &mut Rng) -> CoreResult<()> {
        let seat = self.s.current;
        let (next, round_over, limit) = self.s.turn_end();
        self.events.push(pb::Event {
            kind: Some(E::TurnEnded(pb::TurnEnded {
                seat: seat as u32,
                next_seat: next as u32,
                round_over,
                turn_limit_reached: limit,
            })),
        });
        self.s.turn_ended(next, round_over);
        if round_over {
            self.finish_round(rng)
        } else if self.s.total_turns >= self.s.cfg.admin_turn_cap {
            let totals = self.s.totals[..self.s.n()].to_vec();
            self.emit(E::MatchEnded(pb::MatchEnded {
                winners: vec![],
                reason: REASONS[R_CAP as usize].into(),
                aborted: true,
                totals,
            }))
        } else {
            Ok(())
        }
    }

    fn finish_round(&mut self, rng: &mut Rng) -> CoreResult<()> {
        // Reveal, one draw per power card in a row, scoring, then the next deal with its peeks
        // (or the match end); reshuffles are rare and may still grow the vector. Asking for
        // what is needed keeps the allocation small (a large request costs more in malloc).
        let a = self.s.active_count();
        let powers = self.s.rows[..self.s.n()]
            .iter()
            .flatten()
            .filter(|&&c| is_power(c))
            .count();
        self.events.reserve(4 + powers + a);
        let mut rows: Vec<SeatRow> = Vec::with_capacity(a);
        rows.extend(
            (0..self.s.n())
                .filter(|&p| self.s.is_active(p))
                .map(|p| SeatRow {
                    seat: p as u32,
                    cards: self.s.rows[p].map(pbc).into(),
                }),
        );
        self.emit(E::RoundRevealed(pb::RoundRevealed { rows }))?;
        while let Some((p, slot)) = self.s.next_power() {
            let Some(card) = self.s.draw.top() else {
                return Err(CoreError::corrupt(
                    "the draw pile is empty at reveal".to_string(),
                ));
            };
            self.emit(E::RevealDraw(pb::RevealDraw {
                seat: p as u32,
                slot: slot as u32 + 1,
                card: pbc(card),
            }))?;
            self.reshuffle_if_empty(rng)?;
        }
        let mut scores = Vec::with_capacity(a);
        let mut eliminated = Vec::new();
        for p in 0..self.s.n() {
            if !self.s.is_active(p) {
                continue;
            }
            let r = self.s.row_score(p);
            let t = self.s.totals[p] + r;
            scores.push(pb::SeatScore {
                seat: p as u32,
                round_score: r,
                total_score: t,
            });
            if self.s.cfg.mode == MatchMode::Elimination && t >= self.s.cfg.point_limit {
                eliminated.push(p as u32);
            }
        }
        self.emit(E::RoundScored(pb::RoundScored {
            round: self.s.round,
            scores,
            eliminated,
        }))?;
        if let Some((w, reason)) = self.s.match_end() {
            let totals = self.s.totals[..self.s.n()].to_vec();
            self.emit(E::MatchEnded(pb::MatchEnded {
                winners: State::seat_list(w),
                reason: REASONS[reason as usize].into(),
                aborted: false,
                totals,
            }))
        } else {
            let dealer = self.s.next_active(self.s.dealer);
            self.deal(dealer, rng)
        }
    }
}
