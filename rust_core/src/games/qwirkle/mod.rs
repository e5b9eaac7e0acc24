//! Qwirkle (rules: `docs/rules/qwirkle.md`, seed 003).
//!
//! Representation: tile type `t = 6*colour + shape` (0..35), tile id `3*t + copy` (0..107).
//! Bag and hands are 128-bit sets of ids (so the bag is always in ascending order, and a draw is
//! "the i-th remaining id" for a uniform `i`); the board is a fixed 208 x 208 byte grid
//! (offset 104; the spec bounds occupied cells to |x|, |y| <= 89) plus the list of laid tiles.
//!
//! Hot path: `plays::enumerate_plays` yields every legal play with its score without allocating;
//! the greedy bot, the evaluator, `legal_actions` and the benches all use it.
//!
//! Decisions recorded in the spec's style (new, beyond AMB1-AMB16):
//! * **AMB17 Ages option.** `ages` is a comma-separated list of one non-negative integer per seat
//!   (bigger = older; e.g. age in years). Empty = unknown: ties go to the lowest seat (AMB1).
//! * **AMB18 Administrative cap.** `max_idle_turns` (default 1000) consecutive turns without a
//!   placement (exchanges, passes) end the match with reason IDLE_CAP and `aborted = true`; it is
//!   checked after every such turn. It is not a game rule.
//! * **AMB19 Copies.** Actions name tile types; the engine lays / returns the lowest-id copy of
//!   the type in the hand. Ids of laid tiles are shown only to the player who laid them (and the
//!   auditor): copies are rule-identical, so other seats see types only.
//! * **AMB20 Table bound.** A play naming a cell with |x| or |y| > 89 is refused as NOT_CONNECTED
//!   (by the bound of spec 10.1 no legal play reaches such a cell: (0,0) is always occupied and a legal table is at most 90 wide and high).
//! * **AMB21 Hands after the end.** Other seats' hands stay hidden after GAME_OVER (the spec allows
//!   revealing them; nothing needs it). The auditor sees everything.
//! * **AMB22 Evaluator on an empty board.** It lists no play (the opening play is not a board play).
//! * **AMB23 Opening orders.** The legal moves (and so the bots, the timeout policy and the
//!   evaluator) list each opening group once, its tiles in ascending type order: the orders of one
//!   group are one move with one label and one value. `decide` still lays the tiles of an opening
//!   in the order sent (R9, TV02), so a client may let its user order them, as it may place them
//!   (AMB3).

use crate::error::{CoreError, CoreResult};
use crate::game::{Game, OptionSpec, OptionValues, Seat, Seats, Viewer};
use crate::proto::qwirkle as pb;
use crate::proto::Outcome;
use crate::rng::Rng;

mod analysis;
mod board;
mod bots;
mod plays;
mod rules;
mod state;
mod testdata;
mod tiles;
mod view;
mod wire;
mod words;

pub use board::Board;
pub use plays::count_plays;
pub use state::{Config, Phase, State};
pub use tiles::parse_type;

use bots::{TIMEOUT_FORFEIT, TIMEOUT_PASS};

pub struct Qwirkle;

impl Game for Qwirkle {
    type Config = Config;
    type State = State;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const ID: &'static str = "qwirkle";
    const NAME: &'static str = "Qwirkle";
    const TEST_DATA: crate::testdata::TestData = testdata::TEST_DATA;
    const SUMMARY: &'static str = words::SUMMARY;
    const RULES_PATH: &'static str = words::RULES_PATH;
    const SCORE_UNIT: (&'static str, &'static str) = words::SCORE_UNIT;

    fn action_label(view: &pb::View, seat: Seat, action: &pb::Action) -> String {
        words::action_label(view, seat, action)
    }

    fn event_sentence(event: &pb::Event, viewer: Viewer) -> String {
        words::event_sentence(event, viewer)
    }

    fn card_words(event: &pb::Event) -> Vec<String> {
        words::card_words(event)
    }
    fn outcome_sentence(outcome: &Outcome) -> String {
        words::outcome(outcome)
    }
    const PROTO_PACKAGE: &'static str = "tablier.qwirkle.v1";
    const MIN_PLAYERS: u32 = 2;
    const MAX_PLAYERS: u32 = 4;
    const HAS_EVALUATOR: bool = true;
    const HAS_ROLLOUTS: bool = true;
    const BOTS: &'static [&'static str] = &["random", "greedy"];

    fn options() -> Vec<OptionSpec> {
        state::options()
    }

    fn configure(seats: u32, options: &OptionValues) -> CoreResult<Config> {
        state::parse_options(seats, options)
    }

    fn initial(config: &Config) -> State {
        state::initial(config)
    }

    fn start(state: &State, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        rules::start(state, rng)
    }

    /// Before the deal nobody is awaited: the match has not started.
    fn idle_refusal(state: &State, _seat: Seat, _action: &pb::Action) -> Option<CoreError> {
        (state.phase == Phase::Setup)
            .then(|| CoreError::rule("NOT_STARTED", "the tiles have not been dealt yet"))
    }

    fn decide(
        state: &State,
        seat: Seat,
        action: &pb::Action,
        rng: &mut Rng,
    ) -> CoreResult<Vec<pb::Event>> {
        rules::decide(state, seat, action, rng)
    }

    fn evolve(state: &mut State, event: &pb::Event) -> CoreResult<()> {
        state::evolve(state, event)
    }

    /// `decide`, then its events applied in place: a refused action changes nothing (`decide`
    /// is pure), and after it only a bug can fail (`Corrupt`, the state then discarded). The
    /// default copies the whole table (its 43 KB grid) at every decision of a rollout.
    fn play(
        state: &mut State,
        seat: Seat,
        action: &pb::Action,
        rng: &mut Rng,
        events: &mut Vec<pb::Event>,
    ) -> CoreResult<()> {
        let decided = rules::decide(state, seat, action, rng)?;
        for e in &decided {
            state::evolve(state, e)?;
        }
        events.extend(decided);
        Ok(())
    }

    fn to_act(state: &State) -> Seats {
        match state.phase {
            Phase::Opening | Phase::Turn => Seats::one(state.current),
            _ => Seats::NONE,
        }
    }

    fn legal_actions_into(state: &State, seat: Seat, out: &mut Vec<pb::Action>) {
        rules::legal_actions_into(state, seat, out)
    }

    fn view(state: &State, viewer: Viewer) -> pb::View {
        view::view(state, viewer)
    }

    fn redact(event: &pb::Event, viewer: Viewer) -> Option<pb::Event> {
        view::redact(event, viewer)
    }

    fn event_type(event: &pb::Event) -> &'static str {
        match &event.kind {
            Some(pb::event::Kind::Dealt(_)) => "dealt",
            Some(pb::event::Kind::Announced(_)) => "announced",
            Some(pb::event::Kind::Placed(_)) => "placed",
            Some(pb::event::Kind::Drew(_)) => "drew",
            Some(pb::event::Kind::Exchanged(_)) => "exchanged",
            Some(pb::event::Kind::Passed(_)) => "passed",
            Some(pb::event::Kind::Ended(_)) => "ended",
            None => "unknown",
        }
    }

    fn outcome(state: &State) -> Option<Outcome> {
        rules::outcome(state)
    }

    /// Match clocks (§11): a timed-out seat passes.
    const TIMEOUT_POLICIES: &'static [&'static str] = &[TIMEOUT_PASS, TIMEOUT_FORFEIT];
    const TIMEOUT_HELP: &'static str = "pass: the player passes the turn, laying and trading nothing (at the start, the compulsory \
        opening is laid for them instead). forfeit: the player forfeits: the match ends at once and the highest \
        score among the other players wins, shared when tied.";

    fn timeout_events(
        state: &State,
        seat: Seat,
        policy: &str,
        rng: &mut Rng,
    ) -> CoreResult<Vec<pb::Event>> {
        bots::timeout_pass(state, seat, policy, rng)
    }

    fn bot_action(state: &State, seat: Seat, bot: &str, rng: &mut Rng) -> CoreResult<pb::Action> {
        bots::bot_action(state, seat, bot, rng)
    }

    fn render(state: &State, viewer: Viewer) -> String {
        view::render(state, viewer)
    }

    fn evaluate(position: &[u8]) -> CoreResult<Vec<u8>> {
        analysis::evaluate(position)
    }

    /// With rollout settings: the same Evaluation, with every legal action valued
    /// (`Evaluation.actions`); without, exactly `evaluate`.
    fn evaluate_with(
        position: &[u8],
        settings: &crate::proto::RolloutSettings,
    ) -> CoreResult<Vec<u8>> {
        if crate::rollout::checked(settings)?.is_none() {
            return analysis::evaluate(position);
        }
        crate::rollout::evaluate::<Self>(position, settings)
    }

    fn evaluator_move(state: &State, seat: Seat, rng: &mut Rng) -> Option<CoreResult<pb::Action>> {
        Some(crate::rollout::bot_move::<Self>(state, seat, rng))
    }

    fn fork_state(position: &[u8], rng: &mut Rng) -> Option<CoreResult<(Seat, Self::State)>> {
        Some(crate::rollout::fork_state::<Self>(position, rng))
    }

    fn position(state: &State, seat: Seat) -> Option<Vec<u8>> {
        analysis::position(state, seat)
    }

    fn check_invariants(state: &State) -> Result<(), String> {
        state::check_invariants(state)
    }

    fn check_decision_point(state: &State) -> Result<(), String> {
        state::check_decision_point(state)
    }
}

#[cfg(test)]
mod tests;
