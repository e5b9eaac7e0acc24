//! Match clocks (§11): the timeout policies, the forfeit and its winners.

use super::cards::{cards_of, points, strength, NOBODY, NO_CARD};
use super::state::State;
use super::wire::{commit_action, ev};
use super::Democratie;
use crate::error::{CoreError, CoreResult};
use crate::game::{Game, Seat};
use crate::proto::democratie as pb;
use crate::rng::Rng;

/// The timeout policy `weakest_card` (match clocks, docs/rules/democratie.md §11).
pub(super) const TIMEOUT_WEAKEST_CARD: &str = "weakest_card";
/// The timeout policy `forfeit`, and the reason of the match end it records (§11).
pub(super) const TIMEOUT_FORFEIT: &str = "forfeit";
pub(super) const REASON_FORFEIT: &str = "FORFEIT";

/// The winners (a seat mask) when `seat` forfeits (§11): the highest tribe total among the
/// other seats (§6.2). The tie-break of §6.2 plays further deals, which a forfeit ends: tied
/// seats share the win.
pub(super) fn forfeit_winners(st: &State, seat: usize) -> u8 {
    let others = (0..st.n()).filter(|&s| s != seat);
    let best = others.clone().map(|s| st.tribes[s]).max().unwrap_or(0);
    others
        .filter(|&s| st.tribes[s] == best)
        .fold(0u8, |m, s| m | 1 << s)
}

/// The seats that won the match: the one of §6.2, or those of a forfeit (§11).
pub(super) fn match_winners(st: &State) -> Vec<u32> {
    if st.forfeit_winners != 0 {
        return (0..st.n() as u32)
            .filter(|w| st.forfeit_winners >> w & 1 == 1)
            .collect();
    }
    if st.winner == NOBODY {
        vec![]
    } else {
        vec![st.winner as u32]
    }
}

/// The card a timed-out seat commits (§11): the least committal of its hand, the one least
/// able to win the trick (lowest strength, §2.1, a Joker counting as a 5, §4.3) and worth the
/// fewest points to whoever captures it (§6.1); then the lowest card code.
pub fn weakest_card(hand: u64) -> Option<u8> {
    cards_of(hand).min_by_key(|&c| (strength(c), points(c), c))
}

pub(super) fn timeout_events(
    state: &State,
    seat: Seat,
    policy: &str,
    rng: &mut Rng,
) -> CoreResult<Vec<pb::Event>> {
    if policy != TIMEOUT_WEAKEST_CARD && policy != TIMEOUT_FORFEIT {
        return Err(CoreError::Unsupported(format!(
            "democratie has no timeout policy {policy:?}"
        )));
    }
    let s = seat as usize;
    if state.phase != pb::Phase::TrickCommit || s >= state.n() || state.commits[s] != NO_CARD {
        return Err(CoreError::not_your_turn());
    }
    if policy == TIMEOUT_FORFEIT {
        let won = forfeit_winners(state, s);
        return Ok(vec![ev(pb::event::Kind::MatchEnded(pb::MatchEnded {
            winners: (0..state.n() as u32)
                .filter(|w| won >> w & 1 == 1)
                .collect(),
            tribes: state.tribes[..state.n()].to_vec(),
            aborted: false,
            reason: REASON_FORFEIT.into(),
        }))]);
    }
    let card = weakest_card(state.hands[s]).ok_or_else(CoreError::not_your_turn)?;
    Democratie::decide(state, seat, &commit_action(card), rng)
}
