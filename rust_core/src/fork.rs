//! Forks: a match that starts from another match's state at one of its seqs (ForkGame), the
//! same in every game. Its opening event is the generic `forked` (`tablier.v1.Forked`), the
//! fork's seq 1; nothing precedes it.
//!
//! * A **seat fork** starts from what one seat knew there: its `Position`, every card or tile
//!   it could not see dealt afresh by the game's evaluator ([`crate::game::Game::fork_state`],
//!   the `sample` of its rollouts). The deal is keyed by 32 bytes drawn in [`open`] from the
//!   fork's own seed (the RNG of the command at seq 1) and written into the event, so replay
//!   ([`started`]) is a pure function of the event: the deal's ChaCha20 stream is a function of
//!   bytes the event holds, not a draw of the replay. The parent's hidden cards are never an
//!   input: the fork's state is a function of the Position and the deal alone.
//! * An **auditor fork** starts from the parent's full state: the event carries the parent's
//!   events up to that seq, and replay folds them.
//!
//! The auditor receives the event whole; every other viewer the lineage alone ([`redact`]).

use prost::Message;

use crate::clock;
use crate::error::{CoreError, CoreResult};
use crate::game::{Game, Seat, Viewer};
use crate::proto::viewer::Kind;
use crate::proto::Forked;
use crate::rng::Rng;
use crate::words;

/// The kind of a fork's opening event (`Event.type`).
pub const FORKED: &str = "forked";
/// Bytes of a chain hash (the parent's head) and of a deal's key.
const HASH_BYTES: usize = 32;
/// Deals tried before a seat fork is refused ([`started`]).
const MAX_DEALS: usize = 1_000;

/// Whose knowledge a fork starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForkedAs {
    Seat(Seat),
    Auditor,
}

/// Decodes a stored `forked` event.
pub fn decode(payload: &[u8]) -> CoreResult<Forked> {
    Forked::decode(payload).map_err(|e| CoreError::corrupt(format!("undecodable forked: {e}")))
}

/// Whose knowledge `forked` starts from; `Malformed` when it names neither a seat nor the
/// auditor.
pub fn forked_as(forked: &Forked) -> CoreResult<ForkedAs> {
    match forked.forked_as.as_ref().and_then(|v| v.kind.as_ref()) {
        Some(Kind::Seat(s)) => Ok(ForkedAs::Seat(*s)),
        Some(Kind::Auditor(_)) => Ok(ForkedAs::Auditor),
        _ => Err(CoreError::malformed(
            "a fork starts from a seat's knowledge or the auditor's, not a spectator's",
        )),
    }
}

/// The fork's opening event decided: `request` (a `Forked` without its deal; a deal given is
/// ignored) checked, the deal of a seat fork drawn from `rng` (the fork's RNG at seq 1). The
/// event applies to `initial` (the fork's state before anything happened) and leaves a match
/// somebody has to play on, or it is refused with the reason in words.
pub fn open<G: Game>(
    initial: &G::State,
    seats: u32,
    request: &[u8],
    rng: &mut Rng,
) -> CoreResult<Forked> {
    let mut forked = Forked::decode(request)
        .map_err(|e| CoreError::malformed(format!("cannot decode the fork's opening: {e}")))?;
    if forked.parent_game_id.is_empty() {
        return Err(CoreError::malformed(
            "a fork names the match it was forked from",
        ));
    }
    if forked.parent_head.len() != HASH_BYTES {
        return Err(CoreError::malformed(format!(
            "the parent's chain head is {HASH_BYTES} bytes, not {}",
            forked.parent_head.len()
        )));
    }
    forked.deal.clear();
    match forked_as(&forked)? {
        ForkedAs::Seat(seat) => {
            if seat >= seats {
                return Err(CoreError::malformed(format!(
                    "seat {seat} is not in this {seats}-seat match"
                )));
            }
            if !forked.parent_events.is_empty() {
                return Err(CoreError::malformed(
                    "a seat fork starts from the seat's position, not from the parent's events",
                ));
            }
            let mut deal = Vec::with_capacity(HASH_BYTES);
            for _ in 0..HASH_BYTES / 8 {
                deal.extend_from_slice(&rng.next_u64().to_le_bytes());
            }
            forked.deal = deal;
        }
        ForkedAs::Auditor => {
            if !forked.position.is_empty() {
                return Err(CoreError::malformed(
                    "an auditor fork starts from the parent's events, not from a position",
                ));
            }
        }
    }
    let state = started::<G>(initial, seats, &forked).map_err(|e| match e {
        CoreError::Corrupt(what) => CoreError::malformed(format!(
            "the parent's log does not give a state to fork: {what}"
        )),
        e => e,
    })?;
    let at = forked.parent_seq;
    if G::outcome(&state).is_some() {
        return Err(CoreError::rule(
            "NOTHING_TO_PLAY_ON",
            format!("the match is over at seq {at}: there is nothing to play on from there"),
        ));
    }
    if G::to_act(&state).is_empty() && G::timer(&state).is_none() {
        return Err(CoreError::rule(
            "NOTHING_TO_PLAY_ON",
            format!("nobody decides at seq {at}: fork at a seq where a move is awaited"),
        ));
    }
    Ok(forked)
}

/// The fork's starting state: what its opening event gives, from `initial` (the fork's state
/// before anything happened). Replay: a pure function of the event. `Corrupt` when the event
/// does not give a state of this match.
pub fn started<G: Game>(initial: &G::State, seats: u32, forked: &Forked) -> CoreResult<G::State> {
    match forked_as(forked).map_err(|e| CoreError::corrupt(e.to_string()))? {
        ForkedAs::Seat(seat) => {
            if seat >= seats {
                return Err(CoreError::corrupt(format!(
                    "a fork from seat {seat} of a {seats}-seat match"
                )));
            }
            let key: [u8; HASH_BYTES] = forked.deal.as_slice().try_into().map_err(|_| {
                CoreError::corrupt(format!(
                    "a seat fork's deal is {HASH_BYTES} bytes, not {}",
                    forked.deal.len()
                ))
            })?;
            let mut rng = Rng::for_command(&key, 0);
            // Deals until every awaited seat has a move: what the public log says beyond the
            // position (Qwirkle's opening: the starter holds a line of the size announced) is
            // kept by drawing again from the same stream, as deterministic as one draw.
            let mut dealt = None;
            for _ in 0..MAX_DEALS {
                let (of, state) =
                    G::fork_state(&forked.position, &mut rng).ok_or_else(|| {
                        CoreError::Unsupported(format!(
                            "{} has no evaluator to deal a seat's position from",
                            G::NAME
                        ))
                    })??;
                let playable = G::outcome(&state).is_some()
                    || G::check_decision_point(&state).is_ok()
                        && G::to_act(&state)
                            .iter()
                            .all(|s| !G::legal_actions(&state, s).is_empty());
                if playable {
                    dealt = Some((of, state));
                    break;
                }
            }
            let Some((of, state)) = dealt else {
                return Err(CoreError::malformed(format!(
                    "no deal of the cards seat {seat} could not see gives every awaited seat a move"
                )));
            };
            if of != seat {
                return Err(CoreError::malformed(format!(
                    "the position is seat {of}'s, not seat {seat}'s"
                )));
            }
            // The dealt table gives back the seat's position, options and seat count included:
            // a position of another table (or another game's) is refused here.
            if G::position(&state, seat).as_deref() != Some(forked.position.as_slice()) {
                return Err(CoreError::malformed(
                    "the position does not deal back to itself: it is not a position of this table",
                ));
            }
            Ok(state)
        }
        ForkedAs::Auditor => {
            let mut state = initial.clone();
            for (i, e) in forked.parent_events.iter().enumerate() {
                match e.kind.as_str() {
                    FORKED if i == 0 => state = started::<G>(initial, seats, &decode(&e.payload)?)?,
                    FORKED => {
                        return Err(CoreError::corrupt(
                            "a fork's opening after the first event of a match",
                        ))
                    }
                    // Changes nothing but the clock: the policy's events follow it.
                    clock::SEAT_TIMED_OUT => {}
                    _ => {
                        let event = G::Event::decode(e.payload.as_slice())
                            .map_err(|e| CoreError::corrupt(format!("undecodable event: {e}")))?;
                        G::evolve(&mut state, &event)?;
                    }
                }
            }
            Ok(state)
        }
    }
}

/// The opening as `viewer` may see it: whole for the auditor, the lineage alone for anyone
/// else (the position, the deal and the parent's events hold hidden cards).
pub fn redact(forked: &Forked, viewer: Viewer) -> Forked {
    if viewer == Viewer::Auditor {
        return forked.clone();
    }
    Forked {
        parent_game_id: forked.parent_game_id.clone(),
        parent_seq: forked.parent_seq,
        parent_head: forked.parent_head.clone(),
        forked_as: forked.forked_as,
        ..Forked::default()
    }
}

/// The sentence of a fork's opening, the same in every game.
pub fn sentence(forked: &Forked, viewer: Viewer) -> String {
    let parent: String = forked.parent_game_id.chars().take(8).collect();
    let from = format!(
        "This match is a fork of match {parent} from seq {}",
        forked.parent_seq
    );
    match forked_as(forked) {
        Ok(ForkedAs::Seat(seat)) => format!(
            "{from}, as {} knew it: everything {} could not see there was dealt afresh. A fork is never rated.",
            words::whom(seat, viewer),
            words::whom(seat, viewer),
        ),
        _ => format!("{from}, every card and tile as it lay there. A fork is never rated."),
    }
}

/// The `Forked` request a seat or auditor fork starts from (what the service sends the core).
pub fn request(
    parent_game_id: &str,
    parent_seq: u64,
    parent_head: &[u8],
    from: ForkedAs,
    position: Vec<u8>,
    parent_events: Vec<(String, Vec<u8>)>,
) -> Forked {
    let viewer = match from {
        ForkedAs::Seat(s) => Viewer::Seat(s),
        ForkedAs::Auditor => Viewer::Auditor,
    };
    Forked {
        parent_game_id: parent_game_id.to_string(),
        parent_seq,
        parent_head: parent_head.to_vec(),
        forked_as: Some(viewer.to_proto()),
        position,
        deal: Vec::new(),
        parent_events: parent_events
            .into_iter()
            .map(|(kind, payload)| crate::proto::ForkedEvent { kind, payload })
            .collect(),
    }
}
