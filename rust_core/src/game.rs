//! The decider interface every game implements (one file per game under `games/`).
//!
//! * `decide` is pure: it reads the state, checks the action against the rules, and returns the
//!   events that record what happens, including every random outcome it drew from `rng`.
//! * `evolve` is the only way a state changes. It never draws randomness, so replaying stored
//!   events rebuilds the exact state (including the order of hidden piles).
//! * What a seat may know is decided here and nowhere else: `view` and `redact` are the only
//!   ways state or events leave the core for a player.

use std::collections::BTreeMap;

use crate::error::{CoreError, CoreResult};
use crate::proto::Outcome;
use crate::rng::Rng;

pub type Seat = u32;
pub type Options = BTreeMap<String, String>;

/// A set of seats (every game has at most 32), e.g. the seats whose decision is awaited.
/// Copy and allocation-free: drivers ask for it before every move.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Seats(u32);

impl Seats {
    pub const NONE: Seats = Seats(0);
    pub fn one(seat: Seat) -> Seats {
        Seats::NONE.with(seat)
    }
    /// The set whose bit `s` is set for each seat `s`.
    pub fn from_mask(mask: u32) -> Seats {
        Seats(mask)
    }
    pub fn mask(self) -> u32 {
        self.0
    }
    #[must_use]
    pub fn with(self, seat: Seat) -> Seats {
        debug_assert!(seat < 32);
        Seats(self.0 | 1u32.checked_shl(seat).unwrap_or(0))
    }
    pub fn contains(self, seat: Seat) -> bool {
        seat < 32 && self.0 >> seat & 1 == 1
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }
    /// The lowest seat.
    pub fn first(self) -> Option<Seat> {
        (self.0 != 0).then(|| self.0.trailing_zeros())
    }
    /// The `i`-th seat in increasing order.
    pub fn nth(self, i: usize) -> Option<Seat> {
        self.iter().nth(i)
    }
    /// Seats in increasing order.
    pub fn iter(self) -> impl Iterator<Item = Seat> {
        let mut m = self.0;
        std::iter::from_fn(move || {
            let s = (m != 0).then(|| m.trailing_zeros())?;
            m &= m - 1;
            Some(s)
        })
    }
    pub fn to_vec(self) -> Vec<Seat> {
        self.iter().collect()
    }
}

impl FromIterator<Seat> for Seats {
    fn from_iter<I: IntoIterator<Item = Seat>>(seats: I) -> Seats {
        seats.into_iter().fold(Seats::NONE, Seats::with)
    }
}

impl std::fmt::Debug for Seats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Who is looking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Viewer {
    /// A player: sees public information and its own private information.
    Seat(Seat),
    /// Sees public information only.
    Spectator,
    /// Sees everything (after the match, or with an operator credential).
    Auditor,
}

impl Viewer {
    pub fn is_seat(self, seat: Seat) -> bool {
        self == Viewer::Seat(seat)
    }
    /// True when this viewer may see what only `seat` (or the auditor) knows.
    pub fn sees_private_of(self, seat: Seat) -> bool {
        matches!(self, Viewer::Auditor) || self == Viewer::Seat(seat)
    }

    /// The viewer as every game's View names it (`tablier.v1.Viewer`).
    pub fn to_proto(self) -> crate::proto::Viewer {
        use crate::proto::viewer::{Auditor, Kind, Spectator};
        let kind = match self {
            Viewer::Seat(seat) => Kind::Seat(seat),
            Viewer::Spectator => Kind::Spectator(Spectator {}),
            Viewer::Auditor => Kind::Auditor(Auditor {}),
        };
        crate::proto::Viewer { kind: Some(kind) }
    }
}

/// One table option of a game, with its default.
#[derive(Clone, Debug)]
pub struct OptionSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub default: &'static str,
    /// Accepted values for an enumeration; empty for integers (bounds in the description).
    pub allowed: &'static [&'static str],
}

/// A host command the server gives by itself once the match has waited `seconds` in one
/// state, e.g. closing a knock window whose time is up. `key` tells one wait from the next: the
/// server restarts the clock only when the key changes (a new window), not on every event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer {
    pub command: &'static str,
    pub seconds: u32,
    pub key: u64,
}

pub trait Game: 'static {
    /// Validated match configuration (seat count and options).
    type Config: Clone + Send + Sync + 'static;
    type State: Clone + PartialEq + std::fmt::Debug + Send + Sync + 'static;
    type Action: prost::Message + Default + Clone + PartialEq + std::fmt::Debug + 'static;
    type Event: prost::Message + Default + Clone + PartialEq + std::fmt::Debug + 'static;
    type View: prost::Message + Default + 'static;

    /// Registry id, e.g. `qwirkle`.
    const ID: &'static str;
    const NAME: &'static str;
    /// Protobuf package of the game's messages, e.g. `tablier.qwirkle.v1`; it must define
    /// `Action`, `Event` and `View` (and `Position`/`Evaluation` when `HAS_EVALUATOR`).
    const PROTO_PACKAGE: &'static str;
    const MIN_PLAYERS: u32;
    const MAX_PLAYERS: u32;
    const HAS_EVALUATOR: bool = false;
    /// Bot names accepted by `bot_action`; the last one is the strongest.
    const BOTS: &'static [&'static str] = &["random"];
    /// Commands the table's host (the operator) may give during a match, e.g. ending a timed
    /// match after the round in progress. They are not moves of any seat.
    const HOST_COMMANDS: &'static [&'static str] = &[];

    fn options() -> Vec<OptionSpec>;

    /// Checks the seat count and options (unknown names, bad values): `InvalidOption`.
    /// Options absent from the map take their defaults.
    fn configure(seats: u32, options: &Options) -> CoreResult<Self::Config>;

    /// The state before anything happened (no randomness yet).
    fn initial(config: &Self::Config) -> Self::State;

    /// The events that open the match (shuffle, deal, automatic first steps).
    fn start(state: &Self::State, rng: &mut Rng) -> CoreResult<Vec<Self::Event>>;

    /// `start` and `evolve` in one step, as [`Game::play`] is to `decide`: on success `state` is
    /// the opened match and the opening events are appended to `events`. A game whose `start`
    /// builds the state anyway overrides it to build it in place.
    fn open(state: &mut Self::State, rng: &mut Rng, events: &mut Vec<Self::Event>) -> CoreResult<()> {
        let opening = Self::start(state, rng)?;
        let mut next = state.clone();
        for e in &opening {
            Self::evolve(&mut next, e)?;
        }
        *state = next;
        events.extend(opening);
        Ok(())
    }

    /// Checks `action` by `seat` against the rules and returns the events it causes, in order,
    /// including any automatic steps that follow it. Must not panic on any action.
    fn decide(state: &Self::State, seat: Seat, action: &Self::Action, rng: &mut Rng)
        -> CoreResult<Vec<Self::Event>>;

    /// Applies one event. Events come from `decide` or from storage; one that does not fit the
    /// state is `Corrupt` (the state may then be discarded, never used).
    fn evolve(state: &mut Self::State, event: &Self::Event) -> CoreResult<()>;

    /// `decide` and `evolve` in one step, for a driver that holds the live state (simulations,
    /// bots, the conformance harness): on success `state` is the state after the events, which
    /// are appended to `events`. A refused action changes neither; `Corrupt`, a bug in the core,
    /// may leave the state part-way, to be discarded as after a failed `evolve`. The result is
    /// exactly that of `decide` followed by `evolve` of each event (the conformance harness
    /// checks it at every step). A game whose `decide` builds the next state anyway overrides
    /// it to build it in place instead of re-checking its own events.
    fn play(
        state: &mut Self::State,
        seat: Seat,
        action: &Self::Action,
        rng: &mut Rng,
        events: &mut Vec<Self::Event>,
    ) -> CoreResult<()> {
        let decided = Self::decide(state, seat, action, rng)?;
        let mut next = state.clone();
        for e in &decided {
            Self::evolve(&mut next, e)?;
        }
        *state = next;
        events.extend(decided);
        Ok(())
    }

    /// Seats whose decision is awaited (several in simultaneous phases); empty when over.
    fn to_act(state: &Self::State) -> Seats;

    /// Appends every legal action of `seat` now to `out`, each once, in a deterministic order.
    /// Computed from what that seat may know. A driver that asks before every move passes the
    /// same buffer each time.
    fn legal_actions_into(state: &Self::State, seat: Seat, out: &mut Vec<Self::Action>);

    /// [`Game::legal_actions_into`] into a new vector.
    fn legal_actions(state: &Self::State, seat: Seat) -> Vec<Self::Action> {
        let mut out = Vec::new();
        Self::legal_actions_into(state, seat, &mut out);
        out
    }

    fn view(state: &Self::State, viewer: Viewer) -> Self::View;

    /// The event as `viewer` may see it, or `None` when it must not learn the event happened.
    fn redact(event: &Self::Event, viewer: Viewer) -> Option<Self::Event>;

    /// Stable snake_case name of the event's kind, stored beside its payload.
    fn event_type(event: &Self::Event) -> &'static str;

    /// `Some` once the match is over.
    fn outcome(state: &Self::State) -> Option<Outcome>;

    /// A move for `seat` from the named bot. Bots decide from what the seat may know only.
    fn bot_action(state: &Self::State, seat: Seat, bot: &str, rng: &mut Rng) -> CoreResult<Self::Action> {
        let _ = bot;
        let mut moves = Self::legal_actions(state, seat);
        if moves.is_empty() {
            return Err(CoreError::not_your_turn());
        }
        let i = rng.index(moves.len());
        Ok(moves.swap_remove(i))
    }

    /// The events a host command causes (one of `HOST_COMMANDS`; the registry refuses others).
    fn host_command(state: &Self::State, command: &str, rng: &mut Rng) -> CoreResult<Vec<Self::Event>> {
        let _ = (state, rng);
        Err(CoreError::Unsupported(format!("{} has no host command {command:?}", Self::ID)))
    }

    /// The timer running in this state, if any (its command is one of `HOST_COMMANDS`).
    fn timer(state: &Self::State) -> Option<Timer> {
        let _ = state;
        None
    }

    /// Timeout policies the game offers besides `bot` (match clocks, `clock::POLICY`), each
    /// decided by [`Game::timeout_events`]: e.g. `pass` (the seat makes the game's default
    /// move) or `forfeit`. A game that offers none needs nothing here.
    const TIMEOUT_POLICIES: &'static [&'static str] = &[];

    /// What each of `TIMEOUT_POLICIES` does, one sentence each, for the option's description
    /// in `ListGameTypes` (e.g. "pass: the seat passes its turn.").
    const TIMEOUT_HELP: &'static str = "";

    /// The events of `policy` (one of `TIMEOUT_POLICIES`) for the awaited `seat` whose time is
    /// up, following the `seat_timed_out` event the registry records first.
    fn timeout_events(state: &Self::State, seat: Seat, policy: &str, rng: &mut Rng) -> CoreResult<Vec<Self::Event>> {
        let _ = (state, seat, rng);
        Err(CoreError::Unsupported(format!("{} has no timeout policy {policy:?}", Self::ID)))
    }

    /// The match drawn for a terminal, as `viewer` may see it.
    fn render(state: &Self::State, viewer: Viewer) -> String;

    /// Legal moves with their scores for a caller-supplied position (`Position` bytes in,
    /// `Evaluation` bytes out). No match, no storage.
    fn evaluate(position: &[u8]) -> CoreResult<Vec<u8>> {
        let _ = position;
        Err(CoreError::Unsupported(format!("{} has no position evaluator", Self::ID)))
    }

    /// The `Position` (the input of [`Game::evaluate`]) that `seat` faces now, encoded: what
    /// the evaluator needs to list that seat's moves, built from what `seat` may know only
    /// (its own hidden cards or tiles, public information; never another seat's). The registry
    /// gives it to that seat and to the auditor only. `None` for games without an evaluator;
    /// a game with `HAS_EVALUATOR` returns `Some` in every state, and `evaluate` accepts it.
    fn position(state: &Self::State, seat: Seat) -> Option<Vec<u8>> {
        let _ = (state, seat);
        None
    }

    /// Invariants the conformance harness checks after every event (scores in bounds, card
    /// counts conserved, ...). `Err` describes the violation.
    fn check_invariants(state: &Self::State) -> Result<(), String> {
        let _ = state;
        Ok(())
    }
}

/// An integer option from `lo` to `hi` (spaces around it allowed), or `default` when absent.
pub fn int_option(options: &Options, name: &str, default: u32, lo: u32, hi: u32) -> CoreResult<u32> {
    match options.get(name) {
        None => Ok(default),
        Some(v) => match v.trim().parse::<u32>() {
            Ok(x) if (lo..=hi).contains(&x) => Ok(x),
            _ => Err(CoreError::option(format!("option {name} must be an integer from {lo} to {hi}, not {v:?}"))),
        },
    }
}

/// Decodes an action sent by a client. Undecodable bytes are `Malformed`, never a panic.
pub fn decode<M: prost::Message + Default>(bytes: &[u8], what: &str) -> CoreResult<M> {
    M::decode(bytes).map_err(|e| CoreError::malformed(format!("cannot decode {what}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    #[test]
    fn integer_options_read_and_refuse_alike_in_every_game() {
        let one = |k: &str, v: &str| Options::from([(k.to_string(), v.to_string())]);
        assert_eq!(int_option(&Options::new(), "n", 7, 1, 9).unwrap(), 7);
        assert_eq!(int_option(&one("n", " 5 "), "n", 7, 1, 9).unwrap(), 5);
        for bad in ["0", "10", "-1", "4294967296", "five", ""] {
            let e = int_option(&one("n", bad), "n", 7, 1, 9).unwrap_err();
            assert_eq!(e.to_string(), format!("invalid option: option n must be an integer from 1 to 9, not {bad:?}"));
        }
        // Every game's integer options go through it.
        let integers = [
            ("qwirkle", "max_idle_turns"),
            ("rat_a_tat_cat", "point_limit"),
            ("rat_a_tat_cat", "rounds"),
            ("rat_a_tat_cat", "max_turns_per_round"),
            ("rat_a_tat_cat", "admin_turn_cap"),
            ("democratie", "target"),
            ("democratie", "max_deals"),
            ("grid_knock", "target_score"),
            ("grid_knock", "turn_cap"),
            ("grid_knock", "knock_timeout"),
            ("carre", "rounds_per_match"),
        ];
        for (id, name) in integers {
            let game = registry::find(id).unwrap();
            let info = game.info();
            let default = &info.options.iter().find(|o| o.name == name).expect("listed").default_value;
            assert!(game.new_match(info.min_players, &one(name, &format!(" {default} "))).is_ok(), "{id} {name}");
            let err = game.new_match(info.min_players, &one(name, "many")).err().expect("refused");
            assert!(err.to_string().contains(&format!("option {name} must be an integer from")), "{err}");
        }
    }
}
