//! Rat-a-Tat Cat (Gamewright), per `docs/rules/rat_a_tat_cat.md` and its Dutch seed.
//!
//! 54 cards: numbers 0..=8 four times each, nine 9s, three each of Peek (PK), Swap (SW) and
//! Draw 2 (D2). Each active seat has a face-down row of four; on a turn it takes the face-up
//! discard (a number) into its row, or draws from the pile and keeps, discards or uses the card
//! (Peek one own card, blind Swap with another seat, Draw 2 chains). After any own turn a seat may
//! call "Rat-a-tat cat"; everyone else takes one more turn, rows are revealed, power cards in rows
//! are replaced by draws, and each row scores the sum of its numbers (lower is better).
//!
//! Representation: card codes `0..=9` are numbers, `10` PK, `11` SW, `12` D2 (protobuf `Card`
//! is code + 1). Piles are fixed arrays with the top at the end; rows are `[[u8; 4]; 6]`; what
//! each seat knows about each of the 24 row positions is one bitmask per seat. Slots are 1..4 in
//! the protocol and 0..3 inside. Cards carry no ids, so nothing can leak deck order across
//! shuffles.
//!
//! Knowledge (spec section 7, with the server rule): a seat's private observations (initial
//! peek, its drawn card, its peek results, the card it put into its row from the pile) reach
//! that seat alone, as private events in its redacted stream. Views show face-down cards face
//! down. With the table option `memory_aid=on`, a seat's view also lists the row values it
//! knows: its observations and the public log (cards taken from the discard pile), followed
//! through blind swaps (a card it knew keeps being known where the public log says it went);
//! nothing tells a seat the value of a card it never saw.
//!
//! Decisions taken here in the spec's style (section 8 settles everything else):
//!
//! - **AMB21, match formats offered.** `elimination` (default, `point_limit` 100),
//!   `fixed_rounds` (`rounds`, default 3) and `timed`: the operator gives the host command
//!   `stop_after_round` (a `stop_requested` event, public); the round in progress is completed,
//!   then the lowest total wins (co-winners on ties, reason `TIME_CALLED`). Without it a timed
//!   match goes on until the administrative cap.
//! - **AMB22, administrative cap.** The rules allow an endless round (R14). Besides the rules'
//!   optional `max_turns_per_round` safeguard (default off), a match stops after
//!   `admin_turn_cap` turns (default 20000): `MatchEnded{aborted: true, reason: ADMIN_TURN_CAP}`,
//!   no winners. This is not a rule result.
//! - **AMB23, end of turn after a call.** When a call exists, `END_OF_TURN` still waits for an
//!   explicit `end_turn` (TV14 lists it as the only legal move), rather than applying it.
//! - **AMB24, what a seat knows after a blind swap.** Knowledge follows the card: if the seat
//!   knew the card at a swapped position, it knows it at the new position; a swapped-in card it
//!   never saw stays unknown. This only affects the memory aid and the heuristic bot.
//! - **AMB25, initial peek event.** One `InitialPeek` per active seat, in seat order, right
//!   after `RoundDealt`; other viewers receive it as a stub without the values (its occurrence
//!   is public).

mod analysis;
mod bots;
mod policy;
mod rules;
mod state;
mod testdata;
mod view;
mod wire;
mod words;

use crate::error::CoreResult;
use crate::game::{Game, OptionSpec, OptionValues, Seat, Seats, Viewer};
use crate::proto::rat_a_tat_cat as pb;
use crate::proto::Outcome;
use crate::rng::Rng;

use pb::event::Kind as E;

use bots::{timeout_draw_and_discard, TIMEOUT_DRAW_AND_DISCARD, TIMEOUT_FORFEIT};
use rules::act;
use state::apply_event;

pub use state::{Config, State};
pub use wire::SeatRow;

// ------------------------------------------------------------------ the game

pub struct RatATatCat;

impl Game for RatATatCat {
    type Config = Config;
    type State = State;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const ID: &'static str = "rat_a_tat_cat";
    const NAME: &'static str = "Rat-a-Tat Cat";
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
    const PROTO_PACKAGE: &'static str = "tablier.rat_a_tat_cat.v1";
    const MIN_PLAYERS: u32 = 2;
    const MAX_PLAYERS: u32 = 6;
    const BOTS: &'static [&'static str] = &["random", "memory"];
    const HAS_EVALUATOR: bool = true;
    const HAS_ROLLOUTS: bool = true;
    const HOST_COMMANDS: &'static [&'static str] = &["stop_after_round"];

    fn host_command(s: &State, command: &str, _rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        rules::host_command(s, command, _rng)
    }

    fn options() -> Vec<OptionSpec> {
        state::options()
    }

    fn configure(seats: u32, options: &OptionValues) -> CoreResult<Config> {
        state::configure(seats, options)
    }

    fn initial(cfg: &Config) -> State {
        state::initial(cfg)
    }

    fn start(state: &State, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        let mut events = Vec::with_capacity(8);
        Self::open(&mut state.clone(), rng, &mut events)?;
        Ok(events)
    }

    fn open(state: &mut State, rng: &mut Rng, events: &mut Vec<pb::Event>) -> CoreResult<()> {
        rules::open(state, rng, events)
    }

    fn decide(
        state: &State,
        seat: Seat,
        action: &pb::Action,
        rng: &mut Rng,
    ) -> CoreResult<Vec<pb::Event>> {
        let mut events = Vec::with_capacity(4);
        act(&mut state.clone(), seat, action, rng, &mut events)?;
        Ok(events)
    }

    fn play(
        state: &mut State,
        seat: Seat,
        action: &pb::Action,
        rng: &mut Rng,
        events: &mut Vec<pb::Event>,
    ) -> CoreResult<()> {
        act(state, seat, action, rng, events)
    }

    fn evolve(s: &mut State, event: &pb::Event) -> CoreResult<()> {
        apply_event::<true>(s, event)
    }

    fn to_act(s: &State) -> Seats {
        if s.phase.awaiting() {
            Seats::one(s.current as Seat)
        } else {
            Seats::NONE
        }
    }

    fn legal_actions_into(s: &State, seat: Seat, v: &mut Vec<pb::Action>) {
        rules::legal_actions_into(s, seat, v)
    }

    fn view(s: &State, viewer: Viewer) -> pb::View {
        view::view(s, viewer)
    }

    fn redact(event: &pb::Event, viewer: Viewer) -> Option<pb::Event> {
        view::redact(event, viewer)
    }

    fn event_type(event: &pb::Event) -> &'static str {
        match &event.kind {
            None => "unknown",
            Some(k) => match k {
                E::RoundDealt(_) => "round_dealt",
                E::InitialPeek(_) => "initial_peek",
                E::DiscardTaken(_) => "discard_taken",
                E::CardDrawn(_) => "card_drawn",
                E::CardReplaced(_) => "card_replaced",
                E::DrawnDiscarded(_) => "drawn_discarded",
                E::PowerUsed(_) => "power_used",
                E::CardPeeked(_) => "card_peeked",
                E::CardsSwapped(_) => "cards_swapped",
                E::SwapSkipped(_) => "swap_skipped",
                E::Called(_) => "called",
                E::TurnEnded(_) => "turn_ended",
                E::PileReshuffled(_) => "pile_reshuffled",
                E::RoundRevealed(_) => "round_revealed",
                E::RevealDraw(_) => "reveal_draw",
                E::RoundScored(_) => "round_scored",
                E::MatchEnded(_) => "match_ended",
                E::StopRequested(_) => "stop_requested",
            },
        }
    }

    fn outcome(s: &State) -> Option<Outcome> {
        rules::outcome(s)
    }

    /// Match clocks (§11): a timed-out seat draws and discards.
    const TIMEOUT_POLICIES: &'static [&'static str] = &[TIMEOUT_DRAW_AND_DISCARD, TIMEOUT_FORFEIT];
    const TIMEOUT_HELP: &'static str = "draw_and_discard: the turn is finished for the player as quietly as possible: they draw from \
        the pile and discard the card unused (a Draw 2 card's second card too), and end the turn without calling. \
        forfeit: the player forfeits and the match ends at once: the lowest total among the other players still \
        in the match wins, shared when tied; the round in progress is not scored.";

    fn timeout_events(
        s: &State,
        seat: Seat,
        policy: &str,
        rng: &mut Rng,
    ) -> CoreResult<Vec<pb::Event>> {
        timeout_draw_and_discard(s, seat, policy, rng)
    }

    fn turn_continues(before: &State, after: &State, seat: Seat) -> bool {
        bots::turn_continues(before, after, seat)
    }

    fn bot_action(s: &State, seat: Seat, bot: &str, rng: &mut Rng) -> CoreResult<pb::Action> {
        bots::bot_action(s, seat, bot, rng)
    }

    fn render(s: &State, viewer: Viewer) -> String {
        view::render(s, viewer)
    }

    fn evaluate(position: &[u8]) -> CoreResult<Vec<u8>> {
        crate::rollout::evaluate::<Self>(position, &Default::default())
    }

    fn evaluate_with(
        position: &[u8],
        settings: &crate::proto::RolloutSettings,
    ) -> CoreResult<Vec<u8>> {
        crate::rollout::evaluate::<Self>(position, settings)
    }

    fn evaluator_move(s: &State, seat: Seat, rng: &mut Rng) -> Option<CoreResult<pb::Action>> {
        Some(crate::rollout::bot_move::<Self>(s, seat, rng))
    }

    fn fork_state(position: &[u8], rng: &mut Rng) -> Option<CoreResult<(Seat, Self::State)>> {
        Some(crate::rollout::fork_state::<Self>(position, rng))
    }

    fn position(s: &State, seat: Seat) -> Option<Vec<u8>> {
        Some(analysis::position(s, seat))
    }

    fn evaluated_actions(evaluation: &[u8]) -> Option<Vec<pb::Action>> {
        use prost::Message;
        let e = pb::Evaluation::decode(evaluation).ok()?;
        e.moves.into_iter().map(|m| m.action).collect()
    }

    fn check_invariants(s: &State) -> Result<(), String> {
        state::check_invariants(s)
    }

    fn check_decision_point(s: &State) -> Result<(), String> {
        state::check_decision_point(s)
    }
}

#[cfg(test)]
mod tests;
