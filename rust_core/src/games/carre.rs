//! Carré ("square alignments"), `docs/rules/carre.md` (seed 001).
//!
//! Two seats (seat 0 is the spec's P1, seat 1 is P2), one 52-card pack, 8 cards dealt each,
//! 36 in the stock. Each seat owns a 3x3 *square*; a turn is an automatic draw (while the stock
//! lasts) and then exactly one of: discard a card, place a card on a cell, or go out (own raw
//! points >= 5). Lines (3 rows, 3 columns, 2 diagonals) of three face-up tops score 2 when they
//! share a suit, 1 when they share a colour; face-down and empty cells block. Round score:
//! `raw` up to 5, `2*raw - 5` above, minus 1 for the seat that went out. Four rounds with
//! alternating starters; the higher total wins, equal totals are a draw (AMB13).
//!
//! # Representation
//! Cards are `0..52`, `rank * 4 + suit` with ranks `0..=8` = Ace..Nine, 9 = Ten, 10 = Jack,
//! 11 = Queen, 12 = King and suits 0 = S, 1 = H, 2 = D, 3 = C (H and D red). Hands are `u64`
//! bitsets; the stock is the dealt array with a cursor; every placement is appended to a
//! 52-entry log (piles are the log filtered by cell, so they keep placement order) and each of
//! the 18 cells caches its top log index and a *scoring mask*: `1 << suit | 0x10 (black) or
//! 0x20 (red)` for a face-up top, 0 for empty/face-down. A line's value is then
//! `(a & 0x0F != 0) + (a & 0x30 != 0)` with `a` the AND of its three masks (a suit match implies
//! the colour match, which gives 2). The whole state is `Copy` (no heap).
//!
//! # Events
//! `start` draws the first starter (unless fixed by the `first_starter` option) and the shuffle,
//! and records both (`MatchStarted`, `RoundDealt` with both hands and the whole stock). Every
//! later draw is the top of that recorded stock (`CardDrawn`), so `evolve` never needs
//! randomness. `decide` returns the action's event followed by every automatic step: the next
//! draw, `TurnPassed`, `RoundScored`, the next `RoundDealt` (new shuffle drawn from the command's
//! RNG) and its first draw, or `MatchEnded`.
//!
//! Rule refusal codes are the spec's §4.3 codes without the `E_` prefix (`NOT_IN_HAND`,
//! `WRONG_CELL`, `OWN_SQUARE_ONLY`, `CELL_FACE_UP`, `CELL_NOT_FACE_UP`, `GO_OUT_BELOW_5`), plus
//! `GO_OUT_WITHOUT_DRAW` (AMB26) and the platform's `NOT_YOUR_TURN` / `GAME_OVER`, checked in
//! the AMB21 order. Shape errors (no action kind, no card or a rank/suit outside the pack, a
//! cell outside 1..9, an unknown target square, a seat outside 0..1) are `Malformed`.
//!
//! # Bots
//! `random` is uniform over the legal actions. `greedy` uses only public tops and its own
//! hand: it scores every legal move by (own round score − opponent's round score) after the
//! move, plus a small bonus for own lines one card from scoring with the third cell open (and
//! a malus for the opponent's), minus the value of the card spent; it goes out when that locks
//! a lead of 3+ points (1+ with 10 or fewer stock cards left, or always at 10+ raw points).
//! It won 120 of 120 seeded matches against `random` (test `bots_play_legal_moves_...`).
//!
//! # Decisions added here (in the spec's style)
//! - **AMB22 (card identities on the wire).** Cards are sent as (rank, suit), never as deck
//!   positions or ids, so no id can leak the stock order; nothing needs re-randomising.
//! - **AMB23 (who placed a face-down card in the views).** Every pile entry carries `placed_by`
//!   (public, §7); a face-down entry carries its card only for its placer and the auditor, also
//!   after it is covered. Spectators never see face-down identities or hands.
//! - **AMB24 (first starter option).** The spec lets the engine "take it as a parameter or from
//!   the RNG": option `first_starter` = `random` (default, drawn in `start`), `0` or `1`.
//! - **AMB25 (tie-break rounds cap).** With `tiebreak_extra_rounds = true`, extra rounds are
//!   played while the totals are equal, at most 8 of them; a tie after that ends the match as
//!   an administrative abort (`aborted: true`, no winners, reason `ROUND_CAP`). Extra rounds
//!   continue the R23 alternation (odd rounds by the first starter).
//! - **AMB26 (go_out without a draw disabled).** With `allow_go_out_without_draw = false` (AMB9
//!   flag), going out on a turn with no draw is refused with `GO_OUT_WITHOUT_DRAW`.
//! - **AMB27 (`cell_of_rank` option).** AMB2's constant is the option `cell_of_rank`: nine
//!   digits, a permutation of 1..9, giving the cell of Ace..Nine (default `123456789`).
//! - **AMB28 (legal action order).** `go_out` first when legal; then per card of the hand in
//!   card order (rank, then suit S H D C): placements in the own square (cells 1..9), placements
//!   in the opponent's square (cells 1..9), then its discard (matches TV19's listing).

use crate::error::{CoreError, CoreResult};
use crate::game::{Game, OptionSpec, OptionValues, Seat, Seats, Viewer};
use crate::proto::carre as pb;
use crate::proto::Outcome;
use crate::rng::Rng;

use pb::event::Kind as Ev;

/// The timeout policy `discard` (match clocks, docs/rules/carre.md §11).
const TIMEOUT_DISCARD: &str = "discard";
/// The timeout policy `forfeit`: the match ends, the other seat winning (§11).
const TIMEOUT_FORFEIT: &str = "forfeit";

// ------------------------------------------------------------------ cards

pub const DECK: usize = 52;
pub const HAND: usize = 8;
pub const STOCK: usize = DECK - 2 * HAND;
const TEN: u8 = 9;
const JACK: u8 = 10;
const QUEEN: u8 = 11;
const KING: u8 = 12;
const NONE: u8 = 0xFF;
/// Extra rounds allowed when `tiebreak_extra_rounds` is on (AMB25).
pub const MAX_EXTRA_ROUNDS: u8 = 8;
pub const MAX_ROUNDS_OPTION: u8 = 12;
const MAX_HISTORY: usize = (MAX_ROUNDS_OPTION + MAX_EXTRA_ROUNDS) as usize;

/// The 8 lines of a square as cell indexes 0..9: R1 R2 R3 C1 C2 C3 D1 D2.
pub const LINES: [[usize; 3]; 8] =
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]];
const LINE_NAMES: [&str; 8] = ["R1", "R2", "R3", "C1", "C2", "C3", "D1", "D2"];

#[inline]
fn rank(c: u8) -> u8 {
    c >> 2
}
#[inline]
fn suit(c: u8) -> u8 {
    c & 3
}
#[inline]
fn bit(c: u8) -> u64 {
    1u64 << c
}

/// Scoring mask of a face-up card: its suit bit and its colour bit.
#[inline]
pub fn card_mask(c: u8) -> u8 {
    let s = suit(c);
    (1 << s) | if s == 1 || s == 2 { 0x20 } else { 0x10 }
}

#[inline]
fn line_value(m: &[u8; 9], l: &[usize; 3]) -> u32 {
    let a = m[l[0]] & m[l[1]] & m[l[2]];
    ((a & 0x0F) != 0) as u32 + ((a & 0x30) != 0) as u32
}

/// Raw alignment points of a square given its 9 scoring masks (0 = empty or face down).
#[inline]
pub fn score_square(m: &[u8; 9]) -> u32 {
    let mut t = 0;
    for l in &LINES {
        t += line_value(m, l);
    }
    t
}

fn line_points(m: &[u8; 9]) -> [u32; 8] {
    let mut out = [0; 8];
    for (i, l) in LINES.iter().enumerate() {
        out[i] = line_value(m, l);
    }
    out
}

/// Round score before the going-out penalty (R13).
#[inline]
pub fn base_score(raw: u32) -> u32 {
    if raw <= 5 {
        raw
    } else {
        2 * raw - 5
    }
}

const RANK_CODES: &[u8; 13] = b"A23456789TJQK";
const SUIT_CODES: &[u8; 4] = b"SHDC";

/// `7H`, `TS`, `QD`.
pub fn card_name(c: u8) -> String {
    let r = RANK_CODES.get(rank(c) as usize).copied().unwrap_or(b'?') as char;
    let s = SUIT_CODES.get(suit(c) as usize).copied().unwrap_or(b'?') as char;
    format!("{r}{s}")
}

/// Parses `7H` style codes (used by tests and tools).
pub fn parse_card(code: &str) -> Option<u8> {
    let b = code.as_bytes();
    if b.len() != 2 {
        return None;
    }
    let r = RANK_CODES.iter().position(|&x| x == b[0].to_ascii_uppercase())?;
    let s = SUIT_CODES.iter().position(|&x| x == b[1].to_ascii_uppercase())?;
    Some((r * 4 + s) as u8)
}

fn card_pb(c: u8) -> pb::Card {
    pb::Card { rank: rank(c) as i32 + 1, suit: suit(c) as i32 + 1 }
}

fn card_from_pb(c: Option<&pb::Card>) -> Option<u8> {
    let c = c?;
    if !(1..=13).contains(&c.rank) || !(1..=4).contains(&c.suit) {
        return None;
    }
    Some(((c.rank - 1) * 4 + (c.suit - 1)) as u8)
}

fn rank_word(c: u8) -> &'static str {
    match rank(c) {
        0..=8 => "pip card",
        TEN => "Ten",
        JACK => "Jack",
        QUEEN => "Queen",
        _ => "King",
    }
}

// ------------------------------------------------------------------ config and state

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub rounds: u8,
    pub go_out_without_draw: bool,
    pub tiebreak: bool,
    /// Cell index (0..9) of Ace..Nine.
    pub cell_of_rank: [u8; 9],
    pub first_starter: Option<u8>,
}

impl Default for Config {
    /// The configuration of the options' defaults.
    fn default() -> Self {
        Carre::configure(2, &OptionValues::defaults(&Carre::options())).expect("the defaults configure a match")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    NotStarted,
    Dealing,
    Drawing,
    Passing,
    Action,
    Scoring,
    Ending,
    Over,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Entry {
    card: u8,
    /// owner * 9 + cell index
    cell: u8,
    down: bool,
    by: u8,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct RoundRec {
    went_out: u8,
    raw: [u8; 2],
    score: [u8; 2],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CellState {
    Empty,
    Up,
    Down,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct State {
    cfg: Config,
    phase: Phase,
    round: u8,
    first_starter: u8,
    starter: u8,
    current: u8,
    drew: bool,
    went_out: u8,
    aborted: bool,
    /// The seat that forfeited when its time was up (match clocks, §11), or `NONE`.
    forfeited: u8,
    hands: [u64; 2],
    stock: [u8; STOCK],
    stock_pos: u8,
    discard: [u8; DECK],
    n_discard: u8,
    log: [Entry; DECK],
    n_placed: u8,
    top: [[u8; 9]; 2],
    mask: [[u8; 9]; 2],
    totals: [u32; 2],
    history: [RoundRec; MAX_HISTORY],
    n_history: u8,
}

/// A move in the compact internal form (the hot path never builds protobuf messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    GoOut,
    Discard(u8),
    /// card, owner seat, cell index 0..9
    Place(u8, u8, u8),
}

/// Fixed-capacity move list (the worst case is 127, TV24).
pub struct Moves {
    pub n: usize,
    pub m: [Move; 192],
}

impl Moves {
    pub fn new() -> Self {
        Moves { n: 0, m: [Move::GoOut; 192] }
    }
    #[inline]
    fn push(&mut self, mv: Move) {
        if self.n < self.m.len() {
            self.m[self.n] = mv;
            self.n += 1;
        }
    }
    pub fn as_slice(&self) -> &[Move] {
        &self.m[..self.n]
    }
}

impl Default for Moves {
    fn default() -> Self {
        Self::new()
    }
}

fn rule(reason: &'static str, msg: impl Into<String>) -> CoreError {
    CoreError::rule(reason, msg)
}

impl State {
    pub fn new(cfg: Config) -> Self {
        State {
            cfg,
            phase: Phase::NotStarted,
            round: 0,
            first_starter: 0,
            starter: 0,
            current: 0,
            drew: false,
            went_out: NONE,
            aborted: false,
            forfeited: NONE,
            hands: [0; 2],
            stock: [0; STOCK],
            stock_pos: STOCK as u8,
            discard: [0; DECK],
            n_discard: 0,
            log: [Entry::default(); DECK],
            n_placed: 0,
            top: [[NONE; 9]; 2],
            mask: [[0; 9]; 2],
            totals: [0; 2],
            history: [RoundRec::default(); MAX_HISTORY],
            n_history: 0,
        }
    }

    #[inline]
    fn cell_state(&self, owner: u8, idx: u8) -> CellState {
        let t = self.top[owner as usize][idx as usize];
        if t == NONE {
            CellState::Empty
        } else if self.log[t as usize].down {
            CellState::Down
        } else {
            CellState::Up
        }
    }

    #[inline]
    pub fn raw(&self, seat: u8) -> u32 {
        score_square(&self.mask[seat as usize & 1])
    }

    fn stock_left(&self) -> usize {
        STOCK - self.stock_pos as usize
    }

    fn expected_starter(&self, round: u8) -> u8 {
        if round % 2 == 1 {
            self.first_starter
        } else {
            1 - self.first_starter
        }
    }

    /// Rule check of a placement (AMB21 order). Returns whether the card goes face down.
    fn check_place(&self, seat: u8, card: u8, owner: u8, idx: u8) -> CoreResult<bool> {
        if self.hands[seat as usize] & bit(card) == 0 {
            return Err(rule("NOT_IN_HAND", format!("you do not hold {}", card_name(card))));
        }
        let r = rank(card);
        let own = owner == seat;
        let st = self.cell_state(owner, idx);
        let name = card_name(card);
        let cell_no = idx + 1;
        match r {
            0..=8 => {
                let home = self.cfg.cell_of_rank[r as usize];
                if home != idx {
                    return Err(rule(
                        "WRONG_CELL",
                        format!("{name} can only go on cell {} (of either square), not cell {cell_no}", home + 1),
                    ));
                }
                if st == CellState::Up {
                    return Err(rule(
                        "CELL_FACE_UP",
                        format!("cell {cell_no} holds a face-up card; {name} needs an empty or face-down cell"),
                    ));
                }
                Ok(false)
            }
            TEN | KING => {
                if !own {
                    return Err(rule(
                        "OWN_SQUARE_ONLY",
                        format!("a {} can only be placed in your own square", rank_word(card)),
                    ));
                }
                if r == TEN && st == CellState::Up {
                    return Err(rule(
                        "CELL_FACE_UP",
                        format!("cell {cell_no} holds a face-up card; a Ten needs an empty or face-down cell"),
                    ));
                }
                Ok(false)
            }
            _ => {
                // Jack (either square) or Queen (own square), face down on a face-up card.
                if r == QUEEN && !own {
                    return Err(rule("OWN_SQUARE_ONLY", "a Queen can only be placed in your own square"));
                }
                if st != CellState::Up {
                    return Err(rule(
                        "CELL_NOT_FACE_UP",
                        format!(
                            "a {} goes face down on a face-up card; cell {cell_no} is {}",
                            rank_word(card),
                            if st == CellState::Empty { "empty" } else { "face down" }
                        ),
                    ));
                }
                Ok(true)
            }
        }
    }

    fn check_go_out(&self, seat: u8) -> CoreResult<u32> {
        let raw = self.raw(seat);
        if raw < 5 {
            return Err(rule(
                "GO_OUT_BELOW_5",
                format!("going out needs at least 5 alignment points in your own square; it has {raw}"),
            ));
        }
        if !self.drew && !self.cfg.go_out_without_draw {
            return Err(rule("GO_OUT_WITHOUT_DRAW", "going out is only allowed right after drawing from the stock"));
        }
        Ok(raw)
    }

    /// Every legal move of the seat to act (AMB28 order). Empty when `seat` is not awaited.
    pub fn gen_moves(&self, seat: u8, out: &mut Moves) {
        out.n = 0;
        if self.phase != Phase::Action || seat != self.current {
            return;
        }
        let me = seat as usize & 1;
        let opp = 1 - me;
        if self.raw(seat) >= 5 && (self.drew || self.cfg.go_out_without_draw) {
            out.push(Move::GoOut);
        }
        let mut h = self.hands[me];
        while h != 0 {
            let c = h.trailing_zeros() as u8;
            h &= h - 1;
            let r = rank(c);
            match r {
                0..=8 => {
                    let idx = self.cfg.cell_of_rank[r as usize];
                    for sq in [me, opp] {
                        if self.mask[sq][idx as usize] == 0 {
                            out.push(Move::Place(c, sq as u8, idx));
                        }
                    }
                }
                TEN => {
                    for i in 0..9u8 {
                        if self.mask[me][i as usize] == 0 {
                            out.push(Move::Place(c, me as u8, i));
                        }
                    }
                }
                KING => {
                    for i in 0..9u8 {
                        out.push(Move::Place(c, me as u8, i));
                    }
                }
                JACK => {
                    for sq in [me, opp] {
                        for i in 0..9u8 {
                            if self.mask[sq][i as usize] != 0 {
                                out.push(Move::Place(c, sq as u8, i));
                            }
                        }
                    }
                }
                _ => {
                    for i in 0..9u8 {
                        if self.mask[me][i as usize] != 0 {
                            out.push(Move::Place(c, me as u8, i));
                        }
                    }
                }
            }
            out.push(Move::Discard(c));
        }
    }

    /// A uniformly random legal move of the seat to act, drawn without listing the moves:
    /// each card's number of legal moves is counted from 9-bit face-up masks, then the chosen
    /// index is decoded (same order as `gen_moves`). `None` when `seat` is not awaited.
    #[inline]
    pub fn random_move(&self, seat: u8, rng: &mut Rng) -> Option<Move> {
        if self.phase != Phase::Action || seat != self.current {
            return None;
        }
        let me = seat as usize & 1;
        let opp = 1 - me;
        let up = |sq: usize| -> u32 {
            let m = &self.mask[sq];
            let mut b = 0u32;
            for (i, &x) in m.iter().enumerate() {
                b |= ((x != 0) as u32) << i;
            }
            b
        };
        let (up_me, up_opp) = (up(me), up(opp));
        let free_me = !up_me & 0x1FF;
        let free_opp = !up_opp & 0x1FF;
        let go = (self.raw(seat) >= 5 && (self.drew || self.cfg.go_out_without_draw)) as u64;
        // Per card: (bitmask of own-square cells, bitmask of opponent cells); +1 for the discard.
        let targets = |c: u8| -> (u32, u32) {
            match rank(c) {
                r @ 0..=8 => {
                    let b = 1u32 << self.cfg.cell_of_rank[r as usize];
                    (free_me & b, free_opp & b)
                }
                TEN => (free_me, 0),
                KING => (0x1FF, 0),
                JACK => (up_me, up_opp),
                _ => (up_me, 0),
            }
        };
        let mut total = go;
        let mut h = self.hands[me];
        while h != 0 {
            let c = h.trailing_zeros() as u8;
            h &= h - 1;
            let (a, b) = targets(c);
            total += (a.count_ones() + b.count_ones() + 1) as u64;
        }
        let mut k = rng.below(total);
        if go == 1 {
            if k == 0 {
                return Some(Move::GoOut);
            }
            k -= 1;
        }
        let nth_bit = |mut bits: u32, n: u64| -> u8 {
            for _ in 0..n {
                bits &= bits - 1;
            }
            bits.trailing_zeros() as u8
        };
        let mut h = self.hands[me];
        while h != 0 {
            let c = h.trailing_zeros() as u8;
            h &= h - 1;
            let (a, b) = targets(c);
            let (na, nb) = (a.count_ones() as u64, b.count_ones() as u64);
            if k < na {
                return Some(Move::Place(c, me as u8, nth_bit(a, k)));
            }
            k -= na;
            if k < nb {
                return Some(Move::Place(c, opp as u8, nth_bit(b, k)));
            }
            k -= nb;
            if k == 0 {
                return Some(Move::Discard(c));
            }
            k -= 1;
        }
        None
    }

    // ---- mutations (shared by `evolve` and the simulation hot path; callers check legality)

    fn deal(&mut self, round: u8, starter: u8, hands: [u64; 2], stock: &[u8; STOCK]) {
        self.round = round;
        self.starter = starter;
        self.current = starter;
        self.drew = false;
        self.went_out = NONE;
        self.hands = hands;
        self.stock = *stock;
        self.stock_pos = 0;
        self.n_discard = 0;
        self.n_placed = 0;
        self.top = [[NONE; 9]; 2];
        self.mask = [[0; 9]; 2];
        self.phase = Phase::Drawing;
    }

    #[inline]
    fn draw(&mut self) -> u8 {
        let c = self.stock[self.stock_pos as usize];
        self.stock_pos += 1;
        self.hands[self.current as usize] |= bit(c);
        self.drew = true;
        self.phase = Phase::Action;
        c
    }

    #[inline]
    fn place(&mut self, seat: u8, card: u8, owner: u8, idx: u8, down: bool) {
        self.hands[seat as usize] &= !bit(card);
        let n = self.n_placed as usize;
        self.log[n] = Entry { card, cell: owner * 9 + idx, down, by: seat };
        self.n_placed += 1;
        self.top[owner as usize][idx as usize] = n as u8;
        self.mask[owner as usize][idx as usize] = if down { 0 } else { card_mask(card) };
        self.end_turn();
    }

    #[inline]
    fn discard_card(&mut self, seat: u8, card: u8) {
        self.hands[seat as usize] &= !bit(card);
        self.discard[self.n_discard as usize] = card;
        self.n_discard += 1;
        self.end_turn();
    }

    fn go_out(&mut self, seat: u8) {
        self.went_out = seat;
        self.phase = Phase::Scoring;
    }

    #[inline]
    fn end_turn(&mut self) {
        if self.stock_left() == 0 && self.hands[0] == 0 && self.hands[1] == 0 {
            self.phase = Phase::Scoring;
            return;
        }
        self.current ^= 1;
        self.drew = false;
        self.phase = if self.stock_left() > 0 {
            Phase::Drawing
        } else if self.hands[self.current as usize] == 0 {
            Phase::Passing
        } else {
            Phase::Action
        };
    }

    fn pass(&mut self) {
        self.current ^= 1;
        self.phase = Phase::Action;
    }

    #[inline]
    fn apply_move(&mut self, seat: u8, mv: Move) {
        match mv {
            Move::GoOut => self.go_out(seat),
            Move::Discard(c) => self.discard_card(seat, c),
            Move::Place(c, owner, idx) => {
                let r = rank(c);
                self.place(seat, c, owner, idx, r == JACK || r == QUEEN)
            }
        }
    }

    fn round_result(&self) -> RoundRec {
        let mut rec = RoundRec { went_out: self.went_out, ..Default::default() };
        for s in 0..2u8 {
            let raw = self.raw(s);
            let mut score = base_score(raw);
            if self.went_out == s {
                score = score.saturating_sub(1);
            }
            rec.raw[s as usize] = raw as u8;
            rec.score[s as usize] = score as u8;
        }
        rec
    }

    fn record_round(&mut self, rec: RoundRec) {
        for s in 0..2 {
            self.totals[s] += rec.score[s] as u32;
        }
        if (self.n_history as usize) < MAX_HISTORY {
            self.history[self.n_history as usize] = rec;
            self.n_history += 1;
        }
        let played = self.round;
        let tied = self.totals[0] == self.totals[1];
        if played >= self.cfg.rounds && (!tied || !self.cfg.tiebreak) {
            self.phase = Phase::Ending;
        } else if played >= self.cfg.rounds + MAX_EXTRA_ROUNDS {
            self.aborted = true;
            self.phase = Phase::Ending;
        } else {
            self.phase = Phase::Dealing;
        }
    }

    /// (winners, result) once the match is decided.
    fn result(&self) -> (Vec<u32>, pb::MatchResult) {
        if self.aborted {
            return (vec![], pb::MatchResult::Aborted);
        }
        if self.forfeited < 2 {
            // The other seat wins, whatever the totals (§11).
            return (vec![1 - self.forfeited as u32], pb::MatchResult::Win);
        }
        match self.totals[0].cmp(&self.totals[1]) {
            std::cmp::Ordering::Greater => (vec![0], pb::MatchResult::Win),
            std::cmp::Ordering::Less => (vec![1], pb::MatchResult::Win),
            std::cmp::Ordering::Equal => (vec![0, 1], pb::MatchResult::Draw),
        }
    }

    /// Cards of a pile, bottom to top.
    fn pile(&self, owner: u8, idx: u8) -> impl Iterator<Item = &Entry> {
        let cell = owner * 9 + idx;
        self.log[..self.n_placed as usize].iter().filter(move |e| e.cell == cell)
    }
}

// ------------------------------------------------------------------ simulation hot path

/// Deals a round from a fresh shuffle (`Rng::shuffle`).
fn shuffled_deal(starter: u8, rng: &mut Rng) -> ([u64; 2], [[u8; HAND]; 2], [u8; STOCK]) {
    let mut deck: [u8; DECK] = [0; DECK];
    for (i, c) in deck.iter_mut().enumerate() {
        *c = i as u8;
    }
    rng.shuffle(&mut deck);
    let mut hands = [0u64; 2];
    let mut order = [[0u8; HAND]; 2];
    for i in 0..2 * HAND {
        let seat = if i % 2 == 0 { starter } else { 1 - starter } as usize;
        hands[seat] |= bit(deck[i]);
        order[seat][i / 2] = deck[i];
    }
    let mut stock = [0u8; STOCK];
    stock.copy_from_slice(&deck[2 * HAND..]);
    (hands, order, stock)
}

/// Plays one round from a fresh deal with uniformly random legal moves, on the internal
/// representation (no protobuf). Returns the raw points of both squares at round end.
pub fn simulate_random_round(rng: &mut Rng) -> [u32; 2] {
    let mut s = State::new(Config::default());
    s.phase = Phase::Dealing;
    let starter = rng.below(2) as u8;
    let (hands, _, stock) = shuffled_deal(starter, rng);
    s.deal(1, starter, hands, &stock);
    loop {
        match s.phase {
            Phase::Drawing => {
                s.draw();
            }
            Phase::Passing => s.pass(),
            Phase::Action => {
                let seat = s.current;
                match s.random_move(seat, rng) {
                    Some(mv) => s.apply_move(seat, mv),
                    None => break,
                }
            }
            _ => break,
        }
    }
    [s.raw(0), s.raw(1)]
}

// ------------------------------------------------------------------ the game

pub struct Carre;

fn seat_u8(seat: u32, what: &str) -> CoreResult<u8> {
    if seat < 2 {
        Ok(seat as u8)
    } else {
        Err(CoreError::corrupt(format!("{what}: seat {seat} is not 0 or 1")))
    }
}

fn ev(kind: Ev) -> pb::Event {
    pb::Event { kind: Some(kind) }
}

impl Carre {
    /// Appends (and applies to `s`) every automatic step until a seat must decide or the match
    /// is over.
    fn auto_steps(s: &mut State, rng: &mut Rng, out: &mut Vec<pb::Event>) -> CoreResult<()> {
        loop {
            let e = match s.phase {
                Phase::Dealing => {
                    let round = s.round + 1;
                    let starter = s.expected_starter(round);
                    let (_, order, stock) = shuffled_deal(starter, rng);
                    ev(Ev::RoundDealt(pb::RoundDealt {
                        round: round as u32,
                        starter: starter as u32,
                        dealer: 1 - starter as u32,
                        hands: (0..2)
                            .map(|seat| pb::DealtHand {
                                seat,
                                cards: order[seat as usize].iter().map(|&c| card_pb(c)).collect(),
                                count: HAND as u32,
                            })
                            .collect(),
                        // Bottom first: the next card drawn last.
                        stock: stock.iter().rev().map(|&c| card_pb(c)).collect(),
                        stock_size: STOCK as u32,
                    }))
                }
                Phase::Drawing => {
                    let c = s.stock[s.stock_pos as usize];
                    ev(Ev::CardDrawn(pb::CardDrawn {
                        seat: s.current as u32,
                        card: Some(card_pb(c)),
                        stock_size: (s.stock_left() - 1) as u32,
                    }))
                }
                Phase::Passing => ev(Ev::TurnPassed(pb::TurnPassed { seat: s.current as u32 })),
                Phase::Scoring => {
                    let rec = s.round_result();
                    ev(Ev::RoundScored(Self::scored_event(s, &rec)))
                }
                Phase::Ending => {
                    let (winners, result) = s.result();
                    ev(Ev::MatchEnded(pb::MatchEnded {
                        totals: s.totals.to_vec(),
                        winners,
                        result: result as i32,
                        rounds_played: s.n_history as u32,
                    }))
                }
                Phase::NotStarted | Phase::Action | Phase::Over => return Ok(()),
            };
            Self::evolve(s, &e)?;
            out.push(e);
        }
    }

    fn scored_event(s: &State, rec: &RoundRec) -> pb::RoundScored {
        pb::RoundScored {
            round: s.round as u32,
            end: if rec.went_out == NONE { pb::RoundEnd::Exhaustion } else { pb::RoundEnd::WentOut } as i32,
            scores: (0..2)
                .map(|i| pb::SeatRoundScore {
                    seat: i as u32,
                    raw_points: rec.raw[i] as u32,
                    base_score: base_score(rec.raw[i] as u32),
                    went_out: rec.went_out == i as u8,
                    round_score: rec.score[i] as u32,
                    total: s.totals[i] + rec.score[i] as u32,
                })
                .collect(),
        }
    }

    fn move_to_action(seat: u8, mv: Move) -> pb::Action {
        use pb::action::Kind as A;
        let kind = match mv {
            Move::GoOut => A::GoOut(pb::GoOut {}),
            Move::Discard(c) => A::Discard(pb::Discard { card: Some(card_pb(c)) }),
            Move::Place(c, owner, idx) => A::Place(pb::Place {
                card: Some(card_pb(c)),
                square: if owner == seat { pb::TargetSquare::Own } else { pb::TargetSquare::Opponent } as i32,
                cell: idx as u32 + 1,
            }),
        };
        pb::Action { kind: Some(kind) }
    }

    /// Parses and rule-checks a client action into a move.
    fn parse_action(state: &State, seat: u8, action: &pb::Action) -> CoreResult<Move> {
        use pb::action::Kind as A;
        let kind = action.kind.as_ref().ok_or_else(|| CoreError::malformed("action has no kind"))?;
        let bad_card = || CoreError::malformed("the action's card is missing or not a card of the pack");
        match kind {
            A::GoOut(_) => {
                state.check_go_out(seat)?;
                Ok(Move::GoOut)
            }
            A::Discard(d) => {
                let c = card_from_pb(d.card.as_ref()).ok_or_else(bad_card)?;
                if state.hands[seat as usize] & bit(c) == 0 {
                    return Err(rule("NOT_IN_HAND", format!("you do not hold {}", card_name(c))));
                }
                Ok(Move::Discard(c))
            }
            A::Place(p) => {
                let c = card_from_pb(p.card.as_ref()).ok_or_else(bad_card)?;
                let owner = match pb::TargetSquare::try_from(p.square) {
                    Ok(pb::TargetSquare::Own) => seat,
                    Ok(pb::TargetSquare::Opponent) => 1 - seat,
                    _ => return Err(CoreError::malformed(format!("square {} is not OWN or OPPONENT", p.square))),
                };
                if !(1..=9).contains(&p.cell) {
                    return Err(CoreError::malformed(format!("cell {} is not in 1..9", p.cell)));
                }
                let idx = (p.cell - 1) as u8;
                state.check_place(seat, c, owner, idx)?;
                Ok(Move::Place(c, owner, idx))
            }
        }
    }

    fn move_event(state: &State, seat: u8, mv: Move) -> pb::Event {
        match mv {
            Move::GoOut => ev(Ev::WentOut(pb::WentOut { seat: seat as u32, raw_points: state.raw(seat) })),
            Move::Discard(c) => ev(Ev::CardDiscarded(pb::CardDiscarded { seat: seat as u32, card: Some(card_pb(c)) })),
            Move::Place(c, owner, idx) => {
                let r = rank(c);
                ev(Ev::CardPlaced(pb::CardPlaced {
                    seat: seat as u32,
                    card: Some(card_pb(c)),
                    square_owner: owner as u32,
                    cell: idx as u32 + 1,
                    face_down: r == JACK || r == QUEEN,
                }))
            }
        }
    }

    fn evolve_dealt(s: &mut State, d: &pb::RoundDealt) -> CoreResult<()> {
        if s.phase != Phase::Dealing {
            return Err(CoreError::corrupt("round_dealt outside a deal"));
        }
        if d.round != s.round as u32 + 1 {
            return Err(CoreError::corrupt(format!("round_dealt for round {} after round {}", d.round, s.round)));
        }
        let round = s.round + 1;
        let starter = s.expected_starter(round);
        if d.starter != starter as u32 || d.dealer != 1 - starter as u32 {
            return Err(CoreError::corrupt("round_dealt names the wrong starter or dealer"));
        }
        if d.hands.len() != 2 || d.stock.len() != STOCK || d.stock_size != STOCK as u32 {
            return Err(CoreError::corrupt("round_dealt needs two hands and the full stock"));
        }
        let mut seen = 0u64;
        let mut take = |c: &pb::Card| -> CoreResult<u8> {
            let id = card_from_pb(Some(c)).ok_or_else(|| CoreError::corrupt("round_dealt holds a non-card"))?;
            if seen & bit(id) != 0 {
                return Err(CoreError::corrupt(format!("round_dealt deals {} twice", card_name(id))));
            }
            seen |= bit(id);
            Ok(id)
        };
        let mut hands = [0u64; 2];
        for (i, h) in d.hands.iter().enumerate() {
            if h.seat != i as u32 || h.cards.len() != HAND || h.count != HAND as u32 {
                return Err(CoreError::corrupt("round_dealt hand out of order or not 8 cards"));
            }
            for c in &h.cards {
                hands[i] |= bit(take(c)?);
            }
        }
        // The event lists the stock bottom first; the state keeps it top first.
        let mut stock = [0u8; STOCK];
        for (i, c) in d.stock.iter().rev().enumerate() {
            stock[i] = take(c)?;
        }
        s.deal(round, starter, hands, &stock);
        Ok(())
    }

    fn expect_turn(s: &State, phase: Phase, seat: u32, what: &str) -> CoreResult<u8> {
        if s.phase != phase {
            return Err(CoreError::corrupt(format!("{what} in phase {:?}", s.phase)));
        }
        let seat = seat_u8(seat, what)?;
        if seat != s.current {
            return Err(CoreError::corrupt(format!("{what} by seat {seat}, but seat {} is to move", s.current)));
        }
        Ok(seat)
    }

    fn bot_greedy(s: &State, seat: u8, rng: &mut Rng) -> Move {
        let mut moves = Moves::new();
        s.gen_moves(seat, &mut moves);
        let me = seat as usize;
        let opp = 1 - me;
        let own_raw = s.raw(seat);
        let opp_raw = s.raw(1 - seat);
        // Going out locks the current position in.
        if moves.as_slice().first() == Some(&Move::GoOut) {
            let lead = base_score(own_raw) as i64 - 1 - base_score(opp_raw) as i64;
            if lead >= 3 || (lead >= 1 && s.stock_left() <= 10) || own_raw >= 10 {
                return Move::GoOut;
            }
        }
        let eval = |m: &[[u8; 9]; 2]| -> f64 {
            let mut v = base_score(score_square(&m[me])) as f64 - base_score(score_square(&m[opp])) as f64;
            v += 0.35 * potential(&m[me]) - 0.3 * potential(&m[opp]);
            v
        };
        let keep = |c: u8| -> f64 {
            match rank(c) {
                KING => 1.0,
                JACK => 0.8,
                QUEEN => 0.6,
                TEN => 0.5,
                r => {
                    if s.mask[me][s.cfg.cell_of_rank[r as usize] as usize] == 0 {
                        0.3
                    } else {
                        0.05
                    }
                }
            }
        };
        let mut best = f64::NEG_INFINITY;
        let mut best_moves: [Move; 8] = [Move::GoOut; 8];
        let mut n_best = 0usize;
        for &mv in moves.as_slice() {
            let v = match mv {
                Move::GoOut => continue,
                Move::Discard(c) => eval(&s.mask) - keep(c),
                Move::Place(c, owner, idx) => {
                    let mut m = s.mask;
                    let r = rank(c);
                    m[owner as usize][idx as usize] = if r == JACK || r == QUEEN { 0 } else { card_mask(c) };
                    eval(&m) - keep(c) + 0.01
                }
            };
            if v > best + 1e-9 {
                best = v;
                n_best = 0;
            }
            if (v - best).abs() <= 1e-9 && n_best < best_moves.len() {
                best_moves[n_best] = mv;
                n_best += 1;
            }
        }
        if n_best == 0 {
            return moves.as_slice().first().copied().unwrap_or(Move::GoOut);
        }
        best_moves[rng.index(n_best)]
    }
}

/// Lines two cards away from scoring whose third cell is open to a pip card or Ten.
fn potential(m: &[u8; 9]) -> f64 {
    let mut p = 0.0;
    for l in &LINES {
        let (a, b, c) = (m[l[0]], m[l[1]], m[l[2]]);
        let ups = (a != 0) as u8 + (b != 0) as u8 + (c != 0) as u8;
        if ups == 2 {
            let and = (if a == 0 { 0xFF } else { a }) & (if b == 0 { 0xFF } else { b }) & (if c == 0 { 0xFF } else { c });
            if and & 0x0F != 0 {
                p += 1.0;
            } else if and & 0x30 != 0 {
                p += 0.5;
            }
        }
    }
    p
}

impl Game for Carre {
    type Config = Config;
    type State = State;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const ID: &'static str = "carre";
    const NAME: &'static str = "Carré";
    const PROTO_PACKAGE: &'static str = "tablier.carre.v1";
    const MIN_PLAYERS: u32 = 2;
    const MAX_PLAYERS: u32 = 2;
    const BOTS: &'static [&'static str] = &["random", "greedy"];

    fn options() -> Vec<OptionSpec> {
        vec![
            OptionSpec::int(
                "rounds_per_match",
                4,
                1,
                MAX_ROUNDS_OPTION as u32,
                "rounds in a match, 1..12 (the starter alternates every round)",
            ),
            OptionSpec::choice(
                "allow_go_out_without_draw",
                &["true", "false"],
                "true",
                "once the stock is empty a player may go out without drawing (AMB9)",
            ),
            OptionSpec::choice(
                "tiebreak_extra_rounds",
                &["true", "false"],
                "false",
                "play extra rounds (at most 8) while the totals are equal (AMB13)",
            ),
            OptionSpec::text(
                "cell_of_rank",
                32,
                "123456789",
                "cells (1..9, reading order) of Ace..Nine as nine digits, a permutation of 1..9 (AMB2)",
            ),
            OptionSpec::choice(
                "first_starter",
                &["random", "0", "1"],
                "random",
                "seat that starts round 1: drawn at random, or fixed",
            ),
        ]
    }

    fn configure(_seats: u32, options: &OptionValues) -> CoreResult<Config> {
        let v = options.text("cell_of_rank");
        let b = v.as_bytes();
        let mut cell_of_rank = [0u8; 9];
        let mut seen = 0u16;
        let ok = b.len() == 9
            && b.iter().enumerate().all(|(i, &d)| {
                if !(b'1'..=b'9').contains(&d) || seen & (1 << (d - b'1')) != 0 {
                    return false;
                }
                seen |= 1 << (d - b'1');
                cell_of_rank[i] = d - b'1';
                true
            });
        if !ok {
            return Err(CoreError::option(format!(
                "cell_of_rank must be nine digits forming a permutation of 1..9 (e.g. \"123456789\"), not {v:?}"
            )));
        }
        Ok(Config {
            rounds: options.int("rounds_per_match") as u8,
            go_out_without_draw: options.text("allow_go_out_without_draw") == "true",
            tiebreak: options.text("tiebreak_extra_rounds") == "true",
            cell_of_rank,
            first_starter: options.text("first_starter").parse().ok(),
        })
    }

    fn initial(config: &Config) -> State {
        State::new(*config)
    }

    fn start(state: &State, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        if state.phase != Phase::NotStarted {
            return Err(rule("ALREADY_STARTED", "the match has already started"));
        }
        let first = match state.cfg.first_starter {
            Some(s) => s,
            None => rng.below(2) as u8,
        };
        let e = ev(Ev::MatchStarted(pb::MatchStarted {
            first_starter: first as u32,
            rounds_per_match: state.cfg.rounds as u32,
        }));
        let mut s = *state;
        Self::evolve(&mut s, &e)?;
        let mut out = vec![e];
        Self::auto_steps(&mut s, rng, &mut out)?;
        Ok(out)
    }

    fn decide(state: &State, seat: Seat, action: &pb::Action, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        let seat = seat as u8;
        let mv = Self::parse_action(state, seat, action)?;
        let e = Self::move_event(state, seat, mv);
        let mut s = *state;
        Self::evolve(&mut s, &e)?;
        let mut out = Vec::with_capacity(4);
        out.push(e);
        Self::auto_steps(&mut s, rng, &mut out)?;
        Ok(out)
    }

    fn evolve(s: &mut State, event: &pb::Event) -> CoreResult<()> {
        let kind = event.kind.as_ref().ok_or_else(|| CoreError::corrupt("event has no kind"))?;
        match kind {
            Ev::MatchStarted(m) => {
                if s.phase != Phase::NotStarted {
                    return Err(CoreError::corrupt("match_started twice"));
                }
                let first = seat_u8(m.first_starter, "match_started")?;
                if s.cfg.first_starter.is_some_and(|f| f != first) {
                    return Err(CoreError::corrupt("match_started contradicts the first_starter option"));
                }
                if m.rounds_per_match != s.cfg.rounds as u32 {
                    return Err(CoreError::corrupt("match_started with another rounds_per_match than configured"));
                }
                s.first_starter = first;
                s.phase = Phase::Dealing;
            }
            Ev::RoundDealt(d) => Self::evolve_dealt(s, d)?,
            Ev::CardDrawn(d) => {
                Self::expect_turn(s, Phase::Drawing, d.seat, "card_drawn")?;
                let c = card_from_pb(d.card.as_ref()).ok_or_else(|| CoreError::corrupt("card_drawn without its card"))?;
                if c != s.stock[s.stock_pos as usize] || d.stock_size != (s.stock_left() - 1) as u32 {
                    return Err(CoreError::corrupt("card_drawn is not the top of the stock"));
                }
                s.draw();
            }
            Ev::TurnPassed(p) => {
                Self::expect_turn(s, Phase::Passing, p.seat, "turn_passed")?;
                s.pass();
            }
            Ev::CardPlaced(p) => {
                let seat = Self::expect_turn(s, Phase::Action, p.seat, "card_placed")?;
                let c = card_from_pb(p.card.as_ref()).ok_or_else(|| CoreError::corrupt("card_placed without its card"))?;
                let owner = seat_u8(p.square_owner, "card_placed square")?;
                if !(1..=9).contains(&p.cell) {
                    return Err(CoreError::corrupt("card_placed on a cell outside 1..9"));
                }
                let idx = (p.cell - 1) as u8;
                let down = s.check_place(seat, c, owner, idx).map_err(|e| CoreError::corrupt(format!("card_placed: {e}")))?;
                if down != p.face_down {
                    return Err(CoreError::corrupt("card_placed with the wrong face"));
                }
                s.place(seat, c, owner, idx, down);
            }
            Ev::CardDiscarded(d) => {
                let seat = Self::expect_turn(s, Phase::Action, d.seat, "card_discarded")?;
                let c = card_from_pb(d.card.as_ref()).ok_or_else(|| CoreError::corrupt("card_discarded without its card"))?;
                if s.hands[seat as usize] & bit(c) == 0 {
                    return Err(CoreError::corrupt("card_discarded from outside the hand"));
                }
                s.discard_card(seat, c);
            }
            Ev::WentOut(w) => {
                let seat = Self::expect_turn(s, Phase::Action, w.seat, "went_out")?;
                let raw = s.check_go_out(seat).map_err(|e| CoreError::corrupt(format!("went_out: {e}")))?;
                if raw != w.raw_points {
                    return Err(CoreError::corrupt("went_out with wrong raw points"));
                }
                s.go_out(seat);
            }
            Ev::RoundScored(r) => {
                if s.phase != Phase::Scoring {
                    return Err(CoreError::corrupt("round_scored before the round ended"));
                }
                let rec = s.round_result();
                if *r != Self::scored_event(s, &rec) {
                    return Err(CoreError::corrupt("round_scored does not match the squares"));
                }
                s.record_round(rec);
            }
            Ev::MatchEnded(m) if s.phase == Phase::Action => {
                // Only a forfeit ends the match in the middle of a turn: the seat to act's (§11).
                let mut ended = s.clone();
                ended.forfeited = s.current;
                let (winners, result) = ended.result();
                if m.totals != s.totals || m.winners != winners || m.result != result as i32 || m.rounds_played != s.n_history as u32 {
                    return Err(CoreError::corrupt("match_ended does not match a forfeit"));
                }
                s.forfeited = s.current;
                s.phase = Phase::Over;
            }
            Ev::MatchEnded(m) => {
                if s.phase != Phase::Ending {
                    return Err(CoreError::corrupt("match_ended before the last round was scored"));
                }
                let (winners, result) = s.result();
                if m.totals != s.totals || m.winners != winners || m.result != result as i32 || m.rounds_played != s.n_history as u32 {
                    return Err(CoreError::corrupt("match_ended does not match the totals"));
                }
                s.phase = Phase::Over;
            }
        }
        Ok(())
    }

    fn to_act(s: &State) -> Seats {
        if s.phase == Phase::Action {
            Seats::one(s.current as Seat)
        } else {
            Seats::NONE
        }
    }

    fn legal_actions_into(s: &State, seat: Seat, out: &mut Vec<pb::Action>) {
        if seat >= 2 {
            return;
        }
        let mut moves = Moves::new();
        s.gen_moves(seat as u8, &mut moves);
        out.extend(moves.as_slice().iter().map(|&m| Self::move_to_action(seat as u8, m)));
    }

    fn view(s: &State, viewer: Viewer) -> pb::View {
        let phase = match s.phase {
            Phase::NotStarted => pb::Phase::NotStarted,
            Phase::Dealing => pb::Phase::Dealing,
            Phase::Drawing => pb::Phase::Drawing,
            Phase::Passing => pb::Phase::Passing,
            Phase::Action => pb::Phase::Action,
            Phase::Scoring => pb::Phase::Scoring,
            Phase::Ending => pb::Phase::Ending,
            Phase::Over => pb::Phase::Over,
        };
        let hand_cards = |h: u64| -> Vec<pb::Card> {
            let mut v = Vec::with_capacity(h.count_ones() as usize);
            let mut h = h;
            while h != 0 {
                v.push(card_pb(h.trailing_zeros() as u8));
                h &= h - 1;
            }
            v
        };
        let players = (0..2u32)
            .map(|p| pb::Player {
                seat: p,
                hand_count: s.hands[p as usize].count_ones(),
                hand: if viewer.sees_private_of(p) { hand_cards(s.hands[p as usize]) } else { vec![] },
                total: s.totals[p as usize],
            })
            .collect();
        let squares = (0..2u8)
            .map(|o| {
                let lines = line_points(&s.mask[o as usize]);
                let raw: u32 = lines.iter().sum();
                pb::Square {
                    owner: o as u32,
                    cells: (0..9u8)
                        .map(|i| pb::Cell {
                            cell: i as u32 + 1,
                            state: match s.cell_state(o, i) {
                                CellState::Empty => pb::CellState::Empty,
                                CellState::Up => pb::CellState::FaceUp,
                                CellState::Down => pb::CellState::FaceDown,
                            } as i32,
                            pile: s
                                .pile(o, i)
                                .map(|e| pb::PileEntry {
                                    card: if !e.down || viewer.sees_private_of(e.by as u32) {
                                        Some(card_pb(e.card))
                                    } else {
                                        None
                                    },
                                    face_down: e.down,
                                    placed_by: e.by as u32,
                                })
                                .collect(),
                        })
                        .collect(),
                    line_points: lines.to_vec(),
                    raw_points: raw,
                    base_score: base_score(raw),
                }
            })
            .collect();
        let rounds = s.history[..s.n_history as usize]
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut tot = [0u32; 2];
                for h in &s.history[..=i] {
                    tot[0] += h.score[0] as u32;
                    tot[1] += h.score[1] as u32;
                }
                pb::RoundRecord {
                    round: i as u32 + 1,
                    end: if r.went_out == NONE { pb::RoundEnd::Exhaustion } else { pb::RoundEnd::WentOut } as i32,
                    scores: (0..2)
                        .map(|p| pb::SeatRoundScore {
                            seat: p as u32,
                            raw_points: r.raw[p] as u32,
                            base_score: base_score(r.raw[p] as u32),
                            went_out: r.went_out == p as u8,
                            round_score: r.score[p] as u32,
                            total: tot[p],
                        })
                        .collect(),
                }
            })
            .collect();
        let can_go_out = matches!(viewer, Viewer::Seat(x) if x == s.current as u32)
            && s.phase == Phase::Action
            && s.check_go_out(s.current).is_ok();
        let result = if s.phase == Phase::Over {
            let (winners, result) = s.result();
            Some(pb::MatchEnded {
                totals: s.totals.to_vec(),
                winners,
                result: result as i32,
                rounds_played: s.n_history as u32,
            })
        } else {
            None
        };
        pb::View {
            viewer: Some(viewer.to_proto()),
            phase: phase as i32,
            round: s.round as u32,
            rounds_per_match: s.cfg.rounds as u32,
            first_starter: s.first_starter as u32,
            starter: s.starter as u32,
            dealer: 1 - s.starter as u32,
            current: s.current as u32,
            to_act: Self::to_act(s).to_vec(),
            drew_this_turn: s.drew,
            players,
            squares,
            discard: s.discard[..s.n_discard as usize].iter().map(|&c| card_pb(c)).collect(),
            stock_size: s.stock_left() as u32,
            stock: if viewer == Viewer::Auditor {
                s.stock[s.stock_pos as usize..].iter().rev().map(|&c| card_pb(c)).collect()
            } else {
                vec![]
            },
            rounds,
            can_go_out,
            went_out: if s.went_out == NONE { None } else { Some(s.went_out as u32) },
            result,
            allow_go_out_without_draw: s.cfg.go_out_without_draw,
            tiebreak_extra_rounds: s.cfg.tiebreak,
            cell_of_rank: s.cfg.cell_of_rank.iter().map(|&c| c as u32 + 1).collect(),
        }
    }

    fn redact(event: &pb::Event, viewer: Viewer) -> Option<pb::Event> {
        if viewer == Viewer::Auditor {
            return Some(event.clone());
        }
        let mut e = event.clone();
        match e.kind.as_mut() {
            Some(Ev::RoundDealt(d)) => {
                d.stock.clear();
                for h in &mut d.hands {
                    if !viewer.sees_private_of(h.seat) {
                        h.cards.clear();
                    }
                }
            }
            Some(Ev::CardDrawn(d)) if !viewer.sees_private_of(d.seat) => d.card = None,
            Some(Ev::CardPlaced(p)) if p.face_down && !viewer.sees_private_of(p.seat) => p.card = None,
            _ => {}
        }
        Some(e)
    }

    fn event_type(event: &pb::Event) -> &'static str {
        match &event.kind {
            Some(Ev::MatchStarted(_)) => "match_started",
            Some(Ev::RoundDealt(_)) => "round_dealt",
            Some(Ev::CardDrawn(_)) => "card_drawn",
            Some(Ev::CardPlaced(_)) => "card_placed",
            Some(Ev::CardDiscarded(_)) => "card_discarded",
            Some(Ev::WentOut(_)) => "went_out",
            Some(Ev::TurnPassed(_)) => "turn_passed",
            Some(Ev::RoundScored(_)) => "round_scored",
            Some(Ev::MatchEnded(_)) => "match_ended",
            None => "empty",
        }
    }

    fn outcome(s: &State) -> Option<Outcome> {
        if s.phase != Phase::Over {
            return None;
        }
        let (winners, result) = s.result();
        Some(Outcome {
            scores: s.totals.iter().map(|&t| t as i64).collect(),
            winners,
            reason: match result {
                _ if s.forfeited < 2 => "FORFEIT",
                pb::MatchResult::Aborted => "ROUND_CAP",
                pb::MatchResult::Draw => "DRAW",
                _ => "HIGHER_TOTAL",
            }
            .into(),
            lower_is_better: false,
            aborted: s.aborted,
        })
    }

    /// Match clocks (§11): a timed-out seat discards.
    const TIMEOUT_POLICIES: &'static [&'static str] = &[TIMEOUT_DISCARD, TIMEOUT_FORFEIT];
    const TIMEOUT_HELP: &'static str = "discard: the seat discards the lowest card of its hand (Ace first, Kings \
        last), face up and dead for the round; it never goes out or places a card. forfeit: the seat forfeits: \
        the match ends at once and the other seat wins, whatever the totals (reason FORFEIT).";

    fn timeout_events(s: &State, seat: Seat, policy: &str, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        if policy == TIMEOUT_FORFEIT {
            if s.phase != Phase::Action || seat != s.current as Seat {
                return Err(CoreError::not_your_turn());
            }
            let mut ended = s.clone();
            ended.forfeited = s.current;
            let (winners, result) = ended.result();
            return Ok(vec![ev(Ev::MatchEnded(pb::MatchEnded {
                totals: s.totals.to_vec(),
                winners,
                result: result as i32,
                rounds_played: s.n_history as u32,
            }))]);
        }
        if policy != TIMEOUT_DISCARD {
            return Err(CoreError::Unsupported(format!("carre has no timeout policy {policy:?}")));
        }
        let mut moves = Moves::new();
        s.gen_moves(seat.min(1) as u8, &mut moves);
        // Discarding is legal whenever the seat acts (§4.3); the lowest card code is the
        // lowest rank (§2).
        let lowest = moves.as_slice().iter().filter_map(|m| match m {
            Move::Discard(c) => Some(*c),
            _ => None,
        });
        match (seat < 2, lowest.min()) {
            (true, Some(c)) => Self::decide(s, seat, &Self::move_to_action(seat as u8, Move::Discard(c)), rng),
            _ => Err(CoreError::not_your_turn()),
        }
    }

    fn bot_action(s: &State, seat: Seat, bot: &str, rng: &mut Rng) -> CoreResult<pb::Action> {
        if seat >= 2 || s.phase != Phase::Action || seat as u8 != s.current {
            return Err(CoreError::not_your_turn());
        }
        let seat = seat as u8;
        let mv = match bot {
            "random" => {
                let mut moves = Moves::new();
                s.gen_moves(seat, &mut moves);
                if moves.n == 0 {
                    return Err(CoreError::not_your_turn());
                }
                moves.m[rng.index(moves.n)]
            }
            "greedy" => Self::bot_greedy(s, seat, rng),
            other => return Err(CoreError::option(format!("Carré has no bot {other:?} (bots: random, greedy)"))),
        };
        Ok(Self::move_to_action(seat, mv))
    }

    fn render(s: &State, viewer: Viewer) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Carré  round {}/{}  starter seat {}  stock {}  totals {}-{}",
            s.round, s.cfg.rounds, s.starter, s.stock_left(), s.totals[0], s.totals[1]
        );
        // One cell is 7 columns: the top card (`7S`), `##` for a face-down card the viewer did
        // not place, `vJC` for one it may see, `..` when empty; `xN` gives a pile's height.
        let cell_txt = |o: u8, i: u8| -> String {
            let t = s.top[o as usize][i as usize];
            if t == NONE {
                return format!("{:^7}", "..");
            }
            let e = s.log[t as usize];
            let h = s.pile(o, i).count();
            let top = if !e.down {
                card_name(e.card)
            } else if viewer.sees_private_of(e.by as u32) {
                format!("v{}", card_name(e.card))
            } else {
                "##".into()
            };
            if h > 1 {
                format!("{:^7}", format!("{top}x{h}"))
            } else {
                format!("{top:^7}")
            }
        };
        for o in [1u8, 0u8] {
            let raw = s.raw(o);
            let hand = if viewer.sees_private_of(o as u32) {
                let mut h = s.hands[o as usize];
                let mut v = Vec::new();
                while h != 0 {
                    v.push(card_name(h.trailing_zeros() as u8));
                    h &= h - 1;
                }
                v.join(" ")
            } else {
                format!("{} card(s)", s.hands[o as usize].count_ones())
            };
            let lines: Vec<String> = line_points(&s.mask[o as usize])
                .iter()
                .zip(LINE_NAMES)
                .filter(|(v, _)| **v > 0)
                .map(|(v, n)| format!("{n}:{v}"))
                .collect();
            let _ = writeln!(out, "seat {o}: raw {raw} -> {} [{}]   hand: {hand}", base_score(raw), lines.join(" "));
            for r in 0..3u8 {
                let row: Vec<String> = (0..3u8).map(|c| format!("[{}]", cell_txt(o, r * 3 + c))).collect();
                let _ = writeln!(out, "   {}", row.join(""));
            }
        }
        let top = if s.n_discard > 0 { card_name(s.discard[s.n_discard as usize - 1]) } else { "--".into() };
        let _ = writeln!(out, "discard: {} ({} cards)", top, s.n_discard);
        match s.phase {
            Phase::Over => {
                let (w, _) = s.result();
                let _ = writeln!(out, "match over: winners {w:?}{}", if s.aborted { " (aborted)" } else { "" });
            }
            Phase::Action => {
                let _ = writeln!(out, "to act: seat {}{}", s.current, if s.drew { " (has drawn)" } else { "" });
            }
            p => {
                let _ = writeln!(out, "phase {p:?}");
            }
        }
        out
    }

    fn check_invariants(s: &State) -> Result<(), String> {
        // Conservation (R24): every card in exactly one place once a round was dealt.
        let mut seen = 0u64;
        let mut count = 0u32;
        let mut add = |b: u64| -> Result<(), String> {
            if seen & b != 0 {
                return Err(format!("card {} is in two places", card_name(b.trailing_zeros() as u8)));
            }
            seen |= b;
            count += b.count_ones();
            Ok(())
        };
        add(s.hands[0])?;
        add(s.hands[1])?;
        for &c in &s.stock[s.stock_pos as usize..] {
            add(bit(c))?;
        }
        for &c in &s.discard[..s.n_discard as usize] {
            add(bit(c))?;
        }
        for e in &s.log[..s.n_placed as usize] {
            add(bit(e.card))?;
        }
        let expected = if s.round == 0 { 0 } else { DECK as u32 };
        if count != expected {
            return Err(format!("{count} cards accounted for, expected {expected}"));
        }
        // Tops and masks agree with the placement log; only J/Q face down.
        for o in 0..2u8 {
            for i in 0..9u8 {
                let last = s.log[..s.n_placed as usize]
                    .iter()
                    .rposition(|e| e.cell == o * 9 + i)
                    .map(|p| p as u8)
                    .unwrap_or(NONE);
                if s.top[o as usize][i as usize] != last {
                    return Err(format!("top of square {o} cell {} is stale", i + 1));
                }
                let m = if last == NONE || s.log[last as usize].down { 0 } else { card_mask(s.log[last as usize].card) };
                if s.mask[o as usize][i as usize] != m {
                    return Err(format!("scoring mask of square {o} cell {} is stale", i + 1));
                }
            }
        }
        for e in &s.log[..s.n_placed as usize] {
            let r = rank(e.card);
            if e.down != (r == JACK || r == QUEEN) {
                return Err(format!("{} placed with the wrong face", card_name(e.card)));
            }
            if (r == TEN || r == KING || r == QUEEN) && e.cell / 9 != e.by {
                return Err(format!("{} placed in the opponent's square", card_name(e.card)));
            }
        }
        // Hand sizes (§4.5).
        let (hc, ho) = (s.hands[s.current as usize].count_ones(), s.hands[1 - s.current as usize].count_ones());
        match s.phase {
            Phase::Action => {
                if s.round == 0 || hc == 0 {
                    return Err("the seat to act has no card".into());
                }
                if s.stock_left() > 0 && (hc != 9 || ho != 8) {
                    return Err(format!("hands {hc}/{ho} while the stock lasts (expected 9/8)"));
                }
                if s.stock_left() == 0 && !(hc == ho || hc == ho + 1) {
                    return Err(format!("hands {hc}/{ho} after the stock ran out"));
                }
                if s.stock_left() > 0 && !s.drew {
                    return Err("acting without the draw while the stock lasts".into());
                }
            }
            Phase::Drawing => {
                if s.stock_left() == 0 {
                    return Err("drawing from an empty stock".into());
                }
                if hc != 8 || ho != 8 {
                    return Err(format!("hands {hc}/{ho} before a draw (expected 8/8)"));
                }
            }
            Phase::Passing if hc != 0 || ho == 0 || s.stock_left() != 0 => {
                return Err("pass_turn when it is not forced".into());
            }
            Phase::Scoring if s.went_out == NONE && (s.stock_left() != 0 || s.hands[0] != 0 || s.hands[1] != 0) => {
                return Err("round scoring without going out or exhaustion".into());
            }
            _ => {}
        }
        // The dealer draws the last stock card: the starter acts first with no stock.
        if s.stock_left() == 0 && s.went_out == NONE && s.phase == Phase::Action && s.hands[0] + s.hands[1] != 0 {
            let starter_cards = s.hands[s.starter as usize].count_ones();
            let dealer_cards = s.hands[1 - s.starter as usize].count_ones();
            if !(starter_cards == dealer_cards || starter_cards + 1 == dealer_cards) {
                return Err(format!("starter {starter_cards} / dealer {dealer_cards} cards after the stock ran out"));
            }
        }
        if s.went_out != NONE && !matches!(s.phase, Phase::Scoring | Phase::Dealing | Phase::Ending | Phase::Over) {
            return Err("went_out set during play".into());
        }
        // Scores in bounds.
        let mut sums = [0u32; 2];
        for r in &s.history[..s.n_history as usize] {
            for (p, sum) in sums.iter_mut().enumerate() {
                if r.raw[p] > 16 || r.raw[p] == 15 {
                    return Err(format!("impossible raw points {}", r.raw[p]));
                }
                let expect = base_score(r.raw[p] as u32) - (r.went_out == p as u8) as u32;
                if r.score[p] as u32 != expect {
                    return Err("round score does not follow from raw points".into());
                }
                *sum += r.score[p] as u32;
            }
        }
        if sums != s.totals {
            return Err(format!("totals {:?} are not the sum of the rounds {sums:?}", s.totals));
        }
        for p in 0..2 {
            let raw = s.raw(p);
            if raw > 16 || raw == 15 {
                return Err(format!("square {p} has impossible raw points {raw}"));
            }
        }
        let max_rounds = (s.cfg.rounds + MAX_EXTRA_ROUNDS) as u32;
        if s.round as u32 > max_rounds || s.n_history as u32 > s.round as u32 {
            return Err("round counter out of bounds".into());
        }
        if s.phase == Phase::Over && s.n_history < s.cfg.rounds && s.forfeited == NONE {
            return Err("match over before the last round".into());
        }
        Ok(())
    }
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Options;
    use prost::Message;

    // ---------------------------------------------------------------- helpers

    fn c(code: &str) -> u8 {
        parse_card(code).unwrap_or_else(|| panic!("bad card code {code}"))
    }

    /// An ACTION-phase position of round 1 (starter seat 0) with nothing dealt yet; finish it
    /// with `fill`.
    fn pos(to_act: u8) -> State {
        let mut s = State::new(Config::default());
        s.phase = Phase::Action;
        s.round = 1;
        s.current = to_act;
        s.drew = true;
        s
    }

    fn give(s: &mut State, seat: u8, cards: &[&str]) {
        for code in cards {
            s.hands[seat as usize] |= bit(c(code));
        }
    }

    /// Pushes a pile bottom -> top. `v:JD` is face down; a face-down Queen was placed by the
    /// owner, a face-down Jack by the other seat; face-up cards by the owner.
    fn pile(s: &mut State, owner: u8, cell: u8, entries: &[&str]) {
        for code in entries {
            let (down, code) = match code.strip_prefix("v:") {
                Some(rest) => (true, rest),
                None => (false, *code),
            };
            let card = c(code);
            let by = if down && rank(card) == JACK { 1 - owner } else { owner };
            let n = s.n_placed as usize;
            s.log[n] = Entry { card, cell: owner * 9 + cell - 1, down, by };
            s.n_placed += 1;
            s.top[owner as usize][cell as usize - 1] = n as u8;
            s.mask[owner as usize][cell as usize - 1] = if down { 0 } else { card_mask(card) };
        }
    }

    /// A square from a grid like `AS 2S 3S / 4C 5S 6H / 7C 8D 9S`: `..` empty, `v:JH` face
    /// down, `8S+v:JS` a pile.
    fn square(s: &mut State, owner: u8, grid: &str) {
        let toks: Vec<&str> = grid.split_whitespace().filter(|t| *t != "/").collect();
        assert_eq!(toks.len(), 9, "{grid}");
        for (i, t) in toks.iter().enumerate() {
            if *t != ".." {
                let entries: Vec<&str> = t.split('+').collect();
                pile(s, owner, i as u8 + 1, &entries);
            }
        }
    }

    /// Puts every card not yet in a hand, pile or the discard pile into the stock (`stock`
    /// cards) and the rest into the discard pile, keeping the position card-conserving.
    fn fill(s: &mut State, stock: usize) {
        let mut used = s.hands[0] | s.hands[1];
        for e in &s.log[..s.n_placed as usize] {
            used |= bit(e.card);
        }
        for &d in &s.discard[..s.n_discard as usize] {
            used |= bit(d);
        }
        let rest: Vec<u8> = (0..52u8).filter(|&x| used & bit(x) == 0).collect();
        assert!(rest.len() >= stock);
        s.stock_pos = (STOCK - stock) as u8;
        for (i, &x) in rest[..stock].iter().enumerate() {
            s.stock[STOCK - stock + i] = x;
        }
        for &x in &rest[stock..] {
            s.discard[s.n_discard as usize] = x;
            s.n_discard += 1;
        }
        if stock == 0 {
            s.drew = false;
        }
    }

    fn place(card: &str, own: bool, cell: u32) -> pb::Action {
        pb::Action {
            kind: Some(pb::action::Kind::Place(pb::Place {
                card: Some(card_pb(c(card))),
                square: if own { pb::TargetSquare::Own } else { pb::TargetSquare::Opponent } as i32,
                cell,
            })),
        }
    }
    fn discard(card: &str) -> pb::Action {
        pb::Action { kind: Some(pb::action::Kind::Discard(pb::Discard { card: Some(card_pb(c(card))) })) }
    }
    fn go_out() -> pb::Action {
        pb::Action { kind: Some(pb::action::Kind::GoOut(pb::GoOut {})) }
    }

    fn try_act(s: &State, seat: u32, a: &pb::Action) -> CoreResult<Vec<pb::Event>> {
        crate::game::decide_checked::<Carre>(s, seat, a, &mut Rng::from_u64(99))
    }

    fn act(s: &mut State, seat: u32, a: &pb::Action) -> Vec<pb::Event> {
        let evs = try_act(s, seat, a).unwrap_or_else(|e| panic!("{a:?} refused: {e}"));
        for e in &evs {
            Carre::evolve(s, e).unwrap();
        }
        evs
    }

    fn reason<T: std::fmt::Debug>(r: CoreResult<T>) -> &'static str {
        match r {
            Err(CoreError::Rule { reason, .. }) => reason,
            other => panic!("expected a rule refusal, got {other:?}"),
        }
    }

    fn is_legal(s: &State, seat: u32, a: &pb::Action) -> bool {
        Carre::legal_actions(s, seat).contains(a)
    }

    /// Pile of a cell as `["5S", "v:JH"]`.
    fn pile_codes(s: &State, owner: u8, cell: u8) -> Vec<String> {
        s.pile(owner, cell - 1)
            .map(|e| if e.down { format!("v:{}", card_name(e.card)) } else { card_name(e.card) })
            .collect()
    }

    fn lines_of(s: &State, owner: u8) -> [u32; 8] {
        line_points(&s.mask[owner as usize])
    }

    fn scored(evs: &[pb::Event]) -> pb::RoundScored {
        evs.iter()
            .find_map(|e| match &e.kind {
                Some(Ev::RoundScored(r)) => Some(r.clone()),
                _ => None,
            })
            .expect("a round_scored event")
    }

    const TV08: &str = "AS 2S 3S / 4C 5S 6H / 7C 8D 9S";

    // ---------------------------------------------------------------- spec §9 vectors

    #[test]
    fn tv01_deal_and_first_draw() {
        let mut opts = Options::new();
        opts.insert("first_starter".into(), "0".into());
        let cfg = Carre::checked_config(2, &opts).unwrap();
        let mut s = Carre::initial(&cfg);
        let evs = Carre::start(&s, &mut Rng::from_u64(42)).unwrap();
        let mut deck: Vec<u8> = (0..52).collect();
        Rng::from_u64(42).shuffle(&mut deck);
        let d: Vec<pb::Card> = deck.iter().map(|&x| card_pb(x)).collect();
        assert_eq!(evs.len(), 3);
        let Some(Ev::RoundDealt(dealt)) = &evs[1].kind else { panic!("{evs:?}") };
        assert_eq!((dealt.round, dealt.starter, dealt.dealer), (1, 0, 1));
        let p1: Vec<pb::Card> = (0..8).map(|i| d[2 * i]).collect();
        let p2: Vec<pb::Card> = (0..8).map(|i| d[2 * i + 1]).collect();
        assert_eq!(dealt.hands[0].cards, p1);
        assert_eq!(dealt.hands[1].cards, p2);
        assert_eq!(dealt.stock, d[16..].iter().rev().copied().collect::<Vec<_>>());
        let Some(Ev::CardDrawn(first)) = &evs[2].kind else { panic!() };
        assert_eq!((first.seat, first.card, first.stock_size), (0, Some(d[16]), 35));
        for e in &evs {
            Carre::evolve(&mut s, e).unwrap();
        }
        assert_eq!(s.hands[0].count_ones(), 9);
        assert_eq!(s.hands[1].count_ones(), 8);
        assert_eq!(s.stock_left(), 35);
        assert!(s.n_placed == 0 && s.n_discard == 0);
        assert!(!Carre::legal_actions(&s, 0).contains(&go_out()));
        // Discard-only play: 36 draws, the 36th (d51) by the dealer P2; 52 turns in all.
        let mut draws = vec![(0u32, d[16])];
        let mut turns = 0;
        let mut end = None;
        while end.is_none() {
            let seat = Carre::to_act(&s).first().unwrap();
            let a = Carre::legal_actions(&s, seat)
                .into_iter()
                .find(|a| matches!(a.kind, Some(pb::action::Kind::Discard(_))))
                .unwrap();
            turns += 1;
            for e in act(&mut s, seat, &a) {
                match e.kind {
                    Some(Ev::CardDrawn(dr)) if end.is_none() => draws.push((dr.seat, dr.card.unwrap())),
                    Some(Ev::RoundScored(r)) => end = Some(r),
                    _ => {}
                }
            }
        }
        assert_eq!(turns, 52);
        assert_eq!(draws.len(), 36);
        assert_eq!(draws[35], (1, d[51]));
        assert_eq!(end.unwrap().end, pb::RoundEnd::Exhaustion as i32);
    }

    #[test]
    fn tv02_pip_card_on_its_own_cell() {
        let mut s = pos(0);
        give(&mut s, 0, &["5H"]);
        fill(&mut s, 10);
        assert_eq!(reason(try_act(&s, 0, &place("5H", true, 4))), "WRONG_CELL");
        act(&mut s, 0, &place("5H", true, 5));
        assert_eq!(pile_codes(&s, 0, 5), ["5H"]);
    }

    #[test]
    fn tv03_pip_card_in_the_opponents_square() {
        let mut s = pos(0);
        give(&mut s, 0, &["7C"]);
        pile(&mut s, 1, 7, &["7S"]);
        fill(&mut s, 10);
        assert_eq!(reason(try_act(&s, 0, &place("7C", false, 7))), "CELL_FACE_UP");

        let mut s = pos(0);
        give(&mut s, 0, &["7C"]);
        pile(&mut s, 1, 7, &["7S", "v:JD"]);
        fill(&mut s, 10);
        act(&mut s, 0, &place("7C", false, 7));
        assert_eq!(pile_codes(&s, 1, 7), ["7S", "v:JD", "7C"]);
        assert_eq!(s.mask[1][6], card_mask(c("7C")));
    }

    #[test]
    fn tv04_ten() {
        let mut s = pos(0);
        give(&mut s, 0, &["TH"]);
        pile(&mut s, 0, 3, &["3S"]);
        pile(&mut s, 0, 4, &["4C", "v:QD"]);
        fill(&mut s, 10);
        assert!(try_act(&s, 0, &place("TH", true, 2)).is_ok());
        assert_eq!(reason(try_act(&s, 0, &place("TH", true, 3))), "CELL_FACE_UP");
        assert!(try_act(&s, 0, &place("TH", true, 4)).is_ok());
        assert_eq!(reason(try_act(&s, 0, &place("TH", false, 2))), "OWN_SQUARE_ONLY");
        // AMB21: own-square check comes before the cell state, whatever P2's cell holds.
        pile(&mut s, 1, 2, &["2S"]);
        assert_eq!(reason(try_act(&s, 0, &place("TH", false, 2))), "OWN_SQUARE_ONLY");
    }

    #[test]
    fn tv05_king() {
        let mut s = pos(0);
        give(&mut s, 0, &["KD"]);
        pile(&mut s, 0, 5, &["5S"]);
        pile(&mut s, 0, 1, &["AS", "KC"]);
        fill(&mut s, 10);
        let mut t = s;
        act(&mut t, 0, &place("KD", true, 5));
        assert_eq!(pile_codes(&t, 0, 5), ["5S", "KD"]);
        assert!(try_act(&s, 0, &place("KD", true, 1)).is_ok());
        assert!(try_act(&s, 0, &place("KD", true, 6)).is_ok());
        assert_eq!(reason(try_act(&s, 0, &place("KD", false, 5))), "OWN_SQUARE_ONLY");
    }

    #[test]
    fn tv06_jack() {
        let mut s = pos(0);
        give(&mut s, 0, &["JH"]);
        pile(&mut s, 1, 5, &["5S"]);
        pile(&mut s, 1, 4, &["4C", "v:QD"]);
        pile(&mut s, 0, 1, &["AS"]);
        fill(&mut s, 10);
        assert_eq!(s.log[1].by, 1, "P2's own Queen");
        let mut t = s;
        act(&mut t, 0, &place("JH", false, 5));
        assert_eq!(pile_codes(&t, 1, 5), ["5S", "v:JH"]);
        let v = Carre::view(&t, Viewer::Seat(1));
        let top = v.squares[1].cells[4].pile.last().copied().unwrap();
        assert_eq!((top.face_down, top.placed_by, top.card), (true, 0, None));
        assert_eq!(reason(try_act(&s, 0, &place("JH", false, 6))), "CELL_NOT_FACE_UP");
        assert_eq!(reason(try_act(&s, 0, &place("JH", false, 4))), "CELL_NOT_FACE_UP");
        assert!(try_act(&s, 0, &place("JH", true, 1)).is_ok());
    }

    #[test]
    fn tv07_queen() {
        let mut s = pos(0);
        give(&mut s, 0, &["QC"]);
        pile(&mut s, 0, 9, &["9S"]);
        pile(&mut s, 1, 5, &["5D"]);
        fill(&mut s, 10);
        let mut t = s;
        act(&mut t, 0, &place("QC", true, 9));
        assert_eq!(pile_codes(&t, 0, 9), ["9S", "v:QC"]);
        assert_eq!(reason(try_act(&s, 0, &place("QC", true, 8))), "CELL_NOT_FACE_UP");
        assert_eq!(reason(try_act(&s, 0, &place("QC", false, 5))), "OWN_SQUARE_ONLY");
    }

    #[test]
    fn tv08_scoring_a_mixed_square() {
        let mut s = pos(0);
        square(&mut s, 0, TV08);
        fill(&mut s, 10);
        assert_eq!(lines_of(&s, 0), [2, 0, 0, 1, 0, 0, 2, 1]);
        assert_eq!(s.raw(0), 6);
        assert_eq!(base_score(6), 7);
        assert!(is_legal(&s, 0, &go_out()));
    }

    fn tv09_position() -> State {
        let mut s = pos(1);
        square(&mut s, 0, TV08);
        give(&mut s, 1, &["JH"]);
        give(&mut s, 0, &["5C", "KS"]);
        fill(&mut s, 10);
        s
    }

    #[test]
    fn tv09_a_jack_breaks_lines() {
        let mut s = tv09_position();
        act(&mut s, 1, &place("JH", false, 5));
        assert_eq!(pile_codes(&s, 0, 5), ["5S", "v:JH"]);
        assert_eq!(lines_of(&s, 0), [2, 0, 0, 1, 0, 0, 0, 0]);
        assert_eq!(s.raw(0), 3);
        assert_eq!(Carre::to_act(&s).to_vec(), vec![0]);
        assert!(!is_legal(&s, 0, &go_out()));
        assert_eq!(reason(try_act(&s, 0, &go_out())), "GO_OUT_BELOW_5");
    }

    #[test]
    fn tv10_re_covering_a_face_down_cell() {
        let mut s = tv09_position();
        act(&mut s, 1, &place("JH", false, 5));
        act(&mut s, 0, &place("5C", true, 5));
        assert_eq!(pile_codes(&s, 0, 5), ["5S", "v:JH", "5C"]);
        assert_eq!(lines_of(&s, 0), [2, 0, 0, 1, 0, 0, 1, 1]);
        assert_eq!(s.raw(0), 5);
        // P2 plays elsewhere (a discard), then P1 draws and may go out.
        let d = Carre::legal_actions(&s, 1).into_iter().rev().find(|a| matches!(a.kind, Some(pb::action::Kind::Discard(_)))).unwrap();
        act(&mut s, 1, &d);
        assert!(is_legal(&s, 0, &go_out()));
        let r = scored(&act(&mut s, 0, &go_out()));
        assert_eq!(r.end, pb::RoundEnd::WentOut as i32);
        assert_eq!((r.scores[0].raw_points, r.scores[0].round_score, r.scores[0].went_out), (5, 4, true));
    }

    #[test]
    fn tv11_king_over_a_face_down_card() {
        let mut s = tv09_position();
        act(&mut s, 1, &place("JH", false, 5));
        act(&mut s, 0, &place("KS", true, 5));
        assert_eq!(pile_codes(&s, 0, 5), ["5S", "v:JH", "KS"]);
        assert_eq!(lines_of(&s, 0), [2, 0, 0, 1, 0, 0, 2, 1]);
        assert_eq!((s.raw(0), base_score(s.raw(0))), (6, 7));
    }

    #[test]
    fn tv12_the_doubling_table() {
        for (raw, score) in [(0, 0), (4, 4), (5, 5), (6, 7), (7, 9), (8, 11), (10, 15), (14, 23), (16, 27)] {
            assert_eq!(base_score(raw), score, "raw {raw}");
        }
        for (raw, score) in [(5, 4), (6, 6), (7, 8), (10, 14), (16, 26)] {
            assert_eq!(base_score(raw) - 1, score, "raw {raw} went out");
        }
    }

    #[test]
    fn tv13_square_entirely_of_one_suit() {
        let mut s = pos(0);
        square(&mut s, 0, "AH 2H 3H / 4H 5H 6H / 7H 8H 9H");
        fill(&mut s, 10);
        assert_eq!(lines_of(&s, 0), [2; 8]);
        s.went_out = 0;
        s.phase = Phase::Scoring;
        let r = s.round_result();
        assert_eq!((r.raw[0], r.score[0]), (16, 26));
        assert_eq!(base_score(16), 27);
    }

    #[test]
    fn tv14_the_seeds_ten_points_example() {
        let mut s = pos(0);
        square(&mut s, 0, "AS 2S 3S / 4S 5S 6S / 7S 8S 9H");
        assert_eq!(lines_of(&s, 0), [2, 2, 0, 2, 2, 0, 0, 2]);
        assert_eq!((s.raw(0), base_score(10)), (10, 15));
    }

    #[test]
    fn tv15_colour_lines_face_down_blocker_ten_and_king() {
        let mut s = pos(0);
        square(&mut s, 0, "AH 2D 3H / 4C 5S 6C / 7D 8S+v:JS 9D");
        square(&mut s, 1, "TS 2S KS / 4H 5D 6H / .. 8C 9C");
        assert_eq!(lines_of(&s, 0), [1, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(s.raw(0), 2);
        assert_eq!(lines_of(&s, 1), [2, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(s.raw(1), 3);
    }

    #[test]
    fn tv16_spoiling_the_opponent_with_a_pip_card() {
        let mut s = pos(0);
        give(&mut s, 0, &["5H"]);
        pile(&mut s, 1, 4, &["4S"]);
        pile(&mut s, 1, 6, &["6S"]);
        fill(&mut s, 10);
        act(&mut s, 0, &place("5H", false, 5));
        assert_eq!(lines_of(&s, 1)[1], 0);
        // R16: a black King placed directly on the 5H repairs the row for P2 (only the rule
        // check matters here, so the King is simply put in P2's hand).
        let mut t = s;
        t.hands[1] |= bit(c("KC"));
        assert!(t.check_place(1, c("KC"), 1, 4).is_ok());
        t.place(1, c("KC"), 1, 4, false);
        assert_eq!(lines_of(&t, 1)[1], 1, "4S KC 6S: all black");
    }

    #[test]
    fn tv17_going_out() {
        let mut s = pos(0);
        square(&mut s, 0, "AS 2S 3S / 4C 5C 6H / 7C 8D 9S");
        square(&mut s, 1, "AC 2C 3C / 4S 5S 6S / 7S 8S 9H");
        give(&mut s, 0, &["TD", "KH"]);
        give(&mut s, 1, &["TC"]);
        fill(&mut s, 10);
        assert_eq!((s.raw(0), s.raw(1)), (5, 7));
        assert_eq!(lines_of(&s, 1), [2, 2, 0, 1, 1, 0, 0, 1]);
        let mut t = s;
        let evs = act(&mut t, 0, &go_out());
        assert!(matches!(evs[0].kind, Some(Ev::WentOut(pb::WentOut { seat: 0, raw_points: 5 }))));
        let r = scored(&evs);
        assert_eq!((r.scores[0].round_score, r.scores[1].round_score), (4, 9));
        assert_eq!((r.scores[0].went_out, r.scores[1].went_out), (true, false));
        // The next round was dealt at once: P2 got no further turn in round 1.
        assert!(matches!(evs[2].kind, Some(Ev::RoundDealt(_))));
        assert_eq!(t.round, 2);
        // Timing: after a card play the turn is over and go_out is no longer offered to P1.
        let mut t = s;
        act(&mut t, 0, &discard("TD"));
        assert!(Carre::legal_actions(&t, 0).is_empty());
        assert_eq!(reason(try_act(&t, 0, &go_out())), "NOT_YOUR_TURN");
        // Negative case: raw 4.
        let mut n = pos(0);
        square(&mut n, 0, "AS 2H 3S / .. 5S .. / 7S .. 9S");
        fill(&mut n, 10);
        assert_eq!(n.raw(0), 4);
        assert_eq!(reason(try_act(&n, 0, &go_out())), "GO_OUT_BELOW_5");
    }

    #[test]
    fn tv18_the_last_stock_card() {
        let mut s = State::new(Config::default());
        s.round = 1;
        s.phase = Phase::Drawing;
        s.current = 1;
        for i in 0..8u8 {
            s.hands[0] |= bit(i);
            s.hands[1] |= bit(8 + i);
        }
        fill(&mut s, 1);
        let mut evs = vec![];
        Carre::auto_steps(&mut s, &mut Rng::from_u64(1), &mut evs).unwrap();
        assert!(matches!(evs[0].kind, Some(Ev::CardDrawn(pb::CardDrawn { seat: 1, stock_size: 0, .. }))));
        assert_eq!((s.stock_left(), s.hands[1].count_ones()), (0, 9));
        Carre::check_invariants(&s).unwrap();
        let mut seats = vec![];
        let mut emptied_first = None;
        loop {
            let seat = Carre::to_act(&s).first().unwrap();
            seats.push(seat);
            let a = Carre::legal_actions(&s, seat).pop().unwrap(); // a discard
            let evs = act(&mut s, seat, &a);
            if emptied_first.is_none() && s.hands[seat as usize] == 0 {
                emptied_first = Some(seat);
            }
            if matches!(evs.last().unwrap().kind, Some(Ev::RoundDealt(_)) | Some(Ev::CardDrawn(_))) || s.round > 1 {
                break;
            }
            Carre::check_invariants(&s).unwrap();
            assert!(!s.drew || seats.len() == 1);
        }
        // P2's turn with the last card, then 16 turns without draws.
        assert_eq!(seats.len(), 17);
        assert_eq!(seats[1..], [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
        assert_eq!(emptied_first, Some(0));
    }

    fn tv19_position() -> State {
        let mut s = pos(0);
        give(&mut s, 0, &["JS"]);
        give(&mut s, 1, &["4D"]);
        pile(&mut s, 0, 4, &["4S", "v:QH"]);
        fill(&mut s, 0);
        s
    }

    #[test]
    fn tv19_forced_discard_and_end_by_exhaustion() {
        let mut s = tv19_position();
        assert_eq!(Carre::legal_actions(&s, 0), vec![discard("JS")]);
        act(&mut s, 0, &discard("JS"));
        assert_eq!(Carre::to_act(&s).to_vec(), vec![1]);
        assert_eq!(Carre::legal_actions(&s, 1), vec![place("4D", true, 4), place("4D", false, 4), discard("4D")]);
        let evs = act(&mut s, 1, &place("4D", false, 4));
        let r = scored(&evs);
        assert_eq!(r.end, pb::RoundEnd::Exhaustion as i32);
        assert!(r.scores.iter().all(|x| !x.went_out && x.round_score == x.base_score));
    }

    #[test]
    fn tv20_going_out_with_an_empty_stock() {
        let mut s = pos(0);
        square(&mut s, 0, "AS 2S 3S / 4C 5C 6H / 7C 8D 9S");
        give(&mut s, 0, &["3C", "8H"]);
        give(&mut s, 1, &["3D", "8C"]);
        fill(&mut s, 0);
        assert_eq!(s.raw(0), 5);
        assert!(!s.drew);
        assert!(is_legal(&s, 0, &go_out()));
        let r = scored(&act(&mut s.clone(), 0, &go_out()));
        assert_eq!(r.scores[0].round_score, 4);
        // With the AMB9 flag off, the same go_out is refused.
        s.cfg.go_out_without_draw = false;
        assert!(!is_legal(&s, 0, &go_out()));
        assert_eq!(reason(try_act(&s, 0, &go_out())), "GO_OUT_WITHOUT_DRAW");
    }

    #[test]
    fn tv21_pip_card_cannot_cover_a_king_queen_reopens() {
        let mut s = pos(0);
        give(&mut s, 0, &["AH", "QH"]);
        pile(&mut s, 0, 1, &["KS"]);
        fill(&mut s, 10);
        assert_eq!(reason(try_act(&s, 0, &place("AH", true, 1))), "CELL_FACE_UP");
        act(&mut s, 0, &place("QH", true, 1));
        assert_eq!(pile_codes(&s, 0, 1), ["KS", "v:QH"]);
        let d = Carre::legal_actions(&s, 1).pop().unwrap();
        act(&mut s, 1, &d);
        act(&mut s, 0, &place("AH", true, 1));
        assert_eq!(pile_codes(&s, 0, 1), ["KS", "v:QH", "AH"]);
    }

    #[test]
    fn tv22_the_opponent_hijacks_your_face_down_cell() {
        let mut s = pos(1);
        square(&mut s, 0, "AS 2S 3S / 4C 5S+v:QD 6H / 7C 8D 9S");
        give(&mut s, 1, &["5H"]);
        fill(&mut s, 10);
        act(&mut s, 1, &place("5H", false, 5));
        assert_eq!(pile_codes(&s, 0, 5), ["5S", "v:QD", "5H"]);
        assert_eq!(lines_of(&s, 0), [2, 0, 0, 1, 0, 0, 0, 0]);
        assert_eq!(s.raw(0), 3);
    }

    #[test]
    fn tv23_jack_on_a_king_and_hidden_views() {
        let mut s = pos(1);
        pile(&mut s, 0, 5, &["5S", "KD"]);
        pile(&mut s, 0, 3, &["3S"]);
        give(&mut s, 1, &["JC"]);
        give(&mut s, 0, &["QD"]);
        fill(&mut s, 10);
        let evs = act(&mut s, 1, &place("JC", false, 5));
        assert_eq!(pile_codes(&s, 0, 5), ["5S", "KD", "v:JC"]);
        let top = |v: &pb::View, cell: usize| v.squares[0].cells[cell - 1].pile.last().copied().unwrap();
        let t1 = top(&Carre::view(&s, Viewer::Seat(0)), 5);
        assert_eq!((t1.face_down, t1.placed_by, t1.card), (true, 1, None));
        let t2 = top(&Carre::view(&s, Viewer::Seat(1)), 5);
        assert_eq!((t2.face_down, t2.placed_by, t2.card), (true, 1, Some(card_pb(c("JC")))));
        // The event itself is redacted the same way.
        let Some(Ev::CardPlaced(p)) = Carre::redact(&evs[0], Viewer::Seat(0)).unwrap().kind else { panic!() };
        assert_eq!(p.card, None);
        let Some(Ev::CardPlaced(p)) = Carre::redact(&evs[0], Viewer::Seat(1)).unwrap().kind else { panic!() };
        assert_eq!(p.card, Some(card_pb(c("JC"))));
        act(&mut s, 0, &place("QD", true, 3));
        let t = top(&Carre::view(&s, Viewer::Seat(1)), 3);
        assert_eq!((t.face_down, t.placed_by, t.card), (true, 0, None));
        assert_eq!(top(&Carre::view(&s, Viewer::Seat(0)), 3).card, Some(card_pb(c("QD"))));
        assert_eq!(top(&Carre::view(&s, Viewer::Spectator), 3).card, None);
        assert_eq!(top(&Carre::view(&s, Viewer::Auditor), 3).card, Some(card_pb(c("QD"))));
    }

    #[test]
    fn tv24_largest_set_of_legal_actions() {
        let mut s = pos(0);
        give(&mut s, 0, &["JS", "JH", "JD", "JC", "QS", "QH", "QD", "QC", "KS"]);
        square(&mut s, 0, "AS 2S 3S / 4S 5S 6S / 7S 8S 9S");
        square(&mut s, 1, "AH 2H 3H / 4H 5H 6H / 7H 8H 9H");
        fill(&mut s, 10);
        let legal = Carre::legal_actions(&s, 0);
        assert_eq!(legal.len(), 127);
        let count = |f: &dyn Fn(&pb::Action) -> bool| legal.iter().filter(|a| f(a)).count();
        let placed_rank = |a: &pb::Action, r: i32| matches!(&a.kind, Some(pb::action::Kind::Place(p)) if p.card.as_ref().unwrap().rank == r);
        assert_eq!(count(&|a| placed_rank(a, 11)), 72);
        assert_eq!(count(&|a| placed_rank(a, 12)), 36);
        assert_eq!(count(&|a| placed_rank(a, 13)), 9);
        assert_eq!(count(&|a| matches!(a.kind, Some(pb::action::Kind::Discard(_)))), 9);
        assert_eq!(legal[0], go_out());
    }

    #[test]
    fn tv25_match_totals_starters_and_tie() {
        let run = |rounds: [(u8, [u8; 2], [u8; 2]); 4]| -> State {
            let mut s = State::new(Config::default());
            s.first_starter = 0;
            assert_eq!([1, 2, 3, 4].map(|r| s.expected_starter(r)), [0, 1, 0, 1]);
            for (i, (went, raw, score)) in rounds.into_iter().enumerate() {
                s.round = i as u8 + 1;
                s.record_round(RoundRec { went_out: went, raw, score });
            }
            assert_eq!(s.phase, Phase::Ending);
            let mut evs = vec![];
            Carre::auto_steps(&mut s, &mut Rng::from_u64(0), &mut evs).unwrap();
            assert!(matches!(evs[0].kind, Some(Ev::MatchEnded(_))));
            assert_eq!(s.phase, Phase::Over);
            s
        };
        let s = run([(NONE, [6, 3], [7, 3]), (1, [2, 5], [2, 4]), (NONE, [10, 0], [15, 0]), (NONE, [1, 8], [1, 11])]);
        let o = Carre::outcome(&s).unwrap();
        assert_eq!((o.scores, o.winners, o.aborted), (vec![25, 18], vec![0], false));
        let s = run([(NONE, [6, 3], [7, 3]), (NONE, [3, 6], [3, 7]), (NONE, [5, 5], [5, 5]), (NONE, [5, 5], [5, 5])]);
        let o = Carre::outcome(&s).unwrap();
        assert_eq!((o.scores, o.winners, o.reason.as_str()), (vec![20, 20], vec![0, 1], "DRAW"));
    }

    // ---------------------------------------------------------------- options

    fn opts(pairs: &[(&str, &str)]) -> Options {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn only_two_seats_and_options_are_checked() {
        for seats in [0, 1, 3, 4] {
            assert!(matches!(Carre::checked_config(seats, &Options::new()), Err(CoreError::InvalidOption(_))));
        }
        let bad = [
            ("rounds", "4"),
            ("rounds_per_match", "0"),
            ("rounds_per_match", "13"),
            ("rounds_per_match", "four"),
            ("allow_go_out_without_draw", "yes"),
            ("tiebreak_extra_rounds", "1"),
            ("cell_of_rank", "12345678"),
            ("cell_of_rank", "123456788"),
            ("cell_of_rank", "023456789"),
            ("first_starter", "2"),
        ];
        for (k, v) in bad {
            match Carre::checked_config(2, &opts(&[(k, v)])) {
                Err(CoreError::InvalidOption(msg)) => assert!(msg.contains(k), "{msg}"),
                other => panic!("{k}={v} accepted: {other:?}"),
            }
        }
        let cfg = Carre::checked_config(2, &opts(&[("cell_of_rank", "276951438"), ("rounds_per_match", "12")])).unwrap();
        assert_eq!(cfg.cell_of_rank, [1, 6, 5, 8, 4, 0, 3, 2, 7]);
        assert_eq!(cfg.rounds, 12);
        assert_eq!(Carre::checked_config(2, &Options::new()).unwrap(), Config::default());
    }

    #[test]
    fn cell_of_rank_moves_the_pip_cells() {
        let mut s = pos(0);
        // option "276951438": Ace on cell 2, Two on 7, ..., Nine on cell 8
        s.cfg.cell_of_rank = [1, 6, 5, 8, 4, 0, 3, 2, 7];
        give(&mut s, 0, &["AS", "9H"]);
        fill(&mut s, 10);
        assert_eq!(reason(try_act(&s, 0, &place("AS", true, 1))), "WRONG_CELL");
        assert!(try_act(&s, 0, &place("AS", true, 2)).is_ok());
        assert!(try_act(&s, 0, &place("9H", false, 8)).is_ok());
        assert_eq!(reason(try_act(&s, 0, &place("9H", false, 9))), "WRONG_CELL");
    }

    #[test]
    fn tiebreak_rounds_and_the_round_cap() {
        let mut s = State::new(Config { tiebreak: true, rounds: 1, ..Config::default() });
        s.round = 1;
        s.record_round(RoundRec { went_out: NONE, raw: [3, 3], score: [3, 3] });
        assert_eq!(s.phase, Phase::Dealing, "a tie after the last round plays on");
        s.round = 2;
        s.record_round(RoundRec { went_out: NONE, raw: [4, 3], score: [4, 3] });
        assert_eq!(s.phase, Phase::Ending);
        let mut s = State::new(Config { tiebreak: true, rounds: 1, ..Config::default() });
        for r in 1..=1 + MAX_EXTRA_ROUNDS {
            assert_ne!(s.phase, Phase::Ending);
            s.round = r;
            s.record_round(RoundRec { went_out: NONE, raw: [0, 0], score: [0, 0] });
        }
        assert_eq!(s.phase, Phase::Ending);
        Carre::auto_steps(&mut s, &mut Rng::from_u64(0), &mut vec![]).unwrap();
        let o = Carre::outcome(&s).unwrap();
        assert!(o.aborted && o.winners.is_empty() && o.reason == "ROUND_CAP");
    }

    // ---------------------------------------------------------------- legality

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

    /// Random reachable states from seeded random play (every decision point of `matches`
    /// matches), with the events that led there.
    fn random_states(matches: u64, seed: u64, bot: &str, mut f: impl FnMut(&State)) {
        let cfg = Config::default();
        for m in 0..matches {
            let mut rng = Rng::from_u64(seed + m);
            let mut s = State::new(cfg);
            for e in Carre::start(&s, &mut rng).unwrap() {
                Carre::evolve(&mut s, &e).unwrap();
            }
            while Carre::outcome(&s).is_none() {
                f(&s);
                let seat = s.current as u32;
                let a = Carre::bot_action(&s, seat, bot, &mut rng).unwrap();
                for e in Carre::decide(&s, seat, &a, &mut rng).unwrap() {
                    Carre::evolve(&mut s, &e).unwrap();
                }
            }
            f(&s);
        }
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

    // ---------------------------------------------------------------- hidden information

    #[derive(Clone, Copy, PartialEq)]
    enum Slot {
        Any,
        JackOnly,
        JackOrQueen,
    }

    /// A copy of `s` where everything `seat` may not see is shuffled consistently with the
    /// rules: the other hand, the stock order, and the identities of the other seat's
    /// face-down cards (a Jack in `seat`'s square stays a Jack; in its own square a J or Q).
    fn scramble_hidden(s: &State, seat: u8, rng: &mut Rng) -> State {
        let o = 1 - seat;
        let mut cards = vec![];
        let mut slots = vec![];
        let mut h = s.hands[o as usize];
        while h != 0 {
            cards.push(h.trailing_zeros() as u8);
            slots.push(Slot::Any);
            h &= h - 1;
        }
        for &x in &s.stock[s.stock_pos as usize..] {
            cards.push(x);
            slots.push(Slot::Any);
        }
        for e in &s.log[..s.n_placed as usize] {
            if e.down && e.by == o {
                cards.push(e.card);
                slots.push(if e.cell / 9 == seat { Slot::JackOnly } else { Slot::JackOrQueen });
            }
        }
        let fits = |slot: Slot, card: u8| match slot {
            Slot::Any => true,
            Slot::JackOnly => rank(card) == JACK,
            Slot::JackOrQueen => rank(card) == JACK || rank(card) == QUEEN,
        };
        if cards.len() > 1 {
            for _ in 0..400 {
                let (i, j) = (rng.index(cards.len()), rng.index(cards.len()));
                if fits(slots[i], cards[j]) && fits(slots[j], cards[i]) {
                    cards.swap(i, j);
                }
            }
        }
        let mut t = *s;
        let mut k = 0;
        let n_hand = s.hands[o as usize].count_ones() as usize;
        t.hands[o as usize] = cards[..n_hand].iter().fold(0, |acc, &x| acc | bit(x));
        k += n_hand;
        for p in t.stock_pos as usize..STOCK {
            t.stock[p] = cards[k];
            k += 1;
        }
        for e in t.log[..t.n_placed as usize].iter_mut() {
            if e.down && e.by == o {
                e.card = cards[k];
                k += 1;
            }
        }
        t
    }

    fn enc<M: Message>(m: &M) -> Vec<u8> {
        m.encode_to_vec()
    }

    #[test]
    fn views_and_redactions_do_not_depend_on_hidden_cards() {
        let mut rng = Rng::from_u64(2024);
        let mut compared = 0;
        let mut differed = 0;
        random_states(150, 100, "random", |s| {
            if s.phase != Phase::Action {
                return;
            }
            for seat in 0..2u8 {
                let t = scramble_hidden(s, seat, &mut rng);
                Carre::check_invariants(&t).unwrap();
                if t.hands != s.hands || t.stock != s.stock {
                    differed += 1;
                }
                let v = Viewer::Seat(seat as u32);
                assert_eq!(enc(&Carre::view(s, v)), enc(&Carre::view(&t, v)));
                assert_eq!(Carre::legal_actions(s, seat as u32), Carre::legal_actions(&t, seat as u32));
                assert_eq!(Carre::render(s, v), Carre::render(&t, v));
                if seat == s.current {
                    // The next public action (this seat's own) and every automatic step after it
                    // (the opponent's draw, scoring, the next deal) look identical to `seat`.
                    let legal = Carre::legal_actions(s, seat as u32);
                    let a = &legal[rng.index(legal.len())];
                    let k = rng.next_u64();
                    let e1 = Carre::decide(s, seat as u32, a, &mut Rng::from_u64(k)).unwrap();
                    let e2 = Carre::decide(&t, seat as u32, a, &mut Rng::from_u64(k)).unwrap();
                    let r1: Vec<_> = e1.iter().map(|e| Carre::redact(e, v).map(|e| enc(&e))).collect();
                    let r2: Vec<_> = e2.iter().map(|e| Carre::redact(e, v).map(|e| enc(&e))).collect();
                    assert_eq!(r1, r2);
                    compared += 1;
                }
            }
            // Spectators: both seats' secrets may change.
            let mut r2 = Rng::from_u64(compared as u64);
            let t = scramble_hidden(&scramble_hidden(s, 0, &mut r2), 1, &mut r2);
            assert_eq!(enc(&Carre::view(s, Viewer::Spectator)), enc(&Carre::view(&t, Viewer::Spectator)));
        });
        assert!(compared > 1000, "{compared}");
        assert!(differed > 1000, "{differed}");
    }

    #[test]
    fn each_viewer_sees_exactly_what_it_may() {
        let mut n = 0;
        random_states(60, 300, "greedy", |s| {
            for viewer in [Viewer::Seat(0), Viewer::Seat(1), Viewer::Spectator, Viewer::Auditor] {
                let v = Carre::view(s, viewer);
                for p in 0..2u32 {
                    let hand: Vec<pb::Card> = (0..52u8).filter(|&x| s.hands[p as usize] & bit(x) != 0).map(card_pb).collect();
                    let pl = &v.players[p as usize];
                    assert_eq!(pl.hand_count as usize, hand.len());
                    if viewer.sees_private_of(p) {
                        assert_eq!(pl.hand, hand);
                    } else {
                        assert!(pl.hand.is_empty());
                    }
                }
                for o in 0..2u8 {
                    for i in 0..9u8 {
                        let cell = &v.squares[o as usize].cells[i as usize];
                        let pile: Vec<&Entry> = s.pile(o, i).collect();
                        assert_eq!(cell.pile.len(), pile.len());
                        for (pe, e) in cell.pile.iter().zip(pile) {
                            assert_eq!((pe.face_down, pe.placed_by), (e.down, e.by as u32));
                            let visible = !e.down || viewer.sees_private_of(e.by as u32);
                            assert_eq!(pe.card, if visible { Some(card_pb(e.card)) } else { None });
                        }
                    }
                    assert_eq!(v.squares[o as usize].raw_points, s.raw(o));
                }
                assert_eq!(v.discard.len(), s.n_discard as usize);
                assert_eq!(v.stock_size as usize, s.stock_left());
                assert_eq!(v.stock.len(), if viewer == Viewer::Auditor { s.stock_left() } else { 0 });
                n += 1;
            }
        });
        assert!(n > 1000);
    }

    #[test]
    fn redaction_of_deal_and_draw() {
        let cfg = Carre::checked_config(2, &opts(&[("first_starter", "1")])).unwrap();
        let evs = Carre::start(&Carre::initial(&cfg), &mut Rng::from_u64(5)).unwrap();
        for seat in 0..2u32 {
            let Some(Ev::RoundDealt(d)) = Carre::redact(&evs[1], Viewer::Seat(seat)).unwrap().kind else { panic!() };
            assert!(d.stock.is_empty() && d.stock_size == 36);
            assert_eq!(d.hands[seat as usize].cards.len(), 8);
            assert!(d.hands[1 - seat as usize].cards.is_empty());
            assert_eq!(d.hands[1 - seat as usize].count, 8);
            let Some(Ev::CardDrawn(dr)) = Carre::redact(&evs[2], Viewer::Seat(seat)).unwrap().kind else { panic!() };
            assert_eq!(dr.seat, 1);
            assert_eq!(dr.card.is_some(), seat == 1);
        }
        let Some(Ev::RoundDealt(d)) = Carre::redact(&evs[1], Viewer::Spectator).unwrap().kind else { panic!() };
        assert!(d.hands.iter().all(|h| h.cards.is_empty()) && d.stock.is_empty());
        assert_eq!(Carre::redact(&evs[1], Viewer::Auditor).as_ref(), Some(&evs[1]));
    }

    // ---------------------------------------------------------------- malformed / illegal input

    #[test]
    fn malformed_and_illegal_input_is_refused_without_panic() {
        let mut s = pos(0);
        give(&mut s, 0, &["5H", "JS"]);
        give(&mut s, 1, &["7D"]);
        fill(&mut s, 10);
        let malformed = |a: pb::Action| {
            assert!(matches!(try_act(&s, 0, &a), Err(CoreError::Malformed(_))), "{a:?}");
        };
        malformed(pb::Action { kind: None });
        malformed(pb::Action { kind: Some(pb::action::Kind::Discard(pb::Discard { card: None })) });
        for (r, su) in [(0, 1), (14, 1), (-1, 2), (5, 0), (5, 5), (i32::MAX, i32::MIN)] {
            let card = Some(pb::Card { rank: r, suit: su });
            malformed(pb::Action { kind: Some(pb::action::Kind::Discard(pb::Discard { card })) });
            malformed(pb::Action { kind: Some(pb::action::Kind::Place(pb::Place { card, square: 1, cell: 5 })) });
        }
        for cell in [0, 10, u32::MAX] {
            malformed(place("5H", true, cell));
        }
        for sq in [0, 3, -1, i32::MAX] {
            let mut a = place("5H", true, 5);
            if let Some(pb::action::Kind::Place(p)) = a.kind.as_mut() {
                p.square = sq;
            }
            malformed(a);
        }
        // A seat beyond the match is not awaited (the registry calls it malformed before that).
        assert_eq!(reason(try_act(&s, 2, &discard("5H"))), "NOT_YOUR_TURN");
        assert_eq!(reason(try_act(&s, u32::MAX, &discard("5H"))), "NOT_YOUR_TURN");
        // Wrong seat, card not held, wrong phase, game over.
        assert_eq!(reason(try_act(&s, 1, &discard("7D"))), "NOT_YOUR_TURN");
        assert_eq!(reason(try_act(&s, 0, &discard("7D"))), "NOT_IN_HAND");
        assert_eq!(reason(try_act(&s, 0, &place("7D", true, 7))), "NOT_IN_HAND");
        assert_eq!(reason(try_act(&s, 0, &place("5H", false, 4))), "WRONG_CELL");
        let mut t = s;
        t.phase = Phase::Drawing;
        assert_eq!(reason(try_act(&t, 0, &discard("5H"))), "NOT_YOUR_TURN");
        assert!(Carre::legal_actions(&t, 0).is_empty());
        t.phase = Phase::Over;
        assert_eq!(reason(try_act(&t, 0, &discard("5H"))), "GAME_OVER");
        let fresh = Carre::initial(&Config::default());
        assert_eq!(reason(try_act(&fresh, 0, &go_out())), "NOT_YOUR_TURN");
        assert!(Carre::legal_actions(&s, 7).is_empty());
        assert!(Carre::bot_action(&s, 1, "random", &mut Rng::from_u64(1)).is_err());
        assert!(Carre::bot_action(&s, 0, "nobody", &mut Rng::from_u64(1)).is_err());
        let mut started = Carre::initial(&Config::default());
        for e in Carre::start(&started, &mut Rng::from_u64(1)).unwrap() {
            Carre::evolve(&mut started, &e).unwrap();
        }
        assert_eq!(reason(Carre::start(&started, &mut Rng::from_u64(1))), "ALREADY_STARTED");
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut rng = Rng::from_u64(77);
        let mut states = vec![];
        random_states(3, 900, "random", |s| states.push(*s));
        let mut buf = [0u8; 64];
        for i in 0..20_000 {
            let s = &states[i % states.len()];
            let len = rng.index(buf.len());
            for b in buf[..len].iter_mut() {
                *b = rng.below(256) as u8;
            }
            if let Ok(a) = pb::Action::decode(&buf[..len]) {
                let _ = Carre::decide(s, s.current as u32, &a, &mut Rng::from_u64(1));
            }
            if let Ok(e) = pb::Event::decode(&buf[..len]) {
                let mut t = *s;
                let _ = Carre::evolve(&mut t, &e);
                let _ = Carre::redact(&e, Viewer::Seat(0));
            }
        }
    }

    #[test]
    fn evolve_rejects_events_that_do_not_fit() {
        let cfg = Config::default();
        let mut s = State::new(cfg);
        let mut rng = Rng::from_u64(3);
        let evs = Carre::start(&s, &mut rng).unwrap();
        let corrupt = |s: &State, e: &pb::Event| {
            let mut t = *s;
            assert!(matches!(Carre::evolve(&mut t, e), Err(CoreError::Corrupt(_))), "{e:?}");
        };
        // Out of order, and redacted (card-less) copies of the deal and the draw.
        corrupt(&s, &evs[1]);
        corrupt(&s, &pb::Event { kind: None });
        Carre::evolve(&mut s, &evs[0]).unwrap();
        corrupt(&s, &evs[0]);
        corrupt(&s, &Carre::redact(&evs[1], Viewer::Seat(0)).unwrap());
        let mut dup = evs[1].clone();
        if let Some(Ev::RoundDealt(d)) = dup.kind.as_mut() {
            d.stock[0] = d.stock[1];
        }
        corrupt(&s, &dup);
        Carre::evolve(&mut s, &evs[1]).unwrap();
        corrupt(&s, &Carre::redact(&evs[2], Viewer::Seat(1 - evs_seat(&evs[2]))).unwrap());
        Carre::evolve(&mut s, &evs[2]).unwrap();
        // An action event from the wrong seat, an illegal placement, a bad score.
        let seat = s.current as u32;
        let a = Carre::legal_actions(&s, seat).pop().unwrap();
        let good = Carre::decide(&s, seat, &a, &mut rng).unwrap();
        let mut wrong = good[0].clone();
        if let Some(Ev::CardDiscarded(d)) = wrong.kind.as_mut() {
            d.seat = 1 - seat;
        }
        corrupt(&s, &wrong);
        let placed = pb::Event {
            kind: Some(Ev::CardPlaced(pb::CardPlaced { seat, card: Some(card_pb(0)), square_owner: 5, cell: 1, face_down: false })),
        };
        corrupt(&s, &placed);
        corrupt(&s, &pb::Event { kind: Some(Ev::WentOut(pb::WentOut { seat, raw_points: 0 })) });
        corrupt(&s, &pb::Event { kind: Some(Ev::MatchEnded(pb::MatchEnded::default())) });
        corrupt(&s, &pb::Event { kind: Some(Ev::RoundScored(pb::RoundScored::default())) });
    }

    fn evs_seat(e: &pb::Event) -> u32 {
        match &e.kind {
            Some(Ev::CardDrawn(d)) => d.seat,
            _ => 0,
        }
    }

    // ---------------------------------------------------------------- bots and render

    #[test]
    fn bots_play_legal_moves_and_greedy_beats_random() {
        let cfg = Config::default();
        let mut greedy_wins = 0;
        let mut games = 0;
        for m in 0..120u64 {
            let greedy_seat = (m % 2) as u32;
            let mut rng = Rng::from_u64(5000 + m);
            let mut s = State::new(cfg);
            for e in Carre::start(&s, &mut rng).unwrap() {
                Carre::evolve(&mut s, &e).unwrap();
            }
            while Carre::outcome(&s).is_none() {
                let seat = s.current as u32;
                let bot = if seat == greedy_seat { "greedy" } else { "random" };
                let a = Carre::bot_action(&s, seat, bot, &mut rng).unwrap();
                assert!(Carre::legal_actions(&s, seat).contains(&a), "{bot} played an illegal {a:?}");
                for e in Carre::decide(&s, seat, &a, &mut rng).unwrap() {
                    Carre::evolve(&mut s, &e).unwrap();
                }
            }
            games += 1;
            if Carre::outcome(&s).unwrap().winners == vec![greedy_seat] {
                greedy_wins += 1;
            }
        }
        eprintln!("greedy won {greedy_wins}/{games} against random");
        assert!(greedy_wins * 10 >= games * 8, "greedy won {greedy_wins}/{games}");
    }

    #[test]
    fn render_hides_what_the_viewer_may_not_see() {
        let mut s = pos(1);
        pile(&mut s, 0, 5, &["5S", "KD"]);
        give(&mut s, 1, &["JC", "2H"]);
        give(&mut s, 0, &["QD", "9C"]);
        fill(&mut s, 10);
        act(&mut s, 1, &place("JC", false, 5));
        let mine = Carre::render(&s, Viewer::Seat(1));
        let theirs = Carre::render(&s, Viewer::Seat(0));
        let spect = Carre::render(&s, Viewer::Spectator);
        assert!(mine.contains("vJC") && !theirs.contains("JC") && !spect.contains("JC"), "{mine}\n{theirs}");
        assert!(theirs.contains("##") && theirs.contains("QD") && !mine.contains("QD"));
        assert!(spect.contains("hand: 1 card(s)") && spect.contains("##x3"), "{spect}");
        if std::env::var_os("CARRE_SHOW_RENDER").is_some() {
            eprintln!("{mine}\n{theirs}\n{spect}");
        }
    }

    #[test]
    fn random_move_is_uniform_over_the_legal_moves() {
        let mut rng = Rng::from_u64(8);
        let mut n = 0;
        random_states(20, 400, "random", |s| {
            let mut moves = Moves::new();
            s.gen_moves(s.current, &mut moves);
            if s.phase != Phase::Action {
                assert_eq!(s.random_move(s.current, &mut rng), None);
                return;
            }
            let legal = moves.as_slice();
            let mut hits = vec![0u32; legal.len()];
            let draws = 40 * legal.len() as u32;
            for _ in 0..draws {
                let mv = s.random_move(s.current, &mut rng).unwrap();
                let i = legal.iter().position(|&m| m == mv).expect("random_move gave an illegal move");
                hits[i] += 1;
            }
            // Every legal move is reachable, none grossly over-drawn.
            assert!(hits.iter().all(|&h| h > 0 && h < 120), "{hits:?}");
            n += 1;
        });
        assert!(n > 500);
    }

    #[test]
    fn simulated_rounds_stay_in_bounds() {
        let mut rng = Rng::from_u64(1);
        for _ in 0..2000 {
            let [a, b] = simulate_random_round(&mut rng);
            assert!(a <= 16 && a != 15 && b <= 16 && b != 15);
        }
    }
}
