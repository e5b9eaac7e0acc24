//! Match clocks, offered by the registry for every game (no game code involved).
//!
//! A match created with a clock option gives each awaited seat a deadline. A seat's wait
//! starts at the recorded time of the event after which the seat is awaited (or of its own
//! last command, when it stays awaited through it); it ends when the seat acts or stops being
//! awaited. The deadline of a wait is its start plus the smaller of the per-move limit and the
//! seat's bank; a wait ending charges the bank with its length (never below zero), and each
//! command that acts for the seat adds the increment. Simultaneous decisions (every seat in
//! `to_act`) run each seat's own wait.
//!
//! Time never enters the rules: the service gives each stored event's recorded time to
//! [`Clock::step`] after applying it (so banks are derived from the log, the same on every
//! replay), and gives the timeout command (`timeout:<seat>`) once the deadline has passed.
//! The core decides what the timeout does: a [`SEAT_TIMED_OUT`] event, then the events of the
//! policy chosen at creation ([`Policy`]).

use crate::error::{CoreError, CoreResult};
use crate::game::{OptionKind, OptionSpec, OptionValues, Seat, Seats};

pub const MOVE: &str = "clock_move_seconds"; // each name starts with game::CLOCK_PREFIX
pub const BANK: &str = "clock_bank_seconds";
pub const INCREMENT: &str = "clock_increment_seconds";
pub const POLICY: &str = "clock_timeout";
/// Host command (reserved in every game) that times out a seat: `timeout:<seat>`.
pub const TIMEOUT_COMMAND: &str = "timeout:";
/// Kind of the generic event recorded first by a timeout (`tablier.v1.SeatTimedOut`).
pub const SEAT_TIMED_OUT: &str = "seat_timed_out";
/// Policy every game offers: the game's strongest bot moves for the seat.
pub const BOT: &str = "bot";
/// Policy of every game whose evaluator has rollouts: the `evaluator` bot moves for the seat.
pub const EVALUATOR: &str = "evaluator";
pub const EVALUATOR_HELP: &str = "evaluator: the move evaluator's bot moves for them, from what \
     they may see only, with a fixed number of rollouts (about 50 ms of one core).";

/// The clock options' names for people (`OptionSpec::label`).
const MOVE_LABEL: &str = "Seconds per move";
const BANK_LABEL: &str = "Time bank in seconds";
const INCREMENT_LABEL: &str = "Seconds added after each move";
const POLICY_LABEL: &str = "What happens when time runs out";

const MAX_MOVE: u32 = 7 * 86_400;
const MAX_BANK: u32 = 30 * 86_400;
const MAX_INCREMENT: u32 = 86_400;

/// The clock options every game type lists, after its own. `policies` are the timeout
/// policies the game offers besides `bot`, `help` what they do.
pub fn options(policies: &[&'static str], help: &str) -> Vec<OptionSpec> {
    let mut allowed = vec![BOT];
    allowed.extend(policies);
    vec![
        OptionSpec::int(MOVE, MOVE_LABEL, 0, 0, MAX_MOVE, format!(
            "Match clock: the most seconds a player may take for one move (0 to {MAX_MOVE}; 0: no limit per move). Default: 0."
        )),
        OptionSpec::int(BANK, BANK_LABEL, 0, 0, MAX_BANK, format!(
            "Match clock: each player's time bank in seconds, spent while the table waits for them (0 to {MAX_BANK}; \
             0: no bank). A move must come before the bank is spent. Default: 0."
        )),
        OptionSpec::int(INCREMENT, INCREMENT_LABEL, 0, 0, MAX_INCREMENT, format!(
            "Match clock: seconds added to a player's bank after each of their moves (0 to {MAX_INCREMENT}; \
             needs a bank). Default: 0."
        )),
        OptionSpec {
            name: POLICY,
            label: POLICY_LABEL,
            kind: OptionKind::Choice(allowed),
            default: BOT.into(),
            description: format!(
                "Match clock: what happens when a player's time is up. bot: the game's strongest bot moves for \
                 them.{}{help} Default: bot.",
                if help.is_empty() { "" } else { " " }
            ),
        },
    ]
}

/// What the host chose for a seat whose time is up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockConfig {
    pub move_ms: i64,
    pub bank_ms: Option<i64>,
    pub increment_ms: i64,
    pub policy: String,
}

/// The clock of a match from its checked options (None when no limit is set). Refuses an
/// increment without a bank, and a policy given without a clock.
pub fn configure(options: &OptionValues) -> CoreResult<Option<ClockConfig>> {
    let (move_s, bank_s, inc_s) = (options.int(MOVE), options.int(BANK), options.int(INCREMENT));
    if inc_s > 0 && bank_s == 0 {
        return Err(CoreError::option(format!(
            "{INCREMENT_LABEL} need a time bank (they are added to it)"
        )));
    }
    if move_s == 0 && bank_s == 0 {
        if options.given(POLICY) {
            return Err(CoreError::option(format!(
                "{POLICY_LABEL} needs a clock: seconds per move or a time bank"
            )));
        }
        return Ok(None);
    }
    Ok(Some(ClockConfig {
        move_ms: i64::from(move_s) * 1000,
        bank_ms: (bank_s > 0).then(|| i64::from(bank_s) * 1000),
        increment_ms: i64::from(inc_s) * 1000,
        policy: options.text(POLICY).to_string(),
    }))
}

/// The seat a `timeout:<seat>` command names, if `command` is one.
pub fn timeout_seat(command: &str) -> Option<CoreResult<Seat>> {
    let rest = command.strip_prefix(TIMEOUT_COMMAND)?;
    Some(
        rest.parse::<Seat>()
            .map_err(|_| CoreError::malformed(format!("{command:?} names no seat"))),
    )
}

/// Each seat's bank and current wait, derived from the recorded times of the events applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clock {
    pub config: ClockConfig,
    /// Per seat: the bank (ms) when its current wait started, or now when it is not awaited.
    bank: Vec<i64>,
    /// Per seat: when its current wait started (ms since the Unix epoch), None when not awaited.
    since: Vec<Option<i64>>,
    /// The command of the last event stepped: a command's later events add no increment.
    last_command: Option<String>,
}

impl Clock {
    pub fn new(config: ClockConfig, seats: u32) -> Clock {
        let bank = config.bank_ms.unwrap_or(0);
        Clock {
            config,
            bank: vec![bank; seats as usize],
            since: vec![None; seats as usize],
            last_command: None,
        }
    }

    /// After an event recorded at `at` (ms) by the command `command` acting for `actor`,
    /// with `to_act` the seats awaited after it.
    pub fn step(&mut self, to_act: Seats, actor: Option<Seat>, command: Option<&str>, at: i64) {
        let new_command = command.is_none() || self.last_command.as_deref() != command;
        for s in 0..self.since.len() {
            let seat = s as Seat;
            let awaited = to_act.contains(seat);
            let acted = actor == Some(seat);
            match self.since[s] {
                Some(start) if acted || !awaited => {
                    if self.config.bank_ms.is_some() {
                        self.bank[s] = (self.bank[s] - (at - start).max(0)).max(0);
                    }
                    self.since[s] = awaited.then_some(at);
                }
                Some(_) => {}
                None => self.since[s] = awaited.then_some(at),
            }
            if acted && new_command && self.config.bank_ms.is_some() {
                self.bank[s] += self.config.increment_ms;
            }
        }
        self.last_command = command.map(str::to_string);
    }

    /// When the current wait of `seat` times out (ms), None when it is not awaited.
    pub fn deadline(&self, seat: Seat) -> Option<i64> {
        let start = (*self.since.get(seat as usize)?)?;
        let mut limit = i64::MAX;
        if self.config.move_ms > 0 {
            limit = self.config.move_ms;
        }
        if self.config.bank_ms.is_some() {
            limit = limit.min(self.bank[seat as usize]);
        }
        Some(start.saturating_add(limit))
    }

    /// Per seat: (bank in ms when its wait started or now; None without a bank, wait start,
    /// deadline).
    pub fn seats(&self) -> Vec<(Option<i64>, Option<i64>, Option<i64>)> {
        (0..self.since.len())
            .map(|s| {
                let bank = self.config.bank_ms.map(|_| self.bank[s]);
                (bank, self.since[s], self.deadline(s as Seat))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> crate::game::Options {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn clock_of(
        pairs: &[(&str, &str)],
        policies: &[&'static str],
    ) -> CoreResult<Option<ClockConfig>> {
        configure(&OptionValues::check(&options(policies, ""), &opts(pairs))?)
    }

    #[test]
    fn options_checked_with_reasons() {
        let clock = clock_of(&[(BANK, "60"), (INCREMENT, "2")], &[])
            .unwrap()
            .unwrap();
        assert_eq!(
            (
                clock.move_ms,
                clock.bank_ms,
                clock.increment_ms,
                clock.policy.as_str()
            ),
            (0, Some(60_000), 2000, BOT)
        );
        assert!(clock_of(&[], &[]).unwrap().is_none());
        for (bad, why) in [
            (
                opts(&[(MOVE, "-1")]),
                "Seconds per move must be a whole number from 0 to",
            ),
            (
                opts(&[(BANK, "many")]),
                "Time bank in seconds must be a whole number from 0 to",
            ),
            (
                opts(&[(INCREMENT, "5")]),
                "Seconds added after each move need a time bank",
            ),
            (
                opts(&[(POLICY, "bot")]),
                "What happens when time runs out needs a clock",
            ),
            (
                opts(&[(MOVE, "5"), (POLICY, "forfeit")]),
                "What happens when time runs out must be one of bot",
            ),
            (
                opts(&[("clock_typo", "5")]),
                "There is no clock option \"clock_typo\"",
            ),
        ] {
            let err = OptionValues::check(&options(&[], ""), &bad)
                .and_then(|v| configure(&v))
                .unwrap_err();
            assert!(
                matches!(err, CoreError::InvalidOption(_)) && err.to_string().contains(why),
                "{err}"
            );
            if !why.starts_with("There is no") {
                assert!(!err.to_string().contains("clock_"), "{err}");
            }
        }
        assert!(clock_of(&[(MOVE, "5"), (POLICY, "pass")], &["pass"]).is_ok());
    }

    #[test]
    fn banks_charge_waits_and_add_increments_once_per_command() {
        let config = clock_of(&[(BANK, "10"), (INCREMENT, "1"), (MOVE, "4")], &[])
            .unwrap()
            .unwrap();
        let mut c = Clock::new(config, 2);
        c.step(Seats::one(0), None, None, 1_000);
        assert_eq!(c.deadline(0), Some(5_000)); // the per-move limit is the nearer
        assert_eq!(c.deadline(1), None);
        // Seat 0 moves after 3 s in a command of two events.
        c.step(Seats::NONE, Some(0), Some("a"), 4_000);
        c.step(Seats::one(1), Some(0), Some("a"), 4_000);
        assert_eq!(c.seats()[0], (Some(8_000), None, None));
        assert_eq!(c.deadline(1), Some(8_000));
        // Seat 1 waits 9 s: its bank (10 s) is charged with it, plus its increment.
        c.step(Seats::from_iter([0, 1]), Some(1), Some("b"), 13_000);
        assert_eq!(c.seats()[1], (Some(2_000), Some(13_000), Some(15_000)));
        // Simultaneous waits run apart: seat 0's goes on when seat 1 acts.
        c.step(Seats::one(0), Some(1), Some("c"), 14_000);
        assert_eq!(c.deadline(0), Some(13_000 + 4_000));
        // A bank never goes below zero: a spent bank times out at once.
        c.step(Seats::one(1), Some(0), Some("d"), 30_000);
        assert_eq!(c.seats()[0].0, Some(1_000));
        c.step(Seats::one(0), Some(1), Some("e"), 40_000);
        assert_eq!(c.seats()[1].0, Some(1_000));
        c.step(Seats::one(1), Some(0), Some("f"), 40_500);
        assert_eq!(c.deadline(1), Some(41_500));
    }

    #[test]
    fn timeout_commands_name_a_seat() {
        assert_eq!(timeout_seat("timeout:3"), Some(Ok(3)));
        assert!(matches!(timeout_seat("timeout:x"), Some(Err(_))));
        assert_eq!(timeout_seat("close_knock_window"), None);
    }
}
