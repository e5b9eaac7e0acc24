//! Configuration and options, the state, and applying events to it (a log is never trusted blindly).

use crate::error::{CoreError, CoreResult};
use crate::game::{OptionSpec, OptionValues};
use crate::proto::qwirkle as pb;

use super::board::{Board, Overlay, MAXC};
use super::plays::check_play;
use super::tiles::{group_size, id_set, ids_list, ids_types, line_points, LineSet, ALL_IDS, TYPES};

// ------------------------------------------------------------------------------------------------
// Configuration and state

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub(super) seats: u32,
    /// Age per seat (bigger = older), or None when unknown.
    pub(super) ages: Option<[u32; 4]>,
    pub(super) idle_cap: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Setup,
    Opening,
    Turn,
    Over,
}

#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub(super) config: Config,
    pub phase: Phase,
    pub board: Board,
    pub(super) hands: [u128; 4],
    pub(super) bag: u128,
    pub(super) scores: [i64; 4],
    pub(super) announced: [u8; 4],
    pub current: u32,
    pub(super) start_seat: u32,
    pub(super) idle: u32,
    pub(super) turns: u32,
    pub(super) end_reason: pb::EndReason,
    pub(super) aborted: bool,
}

impl State {
    pub(super) fn seats(&self) -> u32 {
        self.config.seats
    }
    pub(super) fn next(&self, s: u32) -> u32 {
        (s + 1) % self.seats()
    }
    pub fn hand_types(&self, seat: u32) -> u64 {
        ids_types(self.hands[seat as usize & 3])
    }
    pub(super) fn hand_counts(&self, seat: u32) -> [u8; TYPES] {
        let mut c = [0u8; TYPES];
        for id in ids_list(self.hands[seat as usize & 3]) {
            c[id as usize / 3] += 1;
        }
        c
    }
    /// Types still in the bag or in some hand.
    pub(super) fn available(&self) -> u128 {
        let mut ids = self.bag;
        for h in &self.hands[..self.seats() as usize] {
            ids |= h;
        }
        ids
    }
}

/// The `ages` option's name for people.
const AGES: &str = "Players' ages";

pub(super) fn parse_options(seats: u32, options: &OptionValues) -> CoreResult<Config> {
    let mut config = Config {
        seats,
        ages: None,
        idle_cap: options.int("max_idle_turns"),
    };
    let ages = options.text("ages");
    if !ages.is_empty() {
        let parts: Vec<&str> = ages.split(',').map(str::trim).collect();
        if parts.len() != seats as usize {
            return Err(CoreError::option(format!(
                "{AGES} must give one age per player, {seats} separated by commas, not {}",
                parts.len()
            )));
        }
        let mut parsed = [0u32; 4];
        for (i, p) in parts.iter().enumerate() {
            parsed[i] = p.parse::<u32>().map_err(|_| {
                CoreError::option(format!("{AGES} must be whole numbers, not {p:?}"))
            })?;
        }
        config.ages = Some(parsed);
    }
    Ok(config)
}

pub(super) fn options() -> Vec<OptionSpec> {
    vec![
        OptionSpec::text(
            "ages",
            AGES,
            64,
            "",
            "Each player's age, in seat order and separated by commas (e.g. 30,40). When two players tie for the longest opening group, the older starts; left empty, the lower seat starts. Default: empty.",
        ),
        OptionSpec::int(
            "max_idle_turns",
            "Idle turns before the match stops",
            1000,
            1,
            1_000_000,
            "Safety limit: after this many turns in a row without a tile laid, the match is stopped with no winner (1 to 1000000). Default: 1000.",
        ),
    ]
}

pub(super) fn initial(config: &Config) -> State {
    State {
        config: config.clone(),
        phase: Phase::Setup,
        board: Board::default(),
        hands: [0; 4],
        bag: ALL_IDS,
        scores: [0; 4],
        announced: [0; 4],
        current: 0,
        start_seat: 0,
        idle: 0,
        turns: 0,
        end_reason: pb::EndReason::Unspecified,
        aborted: false,
    }
}

pub(super) fn evolve(state: &mut State, event: &pb::Event) -> CoreResult<()> {
    let Some(kind) = &event.kind else {
        return Err(CoreError::corrupt("event without kind"));
    };
    let seats = state.seats();
    match kind {
        pb::event::Kind::Dealt(d) => {
            if state.phase != Phase::Setup
                || !state.board.is_empty()
                || state.hands.iter().any(|&h| h != 0)
            {
                return Err(CoreError::corrupt("deal outside setup"));
            }
            if d.hands.len() != seats as usize {
                return Err(CoreError::corrupt("deal does not cover every seat"));
            }
            for (i, h) in d.hands.iter().enumerate() {
                let set = id_set(&h.tile_ids)?;
                if h.seat != i as u32
                    || h.tile_ids.len() != 6
                    || h.count != 6
                    || set & !state.bag != 0
                {
                    return Err(CoreError::corrupt("deal does not fit the bag"));
                }
                state.bag &= !set;
                state.hands[i] = set;
            }
        }
        pb::event::Kind::Announced(a) => {
            if state.phase != Phase::Setup
                || state.hands[0] == 0
                || a.group_sizes.len() != seats as usize
            {
                return Err(CoreError::corrupt("announcement out of place"));
            }
            for s in 0..seats {
                let g = group_size(state.hand_types(s));
                if a.group_sizes[s as usize] != g {
                    return Err(CoreError::corrupt(
                        "announced group size does not match the hand",
                    ));
                }
                state.announced[s as usize] = g as u8;
            }
            if a.start_seat != start_player(&state.config, &state.announced[..seats as usize]) {
                return Err(CoreError::corrupt(
                    "start seat does not follow the start-player rule",
                ));
            }
            state.start_seat = a.start_seat;
            state.current = a.start_seat;
            state.phase = Phase::Opening;
        }
        pb::event::Kind::Placed(p) => {
            let want = if p.opening {
                Phase::Opening
            } else {
                Phase::Turn
            };
            if state.phase != want || p.seat != state.current {
                return Err(CoreError::corrupt("placement out of turn"));
            }
            let set = id_set(&p.tile_ids)?;
            let hand = state.hands[p.seat as usize];
            if set & !hand != 0
                || p.tile_ids.len() != p.placements.len()
                || p.placements.is_empty()
                || p.placements.len() > 6
                || p.points > 90
            {
                return Err(CoreError::corrupt("placed tiles do not fit the hand"));
            }
            for (q, &id) in p.placements.iter().zip(&p.tile_ids) {
                if q.x.unsigned_abs() > MAXC as u32
                    || q.y.unsigned_abs() > MAXC as u32
                    || q.tile_type != id / 3
                    || state.board.at(q.x, q.y) != 0
                {
                    return Err(CoreError::corrupt("placement on a bad cell"));
                }
            }
            // The play itself must be legal and scored right (a log is never trusted blindly).
            if p.opening {
                let mut line = LineSet::default();
                for (i, q) in p.placements.iter().enumerate() {
                    line = line.with(q.tile_type as u8);
                    if (q.x, q.y) != (i as i32, 0) {
                        return Err(CoreError::corrupt("opening play off its canonical cells"));
                    }
                }
                let g = p.placements.len() as u32;
                if g != state.announced[p.seat as usize] as u32
                    || !line.valid()
                    || p.points != line_points(g).max(1)
                {
                    return Err(CoreError::corrupt(
                        "opening play is not the announced group or is mis-scored",
                    ));
                }
            } else {
                let pl: Vec<(i32, i32, u32)> = p
                    .placements
                    .iter()
                    .map(|q| (q.x, q.y, q.tile_type))
                    .collect();
                match check_play(&state.board, &state.hand_counts(p.seat), &pl) {
                    Ok((_, score)) if score == p.points => {}
                    Ok(_) => return Err(CoreError::corrupt("play is mis-scored")),
                    Err(e) => {
                        return Err(CoreError::corrupt(format!("illegal play in the log: {e}")))
                    }
                }
            }
            for (q, &id) in p.placements.iter().zip(&p.tile_ids) {
                state.board.put(q.x, q.y, id);
            }
            state.hands[p.seat as usize] &= !set;
            state.scores[p.seat as usize] += p.points as i64;
            state.idle = 0;
            state.turns += 1;
            state.phase = Phase::Turn;
            state.current = state.next(p.seat);
        }
        pb::event::Kind::Drew(d) => {
            let set = id_set(&d.tile_ids)?;
            if d.seat >= seats
                || set & !state.bag != 0
                || d.count as usize != d.tile_ids.len()
                || state.phase != Phase::Turn
            {
                return Err(CoreError::corrupt("draw does not fit the bag"));
            }
            let h = &mut state.hands[d.seat as usize];
            if (*h | set).count_ones() > 6 {
                return Err(CoreError::corrupt("draw overfills a hand"));
            }
            *h |= set;
            state.bag &= !set;
        }
        pb::event::Kind::Exchanged(x) => {
            let drawn = id_set(&x.drawn_ids)?;
            let ret = id_set(&x.returned_ids)?;
            let hand = state.hands[x.seat as usize & 3];
            if state.phase != Phase::Turn
                || x.seat != state.current
                || drawn & !state.bag != 0
                || ret & !hand != 0
                || x.drawn_ids.len() != x.returned_ids.len()
                || x.count as usize != x.drawn_ids.len()
                || x.count == 0
            {
                return Err(CoreError::corrupt("exchange does not fit"));
            }
            state.hands[x.seat as usize] = (hand & !ret) | drawn;
            state.bag = (state.bag & !drawn) | ret;
            state.idle += 1;
            state.turns += 1;
            state.current = state.next(x.seat);
        }
        pb::event::Kind::Passed(p) => {
            // A pass with tiles in the bag is a timed-out seat's (§11): the clock passes for
            // it where the seat itself could not (AMB7, AMB8 bind the seat's own choice).
            if state.phase != Phase::Turn || p.seat != state.current {
                return Err(CoreError::corrupt("pass out of place"));
            }
            state.idle += 1;
            state.turns += 1;
            state.current = state.next(p.seat);
        }
        pb::event::Kind::Ended(e) => {
            if matches!(state.phase, Phase::Setup | Phase::Over)
                || e.final_scores.len() != seats as usize
                || e.bonus > 6
                || e.bonus_seat >= seats
            {
                return Err(CoreError::corrupt("end out of place"));
            }
            let reason = pb::EndReason::try_from(e.reason)
                .map_err(|_| CoreError::corrupt("unknown end reason"))?;
            let fits = match reason {
                pb::EndReason::Unspecified => false,
                pb::EndReason::HandEmptied => {
                    e.bonus == 6
                        && state.hands[e.bonus_seat as usize] == 0
                        && state.bag == 0
                        && !e.aborted
                }
                pb::EndReason::Blocked => e.bonus == 0 && is_blocked(state) && !e.aborted,
                pb::EndReason::IdleCap => {
                    e.bonus == 0 && state.idle >= state.config.idle_cap && e.aborted
                }
                // The seat to act forfeited (§11); `current` stays the forfeiting seat.
                pb::EndReason::Forfeit => {
                    e.bonus == 0 && e.bonus_seat == state.current && !e.aborted
                }
            };
            if !fits {
                return Err(CoreError::corrupt("the end does not follow from the state"));
            }
            state.scores[e.bonus_seat as usize] += e.bonus as i64;
            if state.scores[..seats as usize] != e.final_scores[..] {
                return Err(CoreError::corrupt("final scores do not match the log"));
            }
            state.phase = Phase::Over;
            state.end_reason = reason;
            state.aborted = e.aborted;
        }
    }
    Ok(())
}

pub(super) fn check_invariants(state: &State) -> Result<(), String> {
    let seats = state.seats() as usize;
    let mut seen = state.bag;
    if state.bag & state.board.ids != 0 {
        return Err("a tile is both in the bag and on the board".into());
    }
    seen |= state.board.ids;
    for (s, &h) in state.hands.iter().enumerate() {
        if s >= seats {
            if h != 0 {
                return Err(format!("hand of absent seat {s}"));
            }
            continue;
        }
        if h & seen != 0 {
            return Err(format!("seat {s} holds a tile that is elsewhere"));
        }
        if h.count_ones() > 6 {
            return Err(format!("seat {s} holds {} tiles", h.count_ones()));
        }
        // Between a placement and its refill, only the seat that just played may be short.
        if state.phase != Phase::Setup
            && state.bag != 0
            && h.count_ones() != 6
            && s as u32 != (state.current + state.seats() - 1) % state.seats()
        {
            return Err(format!(
                "seat {s} holds {} tiles while the bag is not empty",
                h.count_ones()
            ));
        }
        seen |= h;
    }
    if seen != ALL_IDS {
        return Err("tiles are not conserved (108)".into());
    }
    if state.board.tiles.len() != state.board.ids.count_ones() as usize {
        return Err("board list and id set disagree".into());
    }
    for &(x, y, id) in &state.board.tiles {
        if state.board.at(x as i32, y as i32) != id / 3 + 1 {
            return Err("board grid and tile list disagree".into());
        }
    }
    state.board.lines_valid()?;
    for s in 0..seats {
        let sc = state.scores[s];
        if !(0..=84 * 108 + 6).contains(&sc) {
            return Err(format!("score {sc} out of bounds"));
        }
    }
    match state.phase {
        Phase::Setup | Phase::Opening if !state.board.is_empty() => {
            return Err("tiles on the table before the opening".into())
        }
        Phase::Turn if state.board.is_empty() => {
            return Err("no tile on the table after the opening".into())
        }
        _ => {}
    }
    if state.current >= state.seats() {
        return Err("current seat out of range".into());
    }
    Ok(())
}

/// At a decision, the match has not passed its idle cap (AMB18): the turn that reaches it ends
/// the match in the same command, so the state between its events may show the cap reached.
pub(super) fn check_decision_point(state: &State) -> Result<(), String> {
    if state.phase != Phase::Over && state.idle >= state.config.idle_cap {
        return Err("idle cap passed without an end".into());
    }
    Ok(())
}

/// Spec `is_blocked()`: no type still in the bag or a hand fits anywhere on the table.
pub(super) fn is_blocked(state: &State) -> bool {
    let ov = Overlay {
        board: &state.board,
        extra: &[],
    };
    !state.board.is_empty() && ov.blocked(ids_types(state.available()))
}

pub(super) fn start_player(config: &Config, g: &[u8]) -> u32 {
    let best = g.iter().copied().max().unwrap_or(0);
    let tied: Vec<u32> = (0..g.len() as u32)
        .filter(|&s| g[s as usize] == best)
        .collect();
    match config.ages {
        Some(ages) => {
            let oldest = tied.iter().map(|&s| ages[s as usize]).max().unwrap_or(0);
            tied.into_iter()
                .find(|&s| ages[s as usize] == oldest)
                .unwrap_or(0)
        }
        None => tied.first().copied().unwrap_or(0),
    }
}
