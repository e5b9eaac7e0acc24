//! Config and options, the State, and applying events to it (`evolve` and the mutations it
//! shares with the simulation hot path).

use super::cards::{
    bit, card_from_pb, card_mask, card_name, rank, DECK, HAND, JACK, MAX_EXTRA_ROUNDS, MAX_HISTORY,
    MAX_ROUNDS_OPTION, NONE, QUEEN, STOCK,
};
use super::Carre;
use crate::error::{CoreError, CoreResult};
use crate::game::{Game, OptionSpec, OptionValues};
use crate::proto::carre as pb;

use pb::event::Kind as Ev;

// ------------------------------------------------------------------ config and options

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub(super) rounds: u8,
    pub(super) go_out_without_draw: bool,
    pub(super) tiebreak: bool,
    /// Cell index (0..9) of Ace..Nine.
    pub(super) cell_of_rank: [u8; 9],
    pub(super) first_starter: Option<u8>,
}

impl Default for Config {
    /// The configuration of the options' defaults.
    fn default() -> Self {
        Carre::configure(2, &OptionValues::defaults(&Carre::options()))
            .expect("the defaults configure a match")
    }
}

/// The `cell_of_rank` option's name for people.
const CELL_OF_RANK: &str = "Cells of the ranks";

pub(super) fn options() -> Vec<OptionSpec> {
    vec![
        OptionSpec::int(
            "rounds_per_match",
            "Rounds per match",
            4,
            1,
            MAX_ROUNDS_OPTION as u32,
            "How many rounds the match lasts, 1 to 12; the players take turns starting a round. Default: 4.",
        ),
        OptionSpec::choice(
            "allow_go_out_without_draw",
            "Going out without a draw",
            &["true", "false"],
            "true",
            "true: once the stock is empty, a player may go out without drawing first; false: going out always follows a draw. Default: true.",
        ),
        OptionSpec::choice(
            "tiebreak_extra_rounds",
            "Extra rounds to break a tie",
            &["true", "false"],
            "false",
            "true: when the totals are equal after the last round, extra rounds are played (at most 8) until they differ; false: equal totals are a draw. Default: false.",
        ),
        OptionSpec::text(
            "cell_of_rank",
            CELL_OF_RANK,
            32,
            "123456789",
            "Which cell of the square (1 to 9, left to right and top to bottom) belongs to the ace, the 2, ... the 9, written as nine different digits. Default: 123456789 (the ace on cell 1, the 9 on cell 9).",
        ),
        OptionSpec::choice(
            "first_starter",
            "Who starts the first round",
            &["random", "0", "1"],
            "random",
            "Who starts the first round: random, or seat 0 or 1. Default: random.",
        ),
    ]
}

pub(super) fn configure(_seats: u32, options: &OptionValues) -> CoreResult<Config> {
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
            "{CELL_OF_RANK} must be the nine digits 1 to 9, each once (e.g. \"123456789\"), not {v:?}"
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

// ------------------------------------------------------------------ state

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
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
pub(super) struct Entry {
    pub(super) card: u8,
    /// owner * 9 + cell index
    pub(super) cell: u8,
    pub(super) down: bool,
    pub(super) by: u8,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct RoundRec {
    pub(super) went_out: u8,
    pub(super) raw: [u8; 2],
    pub(super) score: [u8; 2],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CellState {
    Empty,
    Up,
    Down,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct State {
    pub(super) cfg: Config,
    pub(super) phase: Phase,
    pub(super) round: u8,
    pub(super) first_starter: u8,
    pub(super) starter: u8,
    pub(super) current: u8,
    pub(super) drew: bool,
    pub(super) went_out: u8,
    pub(super) aborted: bool,
    /// The seat that forfeited when its time was up (match clocks, §11), or `NONE`.
    pub(super) forfeited: u8,
    pub(super) hands: [u64; 2],
    pub(super) stock: [u8; STOCK],
    pub(super) stock_pos: u8,
    pub(super) discard: [u8; DECK],
    pub(super) n_discard: u8,
    pub(super) log: [Entry; DECK],
    pub(super) n_placed: u8,
    pub(super) top: [[u8; 9]; 2],
    pub(super) mask: [[u8; 9]; 2],
    pub(super) totals: [u32; 2],
    pub(super) history: [RoundRec; MAX_HISTORY],
    pub(super) n_history: u8,
}

impl State {
    pub(super) fn new(cfg: Config) -> Self {
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
    pub(super) fn cell_state(&self, owner: u8, idx: u8) -> CellState {
        let t = self.top[owner as usize][idx as usize];
        if t == NONE {
            CellState::Empty
        } else if self.log[t as usize].down {
            CellState::Down
        } else {
            CellState::Up
        }
    }

    pub(super) fn stock_left(&self) -> usize {
        STOCK - self.stock_pos as usize
    }

    pub(super) fn expected_starter(&self, round: u8) -> u8 {
        if round % 2 == 1 {
            self.first_starter
        } else {
            1 - self.first_starter
        }
    }

    // ---- mutations (shared by `evolve` and the simulation hot path; callers check legality)

    pub(super) fn deal(&mut self, round: u8, starter: u8, hands: [u64; 2], stock: &[u8; STOCK]) {
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
    pub(super) fn draw(&mut self) -> u8 {
        let c = self.stock[self.stock_pos as usize];
        self.stock_pos += 1;
        self.hands[self.current as usize] |= bit(c);
        self.drew = true;
        self.phase = Phase::Action;
        c
    }

    #[inline]
    pub(super) fn place(&mut self, seat: u8, card: u8, owner: u8, idx: u8, down: bool) {
        self.hands[seat as usize] &= !bit(card);
        let n = self.n_placed as usize;
        self.log[n] = Entry {
            card,
            cell: owner * 9 + idx,
            down,
            by: seat,
        };
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

    pub(super) fn pass(&mut self) {
        self.current ^= 1;
        self.phase = Phase::Action;
    }

    #[inline]
    pub(super) fn apply_move(&mut self, seat: u8, mv: Move) {
        match mv {
            Move::GoOut => self.go_out(seat),
            Move::Discard(c) => self.discard_card(seat, c),
            Move::Place(c, owner, idx) => {
                let r = rank(c);
                self.place(seat, c, owner, idx, r == JACK || r == QUEEN)
            }
        }
    }

    pub(super) fn record_round(&mut self, rec: RoundRec) {
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

    /// Cards of a pile, bottom to top.
    pub(super) fn pile(&self, owner: u8, idx: u8) -> impl Iterator<Item = &Entry> {
        let cell = owner * 9 + idx;
        self.log[..self.n_placed as usize]
            .iter()
            .filter(move |e| e.cell == cell)
    }
}

// ------------------------------------------------------------------ applying events

fn seat_u8(seat: u32, what: &str) -> CoreResult<u8> {
    if seat < 2 {
        Ok(seat as u8)
    } else {
        Err(CoreError::corrupt(format!(
            "{what}: seat {seat} is not 0 or 1"
        )))
    }
}

pub(super) fn evolve(s: &mut State, event: &pb::Event) -> CoreResult<()> {
    let kind = event
        .kind
        .as_ref()
        .ok_or_else(|| CoreError::corrupt("event has no kind"))?;
    match kind {
        Ev::MatchStarted(m) => {
            if s.phase != Phase::NotStarted {
                return Err(CoreError::corrupt("match_started twice"));
            }
            let first = seat_u8(m.first_starter, "match_started")?;
            if s.cfg.first_starter.is_some_and(|f| f != first) {
                return Err(CoreError::corrupt(
                    "match_started contradicts the first_starter option",
                ));
            }
            if m.rounds_per_match != s.cfg.rounds as u32 {
                return Err(CoreError::corrupt(
                    "match_started with another rounds_per_match than configured",
                ));
            }
            s.first_starter = first;
            s.phase = Phase::Dealing;
        }
        Ev::RoundDealt(d) => Carre::evolve_dealt(s, d)?,
        Ev::CardDrawn(d) => {
            Carre::expect_turn(s, Phase::Drawing, d.seat, "card_drawn")?;
            let c = card_from_pb(d.card.as_ref())
                .ok_or_else(|| CoreError::corrupt("card_drawn without its card"))?;
            if c != s.stock[s.stock_pos as usize] || d.stock_size != (s.stock_left() - 1) as u32 {
                return Err(CoreError::corrupt("card_drawn is not the top of the stock"));
            }
            s.draw();
        }
        Ev::TurnPassed(p) => {
            Carre::expect_turn(s, Phase::Passing, p.seat, "turn_passed")?;
            s.pass();
        }
        Ev::CardPlaced(p) => {
            let seat = Carre::expect_turn(s, Phase::Action, p.seat, "card_placed")?;
            let c = card_from_pb(p.card.as_ref())
                .ok_or_else(|| CoreError::corrupt("card_placed without its card"))?;
            let owner = seat_u8(p.square_owner, "card_placed square")?;
            if !(1..=9).contains(&p.cell) {
                return Err(CoreError::corrupt("card_placed on a cell outside 1..9"));
            }
            let idx = (p.cell - 1) as u8;
            let down = s
                .check_place(seat, c, owner, idx)
                .map_err(|e| CoreError::corrupt(format!("card_placed: {e}")))?;
            if down != p.face_down {
                return Err(CoreError::corrupt("card_placed with the wrong face"));
            }
            s.place(seat, c, owner, idx, down);
        }
        Ev::CardDiscarded(d) => {
            let seat = Carre::expect_turn(s, Phase::Action, d.seat, "card_discarded")?;
            let c = card_from_pb(d.card.as_ref())
                .ok_or_else(|| CoreError::corrupt("card_discarded without its card"))?;
            if s.hands[seat as usize] & bit(c) == 0 {
                return Err(CoreError::corrupt("card_discarded from outside the hand"));
            }
            s.discard_card(seat, c);
        }
        Ev::WentOut(w) => {
            let seat = Carre::expect_turn(s, Phase::Action, w.seat, "went_out")?;
            let raw = s
                .check_go_out(seat)
                .map_err(|e| CoreError::corrupt(format!("went_out: {e}")))?;
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
            if *r != Carre::scored_event(s, &rec) {
                return Err(CoreError::corrupt(
                    "round_scored does not match the squares",
                ));
            }
            s.record_round(rec);
        }
        Ev::MatchEnded(m) if s.phase == Phase::Action => {
            // Only a forfeit ends the match in the middle of a turn: the seat to act's (§11).
            let mut ended = *s;
            ended.forfeited = s.current;
            let (winners, result) = ended.result();
            if m.totals != s.totals
                || m.winners != winners
                || m.result != result as i32
                || m.rounds_played != s.n_history as u32
            {
                return Err(CoreError::corrupt("match_ended does not match a forfeit"));
            }
            s.forfeited = s.current;
            s.phase = Phase::Over;
        }
        Ev::MatchEnded(m) => {
            if s.phase != Phase::Ending {
                return Err(CoreError::corrupt(
                    "match_ended before the last round was scored",
                ));
            }
            let (winners, result) = s.result();
            if m.totals != s.totals
                || m.winners != winners
                || m.result != result as i32
                || m.rounds_played != s.n_history as u32
            {
                return Err(CoreError::corrupt("match_ended does not match the totals"));
            }
            s.phase = Phase::Over;
        }
    }
    Ok(())
}

impl Carre {
    fn evolve_dealt(s: &mut State, d: &pb::RoundDealt) -> CoreResult<()> {
        if s.phase != Phase::Dealing {
            return Err(CoreError::corrupt("round_dealt outside a deal"));
        }
        if d.round != s.round as u32 + 1 {
            return Err(CoreError::corrupt(format!(
                "round_dealt for round {} after round {}",
                d.round, s.round
            )));
        }
        let round = s.round + 1;
        let starter = s.expected_starter(round);
        if d.starter != starter as u32 || d.dealer != 1 - starter as u32 {
            return Err(CoreError::corrupt(
                "round_dealt names the wrong starter or dealer",
            ));
        }
        if d.hands.len() != 2 || d.stock.len() != STOCK || d.stock_size != STOCK as u32 {
            return Err(CoreError::corrupt(
                "round_dealt needs two hands and the full stock",
            ));
        }
        let mut seen = 0u64;
        let mut take = |c: &pb::Card| -> CoreResult<u8> {
            let id = card_from_pb(Some(c))
                .ok_or_else(|| CoreError::corrupt("round_dealt holds a non-card"))?;
            if seen & bit(id) != 0 {
                return Err(CoreError::corrupt(format!(
                    "round_dealt deals {} twice",
                    card_name(id)
                )));
            }
            seen |= bit(id);
            Ok(id)
        };
        let mut hands = [0u64; 2];
        for (i, h) in d.hands.iter().enumerate() {
            if h.seat != i as u32 || h.cards.len() != HAND || h.count != HAND as u32 {
                return Err(CoreError::corrupt(
                    "round_dealt hand out of order or not 8 cards",
                ));
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
            return Err(CoreError::corrupt(format!(
                "{what} by seat {seat}, but seat {} is to move",
                s.current
            )));
        }
        Ok(seat)
    }
}

/// A move in the compact internal form (the hot path never builds protobuf messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Move {
    GoOut,
    Discard(u8),
    /// card, owner seat, cell index 0..9
    Place(u8, u8, u8),
}
