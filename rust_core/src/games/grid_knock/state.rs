//! Cards and constants, the configuration and its options, and the match state.

use crate::error::{CoreError, CoreResult};
use crate::game::{OptionSpec, OptionValues};

pub(super) const NONE: u8 = u8::MAX;
pub(super) const NO_CARD: i8 = i8::MIN;
/// The deck: (card value, copies); 150 cards.
pub(super) const DECK: [(i8, u8); 15] = [
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
pub(super) const DECK_SIZE: usize = 150;

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub(super) seats: u8,
    pub(super) target_score: i32,
    pub(super) closer_penalty: bool,
    pub(super) knocking: bool,
    pub(super) turn_cap: u32,
    /// Seconds a knock window waits before the server closes it (AMB32); 0: no timer.
    pub(super) knock_timeout: u32,
    /// `dom[i][r * 5 + d]`: slot of domain cell (r, d) of seat i.
    pub(super) dom: [[u8; 15]; 8],
    pub(super) dom_mask: [u128; 8],
}

/// The options of a match (AMB12, AMB13, AMB28, AMB30, AMB32).
pub(super) fn options() -> Vec<OptionSpec> {
    vec![
        OptionSpec::int(
            "target_score",
            100,
            1,
            1000,
            "The match ends after the round in which someone's total reaches this score; the lowest total wins (1 to 1000). Default: 100.",
        ),
        OptionSpec::choice(
            "closer_penalty",
            &["double", "none"],
            "double",
            "double: the player who turns up all their cards first has their round score doubled unless it is the lowest; none: no penalty. Default: double.",
        ),
        OptionSpec::choice(
            "knocking",
            &["on", "off"],
            "on",
            "on: after a draw from the pile the other players may knock to trade a card (not with 2 players); off: nobody knocks. Default: on.",
        ),
        OptionSpec::int(
            "turn_cap",
            3000,
            10,
            100_000,
            "Safety limit: the match is stopped after this many turns, with no winner (10 to 100000). Default: 3000.",
        ),
        OptionSpec::int(
            "knock_timeout",
            60,
            0,
            86_400,
            "Seconds the other players have to decide whether to knock; whoever has not answered \
             by then does not knock (0 to 86400; 0: no time limit, the host closes it). Default: 60.",
        ),
    ]
}

impl Config {
    /// The configuration for `seats` with the checked `options`.
    pub(super) fn new(seats: u8, options: &OptionValues) -> Config {
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
pub(super) enum Ctx {
    Keep,
    Reveal,
    Knocker,
    Return,
}

#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub(super) cfg: Config,
    pub val: [i8; 96],
    pub filled: u128,
    pub up: u128,
    pub(super) draw: [i8; DECK_SIZE],
    pub(super) draw_len: u8,
    pub(super) disc: [i8; DECK_SIZE],
    pub(super) disc_len: u8,
    pub phase: Phase,
    pub round: u32,
    pub(super) dealer: u8,
    pub(super) first: u8,
    pub(super) active: u8,
    pub(super) closer: u8,
    pub(super) final_taken: u8,
    pub(super) init_choice: [[u8; 2]; 8],
    pub(super) init_cnt: [u8; 8],
    /// X in the rules: the card drawn by the active seat, in hand.
    pub(super) drawn_card: i8,
    pub(super) eligible: u8,
    pub(super) answered: u8,
    pub(super) knocked: u8,
    pub(super) knockers: u8,
    /// K: accepted knocker.
    pub(super) knocker: u8,
    /// Y in the rules: the card held by K, and whether it was face up before.
    pub(super) held_card: i8,
    pub(super) held_card_was_face_up: bool,
    /// Z and q in the rules: the card taken from K, and the slot reserved for Y.
    pub(super) taken_card: i8,
    pub(super) reserved_slot: u8,
    /// W in the rules: the exchanged card waiting to be discarded.
    pub(super) exchanged_card: i8,
    pub(super) tri_owner: u8,
    pub(super) tri_ctx: Ctx,
    pub(super) totals: [i32; 8],
    pub(super) last: [i32; 8],
    pub(super) turns: u32,
    pub(super) winners: u8,
    /// True once a timed-out seat forfeited (§11): the match is over, `winners` the others'.
    pub(super) forfeited: bool,
}

impl State {
    #[inline]
    pub(super) fn n(&self) -> usize {
        self.cfg.seats as usize
    }
    #[inline]
    pub(super) fn is_up(&self, s: u8) -> bool {
        self.up >> s & 1 == 1
    }
    #[inline]
    pub(super) fn is_filled(&self, s: u8) -> bool {
        self.filled >> s & 1 == 1
    }
    #[inline]
    pub(super) fn in_dom(&self, i: u8, s: u8) -> bool {
        self.cfg.dom_mask[i as usize] >> s & 1 == 1
    }
    /// `cnt(D[i])`.
    #[inline]
    pub(super) fn cnt(&self, i: u8) -> u32 {
        (self.filled & self.cfg.dom_mask[i as usize]).count_ones()
    }
    #[inline]
    pub(super) fn face_down_in(&self, i: u8) -> u128 {
        self.filled & !self.up & self.cfg.dom_mask[i as usize]
    }
    pub(super) fn all_seats(&self) -> u8 {
        ((1u16 << self.n()) - 1) as u8
    }
    pub(super) fn push_discard(&mut self, v: i8) -> CoreResult<()> {
        let l = self.disc_len as usize;
        if l >= DECK_SIZE {
            return Err(CoreError::corrupt("discard pile overflow"));
        }
        self.disc[l] = v;
        self.disc_len += 1;
        Ok(())
    }
    pub(super) fn discard_top(&self) -> Option<i8> {
        (self.disc_len > 0).then(|| self.disc[self.disc_len as usize - 1])
    }
    pub(super) fn take_slot(&mut self, s: u8) -> i8 {
        let v = self.val[s as usize];
        self.val[s as usize] = NO_CARD;
        self.filled &= !(1u128 << s);
        self.up &= !(1u128 << s);
        v
    }
    pub(super) fn place_up(&mut self, s: u8, v: i8) {
        self.val[s as usize] = v;
        self.filled |= 1u128 << s;
        self.up |= 1u128 << s;
    }
    /// The state before the first deal.
    pub(super) fn initial(config: &Config) -> State {
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
            drawn_card: NO_CARD,
            eligible: 0,
            answered: 0,
            knocked: 0,
            knockers: 0,
            knocker: NONE,
            held_card: NO_CARD,
            held_card_was_face_up: false,
            taken_card: NO_CARD,
            reserved_slot: NONE,
            exchanged_card: NO_CARD,
            tri_owner: NONE,
            tri_ctx: Ctx::Keep,
            totals: [0; 8],
            last: [0; 8],
            turns: 0,
            winners: 0,
            forfeited: false,
        }
    }
}

/// How many cards of each value (-2..=12) the deck holds.
pub(super) fn deck_histogram() -> [u16; 15] {
    let mut h = [0u16; 15];
    for (v, c) in DECK {
        h[(v + 2) as usize] = c as u16;
    }
    h
}

/// Counts card `v` in `h`; false if `v` is no card value.
pub(super) fn hist_add(h: &mut [u16; 15], v: i8) -> bool {
    if !(-2..=12).contains(&v) {
        return false;
    }
    h[(v + 2) as usize] += 1;
    true
}
