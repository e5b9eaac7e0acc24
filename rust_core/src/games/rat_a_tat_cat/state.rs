//! Rat-a-Tat Cat's cards and constants, its configuration and options, and the table (`State`)
//! with the small steps events make on it.

use crate::error::{CoreError, CoreResult};
use crate::game::{OptionSpec, OptionValues};
use crate::proto::rat_a_tat_cat as pb;
use pb::event::Kind as E;

pub(super) const MAXP: usize = 6;
pub(super) const DECK: usize = 54;
pub(super) const PK: u8 = 10;
pub(super) const SW: u8 = 11;
pub(super) const D2: u8 = 12;
pub(super) const NONE: u8 = 255;
/// Copies of each card code in the deck.
pub(super) const COUNTS: [u8; 13] = [4, 4, 4, 4, 4, 4, 4, 4, 4, 9, 3, 3, 3];
pub(super) const CARD_HIDDEN_NUMBER: i32 = pb::Card::HiddenNumber as i32;
/// A card in a row that this viewer may not see (the row keeps its four positions).
pub(super) const CARD_FACE_DOWN: i32 = pb::Card::FaceDown as i32;

pub(super) const REASONS: [&str; 7] = [
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
pub(super) const R_CAP: u8 = 4;
const R_TIME: u8 = 5;
/// A timed-out seat forfeited (match clocks, docs/rules/rat_a_tat_cat.md §11).
pub(super) const R_FORFEIT: u8 = 6;

#[inline]
pub(super) fn is_power(c: u8) -> bool {
    (PK..=D2).contains(&c)
}
#[inline]
pub(super) fn pbc(c: u8) -> i32 {
    if c <= D2 {
        c as i32 + 1
    } else {
        0
    }
}
#[inline]
pub(super) fn from_pbc(v: i32) -> Option<u8> {
    if (1..=13).contains(&v) {
        Some((v - 1) as u8)
    } else {
        None
    }
}
pub(super) fn card_name(c: u8) -> &'static str {
    const N: [&str; 13] = [
        "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "PK", "SW", "D2",
    ];
    N.get(c as usize).copied().unwrap_or("?")
}

pub(super) fn full_deck() -> [u8; DECK] {
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
pub(super) enum MatchMode {
    Elimination,
    FixedRounds,
    Timed,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub(super) seats: u8,
    pub(super) mode: MatchMode,
    pub(super) point_limit: u32,
    pub(super) rounds: u32,
    /// 0 = off (R14).
    pub(super) max_turns_per_round: u32,
    pub(super) first_dealer: Option<u8>,
    pub(super) memory_aid: bool,
    pub(super) admin_turn_cap: u32,
}

/// A pile with its top at the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Pile {
    pub(super) c: [u8; DECK],
    pub(super) n: u8,
}

impl Pile {
    pub(super) const EMPTY: Pile = Pile { c: [0; DECK], n: 0 };
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.n as usize
    }
    #[inline]
    pub(super) fn top(&self) -> Option<u8> {
        if self.n == 0 {
            None
        } else {
            Some(self.c[self.n as usize - 1])
        }
    }
    #[inline]
    pub(super) fn push(&mut self, card: u8) -> CoreResult<()> {
        if self.len() >= DECK {
            return Err(CoreError::corrupt(format!(
                "a pile would hold more than {DECK} cards"
            )));
        }
        self.c[self.n as usize] = card;
        self.n += 1;
        Ok(())
    }
    #[inline]
    pub(super) fn pop(&mut self) -> Option<u8> {
        let t = self.top()?;
        self.n -= 1;
        Some(t)
    }
    #[inline]
    pub(super) fn cards(&self) -> &[u8] {
        &self.c[..self.n as usize]
    }
    /// Bottom first (the top last, as every pile in the schema), as protobuf cards.
    pub(super) fn bottom_first_pb(&self) -> Vec<i32> {
        self.cards().iter().map(|&c| pbc(c)).collect()
    }
    /// From a top-first list.
    pub(super) fn from_top_first(cards: &[u8]) -> CoreResult<Pile> {
        if cards.len() > DECK {
            return Err(CoreError::corrupt(format!(
                "a pile of {} cards",
                cards.len()
            )));
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
pub(super) enum Phase {
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
    pub(super) fn holding(self) -> bool {
        matches!(self, Phase::Drawn | Phase::Draw2First | Phase::Draw2Second)
    }
    pub(super) fn awaiting(self) -> bool {
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
    pub(super) fn to_pb(self) -> pb::Phase {
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
    pub(super) cfg: Config,
    pub(super) phase: Phase,
    /// Rows of active seats; `NONE` for eliminated seats (and before the first deal).
    pub(super) rows: [[u8; 4]; MAXP],
    pub(super) draw: Pile,
    pub(super) discard: Pile,
    /// Card in hand, or `NONE`.
    pub(super) pending: u8,
    pub(super) current: u8,
    pub(super) dealer: u8,
    pub(super) caller: u8,
    /// Bitmask of seats still in the match.
    pub(super) active: u8,
    pub(super) round: u32,
    pub(super) turns_in_round: u32,
    pub(super) total_turns: u32,
    pub(super) totals: [u32; MAXP],
    pub(super) last_scores: [u8; MAXP],
    pub(super) last_rows: [[u8; 4]; MAXP],
    pub(super) last_eliminated: u8,
    /// `known[v]` bit `4p + s`: seat v knows the card at (p, s).
    pub(super) known: [u32; MAXP],
    pub(super) revealed: bool,
    pub(super) winners: u8,
    pub(super) end_reason: u8,
    pub(super) aborted: bool,
    /// Timed format: the host asked to stop after the round in progress.
    pub(super) stop_requested: bool,
    /// Hand-built position of a test vector: the 54-card conservation check is off.
    pub(super) test_mode: bool,
}

#[inline]
pub(super) fn bit(p: usize, s: usize) -> u32 {
    1u32 << (4 * p + s)
}

impl State {
    #[inline]
    pub(super) fn n(&self) -> usize {
        self.cfg.seats as usize
    }
    #[inline]
    pub(super) fn is_active(&self, p: usize) -> bool {
        p < MAXP && self.active & (1 << p) != 0
    }
    pub(super) fn active_count(&self) -> usize {
        self.active.count_ones() as usize
    }
    /// Next active seat clockwise after `from` (itself if it is the only one).
    pub(super) fn next_active(&self, from: u8) -> u8 {
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
    pub(super) fn next_power(&self) -> Option<(u8, u8)> {
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
    pub(super) fn drew(&mut self) -> CoreResult<()> {
        let next = match self.phase {
            Phase::TurnStart => Phase::Drawn,
            Phase::DrawingFirst => Phase::Draw2First,
            Phase::DrawingSecond => Phase::Draw2Second,
            _ => {
                return Err(CoreError::corrupt(format!(
                    "card drawn in phase {:?}",
                    self.phase
                )))
            }
        };
        let Some(c) = self.draw.pop() else {
            return Err(CoreError::corrupt(
                "the draw pile is empty at a draw".to_string(),
            ));
        };
        self.pending = c;
        self.phase = next;
        Ok(())
    }
    /// The table after `initial_peek`: seat `p` knows its two outer cards.
    pub(super) fn initial_peek(&mut self, p: usize) {
        self.known[p] |= bit(p, 0) | bit(p, 3);
    }
    /// How the current seat's turn ends: `(next seat, round over, turn limit reached)`.
    pub(super) fn turn_end(&self) -> (u8, bool, bool) {
        let next = self.next_active(self.current);
        let (over, limit) = if self.caller != NONE {
            (next == self.caller, false)
        } else if self.cfg.max_turns_per_round > 0
            && self.turns_in_round + 1 >= self.cfg.max_turns_per_round
        {
            (true, true)
        } else {
            (false, false)
        };
        (next, over, limit)
    }
    /// The table after `turn_ended`.
    pub(super) fn turn_ended(&mut self, next: u8, over: bool) {
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
    pub(super) fn dealt(
        &mut self,
        rows: [[u8; 4]; MAXP],
        draw: Pile,
        top: u8,
        dealer: u8,
        round: u32,
    ) -> CoreResult<()> {
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
    pub(super) fn row_score(&self, p: usize) -> u32 {
        self.rows[p]
            .iter()
            .map(|&c| if c <= 9 { c as u32 } else { 0 })
            .sum()
    }
    /// Whether the match ends after the round just scored: `(winners mask, reason)`.
    pub(super) fn match_end(&self) -> Option<(u8, u8)> {
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
    pub(super) fn forfeit_winners(&self) -> u8 {
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
    pub(super) fn seat_list(mask: u8) -> Vec<u32> {
        (0..MAXP as u32).filter(|p| mask & (1 << p) != 0).collect()
    }

    /// A hand-built position (test vectors, property tests): rows per seat (all seats active),
    /// piles top first, `current` in `TURN_START`. The 54-card check is off.
    #[cfg(test)]
    pub(super) fn test_position(
        cfg: Config,
        rows: &[[u8; 4]],
        draw_top_first: &[u8],
        discard_top_first: &[u8],
        dealer: u8,
        current: u8,
    ) -> State {
        let mut s = initial(&cfg);
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

/// The `first_dealer` option's name for people.
const FIRST_DEALER: &str = "First dealer";

pub(super) fn options() -> Vec<OptionSpec> {
    vec![
        OptionSpec::choice(
            "match_mode",
            "How the match ends",
            &["elimination", "fixed_rounds", "timed"],
            "elimination",
            "How the match ends. elimination: a player whose total reaches the point limit is out, and the last player left wins; fixed rounds: the lowest total after the set number of rounds wins; timed: the host ends the match after the round in progress, and the lowest total wins. Default: elimination.",
        ),
        OptionSpec::int("point_limit", "Point limit", 100, 1, 10_000, "In an elimination match, the total at which a player is out (1 to 10000). Default: 100."),
        OptionSpec::int("rounds", "Rounds", 3, 1, 1000, "In a fixed-rounds match, how many rounds are played (1 to 1000). Default: 3."),
        OptionSpec::int(
            "max_turns_per_round",
            "Turns before a round ends",
            0,
            0,
            100_000,
            "A round in which nobody calls ends after this many turns (0: no limit; up to 100000). Default: 0.",
        ),
        OptionSpec::text("first_dealer", FIRST_DEALER, 16, "random", "Who deals the first round: random, or a seat number. Default: random."),
        OptionSpec::choice(
            "memory_aid",
            "Memory aid",
            &["off", "on"],
            "off",
            "on: the table reminds each player of the cards in their row they have already seen (a help, not part of the rules); off: play from memory. Default: off.",
        ),
        OptionSpec::int(
            "admin_turn_cap",
            "Turns before the match stops",
            20_000,
            1,
            1_000_000,
            "Safety limit: the match is stopped after this many turns, with no winner (1 to 1000000). Default: 20000.",
        ),
    ]
}

pub(super) fn configure(seats: u32, options: &OptionValues) -> CoreResult<Config> {
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
                    "{FIRST_DEALER} must be random or a seat from 0 to {}, not {v:?}",
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

pub(super) fn initial(cfg: &Config) -> State {
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

// ------------------------------------------------------------------ invariants

pub(super) fn check_invariants(s: &State) -> Result<(), String> {
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
            return Err(format!(
                "seat {p} total {} is above 36 per round",
                s.totals[p]
            ));
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

/// At a decision the draw pile is not empty (R7): a draw that empties it is followed by the
/// reshuffle in the same command, so only the state between those two events shows it empty.
pub(super) fn check_decision_point(s: &State) -> Result<(), String> {
    if s.phase.awaiting() && s.draw.len() == 0 {
        return Err("empty draw pile at a decision".into());
    }
    Ok(())
}

// --------------------------------------------------------------------------------------------
// Applying an event to the table: stored events (`evolve`, checked) and the scratch state of
// `decide` (unchecked).

/// A pile from its protobuf cards, bottom first (the top last), counting its cards into `counts`.
fn pile_from_pb(cards: &[i32], counts: &mut [u8; 13]) -> CoreResult<Pile> {
    if cards.len() > DECK {
        return Err(CoreError::corrupt(format!(
            "a pile of {} cards",
            cards.len()
        )));
    }
    let mut p = Pile::EMPTY;
    for (i, &v) in cards.iter().enumerate() {
        let Some(c) = from_pbc(v) else {
            return Err(CoreError::corrupt(format!("card value {v} is not a card")));
        };
        counts[c as usize] = counts[c as usize].saturating_add(1);
        p.c[i] = c;
    }
    p.n = cards.len() as u8;
    Ok(p)
}

/// Applies one event. With `CHECK` every recorded result is compared with the table and a
/// mismatch is `Corrupt` (stored events, `evolve`). Without it the comparisons are skipped: that
/// is for the scratch state inside `decide`, whose events were built from that very state one
/// line earlier, so checking them again only doubled the cost of every command; the caller's
/// `evolve` still checks them.
pub(super) fn apply_event<const CHECK: bool>(s: &mut State, event: &pb::Event) -> CoreResult<()> {
    let Some(kind) = event.kind.as_ref() else {
        return Err(CoreError::corrupt("event without kind".to_string()));
    };
    let n = s.n();
    let card = |v: i32| -> CoreResult<u8> {
        match from_pbc(v) {
            Some(c) => Ok(c),
            None => Err(CoreError::corrupt(format!("card value {v} is not a card"))),
        }
    };
    let actor = |seat: u32, s: &State| -> CoreResult<usize> {
        if CHECK && (seat as usize >= n || seat != s.current as u32) {
            return Err(CoreError::corrupt(format!(
                "seat {seat} acts but seat {} is current",
                s.current
            )));
        }
        Ok(seat as usize)
    };
    let slot = |v: u32| -> CoreResult<usize> {
        if (1..=4).contains(&v) {
            Ok(v as usize - 1)
        } else {
            Err(CoreError::corrupt(format!("slot {v}")))
        }
    };
    match kind {
        E::RoundDealt(e) => {
            let between = s.phase == Phase::RoundOver && s.match_end().is_none();
            if CHECK && (!(s.phase == Phase::NotStarted || between)) {
                return Err(CoreError::corrupt(format!("a deal in phase {:?}", s.phase)));
            }
            if CHECK && (e.round != s.round + 1) {
                return Err(CoreError::corrupt(format!(
                    "round {} dealt after round {}",
                    e.round, s.round
                )));
            }
            let dealer = e.dealer as usize;
            if CHECK
                && (dealer >= n
                    || (s.phase != Phase::NotStarted && e.dealer as u8 != s.next_active(s.dealer)))
            {
                return Err(CoreError::corrupt(format!(
                    "dealer {} does not follow dealer {}",
                    e.dealer, s.dealer
                )));
            }
            let first = s.next_active(e.dealer as u8);
            if CHECK && (e.first_player != first as u32) {
                return Err(CoreError::corrupt(format!(
                    "first player {} is not left of dealer {}",
                    e.first_player, e.dealer
                )));
            }
            let mut counts = [0u8; 13];
            let mut rows = [[NONE; 4]; MAXP];
            let mut seen = 0u8;
            for r in &e.rows {
                let p = r.seat as usize;
                if CHECK && (!s.is_active(p) || seen & (1 << p) != 0 || r.cards.len() != 4) {
                    return Err(CoreError::corrupt(format!(
                        "dealt row for seat {p} does not fit"
                    )));
                }
                seen |= 1 << p;
                for (i, &v) in r.cards.iter().enumerate() {
                    let c = card(v)?;
                    rows[p][i] = c;
                    counts[c as usize] += 1;
                }
            }
            if CHECK && (seen != s.active) {
                return Err(CoreError::corrupt(
                    "the deal does not cover every active seat".to_string(),
                ));
            }
            let top = card(e.discard_top)?;
            if CHECK && (is_power(top)) {
                return Err(CoreError::corrupt(
                    "the first discard is a power card".to_string(),
                ));
            }
            for &f in &e.flipped_powers {
                if CHECK && (!is_power(card(f)?)) {
                    return Err(CoreError::corrupt(
                        "a flipped-back card is not a power card".to_string(),
                    ));
                }
            }
            counts[top as usize] += 1;
            let draw = pile_from_pb(&e.draw_pile, &mut counts)?;
            if CHECK && (counts != COUNTS || draw.len() != e.draw_pile_size as usize) {
                return Err(CoreError::corrupt(
                    "the deal does not hold the 54-card deck".to_string(),
                ));
            }
            s.dealt(rows, draw, top, e.dealer as u8, e.round)?;
        }
        E::InitialPeek(e) => {
            let p = e.seat as usize;
            if CHECK && (s.phase != Phase::TurnStart || s.turns_in_round != 0 || !s.is_active(p)) {
                return Err(CoreError::corrupt(format!(
                    "initial peek of seat {p} out of place"
                )));
            }
            if CHECK && (card(e.slot1)? != s.rows[p][0] || card(e.slot4)? != s.rows[p][3]) {
                return Err(CoreError::corrupt(format!(
                    "initial peek of seat {p} does not match its row"
                )));
            }
            s.initial_peek(p);
        }
        E::DiscardTaken(e) => {
            if CHECK && (s.phase != Phase::TurnStart) {
                return Err(CoreError::corrupt(format!(
                    "discard taken in phase {:?}",
                    s.phase
                )));
            }
            let p = actor(e.seat, s)?;
            let sl = slot(e.slot)?;
            let top = s.discard.top();
            let taken = card(e.taken)?;
            if CHECK
                && (top != Some(taken) || is_power(taken) || card(e.replaced)? != s.rows[p][sl])
            {
                return Err(CoreError::corrupt(
                    "discard taken does not match the table".to_string(),
                ));
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
                return Err(CoreError::corrupt(
                    "drawn card is not the top of the draw pile".to_string(),
                ));
            }
            s.drew()?;
        }
        E::CardReplaced(e) => {
            if CHECK && (!s.phase.holding()) {
                return Err(CoreError::corrupt(format!(
                    "card replaced in phase {:?}",
                    s.phase
                )));
            }
            let p = actor(e.seat, s)?;
            let sl = slot(e.slot)?;
            let placed = card(e.placed)?;
            if CHECK
                && (placed != s.pending || is_power(placed) || card(e.replaced)? != s.rows[p][sl])
            {
                return Err(CoreError::corrupt(
                    "replacement does not match the table".to_string(),
                ));
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
                return Err(CoreError::corrupt(format!(
                    "drawn card discarded in phase {:?}",
                    s.phase
                )));
            }
            actor(e.seat, s)?;
            if CHECK && (card(e.card)? != s.pending) {
                return Err(CoreError::corrupt(
                    "discarded card is not the card in hand".to_string(),
                ));
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
                return Err(CoreError::corrupt(format!(
                    "power used in phase {:?}",
                    s.phase
                )));
            }
            actor(e.seat, s)?;
            let c = card(e.power)?;
            if CHECK && (c != s.pending || !is_power(c)) {
                return Err(CoreError::corrupt(
                    "power used is not the power card in hand".to_string(),
                ));
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
                return Err(CoreError::corrupt(
                    "peeked card does not match the row".to_string(),
                ));
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
                return Err(CoreError::corrupt(format!(
                    "swap target seat {q} does not fit"
                )));
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
                return Err(CoreError::corrupt(format!(
                    "swap skipped in phase {:?}",
                    s.phase
                )));
            }
            actor(e.seat, s)?;
            s.phase = Phase::EndOfTurn;
        }
        E::Called(e) => {
            if CHECK && (s.phase != Phase::EndOfTurn || s.caller != NONE) {
                return Err(CoreError::corrupt("call out of place".to_string()));
            }
            s.caller = actor(e.seat, s)? as u8;
        }
        E::TurnEnded(e) => {
            if CHECK && (s.phase != Phase::EndOfTurn) {
                return Err(CoreError::corrupt(format!(
                    "turn ended in phase {:?}",
                    s.phase
                )));
            }
            actor(e.seat, s)?;
            let (next, over, limit) = s.turn_end();
            if CHECK
                && (e.next_seat != next as u32
                    || e.round_over != over
                    || e.turn_limit_reached != limit)
            {
                return Err(CoreError::corrupt(
                    "turn end does not fit the table".to_string(),
                ));
            }
            s.turn_ended(next, over);
        }
        E::PileReshuffled(e) => {
            if CHECK
                && (s.draw.len() != 0
                    || matches!(s.phase, Phase::NotStarted | Phase::RoundOver | Phase::Over))
            {
                return Err(CoreError::corrupt(
                    "reshuffle while the draw pile is not empty".to_string(),
                ));
            }
            let top = card(e.discard_top)?;
            if CHECK && (is_power(top)) {
                return Err(CoreError::corrupt(
                    "a reshuffle flipped a power card face up".to_string(),
                ));
            }
            for &f in &e.flipped_powers {
                if CHECK && (!is_power(card(f)?)) {
                    return Err(CoreError::corrupt(
                        "a flipped-back card is not a power card".to_string(),
                    ));
                }
            }
            // At reveal the reshuffle follows the draw that emptied the pile, and the card
            // that draw sent to the discard pile (on top) is not part of it: it ends on top of
            // the new discard pile (R7: a card in hand is not reshuffled; AMB9: the replaced
            // card is discarded after its slot is filled). Logs recorded before this rule was
            // fixed reshuffled it too; such a reshuffle holds one card more and replays as recorded.
            let held = match s.discard.top() {
                Some(top)
                    if s.phase == Phase::Reveal && e.draw_pile.len() + 2 == s.discard.len() =>
                {
                    top
                }
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
                return Err(CoreError::corrupt(
                    "the reshuffled pile is not the old discard pile".to_string(),
                ));
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
                return Err(CoreError::corrupt("reveal out of place".to_string()));
            }
            let mut seen = 0u8;
            for r in &e.rows {
                let p = r.seat as usize;
                if CHECK && (!s.is_active(p) || r.cards.len() != 4) {
                    return Err(CoreError::corrupt(format!(
                        "revealed row of seat {p} does not fit"
                    )));
                }
                seen |= 1 << p;
                for (i, &v) in r.cards.iter().enumerate() {
                    if CHECK && (card(v)? != s.rows[p][i]) {
                        return Err(CoreError::corrupt(format!(
                            "revealed row of seat {p} does not match"
                        )));
                    }
                }
            }
            if CHECK && (seen != s.active) {
                return Err(CoreError::corrupt(
                    "the reveal does not cover every active seat".to_string(),
                ));
            }
            s.revealed = true;
        }
        E::RevealDraw(e) => {
            if CHECK && (s.phase != Phase::Reveal || !s.revealed) {
                return Err(CoreError::corrupt("reveal draw out of place".to_string()));
            }
            let sl = slot(e.slot)?;
            if CHECK && (e.seat as usize >= n || s.next_power() != Some((e.seat as u8, sl as u8))) {
                return Err(CoreError::corrupt(format!(
                    "reveal draw for seat {} slot {} is out of order",
                    e.seat, e.slot
                )));
            }
            let c = card(e.card)?;
            if CHECK && (s.draw.top() != Some(c)) {
                return Err(CoreError::corrupt(
                    "reveal draw is not the top of the draw pile".to_string(),
                ));
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
            if CHECK
                && (s.phase != Phase::Reveal
                    || !s.revealed
                    || s.next_power().is_some()
                    || e.round != s.round)
            {
                return Err(CoreError::corrupt("scoring out of place".to_string()));
            }
            let mut seen = 0u8;
            let mut totals = s.totals;
            let mut last = [0u8; MAXP];
            for sc in &e.scores {
                let p = sc.seat as usize;
                if CHECK && (!s.is_active(p) || seen & (1 << p) != 0) {
                    return Err(CoreError::corrupt(format!(
                        "score for seat {p} does not fit"
                    )));
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
                return Err(CoreError::corrupt(
                    "scores do not cover every active seat".to_string(),
                ));
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
                return Err(CoreError::corrupt(
                    "eliminated seats do not fit the totals".to_string(),
                ));
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
                return Err(CoreError::corrupt(
                    "a stop request does not fit this match".to_string(),
                ));
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
                    return Err(CoreError::corrupt(
                        "administrative stop before the cap".to_string(),
                    ));
                }
                (0u8, R_CAP)
            } else {
                if CHECK && (s.phase != Phase::RoundOver) {
                    return Err(CoreError::corrupt("match end out of place".to_string()));
                }
                match s.match_end() {
                    Some(x) => x,
                    None => return Err(CoreError::corrupt("the match is not over".to_string())),
                }
            };
            if e.winners != State::seat_list(w)
                || e.reason != REASONS[reason as usize]
                || e.totals.as_slice() != &s.totals[..n]
            {
                return Err(CoreError::corrupt(
                    "match result does not fit the totals".to_string(),
                ));
            }
            s.winners = w;
            s.end_reason = reason;
            s.aborted = e.aborted;
            s.phase = Phase::Over;
        }
    }
    Ok(())
}
