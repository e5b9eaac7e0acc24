//! Bots (random, greedy) and the timeout default moves of match clocks (§11).

use crate::error::{CoreError, CoreResult};
use crate::game::{Game, Seat};
use crate::proto::qwirkle as pb;
use crate::rng::Rng;

use super::plays::best_play;
use super::rules::opening_options;
use super::state::{Phase, State};
use super::tiles::ids_list;
use super::wire::{action, ended, ev};
use super::Qwirkle;

/// The timeout policy `pass` (match clocks, docs/rules/qwirkle.md §11).
pub(super) const TIMEOUT_PASS: &str = "pass";
/// The timeout policy `forfeit`: the match ends, the seat to act losing (§11).
pub(super) const TIMEOUT_FORFEIT: &str = "forfeit";

/// A timed-out seat passes its turn: a `passed` event, even with tiles in the bag or a legal
/// play in hand (§11), counted as a turn without a placement by the idle cap (AMB18). The
/// opening play cannot be passed (R9): the start player makes the first opening play listed.
pub(super) fn timeout_pass(
    state: &State,
    seat: Seat,
    policy: &str,
    rng: &mut Rng,
) -> CoreResult<Vec<pb::Event>> {
    if policy != TIMEOUT_PASS && policy != TIMEOUT_FORFEIT {
        return Err(CoreError::Unsupported(format!(
            "qwirkle has no timeout policy {policy:?}"
        )));
    }
    if seat != state.current || !matches!(state.phase, Phase::Opening | Phase::Turn) {
        return Err(CoreError::not_your_turn());
    }
    if policy == TIMEOUT_FORFEIT {
        return Ok(vec![ended(state, pb::EndReason::Forfeit, seat, 0, None)]);
    }
    if state.phase == Phase::Opening {
        let first = Qwirkle::legal_actions(state, seat)
            .into_iter()
            .next()
            .ok_or_else(CoreError::not_your_turn)?;
        return Qwirkle::decide(state, seat, &first, rng);
    }
    let mut out = vec![ev(pb::event::Kind::Passed(pb::Passed { seat }))];
    if state.idle + 1 >= state.config.idle_cap {
        out.push(ended(state, pb::EndReason::IdleCap, 0, 0, None));
    }
    Ok(out)
}

/// Greedy: the first play of the best immediate score; with no play, exchange everything the
/// bag allows (lowest types first), or pass.
fn greedy(state: &State, seat: Seat) -> pb::Action {
    let types = state.hand_types(seat);
    if state.phase == Phase::Opening {
        let g = state.announced[seat as usize & 3] as u32;
        let v = opening_options(types, g)
            .into_iter()
            .next()
            .unwrap_or_default();
        return action(pb::action::Kind::Opening(pb::OpeningPlay { tile_types: v }));
    }
    if let Some((pl, _)) = best_play(&state.board, types) {
        return action(pb::action::Kind::Play(pb::Play {
            placements: pl
                .into_iter()
                .map(|(x, y, t)| pb::Placement {
                    x,
                    y,
                    tile_type: t as u32,
                })
                .collect(),
        }));
    }
    let bag_n = state.bag.count_ones() as usize;
    if bag_n == 0 {
        return action(pb::action::Kind::Pass(pb::Pass {}));
    }
    let mut ids = ids_list(state.hands[seat as usize]);
    ids.truncate(bag_n);
    action(pb::action::Kind::Exchange(pb::Exchange {
        tile_types: ids.iter().map(|id| id / 3).collect(),
    }))
}

pub(super) fn bot_action(
    state: &State,
    seat: Seat,
    bot: &str,
    rng: &mut Rng,
) -> CoreResult<pb::Action> {
    if seat != state.current || !matches!(state.phase, Phase::Opening | Phase::Turn) {
        return Err(CoreError::not_your_turn());
    }
    if bot != "greedy" {
        let mut moves = Qwirkle::legal_actions(state, seat);
        if moves.is_empty() {
            return Err(CoreError::not_your_turn());
        }
        let i = rng.index(moves.len());
        return Ok(moves.swap_remove(i));
    }
    Ok(greedy(state, seat))
}
