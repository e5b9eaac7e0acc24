//! Carré ("square alignments"), `rules/001-square-alignments.md` (seed 001).
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
//! the platform's `NOT_YOUR_TURN` / `GAME_OVER`, checked in the AMB21 order.
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
//!   an administrative abort (`aborted: true`, no winners, reason `ROUND_CAP`).
//! - **AMB26 (go_out without a draw disabled).** With `allow_go_out_without_draw = false` (AMB9
//!   flag), going out on a turn with no draw is refused with `GO_OUT_WITHOUT_DRAW`.
//! - **AMB27 (`cell_of_rank` option).** AMB2's constant is the option `cell_of_rank`: nine
//!   digits, a permutation of 1..9, giving the cell of Ace..Nine (default `123456789`).
//! - **AMB28 (legal action order).** `go_out` first when legal; then per card of the hand in
//!   card order (rank, then suit S H D C): placements in the own square (cells 1..9), placements
//!   in the opponent's square (cells 1..9), then its discard (matches TV19's listing).

use crate::error::{CoreError, CoreResult};
use crate::game::{Game, OptionSpec, Options, Seat, Viewer};
use crate::proto::carre as pb;
use crate::proto::Outcome;
use crate::rng::Rng;

use pb::event::Kind as Ev;

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
    fn default() -> Self {
        Config {
            rounds: 4,
            go_out_without_draw: true,
            tiebreak: false,
            cell_of_rank: [0, 1, 2, 3, 4, 5, 6, 7, 8],
            first_starter: None,
        }
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

#[derive(Clone, Copy, Debug)]
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

/// Deals a round from a fresh shuffle (the same draw order as `RoundDealt` in `decide`).
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
    let mut moves = Moves::new();
    loop {
        match s.phase {
            Phase::Drawing => {
                s.draw();
            }
            Phase::Passing => s.pass(),
            Phase::Action => {
                let seat = s.current;
                s.gen_moves(seat, &mut moves);
                let mv = moves.m[rng.index(moves.n)];
                s.apply_move(seat, mv);
            }
            _ => break,
        }
    }
    [s.raw(0), s.raw(1)]
}

// ------------------------------------------------------------------ the game

pub struct Carre;

fn parse_bool(name: &str, v: &str) -> CoreResult<bool> {
    match v {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(CoreError::option(format!("option {name} must be \"true\" or \"false\", not {v:?}"))),
    }
}

fn corrupt(msg: impl Into<String>) -> CoreError {
    CoreError::corrupt(msg)
}

fn seat_u8(seat: u32, what: &str) -> CoreResult<u8> {
    if seat < 2 {
        Ok(seat as u8)
    } else {
        Err(corrupt(format!("{what}: seat {seat} is not 0 or 1")))
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
                        stock: stock.iter().map(|&c| card_pb(c)).collect(),
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
            return Err(corrupt("round_dealt outside a deal"));
        }
        if d.round != s.round as u32 + 1 {
            return Err(corrupt(format!("round_dealt for round {} after round {}", d.round, s.round)));
        }
        let round = s.round + 1;
        let starter = s.expected_starter(round);
        if d.starter != starter as u32 || d.dealer != 1 - starter as u32 {
            return Err(corrupt("round_dealt names the wrong starter or dealer"));
        }
        if d.hands.len() != 2 || d.stock.len() != STOCK || d.stock_size != STOCK as u32 {
            return Err(corrupt("round_dealt needs two hands and the full stock"));
        }
        let mut seen = 0u64;
        let mut take = |c: &pb::Card| -> CoreResult<u8> {
            let id = card_from_pb(Some(c)).ok_or_else(|| corrupt("round_dealt holds a non-card"))?;
            if seen & bit(id) != 0 {
                return Err(corrupt(format!("round_dealt deals {} twice", card_name(id))));
            }
            seen |= bit(id);
            Ok(id)
        };
        let mut hands = [0u64; 2];
        for (i, h) in d.hands.iter().enumerate() {
            if h.seat != i as u32 || h.cards.len() != HAND || h.count != HAND as u32 {
                return Err(corrupt("round_dealt hand out of order or not 8 cards"));
            }
            for c in &h.cards {
                hands[i] |= bit(take(c)?);
            }
        }
        let mut stock = [0u8; STOCK];
        for (i, c) in d.stock.iter().enumerate() {
            stock[i] = take(c)?;
        }
        s.deal(round, starter, hands, &stock);
        Ok(())
    }

    fn expect_turn(s: &State, phase: Phase, seat: u32, what: &str) -> CoreResult<u8> {
        if s.phase != phase {
            return Err(corrupt(format!("{what} in phase {:?}", s.phase)));
        }
        let seat = seat_u8(seat, what)?;
        if seat != s.current {
            return Err(corrupt(format!("{what} by seat {seat}, but seat {} is to move", s.current)));
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
    const PROTO_PACKAGE: &'static str = "tablier.v1.carre";
    const MIN_PLAYERS: u32 = 2;
    const MAX_PLAYERS: u32 = 2;
    const BOTS: &'static [&'static str] = &["random", "greedy"];

    fn options() -> Vec<OptionSpec> {
        vec![
            OptionSpec {
                name: "rounds_per_match",
                description: "rounds in a match, 1..12 (the starter alternates every round)",
                default: "4",
                allowed: &[],
            },
            OptionSpec {
                name: "allow_go_out_without_draw",
                description: "once the stock is empty a player may go out without drawing (AMB9)",
                default: "true",
                allowed: &["true", "false"],
            },
            OptionSpec {
                name: "tiebreak_extra_rounds",
                description: "play extra rounds (at most 8) while the totals are equal (AMB13)",
                default: "false",
                allowed: &["true", "false"],
            },
            OptionSpec {
                name: "cell_of_rank",
                description: "cells (1..9, reading order) of Ace..Nine as nine digits, a permutation of 1..9 (AMB2)",
                default: "123456789",
                allowed: &[],
            },
            OptionSpec {
                name: "first_starter",
                description: "seat that starts round 1: drawn at random, or fixed",
                default: "random",
                allowed: &["random", "0", "1"],
            },
        ]
    }

    fn configure(seats: u32, options: &Options) -> CoreResult<Config> {
        if seats != 2 {
            return Err(CoreError::option(format!("Carré is played by exactly 2 players, not {seats}")));
        }
        let mut cfg = Config::default();
        for (name, v) in options {
            match name.as_str() {
                "rounds_per_match" => {
                    cfg.rounds = v
                        .parse::<u8>()
                        .ok()
                        .filter(|n| (1..=MAX_ROUNDS_OPTION).contains(n))
                        .ok_or_else(|| CoreError::option(format!("rounds_per_match must be an integer in 1..12, not {v:?}")))?;
                }
                "allow_go_out_without_draw" => cfg.go_out_without_draw = parse_bool(name, v)?,
                "tiebreak_extra_rounds" => cfg.tiebreak = parse_bool(name, v)?,
                "cell_of_rank" => {
                    let b = v.as_bytes();
                    let mut seen = 0u16;
                    let ok = b.len() == 9
                        && b.iter().enumerate().all(|(i, &d)| {
                            if !(b'1'..=b'9').contains(&d) || seen & (1 << (d - b'1')) != 0 {
                                return false;
                            }
                            seen |= 1 << (d - b'1');
                            cfg.cell_of_rank[i] = d - b'1';
                            true
                        });
                    if !ok {
                        return Err(CoreError::option(format!(
                            "cell_of_rank must be nine digits forming a permutation of 1..9 (e.g. \"123456789\"), not {v:?}"
                        )));
                    }
                }
                "first_starter" => {
                    cfg.first_starter = match v.as_str() {
                        "random" => None,
                        "0" => Some(0),
                        "1" => Some(1),
                        _ => {
                            return Err(CoreError::option(format!(
                                "first_starter must be \"random\", \"0\" or \"1\", not {v:?}"
                            )))
                        }
                    }
                }
                _ => {
                    return Err(CoreError::option(format!(
                        "unknown option {name:?} for Carré (known: rounds_per_match, allow_go_out_without_draw, tiebreak_extra_rounds, cell_of_rank, first_starter)"
                    )))
                }
            }
        }
        Ok(cfg)
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
        if seat >= 2 {
            return Err(CoreError::malformed(format!("seat {seat} is not in this 2-seat match")));
        }
        if state.phase == Phase::Over {
            return Err(CoreError::game_over());
        }
        let seat = seat as u8;
        if state.phase != Phase::Action || seat != state.current {
            return Err(CoreError::not_your_turn());
        }
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
        let kind = event.kind.as_ref().ok_or_else(|| corrupt("event has no kind"))?;
        match kind {
            Ev::MatchStarted(m) => {
                if s.phase != Phase::NotStarted {
                    return Err(corrupt("match_started twice"));
                }
                let first = seat_u8(m.first_starter, "match_started")?;
                if s.cfg.first_starter.is_some_and(|f| f != first) {
                    return Err(corrupt("match_started contradicts the first_starter option"));
                }
                if m.rounds_per_match != s.cfg.rounds as u32 {
                    return Err(corrupt("match_started with another rounds_per_match than configured"));
                }
                s.first_starter = first;
                s.phase = Phase::Dealing;
            }
            Ev::RoundDealt(d) => Self::evolve_dealt(s, d)?,
            Ev::CardDrawn(d) => {
                Self::expect_turn(s, Phase::Drawing, d.seat, "card_drawn")?;
                let c = card_from_pb(d.card.as_ref()).ok_or_else(|| corrupt("card_drawn without its card"))?;
                if c != s.stock[s.stock_pos as usize] || d.stock_size != (s.stock_left() - 1) as u32 {
                    return Err(corrupt("card_drawn is not the top of the stock"));
                }
                s.draw();
            }
            Ev::TurnPassed(p) => {
                Self::expect_turn(s, Phase::Passing, p.seat, "turn_passed")?;
                s.pass();
            }
            Ev::CardPlaced(p) => {
                let seat = Self::expect_turn(s, Phase::Action, p.seat, "card_placed")?;
                let c = card_from_pb(p.card.as_ref()).ok_or_else(|| corrupt("card_placed without its card"))?;
                let owner = seat_u8(p.square_owner, "card_placed square")?;
                if !(1..=9).contains(&p.cell) {
                    return Err(corrupt("card_placed on a cell outside 1..9"));
                }
                let idx = (p.cell - 1) as u8;
                let down = s.check_place(seat, c, owner, idx).map_err(|e| corrupt(format!("card_placed: {e}")))?;
                if down != p.face_down {
                    return Err(corrupt("card_placed with the wrong face"));
                }
                s.place(seat, c, owner, idx, down);
            }
            Ev::CardDiscarded(d) => {
                let seat = Self::expect_turn(s, Phase::Action, d.seat, "card_discarded")?;
                let c = card_from_pb(d.card.as_ref()).ok_or_else(|| corrupt("card_discarded without its card"))?;
                if s.hands[seat as usize] & bit(c) == 0 {
                    return Err(corrupt("card_discarded from outside the hand"));
                }
                s.discard_card(seat, c);
            }
            Ev::WentOut(w) => {
                let seat = Self::expect_turn(s, Phase::Action, w.seat, "went_out")?;
                let raw = s.check_go_out(seat).map_err(|e| corrupt(format!("went_out: {e}")))?;
                if raw != w.raw_points {
                    return Err(corrupt("went_out with wrong raw points"));
                }
                s.go_out(seat);
            }
            Ev::RoundScored(r) => {
                if s.phase != Phase::Scoring {
                    return Err(corrupt("round_scored before the round ended"));
                }
                let rec = s.round_result();
                if *r != Self::scored_event(s, &rec) {
                    return Err(corrupt("round_scored does not match the squares"));
                }
                s.record_round(rec);
            }
            Ev::MatchEnded(m) => {
                if s.phase != Phase::Ending {
                    return Err(corrupt("match_ended before the last round was scored"));
                }
                let (winners, result) = s.result();
                if m.totals != s.totals || m.winners != winners || m.result != result as i32 || m.rounds_played != s.n_history as u32 {
                    return Err(corrupt("match_ended does not match the totals"));
                }
                s.phase = Phase::Over;
            }
        }
        Ok(())
    }

    fn to_act(s: &State) -> Vec<Seat> {
        if s.phase == Phase::Action {
            vec![s.current as Seat]
        } else {
            vec![]
        }
    }

    fn legal_actions(s: &State, seat: Seat) -> Vec<pb::Action> {
        if seat >= 2 {
            return vec![];
        }
        let mut moves = Moves::new();
        s.gen_moves(seat as u8, &mut moves);
        moves.as_slice().iter().map(|&m| Self::move_to_action(seat as u8, m)).collect()
    }

    fn view(s: &State, viewer: Viewer) -> pb::View {
        let (kind, vseat) = match viewer {
            Viewer::Seat(x) => (pb::ViewerKind::Seat, x),
            Viewer::Spectator => (pb::ViewerKind::Spectator, 0),
            Viewer::Auditor => (pb::ViewerKind::Auditor, 0),
        };
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
            viewer_kind: kind as i32,
            viewer_seat: vseat,
            phase: phase as i32,
            round: s.round as u32,
            rounds_per_match: s.cfg.rounds as u32,
            first_starter: s.first_starter as u32,
            starter: s.starter as u32,
            dealer: 1 - s.starter as u32,
            current: s.current as u32,
            to_act: Self::to_act(s),
            drew_this_turn: s.drew,
            players,
            squares,
            discard: s.discard[..s.n_discard as usize].iter().map(|&c| card_pb(c)).collect(),
            stock_size: s.stock_left() as u32,
            stock: if viewer == Viewer::Auditor {
                s.stock[s.stock_pos as usize..].iter().map(|&c| card_pb(c)).collect()
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
            Some(Ev::CardDrawn(d)) => {
                if !viewer.sees_private_of(d.seat) {
                    d.card = None;
                }
            }
            Some(Ev::CardPlaced(p)) => {
                if p.face_down && !viewer.sees_private_of(p.seat) {
                    p.card = None;
                }
            }
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
                pb::MatchResult::Aborted => "ROUND_CAP",
                pb::MatchResult::Draw => "DRAW",
                _ => "HIGHER_TOTAL",
            }
            .into(),
            lower_is_better: false,
            aborted: s.aborted,
        })
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
        let cell_txt = |o: u8, i: u8| -> String {
            let t = s.top[o as usize][i as usize];
            if t == NONE {
                return " .. ".into();
            }
            let e = s.log[t as usize];
            let h = s.pile(o, i).count();
            let base = if !e.down {
                format!(" {} ", card_name(e.card))
            } else if viewer.sees_private_of(e.by as u32) {
                format!("v{} ", card_name(e.card))
            } else {
                " ## ".into()
            };
            if h > 1 {
                format!("{}{}", base.trim_end(), h.min(9))
            } else {
                base
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
                format!("{} cards", s.hands[o as usize].count_ones())
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
            Phase::Passing => {
                if hc != 0 || ho == 0 || s.stock_left() != 0 {
                    return Err("pass_turn when it is not forced".into());
                }
            }
            Phase::Scoring => {
                if s.went_out == NONE && (s.stock_left() != 0 || s.hands[0] != 0 || s.hands[1] != 0) {
                    return Err("round scoring without going out or exhaustion".into());
                }
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
            for p in 0..2 {
                if r.raw[p] > 16 || r.raw[p] == 15 {
                    return Err(format!("impossible raw points {}", r.raw[p]));
                }
                let expect = base_score(r.raw[p] as u32) - (r.went_out == p as u8) as u32;
                if r.score[p] as u32 != expect {
                    return Err("round score does not follow from raw points".into());
                }
                sums[p] += r.score[p] as u32;
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
        if s.phase == Phase::Over && (s.n_history < s.cfg.rounds) {
            return Err("match over before the last round".into());
        }
        Ok(())
    }
}

