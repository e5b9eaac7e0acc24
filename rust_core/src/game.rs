//! The decider interface every game implements (one module per game under `games/`).
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

/// What values an option takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionKind {
    /// A decimal integer from `lo` to `hi` (spaces around it allowed).
    Int { lo: u32, hi: u32 },
    /// One of the listed words.
    Choice(Vec<&'static str>),
    /// Free text of at most `max_len` bytes, read by the game's `configure`.
    Text { max_len: usize },
}

/// One table option of a game: the registry checks a match's options against these (unknown
/// names, values of the wrong kind or out of bounds), fills in the defaults, and lists them
/// in `ListGameTypes`; `configure` receives the checked values ([`OptionValues`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionSpec {
    /// The key a client sends (`CreateGameRequest.options`): for programs, never shown.
    pub name: &'static str,
    /// What people call it, a few words with a capital ("Time bank"): the option's name in
    /// every refusal and in `GameOption.label`.
    pub label: &'static str,
    pub kind: OptionKind,
    pub default: String,
    pub description: String,
}

impl OptionSpec {
    pub fn int(
        name: &'static str,
        label: &'static str,
        default: u32,
        lo: u32,
        hi: u32,
        description: impl Into<String>,
    ) -> OptionSpec {
        debug_assert!((lo..=hi).contains(&default), "{name}");
        OptionSpec {
            name,
            label,
            kind: OptionKind::Int { lo, hi },
            default: default.to_string(),
            description: description.into(),
        }
    }
    pub fn choice(
        name: &'static str,
        label: &'static str,
        values: &[&'static str],
        default: &'static str,
        description: impl Into<String>,
    ) -> OptionSpec {
        debug_assert!(values.contains(&default), "{name}");
        OptionSpec {
            name,
            label,
            kind: OptionKind::Choice(values.to_vec()),
            default: default.into(),
            description: description.into(),
        }
    }
    pub fn text(
        name: &'static str,
        label: &'static str,
        max_len: usize,
        default: &'static str,
        description: impl Into<String>,
    ) -> OptionSpec {
        OptionSpec {
            name,
            label,
            kind: OptionKind::Text { max_len },
            default: default.into(),
            description: description.into(),
        }
    }

    /// The value `given` (trimmed) checked against the kind; a refusal names the option by
    /// its label.
    fn check(&self, given: &str) -> CoreResult<OptionValue> {
        let label = self.label;
        let v = given.trim();
        match &self.kind {
            OptionKind::Int { lo, hi } => match v.parse::<u32>() {
                Ok(x) if (lo..=hi).contains(&&x) => Ok(OptionValue::Int(x)),
                _ => Err(CoreError::option(format!(
                    "{label} must be a whole number from {lo} to {hi}, not {given:?}"
                ))),
            },
            OptionKind::Choice(values) if values.contains(&v) => {
                Ok(OptionValue::Text(v.to_string()))
            }
            OptionKind::Choice(values) => Err(CoreError::option(format!(
                "{label} must be one of {}, not {given:?}",
                values.join(", ")
            ))),
            OptionKind::Text { max_len } if v.len() <= *max_len => {
                Ok(OptionValue::Text(v.to_string()))
            }
            OptionKind::Text { max_len } => Err(CoreError::option(format!(
                "{label} takes at most {max_len} characters, not {}",
                v.len()
            ))),
        }
    }
}

/// A checked option value: an integer, or the text of a choice or text option.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionValue {
    Int(u32),
    Text(String),
}

/// Every option of a match, checked against its specs, defaults filled in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OptionValues {
    values: BTreeMap<&'static str, (OptionValue, bool)>,
}

impl OptionValues {
    /// Checks `options` against `specs`: every name known, every value of its kind. Absent
    /// options take their defaults. `InvalidOption` says which and why.
    pub fn check(specs: &[OptionSpec], options: &Options) -> CoreResult<OptionValues> {
        if let Some(unknown) = options
            .keys()
            .find(|k| !specs.iter().any(|s| s.name == k.as_str()))
        {
            // The key came from a program: the known ones are listed by key, each with its label.
            let clock = unknown.starts_with(CLOCK_PREFIX);
            let names: Vec<String> = specs
                .iter()
                .filter(|s| s.name.starts_with(CLOCK_PREFIX) == clock)
                .map(|s| format!("{} ({})", s.name, s.label))
                .collect();
            let what = if clock { "clock option" } else { "option" };
            return Err(CoreError::option(format!(
                "There is no {what} {unknown:?}; the {what}s are {}",
                names.join(", ")
            )));
        }
        let mut values = BTreeMap::new();
        for spec in specs {
            let given = options.get(spec.name);
            let value = spec.check(given.map_or(spec.default.as_str(), String::as_str))?;
            values.insert(spec.name, (value, given.is_some()));
        }
        Ok(OptionValues { values })
    }

    /// The defaults of `specs`.
    pub fn defaults(specs: &[OptionSpec]) -> OptionValues {
        OptionValues::check(specs, &Options::new()).expect("the defaults of a spec are valid")
    }

    /// An integer option's value. Panics when `name` is not an integer option of the spec
    /// checked (a bug in the game, caught by every test that configures it).
    pub fn int(&self, name: &str) -> u32 {
        match self.values.get(name) {
            Some((OptionValue::Int(v), _)) => *v,
            _ => panic!("{name} is not an integer option of this game"),
        }
    }

    /// A choice or text option's value (trimmed).
    pub fn text(&self, name: &str) -> &str {
        match self.values.get(name) {
            Some((OptionValue::Text(v), _)) => v,
            _ => panic!("{name} is not a choice or text option of this game"),
        }
    }

    /// True when the match's options gave `name` (not its default).
    pub fn given(&self, name: &str) -> bool {
        self.values.get(name).is_some_and(|(_, given)| *given)
    }
}

/// Options whose names start with this are the registry's match clock ([`crate::clock`]).
pub const CLOCK_PREFIX: &str = "clock_";

/// The seat count checked against the game's range.
pub fn check_seats<G: Game + ?Sized>(seats: u32) -> CoreResult<()> {
    if (G::MIN_PLAYERS..=G::MAX_PLAYERS).contains(&seats) {
        return Ok(());
    }
    let range = if G::MIN_PLAYERS == G::MAX_PLAYERS {
        format!("exactly {}", G::MIN_PLAYERS)
    } else {
        format!("{} to {}", G::MIN_PLAYERS, G::MAX_PLAYERS)
    };
    Err(CoreError::option(format!(
        "{} is played by {range} players, not {seats}",
        G::NAME
    )))
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
    /// True when the evaluator also estimates move values by rollouts ([`crate::rollout`]);
    /// the registry then offers the `evaluator` bot.
    const HAS_ROLLOUTS: bool = false;
    /// Bot names accepted by `bot_action`; the last one is the strongest.
    const BOTS: &'static [&'static str] = &["random"];
    /// Commands the table's host (the operator) may give during a match, e.g. ending a timed
    /// match after the round in progress. They are not moves of any seat.
    const HOST_COMMANDS: &'static [&'static str] = &[];

    /// What the game is about, for people choosing one: two to four plain sentences
    /// (`words.rs` of the game's folder).
    const SUMMARY: &'static str;
    /// The rules document, relative to the repository root (e.g. `docs/rules/qwirkle.md`).
    const RULES_PATH: &'static str;
    /// What the game's scores count, singular and plural (`("tribe", "tribes")`): the
    /// `GameType.score_unit` people read beside a score (`words.rs` of the game's folder).
    const SCORE_UNIT: (&'static str, &'static str);
    /// What the shared harnesses (conformance, golden matches, pinned digests, timeouts) play
    /// of the game: the game folder's `testdata.rs`.
    const TEST_DATA: crate::testdata::TestData;

    /// A legal move of `seat` in words, as that seat would say it ("Take the 7 from the
    /// discard pile into slot 2"), read from `view`, the seat's own view of the state the move
    /// is made in: it can name nothing the seat may not see. Written in the game's `words.rs`.
    fn action_label(view: &Self::View, seat: Seat, action: &Self::Action) -> String;

    /// One sentence telling `viewer` what `event` (already redacted for that viewer) says:
    /// the viewer's own cards named, another seat's hidden card worded as hidden. Written in
    /// the game's `words.rs`, from the redacted event alone.
    fn event_sentence(event: &Self::Event, viewer: Viewer) -> String;

    /// How the match ended, in one sentence for anyone (`Outcome.description`), from the
    /// outcome the game gave (its `reason`, `winners`, `aborted`): "A player laid their last
    /// tile with the bag empty." Written in the game's `words.rs`.
    fn outcome_sentence(outcome: &crate::proto::Outcome) -> String;

    /// The names of every card or tile `event` holds, exactly as [`Game::event_sentence`]
    /// writes them: the conformance harness checks that a sentence names none that the
    /// viewer's redacted event does not hold.
    fn card_words(event: &Self::Event) -> Vec<String>;

    /// The game's table options (the registry adds the match clock's, [`crate::clock`]).
    fn options() -> Vec<OptionSpec>;

    /// The configuration for `seats` (within the game's range) and `options`, checked against
    /// [`Game::options`] with the defaults filled in. Only what the specs cannot say is left to
    /// check here (e.g. a value that depends on the seat count): `InvalidOption`.
    fn configure(seats: u32, options: &OptionValues) -> CoreResult<Self::Config>;

    /// [`Game::configure`] from options as a client gives them, checked as the registry
    /// checks them (the seat range, then the specs).
    fn checked_config(seats: u32, options: &Options) -> CoreResult<Self::Config> {
        check_seats::<Self>(seats)?;
        Self::configure(seats, &OptionValues::check(&Self::options(), options)?)
    }

    /// The state before anything happened (no randomness yet).
    fn initial(config: &Self::Config) -> Self::State;

    /// The events that open the match (shuffle, deal, automatic first steps).
    fn start(state: &Self::State, rng: &mut Rng) -> CoreResult<Vec<Self::Event>>;

    /// `start` and `evolve` in one step, as [`Game::play`] is to `decide`: on success `state` is
    /// the opened match and the opening events are appended to `events`. A game whose `start`
    /// builds the state anyway overrides it to build it in place.
    fn open(
        state: &mut Self::State,
        rng: &mut Rng,
        events: &mut Vec<Self::Event>,
    ) -> CoreResult<()> {
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
    /// including any automatic steps that follow it. Must not panic on any action. `seat` is
    /// awaited (`to_act`) and the match is not over: the registry refuses every other seat
    /// before asking the game ([`decide_checked`]), with the game's [`Game::idle_refusal`].
    fn decide(
        state: &Self::State,
        seat: Seat,
        action: &Self::Action,
        rng: &mut Rng,
    ) -> CoreResult<Vec<Self::Event>>;

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

    /// The game's own refusal of `action` by `seat` when that seat is not awaited or the match
    /// is over, where its rules give a more precise reason than `NOT_YOUR_TURN` / `GAME_OVER`
    /// (e.g. Démocratie's `ALREADY_COMMITTED`). None (the default), or either generic reason,
    /// leaves the registry's.
    fn idle_refusal(state: &Self::State, seat: Seat, action: &Self::Action) -> Option<CoreError> {
        let _ = (state, seat, action);
        None
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
    fn bot_action(
        state: &Self::State,
        seat: Seat,
        bot: &str,
        rng: &mut Rng,
    ) -> CoreResult<Self::Action> {
        let _ = bot;
        let mut moves = Self::legal_actions(state, seat);
        if moves.is_empty() {
            return Err(CoreError::not_your_turn());
        }
        let i = rng.index(moves.len());
        Ok(moves.swap_remove(i))
    }

    /// The events a host command causes (one of `HOST_COMMANDS`; the registry refuses others).
    fn host_command(
        state: &Self::State,
        command: &str,
        rng: &mut Rng,
    ) -> CoreResult<Vec<Self::Event>> {
        let _ = (state, rng);
        Err(CoreError::Unsupported(format!(
            "{} has no host command {command:?}",
            Self::ID
        )))
    }

    /// Whether `seat`, whose decision took the match from `before` to `after`, still has its
    /// own turn to finish there (a drawn card to keep or discard, a power card's peek): the
    /// `bot` and `evaluator` timeout policies decide for a timed-out seat until it has not, so
    /// a clock never leaves a turn half played. The default: a turn is one decision.
    fn turn_continues(before: &Self::State, after: &Self::State, seat: Seat) -> bool {
        let _ = (before, after, seat);
        false
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
    fn timeout_events(
        state: &Self::State,
        seat: Seat,
        policy: &str,
        rng: &mut Rng,
    ) -> CoreResult<Vec<Self::Event>> {
        let _ = (state, seat, rng);
        Err(CoreError::Unsupported(format!(
            "{} has no timeout policy {policy:?}",
            Self::ID
        )))
    }

    /// The match drawn for a terminal, as `viewer` may see it.
    fn render(state: &Self::State, viewer: Viewer) -> String;

    /// Legal moves with their scores for a caller-supplied position (`Position` bytes in,
    /// `Evaluation` bytes out). No match, no storage.
    fn evaluate(position: &[u8]) -> CoreResult<Vec<u8>> {
        let _ = position;
        Err(CoreError::Unsupported(format!(
            "{} has no position evaluator",
            Self::ID
        )))
    }

    /// [`Game::evaluate`] with rollout settings: each move's value too (a game whose
    /// evaluator has rollouts, [`crate::rollout`]). Settings that ask for no rollout give
    /// exactly what `evaluate` gives.
    fn evaluate_with(
        position: &[u8],
        settings: &crate::proto::RolloutSettings,
    ) -> CoreResult<Vec<u8>> {
        if crate::rollout::checked(settings)?.is_some() {
            return Err(CoreError::Unsupported(format!(
                "{} has no rollouts in its evaluator",
                Self::ID
            )));
        }
        Self::evaluate(position)
    }

    /// The moves an encoded `Evaluation` lists, in order (the conformance harness checks them
    /// against the legal moves); `None` for a game whose evaluation lists no actions.
    fn evaluated_actions(evaluation: &[u8]) -> Option<Vec<Self::Action>> {
        let _ = evaluation;
        None
    }

    /// The `evaluator` bot's move ([`crate::rollout::best_move`], within a count of simulated decisions): `None` for a game whose
    /// evaluator has no rollouts.
    fn evaluator_move(
        state: &Self::State,
        seat: Seat,
        rng: &mut Rng,
    ) -> Option<CoreResult<Self::Action>> {
        let _ = (state, seat, rng);
        None
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

    /// A seat fork's starting state ([`crate::fork`]): the seat of `position` (the input of
    /// [`Game::evaluate`]) and a full state consistent with it, every card or tile that seat
    /// cannot see dealt from `rng` (the evaluator's `sample`). `Malformed` for a position the
    /// evaluator refuses; `None` for a game without an evaluator.
    fn fork_state(position: &[u8], rng: &mut Rng) -> Option<CoreResult<(Seat, Self::State)>> {
        let _ = (position, rng);
        None
    }

    /// Invariants the conformance harness checks after every event (scores in bounds, card
    /// counts conserved, ...). `Err` describes the violation.
    fn check_invariants(state: &Self::State) -> Result<(), String> {
        let _ = state;
        Ok(())
    }

    /// What must hold whenever the match waits for a decision, checked by the harness once all
    /// the events of a command (or of the start) are applied, not between them: one command's
    /// events may pass through states no seat ever decides in (a draw that empties the pile,
    /// before the reshuffle that follows it in the same command). `Err` describes the violation.
    fn check_decision_point(state: &Self::State) -> Result<(), String> {
        let _ = state;
        Ok(())
    }
}

/// The one turn check of every game: a seat that is not awaited, or any seat once the match
/// is over, is refused with `NOT_YOUR_TURN` / `GAME_OVER`, or the game's more precise
/// [`Game::idle_refusal`].
pub fn check_turn<G: Game>(state: &G::State, seat: Seat, action: &G::Action) -> CoreResult<()> {
    let over = G::outcome(state).is_some();
    if !over && G::to_act(state).contains(seat) {
        return Ok(());
    }
    match G::idle_refusal(state, seat, action) {
        Some(e)
            if !matches!(
                e,
                CoreError::Rule {
                    reason: "NOT_YOUR_TURN" | "GAME_OVER",
                    ..
                }
            ) =>
        {
            Err(e)
        }
        _ if over => Err(CoreError::game_over()),
        _ => Err(CoreError::not_your_turn()),
    }
}

/// `decide` behind the turn check, as the registry asks it (what a client gets).
pub fn decide_checked<G: Game>(
    state: &G::State,
    seat: Seat,
    action: &G::Action,
    rng: &mut Rng,
) -> CoreResult<Vec<G::Event>> {
    check_turn::<G>(state, seat, action)?;
    G::decide(state, seat, action, rng)
}

/// Decodes an action sent by a client. Undecodable bytes are `Malformed`, never a panic.
pub fn decode<M: prost::Message + Default>(bytes: &[u8], what: &str) -> CoreResult<M> {
    M::decode(bytes).map_err(|e| CoreError::malformed(format!("cannot decode {what}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{registry, words};

    #[test]
    fn options_are_checked_and_filled_alike_in_every_game() {
        let one = |k: &str, v: &str| Options::from([(k.to_string(), v.to_string())]);
        let spec = [
            OptionSpec::int("n", "Number", 7, 1, 9, ""),
            OptionSpec::choice("c", "Choice", &["on", "off"], "on", ""),
        ];
        let filled = OptionValues::check(&spec, &Options::new()).unwrap();
        assert_eq!(
            (filled.int("n"), filled.text("c"), filled.given("n")),
            (7, "on", false)
        );
        let given = OptionValues::check(&spec, &one("n", " 5 ")).unwrap();
        assert_eq!((given.int("n"), given.given("n")), (5, true));
        for bad in ["0", "10", "-1", "4294967296", "five", ""] {
            let e = OptionValues::check(&spec, &one("n", bad)).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("invalid option: Number must be a whole number from 1 to 9, not {bad:?}")
            );
        }
        let e = OptionValues::check(&spec, &one("c", "maybe")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid option: Choice must be one of on, off, not \"maybe\""
        );
        let e = OptionValues::check(&spec, &one("x", "1")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid option: There is no option \"x\"; the options are n (Number), c (Choice)"
        );
        // Every game's options go through the registry's checks: each default (with spaces
        // around it) is accepted, a word where an integer belongs and an unknown name refused.
        for game in registry::games() {
            let info = game.info();
            for o in &info.options {
                assert!(
                    words::plain(&o.label).is_ok() && o.label.len() <= 40,
                    "{} {}: label {:?}",
                    info.id,
                    o.name,
                    o.label
                );
                // (A timeout policy is refused without a clock, even the default one.)
                let padded = one(&o.name, &format!(" {} ", o.default_value));
                assert!(
                    game.new_match(info.min_players, &padded).is_ok() || o.name == "clock_timeout",
                    "{} {}",
                    info.id,
                    o.name
                );
                let err = game
                    .new_match(info.min_players, &one(&o.name, "many"))
                    .err();
                match o.kind() {
                    crate::proto::OptionKind::Integer => {
                        let err = err.as_ref().expect("refused").to_string();
                        let bounds = format!(
                            "{} must be a whole number from {} to {}",
                            o.label, o.min_value, o.max_value
                        );
                        assert!(err.contains(&bounds), "{err}");
                        assert!(!err.contains(&o.name), "{err}");
                    }
                    crate::proto::OptionKind::Choice => {
                        assert!(o.allowed_values.contains(&o.default_value))
                    }
                    crate::proto::OptionKind::Text => assert!(o.max_length > 0),
                    crate::proto::OptionKind::Unspecified => {
                        panic!("{} {}: no kind", info.id, o.name)
                    }
                }
                if o.kind() != crate::proto::OptionKind::Text {
                    assert!(
                        matches!(err, Some(CoreError::InvalidOption(_))),
                        "{} {}",
                        info.id,
                        o.name
                    );
                }
            }
            let err = game
                .new_match(info.min_players, &one("no-such-option", "1"))
                .err()
                .expect("refused");
            assert!(
                err.to_string()
                    .contains("There is no option \"no-such-option\""),
                "{err}"
            );
            for seats in [info.min_players - 1, info.max_players + 1] {
                let err = game
                    .new_match(seats, &Options::new())
                    .err()
                    .expect("refused");
                assert!(
                    err.to_string()
                        .contains(&format!("{} is played by", info.name)),
                    "{err}"
                );
            }
        }
    }
}
