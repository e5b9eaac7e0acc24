//! Rat-a-Tat Cat (Gamewright), per `docs/rules/rat_a_tat_cat.md` and its Dutch seed.
//!
//! 54 cards: numbers 0..=8 four times each, nine 9s, three each of Peek (PK), Swap (SW) and
//! Draw 2 (D2). Each active seat has a face-down row of four; on a turn it takes the face-up
//! discard (a number) into its row, or draws from the pile and keeps, discards or uses the card
//! (Peek one own card, blind Swap with another seat, Draw 2 chains). After any own turn a seat may
//! call "Rat-a-tat cat"; everyone else takes one more turn, rows are revealed, power cards in rows
//! are replaced by draws, and each row scores the sum of its numbers (lower is better).
//!
//! Representation: card codes `0..=9` are numbers, `10` PK, `11` SW, `12` D2 (protobuf `Card`
//! is code + 1). Piles are fixed arrays with the top at the end; rows are `[[u8; 4]; 6]`; what
//! each seat knows about each of the 24 row positions is one bitmask per seat. Slots are 1..4 in
//! the protocol and 0..3 inside. Cards carry no ids, so nothing can leak deck order across
//! shuffles.
//!
//! Knowledge (spec section 7, with the server rule): a seat's private observations (initial
//! peek, its drawn card, its peek results, the card it put into its row from the pile) reach
//! that seat alone, as private events in its redacted stream. Views show face-down cards face
//! down. With the table option `memory_aid=on`, a seat's view also lists the row values it
//! knows: its observations and the public log (cards taken from the discard pile), followed
//! through blind swaps (a card it knew keeps being known where the public log says it went);
//! nothing tells a seat the value of a card it never saw.
//!
//! Decisions taken here in the spec's style (section 8 settles everything else):
//!
//! - **AMB21, match formats offered.** `elimination` (default, `point_limit` 100),
//!   `fixed_rounds` (`rounds`, default 3) and `timed`: the operator gives the host command
//!   `stop_after_round` (a `stop_requested` event, public); the round in progress is completed,
//!   then the lowest total wins (co-winners on ties, reason `TIME_CALLED`). Without it a timed
//!   match goes on until the administrative cap.
//! - **AMB22, administrative cap.** The rules allow an endless round (R14). Besides the rules'
//!   optional `max_turns_per_round` safeguard (default off), a match stops after
//!   `admin_turn_cap` turns (default 20000): `MatchEnded{aborted: true, reason: ADMIN_TURN_CAP}`,
//!   no winners. This is not a rule result.
//! - **AMB23, end of turn after a call.** When a call exists, `END_OF_TURN` still waits for an
//!   explicit `end_turn` (TV14 lists it as the only legal move), rather than applying it.
//! - **AMB24, what a seat knows after a blind swap.** Knowledge follows the card: if the seat
//!   knew the card at a swapped position, it knows it at the new position; a swapped-in card it
//!   never saw stays unknown. This only affects the memory aid and the heuristic bot.
//! - **AMB25, initial peek event.** One `InitialPeek` per active seat, in seat order, right
//!   after `RoundDealt`; other viewers receive it as a stub without the values (its occurrence
//!   is public).

use std::fmt::Write as _;

use crate::error::{CoreError, CoreResult};
use crate::game::{Game, OptionSpec, OptionValues, Seat, Seats, Viewer};
use crate::games::inline_cards::{inline_message, InlineCards};
use crate::proto::rat_a_tat_cat as pb;
use crate::proto::Outcome;
use crate::rng::Rng;

use pb::action::Kind as A;
use pb::event::Kind as E;

/// `tablier.rat_a_tat_cat.v1.SeatRow` with its cards inline (see [`InlineCards`]): every deal
/// and every reveal holds one row per seat.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Debug)]
pub struct SeatRow {
    pub seat: u32,
    pub cards: InlineCards<4>,
}

inline_message!(SeatRow { 1 => seat, 2 => cards });

const MAXP: usize = 6;
const DECK: usize = 54;
pub const PK: u8 = 10;
pub const SW: u8 = 11;
pub const D2: u8 = 12;
const NONE: u8 = 255;
/// Copies of each card code in the deck.
const COUNTS: [u8; 13] = [4, 4, 4, 4, 4, 4, 4, 4, 4, 9, 3, 3, 3];
const CARD_HIDDEN_NUMBER: i32 = pb::Card::HiddenNumber as i32;
/// A card in a row that this viewer may not see (the row keeps its four positions).
const CARD_FACE_DOWN: i32 = pb::Card::FaceDown as i32;

const REASONS: [&str; 7] = [
    "",
    "LAST_PLAYER_STANDING",
    "ALL_ELIMINATED",
    "ROUNDS_COMPLETED",
    "ADMIN_TURN_CAP",
    "TIME_CALLED",
    "FORFEIT",
];
const R_LAST: u8 = 1;
const R_ALL: u8 = 2;
const R_ROUNDS: u8 = 3;
const R_CAP: u8 = 4;
const R_TIME: u8 = 5;
/// A timed-out seat forfeited (match clocks, docs/rules/rat_a_tat_cat.md §11).
const R_FORFEIT: u8 = 6;

#[inline]
fn is_power(c: u8) -> bool {
    (PK..=D2).contains(&c)
}
#[inline]
fn pbc(c: u8) -> i32 {
    if c <= D2 {
        c as i32 + 1
    } else {
        0
    }
}
#[inline]
fn from_pbc(v: i32) -> Option<u8> {
    if (1..=13).contains(&v) {
        Some((v - 1) as u8)
    } else {
        None
    }
}
fn card_name(c: u8) -> &'static str {
    const N: [&str; 13] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "PK", "SW", "D2"];
    N.get(c as usize).copied().unwrap_or("?")
}

fn full_deck() -> [u8; DECK] {
    let mut d = [0u8; DECK];
    let mut i = 0;
    for (code, &n) in COUNTS.iter().enumerate() {
        for _ in 0..n {
            d[i] = code as u8;
            i += 1;
        }
    }
    d
}

// ------------------------------------------------------------------ config and state

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchMode {
    Elimination,
    FixedRounds,
    Timed,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub seats: u8,
    pub mode: MatchMode,
    pub point_limit: u32,
    pub rounds: u32,
    /// 0 = off (R14).
    pub max_turns_per_round: u32,
    pub first_dealer: Option<u8>,
    pub memory_aid: bool,
    pub admin_turn_cap: u32,
}

/// A pile with its top at the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pile {
    c: [u8; DECK],
    n: u8,
}

impl Pile {
    const EMPTY: Pile = Pile { c: [0; DECK], n: 0 };
    #[inline]
    fn len(&self) -> usize {
        self.n as usize
    }
    #[inline]
    fn top(&self) -> Option<u8> {
        if self.n == 0 {
            None
        } else {
            Some(self.c[self.n as usize - 1])
        }
    }
    #[inline]
    fn push(&mut self, card: u8) -> CoreResult<()> {
        if self.len() >= DECK {
            return Err(CoreError::corrupt(format!("a pile would hold more than {DECK} cards")));
        }
        self.c[self.n as usize] = card;
        self.n += 1;
        Ok(())
    }
    #[inline]
    fn pop(&mut self) -> Option<u8> {
        let t = self.top()?;
        self.n -= 1;
        Some(t)
    }
    #[inline]
    fn cards(&self) -> &[u8] {
        &self.c[..self.n as usize]
    }
    /// Bottom first (the top last, as every pile in the schema), as protobuf cards.
    fn bottom_first_pb(&self) -> Vec<i32> {
        self.cards().iter().map(|&c| pbc(c)).collect()
    }
    /// From a top-first list.
    fn from_top_first(cards: &[u8]) -> CoreResult<Pile> {
        if cards.len() > DECK {
            return Err(CoreError::corrupt(format!("a pile of {} cards", cards.len())));
        }
        let mut p = Pile::EMPTY;
        for (i, &c) in cards.iter().rev().enumerate() {
            p.c[i] = c;
        }
        p.n = cards.len() as u8;
        Ok(p)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    NotStarted,
    TurnStart,
    Drawn,
    Draw2First,
    Draw2Second,
    Peek,
    Swap,
    EndOfTurn,
    /// A Draw 2 draw follows (card #1 or card #2); only between events.
    DrawingFirst,
    DrawingSecond,
    Reveal,
    RoundOver,
    Over,
}

impl Phase {
    fn holding(self) -> bool {
        matches!(self, Phase::Drawn | Phase::Draw2First | Phase::Draw2Second)
    }
    fn awaiting(self) -> bool {
        matches!(
            self,
            Phase::TurnStart
                | Phase::Drawn
                | Phase::Draw2First
                | Phase::Draw2Second
                | Phase::Peek
                | Phase::Swap
                | Phase::EndOfTurn
        )
    }
    fn to_pb(self) -> pb::Phase {
        match self {
            Phase::NotStarted => pb::Phase::NotStarted,
            Phase::TurnStart => pb::Phase::TurnStart,
            Phase::Drawn => pb::Phase::Drawn,
            Phase::Draw2First => pb::Phase::Draw2First,
            Phase::Draw2Second => pb::Phase::Draw2Second,
            Phase::Peek => pb::Phase::Peek,
            Phase::Swap => pb::Phase::Swap,
            Phase::EndOfTurn => pb::Phase::EndOfTurn,
            Phase::DrawingFirst | Phase::DrawingSecond => pb::Phase::Drawing,
            Phase::Reveal => pb::Phase::Reveal,
            Phase::RoundOver => pb::Phase::RoundOver,
            Phase::Over => pb::Phase::MatchOver,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct State {
    cfg: Config,
    phase: Phase,
    /// Rows of active seats; `NONE` for eliminated seats (and before the first deal).
    rows: [[u8; 4]; MAXP],
    draw: Pile,
    discard: Pile,
    /// Card in hand, or `NONE`.
    pending: u8,
    current: u8,
    dealer: u8,
    caller: u8,
    /// Bitmask of seats still in the match.
    active: u8,
    round: u32,
    turns_in_round: u32,
    total_turns: u32,
    totals: [u32; MAXP],
    last_scores: [u8; MAXP],
    last_rows: [[u8; 4]; MAXP],
    last_eliminated: u8,
    /// `known[v]` bit `4p + s`: seat v knows the card at (p, s).
    known: [u32; MAXP],
    revealed: bool,
    winners: u8,
    end_reason: u8,
    aborted: bool,
    /// Timed format: the host asked to stop after the round in progress.
    stop_requested: bool,
    /// Hand-built position of a test vector: the 54-card conservation check is off.
    test_mode: bool,
}

#[inline]
fn bit(p: usize, s: usize) -> u32 {
    1u32 << (4 * p + s)
}

impl State {
    #[inline]
    fn n(&self) -> usize {
        self.cfg.seats as usize
    }
    #[inline]
    fn is_active(&self, p: usize) -> bool {
        p < MAXP && self.active & (1 << p) != 0
    }
    fn active_count(&self) -> usize {
        self.active.count_ones() as usize
    }
    /// Next active seat clockwise after `from` (itself if it is the only one).
    fn next_active(&self, from: u8) -> u8 {
        let n = self.n();
        let mut p = from as usize;
        for _ in 0..n {
            p += 1;
            if p >= n {
                p = 0;
            }
            if self.is_active(p) {
                return p as u8;
            }
        }
        from
    }
    fn reveal_start(&self) -> u8 {
        if self.caller != NONE {
            self.caller
        } else {
            self.next_active(self.dealer)
        }
    }
    /// The next power card to replace at reveal: caller first (else left of the dealer),
    /// clockwise over active seats, slots 1 -> 4.
    fn next_power(&self) -> Option<(u8, u8)> {
        let n = self.n();
        let mut p = self.reveal_start() as usize;
        for _ in 0..n {
            if self.is_active(p) {
                let row = self.rows[p];
                if let Some(s) = row.iter().position(|&c| is_power(c)) {
                    return Some((p as u8, s as u8));
                }
            }
            p += 1;
            if p >= n {
                p = 0;
            }
        }
        None
    }
    /// The table after `card_drawn`: the top of the draw pile goes to the current seat's hand.
    fn drew(&mut self) -> CoreResult<()> {
        let next = match self.phase {
            Phase::TurnStart => Phase::Drawn,
            Phase::DrawingFirst => Phase::Draw2First,
            Phase::DrawingSecond => Phase::Draw2Second,
            _ => return Err(CoreError::corrupt(format!("card drawn in phase {:?}", self.phase))),
        };
        let Some(c) = self.draw.pop() else {
            return Err(CoreError::corrupt(format!("the draw pile is empty at a draw")))
        };
        self.pending = c;
        self.phase = next;
        Ok(())
    }
    /// The table after `initial_peek`: seat `p` knows its two outer cards.
    fn initial_peek(&mut self, p: usize) {
        self.known[p] |= bit(p, 0) | bit(p, 3);
    }
    /// How the current seat's turn ends: `(next seat, round over, turn limit reached)`.
    fn turn_end(&self) -> (u8, bool, bool) {
        let next = self.next_active(self.current);
        let (over, limit) = if self.caller != NONE {
            (next == self.caller, false)
        } else if self.cfg.max_turns_per_round > 0 && self.turns_in_round + 1 >= self.cfg.max_turns_per_round {
            (true, true)
        } else {
            (false, false)
        };
        (next, over, limit)
    }
    /// The table after `turn_ended`.
    fn turn_ended(&mut self, next: u8, over: bool) {
        self.turns_in_round += 1;
        self.total_turns += 1;
        if over {
            self.phase = Phase::Reveal;
            self.revealed = false;
        } else {
            self.current = next;
            self.phase = Phase::TurnStart;
        }
    }
    /// The table after a deal (`round_dealt`): rows, draw pile, the discard's first card.
    fn dealt(&mut self, rows: [[u8; 4]; MAXP], draw: Pile, top: u8, dealer: u8, round: u32) -> CoreResult<()> {
        self.rows = rows;
        self.draw = draw;
        self.discard = Pile::EMPTY;
        self.discard.push(top)?;
        self.pending = NONE;
        self.caller = NONE;
        self.dealer = dealer;
        self.current = self.next_active(dealer);
        self.round = round;
        self.turns_in_round = 0;
        self.known = [0; MAXP];
        self.revealed = false;
        self.last_eliminated = 0;
        self.test_mode = false;
        self.phase = Phase::TurnStart;
        Ok(())
    }
    fn row_score(&self, p: usize) -> u32 {
        self.rows[p].iter().map(|&c| if c <= 9 { c as u32 } else { 0 }).sum()
    }
    /// Whether the match ends after the round just scored: `(winners mask, reason)`.
    fn match_end(&self) -> Option<(u8, u8)> {
        let lowest = |mask: u8| -> u8 {
            let mut best = u32::MAX;
            let mut w = 0u8;
            for p in 0..self.n() {
                if mask & (1 << p) == 0 {
                    continue;
                }
                let t = self.totals[p];
                if t < best {
                    best = t;
                    w = 1 << p;
                } else if t == best {
                    w |= 1 << p;
                }
            }
            w
        };
        match self.cfg.mode {
            MatchMode::Elimination => match self.active_count() {
                1 => Some((self.active, R_LAST)),
                0 => Some((lowest(self.last_eliminated), R_ALL)),
                _ => None,
            },
            MatchMode::FixedRounds => {
                if self.round >= self.cfg.rounds {
                    Some((lowest(self.active), R_ROUNDS))
                } else {
                    None
                }
            }
            MatchMode::Timed => self.stop_requested.then(|| (lowest(self.active), R_TIME)),
        }
    }
    /// The winners when the seat to act forfeits (§11): the lowest total (§6.2) among the
    /// other seats still in the match; ties share the win.
    fn forfeit_winners(&self) -> u8 {
        let mut best = u32::MAX;
        let mut w = 0u8;
        for p in 0..self.n() {
            if p == self.current as usize || !self.is_active(p) {
                continue;
            }
            let t = self.totals[p];
            if t < best {
                (best, w) = (t, 1 << p);
            } else if t == best {
                w |= 1 << p;
            }
        }
        w
    }
    fn seat_list(mask: u8) -> Vec<u32> {
        (0..MAXP as u32).filter(|p| mask & (1 << p) != 0).collect()
    }

    /// A hand-built position (test vectors, property tests): rows per seat (all seats active),
    /// piles top first, `current` in `TURN_START`. The 54-card check is off.
    pub fn test_position(
        cfg: Config,
        rows: &[[u8; 4]],
        draw_top_first: &[u8],
        discard_top_first: &[u8],
        dealer: u8,
        current: u8,
    ) -> State {
        let mut s = RatATatCat::initial(&cfg);
        for (p, r) in rows.iter().enumerate().take(MAXP) {
            s.rows[p] = *r;
        }
        s.draw = Pile::from_top_first(draw_top_first).unwrap_or(Pile::EMPTY);
        s.discard = Pile::from_top_first(discard_top_first).unwrap_or(Pile::EMPTY);
        s.dealer = dealer;
        s.current = current;
        s.round = 1;
        s.phase = Phase::TurnStart;
        s.test_mode = true;
        s
    }
}

// ------------------------------------------------------------------ options

// ------------------------------------------------------------------ event construction helpers

/// A scratch state and the events that lead to it.
struct Out<'a> {
    s: &'a mut State,
    events: &'a mut Vec<pb::Event>,
}

impl Out<'_> {
    /// Applies the event to the scratch state and records it.
    fn emit(&mut self, kind: E) -> CoreResult<()> {
        let ev = pb::Event { kind: Some(kind) };
        apply_event::<false>(&mut self.s, &ev)?;
        self.events.push(ev);
        Ok(())
    }

    /// Draws the top card into hand; reshuffles at once if that empties the pile (R7).
    fn draw(&mut self) -> CoreResult<u8> {
        let Some(card) = self.s.draw.top() else {
            return Err(CoreError::corrupt(format!("the draw pile is empty at a draw")))
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
            return Err(CoreError::corrupt(format!("no number card left to flip after a reshuffle")));
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

    fn draw_and_refill(&mut self, rng: &mut Rng) -> CoreResult<u8> {
        let c = self.draw()?;
        self.reshuffle_if_empty(rng)?;
        Ok(c)
    }

    /// Shuffle and deal a round (section 3.2), with the initial peeks.
    fn deal(&mut self, dealer: u8, rng: &mut Rng) -> CoreResult<()> {
        let mut deck = full_deck();
        rng.shuffle32(&mut deck);
        self.deal_deck(dealer, deck, rng)
    }

    /// Deals a shuffled deck (top first); `rng` only reshuffles after a power card is flipped.
    fn deal_deck(&mut self, dealer: u8, mut deck: [u8; DECK], rng: &mut Rng) -> CoreResult<()> {
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
        seat_rows.extend((0..self.s.n()).filter(|&p| self.s.is_active(p)).map(|p| SeatRow {
            seat: p as u32,
            cards: rows[p].map(pbc).into(),
        }));
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
        self.s.dealt(rows, Pile::from_top_first(&rest[1..])?, rest[0], dealer, round)?;
        self.events.push(pb::Event { kind: Some(E::RoundDealt(dealt)) });
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

    fn end_turn(&mut self, rng: &mut Rng) -> CoreResult<()> {
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
        let powers = self.s.rows[..self.s.n()].iter().flatten().filter(|&&c| is_power(c)).count();
        self.events.reserve(4 + powers + a);
        let mut rows: Vec<SeatRow> = Vec::with_capacity(a);
        rows.extend((0..self.s.n()).filter(|&p| self.s.is_active(p)).map(|p| SeatRow {
            seat: p as u32,
            cards: self.s.rows[p].map(pbc).into(),
        }));
        self.emit(E::RoundRevealed(pb::RoundRevealed { rows }))?;
        while let Some((p, slot)) = self.s.next_power() {
            let Some(card) = self.s.draw.top() else {
                return Err(CoreError::corrupt(format!("the draw pile is empty at reveal")))
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

/// A pile from a top-first protobuf list, counting its cards into `counts`.
/// A pile from its protobuf cards, bottom first (the top last).
fn pile_from_pb(cards: &[i32], counts: &mut [u8; 13]) -> CoreResult<Pile> {
    if cards.len() > DECK {
        return Err(CoreError::corrupt(format!("a pile of {} cards", cards.len())));
    }
    let mut p = Pile::EMPTY;
    for (i, &v) in cards.iter().enumerate() {
        let Some(c) = from_pbc(v) else {
            return Err(CoreError::corrupt(format!("card value {v} is not a card")))
        };
        counts[c as usize] = counts[c as usize].saturating_add(1);
        p.c[i] = c;
    }
    p.n = cards.len() as u8;
    Ok(p)
}

fn slot_of(v: u32) -> CoreResult<usize> {
    if (1..=4).contains(&v) {
        Ok(v as usize - 1)
    } else {
        Err(CoreError::malformed(format!("slot must be 1 to 4, not {v}")))
    }
}

fn wrong_phase(what: &str, phase: Phase) -> CoreError {
    CoreError::rule(
        "WRONG_PHASE",
        format!("{what} is not possible now (phase {:?})", phase.to_pb()),
    )
}

/// Applies one event. With `CHECK` every recorded result is compared with the table and a
/// mismatch is `Corrupt` (stored events, `evolve`). Without it the comparisons are skipped: that
/// is for the scratch state inside `decide`, whose events were built from that very state one
/// line earlier, so checking them again only doubled the cost of every command; the caller's
/// `evolve` still checks them.
fn apply_event<const CHECK: bool>(s: &mut State, event: &pb::Event) -> CoreResult<()> {
    let Some(kind) = event.kind.as_ref() else {
        return Err(CoreError::corrupt(format!("event without kind")))
    };
    let n = s.n();
    let card = |v: i32| -> CoreResult<u8> {
        match from_pbc(v) {
            Some(c) => Ok(c),
            None => return Err(CoreError::corrupt(format!("card value {v} is not a card"))),
        }
    };
    let actor = |seat: u32, s: &State| -> CoreResult<usize> {
        if CHECK && (seat as usize >= n || seat != s.current as u32) {
            return Err(CoreError::corrupt(format!("seat {seat} acts but seat {} is current", s.current)));
        }
        Ok(seat as usize)
    };
    let slot = |v: u32| -> CoreResult<usize> {
        if (1..=4).contains(&v) {
            Ok(v as usize - 1)
        } else {
            return Err(CoreError::corrupt(format!("slot {v}")))
        }
    };
    match kind {
        E::RoundDealt(e) => {
            let between = s.phase == Phase::RoundOver && s.match_end().is_none();
            if CHECK && (!(s.phase == Phase::NotStarted || between)) {
                return Err(CoreError::corrupt(format!("a deal in phase {:?}", s.phase)));
            }
            if CHECK && (e.round != s.round + 1) {
                return Err(CoreError::corrupt(format!("round {} dealt after round {}", e.round, s.round)));
            }
            let dealer = e.dealer as usize;
            if CHECK && (dealer >= n || (s.phase != Phase::NotStarted && e.dealer as u8 != s.next_active(s.dealer))) {
                return Err(CoreError::corrupt(format!("dealer {} does not follow dealer {}", e.dealer, s.dealer)));
            }
            let first = s.next_active(e.dealer as u8);
            if CHECK && (e.first_player != first as u32) {
                return Err(CoreError::corrupt(format!("first player {} is not left of dealer {}", e.first_player, e.dealer)));
            }
            let mut counts = [0u8; 13];
            let mut rows = [[NONE; 4]; MAXP];
            let mut seen = 0u8;
            for r in &e.rows {
                let p = r.seat as usize;
                if CHECK && (!s.is_active(p) || seen & (1 << p) != 0 || r.cards.len() != 4) {
                    return Err(CoreError::corrupt(format!("dealt row for seat {p} does not fit")));
                }
                seen |= 1 << p;
                for (i, &v) in r.cards.iter().enumerate() {
                    let c = card(v)?;
                    rows[p][i] = c;
                    counts[c as usize] += 1;
                }
            }
            if CHECK && (seen != s.active) {
                return Err(CoreError::corrupt(format!("the deal does not cover every active seat")));
            }
            let top = card(e.discard_top)?;
            if CHECK && (is_power(top)) {
                return Err(CoreError::corrupt(format!("the first discard is a power card")));
            }
            for &f in &e.flipped_powers {
                if CHECK && (!is_power(card(f)?)) {
                    return Err(CoreError::corrupt(format!("a flipped-back card is not a power card")));
                }
            }
            counts[top as usize] += 1;
            let draw = pile_from_pb(&e.draw_pile, &mut counts)?;
            if CHECK && (counts != COUNTS || draw.len() != e.draw_pile_size as usize) {
                return Err(CoreError::corrupt(format!("the deal does not hold the 54-card deck")));
            }
            s.dealt(rows, draw, top, e.dealer as u8, e.round)?;
        }
        E::InitialPeek(e) => {
            let p = e.seat as usize;
            if CHECK && (s.phase != Phase::TurnStart || s.turns_in_round != 0 || !s.is_active(p)) {
                return Err(CoreError::corrupt(format!("initial peek of seat {p} out of place")));
            }
            if CHECK && (card(e.slot1)? != s.rows[p][0] || card(e.slot4)? != s.rows[p][3]) {
                return Err(CoreError::corrupt(format!("initial peek of seat {p} does not match its row")));
            }
            s.initial_peek(p);
        }
        E::DiscardTaken(e) => {
            if CHECK && (s.phase != Phase::TurnStart) {
                return Err(CoreError::corrupt(format!("discard taken in phase {:?}", s.phase)));
            }
            let p = actor(e.seat, s)?;
            let sl = slot(e.slot)?;
            let top = s.discard.top();
            let taken = card(e.taken)?;
            if CHECK && (top != Some(taken) || is_power(taken) || card(e.replaced)? != s.rows[p][sl]) {
                return Err(CoreError::corrupt(format!("discard taken does not match the table")));
            }
            s.discard.pop();
            s.discard.push(s.rows[p][sl])?;
            s.rows[p][sl] = taken;
            for k in s.known.iter_mut() {
                *k |= bit(p, sl);
            }
            s.phase = Phase::EndOfTurn;
        }
        E::CardDrawn(e) => {
            actor(e.seat, s)?;
            let c = card(e.card)?;
            if CHECK && (s.draw.top() != Some(c) || e.draw_pile_size as usize + 1 != s.draw.len()) {
                return Err(CoreError::corrupt(format!("drawn card is not the top of the draw pile")));
            }
            s.drew()?;
        }
        E::CardReplaced(e) => {
            if CHECK && (!s.phase.holding()) {
                return Err(CoreError::corrupt(format!("card replaced in phase {:?}", s.phase)));
            }
            let p = actor(e.seat, s)?;
            let sl = slot(e.slot)?;
            let placed = card(e.placed)?;
            if CHECK && (placed != s.pending || is_power(placed) || card(e.replaced)? != s.rows[p][sl]) {
                return Err(CoreError::corrupt(format!("replacement does not match the table")));
            }
            s.discard.push(s.rows[p][sl])?;
            s.rows[p][sl] = placed;
            s.pending = NONE;
            for k in s.known.iter_mut() {
                *k &= !bit(p, sl);
            }
            s.known[p] |= bit(p, sl);
            s.phase = Phase::EndOfTurn;
        }
        E::DrawnDiscarded(e) => {
            if CHECK && (!s.phase.holding()) {
                return Err(CoreError::corrupt(format!("drawn card discarded in phase {:?}", s.phase)));
            }
            actor(e.seat, s)?;
            if CHECK && (card(e.card)? != s.pending) {
                return Err(CoreError::corrupt(format!("discarded card is not the card in hand")));
            }
            s.discard.push(s.pending)?;
            s.pending = NONE;
            s.phase = if s.phase == Phase::Draw2First {
                Phase::DrawingSecond
            } else {
                Phase::EndOfTurn
            };
        }
        E::PowerUsed(e) => {
            if CHECK && (!s.phase.holding()) {
                return Err(CoreError::corrupt(format!("power used in phase {:?}", s.phase)));
            }
            actor(e.seat, s)?;
            let c = card(e.power)?;
            if CHECK && (c != s.pending || !is_power(c)) {
                return Err(CoreError::corrupt(format!("power used is not the power card in hand")));
            }
            s.discard.push(c)?;
            s.pending = NONE;
            s.phase = match c {
                PK => Phase::Peek,
                SW => Phase::Swap,
                _ => Phase::DrawingFirst,
            };
        }
        E::CardPeeked(e) => {
            if CHECK && (s.phase != Phase::Peek) {
                return Err(CoreError::corrupt(format!("peek in phase {:?}", s.phase)));
            }
            let p = actor(e.seat, s)?;
            let sl = slot(e.slot)?;
            if CHECK && (card(e.card)? != s.rows[p][sl]) {
                return Err(CoreError::corrupt(format!("peeked card does not match the row")));
            }
            s.known[p] |= bit(p, sl);
            s.phase = Phase::EndOfTurn;
        }
        E::CardsSwapped(e) => {
            if CHECK && (s.phase != Phase::Swap) {
                return Err(CoreError::corrupt(format!("swap in phase {:?}", s.phase)));
            }
            let p = actor(e.seat, s)?;
            let a = slot(e.own_slot)?;
            let b = slot(e.target_slot)?;
            let q = e.target_seat as usize;
            if CHECK && (q == p || !s.is_active(q)) {
                return Err(CoreError::corrupt(format!("swap target seat {q} does not fit")));
            }
            let tmp = s.rows[p][a];
            s.rows[p][a] = s.rows[q][b];
            s.rows[q][b] = tmp;
            let (ba, bb) = (bit(p, a), bit(q, b));
            for k in s.known.iter_mut() {
                let ka = *k & ba != 0;
                let kb = *k & bb != 0;
                *k &= !(ba | bb);
                if ka {
                    *k |= bb;
                }
                if kb {
                    *k |= ba;
                }
            }
            s.phase = Phase::EndOfTurn;
        }
        E::SwapSkipped(e) => {
            if CHECK && (s.phase != Phase::Swap) {
                return Err(CoreError::corrupt(format!("swap skipped in phase {:?}", s.phase)));
            }
            actor(e.seat, s)?;
            s.phase = Phase::EndOfTurn;
        }
        E::Called(e) => {
            if CHECK && (s.phase != Phase::EndOfTurn || s.caller != NONE) {
                return Err(CoreError::corrupt(format!("call out of place")));
            }
            s.caller = actor(e.seat, s)? as u8;
        }
        E::TurnEnded(e) => {
            if CHECK && (s.phase != Phase::EndOfTurn) {
                return Err(CoreError::corrupt(format!("turn ended in phase {:?}", s.phase)));
            }
            actor(e.seat, s)?;
            let (next, over, limit) = s.turn_end();
            if CHECK && (e.next_seat != next as u32 || e.round_over != over || e.turn_limit_reached != limit) {
                return Err(CoreError::corrupt(format!("turn end does not fit the table")));
            }
            s.turn_ended(next, over);
        }
        E::PileReshuffled(e) => {
            if CHECK && (s.draw.len() != 0 || matches!(s.phase, Phase::NotStarted | Phase::RoundOver | Phase::Over)) {
                return Err(CoreError::corrupt(format!("reshuffle while the draw pile is not empty")));
            }
            let top = card(e.discard_top)?;
            if CHECK && (is_power(top)) {
                return Err(CoreError::corrupt(format!("a reshuffle flipped a power card face up")));
            }
            for &f in &e.flipped_powers {
                if CHECK && (!is_power(card(f)?)) {
                    return Err(CoreError::corrupt(format!("a flipped-back card is not a power card")));
                }
            }
            // At reveal the reshuffle follows the draw that emptied the pile, and the card
            // that draw sent to the discard pile (on top) is not part of it: it ends on top of
            // the new discard pile (R7: a card in hand is not reshuffled; AMB9: the replaced
            // card is discarded after its slot is filled). Logs recorded before this rule was
            // fixed reshuffled it too; such a reshuffle holds one card more and replays as recorded.
            let held = match s.discard.top() {
                Some(top) if s.phase == Phase::Reveal && e.draw_pile.len() + 2 == s.discard.len() => top,
                _ => NONE,
            };
            let mut before = [0u8; 13];
            for &c in s.discard.cards() {
                before[c as usize] += 1;
            }
            if held != NONE {
                before[held as usize] -= 1;
            }
            let mut after = [0u8; 13];
            after[top as usize] += 1;
            let draw = pile_from_pb(&e.draw_pile, &mut after)?;
            if CHECK && (before != after || draw.len() != e.draw_pile_size as usize) {
                return Err(CoreError::corrupt(format!("the reshuffled pile is not the old discard pile")));
            }
            s.draw = draw;
            s.discard = Pile::EMPTY;
            s.discard.push(top)?;
            if held != NONE {
                s.discard.push(held)?;
            }
        }
        E::RoundRevealed(e) => {
            if CHECK && (s.phase != Phase::Reveal || s.revealed) {
                return Err(CoreError::corrupt(format!("reveal out of place")));
            }
            let mut seen = 0u8;
            for r in &e.rows {
                let p = r.seat as usize;
                if CHECK && (!s.is_active(p) || r.cards.len() != 4) {
                    return Err(CoreError::corrupt(format!("revealed row of seat {p} does not fit")));
                }
                seen |= 1 << p;
                for (i, &v) in r.cards.iter().enumerate() {
                    if CHECK && (card(v)? != s.rows[p][i]) {
                        return Err(CoreError::corrupt(format!("revealed row of seat {p} does not match")));
                    }
                }
            }
            if CHECK && (seen != s.active) {
                return Err(CoreError::corrupt(format!("the reveal does not cover every active seat")));
            }
            s.revealed = true;
        }
        E::RevealDraw(e) => {
            if CHECK && (s.phase != Phase::Reveal || !s.revealed) {
                return Err(CoreError::corrupt(format!("reveal draw out of place")));
            }
            let sl = slot(e.slot)?;
            if CHECK && (e.seat as usize >= n || s.next_power() != Some((e.seat as u8, sl as u8))) {
                return Err(CoreError::corrupt(format!("reveal draw for seat {} slot {} is out of order", e.seat, e.slot)));
            }
            let c = card(e.card)?;
            if CHECK && (s.draw.top() != Some(c)) {
                return Err(CoreError::corrupt(format!("reveal draw is not the top of the draw pile")));
            }
            s.draw.pop();
            // The drawn power card, or the power card the drawn number card replaces, goes on
            // the discard pile; when this draw emptied the draw pile, the `pile_reshuffled`
            // that follows leaves it out (R7, AMB9).
            if is_power(c) {
                s.discard.push(c)?;
            } else {
                let p = e.seat as usize;
                let old = s.rows[p][sl];
                s.rows[p][sl] = c;
                s.discard.push(old)?;
            }
        }
        E::RoundScored(e) => {
            if CHECK && (s.phase != Phase::Reveal || !s.revealed || s.next_power().is_some() || e.round != s.round) {
                return Err(CoreError::corrupt(format!("scoring out of place")));
            }
            let mut seen = 0u8;
            let mut totals = s.totals;
            let mut last = [0u8; MAXP];
            for sc in &e.scores {
                let p = sc.seat as usize;
                if CHECK && (!s.is_active(p) || seen & (1 << p) != 0) {
                    return Err(CoreError::corrupt(format!("score for seat {p} does not fit")));
                }
                seen |= 1 << p;
                let r = s.row_score(p);
                if CHECK && (sc.round_score != r || sc.total_score != s.totals[p] + r) {
                    return Err(CoreError::corrupt(format!("score for seat {p} is wrong")));
                }
                totals[p] = sc.total_score;
                last[p] = r as u8;
            }
            if CHECK && (seen != s.active) {
                return Err(CoreError::corrupt(format!("scores do not cover every active seat")));
            }
            let mut elim = 0u8;
            if s.cfg.mode == MatchMode::Elimination {
                for (p, &t) in totals.iter().enumerate().take(n) {
                    if s.is_active(p) && t >= s.cfg.point_limit {
                        elim |= 1 << p;
                    }
                }
            }
            let mut got = 0u8;
            for &p in &e.eliminated {
                if CHECK && (p as usize >= n) {
                    return Err(CoreError::corrupt(format!("eliminated seat {p}")));
                }
                got |= 1 << p;
            }
            if CHECK && (got != elim || e.eliminated.len() != elim.count_ones() as usize) {
                return Err(CoreError::corrupt(format!("eliminated seats do not fit the totals")));
            }
            s.totals = totals;
            s.last_scores = last;
            s.last_rows = s.rows;
            s.last_eliminated = elim;
            s.active &= !elim;
            for p in 0..MAXP {
                if s.active & (1 << p) == 0 {
                    s.rows[p] = [NONE; 4];
                }
            }
            s.phase = Phase::RoundOver;
        }
        E::StopRequested(_) => {
            if s.cfg.mode != MatchMode::Timed || s.stop_requested || s.phase == Phase::Over {
                return Err(CoreError::corrupt(format!("a stop request does not fit this match")));
            }
            s.stop_requested = true;
        }
        E::MatchEnded(e) if !e.aborted && e.reason == REASONS[R_FORFEIT as usize] => {
            // The seat to act forfeited (§11): a card in its hand goes to the discard pile.
            if CHECK && !s.phase.awaiting() {
                return Err(CoreError::corrupt("a forfeit while no seat is awaited"));
            }
            let w = s.forfeit_winners();
            if e.winners != State::seat_list(w) || e.totals.as_slice() != &s.totals[..n] {
                return Err(CoreError::corrupt("forfeit result does not fit the totals"));
            }
            if s.pending != NONE {
                s.discard.push(s.pending)?;
                s.pending = NONE;
            }
            s.winners = w;
            s.end_reason = R_FORFEIT;
            s.aborted = false;
            s.phase = Phase::Over;
        }
        E::MatchEnded(e) => {
            let (w, reason) = if e.aborted {
                if CHECK && (s.phase != Phase::TurnStart || s.total_turns < s.cfg.admin_turn_cap) {
                    return Err(CoreError::corrupt(format!("administrative stop before the cap")));
                }
                (0u8, R_CAP)
            } else {
                if CHECK && (s.phase != Phase::RoundOver) {
                    return Err(CoreError::corrupt(format!("match end out of place")));
                }
                match s.match_end() {
                    Some(x) => x,
                    None => return Err(CoreError::corrupt(format!("the match is not over"))),
                }
            };
            if e.winners != State::seat_list(w)
                || e.reason != REASONS[reason as usize]
                || e.totals.as_slice() != &s.totals[..n]
            {
                return Err(CoreError::corrupt(format!("match result does not fit the totals")));
            }
            s.winners = w;
            s.end_reason = reason;
            s.aborted = e.aborted;
            s.phase = Phase::Over;
        }
    }
    Ok(())
}

// ------------------------------------------------------------------ the game

pub struct RatATatCat;

/// Checks `action` by `seat` (awaited: the registry checks the turn), then applies it to
/// `state` and appends its events. Every check comes before the first event, so a refused action changes nothing; after that only a bug
/// can fail (`Corrupt`).
fn act(state: &mut State, seat: Seat, action: &pb::Action, rng: &mut Rng, events: &mut Vec<pb::Event>) -> CoreResult<()> {
    if state.phase == Phase::NotStarted {
        return Err(CoreError::rule("NOT_STARTED", "the match has not been dealt yet"));
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
                return Err(CoreError::corrupt(format!("empty discard pile at turn start")))
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

impl Game for RatATatCat {
    type Config = Config;
    type State = State;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const ID: &'static str = "rat_a_tat_cat";
    const NAME: &'static str = "Rat-a-Tat Cat";
    const PROTO_PACKAGE: &'static str = "tablier.rat_a_tat_cat.v1";
    const MIN_PLAYERS: u32 = 2;
    const MAX_PLAYERS: u32 = 6;
    const BOTS: &'static [&'static str] = &["random", "memory"];
    const HOST_COMMANDS: &'static [&'static str] = &["stop_after_round"];

    fn host_command(s: &State, command: &str, _rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        debug_assert_eq!(command, "stop_after_round");
        if s.cfg.mode != MatchMode::Timed {
            return Err(CoreError::rule("NOT_TIMED", "stop_after_round is for timed matches (match_mode=timed)"));
        }
        if s.stop_requested {
            return Err(CoreError::rule("ALREADY_REQUESTED", "the match already stops after this round"));
        }
        Ok(vec![pb::Event { kind: Some(E::StopRequested(pb::StopRequested {})) }])
    }

    fn options() -> Vec<OptionSpec> {
        vec![
            OptionSpec::choice(
                "match_mode",
                &["elimination", "fixed_rounds", "timed"],
                "elimination",
                "elimination: a seat whose total reaches point_limit is out, the last seat left wins; fixed_rounds: lowest total after `rounds` rounds wins; timed: the operator's stop_after_round ends the match after the round in progress, lowest total wins",
            ),
            OptionSpec::int("point_limit", 100, 1, 10_000, "elimination limit (total >= limit is out), 1 to 10000"),
            OptionSpec::int("rounds", 3, 1, 1000, "rounds in fixed_rounds, 1 to 1000"),
            OptionSpec::int(
                "max_turns_per_round",
                0,
                0,
                100_000,
                "safeguard: a round with no call ends after this many turns (0 = off, up to 100000)",
            ),
            OptionSpec::text("first_dealer", 16, "random", "dealer of round 1: random, or a seat number"),
            OptionSpec::choice(
                "memory_aid",
                &["off", "on"],
                "off",
                "on: a seat's view lists the row values it has seen (not part of the rules)",
            ),
            OptionSpec::int(
                "admin_turn_cap",
                20_000,
                1,
                1_000_000,
                "administrative cap: the match is aborted after this many turns, 1 to 1000000",
            ),
        ]
    }

    fn configure(seats: u32, options: &OptionValues) -> CoreResult<Config> {
        let mode = match options.text("match_mode") {
            "fixed_rounds" => MatchMode::FixedRounds,
            "timed" => MatchMode::Timed,
            _ => MatchMode::Elimination,
        };
        let first_dealer = match options.text("first_dealer") {
            "random" => None,
            v => match v.parse::<u32>() {
                Ok(d) if d < seats => Some(d as u8),
                _ => {
                    return Err(CoreError::option(format!(
                        "first_dealer must be random or a seat from 0 to {}, not {v:?}",
                        seats - 1
                    )))
                }
            },
        };
        Ok(Config {
            seats: seats as u8,
            mode,
            point_limit: options.int("point_limit"),
            rounds: options.int("rounds"),
            max_turns_per_round: options.int("max_turns_per_round"),
            first_dealer,
            memory_aid: options.text("memory_aid") == "on",
            admin_turn_cap: options.int("admin_turn_cap"),
        })
    }

    fn initial(cfg: &Config) -> State {
        State {
            cfg: *cfg,
            phase: Phase::NotStarted,
            rows: [[NONE; 4]; MAXP],
            draw: Pile::EMPTY,
            discard: Pile::EMPTY,
            pending: NONE,
            current: 0,
            dealer: 0,
            caller: NONE,
            active: ((1u16 << cfg.seats) - 1) as u8,
            round: 0,
            turns_in_round: 0,
            total_turns: 0,
            totals: [0; MAXP],
            last_scores: [0; MAXP],
            last_rows: [[NONE; 4]; MAXP],
            last_eliminated: 0,
            known: [0; MAXP],
            revealed: false,
            winners: 0,
            end_reason: 0,
            aborted: false,
            stop_requested: false,
            test_mode: false,
        }
    }

    fn start(state: &State, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        let mut events = Vec::with_capacity(8);
        Self::open(&mut state.clone(), rng, &mut events)?;
        Ok(events)
    }

    fn open(state: &mut State, rng: &mut Rng, events: &mut Vec<pb::Event>) -> CoreResult<()> {
        if state.phase != Phase::NotStarted {
            return Err(CoreError::rule("ALREADY_STARTED", "the match has already been dealt"));
        }
        let dealer = match state.cfg.first_dealer {
            Some(d) => d,
            None => rng.below(state.cfg.seats as u64) as u8,
        };
        Out { s: state, events }.deal(dealer, rng)
    }

    fn decide(state: &State, seat: Seat, action: &pb::Action, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        let mut events = Vec::with_capacity(4);
        act(&mut state.clone(), seat, action, rng, &mut events)?;
        Ok(events)
    }

    fn play(state: &mut State, seat: Seat, action: &pb::Action, rng: &mut Rng, events: &mut Vec<pb::Event>) -> CoreResult<()> {
        act(state, seat, action, rng, events)
    }

    fn evolve(s: &mut State, event: &pb::Event) -> CoreResult<()> {
        apply_event::<true>(s, event)
    }

    fn to_act(s: &State) -> Seats {
        if s.phase.awaiting() {
            Seats::one(s.current as Seat)
        } else {
            Seats::NONE
        }
    }

    fn legal_actions_into(s: &State, seat: Seat, v: &mut Vec<pb::Action>) {
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

    fn view(s: &State, viewer: Viewer) -> pb::View {
        let n = s.n();
        let auditor = viewer == Viewer::Auditor;
        let rows_public = auditor || (s.phase == Phase::Reveal && s.revealed);
        let me = match viewer {
            Viewer::Seat(p) if (p as usize) < n => Some(p as usize),
            _ => None,
        };
        let players = (0..n)
            .map(|p| {
                let active = s.is_active(p);
                let row = if active || auditor && s.rows[p][0] != NONE {
                    s.rows[p]
                        .iter()
                        .map(|&c| if rows_public { pbc(c) } else { CARD_FACE_DOWN })
                        .collect()
                } else {
                    vec![]
                };
                let known = match me {
                    Some(v) if s.cfg.memory_aid && active => (0..4)
                        .map(|sl| {
                            if s.known[v] & bit(p, sl) != 0 {
                                pbc(s.rows[p][sl])
                            } else {
                                CARD_FACE_DOWN
                            }
                        })
                        .collect(),
                    _ => vec![],
                };
                pb::PlayerView {
                    seat: p as u32,
                    active,
                    total_score: s.totals[p],
                    last_round_score: s.last_scores[p] as u32,
                    row,
                    known,
                    last_round_row: if s.last_rows[p][0] == NONE {
                        vec![]
                    } else {
                        s.last_rows[p].iter().map(|&c| pbc(c)).collect()
                    },
                }
            })
            .collect();
        let pending = if s.pending == NONE {
            0
        } else if auditor || is_power(s.pending) || me == Some(s.current as usize) {
            pbc(s.pending)
        } else {
            CARD_HIDDEN_NUMBER
        };
        pb::View {
            phase: s.phase.to_pb() as i32,
            round: s.round,
            dealer: s.dealer as u32,
            current_seat: s.current as u32,
            to_act: Self::to_act(s).to_vec(),
            has_caller: s.caller != NONE,
            caller: if s.caller != NONE { s.caller as u32 } else { 0 },
            players,
            draw_pile_size: s.draw.len() as u32,
            discard_pile: s.discard.bottom_first_pb(),
            pending,
            turns_this_round: s.turns_in_round,
            turns_total: s.total_turns,
            over: s.phase == Phase::Over,
            winners: State::seat_list(s.winners),
            end_reason: REASONS.get(s.end_reason as usize).copied().unwrap_or("").into(),
            aborted: s.aborted,
            draw_pile: if auditor { s.draw.bottom_first_pb() } else { vec![] },
            knowledge: if auditor { s.known[..n].to_vec() } else { vec![] },
            viewer: Some(viewer.to_proto()),
            stop_after_round: s.stop_requested,
        }
    }

    fn redact(event: &pb::Event, viewer: Viewer) -> Option<pb::Event> {
        if viewer == Viewer::Auditor {
            return Some(event.clone());
        }
        let mut e = event.clone();
        match e.kind.as_mut()? {
            E::RoundDealt(d) => {
                for r in d.rows.iter_mut() {
                    r.cards.iter_mut().for_each(|c| *c = CARD_FACE_DOWN);
                }
                d.draw_pile.clear();
            }
            E::PileReshuffled(d) => d.draw_pile.clear(),
            E::InitialPeek(d) if !viewer.sees_private_of(d.seat) => {
                d.slot1 = 0;
                d.slot4 = 0;
            }
            E::CardDrawn(d) if !viewer.sees_private_of(d.seat) && from_pbc(d.card).is_some_and(|c| !is_power(c)) => {
                d.card = CARD_HIDDEN_NUMBER;
            }
            E::CardReplaced(d) if !viewer.sees_private_of(d.seat) => d.placed = CARD_HIDDEN_NUMBER,
            E::CardPeeked(d) if !viewer.sees_private_of(d.seat) => d.card = 0,
            _ => {}
        }
        Some(e)
    }

    fn event_type(event: &pb::Event) -> &'static str {
        match &event.kind {
            None => "unknown",
            Some(k) => match k {
                E::RoundDealt(_) => "round_dealt",
                E::InitialPeek(_) => "initial_peek",
                E::DiscardTaken(_) => "discard_taken",
                E::CardDrawn(_) => "card_drawn",
                E::CardReplaced(_) => "card_replaced",
                E::DrawnDiscarded(_) => "drawn_discarded",
                E::PowerUsed(_) => "power_used",
                E::CardPeeked(_) => "card_peeked",
                E::CardsSwapped(_) => "cards_swapped",
                E::SwapSkipped(_) => "swap_skipped",
                E::Called(_) => "called",
                E::TurnEnded(_) => "turn_ended",
                E::PileReshuffled(_) => "pile_reshuffled",
                E::RoundRevealed(_) => "round_revealed",
                E::RevealDraw(_) => "reveal_draw",
                E::RoundScored(_) => "round_scored",
                E::MatchEnded(_) => "match_ended",
                E::StopRequested(_) => "stop_requested",
            },
        }
    }

    fn outcome(s: &State) -> Option<Outcome> {
        if s.phase != Phase::Over {
            return None;
        }
        Some(Outcome {
            scores: s.totals[..s.n()].iter().map(|&t| t as i64).collect(),
            winners: State::seat_list(s.winners),
            reason: REASONS.get(s.end_reason as usize).copied().unwrap_or("").into(),
            lower_is_better: true,
            aborted: s.aborted,
        })
    }

    /// Match clocks (§11): a timed-out seat draws and discards.
    const TIMEOUT_POLICIES: &'static [&'static str] = &[TIMEOUT_DRAW_AND_DISCARD, TIMEOUT_FORFEIT];
    const TIMEOUT_HELP: &'static str = "draw_and_discard: the seat's turn is completed with the quietest moves: it \
        draws from the pile, discards the drawn card unused (a Draw 2 draws its second card and discards it too), \
        peeks at its slot 1 or skips the swap if a used power left it there, and ends its turn without calling. \
        forfeit: the seat forfeits and the match ends at once (reason FORFEIT): the lowest total among the other \
        seats still in the match wins, ties share; the round in progress is not scored.";

    fn timeout_events(s: &State, seat: Seat, policy: &str, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        timeout_draw_and_discard(s, seat, policy, rng)
    }

    fn bot_action(s: &State, seat: Seat, bot: &str, rng: &mut Rng) -> CoreResult<pb::Action> {
        let mut moves = Self::legal_actions(s, seat);
        if moves.is_empty() {
            return Err(CoreError::not_your_turn());
        }
        if bot != "memory" {
            let i = rng.index(moves.len());
            return Ok(moves.swap_remove(i));
        }
        Ok(memory_bot(s, seat as usize))
    }

    fn render(s: &State, viewer: Viewer) -> String {
        let v = Self::view(s, viewer);
        let name = |c: i32| -> &'static str {
            match c {
                0 | CARD_FACE_DOWN => "?",
                CARD_HIDDEN_NUMBER => "#",
                c => card_name((c - 1) as u8),
            }
        };
        let mut out = String::new();
        let _ = write!(
            out,
            "Rat-a-Tat Cat  round {}  dealer P{}  {:?}",
            v.round,
            v.dealer,
            Phase::to_pb(s.phase)
        );
        if s.phase.awaiting() {
            let _ = write!(out, "  P{} to act", v.current_seat);
        }
        if v.has_caller {
            let _ = write!(out, "  caller P{}", v.caller);
        }
        out.push('\n');
        for p in &v.players {
            let mark = if s.phase.awaiting() && p.seat == v.current_seat {
                '>'
            } else {
                ' '
            };
            let _ = write!(out, "{mark}P{} ", p.seat);
            if !p.active {
                let _ = write!(out, "(out)             ");
            } else {
                out.push('[');
                for (i, &c) in p.row.iter().enumerate() {
                    let k = p.known.get(i).copied().unwrap_or(0);
                    let shown = if c != 0 {
                        name(c)
                    } else if k != 0 {
                        name(k)
                    } else {
                        "?"
                    };
                    let _ = write!(out, "{shown:>3}");
                }
                out.push_str(" ]");
            }
            let _ = writeln!(out, "  total {:>3}  last {:>2}", p.total_score, p.last_round_score);
        }
        let _ = write!(out, " draw {:>2}  discard", v.draw_pile_size);
        // Top first on the terminal (the view lists the pile bottom first).
        for &c in v.discard_pile.iter().rev().take(8) {
            let _ = write!(out, " {}", name(c));
        }
        if v.discard_pile.len() > 8 {
            let _ = write!(out, " ...({})", v.discard_pile.len());
        }
        if v.pending != 0 {
            let _ = write!(out, "  in hand: {}", name(v.pending));
        }
        out.push('\n');
        if v.over {
            let _ = writeln!(
                out,
                " over: {} winners {:?}{}",
                v.end_reason,
                v.winners,
                if v.aborted { " (aborted)" } else { "" }
            );
        }
        out
    }

    fn check_invariants(s: &State) -> Result<(), String> {
        let n = s.n();
        if s.phase == Phase::NotStarted {
            return Ok(());
        }
        let holding = s.phase.holding();
        if holding != (s.pending != NONE) {
            return Err(format!("card in hand {} in phase {:?}", s.pending, s.phase));
        }
        if s.pending != NONE && s.pending > D2 {
            return Err("pending is not a card".into());
        }
        let mut counts = [0u32; 13];
        for p in 0..MAXP {
            let active = s.is_active(p);
            if p >= n && active {
                return Err(format!("seat {p} active in a {n}-seat match"));
            }
            let in_play = s.phase != Phase::RoundOver && s.phase != Phase::Over;
            for &c in &s.rows[p] {
                if active && in_play {
                    if c > D2 {
                        return Err(format!("seat {p} has an empty slot"));
                    }
                    counts[c as usize] += 1;
                } else if !active && c != NONE {
                    return Err(format!("eliminated seat {p} holds cards"));
                }
            }
            if s.known[p] >> (4 * n) != 0 {
                return Err("knowledge of a position outside the table".into());
            }
        }
        if s.phase != Phase::RoundOver && s.phase != Phase::Over {
            for &c in s.draw.cards().iter().chain(s.discard.cards()) {
                if c > D2 {
                    return Err("a pile holds a non-card".into());
                }
                counts[c as usize] += 1;
            }
            if s.pending != NONE {
                counts[s.pending as usize] += 1;
            }
            if !s.test_mode && counts.iter().zip(COUNTS).any(|(&a, b)| a != b as u32) {
                return Err(format!("cards are not conserved: {counts:?}"));
            }
        }
        if s.phase.awaiting() {
            if s.draw.len() == 0 {
                return Err("empty draw pile at a decision".into());
            }
            if !s.is_active(s.current as usize) {
                return Err("the current seat is not active".into());
            }
            if s.caller != NONE && !s.is_active(s.caller as usize) {
                return Err("the caller is not active".into());
            }
            if s.caller != NONE && s.phase != Phase::EndOfTurn && s.caller == s.current {
                return Err("the caller takes another turn".into());
            }
        }
        if s.phase == Phase::TurnStart && s.discard.len() == 0 {
            return Err("empty discard pile at turn start".into());
        }
        for p in 0..n {
            if s.totals[p] > 36 * s.round {
                return Err(format!("seat {p} total {} is above 36 per round", s.totals[p]));
            }
            if s.cfg.mode == MatchMode::Elimination
                && s.is_active(p)
                && s.phase != Phase::RoundOver
                && s.totals[p] >= s.cfg.point_limit
            {
                return Err(format!("seat {p} is at the limit but still active"));
            }
        }
        if s.phase == Phase::Over && !s.aborted && s.winners == 0 {
            return Err("match over without winners".into());
        }
        Ok(())
    }
}

// ------------------------------------------------------------------ the "memory" bot

/// Heuristic bot: keeps what it has seen (its own knowledge bits only), treats an unknown card
/// (or an inert power card, replaced at reveal) as worth 5, the deck mean.
/// The timeout policy `draw_and_discard` (match clocks, docs/rules/rat_a_tat_cat.md §11).
const TIMEOUT_DRAW_AND_DISCARD: &str = "draw_and_discard";
/// The timeout policy `forfeit`: the match ends, the seat to act losing (§11).
const TIMEOUT_FORFEIT: &str = "forfeit";

/// The quietest legal move of the seat to act in each phase of its turn (§4.2): a turn always
/// has one (no pass, no knock), and these change the seat's row the least.
fn quiet_action(s: &State) -> Option<pb::Action> {
    let kind = match s.phase {
        Phase::TurnStart => A::DrawFromPile(pb::DrawFromPile {}),
        Phase::Drawn | Phase::Draw2First | Phase::Draw2Second => A::DiscardDrawn(pb::DiscardDrawn {}),
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
fn timeout_draw_and_discard(s: &State, seat: Seat, policy: &str, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
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
        return Err(CoreError::Unsupported(format!("rat_a_tat_cat has no timeout policy {policy:?}")));
    }
    if !s.phase.awaiting() || seat != s.current as u32 {
        return Err(CoreError::not_your_turn());
    }
    let mut state = s.clone();
    let mut events = Vec::with_capacity(6);
    // A turn is at most: draw, a Draw 2 chain of discards (bounded by the pile), end_turn.
    for _ in 0..64 {
        let Some(action) = quiet_action(&state) else { break };
        let ends_turn = state.phase == Phase::EndOfTurn;
        act(&mut state, seat, &action, rng, &mut events)?;
        if ends_turn || !state.phase.awaiting() || state.current as u32 != seat {
            break;
        }
    }
    Ok(events)
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
            let e = est(me, sl) + if s.known[me] & bit(me, sl) == 0 { 0.1 } else { 0.0 };
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
                    return act(A::TakeDiscard(pb::TakeDiscard { slot: sl as u32 + 1 }));
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
            let margin = if s.phase == Phase::Draw2First { 1.5 } else { 0.5 };
            if w - c as f32 >= margin {
                act(A::ReplaceCard(pb::ReplaceCard { slot: sl as u32 + 1 }))
            } else {
                act(A::DiscardDrawn(pb::DiscardDrawn {}))
            }
        }
        Phase::Peek => {
            let sl = [1usize, 2, 0, 3]
                .into_iter()
                .find(|&sl| s.known[me] & bit(me, sl) == 0)
                .unwrap_or(1);
            act(A::PeekCard(pb::PeekCard { slot: sl as u32 + 1 }))
        }
        Phase::Swap => {
            let (own, w) = worst();
            let mut target: Option<(usize, usize, f32)> = None;
            for q in 0..s.n() {
                if q == me || !s.is_active(q) {
                    continue;
                }
                for sl in 0..4 {
                    let e = est(q, sl);
                    if target.is_none_or(|t| e < t.2) {
                        target = Some((q, sl, e));
                    }
                }
            }
            match target {
                Some((q, sl, e)) if w - e >= 2.0 => act(A::SwapCards(pb::SwapCards {
                    own_slot: own as u32 + 1,
                    target_seat: q as u32,
                    target_slot: sl as u32 + 1,
                })),
                _ => act(A::SkipSwap(pb::SkipSwap {})),
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Options;
    use crate::conformance;
    use prost::Message;

    fn cfg_with(n: u32, opts: &[(&str, &str)]) -> Config {
        let o: Options = opts.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        RatATatCat::checked_config(n, &o).expect("config")
    }
    fn cfg(n: u32) -> Config {
        cfg_with(n, &[])
    }

    /// `SeatRow` as prost would generate it from the proto.
    #[derive(Clone, PartialEq, prost::Message)]
    struct GeneratedSeatRow {
        #[prost(uint32, tag = "1")]
        seat: u32,
        #[prost(enumeration = "pb::Card", repeated, tag = "2")]
        cards: Vec<i32>,
    }

    #[test]
    fn inline_seat_rows_have_the_generated_wire_format() {
        for (seat, cards) in [(0, [0, 0, 0, 0]), (5, [1, 13, 0, 7]), (1, [10, 11, 12, 13]), (127, [2, 2, 2, 2])] {
            let row = SeatRow { seat, cards: cards.into() };
            let generated = GeneratedSeatRow { seat, cards: cards.to_vec() };
            assert_eq!(row.encode_to_vec(), generated.encode_to_vec());
            assert_eq!(row.encoded_len(), generated.encoded_len());
            assert_eq!(SeatRow::decode(&*generated.encode_to_vec()).unwrap(), row);
            let dealt = pb::RoundDealt { rows: vec![row, row], ..Default::default() };
            assert_eq!(pb::RoundDealt::decode(&*dealt.encode_to_vec()).unwrap(), dealt);
        }
        // Unpacked cards (another encoder's choice) read the same.
        let mut unpacked = Vec::new();
        prost::encoding::uint32::encode(1, &3, &mut unpacked);
        prost::encoding::int32::encode_repeated(2, &[4, 5, 6, 7], &mut unpacked);
        assert_eq!(SeatRow::decode(&*unpacked).unwrap(), SeatRow { seat: 3, cards: [4, 5, 6, 7].into() });
        // A stored row of five cards reads as a row of none, which a replay refuses.
        let five = GeneratedSeatRow { seat: 1, cards: vec![1, 2, 3, 4, 5] }.encode_to_vec();
        let mut twice = five.clone();
        twice.extend(GeneratedSeatRow { seat: 1, cards: vec![1, 2, 3, 4] }.encode_to_vec());
        for bytes in [five, twice] {
            let row = SeatRow::decode(&*bytes).unwrap();
            assert!(row.cards.is_empty());
        }
    }
    fn act(k: A) -> pb::Action {
        pb::Action { kind: Some(k) }
    }
    fn take(slot: u32) -> pb::Action {
        act(A::TakeDiscard(pb::TakeDiscard { slot }))
    }
    fn draw() -> pb::Action {
        act(A::DrawFromPile(pb::DrawFromPile {}))
    }
    fn replace(slot: u32) -> pb::Action {
        act(A::ReplaceCard(pb::ReplaceCard { slot }))
    }
    fn discard() -> pb::Action {
        act(A::DiscardDrawn(pb::DiscardDrawn {}))
    }
    fn power() -> pb::Action {
        act(A::UsePower(pb::UsePower {}))
    }
    fn peek(slot: u32) -> pb::Action {
        act(A::PeekCard(pb::PeekCard { slot }))
    }
    fn swap(own_slot: u32, target_seat: u32, target_slot: u32) -> pb::Action {
        act(A::SwapCards(pb::SwapCards {
            own_slot,
            target_seat,
            target_slot,
        }))
    }
    fn skip() -> pb::Action {
        act(A::SkipSwap(pb::SkipSwap {}))
    }
    fn call() -> pb::Action {
        act(A::CallRatATatCat(pb::CallRatATatCat {}))
    }
    fn end() -> pb::Action {
        act(A::EndTurn(pb::EndTurn {}))
    }

    /// Applies `a` by the current seat; returns the events.
    fn play(s: &mut State, a: pb::Action) -> Vec<pb::Event> {
        let seat = s.current as u32;
        let evs = RatATatCat::decide(s, seat, &a, &mut Rng::from_u64(7)).unwrap_or_else(|e| panic!("{a:?}: {e}"));
        for e in &evs {
            RatATatCat::evolve(s, e).expect("own event applies");
            RatATatCat::check_invariants(s).expect("invariants");
        }
        evs
    }
    fn refused(s: &State, a: pb::Action) -> CoreError {
        crate::game::decide_checked::<RatATatCat>(s, s.current as u32, &a, &mut Rng::from_u64(7)).expect_err("must be refused")
    }
    fn reason(e: CoreError) -> &'static str {
        match e {
            CoreError::Rule { reason, .. } => reason,
            other => panic!("not a rule error: {other:?}"),
        }
    }
    fn discard_pile(s: &State) -> Vec<u8> {
        s.discard.cards().iter().rev().copied().collect()
    }
    fn legal(s: &State) -> Vec<pb::Action> {
        RatATatCat::legal_actions(s, s.current as u32)
    }
    fn ev(k: E) -> pb::Event {
        pb::Event { kind: Some(k) }
    }
    fn cards(v: &[u8]) -> Vec<i32> {
        v.iter().map(|&c| pbc(c)).collect()
    }
    /// A pile given top first (as the spec's vectors list it), as events carry it: bottom first.
    fn pile(top_first: &[u8]) -> Vec<i32> {
        top_first.iter().rev().map(|&c| pbc(c)).collect()
    }

    // ---------------------------------------------------------------- section 9 vectors

    /// TV1 as an injected deal event: 44 filler cards complete the deck.
    fn tv1_state() -> State {
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
        let Some(E::RoundDealt(d)) = &evs[0].kind else { panic!() };
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
        let mut out = Out { s: &mut s, events: &mut events };
        out.deal_deck(1, deck, &mut Rng::from_u64(2)).unwrap();
        assert_eq!(out.s.rows[0], [3, 0, D2, 1]);
        assert_eq!(out.s.rows[1], [7, 9, 5, 8]);
        let Some(E::RoundDealt(d)) = &out.events[0].kind else {
            panic!()
        };
        assert_eq!(d.flipped_powers, cards(&[PK]), "the flipped PK goes back");
        assert!(from_pbc(d.discard_top).is_some_and(|c| c <= 9));
        assert_eq!((d.draw_pile_size, out.s.current), (45, 0));
        RatATatCat::check_invariants(&out.s).unwrap();
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
        let mut s = State::test_position(cfg(2), &[[3, 0, 4, 1], [7, 9, 5, 8]], &[2, 6, 6], &[D2], 0, 1);
        let evs = play(&mut s, draw());
        let hidden = RatATatCat::redact(&evs[0], Viewer::Seat(0)).unwrap();
        let Some(E::CardDrawn(d)) = hidden.kind else { panic!() };
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
        let mut s = State::test_position(cfg(2), &[[3, 0, 4, 1], [7, 2, 5, 8]], &[PK, 6, 6], &[9, D2], 1, 0);
        let evs = play(&mut s, draw());
        let seen = RatATatCat::redact(&evs[0], Viewer::Seat(1)).unwrap();
        let Some(E::CardDrawn(d)) = seen.kind else { panic!() };
        assert_eq!(d.card, pbc(PK), "a power card is shown to all");
        assert_eq!(legal(&s), vec![power(), discard()]);
        assert_eq!(reason(refused(&s, replace(1))), "POWER_CARD_CANNOT_BE_KEPT");
    }

    #[test]
    fn tv05_peek() {
        let mut s = State::test_position(cfg(2), &[[3, 0, 4, 1], [7, 2, 5, 8]], &[PK, 6, 6], &[9, D2], 1, 0);
        play(&mut s, draw());
        play(&mut s, power());
        assert_eq!(discard_pile(&s), vec![PK, 9, D2]);
        assert_eq!(s.phase, Phase::Peek);
        assert_eq!(legal(&s), (1..=4).map(peek).collect::<Vec<_>>());
        let evs = play(&mut s, peek(2));
        let Some(E::CardPeeked(mine)) = RatATatCat::redact(&evs[0], Viewer::Seat(0)).unwrap().kind else {
            panic!()
        };
        assert_eq!((mine.slot, mine.card), (2, pbc(0)));
        let Some(E::CardPeeked(theirs)) = RatATatCat::redact(&evs[0], Viewer::Seat(1)).unwrap().kind else {
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

    fn tv6_swap_phase() -> State {
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
        assert!(matches!(refused(&s, swap(1, 1, 5)), CoreError::Malformed(_)));
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
        let Some(E::CardPeeked(p)) = &evs[0].kind else { panic!() };
        assert_eq!(p.card, pbc(3));
        assert_eq!(s.phase, Phase::EndOfTurn);
        assert_eq!(s.draw.top(), Some(5));
    }

    /// A full-deck 3- or 4-seat state dealt by the engine with a fixed dealer.
    fn dealt(n: u32, dealer: u32, opts: &[(&str, &str)]) -> State {
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
    fn quiet_turn(s: &mut State) {
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
        let Some(E::TurnEnded(t)) = &evs[0].kind else { panic!() };
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
        let mut s = State::test_position(cfg(2), &[[0, 0, 1, 2], [6, 9, 4, 3]], &[SW, 5, 5, 5], &[7], 1, 1);
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
            scored.scores.iter().map(|x| x.round_score).collect::<Vec<_>>(),
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
            vec![(1, 3, D2), (1, 3, 5), (2, 1, 9), (2, 4, SW), (2, 4, 6), (0, 3, 2)]
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
        for e in evs.iter().filter(|e| matches!(e.kind, Some(E::RevealDraw(_)))) {
            RatATatCat::evolve(&mut t, e).unwrap();
        }
        assert_eq!(discard_pile(&t), vec![D2, PK, SW, SW, PK, D2, 7, 3]);
        assert_eq!(t.draw.top(), Some(8));
    }

    #[test]
    fn tv18_reshuffle_when_draw_empties() {
        let mut s = State::test_position(cfg(2), &[[1, 1, 1, 1], [2, 2, 2, 2]], &[6], &[PK, 3, 8, SW, 2], 1, 0);
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
        let Some(E::PileReshuffled(r)) = RatATatCat::redact(&injected, Viewer::Seat(0)).unwrap().kind else {
            panic!()
        };
        assert!(r.draw_pile.is_empty() && r.draw_pile_size == 4 && r.flipped_powers == cards(&[SW]));
        play(&mut s, discard());
        assert_eq!(discard_pile(&s), vec![6, 8]);
        play(&mut s, end());
        assert!(legal(&s).contains(&take(1)));
        // A reshuffle that does not hold the old discard pile is corrupt.
        let mut t = State::test_position(cfg(2), &[[1, 1, 1, 1], [2, 2, 2, 2]], &[6], &[PK, 3, 8, SW, 2], 1, 0);
        RatATatCat::evolve(&mut t, &evs[0]).unwrap();
        let wrong = ev(E::PileReshuffled(pb::PileReshuffled {
            flipped_powers: vec![],
            discard_top: pbc(9),
            draw_pile: pile(&[2, SW, 3, PK]),
            draw_pile_size: 4,
        }));
        assert!(matches!(RatATatCat::evolve(&mut t, &wrong), Err(CoreError::Corrupt(_))));
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
        for e in evs.iter().take_while(|e| !matches!(e.kind, Some(E::RoundScored(_)))) {
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
                    let mut c: Vec<u8> = r.draw_pile.iter().chain([&r.discard_top]).map(|&c| from_pbc(c).unwrap()).collect();
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
            let mut s = State::test_position(cfg(2), &[[0, 2, SW, 1], [1, 1, 1, 1]], &[5], &[7, 3], 0, 1);
            s.caller = 0;
            s.phase = Phase::Reveal;
            s.revealed = true;
            let draw = ev(E::RevealDraw(pb::RevealDraw { seat: 0, slot: 3, card: pbc(5) }));
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
        assert_eq!((discard_pile(&old), old.pending, old.rows[0]), (vec![SW, 7, 3], NONE, [0, 2, 5, 1]));
        RatATatCat::evolve(&mut old, &reshuffle(7, &[SW, 3])).unwrap();
        RatATatCat::check_invariants(&old).unwrap();
        assert_eq!((discard_pile(&old), old.draw.len(), old.pending), (vec![7], 2, NONE));
        let mut new = position();
        RatATatCat::evolve(&mut new, &reshuffle(7, &[3])).unwrap();
        RatATatCat::check_invariants(&new).unwrap();
        assert_eq!((discard_pile(&new), old.rows[0], new.pending), (vec![SW, 7], [0, 2, 5, 1], NONE));
        let mut bad = position();
        assert!(matches!(RatATatCat::evolve(&mut bad, &reshuffle(7, &[8])), Err(CoreError::Corrupt(_))));
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
            if evs.iter().any(|e| matches!(e.kind, Some(E::RoundScored(_)))) {
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
        let evs = finish_round_with(&mut s, &[(0, [1, 1, 1, 2]), (1, [3, 3, 3, 3]), (2, [0, 0, 0, 0])]);
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
        assert_eq!((s.dealer, s.current), (1, 2), "P0 is skipped: P1 deals, P2 starts");
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
            let row = |v: u8| [v.min(9), v.saturating_sub(9).min(9), v.saturating_sub(18), 0];
            finish_round_with(&mut s, &[(0, row(a)), (1, row(b)), (2, row(c))]);
        }
        let o = RatATatCat::outcome(&s).expect("over after 3 rounds");
        assert_eq!(o.scores, vec![22, 22, 27]);
        assert_eq!(o.winners, vec![0, 1]);
        assert_eq!(o.reason, "ROUNDS_COMPLETED");
    }

    #[test]
    fn tv21_discarding_drawn_power_unused() {
        let mut s = State::test_position(cfg(2), &[[1, 1, 1, 1], [2, 2, 2, 2]], &[D2, 4, 5], &[3], 1, 0);
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
        assert!(RatATatCat::check_invariants(&u).unwrap_err().contains("conserved"));
    }

    // ---------------------------------------------------------------- rules the vectors miss

    #[test]
    fn turn_limit_safeguard_reveals_from_left_of_dealer() {
        let mut s = dealt(2, 1, &[("max_turns_per_round", "3")]);
        for _ in 0..2 {
            quiet_turn(&mut s);
            play(&mut s, end());
        }
        quiet_turn(&mut s);
        let evs = play(&mut s, end());
        let Some(E::TurnEnded(t)) = &evs[0].kind else { panic!() };
        assert!(t.round_over && t.turn_limit_reached);
        assert_eq!(s.round, 2);
    }

    #[test]
    fn admin_cap_aborts() {
        let mut s = dealt(2, 1, &[("admin_turn_cap", "5")]);
        for _ in 0..5 {
            quiet_turn(&mut s);
            play(&mut s, end());
        }
        let o = RatATatCat::outcome(&s).expect("aborted");
        assert!(o.aborted && o.winners.is_empty() && o.reason == "ADMIN_TURN_CAP");
        assert!(RatATatCat::to_act(&s).is_empty());
        assert_eq!(
            crate::game::decide_checked::<RatATatCat>(&s, 0, &draw(), &mut Rng::from_u64(1)),
            Err(CoreError::game_over())
        );
    }

    #[test]
    fn options_are_validated() {
        let bad = |k: &str, v: &str| {
            let o: Options = [(k.to_string(), v.to_string())].into_iter().collect();
            assert!(
                matches!(RatATatCat::checked_config(3, &o), Err(CoreError::InvalidOption(_))),
                "{k}={v}"
            );
        };
        bad("colour", "red");
        bad("match_mode", "untimed");
        bad("point_limit", "0");
        bad("point_limit", "ten");
        bad("rounds", "-1");
        bad("first_dealer", "3");
        bad("memory_aid", "yes");
        bad("max_turns_per_round", "1000001");
        assert!(RatATatCat::checked_config(1, &Options::new()).is_err());
        assert!(RatATatCat::checked_config(7, &Options::new()).is_err());
        let c = cfg_with(
            6,
            &[("point_limit", "200"), ("first_dealer", "5"), ("memory_aid", "on")],
        );
        assert_eq!((c.point_limit, c.first_dealer, c.memory_aid), (200, Some(5), true));
    }

    #[test]
    fn malformed_wrong_phase_and_wrong_seat_are_refused() {
        let s = tv1_state();
        let mut rng = Rng::from_u64(1);
        assert_eq!(
            crate::game::decide_checked::<RatATatCat>(&s, 1, &draw(), &mut rng),
            Err(CoreError::not_your_turn())
        );
        assert!(matches!(
            RatATatCat::decide(&s, 0, &pb::Action::default(), &mut rng),
            Err(CoreError::Malformed(_))
        ));
        for a in [
            take(0),
            take(5),
            take(u32::MAX),
            replace(0),
            peek(9),
            swap(0, 1, 1),
            swap(1, 7, 1),
            swap(1, 1, 0),
        ] {
            assert!(
                matches!(RatATatCat::decide(&s, 0, &a, &mut rng), Err(CoreError::Malformed(_))),
                "{a:?}"
            );
        }
        for a in [
            replace(1),
            discard(),
            power(),
            peek(1),
            swap(1, 1, 1),
            skip(),
            call(),
            end(),
        ] {
            assert_eq!(reason(refused(&s, a)), "WRONG_PHASE");
        }
        let mut t = s.clone();
        play(&mut t, draw());
        for a in [take(1), draw(), peek(1), skip(), end(), call()] {
            assert_eq!(reason(refused(&t, a)), "WRONG_PHASE");
        }
        if !is_power(t.pending) {
            assert_eq!(reason(refused(&t, power())), "NOT_A_POWER_CARD");
        }
        // Eliminated swap target.
        let mut u = tv6_swap_phase();
        u.active &= !(1 << 1);
        u.rows[1] = [NONE; 4];
        assert_eq!(reason(refused(&u, swap(1, 1, 1))), "TARGET_ELIMINATED");
        assert_eq!(legal(&u).len(), 17);
        // Not started / events that do not fit.
        let fresh = RatATatCat::initial(&cfg(2));
        assert_eq!(
            reason(RatATatCat::decide(&fresh, 0, &draw(), &mut rng).unwrap_err()),
            "NOT_STARTED"
        );
        let mut v = s.clone();
        for bad in [
            pb::Event::default(),
            ev(E::Called(pb::Called { seat: 0 })),
            ev(E::CardDrawn(pb::CardDrawn {
                seat: 1,
                card: 1,
                draw_pile_size: 44,
            })),
            ev(E::CardDrawn(pb::CardDrawn {
                seat: 0,
                card: 99,
                draw_pile_size: 44,
            })),
            ev(E::DiscardTaken(pb::DiscardTaken {
                seat: 0,
                slot: 7,
                taken: 5,
                replaced: 4,
            })),
            ev(E::RevealDraw(pb::RevealDraw {
                seat: 0,
                slot: 1,
                card: 1,
            })),
            ev(E::MatchEnded(pb::MatchEnded::default())),
        ] {
            assert!(
                matches!(RatATatCat::evolve(&mut v, &bad), Err(CoreError::Corrupt(_))),
                "{bad:?}"
            );
        }
    }

    // ---------------------------------------------------------------- hidden information

    /// What `viewer` may not see, rewritten at random consistently with what it may see:
    /// hidden row cards (not in its knowledge) and, when `deck` is set, the draw pile order are
    /// permuted among themselves; a hidden number in another seat's hand is exchanged with a
    /// hidden number in a row. Positions in `pinned` keep their card.
    fn scramble(s: &State, viewer: Viewer, pinned: &[(usize, usize)], deck: bool, hand: bool, rng: &mut Rng) -> State {
        let mut c = s.clone();
        let known = match viewer {
            Viewer::Seat(v) => s.known[v as usize],
            _ => 0,
        };
        let mut places: Vec<(usize, usize)> = vec![];
        for p in 0..s.n() {
            if !s.is_active(p) {
                continue;
            }
            for sl in 0..4 {
                if known & bit(p, sl) == 0 && !pinned.contains(&(p, sl)) {
                    places.push((p, sl));
                }
            }
        }
        let mut vals: Vec<u8> = places.iter().map(|&(p, sl)| s.rows[p][sl]).collect();
        let nrow = vals.len();
        if deck {
            vals.extend_from_slice(c.draw.cards());
        }
        rng.shuffle(&mut vals);
        for (i, &(p, sl)) in places.iter().enumerate() {
            c.rows[p][sl] = vals[i];
        }
        if deck {
            let n = c.draw.len();
            c.draw.c[..n].copy_from_slice(&vals[nrow..]);
        }
        let hidden_hand = s.pending <= 9 && viewer != Viewer::Seat(s.current as u32);
        if hand && hidden_hand {
            let numbers: Vec<&(usize, usize)> = places.iter().filter(|&&(p, sl)| c.rows[p][sl] <= 9).collect();
            if !numbers.is_empty() {
                let &(p, sl) = numbers[rng.index(numbers.len())];
                std::mem::swap(&mut c.pending, &mut c.rows[p][sl]);
            }
        }
        c
    }

    fn enc_view(s: &State, v: Viewer) -> Vec<u8> {
        RatATatCat::view(s, v).encode_to_vec()
    }

    #[test]
    fn hidden_information_never_leaks() {
        let mut checked_views = 0;
        let mut checked_events = 0;
        for seats in 2..=6u32 {
            let config = cfg_with(seats, &[("memory_aid", "on")]);
            let mut pick = Rng::from_u64(seats as u64);
            for game in 0..12u64 {
                let mut s = RatATatCat::initial(&config);
                let seed = conformance::seed_bytes(game);
                let mut seq = 1;
                let evs = RatATatCat::start(&s, &mut Rng::for_command(&seed, seq)).unwrap();
                for e in &evs {
                    RatATatCat::evolve(&mut s, e).unwrap();
                }
                seq += evs.len() as u64;
                while RatATatCat::outcome(&s).is_none() {
                    let actor = s.current as u32;
                    let moves = RatATatCat::legal_actions(&s, actor);
                    let a = moves[pick.index(moves.len())];
                    let pinned: Vec<(usize, usize)> = match &a.kind {
                        Some(A::TakeDiscard(x)) => vec![(actor as usize, x.slot as usize - 1)],
                        Some(A::ReplaceCard(x)) => vec![(actor as usize, x.slot as usize - 1)],
                        Some(A::PeekCard(x)) => vec![(actor as usize, x.slot as usize - 1)],
                        _ => vec![],
                    };
                    let evs = RatATatCat::decide(&s, actor, &a, &mut Rng::for_command(&seed, seq)).unwrap();
                    let round_ends = evs
                        .iter()
                        .any(|e| matches!(e.kind, Some(E::RoundRevealed(_)) | Some(E::MatchEnded(_))));
                    if pick.index(3) == 0 {
                        let viewers: Vec<Viewer> = (0..seats)
                            .map(Viewer::Seat)
                            .chain(std::iter::once(Viewer::Spectator))
                            .collect();
                        for &v in &viewers {
                            // Views: everything hidden may change, including the deck order.
                            let c = scramble(&s, v, &[], true, true, &mut pick);
                            assert_eq!(
                                enc_view(&s, v),
                                enc_view(&c, v),
                                "view leaks to {v:?}\n{}",
                                RatATatCat::render(&s, Viewer::Auditor)
                            );
                            checked_views += 1;
                            // What the viewer may see is in its view.
                            let view = RatATatCat::view(&s, v);
                            assert_eq!(view.discard_pile, s.discard.bottom_first_pb());
                            assert_eq!(view.draw_pile_size as usize, s.draw.len());
                            if let Viewer::Seat(me) = v {
                                let me = me as usize;
                                if s.is_active(me) {
                                    for sl in 0..4 {
                                        let k = view.players[me].known[sl];
                                        if s.known[me] & bit(me, sl) != 0 {
                                            assert_eq!(k, pbc(s.rows[me][sl]));
                                        } else {
                                            assert_eq!(k, CARD_FACE_DOWN);
                                        }
                                    }
                                }
                                if s.pending != NONE && me == s.current as usize {
                                    assert_eq!(view.pending, pbc(s.pending));
                                }
                            }
                            if s.pending != NONE && is_power(s.pending) {
                                assert_eq!(view.pending, pbc(s.pending), "a drawn power card is public");
                            }
                            // Events of the next action: same draw pile, hand and touched slots.
                            if !round_ends {
                                let c = scramble(&s, v, &pinned, false, false, &mut pick);
                                let evs2 =
                                    RatATatCat::decide(&c, actor, &a, &mut Rng::for_command(&seed, seq)).unwrap();
                                assert_eq!(evs.len(), evs2.len());
                                for (e1, e2) in evs.iter().zip(&evs2) {
                                    let r1 = RatATatCat::redact(e1, v).map(|e| e.encode_to_vec());
                                    let r2 = RatATatCat::redact(e2, v).map(|e| e.encode_to_vec());
                                    assert_eq!(r1, r2, "event {} leaks to {v:?}", RatATatCat::event_type(e1));
                                    checked_events += 1;
                                }
                            }
                        }
                    }
                    for e in &evs {
                        RatATatCat::evolve(&mut s, e).unwrap();
                    }
                    seq += evs.len() as u64;
                }
            }
        }
        assert!(
            checked_views > 5_000 && checked_events > 5_000,
            "{checked_views} {checked_events}"
        );
    }

    #[test]
    fn private_events_reach_their_seat_only() {
        let s = dealt(3, 0, &[]);
        let evs = RatATatCat::start(
            &RatATatCat::initial(&cfg_with(3, &[("first_dealer", "0")])),
            &mut Rng::from_u64(11),
        )
        .unwrap();
        let Some(E::RoundDealt(d)) = RatATatCat::redact(&evs[0], Viewer::Seat(1)).unwrap().kind else {
            panic!()
        };
        assert!(d.draw_pile.is_empty() && d.rows.iter().all(|r| r.cards.iter().all(|&c| c == CARD_FACE_DOWN)));
        assert_eq!(d.draw_pile_size, 41);
        for e in &evs[1..] {
            let Some(E::InitialPeek(p)) = &e.kind else { panic!() };
            for v in 0..3u32 {
                let Some(E::InitialPeek(r)) = RatATatCat::redact(e, Viewer::Seat(v)).unwrap().kind else {
                    panic!()
                };
                if v == p.seat {
                    assert_eq!(
                        (r.slot1, r.slot4),
                        (pbc(s.rows[v as usize][0]), pbc(s.rows[v as usize][3]))
                    );
                } else {
                    assert_eq!((r.slot1, r.slot4), (0, 0));
                }
            }
            let Some(E::InitialPeek(r)) = RatATatCat::redact(e, Viewer::Spectator).unwrap().kind else {
                panic!()
            };
            assert_eq!((r.slot1, r.slot4), (0, 0));
            assert_eq!(RatATatCat::redact(e, Viewer::Auditor).as_ref(), Some(e));
        }
        // Face-down rows stay face down in every player's view, memory aid off by default.
        for v in 0..3u32 {
            let view = RatATatCat::view(&s, Viewer::Seat(v));
            assert!(view
                .players
                .iter()
                .all(|p| p.row.iter().all(|&c| c == CARD_FACE_DOWN) && p.known.is_empty()));
        }
        let audit = RatATatCat::view(&s, Viewer::Auditor);
        assert_eq!(audit.draw_pile.len(), 41);
        assert!(audit.players.iter().all(|p| p.row.iter().all(|&c| c != 0 && c != CARD_FACE_DOWN)));
    }

    #[test]
    fn bots_play_legal_moves_and_memory_beats_random() {
        // Heads-up, fixed rounds: the memory bot (seat 0) against random (seat 1).
        let config = cfg_with(2, &[("match_mode", "fixed_rounds"), ("rounds", "3")]);
        let mut better = 0;
        let games = 100;
        for g in 0..games {
            let mut s = RatATatCat::initial(&config);
            let mut rng = Rng::from_u64(g);
            for e in RatATatCat::start(&s, &mut rng).unwrap() {
                RatATatCat::evolve(&mut s, &e).unwrap();
            }
            let mut steps = 0;
            while RatATatCat::outcome(&s).is_none() {
                let seat = s.current as u32;
                let bot = if seat == 0 { "memory" } else { "random" };
                let a = RatATatCat::bot_action(&s, seat, bot, &mut rng).unwrap();
                assert!(
                    RatATatCat::legal_actions(&s, seat).contains(&a),
                    "{bot} chose an illegal {a:?}"
                );
                for e in RatATatCat::decide(&s, seat, &a, &mut rng).unwrap() {
                    RatATatCat::evolve(&mut s, &e).unwrap();
                }
                steps += 1;
                assert!(steps < 100_000);
            }
            let o = RatATatCat::outcome(&s).unwrap();
            if o.scores[0] < o.scores[1] {
                better += 1;
            }
        }
        assert!(better > games * 7 / 10, "memory bot won only {better} of {games}");
    }

    #[test]
    fn render_shows_what_the_viewer_sees() {
        let mut s = tv1_state();
        play(&mut s, draw());
        let audit = RatATatCat::render(&s, Viewer::Auditor);
        assert!(audit.contains("D2") && audit.contains("P0 to act"), "{audit}");
        let p1 = RatATatCat::render(&s, Viewer::Seat(1));
        assert!(!p1.contains("D2") && p1.contains("[  ?  ?  ?  ? ]"), "{p1}");
    }

    #[test]
    fn mutated_events_and_actions_never_panic() {
        // Record a match's states and events, then apply byte-mutated events to the states and
        // decide byte-mutated actions: errors are fine, panics are not.
        let config = cfg(4);
        let mut s = RatATatCat::initial(&config);
        let mut rng = Rng::from_u64(99);
        let mut states = vec![s.clone()];
        let mut events = RatATatCat::start(&s, &mut rng).unwrap();
        for e in &events {
            RatATatCat::evolve(&mut s, e).unwrap();
        }
        let mut actions = vec![];
        while RatATatCat::outcome(&s).is_none() {
            let seat = s.current as u32;
            let a = RatATatCat::bot_action(&s, seat, "random", &mut rng).unwrap();
            actions.push(a);
            let evs = RatATatCat::decide(&s, seat, &a, &mut rng).unwrap();
            for e in &evs {
                RatATatCat::evolve(&mut s, e).unwrap();
                states.push(s.clone());
            }
            events.extend(evs);
        }
        for i in 0..30_000usize {
            let st = &states[rng.index(states.len())];
            let mut bytes = events[rng.index(events.len())].encode_to_vec();
            if !bytes.is_empty() {
                for _ in 0..1 + rng.index(3) {
                    let k = rng.index(bytes.len());
                    bytes[k] = rng.next_u64() as u8;
                }
            }
            if let Ok(e) = pb::Event::decode(bytes.as_slice()) {
                let mut t = st.clone();
                let _ = RatATatCat::evolve(&mut t, &e);
                let _ = RatATatCat::redact(&e, Viewer::Seat(i as u32 % 4));
            }
            let mut ab = actions[rng.index(actions.len())].encode_to_vec();
            if !ab.is_empty() {
                let k = rng.index(ab.len());
                ab[k] = rng.next_u64() as u8;
            }
            if let Ok(a) = pb::Action::decode(ab.as_slice()) {
                for seat in 0..5 {
                    let _ = RatATatCat::decide(st, seat, &a, &mut Rng::from_u64(i as u64));
                }
            }
            let _ = RatATatCat::render(st, Viewer::Seat(i as u32 % 4));
        }
    }

    #[test]
    fn registry_drives_the_game_with_bytes() {
        let game = crate::registry::find("rat_a_tat_cat").expect("registered");
        assert_eq!(game.info().bots, vec!["random", "memory"]);
        let mut m = game.new_match(3, &Options::new()).unwrap();
        let seed = [9u8; 32];
        let mut seq = 1;
        for e in m.start(&mut Rng::for_command(&seed, seq)).unwrap() {
            m.apply(&e.payload).unwrap();
            seq += 1;
        }
        let seat = m.to_act()[0];
        assert!(matches!(
            m.decide(seat, &[0xff, 0xff], &mut Rng::from_u64(1)),
            Err(CoreError::Malformed(_))
        ));
        assert!(matches!(
            m.decide(7, &draw().encode_to_vec(), &mut Rng::from_u64(1)),
            Err(CoreError::Malformed(_))
        ));
        let a = m.bot_action(seat, "memory", &mut Rng::from_u64(1)).unwrap();
        let h0 = m.state_hash();
        for e in m.decide(seat, &a, &mut Rng::for_command(&seed, seq)).unwrap() {
            m.apply(&e.payload).unwrap();
        }
        assert_ne!(h0, m.state_hash());
        assert!(m.render(Viewer::Seat(seat)).unwrap().contains("Rat-a-Tat Cat"));
        assert!(matches!(m.apply(&[0x0a, 0x00]), Err(CoreError::Corrupt(_))));
    }

}
