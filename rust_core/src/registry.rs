//! Type erasure: the service drives every game through [`DynGame`] / [`DynMatch`] with
//! protobuf bytes, so adding a game is one line in [`games`] and nothing in Python.

use std::marker::PhantomData;

use prost::Message;
use sha2::{Digest, Sha256};

use crate::clock::{self, Clock, ClockConfig};
use crate::conformance;
use crate::error::{CoreError, CoreResult};
use crate::fork::{self, FORKED};
use crate::game::{
    check_seats, decide_checked, decode, Game, OptionKind, OptionSpec, OptionValues, Options, Seat,
    Timer, Viewer,
};
use crate::games;
use crate::proto::{
    self, Forked, GameOption, GameType, Outcome, SeatLeft, SeatResigned, SeatTimedOut,
};
use crate::rng::Rng;
use crate::rollout;
use crate::testdata::TestData;
use crate::words;

/// Every game the server offers, one line each (`<folder>::<type>`): expands
/// `$callback!(qwirkle::Qwirkle, ...)`, with each type a path under `crate::games`. [`games`]
/// lists them, and a test harness that needs each game's own types (not the registry's bytes)
/// expands its code over them with this macro rather than a table of its own.
#[macro_export]
macro_rules! with_games {
    ($callback:ident) => {
        $callback!(
            qwirkle::Qwirkle,
            rat_a_tat_cat::RatATatCat,
            democratie::Democratie,
            grid_knock::GridKnock,
            carre::Carre,
        )
    };
}

/// Every game the server offers ([`with_games`]).
pub fn games() -> &'static [&'static dyn DynGame] {
    macro_rules! registered {
        ($($folder:ident :: $game:ident),* $(,)?) => {
            &[$(&Registered::<games::$folder::$game>::NEW),*]
        };
    }
    static GAMES: &[&dyn DynGame] = with_games!(registered);
    GAMES
}

pub fn find(id: &str) -> CoreResult<&'static dyn DynGame> {
    games()
        .iter()
        .copied()
        .find(|g| g.id() == id)
        .ok_or_else(|| CoreError::option(format!("unknown game type {id:?}")))
}

/// An event as stored: its kind and its protobuf payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodedEvent {
    pub kind: &'static str,
    pub payload: Vec<u8>,
}

pub trait DynGame: Send + Sync {
    fn id(&self) -> &'static str;
    fn info(&self) -> GameType;
    /// A new match, its seat count and options checked (the one place they are).
    fn new_match(&self, seats: u32, options: &Options) -> CoreResult<Box<dyn DynMatch>>;
    fn evaluate(&self, position: &[u8]) -> CoreResult<Vec<u8>>;
    /// `evaluate` with `tablier.v1.RolloutSettings` bytes (empty: none): each move's value too.
    fn evaluate_with(&self, position: &[u8], settings: &[u8]) -> CoreResult<Vec<u8>>;
    /// The action re-encoded from what it decodes to: what the rules read, and nothing else
    /// (unknown fields, repeated scalars, non-minimal varints are gone). `Malformed` if it
    /// does not decode.
    fn canonical_action(&self, action: &[u8]) -> CoreResult<Vec<u8>>;
    /// The action decoded, as text (protobuf debug form), for golden recordings and logs.
    fn describe_action(&self, action: &[u8]) -> CoreResult<String>;
    /// A stored event decoded, as text (protobuf debug form).
    fn describe_event(&self, kind: &str, payload: &[u8]) -> CoreResult<String>;
    /// Runs the conformance harness ([`conformance::run`]) on `matches` seeded matches.
    fn conformance(
        &self,
        seats: u32,
        options: &Options,
        matches: u64,
        first_seed: u64,
    ) -> conformance::Report;
    /// Runs the fork harness ([`conformance::forks`]): forks at `points` decisions of each of
    /// `matches` seeded matches, from every seat and the auditor, each played to its end.
    fn fork_conformance(
        &self,
        seats: u32,
        options: &Options,
        matches: u64,
        first_seed: u64,
        points: usize,
    ) -> conformance::Report;
    /// What the shared harnesses play of the game ([`Game::TEST_DATA`]).
    fn test_data(&self) -> &'static TestData;
    /// Plays one match where `silent` answers `answers` times, then times out under `policy`
    /// whenever awaited ([`conformance::play_silent_seat`]): the events played and the outcome.
    #[allow(clippy::too_many_arguments)]
    fn play_silent_seat(
        &self,
        seats: u32,
        options: &Options,
        policy: &str,
        silent: Seat,
        answers: u64,
        seed: u64,
        max_steps: u64,
    ) -> Result<(usize, Option<Outcome>), String>;
}

/// One match's state, with the operations the service needs.
pub trait DynMatch: Send + Sync {
    fn clone_box(&self) -> Box<dyn DynMatch>;
    fn game_id(&self) -> &'static str;
    fn seats(&self) -> u32;
    fn start(&self, rng: &mut Rng) -> CoreResult<Vec<EncodedEvent>>;
    fn decide(&self, seat: Seat, action: &[u8], rng: &mut Rng) -> CoreResult<Vec<EncodedEvent>>;
    /// A host command of the game, or `timeout:<seat>` (match clocks, [`clock`]).
    fn host_command(&self, command: &str, rng: &mut Rng) -> CoreResult<Vec<EncodedEvent>>;
    /// The opening event of a fork ([`fork::open`]): `request` is a `tablier.v1.Forked`
    /// without its deal, `rng` the fork's RNG at seq 1. Only a match nothing happened in yet.
    fn fork(&self, request: &[u8], rng: &mut Rng) -> CoreResult<Vec<EncodedEvent>>;
    /// Applies one of the game's own events.
    fn apply(&mut self, payload: &[u8]) -> CoreResult<()> {
        self.apply_stored(None, payload)
    }
    /// Applies a stored event of kind `kind` (None: one of the game's own events; a generic
    /// kind such as `seat_timed_out` is decoded apart).
    fn apply_stored(&mut self, kind: Option<&str>, payload: &[u8]) -> CoreResult<()>;
    /// After an event applied: its recorded time (ms since the Unix epoch), the seat its
    /// command acted for and the command's id. Steps the match clock, and notes when the
    /// core timer running now started (see `timer_started`).
    fn clock_step(&mut self, actor: Option<Seat>, command: Option<&str>, at_ms: i64);
    /// The recorded time (ms) of the event after which the timer running now started, when
    /// the events were applied with their times.
    fn timer_started(&self) -> Option<i64>;
    /// The match's clock settings, None without a clock.
    fn clock_config(&self) -> Option<ClockConfig>;
    /// Per seat: (bank ms, wait start ms, deadline ms), see [`Clock::seats`]; empty without a clock.
    fn clock_seats(&self) -> Vec<(Option<i64>, Option<i64>, Option<i64>)>;
    fn to_act(&self) -> Vec<Seat>;
    fn legal_actions(&self, seat: Seat) -> CoreResult<Vec<Vec<u8>>>;
    /// The legal actions of `seat`, each with its label in words as that seat would say it
    /// (read from the seat's own view).
    fn legal_moves(&self, seat: Seat) -> CoreResult<Vec<(Vec<u8>, String)>>;
    /// One sentence for `viewer` of an event already redacted for it (`kind` as
    /// `apply_stored`): what the game's `words.rs` says of it, from the redacted event alone.
    fn event_sentence(
        &self,
        kind: Option<&str>,
        redacted: &[u8],
        viewer: Viewer,
    ) -> CoreResult<String>;
    fn view(&self, viewer: Viewer) -> CoreResult<Vec<u8>>;
    fn redact(&self, payload: &[u8], viewer: Viewer) -> CoreResult<Option<Vec<u8>>> {
        self.redact_stored(None, payload, viewer)
    }
    /// `redact` of a stored event of kind `kind` (as `apply_stored`).
    fn redact_stored(
        &self,
        kind: Option<&str>,
        payload: &[u8],
        viewer: Viewer,
    ) -> CoreResult<Option<Vec<u8>>>;
    fn event_kind(&self, payload: &[u8]) -> CoreResult<&'static str> {
        self.stored_kind(None, payload)
    }
    /// The kind the payload of a stored event of kind `kind` decodes to (as `apply_stored`).
    fn stored_kind(&self, kind: Option<&str>, payload: &[u8]) -> CoreResult<&'static str>;
    fn outcome(&self) -> Option<Outcome>;
    /// The timer running now (never once the match is over).
    fn timer(&self) -> Option<Timer>;
    /// SHA-256 of the auditor's view: equal states hash equal, whichever way they were reached.
    fn state_hash(&self) -> [u8; 32];
    fn bot_action(&self, seat: Seat, bot: &str, rng: &mut Rng) -> CoreResult<Vec<u8>>;
    /// The encoded `Position` `seat` faces now, for `viewer`: only that seat or the auditor
    /// may have it (`POSITION_NOT_VISIBLE` for anyone else, it holds the seat's hidden
    /// information); `Unsupported` for a game without an evaluator.
    fn position(&self, viewer: Viewer, seat: Seat) -> CoreResult<Vec<u8>>;
    fn render(&self, viewer: Viewer) -> CoreResult<String>;
}

/// The game's bots, with the `evaluator` bot ([`crate::rollout::best_move`], within a count of simulated decisions) before the last
/// when its evaluator has rollouts: the last listed stays the default (the cheap strongest).
fn bot_names<G: Game>() -> Vec<&'static str> {
    let mut names = G::BOTS.to_vec();
    if G::HAS_EVALUATOR && G::HAS_ROLLOUTS {
        names.insert(names.len().saturating_sub(1), rollout::EVALUATOR_BOT);
    }
    names
}

/// A game's options, then the match clock's: its timeout policies are `bot`, the game's own,
/// and `evaluator` when its evaluator has rollouts.
fn option_specs<G: Game>() -> Vec<OptionSpec> {
    let mut specs = G::options();
    let mut policies = G::TIMEOUT_POLICIES.to_vec();
    let mut help = G::TIMEOUT_HELP.to_string();
    if G::HAS_EVALUATOR && G::HAS_ROLLOUTS {
        policies.push(clock::EVALUATOR);
        if !help.is_empty() {
            help.push(' ');
        }
        help.push_str(clock::EVALUATOR_HELP);
    }
    specs.extend(clock::options(&policies, &help));
    specs
}

pub struct Registered<G>(PhantomData<fn() -> G>);

impl<G> Registered<G> {
    pub const NEW: Self = Registered(PhantomData);
}

impl<G: Game> DynGame for Registered<G> {
    fn id(&self) -> &'static str {
        G::ID
    }

    fn info(&self) -> GameType {
        let p = G::PROTO_PACKAGE;
        GameType {
            id: G::ID.into(),
            name: G::NAME.into(),
            min_players: G::MIN_PLAYERS,
            max_players: G::MAX_PLAYERS,
            options: option_specs::<G>()
                .into_iter()
                .map(|o| {
                    let mut option = GameOption {
                        name: o.name.into(),
                        label: o.label.into(),
                        description: o.description,
                        default_value: o.default,
                        ..GameOption::default()
                    };
                    match o.kind {
                        OptionKind::Int { lo, hi } => {
                            option.set_kind(proto::OptionKind::Integer);
                            (option.min_value, option.max_value) = (lo, hi);
                        }
                        OptionKind::Choice(values) => {
                            option.set_kind(proto::OptionKind::Choice);
                            option.allowed_values = values.iter().map(|s| s.to_string()).collect();
                        }
                        OptionKind::Text { max_len } => {
                            option.set_kind(proto::OptionKind::Text);
                            option.max_length = u32::try_from(max_len).unwrap_or(u32::MAX);
                        }
                    }
                    option
                })
                .collect(),
            action_type: format!("{p}.Action"),
            event_type: format!("{p}.Event"),
            view_type: format!("{p}.View"),
            position_type: if G::HAS_EVALUATOR {
                format!("{p}.Position")
            } else {
                String::new()
            },
            evaluation_type: if G::HAS_EVALUATOR {
                format!("{p}.Evaluation")
            } else {
                String::new()
            },
            bots: bot_names::<G>().iter().map(|s| s.to_string()).collect(),
            host_commands: G::HOST_COMMANDS.iter().map(|s| s.to_string()).collect(),
            summary: G::SUMMARY.into(),
            rules_path: G::RULES_PATH.into(),
            score_unit: G::SCORE_UNIT.0.into(),
            score_unit_plural: G::SCORE_UNIT.1.into(),
        }
    }

    /// The one place a match's seat count and options are checked: the range of seats, then
    /// every option against the game's specs and the clock's, defaults filled in.
    fn new_match(&self, seats: u32, options: &Options) -> CoreResult<Box<dyn DynMatch>> {
        check_seats::<G>(seats)?;
        let values = OptionValues::check(&option_specs::<G>(), options)?;
        let clock = clock::configure(&values)?;
        let config = G::configure(seats, &values)?;
        let state = G::initial(&config);
        Ok(Box::new(Match::<G> {
            seats,
            state,
            clock: clock.map(|c| Clock::new(c, seats)),
            timer_since: None,
            opened: false,
        }))
    }

    fn evaluate(&self, position: &[u8]) -> CoreResult<Vec<u8>> {
        G::evaluate(position)
    }

    fn evaluate_with(&self, position: &[u8], settings: &[u8]) -> CoreResult<Vec<u8>> {
        let settings: proto::RolloutSettings = decode(settings, "rollout settings")?;
        G::evaluate_with(position, &settings)
    }

    fn canonical_action(&self, action: &[u8]) -> CoreResult<Vec<u8>> {
        Ok(decode::<G::Action>(action, "action")?.encode_to_vec())
    }

    fn describe_action(&self, action: &[u8]) -> CoreResult<String> {
        Ok(format!("{:?}", decode::<G::Action>(action, "action")?))
    }

    fn describe_event(&self, kind: &str, payload: &[u8]) -> CoreResult<String> {
        if is_generic_kind(Some(kind)) {
            return Ok(format!("{:?}", generic_event(kind, payload)?));
        }
        Ok(format!(
            "{:?}",
            G::Event::decode(payload)
                .map_err(|e| CoreError::corrupt(format!("undecodable event: {e}")))?
        ))
    }

    fn conformance(
        &self,
        seats: u32,
        options: &Options,
        matches: u64,
        first_seed: u64,
    ) -> conformance::Report {
        conformance::run::<G>(seats, options, matches, first_seed, 1_000_000)
    }

    fn fork_conformance(
        &self,
        seats: u32,
        options: &Options,
        matches: u64,
        first_seed: u64,
        points: usize,
    ) -> conformance::Report {
        conformance::forks::<G>(seats, options, matches, first_seed, points)
    }

    fn test_data(&self) -> &'static TestData {
        &G::TEST_DATA
    }

    fn play_silent_seat(
        &self,
        seats: u32,
        options: &Options,
        policy: &str,
        silent: Seat,
        answers: u64,
        seed: u64,
        max_steps: u64,
    ) -> Result<(usize, Option<Outcome>), String> {
        let played = conformance::play_silent_seat::<G>(
            seats, options, policy, silent, answers, seed, max_steps,
        )?;
        Ok((played.events.len(), G::outcome(&played.state)))
    }
}

pub struct Match<G: Game> {
    seats: u32,
    pub state: G::State,
    /// Banks and waits when the match has a clock (not part of the state hash: it derives
    /// from the events' recorded times, which the chain hash does not cover).
    clock: Option<Clock>,
    /// The key of the core timer running and the recorded time its wait started.
    timer_since: Option<(u64, i64)>,
    /// An event was applied: a fork's opening may no longer be.
    opened: bool,
}

impl<G: Game> Clone for Match<G> {
    fn clone(&self) -> Self {
        Match {
            seats: self.seats,
            state: self.state.clone(),
            clock: self.clock.clone(),
            timer_since: self.timer_since,
            opened: self.opened,
        }
    }
}

/// The kind of the event a resignation writes first (`resign:<seat>`, [`SeatResigned`]).
pub const SEAT_RESIGNED: &str = "seat_resigned";
/// The kind of the event a seat left writes (`leave:<seat>`, [`SeatLeft`]).
pub const SEAT_LEFT: &str = "seat_left";
/// Host commands every game takes for a seat: `resign:<seat>`, `leave:<seat>` (the service
/// gives them for the seat's own holder).
pub const RESIGN_COMMAND: &str = "resign:";
pub const LEAVE_COMMAND: &str = "leave:";
/// The rules a resignation takes: the game's forfeit (the match ends), or the bot plays on.
pub const RULE_FORFEIT: &str = "forfeit";
pub const RULE_BOT: &str = "bot";

/// The registry's own events, shared by every game (a stored event that is not one of the
/// game's own).
enum Generic {
    TimedOut(SeatTimedOut),
    Resigned(SeatResigned),
    Left(SeatLeft),
    Forked(Forked),
}

/// As the event's own message (`SeatTimedOut { .. }`), the form recordings keep.
impl std::fmt::Debug for Generic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Generic::TimedOut(e) => e.fmt(f),
            Generic::Resigned(e) => e.fmt(f),
            Generic::Left(e) => e.fmt(f),
            Generic::Forked(e) => e.fmt(f),
        }
    }
}

impl Generic {
    /// The seat the event is about; a fork's opening is about none.
    fn seat(&self) -> Option<Seat> {
        match self {
            Generic::TimedOut(e) => Some(e.seat),
            Generic::Resigned(e) => Some(e.seat),
            Generic::Left(e) => Some(e.seat),
            Generic::Forked(_) => None,
        }
    }
    fn kind(&self) -> &'static str {
        match self {
            Generic::TimedOut(_) => clock::SEAT_TIMED_OUT,
            Generic::Resigned(_) => SEAT_RESIGNED,
            Generic::Left(_) => SEAT_LEFT,
            Generic::Forked(_) => FORKED,
        }
    }
    /// As `viewer` may see it: the seat events are public, whole to every viewer; a fork's
    /// opening gives its lineage to every viewer, the rest to the auditor alone.
    fn encode_for(&self, viewer: Viewer) -> Vec<u8> {
        match self {
            Generic::Forked(e) => fork::redact(e, viewer).encode_to_vec(),
            _ => self.encode(),
        }
    }
    fn encode(&self) -> Vec<u8> {
        match self {
            Generic::TimedOut(e) => e.encode_to_vec(),
            Generic::Resigned(e) => e.encode_to_vec(),
            Generic::Left(e) => e.encode_to_vec(),
            Generic::Forked(e) => e.encode_to_vec(),
        }
    }
}

/// Decodes a stored event that is not one of the game's own (`kind` is a generic kind).
fn generic_event(kind: &str, payload: &[u8]) -> CoreResult<Generic> {
    let undecodable =
        |e: prost::DecodeError| CoreError::corrupt(format!("undecodable {kind}: {e}"));
    match kind {
        clock::SEAT_TIMED_OUT => SeatTimedOut::decode(payload)
            .map(Generic::TimedOut)
            .map_err(undecodable),
        SEAT_RESIGNED => SeatResigned::decode(payload)
            .map(Generic::Resigned)
            .map_err(undecodable),
        SEAT_LEFT => SeatLeft::decode(payload)
            .map(Generic::Left)
            .map_err(undecodable),
        FORKED => fork::decode(payload).map(Generic::Forked),
        _ => Err(CoreError::corrupt(format!(
            "unknown generic event kind {kind:?}"
        ))),
    }
}

/// The sentence of a `seat_timed_out` event, the same in every game.
fn timed_out_sentence(e: &SeatTimedOut, viewer: Viewer) -> String {
    let whose = words::whose_cap(e.seat, viewer);
    let whom = words::whom(e.seat, viewer);
    match e.policy.as_str() {
        clock::BOT => format!("{whose} time ran out: the bot moves for {whom}."),
        "forfeit" if viewer.is_seat(e.seat) => {
            format!("{whose} time ran out: you forfeit the match.")
        }
        "forfeit" => format!("{whose} time ran out: {whom} forfeits the match."),
        policy => format!(
            "{whose} time ran out: the table moves for {whom} ({}).",
            policy.replace('_', " ")
        ),
    }
}

/// The sentence of a registry event, the same in every game.
fn generic_sentence(e: &Generic, viewer: Viewer) -> String {
    match e {
        Generic::TimedOut(e) => timed_out_sentence(e, viewer),
        Generic::Resigned(e) => {
            let who = words::who(e.seat, viewer);
            let you = viewer.is_seat(e.seat);
            match (e.rule.as_str(), you) {
                (RULE_FORFEIT, true) => "You resigned and forfeit the match.".into(),
                (RULE_FORFEIT, false) => format!("{who} resigned and forfeits the match."),
                (_, true) => "You resigned: the bot plays your seat from now on.".into(),
                (_, false) => format!(
                    "{who} resigned: the bot plays {} seat from now on.",
                    words::whose(e.seat, viewer)
                ),
            }
        }
        Generic::Left(e) => format!(
            "{} left the match: seat {} is open again.",
            words::who(e.seat, viewer),
            words::seat_number(e.seat)
        ),
        Generic::Forked(e) => fork::sentence(e, viewer),
    }
}

/// True for the kinds every game shares (the registry's own events), decoded apart.
pub fn is_generic_kind(kind: Option<&str>) -> bool {
    matches!(
        kind,
        Some(clock::SEAT_TIMED_OUT | SEAT_RESIGNED | SEAT_LEFT | FORKED)
    )
}

/// The seat of a `resign:<seat>` or `leave:<seat>` command.
fn seat_command(command: &str, prefix: &str) -> Option<CoreResult<Seat>> {
    let rest = command.strip_prefix(prefix)?;
    Some(
        rest.parse::<Seat>()
            .map_err(|_| CoreError::malformed(format!("{command:?} names no seat"))),
    )
}

fn encode_events<G: Game>(events: Vec<G::Event>) -> Vec<EncodedEvent> {
    events
        .into_iter()
        .map(|e| EncodedEvent {
            kind: G::event_type(&e),
            payload: e.encode_to_vec(),
        })
        .collect()
}

impl<G: Game> Match<G> {
    fn check_seat(&self, seat: Seat) -> CoreResult<()> {
        if seat >= self.seats {
            return Err(CoreError::malformed(format!(
                "seat {seat} is not in this {}-seat match",
                self.seats
            )));
        }
        Ok(())
    }
    /// A seat's time is up: `seat_timed_out`, then what the match's policy does for it. The
    /// service gives it once the deadline has passed; the rules check only that the match has
    /// a clock and awaits the seat.
    fn timeout(&self, seat: Seat, rng: &mut Rng) -> CoreResult<Vec<EncodedEvent>> {
        self.check_seat(seat)?;
        let Some(clock) = &self.clock else {
            return Err(CoreError::Unsupported(
                "this match has no clock: no seat times out".into(),
            ));
        };
        if G::outcome(&self.state).is_some() {
            return Err(CoreError::game_over());
        }
        if !G::to_act(&self.state).contains(seat) {
            return Err(CoreError::not_your_turn());
        }
        let policy = clock.config.policy.as_str();
        let timed_out = SeatTimedOut {
            seat,
            policy: policy.to_string(),
        };
        let mut events = vec![EncodedEvent {
            kind: clock::SEAT_TIMED_OUT,
            payload: timed_out.encode_to_vec(),
        }];
        let decided = if policy == clock::EVALUATOR || policy == clock::BOT {
            // The bot draws from its own stream, seeded from the command's: the deal that
            // decide may draw stays independent of the bot's choice. It plays the seat's whole
            // turn (`Game::turn_continues`), each step decided on the state the last one left.
            let mut bot_rng = Rng::from_u64(rng.next_u64());
            let bot = G::BOTS.last().copied().unwrap_or("random");
            let mut state = self.state.clone();
            let mut decided = Vec::new();
            // A turn is a handful of steps; the bound only guards against a rules bug looping.
            for _ in 0..32 {
                let action = if policy == clock::EVALUATOR {
                    // The evaluator bot, from what the seat may know only: a fixed number of
                    // simulated decisions, no clock (`rollout::bot_move`).
                    G::evaluator_move(&state, seat, &mut bot_rng).ok_or_else(|| {
                        CoreError::Unsupported(format!(
                            "{} has no evaluator with rollouts",
                            G::NAME
                        ))
                    })??
                } else {
                    G::bot_action(&state, seat, bot, &mut bot_rng)?
                };
                let step = G::decide(&state, seat, &action, rng)?;
                let before = state.clone();
                for event in &step {
                    G::evolve(&mut state, event)?;
                }
                decided.extend(step);
                if G::outcome(&state).is_some() || !G::turn_continues(&before, &state, seat) {
                    break;
                }
            }
            decided
        } else {
            G::timeout_events(&self.state, seat, policy, rng)?
        };
        events.extend(encode_events::<G>(decided));
        Ok(events)
    }
    fn check_viewer(&self, viewer: Viewer) -> CoreResult<()> {
        match viewer {
            Viewer::Seat(s) => self.check_seat(s),
            _ => Ok(()),
        }
    }
    /// A seat resigns: `seat_resigned`, then what the game's rule makes of it. A game whose
    /// rules end a match on a forfeit (its `forfeit` timeout policy) ends it, where that rule
    /// allows (else its refusal, e.g. NOT_YOUR_TURN: resign on your turn); any other game goes
    /// on, the strongest bot playing the seat (now, when the seat is awaited; afterwards the
    /// service plays it as a bot seat).
    fn resign(&self, seat: Seat, rng: &mut Rng) -> CoreResult<Vec<EncodedEvent>> {
        self.check_seat(seat)?;
        if G::outcome(&self.state).is_some() {
            return Err(CoreError::game_over());
        }
        let (rule, then) = match G::timeout_events(&self.state, seat, RULE_FORFEIT, rng) {
            Ok(ended) => (RULE_FORFEIT, encode_events::<G>(ended)),
            Err(CoreError::Unsupported(_)) if G::to_act(&self.state).contains(seat) => {
                let mut bot_rng = Rng::from_u64(rng.next_u64());
                let bot = G::BOTS.last().copied().unwrap_or("random");
                let action = G::bot_action(&self.state, seat, bot, &mut bot_rng)?;
                (
                    RULE_BOT,
                    encode_events::<G>(G::decide(&self.state, seat, &action, rng)?),
                )
            }
            Err(CoreError::Unsupported(_)) => (RULE_BOT, Vec::new()),
            Err(e) => return Err(e),
        };
        let resigned = Generic::Resigned(SeatResigned {
            seat,
            rule: rule.to_string(),
        });
        let mut events = vec![EncodedEvent {
            kind: resigned.kind(),
            payload: resigned.encode(),
        }];
        events.extend(then);
        Ok(events)
    }
    /// A seat's holder leaves a match that waits for players: `seat_left` (the service reopens
    /// the seat; the game's state is unchanged and waits for whoever joins it).
    fn leave(&self, seat: Seat) -> CoreResult<Vec<EncodedEvent>> {
        self.check_seat(seat)?;
        if G::outcome(&self.state).is_some() {
            return Err(CoreError::game_over());
        }
        let left = Generic::Left(SeatLeft { seat });
        Ok(vec![EncodedEvent {
            kind: left.kind(),
            payload: left.encode(),
        }])
    }
}

impl<G: Game> DynMatch for Match<G> {
    fn clone_box(&self) -> Box<dyn DynMatch> {
        Box::new(self.clone())
    }
    fn game_id(&self) -> &'static str {
        G::ID
    }
    fn seats(&self) -> u32 {
        self.seats
    }
    fn start(&self, rng: &mut Rng) -> CoreResult<Vec<EncodedEvent>> {
        Ok(encode_events::<G>(G::start(&self.state, rng)?))
    }
    fn fork(&self, request: &[u8], rng: &mut Rng) -> CoreResult<Vec<EncodedEvent>> {
        if self.opened {
            return Err(CoreError::malformed(
                "a fork opens a new match: this one has begun",
            ));
        }
        let forked = fork::open::<G>(&self.state, self.seats, request, rng)?;
        Ok(vec![EncodedEvent {
            kind: FORKED,
            payload: forked.encode_to_vec(),
        }])
    }
    /// Refuses a seat that is not awaited, or any seat once the match is over, before the
    /// game sees the action ([`check_turn`]).
    fn decide(&self, seat: Seat, action: &[u8], rng: &mut Rng) -> CoreResult<Vec<EncodedEvent>> {
        self.check_seat(seat)?;
        let action: G::Action = decode(action, "action")?;
        Ok(encode_events::<G>(decide_checked::<G>(
            &self.state,
            seat,
            &action,
            rng,
        )?))
    }
    fn host_command(&self, command: &str, rng: &mut Rng) -> CoreResult<Vec<EncodedEvent>> {
        if let Some(seat) = clock::timeout_seat(command) {
            return self.timeout(seat?, rng);
        }
        if let Some(seat) = seat_command(command, RESIGN_COMMAND) {
            return self.resign(seat?, rng);
        }
        if let Some(seat) = seat_command(command, LEAVE_COMMAND) {
            return self.leave(seat?);
        }
        if !G::HOST_COMMANDS.contains(&command) {
            let known = if G::HOST_COMMANDS.is_empty() {
                "none".to_string()
            } else {
                G::HOST_COMMANDS.join(", ")
            };
            return Err(CoreError::Unsupported(format!(
                "{} has no host command {command:?} (host commands: {known})",
                G::NAME
            )));
        }
        if G::outcome(&self.state).is_some() {
            return Err(CoreError::game_over());
        }
        Ok(encode_events::<G>(G::host_command(
            &self.state,
            command,
            rng,
        )?))
    }
    fn apply_stored(&mut self, kind: Option<&str>, payload: &[u8]) -> CoreResult<()> {
        let opened = std::mem::replace(&mut self.opened, true);
        if is_generic_kind(kind) {
            let generic = generic_event(kind.unwrap_or_default(), payload)?;
            if generic.seat().is_some_and(|seat| seat >= self.seats) {
                return Err(CoreError::corrupt(format!(
                    "a {} event of a seat the match does not have",
                    generic.kind()
                )));
            }
            match generic {
                // Changes nothing but the clock (stepped after it): the rule's events follow.
                Generic::TimedOut(_) if self.clock.is_none() => {
                    return Err(CoreError::corrupt(
                        "a seat_timed_out event in a match without a clock",
                    ));
                }
                Generic::TimedOut(_) | Generic::Resigned(_) | Generic::Left(_) => {}
                Generic::Forked(_) if opened => {
                    return Err(CoreError::corrupt(
                        "a fork's opening after the first event of a match",
                    ))
                }
                Generic::Forked(forked) => {
                    self.state = fork::started::<G>(&self.state, self.seats, &forked)
                        .map_err(|e| CoreError::corrupt(format!("the fork's opening: {e}")))?;
                }
            }
            return Ok(());
        }
        let event: G::Event = G::Event::decode(payload)
            .map_err(|e| CoreError::corrupt(format!("undecodable event: {e}")))?;
        G::evolve(&mut self.state, &event).map_err(|e| match e {
            CoreError::Corrupt(what) => {
                CoreError::Corrupt(format!("{} event does not fit the state: {what}", G::ID))
            }
            e => e,
        })
    }
    fn clock_step(&mut self, actor: Option<Seat>, command: Option<&str>, at_ms: i64) {
        if let Some(clock) = self.clock.as_mut() {
            clock.step(G::to_act(&self.state), actor, command, at_ms);
        }
        self.timer_since = match (self.timer(), self.timer_since) {
            (Some(t), Some((key, since))) if key == t.key => Some((key, since)),
            (Some(t), _) => Some((t.key, at_ms)),
            (None, _) => None,
        };
    }
    fn timer_started(&self) -> Option<i64> {
        let (key, since) = self.timer_since?;
        (self.timer()?.key == key).then_some(since)
    }
    fn clock_config(&self) -> Option<ClockConfig> {
        self.clock.as_ref().map(|c| c.config.clone())
    }
    fn clock_seats(&self) -> Vec<(Option<i64>, Option<i64>, Option<i64>)> {
        self.clock.as_ref().map(Clock::seats).unwrap_or_default()
    }
    fn to_act(&self) -> Vec<Seat> {
        G::to_act(&self.state).to_vec()
    }
    fn legal_actions(&self, seat: Seat) -> CoreResult<Vec<Vec<u8>>> {
        self.check_seat(seat)?;
        Ok(G::legal_actions(&self.state, seat)
            .iter()
            .map(|a| a.encode_to_vec())
            .collect())
    }
    fn legal_moves(&self, seat: Seat) -> CoreResult<Vec<(Vec<u8>, String)>> {
        self.check_seat(seat)?;
        let moves = G::legal_actions(&self.state, seat);
        if moves.is_empty() {
            return Ok(Vec::new());
        }
        let view = G::view(&self.state, Viewer::Seat(seat));
        Ok(moves
            .iter()
            .map(|a| (a.encode_to_vec(), G::action_label(&view, seat, a)))
            .collect())
    }
    fn event_sentence(
        &self,
        kind: Option<&str>,
        redacted: &[u8],
        viewer: Viewer,
    ) -> CoreResult<String> {
        self.check_viewer(viewer)?;
        if is_generic_kind(kind) {
            return Ok(generic_sentence(
                &generic_event(kind.unwrap_or_default(), redacted)?,
                viewer,
            ));
        }
        let event: G::Event = G::Event::decode(redacted)
            .map_err(|e| CoreError::corrupt(format!("undecodable event: {e}")))?;
        Ok(G::event_sentence(&event, viewer))
    }
    fn view(&self, viewer: Viewer) -> CoreResult<Vec<u8>> {
        self.check_viewer(viewer)?;
        Ok(G::view(&self.state, viewer).encode_to_vec())
    }
    fn redact_stored(
        &self,
        kind: Option<&str>,
        payload: &[u8],
        viewer: Viewer,
    ) -> CoreResult<Option<Vec<u8>>> {
        self.check_viewer(viewer)?;
        if is_generic_kind(kind) {
            return Ok(Some(
                generic_event(kind.unwrap_or_default(), payload)?.encode_for(viewer),
            ));
        }
        let event: G::Event = G::Event::decode(payload)
            .map_err(|e| CoreError::corrupt(format!("undecodable event: {e}")))?;
        Ok(G::redact(&event, viewer).map(|e| e.encode_to_vec()))
    }
    fn stored_kind(&self, kind: Option<&str>, payload: &[u8]) -> CoreResult<&'static str> {
        if is_generic_kind(kind) {
            return Ok(generic_event(kind.unwrap_or_default(), payload)?.kind());
        }
        let event: G::Event = G::Event::decode(payload)
            .map_err(|e| CoreError::corrupt(format!("undecodable event: {e}")))?;
        Ok(G::event_type(&event))
    }
    /// The game's outcome, with its description in the game's words.
    fn outcome(&self) -> Option<Outcome> {
        G::outcome(&self.state).map(|mut o| {
            o.description = G::outcome_sentence(&o);
            o
        })
    }
    fn timer(&self) -> Option<Timer> {
        if G::outcome(&self.state).is_some() {
            return None;
        }
        G::timer(&self.state).filter(|t| G::HOST_COMMANDS.contains(&t.command))
    }
    fn state_hash(&self) -> [u8; 32] {
        Sha256::digest(G::view(&self.state, Viewer::Auditor).encode_to_vec()).into()
    }
    fn bot_action(&self, seat: Seat, bot: &str, rng: &mut Rng) -> CoreResult<Vec<u8>> {
        self.check_seat(seat)?;
        let names = bot_names::<G>();
        if !names.contains(&bot) {
            return Err(CoreError::option(format!(
                "{} has no bot {bot:?} (bots: {})",
                G::NAME,
                names.join(", ")
            )));
        }
        if G::outcome(&self.state).is_some() {
            return Err(CoreError::game_over());
        }
        if !G::to_act(&self.state).contains(seat) {
            return Err(CoreError::not_your_turn());
        }
        if bot == rollout::EVALUATOR_BOT {
            if let Some(action) = G::evaluator_move(&self.state, seat, rng) {
                return Ok(action?.encode_to_vec());
            }
        }
        Ok(G::bot_action(&self.state, seat, bot, rng)?.encode_to_vec())
    }
    fn position(&self, viewer: Viewer, seat: Seat) -> CoreResult<Vec<u8>> {
        self.check_viewer(viewer)?;
        self.check_seat(seat)?;
        if !G::HAS_EVALUATOR {
            return Err(CoreError::Unsupported(format!(
                "{} has no position evaluator",
                G::NAME
            )));
        }
        if !viewer.sees_private_of(seat) {
            return Err(CoreError::rule(
                "POSITION_NOT_VISIBLE",
                format!("the position of seat {seat} holds its hidden information: only that seat or the auditor may have it"),
            ));
        }
        G::position(&self.state, seat).ok_or_else(|| {
            CoreError::Unsupported(format!("{} gives no position of its states", G::NAME))
        })
    }
    fn render(&self, viewer: Viewer) -> CoreResult<String> {
        self.check_viewer(viewer)?;
        Ok(G::render(&self.state, viewer))
    }
}
