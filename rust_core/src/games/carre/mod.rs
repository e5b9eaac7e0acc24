//! Carré ("square alignments"), `docs/rules/carre.md` (seed 001).
//!
//! Two seats (seat 0 is the spec's P1, seat 1 is P2), one 52-card pack, 8 cards dealt each,
//! 36 in the stock. Each seat owns a 3x3 *square*; a turn is an automatic draw (while the stock
//! lasts) and then exactly one of: discard a card, place a card on a cell, or go out (own raw
//! points >= 5). Lines (3 rows, 3 columns, 2 diagonals) of three face-up tops score 2 when they
//! share a suit, 1 when they share a colour; face-down and empty cells block. Round score:
//! `raw` up to 5, `2*raw - 5` above, minus 1 for the seat that went out. Four rounds with
//! alternating starters; the higher total wins, equal totals are a draw (AMB13).
//!
//! # Representation
//! Cards are `0..52`, `rank * 4 + suit` with ranks `0..=8` = Ace..Nine, 9 = Ten, 10 = Jack,
//! 11 = Queen, 12 = King and suits 0 = S, 1 = H, 2 = D, 3 = C (H and D red). Hands are `u64`
//! bitsets; the stock is the dealt array with a cursor; every placement is appended to a
//! 52-entry log (piles are the log filtered by cell, so they keep placement order) and each of
//! the 18 cells caches its top log index and a *scoring mask*: `1 << suit | 0x10 (black) or
//! 0x20 (red)` for a face-up top, 0 for empty/face-down. A line's value is then
//! `(a & 0x0F != 0) + (a & 0x30 != 0)` with `a` the AND of its three masks (a suit match implies
//! the colour match, which gives 2). The whole state is `Copy` (no heap).
//!
//! # Events
//! `start` draws the first starter (unless fixed by the `first_starter` option) and the shuffle,
//! and records both (`MatchStarted`, `RoundDealt` with both hands and the whole stock). Every
//! later draw is the top of that recorded stock (`CardDrawn`), so `evolve` never needs
//! randomness. `decide` returns the action's event followed by every automatic step: the next
//! draw, `TurnPassed`, `RoundScored`, the next `RoundDealt` (new shuffle drawn from the command's
//! RNG) and its first draw, or `MatchEnded`.
//!
//! Rule refusal codes are the spec's §4.3 codes without the `E_` prefix (`NOT_IN_HAND`,
//! `WRONG_CELL`, `OWN_SQUARE_ONLY`, `CELL_FACE_UP`, `CELL_NOT_FACE_UP`, `GO_OUT_BELOW_5`), plus
//! `GO_OUT_WITHOUT_DRAW` (AMB26) and the platform's `NOT_YOUR_TURN` / `GAME_OVER`, checked in
//! the AMB21 order. Shape errors (no action kind, no card or a rank/suit outside the pack, a
//! cell outside 1..9, an unknown target square, a seat outside 0..1) are `Malformed`.
//!
//! # Bots
//! `random` is uniform over the legal actions. `greedy` uses only public tops and its own
//! hand: it scores every legal move by (own round score − opponent's round score) after the
//! move, plus a small bonus for own lines one card from scoring with the third cell open (and
//! a malus for the opponent's), minus the value of the card spent; it goes out when that locks
//! a lead of 3+ points (1+ with 10 or fewer stock cards left, or always at 10+ raw points).
//! It won 120 of 120 seeded matches against `random` (test `bots_play_legal_moves_...`).
//!
//! # Decisions added here (in the spec's style)
//! - **AMB22 (card identities on the wire).** Cards are sent as (rank, suit), never as deck
//!   positions or ids, so no id can leak the stock order; nothing needs re-randomising.
//! - **AMB23 (who placed a face-down card in the views).** Every pile entry carries `placed_by`
//!   (public, §7); a face-down entry carries its card only for its placer and the auditor, also
//!   after it is covered. Spectators never see face-down identities or hands.
//! - **AMB24 (first starter option).** The spec lets the engine "take it as a parameter or from
//!   the RNG": option `first_starter` = `random` (default, drawn in `start`), `0` or `1`.
//! - **AMB25 (tie-break rounds cap).** With `tiebreak_extra_rounds = true`, extra rounds are
//!   played while the totals are equal, at most 8 of them; a tie after that ends the match as
//!   an administrative abort (`aborted: true`, no winners, reason `ROUND_CAP`). Extra rounds
//!   continue the R23 alternation (odd rounds by the first starter).
//! - **AMB26 (go_out without a draw disabled).** With `allow_go_out_without_draw = false` (AMB9
//!   flag), going out on a turn with no draw is refused with `GO_OUT_WITHOUT_DRAW`.
//! - **AMB27 (`cell_of_rank` option).** AMB2's constant is the option `cell_of_rank`: nine
//!   digits, a permutation of 1..9, giving the cell of Ace..Nine (default `123456789`).
//! - **AMB28 (legal action order).** `go_out` first when legal; then per card of the hand in
//!   card order (rank, then suit S H D C): placements in the own square (cells 1..9), placements
//!   in the opponent's square (cells 1..9), then its discard (matches TV19's listing).

mod analysis;
mod bots;
mod cards;
mod invariants;
mod rules;
mod scoring;
mod sim;
mod state;
mod testdata;
mod view;
mod wire;
mod words;

pub use cards::card_mask;
pub use cards::parse_card;
pub use scoring::score_square;
pub use sim::simulate_random_round;
pub use state::{Config, State};

use crate::error::CoreResult;
use crate::game::{Game, OptionSpec, OptionValues, Seat, Seats, Viewer};
use crate::proto::carre as pb;
use crate::proto::Outcome;
use crate::rng::Rng;

use bots::{TIMEOUT_DISCARD, TIMEOUT_FORFEIT};
use pb::event::Kind as Ev;

pub struct Carre;

impl Game for Carre {
    type Config = Config;
    type State = State;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const ID: &'static str = "carre";
    const NAME: &'static str = "Carré";
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
    const PROTO_PACKAGE: &'static str = "tablier.carre.v1";
    const MIN_PLAYERS: u32 = 2;
    const MAX_PLAYERS: u32 = 2;
    const BOTS: &'static [&'static str] = &["random", "greedy"];
    const HAS_EVALUATOR: bool = true;
    const HAS_ROLLOUTS: bool = true;

    fn options() -> Vec<OptionSpec> {
        state::options()
    }

    fn configure(seats: u32, options: &OptionValues) -> CoreResult<Config> {
        state::configure(seats, options)
    }

    fn initial(config: &Config) -> State {
        State::new(*config)
    }

    fn start(state: &State, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        rules::start(state, rng)
    }

    fn decide(
        state: &State,
        seat: Seat,
        action: &pb::Action,
        rng: &mut Rng,
    ) -> CoreResult<Vec<pb::Event>> {
        rules::decide(state, seat, action, rng)
    }

    fn evolve(s: &mut State, event: &pb::Event) -> CoreResult<()> {
        state::evolve(s, event)
    }

    fn to_act(s: &State) -> Seats {
        rules::to_act(s)
    }

    fn legal_actions_into(s: &State, seat: Seat, out: &mut Vec<pb::Action>) {
        rules::legal_actions_into(s, seat, out)
    }

    fn view(s: &State, viewer: Viewer) -> pb::View {
        view::view(s, viewer)
    }

    fn redact(event: &pb::Event, viewer: Viewer) -> Option<pb::Event> {
        view::redact(event, viewer)
    }

    fn event_type(event: &pb::Event) -> &'static str {
        match &event.kind {
            Some(Ev::MatchStarted(_)) => "match_started",
            Some(Ev::RoundDealt(_)) => "round_dealt",
            Some(Ev::CardDrawn(_)) => "card_drawn",
            Some(Ev::CardPlaced(_)) => "card_placed",
            Some(Ev::CardDiscarded(_)) => "card_discarded",
            Some(Ev::WentOut(_)) => "went_out",
            Some(Ev::TurnPassed(_)) => "turn_passed",
            Some(Ev::RoundScored(_)) => "round_scored",
            Some(Ev::MatchEnded(_)) => "match_ended",
            None => "empty",
        }
    }

    fn outcome(s: &State) -> Option<Outcome> {
        rules::outcome(s)
    }

    /// Match clocks (§11): a timed-out seat discards.
    const TIMEOUT_POLICIES: &'static [&'static str] = &[TIMEOUT_DISCARD, TIMEOUT_FORFEIT];
    const TIMEOUT_HELP: &'static str = "discard: the player discards the lowest card in their hand (aces first, kings last), face up and out \
        of play for the round; they never go out or place a card. forfeit: the player forfeits: the match ends at \
        once and the other player wins, whatever the totals.";

    fn timeout_events(
        s: &State,
        seat: Seat,
        policy: &str,
        rng: &mut Rng,
    ) -> CoreResult<Vec<pb::Event>> {
        bots::timeout_events(s, seat, policy, rng)
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
        invariants::check_invariants(s)
    }
}

#[cfg(test)]
mod tests;
