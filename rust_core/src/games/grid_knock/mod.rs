//! Grid Knock (seed 000): a Skyjo-family game on a ring of 3x4 blocks, where every seat's
//! 15-card domain is its own block plus its left neighbour's column 4, with a knock interrupt.
//! Rules: `docs/rules/grid_knock.md` (the seed wins where it speaks; AMB1-AMB24 bind).
//!
//! # Representation
//! Slot index `s = owner * 12 + (row - 1) * 4 + (col - 1)` (at most 96 slots). Values are `i8`,
//! `filled` and `up` are 128-bit sets. Piles are fixed arrays (top = last). Domain tables are
//! precomputed per configuration: `dom[i][r * 5 + d]`, `d = 0` being `(i+1 mod N, r, 4)`.
//! The engine works on a compact internal move/event pair ([`Move`], [`Ev`]), one-to-one with the
//! wire's actions and events and named as they are; protobuf is only the boundary. `decide`
//! clones the state and applies each event as it emits it, so all automatic steps (window
//! closings, W/Y placement, turn end, scoring, next deal) are computed from the state they follow
//! and `evolve` re-validates every one of them.
//!
//! # Hidden information
//! Cards carry no ids (a card is its value), so nothing exposed can leak deck order. Deals and
//! reshuffles reach seats without their hidden piles; face-down values reach nobody; a sealed
//! initial choice or knock answer reaches only its author until the window closes; Y reaches
//! only K while it was face down. Every such event stays as a public stub for the others.
//!
//! # Decisions not in the spec (same style as section 8)
//! - **AMB25 — Sealed initial reveal.** The initial reveal is simultaneous (3.2 step 4): each
//!   `reveal_initial` is sealed (other seats learn only that a choice was made) until every seat
//!   has chosen 2 cards; then one automatic event flips all 2N cards at once.
//! - **AMB26 — Automatic `end_triples`.** A TRIPLES window with no triple in the owner's domain
//!   closes automatically (the spec allows it, 4.2), so seats are only asked when a choice exists.
//! - **AMB27 — Triple cells.** `discard_triple` may name its 3 cells in any order; they go onto the
//!   discard pile in line order (R6). Any count other than 3 is the rule error `NOT_A_TRIPLE`.
//! - **AMB28 — Administrative cap.** Nothing forces a round to end (a seat may keep swapping face-up
//!   cards), so option `turn_cap` (default 3000 turns per match) stops the match with
//!   `MatchAborted`; the outcome then has `aborted = true`, the totals so far and no winner.
//! - **AMB29 — Reshuffle timing.** The reshuffle (R17) is its own chance event, emitted by the
//!   `draw_from_pile` command just before `Drawn`.
//! - **AMB30 — Variants.** Options: `target_score` (100, AMB13), `closer_penalty` (`double`, AMB12;
//!   `none` disables it), `knocking` (`on`; `off` plays without knock windows, as the seed's
//!   2-player game always does).
//! - **AMB31 — Round-1 dealer.** Drawn uniformly at random in `start` (3.2 step 1).
//! - **AMB32 — Knock timeout.** The core has no clock. An open window runs a timer of option
//!   `knock_timeout` seconds (default 60; 0: none), and the server gives the host command
//!   `close_knock_window` when it runs out; the table's host (the operator, through the
//!   `HostCommand` RPC) may give it earlier. Every seat of E that has not answered passes (4.2: "a
//!   timeout counts as `pass_knock`"), with the same `knock_answered` events as a pass it gave
//!   itself, and the window closes.

mod analysis;
mod bots;
mod invariants;
mod rules;
mod state;
mod testdata;
mod triples;
mod view;
mod wire;
mod words;

use crate::error::{CoreError, CoreResult};
use crate::game::{Game, OptionSpec, OptionValues, Seat, Seats, Timer, Viewer};
use crate::proto::grid_knock as pb;
use crate::proto::Outcome;
use crate::rng::Rng;

use bots::{bot_action, timeout_default_move, TIMEOUT_DEFAULT_MOVE, TIMEOUT_FORFEIT};
use invariants::invariants;
use rules::close_knock_window;
use state::apply;
use view::{build_view, redact_event, render_state};
use wire::{ev_to_pb, pb_to_ev, seat_list, to_action, to_move};

// What the crate's outside users reach (benches/grid_knock.rs, the engine's own move/event path).
pub use rules::{act, auto_steps, legal_moves};
pub use state::triples_after_change;
pub use state::{to_act_mask, Config, Phase, State};
pub use state::{Card, Ev, Move, RoundScored};

/// The game; every decision is delegated to the parts above.
pub struct GridKnock;

impl Game for GridKnock {
    type Config = Config;
    type State = State;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const ID: &'static str = "grid_knock";
    const NAME: &'static str = "Grid Knock";
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
    const PROTO_PACKAGE: &'static str = "tablier.grid_knock.v1";
    const MIN_PLAYERS: u32 = 2;
    const MAX_PLAYERS: u32 = 8;
    const BOTS: &'static [&'static str] = &["random", "greedy"];
    const HAS_EVALUATOR: bool = true;
    const HAS_ROLLOUTS: bool = true;
    const HOST_COMMANDS: &'static [&'static str] = &["close_knock_window"];

    fn options() -> Vec<OptionSpec> {
        state::options()
    }

    fn configure(seats: u32, options: &OptionValues) -> CoreResult<Config> {
        Ok(Config::new(seats as u8, options))
    }

    fn initial(config: &Config) -> State {
        State::initial(config)
    }

    fn start(state: &State, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        if state.phase != Phase::DealPending || state.round != 0 {
            return Err(CoreError::rule(
                "ALREADY_STARTED",
                "the match has already started",
            ));
        }
        let mut st = state.clone();
        let mut evs = Vec::new();
        auto_steps(&mut st, rng, &mut evs)?;
        Ok(evs.iter().map(ev_to_pb).collect())
    }

    /// An open knock window's timeout (AMB32); the key tells one turn's window from the next.
    fn timer(state: &State) -> Option<Timer> {
        (state.phase == Phase::KnockWindow && state.cfg.knock_timeout > 0).then_some(Timer {
            command: "close_knock_window",
            seconds: state.cfg.knock_timeout,
            key: (state.round as u64) << 32 | state.turns as u64,
        })
    }

    /// `close_knock_window` (AMB32): every seat still to answer passes.
    fn host_command(state: &State, command: &str, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        debug_assert_eq!(command, "close_knock_window");
        close_knock_window(state, rng)
    }

    fn decide(
        state: &State,
        seat: Seat,
        action: &pb::Action,
        rng: &mut Rng,
    ) -> CoreResult<Vec<pb::Event>> {
        let mv = to_move(action, state.n())?;
        let mut st = state.clone();
        let mut evs = Vec::with_capacity(8);
        act(&mut st, seat as u8, mv, rng, &mut evs)?;
        Ok(evs.iter().map(ev_to_pb).collect())
    }

    fn evolve(state: &mut State, event: &pb::Event) -> CoreResult<()> {
        let ev = pb_to_ev(event)?;
        apply(state, &ev)
    }

    fn to_act(state: &State) -> Seats {
        Seats::from_mask(to_act_mask(state) as u32)
    }

    fn legal_actions_into(state: &State, seat: Seat, out: &mut Vec<pb::Action>) {
        if seat as usize >= state.n() {
            return;
        }
        let mut moves = Vec::new();
        legal_moves(state, seat as u8, &mut moves);
        out.extend(moves.into_iter().map(to_action));
    }

    fn view(state: &State, viewer: Viewer) -> pb::View {
        build_view(state, viewer)
    }

    fn redact(event: &pb::Event, viewer: Viewer) -> Option<pb::Event> {
        Some(redact_event(event, viewer))
    }

    fn event_type(event: &pb::Event) -> &'static str {
        use pb::event::Kind as K;
        match &event.kind {
            None => "unknown",
            Some(K::Dealt(_)) => "dealt",
            Some(K::InitialChosen(_)) => "initial_chosen",
            Some(K::InitialRevealed(_)) => "initial_revealed",
            Some(K::Reshuffled(_)) => "reshuffled",
            Some(K::Drawn(_)) => "drawn",
            Some(K::TookDiscard(_)) => "took_discard",
            Some(K::KnockAnswered(_)) => "knock_answered",
            Some(K::KnockWindowClosed(_)) => "knock_window_closed",
            Some(K::KnockAccepted(_)) => "knock_accepted",
            Some(K::KnocksRefused(_)) => "knocks_refused",
            Some(K::Kept(_)) => "kept",
            Some(K::DiscardedAndRevealed(_)) => "discarded_and_revealed",
            Some(K::KnockerSwapped(_)) => "knocker_swapped",
            Some(K::TripleDiscarded(_)) => "triple_discarded",
            Some(K::TriplesEnded(_)) => "triples_ended",
            Some(K::TookFromKnocker(_)) => "took_from_knocker",
            Some(K::ReturnSwapped(_)) => "return_swapped",
            Some(K::ExchangedCardDiscarded(_)) => "exchanged_card_discarded",
            Some(K::HeldCardPlaced(_)) => "held_card_placed",
            Some(K::HeldCardDiscarded(_)) => "held_card_discarded",
            Some(K::EmptyPassed(_)) => "empty_passed",
            Some(K::TurnEnded(_)) => "turn_ended",
            Some(K::RoundScored(_)) => "round_scored",
            Some(K::MatchAborted(_)) => "match_aborted",
            Some(K::Forfeited(_)) => "forfeited",
        }
    }

    fn outcome(state: &State) -> Option<Outcome> {
        let n = state.n();
        let scores: Vec<i64> = state.totals[..n].iter().map(|&v| v as i64).collect();
        match state.phase {
            Phase::Over => Some(Outcome {
                scores,
                winners: seat_list(state.winners),
                reason: if state.forfeited {
                    "FORFEIT"
                } else {
                    "TARGET_SCORE_REACHED"
                }
                .into(),
                lower_is_better: true,
                aborted: false,
                description: String::new(), // worded by the registry (Game::outcome_sentence)
            }),
            Phase::Aborted => Some(Outcome {
                scores,
                winners: vec![],
                reason: "TURN_CAP".into(),
                lower_is_better: true,
                aborted: true,
                description: String::new(), // worded by the registry (Game::outcome_sentence)
            }),
            _ => None,
        }
    }

    /// Match clocks (§11): a timed-out seat makes the default move of its phase.
    const TIMEOUT_POLICIES: &'static [&'static str] = &[TIMEOUT_DEFAULT_MOVE, TIMEOUT_FORFEIT];
    const TIMEOUT_HELP: &'static str = "default_move: the simplest move is made for the player at each step: no knock, refuse \
        knocks, draw from the pile, discard the drawn card and turn up their first face-down card, no more \
        triples; where a card must be chosen, the first one of their cards. forfeit: the player forfeits: the \
        match ends at once and the lowest total among the other players wins, shared when tied; the round in \
        progress is not scored.";

    fn timeout_events(
        state: &State,
        seat: Seat,
        policy: &str,
        rng: &mut Rng,
    ) -> CoreResult<Vec<pb::Event>> {
        timeout_default_move(state, seat, policy, rng)
    }

    fn turn_continues(before: &State, after: &State, seat: Seat) -> bool {
        bots::turn_continues(before, after, seat)
    }

    fn bot_action(state: &State, seat: Seat, bot: &str, rng: &mut Rng) -> CoreResult<pb::Action> {
        bot_action(state, seat, bot, rng)
    }

    fn render(state: &State, viewer: Viewer) -> String {
        render_state(state, viewer)
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

    fn check_invariants(state: &State) -> Result<(), String> {
        invariants(state)
    }
}

#[cfg(test)]
mod tests;
