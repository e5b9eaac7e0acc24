//! Grid Knock (seed 000): a Skyjo-family game on a ring of 3x4 blocks, where every seat's
//! 15-card domain is its own block plus its left neighbour's column 4, with a knock interrupt.
//! Rules: `docs/rules/grid_knock.md` (the seed wins where it speaks; AMB1-AMB24 bind).
//!
//! # Representation
//! Slot index `s = owner * 12 + (row - 1) * 4 + (col - 1)` (at most 96 slots). Values are `i8`,
//! `filled` and `up` are 128-bit sets. Piles are fixed arrays (top = last). Domain tables are
//! precomputed per configuration: `dom[i][r * 5 + d]`, `d = 0` being `(i+1 mod N, r, 4)`.
//! The engine works on a compact internal move/event pair ([`Move`], [`Ev`]); protobuf is only
//! the boundary. `decide` clones the state and applies each event as it emits it, so all
//! automatic steps (window closings, W/Y placement, turn end, scoring, next deal) are computed
//! from the state they follow and `evolve` re-validates every one of them.
//!
//! # Hidden information
//! Cards carry no ids (a card is its value), so nothing exposed can leak deck order. Deals and
//! reshuffles reach seats without their hidden piles; face-down values reach nobody; a sealed
//! initial choice or knock answer reaches only its author until the window closes; Y reaches
//! only K while it was face down. Every such event stays as a public stub for the others.
//!
//! # Decisions not in the spec (same style as section 8)
//! - **AMB25 — Sealed initial reveal.** The initial reveal is simultaneous (3.2 step 4): each
//!   `reveal_initial` is sealed (other seats learn only that a choice was made) until every seat
//!   has chosen 2 cards; then one automatic event flips all 2N cards at once.
//! - **AMB26 — Automatic `end_triples`.** A TRIPLES window with no triple in the owner's domain
//!   closes automatically (the spec allows it, 4.2), so seats are only asked when a choice exists.
//! - **AMB27 — Triple cells.** `discard_triple` may name its 3 cells in any order; they go onto the
//!   discard pile in line order (R6). Any count other than 3 is the rule error `NOT_A_TRIPLE`.
//! - **AMB28 — Administrative cap.** Nothing forces a round to end (a seat may keep swapping face-up
//!   cards), so option `turn_cap` (default 3000 turns per match) stops the match with
//!   `MatchAborted`; the outcome then has `aborted = true`, the totals so far and no winner.
//! - **AMB29 — Reshuffle timing.** The reshuffle (R17) is its own chance event, emitted by the
//!   `draw_from_pile` command just before `Drawn`.
//! - **AMB30 — Variants.** Options: `target_score` (100, AMB13), `closer_penalty` (`double`, AMB12;
//!   `none` disables it), `knocking` (`on`; `off` plays without knock windows, as the seed's
//!   2-player game always does).
//! - **AMB31 — Round-1 dealer.** Drawn uniformly at random in `start` (3.2 step 1).
//! - **AMB32 — Knock timeout.** The core has no clock. An open window runs a timer of option
//!   `knock_timeout` seconds (default 60; 0: none), and the server gives the host command
//!   `close_knock_window` when it runs out; the table's host (the operator, through the
//!   `HostCommand` RPC) may give it earlier. Every seat of E that has not answered passes (4.2: "a
//!   timeout counts as `pass_knock`"), with the same `knock_answered` events as a pass it gave
//!   itself, and the window closes.

use crate::error::{ensure, CoreError, CoreResult};
use crate::game::{Game, OptionSpec, OptionValues, Seat, Seats, Timer, Viewer};
use crate::proto::grid_knock as pb;
use crate::proto::Outcome;
use crate::rng::Rng;

pub struct GridKnock;

const NONE: u8 = u8::MAX;
const NO_CARD: i8 = i8::MIN;
/// The deck: (card value, copies); 150 cards.
pub const DECK: [(i8, u8); 15] = [
    (-2, 5),
    (-1, 10),
    (0, 15),
    (1, 10),
    (2, 10),
    (3, 10),
    (4, 10),
    (5, 10),
    (6, 10),
    (7, 10),
    (8, 10),
    (9, 10),
    (10, 10),
    (11, 10),
    (12, 10),
];
const DECK_SIZE: usize = 150;

// ------------------------------------------------------------------------------------------
// Configuration and state

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub seats: u8,
    pub target_score: i32,
    pub closer_penalty: bool,
    pub knocking: bool,
    pub turn_cap: u32,
    /// Seconds a knock window waits before the server closes it (AMB32); 0: no timer.
    pub knock_timeout: u32,
    /// `dom[i][r * 5 + d]`: slot of domain cell (r, d) of seat i.
    pub dom: [[u8; 15]; 8],
    pub dom_mask: [u128; 8],
}

impl Config {
    /// The configuration for `seats` with the checked `options`.
    pub fn new(seats: u8, options: &OptionValues) -> Config {
        let n = seats as usize;
        let mut dom = [[0u8; 15]; 8];
        let mut dom_mask = [0u128; 8];
        for i in 0..n {
            for r in 0..3 {
                for d in 0..5 {
                    let s = if d == 0 {
                        ((i + 1) % n) * 12 + r * 4 + 3
                    } else {
                        i * 12 + r * 4 + d - 1
                    };
                    dom[i][r * 5 + d] = s as u8;
                    dom_mask[i] |= 1u128 << s;
                }
            }
        }
        Config {
            seats,
            target_score: options.int("target_score") as i32,
            closer_penalty: options.text("closer_penalty") == "double",
            knocking: options.text("knocking") == "on",
            turn_cap: options.int("turn_cap"),
            knock_timeout: options.int("knock_timeout"),
            dom,
            dom_mask,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    DealPending,
    InitialReveal,
    InitialFlipPending,
    ChooseSource,
    PassEmptyPending,
    KnockWindow,
    KnockClosePending,
    KnockDecision,
    DecideDrawn,
    SwapDiscard,
    KnockerSwap,
    Triples,
    TakeFromKnocker,
    ReturnSwap,
    WDiscardPending,
    YPlacePending,
    TurnEndPending,
    RoundEndPending,
    AbortPending,
    Over,
    Aborted,
}

/// What opened the current TRIPLES window (decides the automatic steps after it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ctx {
    Keep,
    Reveal,
    Knocker,
    Return,
}

#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub cfg: Config,
    pub val: [i8; 96],
    pub filled: u128,
    pub up: u128,
    pub draw: [i8; DECK_SIZE],
    pub draw_len: u8,
    pub disc: [i8; DECK_SIZE],
    pub disc_len: u8,
    pub phase: Phase,
    pub round: u32,
    pub dealer: u8,
    pub first: u8,
    pub active: u8,
    pub closer: u8,
    pub final_taken: u8,
    pub init_choice: [[u8; 2]; 8],
    pub init_cnt: [u8; 8],
    /// X: card drawn by the active seat, in hand.
    pub x: i8,
    pub eligible: u8,
    pub answered: u8,
    pub knocked: u8,
    pub knockers: u8,
    /// K: accepted knocker.
    pub knocker: u8,
    /// Y: card held by K, and whether it was face up before.
    pub y: i8,
    pub y_up: bool,
    /// Z taken from K, and the reserved slot q.
    pub z: i8,
    pub q: u8,
    /// W: exchanged card waiting to be discarded.
    pub w: i8,
    pub tri_owner: u8,
    pub tri_ctx: Ctx,
    pub totals: [i32; 8],
    pub last: [i32; 8],
    pub turns: u32,
    pub winners: u8,
    /// True once a timed-out seat forfeited (§11): the match is over, `winners` the others'.
    pub forfeited: bool,
}

impl State {
    #[inline]
    pub fn n(&self) -> usize {
        self.cfg.seats as usize
    }
    #[inline]
    fn is_up(&self, s: u8) -> bool {
        self.up >> s & 1 == 1
    }
    #[inline]
    fn is_filled(&self, s: u8) -> bool {
        self.filled >> s & 1 == 1
    }
    #[inline]
    fn in_dom(&self, i: u8, s: u8) -> bool {
        self.cfg.dom_mask[i as usize] >> s & 1 == 1
    }
    /// `cnt(D[i])`.
    #[inline]
    pub fn cnt(&self, i: u8) -> u32 {
        (self.filled & self.cfg.dom_mask[i as usize]).count_ones()
    }
    #[inline]
    fn face_down_in(&self, i: u8) -> u128 {
        self.filled & !self.up & self.cfg.dom_mask[i as usize]
    }
    fn all_seats(&self) -> u8 {
        ((1u16 << self.n()) - 1) as u8
    }
    fn push_discard(&mut self, v: i8) -> CoreResult<()> {
        let l = self.disc_len as usize;
        if l >= DECK_SIZE {
            return Err(CoreError::corrupt("discard pile overflow"));
        }
        self.disc[l] = v;
        self.disc_len += 1;
        Ok(())
    }
    fn discard_top(&self) -> Option<i8> {
        (self.disc_len > 0).then(|| self.disc[self.disc_len as usize - 1])
    }
    fn take_slot(&mut self, s: u8) -> i8 {
        let v = self.val[s as usize];
        self.val[s as usize] = NO_CARD;
        self.filled &= !(1u128 << s);
        self.up &= !(1u128 << s);
        v
    }
    fn place_up(&mut self, s: u8, v: i8) {
        self.val[s as usize] = v;
        self.filled |= 1u128 << s;
        self.up |= 1u128 << s;
    }
}

// ------------------------------------------------------------------------------------------
// Triple detection (hot path)

/// Up to 14 candidate triples of one domain (R3): 3 rows x 3 windows + 5 columns.
pub struct Triples {
    pub cells: [[u8; 3]; 14],
    pub len: usize,
}

/// Number of set bits of a 5-bit row mask (no reliance on a popcnt instruction).
const POP5: [u8; 32] = {
    let mut t = [0u8; 32];
    let mut k = 0;
    while k < 32 {
        t[k] = (k as u32).count_ones() as u8;
        k += 1;
    }
    t
};

/// Every triple of domain `i`, rows first (r1..r3, windows left to right), then columns d0..d4.
/// Cells are in line order.
#[inline]
pub fn triples(st: &State, i: u8) -> Triples {
    let mut out = Triples {
        cells: [[0; 3]; 14],
        len: 0,
    };
    // Face-up and filled cells of the domain as 15-bit masks (bit r * 5 + d). The own block is
    // 12 contiguous slots; d0 is column 4 of the left neighbour's block.
    let own = i as usize * 12;
    let nb = if i as usize + 1 == st.n() {
        0
    } else {
        (i as usize + 1) * 12
    };
    let up_own = (st.up >> own) as u32 & 0xfff;
    let up_nb = (st.up >> nb) as u32 & 0xfff;
    let mut up: u32 = 0;
    for r in 0..3 {
        up |= ((up_nb >> (r * 4 + 3) & 1) | ((up_own >> (r * 4) & 0xf) << 1)) << (r * 5);
    }
    // Fewer than three face-up cells: no triple (x & (x - 1) clears the lowest set bit).
    let two = up & up.wrapping_sub(1);
    if two & two.wrapping_sub(1) == 0 {
        return out;
    }
    let dom = &st.cfg.dom[i as usize];
    let ov = &st.val[own..own + 12];
    let nv = &st.val[nb..nb + 12];
    // Value of domain cell (r, d).
    let cell = |r: usize, d: usize| {
        if d == 0 {
            nv[r * 4 + 3]
        } else {
            ov[r * 4 + d - 1]
        }
    };
    // Rows: a triple needs three face-up cards in the row; empty slots are skipped, face-down
    // cards break the run (their key is a sentinel no card value equals).
    let f_own = (st.filled >> own) as u32 & 0xfff;
    let f_nb = (st.filled >> nb) as u32 & 0xfff;
    for r in 0..3 {
        let ru = up >> (r * 5) & 0x1f;
        if POP5[ru as usize] < 3 {
            continue;
        }
        let rf = (f_nb >> (r * 4 + 3) & 1) | ((f_own >> (r * 4) & 0xf) << 1);
        let mut key = [0i8; 5];
        for (d, k) in key.iter_mut().enumerate() {
            *k = if ru >> d & 1 == 1 {
                cell(r, d)
            } else {
                32 + d as i8
            };
        }
        if rf == 0x1f {
            for d in 0..3 {
                if key[d] == key[d + 1] && key[d + 1] == key[d + 2] {
                    let b = r * 5 + d;
                    out.cells[out.len] = [dom[b], dom[b + 1], dom[b + 2]];
                    out.len += 1;
                }
            }
        } else {
            let mut line = [0usize; 5];
            let mut len = 0;
            for d in 0..5 {
                if rf >> d & 1 == 1 {
                    line[len] = d;
                    len += 1;
                }
            }
            let mut w = 0;
            while w + 2 < len {
                let (a, b, c) = (line[w], line[w + 1], line[w + 2]);
                if key[a] == key[b] && key[b] == key[c] {
                    let o = r * 5;
                    out.cells[out.len] = [dom[o + a], dom[o + b], dom[o + c]];
                    out.len += 1;
                }
                w += 1;
            }
        }
    }
    // Columns: all three cells face up and equal.
    let mut cu = up & up >> 5 & up >> 10 & 0x1f;
    while cu != 0 {
        let d = cu.trailing_zeros() as usize;
        cu &= cu - 1;
        let v = cell(0, d);
        if cell(1, d) == v && cell(2, d) == v {
            out.cells[out.len] = [dom[d], dom[5 + d], dom[10 + d]];
            out.len += 1;
        }
    }
    out
}

/// The domains a slot belongs to: its owner's, and for column 4 also the right neighbour's.
#[inline]
pub fn slot_domains(n: usize, s: u8) -> (u8, Option<u8>) {
    let owner = s / 12;
    if s % 4 == 3 {
        (
            owner,
            Some(if owner == 0 { n as u8 - 1 } else { owner - 1 }),
        )
    } else {
        (owner, None)
    }
}

/// Triples of every domain containing slot `s` (what changes after a card is placed at `s`).
#[inline]
pub fn triples_after_change(st: &State, s: u8) -> usize {
    let (a, b) = slot_domains(st.n(), s);
    triples(st, a).len + b.map_or(0, |b| triples(st, b).len)
}

// ------------------------------------------------------------------------------------------
// Internal moves and events

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    RevealInitial(u8),
    Draw,
    TakeDiscard,
    Knock,
    PassKnock,
    Accept(u8),
    Refuse,
    Keep(u8),
    DiscardReveal(u8),
    KnockerSwap(u8),
    Triple([u8; 3]),
    /// A `discard_triple` that does not name exactly three distinct cells.
    BadTriple,
    EndTriples,
    Take(u8),
    Return(u8),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ev {
    Dealt {
        round: u32,
        dealer: u8,
        nblock: u8,
        cards: [i8; DECK_SIZE],
    },
    InitialChosen {
        seat: u8,
        slot: u8,
    },
    InitialRevealed {
        slots: [u8; 16],
        vals: [i8; 16],
        len: u8,
    },
    Reshuffled {
        pile: [i8; DECK_SIZE],
        len: u8,
        top: i8,
    },
    Drawn {
        seat: u8,
        value: i8,
        eligible: u8,
    },
    TookDiscard {
        seat: u8,
        value: i8,
    },
    KnockAnswered {
        seat: u8,
        knock: bool,
    },
    KnockClosed {
        knockers: u8,
    },
    Accepted {
        seat: u8,
        knocker: u8,
    },
    Refused {
        seat: u8,
    },
    Kept {
        seat: u8,
        slot: u8,
        placed: i8,
        removed: i8,
    },
    DiscardedRevealed {
        seat: u8,
        discarded: i8,
        slot: u8,
        revealed: i8,
    },
    KnockerSwapped {
        knocker: u8,
        slot: u8,
        placed: i8,
        removed: i8,
        removed_up: bool,
    },
    Triple {
        seat: u8,
        cells: [u8; 3],
        value: i8,
    },
    TriplesEnded {
        seat: u8,
        auto: bool,
    },
    Taken {
        seat: u8,
        knocker: u8,
        slot: u8,
        value: i8,
    },
    Returned {
        seat: u8,
        slot: u8,
        placed: i8,
        removed: i8,
    },
    WDiscarded {
        seat: u8,
        value: i8,
    },
    YPlaced {
        knocker: u8,
        slot: u8,
        value: i8,
    },
    YDiscarded {
        knocker: u8,
        value: i8,
    },
    EmptyPassed {
        seat: u8,
    },
    TurnEnded {
        seat: u8,
        closed: bool,
        round_over: bool,
        next: u8,
    },
    RoundScored(Box<Scoring>),
    Aborted {
        turns: u32,
    },
    /// A timed-out seat forfeited (match clocks, §11); `winners` is a seat mask.
    Forfeited {
        seat: u8,
        winners: u8,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Scoring {
    pub seats: u8,
    pub round: u32,
    pub revealed: u128,
    pub vals: [i8; 96],
    pub raw: [i32; 8],
    pub scores: [i32; 8],
    pub totals: [i32; 8],
    pub closer: u8,
    pub doubled: bool,
    pub over: bool,
    pub winners: u8,
}


fn deck_histogram() -> [u16; 15] {
    let mut h = [0u16; 15];
    for (v, c) in DECK {
        h[(v + 2) as usize] = c as u16;
    }
    h
}

fn hist_add(h: &mut [u16; 15], v: i8) -> bool {
    if !(-2..=12).contains(&v) {
        return false;
    }
    h[(v + 2) as usize] += 1;
    true
}

pub fn eligible_knockers(st: &State) -> u8 {
    let n = st.n();
    if n < 3 || !st.cfg.knocking {
        return 0;
    }
    let mut e = 0u8;
    for p in 0..n as u8 {
        if p != st.active && st.cnt(p) >= 4 && st.final_taken >> p & 1 == 0 {
            e |= 1 << p;
        }
    }
    e
}

/// Whether `take_from_knocker` has any legal target (R12, AMB14, AMB24).
pub fn take_targets(st: &State) -> u128 {
    if st.knocker == NONE || st.cnt(st.active) == 0 {
        return 0;
    }
    st.filled & st.cfg.dom_mask[st.knocker as usize] & !st.cfg.dom_mask[st.active as usize]
}

fn turn_end_result(st: &State) -> (bool, bool, u8, u8, u8) {
    let a = st.active;
    let mut closer = st.closer;
    let mut fin = st.final_taken;
    let mut closed = false;
    if closer == NONE && st.face_down_in(a) == 0 {
        closer = a;
        fin |= 1 << a;
        closed = true;
    } else if closer != NONE {
        fin |= 1 << a;
    }
    let round_over = closer != NONE && fin == st.all_seats();
    let next = ((a as usize + 1) % st.n()) as u8;
    (closed, round_over, next, closer, fin)
}

pub fn score_round(st: &State) -> Scoring {
    let n = st.n();
    let revealed = st.filled & !st.up;
    let mut vals = [0i8; 96];
    for s in 0..(12 * n) as u8 {
        if revealed >> s & 1 == 1 {
            vals[s as usize] = st.val[s as usize];
        }
    }
    let mut raw = [0i32; 8];
    for (i, r) in raw.iter_mut().enumerate().take(n) {
        for &s in &st.cfg.dom[i] {
            if st.is_filled(s) {
                *r += st.val[s as usize] as i32;
            }
        }
    }
    let mut scores = raw;
    let c = st.closer as usize;
    let mut doubled = false;
    if st.cfg.closer_penalty && c < n && raw[c] > 0 && (0..n).any(|j| j != c && raw[j] <= raw[c]) {
        scores[c] *= 2;
        doubled = true;
    }
    let mut totals = st.totals;
    for i in 0..n {
        totals[i] += scores[i];
    }
    let over = totals[..n].iter().any(|&t| t >= st.cfg.target_score);
    let mut winners = 0u8;
    if over {
        let best = totals[..n].iter().copied().min().unwrap_or(0);
        for (i, &t) in totals[..n].iter().enumerate() {
            if t == best {
                winners |= 1 << i;
            }
        }
    }
    Scoring {
        seats: n as u8,
        round: st.round,
        revealed,
        vals,
        raw,
        scores,
        totals,
        closer: st.closer,
        doubled,
        over,
        winners,
    }
}

fn begin_turn(st: &mut State, seat: u8) {
    st.active = seat;
    st.x = NO_CARD;
    st.eligible = 0;
    st.answered = 0;
    st.knocked = 0;
    st.knockers = 0;
    st.knocker = NONE;
    st.y = NO_CARD;
    st.z = NO_CARD;
    st.q = NONE;
    st.w = NO_CARD;
    st.tri_owner = NONE;
    st.phase = if st.cnt(seat) == 0 {
        Phase::PassEmptyPending
    } else {
        Phase::ChooseSource
    };
}

fn open_triples(st: &mut State, owner: u8, ctx: Ctx) {
    st.phase = Phase::Triples;
    st.tri_owner = owner;
    st.tri_ctx = ctx;
}

/// Applies one event (the only state transition). Validates that it fits.
pub fn apply(st: &mut State, ev: &Ev) -> CoreResult<()> {
    let n = st.n();
    let nslots = (12 * n) as u8;
    let slot_ok = |s: u8| s < nslots;
    match *ev {
        Ev::Dealt {
            round,
            dealer,
            nblock,
            ref cards,
        } => {
            ensure(st.phase == Phase::DealPending, "deal outside a deal")?;
            ensure(nblock as usize == 12 * n, "deal size")?;
            ensure(round == st.round + 1, "round number")?;
            ensure((dealer as usize) < n, "dealer")?;
            ensure(round == 1 || dealer == st.first, "dealer rotation")?;
            let mut h = [0u16; 15];
            for &v in cards.iter() {
                ensure(hist_add(&mut h, v), "card value")?;
            }
            ensure(h == deck_histogram(), "deal is not the deck")?;
            let nb = nblock as usize;
            st.val = [NO_CARD; 96];
            st.val[..nb].copy_from_slice(&cards[..nb]);
            st.filled = if nb == 128 {
                u128::MAX
            } else {
                (1u128 << nb) - 1
            };
            st.up = 0;
            st.disc = [0; DECK_SIZE];
            st.disc[0] = cards[nb];
            st.disc_len = 1;
            st.draw = [0; DECK_SIZE];
            let rest = &cards[nb + 1..];
            st.draw[..rest.len()].copy_from_slice(rest);
            st.draw_len = rest.len() as u8;
            st.round = round;
            st.dealer = dealer;
            st.first = ((dealer as usize + 1) % n) as u8;
            st.active = st.first;
            st.closer = NONE;
            st.final_taken = 0;
            st.init_choice = [[NONE; 2]; 8];
            st.init_cnt = [0; 8];
            begin_turn(st, st.first);
            st.phase = Phase::InitialReveal;
        }
        Ev::InitialChosen { seat, slot } => {
            ensure(
                st.phase == Phase::InitialReveal,
                "initial choice outside the initial reveal",
            )?;
            ensure((seat as usize) < n && slot_ok(slot), "seat or slot")?;
            let c = st.init_cnt[seat as usize];
            ensure(c < 2, "third initial choice")?;
            ensure(
                slot / 12 == seat && st.is_filled(slot) && !st.is_up(slot),
                "initial choice slot",
            )?;
            ensure(
                !st.init_choice[seat as usize].contains(&slot),
                "slot chosen twice",
            )?;
            st.init_choice[seat as usize][c as usize] = slot;
            st.init_cnt[seat as usize] = c + 1;
            if st.init_cnt[..n].iter().all(|&c| c == 2) {
                st.phase = Phase::InitialFlipPending;
            }
        }
        Ev::InitialRevealed { slots, vals, len } => {
            ensure(st.phase == Phase::InitialFlipPending, "initial flip")?;
            let (es, ev_, el) = initial_flip(st);
            ensure(
                el == len && es == slots && ev_ == vals,
                "initial flip cards",
            )?;
            for &s in &slots[..len as usize] {
                st.up |= 1u128 << s;
            }
            begin_turn(st, st.first);
        }
        Ev::Reshuffled { ref pile, len, top } => {
            ensure(
                st.phase == Phase::ChooseSource && st.draw_len == 0 && st.disc_len >= 2,
                "reshuffle",
            )?;
            ensure(
                len as usize == st.disc_len as usize - 1 && Some(top) == st.discard_top(),
                "reshuffle sizes",
            )?;
            let mut a = [0u16; 15];
            let mut b = [0u16; 15];
            for (&p, &d) in pile[..len as usize].iter().zip(&st.disc[..len as usize]) {
                ensure(hist_add(&mut a, p), "card value")?;
                hist_add(&mut b, d);
            }
            ensure(a == b, "reshuffle is not the discard pile")?;
            st.draw[..len as usize].copy_from_slice(&pile[..len as usize]);
            st.draw_len = len;
            st.disc[0] = top;
            st.disc_len = 1;
        }
        Ev::Drawn {
            seat,
            value,
            eligible,
        } => {
            ensure(
                st.phase == Phase::ChooseSource && seat == st.active && st.draw_len > 0,
                "draw",
            )?;
            ensure(st.draw[st.draw_len as usize - 1] == value, "drawn value")?;
            ensure(eligible == eligible_knockers(st), "knock eligibility")?;
            st.draw_len -= 1;
            st.x = value;
            st.eligible = eligible;
            st.phase = if eligible != 0 {
                Phase::KnockWindow
            } else {
                Phase::DecideDrawn
            };
        }
        Ev::TookDiscard { seat, value } => {
            ensure(
                st.phase == Phase::ChooseSource && seat == st.active,
                "take discard",
            )?;
            ensure(st.discard_top() == Some(value), "discard value")?;
            st.disc_len -= 1;
            st.x = value;
            st.phase = Phase::SwapDiscard;
        }
        Ev::KnockAnswered { seat, knock } => {
            ensure(
                st.phase == Phase::KnockWindow && (seat as usize) < n,
                "knock answer",
            )?;
            ensure(
                st.eligible >> seat & 1 == 1 && st.answered >> seat & 1 == 0,
                "knock answerer",
            )?;
            st.answered |= 1 << seat;
            if knock {
                st.knocked |= 1 << seat;
            }
            if st.answered == st.eligible {
                st.phase = Phase::KnockClosePending;
            }
        }
        Ev::KnockClosed { knockers } => {
            ensure(
                st.phase == Phase::KnockClosePending && knockers == st.knocked,
                "knock close",
            )?;
            st.knockers = knockers;
            st.phase = if knockers != 0 {
                Phase::KnockDecision
            } else {
                Phase::DecideDrawn
            };
        }
        Ev::Accepted { seat, knocker } => {
            ensure(
                st.phase == Phase::KnockDecision && seat == st.active,
                "accept",
            )?;
            ensure(
                (knocker as usize) < n && st.knockers >> knocker & 1 == 1,
                "accepted knocker",
            )?;
            st.knocker = knocker;
            st.phase = Phase::KnockerSwap;
        }
        Ev::Refused { seat } => {
            ensure(
                st.phase == Phase::KnockDecision && seat == st.active,
                "refuse",
            )?;
            st.phase = Phase::DecideDrawn;
        }
        Ev::Kept {
            seat,
            slot,
            placed,
            removed,
        } => {
            ensure(
                matches!(st.phase, Phase::DecideDrawn | Phase::SwapDiscard) && seat == st.active,
                "keep",
            )?;
            ensure(
                slot_ok(slot) && st.in_dom(seat, slot) && st.is_filled(slot),
                "keep slot",
            )?;
            ensure(
                placed == st.x && removed == st.val[slot as usize],
                "keep values",
            )?;
            st.w = st.take_slot(slot);
            st.place_up(slot, st.x);
            st.x = NO_CARD;
            open_triples(st, seat, Ctx::Keep);
        }
        Ev::DiscardedRevealed {
            seat,
            discarded,
            slot,
            revealed,
        } => {
            ensure(
                st.phase == Phase::DecideDrawn && seat == st.active,
                "discard and reveal",
            )?;
            ensure(
                slot_ok(slot) && st.in_dom(seat, slot) && st.is_filled(slot) && !st.is_up(slot),
                "reveal slot",
            )?;
            ensure(
                discarded == st.x && revealed == st.val[slot as usize],
                "reveal values",
            )?;
            st.push_discard(st.x)?;
            st.x = NO_CARD;
            st.up |= 1u128 << slot;
            open_triples(st, seat, Ctx::Reveal);
        }
        Ev::KnockerSwapped {
            knocker,
            slot,
            placed,
            removed,
            removed_up,
        } => {
            ensure(
                st.phase == Phase::KnockerSwap && knocker == st.knocker,
                "knocker swap",
            )?;
            ensure(
                slot_ok(slot) && st.in_dom(knocker, slot) && st.is_filled(slot),
                "knocker slot",
            )?;
            ensure(
                placed == st.x && removed == st.val[slot as usize] && removed_up == st.is_up(slot),
                "knocker values",
            )?;
            st.y_up = removed_up;
            st.y = st.take_slot(slot);
            st.place_up(slot, st.x);
            st.x = NO_CARD;
            open_triples(st, knocker, Ctx::Knocker);
        }
        Ev::Triple { seat, cells, value } => {
            ensure(st.phase == Phase::Triples && seat == st.tri_owner, "triple")?;
            let t = triples(st, seat);
            ensure(t.cells[..t.len].contains(&cells), "not a triple")?;
            ensure(st.val[cells[0] as usize] == value, "triple value")?;
            for c in cells {
                let v = st.take_slot(c);
                st.push_discard(v)?;
            }
        }
        Ev::TriplesEnded { seat, auto: _ } => {
            ensure(
                st.phase == Phase::Triples && seat == st.tri_owner,
                "end triples",
            )?;
            // `auto` only tells clients the engine closed the window; either way it closes.
            st.tri_owner = NONE;
            st.phase = match st.tri_ctx {
                Ctx::Keep | Ctx::Return => Phase::WDiscardPending,
                Ctx::Reveal => Phase::TurnEndPending,
                Ctx::Knocker => Phase::TakeFromKnocker,
            };
        }
        Ev::Taken {
            seat,
            knocker,
            slot,
            value,
        } => {
            ensure(
                st.phase == Phase::TakeFromKnocker && seat == st.active && knocker == st.knocker,
                "take",
            )?;
            ensure(
                slot_ok(slot) && take_targets(st) >> slot & 1 == 1,
                "take slot",
            )?;
            ensure(value == st.val[slot as usize], "take value")?;
            st.z = st.take_slot(slot);
            st.q = slot;
            st.phase = Phase::ReturnSwap;
        }
        Ev::Returned {
            seat,
            slot,
            placed,
            removed,
        } => {
            ensure(
                st.phase == Phase::ReturnSwap && seat == st.active,
                "return swap",
            )?;
            ensure(
                slot_ok(slot) && st.in_dom(seat, slot) && st.is_filled(slot),
                "return slot",
            )?;
            ensure(
                placed == st.z && removed == st.val[slot as usize],
                "return values",
            )?;
            st.w = st.take_slot(slot);
            st.place_up(slot, st.z);
            st.z = NO_CARD;
            open_triples(st, seat, Ctx::Return);
        }
        Ev::WDiscarded { seat, value } => {
            ensure(
                st.phase == Phase::WDiscardPending && seat == st.active && value == st.w,
                "exchanged card",
            )?;
            st.push_discard(value)?;
            st.w = NO_CARD;
            st.phase = if st.q != NONE {
                Phase::YPlacePending
            } else {
                Phase::TurnEndPending
            };
        }
        Ev::YPlaced {
            knocker,
            slot,
            value,
        } => {
            ensure(
                st.phase == Phase::YPlacePending && knocker == st.knocker,
                "held card placement",
            )?;
            ensure(
                slot == st.q && value == st.y && slot_ok(slot) && !st.is_filled(slot),
                "held card slot",
            )?;
            st.place_up(slot, value);
            st.y = NO_CARD;
            st.q = NONE;
            st.phase = Phase::TurnEndPending;
        }
        Ev::YDiscarded { knocker, value } => {
            ensure(
                st.phase == Phase::TakeFromKnocker
                    && knocker == st.knocker
                    && take_targets(st) == 0,
                "held discard",
            )?;
            ensure(value == st.y, "held value")?;
            st.push_discard(value)?;
            st.y = NO_CARD;
            st.phase = Phase::TurnEndPending;
        }
        Ev::EmptyPassed { seat } => {
            ensure(
                st.phase == Phase::PassEmptyPending && seat == st.active,
                "pass empty",
            )?;
            st.phase = Phase::TurnEndPending;
        }
        Ev::TurnEnded {
            seat,
            closed,
            round_over,
            next,
        } => {
            ensure(
                st.phase == Phase::TurnEndPending && seat == st.active,
                "turn end",
            )?;
            let (c, r, nx, closer, fin) = turn_end_result(st);
            ensure(
                c == closed && r == round_over && nx == next,
                "turn end flags",
            )?;
            st.closer = closer;
            st.final_taken = fin;
            st.turns += 1;
            if round_over {
                st.phase = Phase::RoundEndPending;
            } else if st.turns >= st.cfg.turn_cap {
                st.phase = Phase::AbortPending;
            } else {
                begin_turn(st, next);
            }
        }
        Ev::RoundScored(ref sc) => {
            ensure(st.phase == Phase::RoundEndPending, "scoring")?;
            ensure(**sc == score_round(st), "scores")?;
            st.up = st.filled;
            st.totals = sc.totals;
            st.last = sc.scores;
            st.winners = sc.winners;
            st.phase = if sc.over {
                Phase::Over
            } else if st.turns >= st.cfg.turn_cap {
                Phase::AbortPending
            } else {
                Phase::DealPending
            };
        }
        Ev::Aborted { turns } => {
            ensure(
                st.phase == Phase::AbortPending && turns == st.turns,
                "abort",
            )?;
            st.phase = Phase::Aborted;
        }
        Ev::Forfeited { seat, winners } => {
            ensure(
                (seat as usize) < st.n() && to_act_mask(st) >> seat & 1 == 1 && winners == forfeit_winners(st, seat),
                "forfeit",
            )?;
            // Cards in transit (X, W, Y, Z) go face up onto the discard pile, as at a turn's end.
            for v in [st.x, st.w, st.y, st.z] {
                if v != NO_CARD {
                    ensure((st.disc_len as usize) < DECK_SIZE, "forfeit discard")?;
                    st.disc[st.disc_len as usize] = v;
                    st.disc_len += 1;
                }
            }
            (st.x, st.w, st.y, st.z, st.q) = (NO_CARD, NO_CARD, NO_CARD, NO_CARD, NONE);
            st.winners = winners;
            st.forfeited = true;
            st.phase = Phase::Over;
        }
    }
    Ok(())
}

fn initial_flip(st: &State) -> ([u8; 16], [i8; 16], u8) {
    let mut slots = [0u8; 16];
    let mut vals = [0i8; 16];
    let mut len = 0usize;
    for i in 0..st.n() {
        let mut c = st.init_choice[i];
        c.sort_unstable();
        for s in c {
            if s != NONE && len < 16 {
                slots[len] = s;
                vals[len] = st.val[s as usize];
                len += 1;
            }
        }
    }
    (slots, vals, len as u8)
}

/// Seats whose decision is awaited, as a bit set.
pub fn to_act_mask(st: &State) -> u8 {
    match st.phase {
        Phase::InitialReveal => {
            let mut m = 0;
            for i in 0..st.n() {
                if st.init_cnt[i] < 2 {
                    m |= 1 << i;
                }
            }
            m
        }
        Phase::KnockWindow => st.eligible & !st.answered,
        Phase::ChooseSource
        | Phase::KnockDecision
        | Phase::DecideDrawn
        | Phase::SwapDiscard
        | Phase::TakeFromKnocker
        | Phase::ReturnSwap => 1 << st.active,
        Phase::KnockerSwap => 1 << st.knocker,
        Phase::Triples => 1 << st.tri_owner,
        _ => 0,
    }
}

fn emit(st: &mut State, evs: &mut Vec<Ev>, ev: Ev) -> CoreResult<()> {
    apply(st, &ev)?;
    evs.push(ev);
    Ok(())
}

fn deal_event(st: &State, rng: &mut Rng) -> Ev {
    let mut cards = [0i8; DECK_SIZE];
    let mut k = 0;
    for (v, c) in DECK {
        for _ in 0..c {
            cards[k] = v;
            k += 1;
        }
    }
    rng.shuffle(&mut cards);
    let n = st.n();
    let dealer = if st.round == 0 {
        rng.index(n) as u8
    } else {
        st.first
    };
    Ev::Dealt {
        round: st.round + 1,
        dealer,
        nblock: (12 * n) as u8,
        cards,
    }
}

/// Emits every automatic step until a decision is awaited (or the match is over).
pub fn auto_steps(st: &mut State, rng: &mut Rng, evs: &mut Vec<Ev>) -> CoreResult<()> {
    loop {
        let ev = match st.phase {
            Phase::DealPending => deal_event(st, rng),
            Phase::InitialFlipPending => {
                let (slots, vals, len) = initial_flip(st);
                Ev::InitialRevealed { slots, vals, len }
            }
            Phase::PassEmptyPending => Ev::EmptyPassed { seat: st.active },
            Phase::KnockClosePending => Ev::KnockClosed {
                knockers: st.knocked,
            },
            Phase::Triples => {
                if triples(st, st.tri_owner).len > 0 {
                    return Ok(());
                }
                Ev::TriplesEnded {
                    seat: st.tri_owner,
                    auto: true,
                }
            }
            Phase::TakeFromKnocker => {
                if take_targets(st) != 0 {
                    return Ok(());
                }
                Ev::YDiscarded {
                    knocker: st.knocker,
                    value: st.y,
                }
            }
            Phase::WDiscardPending => Ev::WDiscarded {
                seat: st.active,
                value: st.w,
            },
            Phase::YPlacePending => Ev::YPlaced {
                knocker: st.knocker,
                slot: st.q,
                value: st.y,
            },
            Phase::TurnEndPending => {
                let (closed, round_over, next, _, _) = turn_end_result(st);
                Ev::TurnEnded {
                    seat: st.active,
                    closed,
                    round_over,
                    next,
                }
            }
            Phase::RoundEndPending => Ev::RoundScored(Box::new(score_round(st))),
            Phase::AbortPending => Ev::Aborted { turns: st.turns },
            _ => return Ok(()),
        };
        emit(st, evs, ev)?;
    }
}

fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::InitialReveal => "the initial reveal",
        Phase::ChooseSource => "choosing where to draw from",
        Phase::KnockWindow => "the knock window",
        Phase::KnockDecision => "the decision on the knocks",
        Phase::DecideDrawn => "deciding what to do with the drawn card",
        Phase::SwapDiscard => "swapping in the card taken from the discard pile",
        Phase::KnockerSwap => "the knocker's swap",
        Phase::Triples => "the triples window",
        Phase::TakeFromKnocker => "taking a card from the knocker",
        Phase::ReturnSwap => "swapping in the card taken from the knocker",
        Phase::Over | Phase::Aborted => "the end of the match",
        _ => "an automatic step",
    }
}

fn wrong_phase(st: &State) -> CoreError {
    CoreError::rule(
        "WRONG_PHASE",
        format!(
            "that action is not possible during {}",
            phase_name(st.phase)
        ),
    )
}

fn need_slot_in(st: &State, owner: u8, s: u8, whose: &str) -> CoreResult<()> {
    if !st.in_dom(owner, s) {
        return Err(CoreError::rule(
            "NOT_IN_DOMAIN",
            format!("that slot is not one of {whose} 15 cards"),
        ));
    }
    if !st.is_filled(s) {
        return Err(CoreError::rule("EMPTY_SLOT", "that slot is empty"));
    }
    Ok(())
}

/// Validates `mv` by `seat` and emits its events plus every automatic follow-up into `evs`,
/// applying them to `st` as it goes.
pub fn act(st: &mut State, seat: u8, mv: Move, rng: &mut Rng, evs: &mut Vec<Ev>) -> CoreResult<()> {
    if matches!(st.phase, Phase::Over | Phase::Aborted) {
        return Err(CoreError::game_over());
    }
    if (seat as usize) >= st.n() {
        return Err(CoreError::malformed(format!(
            "seat {seat} is not in this {}-seat match",
            st.n()
        )));
    }
    if to_act_mask(st) >> seat & 1 == 0 {
        return Err(CoreError::not_your_turn());
    }
    let a = st.active;
    let ev = match (st.phase, mv) {
        (Phase::InitialReveal, Move::RevealInitial(s)) => {
            if s / 12 != seat {
                return Err(CoreError::rule(
                    "NOT_OWN_BLOCK",
                    "the initial reveal flips a card of your own block",
                ));
            }
            if st.is_up(s) || st.init_choice[seat as usize].contains(&s) {
                return Err(CoreError::rule(
                    "NOT_FACE_DOWN",
                    "choose a face-down card you have not chosen yet",
                ));
            }
            Ev::InitialChosen { seat, slot: s }
        }
        (Phase::ChooseSource, Move::Draw) => {
            if st.draw_len == 0 {
                if st.disc_len < 2 {
                    return Err(CoreError::rule(
                        "DRAW_PILE_EMPTY",
                        "the draw pile is empty and cannot be rebuilt",
                    ));
                }
                let len = st.disc_len - 1;
                let mut pile = [0i8; DECK_SIZE];
                pile[..len as usize].copy_from_slice(&st.disc[..len as usize]);
                rng.shuffle(&mut pile[..len as usize]);
                let top = st.disc[len as usize];
                emit(st, evs, Ev::Reshuffled { pile, len, top })?;
            }
            let value = st.draw[st.draw_len as usize - 1];
            Ev::Drawn {
                seat,
                value,
                eligible: eligible_knockers(st),
            }
        }
        (Phase::ChooseSource, Move::TakeDiscard) => match st.discard_top() {
            Some(value) => Ev::TookDiscard { seat, value },
            None => {
                return Err(CoreError::rule(
                    "DISCARD_EMPTY",
                    "the discard pile is empty",
                ))
            }
        },
        (Phase::KnockWindow, Move::Knock) => Ev::KnockAnswered { seat, knock: true },
        (Phase::KnockWindow, Move::PassKnock) => Ev::KnockAnswered { seat, knock: false },
        (Phase::KnockDecision, Move::Accept(k)) => {
            if (k as usize) >= st.n() {
                return Err(CoreError::malformed(format!(
                    "seat {k} is not in this match"
                )));
            }
            if st.knockers >> k & 1 == 0 {
                return Err(CoreError::rule(
                    "NOT_A_KNOCKER",
                    format!("seat {k} did not knock"),
                ));
            }
            Ev::Accepted { seat, knocker: k }
        }
        (Phase::KnockDecision, Move::Refuse) => Ev::Refused { seat },
        (Phase::DecideDrawn | Phase::SwapDiscard, Move::Keep(s)) => {
            need_slot_in(st, a, s, "your")?;
            Ev::Kept {
                seat,
                slot: s,
                placed: st.x,
                removed: st.val[s as usize],
            }
        }
        (Phase::SwapDiscard, Move::DiscardReveal(_)) => {
            return Err(CoreError::rule(
                "MUST_SWAP",
                "a card taken from the discard pile must be swapped in",
            ))
        }
        (Phase::DecideDrawn, Move::DiscardReveal(s)) => {
            need_slot_in(st, a, s, "your")?;
            if st.is_up(s) {
                return Err(CoreError::rule(
                    "NOT_FACE_DOWN",
                    "discard_and_reveal must flip a face-down card",
                ));
            }
            Ev::DiscardedRevealed {
                seat,
                discarded: st.x,
                slot: s,
                revealed: st.val[s as usize],
            }
        }
        (Phase::KnockerSwap, Move::KnockerSwap(s)) => {
            need_slot_in(st, seat, s, "your")?;
            Ev::KnockerSwapped {
                knocker: seat,
                slot: s,
                placed: st.x,
                removed: st.val[s as usize],
                removed_up: st.is_up(s),
            }
        }
        (Phase::Triples, Move::Triple(cells)) => {
            let mut want = cells;
            want.sort_unstable();
            let t = triples(st, seat);
            let found = t.cells[..t.len].iter().find(|c| {
                let mut c = **c;
                c.sort_unstable();
                c == want
            });
            match found {
                Some(&c) => Ev::Triple { seat, cells: c, value: st.val[c[0] as usize] },
                None => {
                    return Err(CoreError::rule(
                        "NOT_A_TRIPLE",
                        "those cells are not three identical face-up cards next to each other in a row or column of your domain",
                    ))
                }
            }
        }
        (Phase::Triples, Move::BadTriple) => {
            return Err(CoreError::rule(
                "NOT_A_TRIPLE",
                "a triple is exactly three different cells",
            ))
        }
        (Phase::Triples, Move::EndTriples) => Ev::TriplesEnded { seat, auto: false },
        (Phase::TakeFromKnocker, Move::Take(s)) => {
            need_slot_in(st, st.knocker, s, "the knocker's")?;
            if st.in_dom(a, s) {
                return Err(CoreError::rule(
                    "IN_OWN_DOMAIN",
                    "that card is also one of your own 15 cards",
                ));
            }
            Ev::Taken {
                seat,
                knocker: st.knocker,
                slot: s,
                value: st.val[s as usize],
            }
        }
        (Phase::ReturnSwap, Move::Return(s)) => {
            need_slot_in(st, a, s, "your")?;
            Ev::Returned {
                seat,
                slot: s,
                placed: st.z,
                removed: st.val[s as usize],
            }
        }
        _ => return Err(wrong_phase(st)),
    };
    emit(st, evs, ev)?;
    auto_steps(st, rng, evs)
}

/// Every legal move of `seat`, in a deterministic order (domain cells row by row, d0..d4).
pub fn legal_moves(st: &State, seat: u8, out: &mut Vec<Move>) {
    out.clear();
    if (seat as usize) >= st.n() || to_act_mask(st) >> seat & 1 == 0 {
        return;
    }
    let dom = st.cfg.dom[st.active as usize];
    match st.phase {
        Phase::InitialReveal => {
            for s in seat * 12..seat * 12 + 12 {
                if st.is_filled(s) && !st.is_up(s) && !st.init_choice[seat as usize].contains(&s) {
                    out.push(Move::RevealInitial(s));
                }
            }
        }
        Phase::ChooseSource => {
            if st.draw_len > 0 || st.disc_len >= 2 {
                out.push(Move::Draw);
            }
            if st.disc_len > 0 {
                out.push(Move::TakeDiscard);
            }
        }
        Phase::KnockWindow => {
            out.push(Move::Knock);
            out.push(Move::PassKnock);
        }
        Phase::KnockDecision => {
            for k in 0..st.n() as u8 {
                if st.knockers >> k & 1 == 1 {
                    out.push(Move::Accept(k));
                }
            }
            out.push(Move::Refuse);
        }
        Phase::DecideDrawn | Phase::SwapDiscard => {
            for &s in &dom {
                if st.is_filled(s) {
                    out.push(Move::Keep(s));
                }
            }
            if st.phase == Phase::DecideDrawn {
                for &s in &dom {
                    if st.is_filled(s) && !st.is_up(s) {
                        out.push(Move::DiscardReveal(s));
                    }
                }
            }
        }
        Phase::KnockerSwap => {
            for &s in &st.cfg.dom[seat as usize] {
                if st.is_filled(s) {
                    out.push(Move::KnockerSwap(s));
                }
            }
        }
        Phase::Triples => {
            let t = triples(st, seat);
            for c in &t.cells[..t.len] {
                out.push(Move::Triple(*c));
            }
            out.push(Move::EndTriples);
        }
        Phase::TakeFromKnocker => {
            let m = take_targets(st);
            for &s in &st.cfg.dom[st.knocker as usize] {
                if m >> s & 1 == 1 {
                    out.push(Move::Take(s));
                }
            }
        }
        Phase::ReturnSwap => {
            for &s in &dom {
                if st.is_filled(s) {
                    out.push(Move::Return(s));
                }
            }
        }
        _ => {}
    }
}

// ------------------------------------------------------------------------------------------
// Match clocks

/// The timeout policy `default_move` (match clocks, docs/rules/grid_knock.md §11).
const TIMEOUT_DEFAULT_MOVE: &str = "default_move";
/// The timeout policy `forfeit`: the match ends, the timed-out seat losing (§11).
const TIMEOUT_FORFEIT: &str = "forfeit";

/// The winners (a seat mask) when `seat` forfeits (§11): the lowest total (§6.4) among the
/// other seats; ties share the win.
fn forfeit_winners(st: &State, seat: u8) -> u8 {
    let others = (0..st.n() as u8).filter(|&s| s != seat);
    let best = others.clone().map(|s| st.totals[s as usize]).min().unwrap_or(0);
    others.filter(|&s| st.totals[s as usize] == best).fold(0, |m, s| m | 1 << s)
}

/// The default move of `seat` now (§11), from its legal moves: the one that commits it the
/// least. In a knock window `pass_knock` (a timeout is a pass, AMB32, as the seed says);
/// `refuse_knocks` (A keeps X); `draw_from_pile` rather than taking the discard; with X drawn,
/// `discard_and_reveal` of its first face-down slot (X is discarded, §4.2), else a swap;
/// `end_triples` (leaving triples is always allowed, R6); where the rules force a slot (the
/// initial reveal, a swap, taking from the knocker), the first one listed.
fn default_move(st: &State, seat: u8) -> Option<Move> {
    let mut moves = Vec::new();
    legal_moves(st, seat, &mut moves);
    let rank = |m: &Move| match m {
        Move::PassKnock => 0,
        Move::Refuse => 0,
        Move::EndTriples => 0,
        Move::Draw => 0,
        Move::DiscardReveal(_) => 1,
        Move::Knock | Move::Accept(_) | Move::TakeDiscard | Move::Triple(_) | Move::BadTriple => 3,
        _ => 2,
    };
    moves.iter().enumerate().min_by_key(|&(i, m)| (rank(m), i)).map(|(_, &m)| m)
}

/// A timed-out seat's default moves (§11): one after the other while it is awaited within the
/// same turn (or the same initial reveal), so one timeout answers for the seat until others
/// are awaited (a knock window it opened by drawing) or its turn ends.
fn timeout_default_move(st: &State, seat: Seat, policy: &str, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
    if policy != TIMEOUT_DEFAULT_MOVE && policy != TIMEOUT_FORFEIT {
        return Err(CoreError::Unsupported(format!("grid_knock has no timeout policy {policy:?}")));
    }
    if seat as usize >= st.n() || to_act_mask(st) >> seat & 1 == 0 {
        return Err(CoreError::not_your_turn());
    }
    if policy == TIMEOUT_FORFEIT {
        let seat = seat as u8;
        return Ok(vec![ev_to_pb(&Ev::Forfeited { seat, winners: forfeit_winners(st, seat) })]);
    }
    let (turns, reveal) = (st.turns, st.phase == Phase::InitialReveal);
    let mut state = st.clone();
    let mut events = Vec::new();
    // A turn is a handful of steps; the bound only guards against a rules bug looping.
    for _ in 0..32 {
        let Some(mv) = default_move(&state, seat as u8) else { break };
        GridKnock::play(&mut state, seat, &to_action(mv), rng, &mut events)?;
        let awaited = to_act_mask(&state) >> seat & 1 == 1;
        if !awaited || state.turns != turns || (state.phase == Phase::InitialReveal) != reveal {
            break;
        }
    }
    Ok(events)
}

// ------------------------------------------------------------------------------------------
// Protobuf boundary

fn pslot(s: u8) -> pb::Slot {
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

pub fn to_move(action: &pb::Action, n: usize) -> CoreResult<Move> {
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

pub fn to_action(mv: Move) -> pb::Action {
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

fn mask_list(m: u8) -> Vec<u32> {
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

pub fn ev_to_pb(ev: &Ev) -> pb::Event {
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

pub fn pb_to_ev(e: &pb::Event) -> CoreResult<Ev> {
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

// ------------------------------------------------------------------------------------------
// Views, redaction, rendering

fn pb_phase(p: Phase) -> pb::Phase {
    match p {
        Phase::InitialReveal => pb::Phase::InitialReveal,
        Phase::ChooseSource => pb::Phase::ChooseSource,
        Phase::KnockWindow => pb::Phase::KnockWindow,
        Phase::KnockDecision => pb::Phase::KnockDecision,
        Phase::DecideDrawn => pb::Phase::DecideDrawn,
        Phase::SwapDiscard => pb::Phase::SwapDiscardCard,
        Phase::KnockerSwap => pb::Phase::KnockerSwap,
        Phase::Triples => pb::Phase::Triples,
        Phase::TakeFromKnocker => pb::Phase::TakeFromKnocker,
        Phase::ReturnSwap => pb::Phase::ReturnSwap,
        Phase::Over => pb::Phase::MatchOver,
        Phase::Aborted => pb::Phase::Aborted,
        _ => pb::Phase::Automatic,
    }
}

fn opt_card(v: i8) -> Option<i32> {
    (v != NO_CARD).then_some(v as i32)
}

fn opt_seat(s: u8) -> Option<u32> {
    (s != NONE).then_some(s as u32)
}

pub fn build_view(st: &State, viewer: Viewer) -> pb::View {
    let n = st.n();
    let auditor = viewer == Viewer::Auditor;
    let me = match viewer {
        Viewer::Seat(s) if (s as usize) < n => Some(s as u8),
        _ => None,
    };
    let slots = (0..(12 * n) as u8)
        .map(|s| {
            if s == st.q {
                pb::SlotView {
                    state: pb::SlotState::Reserved as i32,
                    value: None,
                }
            } else if !st.is_filled(s) {
                pb::SlotView {
                    state: pb::SlotState::Empty as i32,
                    value: None,
                }
            } else if st.is_up(s) {
                pb::SlotView {
                    state: pb::SlotState::FaceUp as i32,
                    value: Some(st.val[s as usize] as i32),
                }
            } else {
                pb::SlotView {
                    state: pb::SlotState::FaceDown as i32,
                    value: auditor.then_some(st.val[s as usize] as i32),
                }
            }
        })
        .collect();
    let own_answer = match me {
        Some(s) if st.answered >> s & 1 == 1 => {
            if st.knocked >> s & 1 == 1 {
                pb::KnockAnswer::Knock
            } else {
                pb::KnockAnswer::Pass
            }
        }
        _ => pb::KnockAnswer::Unspecified,
    };
    let y_visible = st.y != NO_CARD && (auditor || st.y_up || me == Some(st.knocker));
    let choices = |i: usize| -> Vec<pb::Slot> {
        st.init_choice[i][..st.init_cnt[i].min(2) as usize]
            .iter()
            .map(|&s| pslot(s))
            .collect()
    };
    let init_phase = st.phase == Phase::InitialReveal;
    pb::View {
        seats: n as u32,
        viewer: Some(viewer.to_proto()),
        phase: pb_phase(st.phase) as i32,
        active: st.active as u32,
        to_act: mask_list(to_act_mask(st)),
        round: st.round,
        dealer: st.dealer as u32,
        first_player: st.first as u32,
        slots,
        draw_pile_size: st.draw_len as u32,
        discard_pile: st.disc[..st.disc_len as usize]
            .iter()
            .map(|&v| v as i32)
            .collect(),
        drawn_card: opt_card(st.x),
        knock_eligible: mask_list(st.eligible),
        knock_answered: mask_list(st.answered),
        own_knock_answer: own_answer as i32,
        knockers: mask_list(st.knockers),
        knocker: opt_seat(st.knocker),
        knocker_holds_card: st.y != NO_CARD,
        held_card: if y_visible { opt_card(st.y) } else { None },
        taken_card: opt_card(st.z),
        reserved_slot: (st.q != NONE).then(|| pslot(st.q)),
        exchanged_card: opt_card(st.w),
        triples_owner: opt_seat(st.tri_owner),
        own_initial_choices: match me {
            Some(s) if init_phase => choices(s as usize),
            _ => vec![],
        },
        initial_done: if init_phase {
            mask_list(((0..n).filter(|&i| st.init_cnt[i] >= 2)).fold(0u8, |m, i| m | 1 << i))
        } else {
            vec![]
        },
        closer: opt_seat(st.closer),
        final_turn_taken: mask_list(st.final_taken),
        totals: st.totals[..n].iter().map(|&v| v as i64).collect(),
        last_round_scores: st.last[..n].iter().map(|&v| v as i64).collect(),
        turns: st.turns,
        draw_pile: if auditor {
            st.draw[..st.draw_len as usize]
                .iter()
                .map(|&v| v as i32)
                .collect()
        } else {
            vec![]
        },
        all_initial_choices: if auditor && init_phase {
            (0..n).flat_map(choices).collect()
        } else {
            vec![]
        },
        knocked: if auditor {
            mask_list(st.knocked)
        } else {
            vec![]
        },
        target_score: st.cfg.target_score as i64,
        winners: mask_list(st.winners),
        held_card_was_face_up: st.y != NO_CARD && st.y_up,
    }
}

pub fn redact_event(e: &pb::Event, viewer: Viewer) -> pb::Event {
    use pb::event::Kind as K;
    let mut e = e.clone();
    if viewer == Viewer::Auditor {
        return e;
    }
    match &mut e.kind {
        Some(K::Dealt(d)) => {
            d.blocks.clear();
            d.draw_pile.clear();
        }
        Some(K::Reshuffled(r)) => r.draw_pile.clear(),
        Some(K::InitialChosen(c)) if !viewer.is_seat(c.seat) => c.slot = None,
        Some(K::KnockAnswered(k)) if !viewer.is_seat(k.seat) => {
            k.answer = pb::KnockAnswer::Sealed as i32
        }
        Some(K::KnockerSwapped(k)) if !k.removed_was_face_up && !viewer.is_seat(k.knocker) => {
            k.removed = None
        }
        _ => {}
    }
    e
}

pub fn render_state(st: &State, viewer: Viewer) -> String {
    use std::fmt::Write;
    let v = build_view(st, viewer);
    let n = st.n();
    let mut out = String::new();
    let who = match viewer {
        Viewer::Seat(s) => format!("seat {s}"),
        Viewer::Spectator => "spectator".into(),
        Viewer::Auditor => "auditor".into(),
    };
    let _ = writeln!(
        out,
        "Grid Knock | round {} | {} | active P{} | to act {:?} | view: {who}",
        st.round,
        phase_name(st.phase),
        st.active,
        v.to_act
    );
    let top = st.discard_top().map_or("--".to_string(), |t| t.to_string());
    let _ = write!(
        out,
        "draw pile {} | discard top {top} ({} cards)",
        st.draw_len, st.disc_len
    );
    if let Some(x) = v.drawn_card {
        let _ = write!(out, " | in hand X={x}");
    }
    if let Some(k) = v.knocker {
        let _ = write!(out, " | knocker P{k}");
        if v.knocker_holds_card {
            let _ = write!(
                out,
                " holds Y={}",
                v.held_card.map_or("?".to_string(), |y| y.to_string())
            );
        }
    }
    if let Some(z) = v.taken_card {
        let _ = write!(out, " | taken Z={z}");
    }
    if let Some(w) = v.exchanged_card {
        let _ = write!(out, " | exchanged W={w}");
    }
    if !v.knockers.is_empty() {
        let _ = write!(out, " | knockers {:?}", v.knockers);
    }
    if let Some(c) = v.closer {
        let _ = write!(out, " | closer P{c}");
    }
    out.push('\n');
    // The ring, left to right: P(N-1) .. P0 (each block's col 4 touches the next block's col 1).
    let _ = write!(out, "      ");
    for i in (0..n).rev() {
        let _ = write!(out, "|P{i:<15}");
    }
    out.push_str("|\n");
    for r in 0..3 {
        let _ = write!(out, "row {} ", r + 1);
        for i in (0..n).rev() {
            out.push('|');
            for c in 0..4 {
                let s = i * 12 + r * 4 + c;
                let sv = &v.slots[s];
                let cell = match pb::SlotState::try_from(sv.state) {
                    Ok(pb::SlotState::FaceUp) => format!("{:>4}", sv.value.unwrap_or(0)),
                    Ok(pb::SlotState::FaceDown) => match sv.value {
                        Some(x) => format!("{:>4}", format!("?{x}")),
                        None => "   ?".into(),
                    },
                    Ok(pb::SlotState::Reserved) => "   *".into(),
                    _ => "   .".into(),
                };
                out.push_str(&cell);
            }
        }
        out.push_str("|\n");
    }
    let _ = writeln!(
        out,
        "totals {:?} | last round {:?} | turns {}",
        v.totals, v.last_round_scores, st.turns
    );
    out
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

fn greedy(st: &State, seat: u8, legal: &[Move], rng: &mut Rng) -> Move {
    let a = st.active;
    let fallback = legal[rng.index(legal.len())];
    match st.phase {
        Phase::ChooseSource => {
            let can_draw = legal.contains(&Move::Draw);
            match st.discard_top() {
                Some(t) if !can_draw || best_keep(st, a, t).0 >= 4.0 => Move::TakeDiscard,
                _ if can_draw => Move::Draw,
                _ => fallback,
            }
        }
        Phase::KnockWindow => {
            if best_keep(st, seat, st.x).0 >= 6.0 {
                Move::Knock
            } else {
                Move::PassKnock
            }
        }
        Phase::KnockDecision => {
            let gx = best_keep(st, a, st.x).0.max(if st.face_down_in(a) != 0 {
                1.0
            } else {
                f32::MIN
            });
            let mut best = (gx + 1.0, Move::Refuse);
            for k in 0..st.n() as u8 {
                if st.knockers >> k & 1 == 0 {
                    continue;
                }
                let cand = st.filled & st.cfg.dom_mask[k as usize] & !st.cfg.dom_mask[a as usize];
                for &q in &st.cfg.dom[k as usize] {
                    if cand >> q & 1 == 1 && st.is_up(q) {
                        let g = best_keep(st, a, st.val[q as usize]).0;
                        if g > best.0 {
                            best = (g, Move::Accept(k));
                        }
                    }
                }
            }
            best.1
        }
        Phase::DecideDrawn | Phase::SwapDiscard => {
            let (g, s) = best_keep(st, a, st.x);
            let down = st.face_down_in(a);
            if st.phase == Phase::SwapDiscard || g >= 2.0 || down == 0 {
                if s != NONE {
                    return Move::Keep(s);
                }
                return fallback;
            }
            // Flip a face-down card, preferring the own block over the borrowed column.
            let own = down & !st.cfg.dom_mask[(a as usize + 1) % st.n()];
            let pick = if own != 0 { own } else { down };
            Move::DiscardReveal(pick.trailing_zeros() as u8)
        }
        Phase::KnockerSwap => {
            let (_, s) = best_keep(st, seat, st.x);
            if s != NONE {
                Move::KnockerSwap(s)
            } else {
                fallback
            }
        }
        Phase::Triples => {
            let t = triples(st, seat);
            match t.cells[..t.len].iter().find(|c| st.val[c[0] as usize] > 0) {
                Some(c) => Move::Triple(*c),
                None => Move::EndTriples,
            }
        }
        Phase::TakeFromKnocker => {
            let mut best = (f32::MAX, fallback);
            for m in legal {
                if let Move::Take(q) = *m {
                    let k = known(st, q);
                    if k < best.0 {
                        best = (k, *m);
                    }
                }
            }
            best.1
        }
        Phase::ReturnSwap => {
            let (_, s) = best_keep(st, a, st.z);
            if s != NONE {
                Move::Return(s)
            } else {
                fallback
            }
        }
        _ => fallback,
    }
}

// ------------------------------------------------------------------------------------------
// Invariants

pub fn invariants(st: &State) -> Result<(), String> {
    let n = st.n();
    if !(2..=8).contains(&n) {
        return Err(format!("seat count {n}"));
    }
    if st.phase == Phase::DealPending && st.round == 0 {
        return Ok(());
    }
    let range = if n == 8 {
        u128::MAX >> 32
    } else {
        (1u128 << (12 * n)) - 1
    };
    if st.filled & !range != 0 || st.up & !st.filled != 0 {
        return Err("slot sets out of range or face-up empty slot".into());
    }
    let mut h = [0u16; 15];
    let mut count = 0usize;
    for s in 0..(12 * n) as u8 {
        let filled = st.is_filled(s);
        if filled != (st.val[s as usize] != NO_CARD) {
            return Err(format!("slot {s} value/filled mismatch"));
        }
        if filled {
            if !hist_add(&mut h, st.val[s as usize]) {
                return Err(format!("slot {s} bad value"));
            }
            count += 1;
        }
    }
    for &v in st.draw[..st.draw_len as usize]
        .iter()
        .chain(&st.disc[..st.disc_len as usize])
    {
        if !hist_add(&mut h, v) {
            return Err("pile card value".into());
        }
        count += 1;
    }
    for v in [st.x, st.y, st.z, st.w] {
        if v != NO_CARD {
            if !hist_add(&mut h, v) {
                return Err("card in transit value".into());
            }
            count += 1;
        }
    }
    if count != DECK_SIZE || h != deck_histogram() {
        return Err(format!("cards not conserved: {count} cards"));
    }
    let holds_x = matches!(
        st.phase,
        Phase::KnockWindow
            | Phase::KnockClosePending
            | Phase::KnockDecision
            | Phase::DecideDrawn
            | Phase::SwapDiscard
            | Phase::KnockerSwap
    );
    if holds_x != (st.x != NO_CARD) {
        return Err(format!(
            "drawn card present={} in phase {:?}",
            st.x != NO_CARD,
            st.phase
        ));
    }
    if st.q != NONE && (st.is_filled(st.q) || st.y == NO_CARD) {
        return Err("reserved slot filled or Y missing".into());
    }
    if st.closer == NONE && st.final_taken != 0 {
        return Err("final turns without a closer".into());
    }
    if st.closer != NONE && st.final_taken >> st.closer & 1 == 0 {
        return Err("closer has not taken his final turn".into());
    }
    if st.phase == Phase::Triples && (st.tri_owner as usize) >= n {
        return Err("triples window without owner".into());
    }
    if matches!(
        st.phase,
        Phase::KnockerSwap | Phase::TakeFromKnocker | Phase::ReturnSwap
    ) && (st.knocker as usize) >= n
    {
        return Err("knock path without knocker".into());
    }
    if (st.eligible | st.answered | st.knocked) >> st.active & 1 == 1
        || st.answered & !st.eligible != 0
    {
        return Err("knock sets inconsistent".into());
    }
    let rounds = st.round.max(1) as i32;
    for i in 0..n {
        if !(-20..=360).contains(&st.last[i]) {
            return Err(format!("round score {} out of bounds", st.last[i]));
        }
        if st.totals[i] < -20 * rounds || st.totals[i] > 360 * rounds {
            return Err(format!("total {} out of bounds", st.totals[i]));
        }
    }
    if (st.active as usize) >= n {
        return Err("active seat".into());
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------
// The Game impl

impl Game for GridKnock {
    type Config = Config;
    type State = State;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const ID: &'static str = "grid_knock";
    const NAME: &'static str = "Grid Knock";
    const PROTO_PACKAGE: &'static str = "tablier.grid_knock.v1";
    const MIN_PLAYERS: u32 = 2;
    const MAX_PLAYERS: u32 = 8;
    const BOTS: &'static [&'static str] = &["random", "greedy"];
    const HOST_COMMANDS: &'static [&'static str] = &["close_knock_window"];

    fn options() -> Vec<OptionSpec> {
        vec![
            OptionSpec::int(
                "target_score",
                100,
                1,
                1000,
                "the match ends after the round in which a total reaches this (1 to 1000)",
            ),
            OptionSpec::choice(
                "closer_penalty",
                &["double", "none"],
                "double",
                "double: the closer's positive round score is doubled unless strictly lowest; none: no penalty",
            ),
            OptionSpec::choice(
                "knocking",
                &["on", "off"],
                "on",
                "on: knock windows after a draw from the pile (never with 2 players); off: no knocking",
            ),
            OptionSpec::int(
                "turn_cap",
                3000,
                10,
                100_000,
                "administrative cap: the match is aborted after this many turns (10 to 100000)",
            ),
            OptionSpec::int(
                "knock_timeout",
                60,
                0,
                86_400,
                "seconds a knock window stays open before the server closes it; every seat that \
                 has not answered passes (0 to 86400; 0: only the host closes it)",
            ),
        ]
    }

    fn configure(seats: u32, options: &OptionValues) -> CoreResult<Config> {
        Ok(Config::new(seats as u8, options))
    }

    fn initial(config: &Config) -> State {
        State {
            cfg: config.clone(),
            val: [NO_CARD; 96],
            filled: 0,
            up: 0,
            draw: [0; DECK_SIZE],
            draw_len: 0,
            disc: [0; DECK_SIZE],
            disc_len: 0,
            phase: Phase::DealPending,
            round: 0,
            dealer: 0,
            first: 0,
            active: 0,
            closer: NONE,
            final_taken: 0,
            init_choice: [[NONE; 2]; 8],
            init_cnt: [0; 8],
            x: NO_CARD,
            eligible: 0,
            answered: 0,
            knocked: 0,
            knockers: 0,
            knocker: NONE,
            y: NO_CARD,
            y_up: false,
            z: NO_CARD,
            q: NONE,
            w: NO_CARD,
            tri_owner: NONE,
            tri_ctx: Ctx::Keep,
            totals: [0; 8],
            last: [0; 8],
            turns: 0,
            winners: 0,
            forfeited: false,
        }
    }

    fn start(state: &State, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        if state.phase != Phase::DealPending || state.round != 0 {
            return Err(CoreError::rule(
                "ALREADY_STARTED",
                "the match has already started",
            ));
        }
        let mut st = state.clone();
        let mut evs = Vec::new();
        auto_steps(&mut st, rng, &mut evs)?;
        Ok(evs.iter().map(ev_to_pb).collect())
    }

    /// An open knock window's timeout (AMB32); the key tells one turn's window from the next.
    fn timer(state: &State) -> Option<Timer> {
        (state.phase == Phase::KnockWindow && state.cfg.knock_timeout > 0).then(|| Timer {
            command: "close_knock_window",
            seconds: state.cfg.knock_timeout,
            key: (state.round as u64) << 32 | state.turns as u64,
        })
    }

    /// `close_knock_window` (AMB32): every seat still to answer passes.
    fn host_command(state: &State, command: &str, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        debug_assert_eq!(command, "close_knock_window");
        if state.phase != Phase::KnockWindow {
            return Err(CoreError::rule("NO_KNOCK_WINDOW", "no knock window is open"));
        }
        let mut st = state.clone();
        let mut evs = Vec::with_capacity(12);
        let mut waiting = st.eligible & !st.answered;
        while waiting != 0 {
            let seat = waiting.trailing_zeros() as u8;
            waiting &= waiting - 1;
            emit(&mut st, &mut evs, Ev::KnockAnswered { seat, knock: false })?;
        }
        auto_steps(&mut st, rng, &mut evs)?;
        Ok(evs.iter().map(ev_to_pb).collect())
    }

    fn decide(
        state: &State,
        seat: Seat,
        action: &pb::Action,
        rng: &mut Rng,
    ) -> CoreResult<Vec<pb::Event>> {
        let mv = to_move(action, state.n())?;
        let mut st = state.clone();
        let mut evs = Vec::with_capacity(8);
        act(&mut st, seat as u8, mv, rng, &mut evs)?;
        Ok(evs.iter().map(ev_to_pb).collect())
    }

    fn evolve(state: &mut State, event: &pb::Event) -> CoreResult<()> {
        let ev = pb_to_ev(event)?;
        apply(state, &ev)
    }

    fn to_act(state: &State) -> Seats {
        Seats::from_mask(to_act_mask(state) as u32)
    }

    fn legal_actions_into(state: &State, seat: Seat, out: &mut Vec<pb::Action>) {
        if seat as usize >= state.n() {
            return;
        }
        let mut moves = Vec::new();
        legal_moves(state, seat as u8, &mut moves);
        out.extend(moves.into_iter().map(to_action));
    }

    fn view(state: &State, viewer: Viewer) -> pb::View {
        build_view(state, viewer)
    }

    fn redact(event: &pb::Event, viewer: Viewer) -> Option<pb::Event> {
        Some(redact_event(event, viewer))
    }

    fn event_type(event: &pb::Event) -> &'static str {
        use pb::event::Kind as K;
        match &event.kind {
            None => "unknown",
            Some(K::Dealt(_)) => "dealt",
            Some(K::InitialChosen(_)) => "initial_chosen",
            Some(K::InitialRevealed(_)) => "initial_revealed",
            Some(K::Reshuffled(_)) => "reshuffled",
            Some(K::Drawn(_)) => "drawn",
            Some(K::TookDiscard(_)) => "took_discard",
            Some(K::KnockAnswered(_)) => "knock_answered",
            Some(K::KnockWindowClosed(_)) => "knock_window_closed",
            Some(K::KnockAccepted(_)) => "knock_accepted",
            Some(K::KnocksRefused(_)) => "knocks_refused",
            Some(K::Kept(_)) => "kept",
            Some(K::DiscardedAndRevealed(_)) => "discarded_and_revealed",
            Some(K::KnockerSwapped(_)) => "knocker_swapped",
            Some(K::TripleDiscarded(_)) => "triple_discarded",
            Some(K::TriplesEnded(_)) => "triples_ended",
            Some(K::TookFromKnocker(_)) => "took_from_knocker",
            Some(K::ReturnSwapped(_)) => "return_swapped",
            Some(K::ExchangedCardDiscarded(_)) => "exchanged_card_discarded",
            Some(K::HeldCardPlaced(_)) => "held_card_placed",
            Some(K::HeldCardDiscarded(_)) => "held_card_discarded",
            Some(K::EmptyPassed(_)) => "empty_passed",
            Some(K::TurnEnded(_)) => "turn_ended",
            Some(K::RoundScored(_)) => "round_scored",
            Some(K::MatchAborted(_)) => "match_aborted",
            Some(K::Forfeited(_)) => "forfeited",
        }
    }

    fn outcome(state: &State) -> Option<Outcome> {
        let n = state.n();
        let scores: Vec<i64> = state.totals[..n].iter().map(|&v| v as i64).collect();
        match state.phase {
            Phase::Over => Some(Outcome {
                scores,
                winners: mask_list(state.winners),
                reason: if state.forfeited { "FORFEIT" } else { "TARGET_SCORE_REACHED" }.into(),
                lower_is_better: true,
                aborted: false,
            }),
            Phase::Aborted => Some(Outcome {
                scores,
                winners: vec![],
                reason: "TURN_CAP".into(),
                lower_is_better: true,
                aborted: true,
            }),
            _ => None,
        }
    }

    /// Match clocks (§11): a timed-out seat makes the default move of its phase.
    const TIMEOUT_POLICIES: &'static [&'static str] = &[TIMEOUT_DEFAULT_MOVE, TIMEOUT_FORFEIT];
    const TIMEOUT_HELP: &'static str = "default_move: the seat makes the default move of each step it is awaited \
        for alone, until others are awaited or its turn ends: pass_knock in a knock window (as when the window \
        times out), refuse_knocks, draw_from_pile, discard_and_reveal of its first face-down slot, end_triples; \
        where the rules force a choice (the initial reveal, a swap), the first slot of its domain. forfeit: the \
        seat forfeits: the match ends at once (a forfeited event, reason FORFEIT) and the lowest total among the \
        other seats wins, ties share; the round in progress is not scored.";

    fn timeout_events(state: &State, seat: Seat, policy: &str, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        timeout_default_move(state, seat, policy, rng)
    }

    fn bot_action(state: &State, seat: Seat, bot: &str, rng: &mut Rng) -> CoreResult<pb::Action> {
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

    fn render(state: &State, viewer: Viewer) -> String {
        render_state(state, viewer)
    }

    fn check_invariants(state: &State) -> Result<(), String> {
        invariants(state)
    }
}
