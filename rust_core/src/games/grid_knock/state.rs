//! Cards and constants, the configuration and its options, the match state, and the events
//! as the engine applies them (`apply`, behind `evolve`), with what `evolve` re-checks on the
//! state alone: who is awaited, a turn's end, a round's scores, a forfeit's winners, triples.

use super::triples::{domain_triples, slot_domains, Grid, Triples};
use crate::error::{ensure, CoreError, CoreResult};
use crate::game::{OptionSpec, OptionValues};
use crate::proto::grid_knock as pb;

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
            "Target score",
            100,
            1,
            1000,
            "The match ends after the round in which someone's total reaches this score; the lowest total wins (1 to 1000). Default: 100.",
        ),
        OptionSpec::choice(
            "closer_penalty",
            "Penalty for closing",
            &["double", "none"],
            "double",
            "double: the player who turns up all their cards first has their round score doubled unless it is the lowest; none: no penalty. Default: double.",
        ),
        OptionSpec::choice(
            "knocking",
            "Knocking",
            &["on", "off"],
            "on",
            "on: after a draw from the pile the other players may knock to trade a card (not with 2 players); off: nobody knocks. Default: on.",
        ),
        OptionSpec::int(
            "turn_cap",
            "Turns before the match stops",
            3000,
            10,
            100_000,
            "Safety limit: the match is stopped after this many turns, with no winner (10 to 100000). Default: 3000.",
        ),
        OptionSpec::int(
            "knock_timeout",
            "Seconds to decide on a knock",
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
    /// What triple detection reads of the state.
    #[inline]
    pub(super) fn grid(&self) -> Grid<'_> {
        Grid {
            n: self.n(),
            dom: &self.cfg.dom,
            val: &self.val,
            filled: self.filled,
            up: self.up,
        }
    }
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

// --------------------------------------------------------------------------------------------
// The compact internal moves and events ([`Move`], [`Ev`]) and [`apply`], the only state
// transition, which re-validates every event against the state it follows.

/// The moves, one-to-one with the wire's actions: one variant per message of the `Action.kind`
/// oneof, named as that message, a slot as its index; a `discard_triple` that does not name three
/// distinct cells is `BadTriple`, which the rules refuse (`NOT_A_TRIPLE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    RevealInitial(u8),
    DrawFromPile,
    TakeFromDiscard,
    Knock,
    PassKnock,
    AcceptKnock(u8),
    RefuseKnocks,
    KeepSwap(u8),
    DiscardAndReveal(u8),
    KnockerSwap(u8),
    DiscardTriple([u8; 3]),
    BadTriple,
    EndTriples,
    TakeFromKnocker(u8),
    ReturnSwap(u8),
}

/// The events, one-to-one with the wire: one variant per message of the `Event.kind` oneof of
/// `proto/tablier/grid_knock/v1/grid_knock.proto`, named as that message, its fields named as the
/// message's fields. The values are compact: a seat is a `u8`, a slot its index `s` (module doc),
/// a card its value, a repeated list of seats a seat mask. What the wire spells out but follows
/// from the rest is left out: `Dealt.first_player` and `draw_pile_size` (from the dealer and the
/// deal), `Reshuffled.draw_pile_size` (the pile's length).
#[derive(Clone, Debug, PartialEq)]
pub enum Ev {
    /// `cards` is the deal in order: the wire's `blocks` (the first `blocks_len` cards), then
    /// `discard_start`, then `draw_pile`.
    Dealt {
        round: u32,
        dealer: u8,
        blocks_len: u8,
        cards: [i8; DECK_SIZE],
    },
    InitialChosen {
        seat: u8,
        slot: u8,
    },
    /// The first `len` of `cards`.
    InitialRevealed {
        cards: [Card; 16],
        len: u8,
    },
    /// The first `draw_pile_size` cards of `draw_pile`.
    Reshuffled {
        draw_pile: [i8; DECK_SIZE],
        draw_pile_size: u8,
        discard_top: i8,
    },
    Drawn {
        seat: u8,
        value: i8,
        knock_eligible: u8,
    },
    TookDiscard {
        seat: u8,
        value: i8,
    },
    /// `answer` is `Knock` or `Pass` (`Sealed` exists only in a redacted copy).
    KnockAnswered {
        seat: u8,
        answer: pb::KnockAnswer,
    },
    KnockWindowClosed {
        knockers: u8,
    },
    KnockAccepted {
        seat: u8,
        knocker: u8,
    },
    KnocksRefused {
        seat: u8,
    },
    Kept {
        seat: u8,
        slot: u8,
        placed: i8,
        removed: i8,
    },
    DiscardedAndRevealed {
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
        removed_was_face_up: bool,
    },
    TripleDiscarded {
        seat: u8,
        cells: [u8; 3],
        value: i8,
    },
    TriplesEnded {
        seat: u8,
        automatic: bool,
    },
    TookFromKnocker {
        seat: u8,
        knocker: u8,
        slot: u8,
        value: i8,
    },
    ReturnSwapped {
        seat: u8,
        slot: u8,
        placed: i8,
        removed: i8,
    },
    ExchangedCardDiscarded {
        seat: u8,
        value: i8,
    },
    HeldCardPlaced {
        knocker: u8,
        slot: u8,
        value: i8,
    },
    HeldCardDiscarded {
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
        next_player: u8,
    },
    RoundScored(Box<RoundScored>),
    MatchAborted {
        turns: u32,
    },
    /// A timed-out seat forfeited (match clocks, §11).
    Forfeited {
        seat: u8,
        winners: u8,
    },
}

/// The wire's `Card`: a slot and the card in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Card {
    pub(super) slot: u8,
    pub(super) value: i8,
}

/// The wire's `RoundScored`: `revealed` is the set of slots flipped at the final reveal and
/// `revealed_values` their cards (by slot); the per-seat lists hold `seats` entries.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundScored {
    pub(super) seats: u8,
    pub(super) round: u32,
    pub(super) revealed: u128,
    pub(super) revealed_values: [i8; 96],
    pub(super) raw_scores: [i32; 8],
    pub(super) round_scores: [i32; 8],
    pub(super) totals: [i32; 8],
    pub(super) closer: u8,
    pub(super) closer_doubled: bool,
    pub(super) match_over: bool,
    pub(super) winners: u8,
}

fn begin_turn(st: &mut State, seat: u8) {
    st.active = seat;
    st.drawn_card = NO_CARD;
    st.eligible = 0;
    st.answered = 0;
    st.knocked = 0;
    st.knockers = 0;
    st.knocker = NONE;
    st.held_card = NO_CARD;
    st.taken_card = NO_CARD;
    st.reserved_slot = NONE;
    st.exchanged_card = NO_CARD;
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
pub(super) fn apply(st: &mut State, ev: &Ev) -> CoreResult<()> {
    let n = st.n();
    let nslots = (12 * n) as u8;
    let slot_ok = |s: u8| s < nslots;
    match *ev {
        Ev::Dealt {
            round,
            dealer,
            blocks_len,
            ref cards,
        } => {
            ensure(st.phase == Phase::DealPending, "deal outside a deal")?;
            ensure(blocks_len as usize == 12 * n, "deal size")?;
            ensure(round == st.round + 1, "round number")?;
            ensure((dealer as usize) < n, "dealer")?;
            ensure(round == 1 || dealer == st.first, "dealer rotation")?;
            let mut h = [0u16; 15];
            for &v in cards.iter() {
                ensure(hist_add(&mut h, v), "card value")?;
            }
            ensure(h == deck_histogram(), "deal is not the deck")?;
            let nb = blocks_len as usize;
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
        Ev::InitialRevealed { cards, len } => {
            ensure(st.phase == Phase::InitialFlipPending, "initial flip")?;
            ensure(initial_flip(st) == (cards, len), "initial flip cards")?;
            for card in &cards[..len as usize] {
                st.up |= 1u128 << card.slot;
            }
            begin_turn(st, st.first);
        }
        Ev::Reshuffled {
            ref draw_pile,
            draw_pile_size,
            discard_top,
        } => {
            ensure(
                st.phase == Phase::ChooseSource && st.draw_len == 0 && st.disc_len >= 2,
                "reshuffle",
            )?;
            ensure(
                draw_pile_size as usize == st.disc_len as usize - 1
                    && Some(discard_top) == st.discard_top(),
                "reshuffle sizes",
            )?;
            let len = draw_pile_size as usize;
            let mut a = [0u16; 15];
            let mut b = [0u16; 15];
            for (&p, &d) in draw_pile[..len].iter().zip(&st.disc[..len]) {
                ensure(hist_add(&mut a, p), "card value")?;
                hist_add(&mut b, d);
            }
            ensure(a == b, "reshuffle is not the discard pile")?;
            st.draw[..len].copy_from_slice(&draw_pile[..len]);
            st.draw_len = draw_pile_size;
            st.disc[0] = discard_top;
            st.disc_len = 1;
        }
        Ev::Drawn {
            seat,
            value,
            knock_eligible,
        } => {
            ensure(
                st.phase == Phase::ChooseSource && seat == st.active && st.draw_len > 0,
                "draw",
            )?;
            ensure(st.draw[st.draw_len as usize - 1] == value, "drawn value")?;
            ensure(knock_eligible == eligible_knockers(st), "knock eligibility")?;
            st.draw_len -= 1;
            st.drawn_card = value;
            st.eligible = knock_eligible;
            st.phase = if knock_eligible != 0 {
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
            st.drawn_card = value;
            st.phase = Phase::SwapDiscard;
        }
        Ev::KnockAnswered { seat, answer } => {
            ensure(
                st.phase == Phase::KnockWindow && (seat as usize) < n,
                "knock answer",
            )?;
            ensure(
                st.eligible >> seat & 1 == 1 && st.answered >> seat & 1 == 0,
                "knock answerer",
            )?;
            st.answered |= 1 << seat;
            if answer == pb::KnockAnswer::Knock {
                st.knocked |= 1 << seat;
            }
            if st.answered == st.eligible {
                st.phase = Phase::KnockClosePending;
            }
        }
        Ev::KnockWindowClosed { knockers } => {
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
        Ev::KnockAccepted { seat, knocker } => {
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
        Ev::KnocksRefused { seat } => {
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
                placed == st.drawn_card && removed == st.val[slot as usize],
                "keep values",
            )?;
            st.exchanged_card = st.take_slot(slot);
            st.place_up(slot, st.drawn_card);
            st.drawn_card = NO_CARD;
            open_triples(st, seat, Ctx::Keep);
        }
        Ev::DiscardedAndRevealed {
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
                discarded == st.drawn_card && revealed == st.val[slot as usize],
                "reveal values",
            )?;
            st.push_discard(st.drawn_card)?;
            st.drawn_card = NO_CARD;
            st.up |= 1u128 << slot;
            open_triples(st, seat, Ctx::Reveal);
        }
        Ev::KnockerSwapped {
            knocker,
            slot,
            placed,
            removed,
            removed_was_face_up,
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
                placed == st.drawn_card
                    && removed == st.val[slot as usize]
                    && removed_was_face_up == st.is_up(slot),
                "knocker values",
            )?;
            st.held_card_was_face_up = removed_was_face_up;
            st.held_card = st.take_slot(slot);
            st.place_up(slot, st.drawn_card);
            st.drawn_card = NO_CARD;
            open_triples(st, knocker, Ctx::Knocker);
        }
        Ev::TripleDiscarded { seat, cells, value } => {
            ensure(st.phase == Phase::Triples && seat == st.tri_owner, "triple")?;
            let t = triples(st, seat);
            ensure(t.cells[..t.len].contains(&cells), "not a triple")?;
            ensure(st.val[cells[0] as usize] == value, "triple value")?;
            for c in cells {
                let v = st.take_slot(c);
                st.push_discard(v)?;
            }
        }
        Ev::TriplesEnded { seat, automatic: _ } => {
            ensure(
                st.phase == Phase::Triples && seat == st.tri_owner,
                "end triples",
            )?;
            // `automatic` only tells clients the engine closed the window; either way it closes.
            st.tri_owner = NONE;
            st.phase = match st.tri_ctx {
                Ctx::Keep | Ctx::Return => Phase::WDiscardPending,
                Ctx::Reveal => Phase::TurnEndPending,
                Ctx::Knocker => Phase::TakeFromKnocker,
            };
        }
        Ev::TookFromKnocker {
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
            st.taken_card = st.take_slot(slot);
            st.reserved_slot = slot;
            st.phase = Phase::ReturnSwap;
        }
        Ev::ReturnSwapped {
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
                placed == st.taken_card && removed == st.val[slot as usize],
                "return values",
            )?;
            st.exchanged_card = st.take_slot(slot);
            st.place_up(slot, st.taken_card);
            st.taken_card = NO_CARD;
            open_triples(st, seat, Ctx::Return);
        }
        Ev::ExchangedCardDiscarded { seat, value } => {
            ensure(
                st.phase == Phase::WDiscardPending
                    && seat == st.active
                    && value == st.exchanged_card,
                "exchanged card",
            )?;
            st.push_discard(value)?;
            st.exchanged_card = NO_CARD;
            st.phase = if st.reserved_slot != NONE {
                Phase::YPlacePending
            } else {
                Phase::TurnEndPending
            };
        }
        Ev::HeldCardPlaced {
            knocker,
            slot,
            value,
        } => {
            ensure(
                st.phase == Phase::YPlacePending && knocker == st.knocker,
                "held card placement",
            )?;
            ensure(
                slot == st.reserved_slot
                    && value == st.held_card
                    && slot_ok(slot)
                    && !st.is_filled(slot),
                "held card slot",
            )?;
            st.place_up(slot, value);
            st.held_card = NO_CARD;
            st.reserved_slot = NONE;
            st.phase = Phase::TurnEndPending;
        }
        Ev::HeldCardDiscarded { knocker, value } => {
            ensure(
                st.phase == Phase::TakeFromKnocker
                    && knocker == st.knocker
                    && take_targets(st) == 0,
                "held discard",
            )?;
            ensure(value == st.held_card, "held value")?;
            st.push_discard(value)?;
            st.held_card = NO_CARD;
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
            next_player,
        } => {
            ensure(
                st.phase == Phase::TurnEndPending && seat == st.active,
                "turn end",
            )?;
            let (c, r, nx, closer, fin) = turn_end_result(st);
            ensure(
                c == closed && r == round_over && nx == next_player,
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
                begin_turn(st, next_player);
            }
        }
        Ev::RoundScored(ref sc) => {
            ensure(st.phase == Phase::RoundEndPending, "scoring")?;
            ensure(**sc == score_round(st), "scores")?;
            st.up = st.filled;
            st.totals = sc.totals;
            st.last = sc.round_scores;
            st.winners = sc.winners;
            st.phase = if sc.match_over {
                Phase::Over
            } else if st.turns >= st.cfg.turn_cap {
                Phase::AbortPending
            } else {
                Phase::DealPending
            };
        }
        Ev::MatchAborted { turns } => {
            ensure(
                st.phase == Phase::AbortPending && turns == st.turns,
                "abort",
            )?;
            st.phase = Phase::Aborted;
        }
        Ev::Forfeited { seat, winners } => {
            ensure(
                (seat as usize) < st.n()
                    && to_act_mask(st) >> seat & 1 == 1
                    && winners == forfeit_winners(st, seat),
                "forfeit",
            )?;
            // Cards in transit (X, W, Y, Z) go face up onto the discard pile, as at a turn's end.
            for v in [
                st.drawn_card,
                st.exchanged_card,
                st.held_card,
                st.taken_card,
            ] {
                if v != NO_CARD {
                    ensure((st.disc_len as usize) < DECK_SIZE, "forfeit discard")?;
                    st.disc[st.disc_len as usize] = v;
                    st.disc_len += 1;
                }
            }
            (
                st.drawn_card,
                st.exchanged_card,
                st.held_card,
                st.taken_card,
                st.reserved_slot,
            ) = (NO_CARD, NO_CARD, NO_CARD, NO_CARD, NONE);
            st.winners = winners;
            st.forfeited = true;
            st.phase = Phase::Over;
        }
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------
// What `evolve` re-checks of the rules, on the state alone: who may knock and be taken from,
// the end of a turn, the round's scores, the initial flip, who is awaited, a forfeit's
// winners and the triples of a domain.

/// The seats that may knock (E): with 3 seats or more and knocking on, every seat but the
/// active one holding at least 4 cards and not past its final turn.
pub(super) fn eligible_knockers(st: &State) -> u8 {
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
pub(super) fn take_targets(st: &State) -> u128 {
    if st.knocker == NONE || st.cnt(st.active) == 0 {
        return 0;
    }
    st.filled & st.cfg.dom_mask[st.knocker as usize] & !st.cfg.dom_mask[st.active as usize]
}

pub(super) fn turn_end_result(st: &State) -> (bool, bool, u8, u8, u8) {
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

pub(super) fn score_round(st: &State) -> RoundScored {
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
    RoundScored {
        seats: n as u8,
        round: st.round,
        revealed,
        revealed_values: vals,
        raw_scores: raw,
        round_scores: scores,
        totals,
        closer: st.closer,
        closer_doubled: doubled,
        match_over: over,
        winners,
    }
}

/// The cards the initial reveal flips, the first `len` of them: every seat's choices, seat by
/// seat, each seat's in slot order.
pub(super) fn initial_flip(st: &State) -> ([Card; 16], u8) {
    let mut cards = [Card::default(); 16];
    let mut len = 0usize;
    for i in 0..st.n() {
        let mut c = st.init_choice[i];
        c.sort_unstable();
        for s in c {
            if s != NONE && len < 16 {
                cards[len] = Card {
                    slot: s,
                    value: st.val[s as usize],
                };
                len += 1;
            }
        }
    }
    (cards, len as u8)
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

/// The winners (a seat mask) when `seat` forfeits (§11): the lowest total (§6.4) among the
/// other seats; ties share the win.
pub(super) fn forfeit_winners(st: &State, seat: u8) -> u8 {
    let others = (0..st.n() as u8).filter(|&s| s != seat);
    let best = others
        .clone()
        .map(|s| st.totals[s as usize])
        .min()
        .unwrap_or(0);
    others
        .filter(|&s| st.totals[s as usize] == best)
        .fold(0, |m, s| m | 1 << s)
}

/// Every triple of seat `i`'s domain (R3), from its face-up cells.
#[inline]
pub(super) fn triples(st: &State, i: u8) -> Triples {
    domain_triples(&st.grid(), i)
}

/// Triples of every domain containing slot `s` (what changes after a card is placed at `s`).
#[inline]
pub fn triples_after_change(st: &State, s: u8) -> usize {
    let (a, b) = slot_domains(st.n(), s);
    triples(st, a).len + b.map_or(0, |b| triples(st, b).len)
}
