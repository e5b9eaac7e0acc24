//! Démocratie (Democracy): trick taking with a face-down vote pile that sets a fresh trump
//! every trick, and sealed simultaneous play. Rules: `docs/rules/democratie.md`
//! (seed `004_9aab9d3ed6662a33`); section numbers below refer to that document.
//!
//! # Representation
//! A card is a `u8`: `12 * suit + rank_index` for the 48 suit cards (suits C, D, H, S; rank
//! index 0..12 for 5, 4, 3, A, K, Q, J, T, 9, 8, 7, 6, strongest first), 48 and 49 for the
//! Jokers `X1`/`X2`. The protobuf `Card` code is that number plus one, so the unshuffled deck
//! of TV2 is simply `0..deck_size`. Every unordered zone (hands, captured piles, discard) is
//! a `u64` bitset; the ordered zones (stock, vote pile) are small arrays. The whole state is
//! `Copy` and a few hundred bytes.
//!
//! # Events
//! A player only ever commits a card; every other step is automatic and is produced by the
//! same command: the last commit of a trick yields `CardCommitted`, `TrickRevealed`,
//! `TrickResolved`, then `VoteCardFlipped` for the next trick, or `DayDealt` (day 2), or
//! `DealScored` followed by `MatchEnded` or a new `DeckShuffled` + `DayDealt` +
//! `VoteCardFlipped` (the shuffle is drawn from the command's RNG and written in the event).
//! `evolve` recomputes every automatic result and refuses (`Corrupt`) an event that disagrees.
//!
//! # Hidden information (§7)
//! * `CardCommitted` for anyone but the owner (and the auditor) is `{seat}` with the card unset:
//!   the same bytes whatever the card. Errors for a card the seat does not hold are always
//!   `CARD_NOT_IN_HAND` with one fixed message, whoever holds it (AMB16).
//! * `DeckShuffled` hides the order (players get the deck size); `DayDealt` shows each seat
//!   its own hand and only counts of the others and of the vote pile.
//! * Hands are shown sorted in card order, so they never reveal the deal order. Card ids are
//!   the card faces themselves (no positional ids), so nothing needs re-randomising.
//! * Captured piles are counts only until `DealScored` reveals them all (AMB6, AMB15).
//!
//! # Decisions not in the spec (same style as §8)
//! * **AMB17: Administrative cap.** AMB7 can, with probability zero, go on forever. Option
//!   `max_deals` (default 200) ends the match after that many deals without a decided winner,
//!   as `MatchEnded{aborted: true, reason: "DEAL_CAP"}`; no winners. Not a rule result.
//! * **AMB18: Seat that already committed.** It is not awaited; its requests get
//!   `ALREADY_COMMITTED` (AMB16 order), never `NOT_YOUR_TURN`. Requests in any phase other
//!   than TRICK_COMMIT get `WRONG_PHASE`. A seat number outside the match or a card code
//!   outside the `Card` enum is `Malformed`. A Joker code in a match without that Joker is
//!   simply `CARD_NOT_IN_HAND`.
//! * **AMB19: Phases between commands.** All system steps run inside the command that
//!   triggers them, so between commands the match is in TRICK_COMMIT or MATCH_END. The other
//!   phases of §4.1 exist while events are replayed one by one (and are checked there).
//! * **AMB20: Heuristic bot memory.** The `tactician` bot may use the cards revealed earlier
//!   in the deal (the union of all captured piles and the discard), since every such card
//!   was broadcast to all; it never looks at who holds what now.

mod analysis;
mod bots;
mod cards;
mod rules;
mod sim;
mod state;
mod testdata;
mod view;
mod wire;
mod words;

pub use bots::weakest_card;
pub use cards::{deck_size, strength, suit_of};
pub use cards::{resolve_trick, TrickOutcome};
pub use sim::simulate_random_match;
pub use state::{Config, State};
pub use wire::TrickRevealed;

use crate::error::{CoreError, CoreResult};
use crate::game::{Game, OptionSpec, OptionValues, Seat, Seats, Viewer};
use crate::proto::democratie as pb;
use crate::proto::Outcome;
use crate::rng::Rng;
use bots::{match_winners, TIMEOUT_FORFEIT, TIMEOUT_WEAKEST_CARD};
use cards::{cards_of, NO_CARD};
use rules::{check_commit, emit, run_automatic};
use state::evolve_state;
use state::REASON_FORFEIT;
use wire::{commit_action, ev, to_pb};

pub struct Democratie;

impl Game for Democratie {
    type Config = Config;
    type State = State;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const ID: &'static str = "democratie";
    const NAME: &'static str = "Démocratie";
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
    const PROTO_PACKAGE: &'static str = "tablier.democratie.v1";
    const MIN_PLAYERS: u32 = 2;
    const MAX_PLAYERS: u32 = 6;
    const BOTS: &'static [&'static str] = &["random", "tactician"];
    const HAS_EVALUATOR: bool = true;
    const HAS_ROLLOUTS: bool = true;

    fn options() -> Vec<OptionSpec> {
        state::options()
    }

    fn configure(seats: u32, options: &OptionValues) -> CoreResult<Config> {
        Ok(Config {
            seats: seats as u8,
            target: options.int("target"),
            max_deals: options.int("max_deals"),
        })
    }

    fn initial(config: &Config) -> State {
        state::initial(config)
    }

    fn start(state: &State, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        // Enough for the longest command (last commit of a deal: commit, reveal, resolve,
        // score, shuffle, deal, flip) so the vector never grows.
        let mut out = Vec::with_capacity(8);
        Self::open(&mut state.clone(), rng, &mut out)?;
        Ok(out)
    }

    fn open(st: &mut State, rng: &mut Rng, out: &mut Vec<pb::Event>) -> CoreResult<()> {
        if st.phase != pb::Phase::MatchSetup {
            return Err(CoreError::rule(
                "WRONG_PHASE",
                "the match has already started",
            ));
        }
        let first_dealer = rng.index(st.n()) as u32;
        let e = ev(pb::event::Kind::MatchStarted(pb::MatchStarted {
            seats: st.n() as u32,
            target: st.cfg.target,
            first_dealer,
            max_deals: st.cfg.max_deals,
        }));
        emit(st, out, e)?;
        run_automatic(st, out, rng)
    }

    fn decide(
        state: &State,
        seat: Seat,
        action: &pb::Action,
        rng: &mut Rng,
    ) -> CoreResult<Vec<pb::Event>> {
        // Enough for the longest command (last commit of a deal: commit, reveal, resolve,
        // score, shuffle, deal, flip) so the vector never grows.
        let mut out = Vec::with_capacity(8);
        Self::play(&mut state.clone(), seat, action, rng, &mut out)?;
        Ok(out)
    }

    fn play(
        state: &mut State,
        seat: Seat,
        action: &pb::Action,
        rng: &mut Rng,
        events: &mut Vec<pb::Event>,
    ) -> CoreResult<()> {
        // Every check of the command comes first; after it only a bug can fail (`Corrupt`).
        let card = check_commit(state, seat, action)?;
        emit(
            state,
            events,
            ev(pb::event::Kind::CardCommitted(pb::CardCommitted {
                seat,
                card: to_pb(card),
            })),
        )?;
        if state.phase == pb::Phase::TrickCommit {
            return Ok(()); // others still to commit: nothing automatic follows
        }
        run_automatic(state, events, rng)
    }

    /// A seat that has committed is told so (`ALREADY_COMMITTED`), and a commit outside a
    /// trick is `WRONG_PHASE`, even once the match is over (AMB16, TV20).
    fn idle_refusal(state: &State, seat: Seat, action: &pb::Action) -> Option<CoreError> {
        check_commit(state, seat, action).err()
    }

    fn evolve(state: &mut State, event: &pb::Event) -> CoreResult<()> {
        // `evolve_state` checks everything about an event before it writes anything, so a
        // refused event leaves the state untouched without working on a copy (the
        // `malformed_and_illegal_input_is_refused_without_panic` test holds it to that).
        evolve_state::<true>(state, event)
    }

    fn to_act(state: &State) -> Seats {
        if state.phase != pb::Phase::TrickCommit {
            return Seats::NONE;
        }
        let waiting = state.commits[..state.n()]
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c == NO_CARD);
        Seats::from_mask(waiting.fold(0, |m, (i, _)| m | 1 << i))
    }

    fn legal_actions_into(state: &State, seat: Seat, out: &mut Vec<pb::Action>) {
        let s = seat as usize;
        if state.phase == pb::Phase::TrickCommit && s < state.n() && state.commits[s] == NO_CARD {
            out.extend(cards_of(state.hands[s]).map(commit_action));
        }
    }

    fn view(state: &State, viewer: Viewer) -> pb::View {
        view::view(state, viewer)
    }

    fn redact(event: &pb::Event, viewer: Viewer) -> Option<pb::Event> {
        view::redact(event, viewer)
    }

    fn event_type(event: &pb::Event) -> &'static str {
        use pb::event::Kind as K;
        match &event.kind {
            Some(K::MatchStarted(_)) => "match_started",
            Some(K::DeckShuffled(_)) => "deck_shuffled",
            Some(K::DayDealt(_)) => "day_dealt",
            Some(K::VoteCardFlipped(_)) => "vote_card_flipped",
            Some(K::CardCommitted(_)) => "card_committed",
            Some(K::TrickRevealed(_)) => "trick_revealed",
            Some(K::TrickResolved(_)) => "trick_resolved",
            Some(K::DealScored(_)) => "deal_scored",
            Some(K::MatchEnded(_)) => "match_ended",
            None => "unknown",
        }
    }

    fn outcome(state: &State) -> Option<Outcome> {
        if state.phase != pb::Phase::MatchEnd {
            return None;
        }
        Some(Outcome {
            scores: state.tribes[..state.n()]
                .iter()
                .map(|&t| t as i64)
                .collect(),
            winners: match_winners(state),
            reason: if state.forfeit_winners != 0 {
                REASON_FORFEIT.into()
            } else if state.aborted {
                "DEAL_CAP".into()
            } else {
                "TARGET_REACHED".into()
            },
            lower_is_better: false,
            aborted: state.aborted,
            description: String::new(), // worded by the registry (Game::outcome_sentence)
        })
    }

    /// Match clocks (§11): a timed-out seat commits its weakest card.
    const TIMEOUT_POLICIES: &'static [&'static str] = &[TIMEOUT_WEAKEST_CARD, TIMEOUT_FORFEIT];
    const TIMEOUT_HELP: &'static str = "weakest_card: the player seals the weakest card in their hand (the lowest, then the one worth \
        the fewest points), kept secret until the reveal like any other. forfeit: the player forfeits: the match \
        ends at once and the most tribes among the other players win, shared when tied.";

    fn timeout_events(
        state: &State,
        seat: Seat,
        policy: &str,
        rng: &mut Rng,
    ) -> CoreResult<Vec<pb::Event>> {
        bots::timeout_events(state, seat, policy, rng)
    }

    fn bot_action(state: &State, seat: Seat, bot: &str, rng: &mut Rng) -> CoreResult<pb::Action> {
        bots::bot_action(state, seat, bot, rng)
    }

    fn render(state: &State, viewer: Viewer) -> String {
        view::render(state, viewer)
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

    fn check_invariants(st: &State) -> Result<(), String> {
        state::check_invariants(st)
    }
}

#[cfg(test)]
mod tests;
