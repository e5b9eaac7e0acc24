//! The bots: `random` and the `tactician` heuristic (AMB20), and the timeout policies (§11).

use super::cards::*;
use super::state::{forfeit_winners, State, REASON_FORFEIT};
use super::wire::{commit_action, ev};
use super::Democratie;
use crate::error::{CoreError, CoreResult};
use crate::game::{Game, Seat};
use crate::proto::democratie as pb;
use crate::rng::Rng;

/// The `tactician` bot: fights for valuable vote cards with its best winning chance and
/// dumps cheap cards otherwise. Uses the seat's hand, the face-up vote card and the cards
/// revealed earlier in the deal (AMB20).
pub(super) fn tactician_card(st: &State, seat: usize) -> Option<u8> {
    let hand = st.hands[seat];
    if hand == 0 || st.commits[seat] != NO_CARD {
        return None;
    }
    let n = st.n();
    let trump = st.trump;
    let vote = st.vote_card;
    let known = hand | st.revealed_this_deal() | if vote == NO_CARD { 0 } else { bit(vote) };
    let unknown = deck_mask(n) & !known;
    let prize = if vote == NO_CARD { 0 } else { points(vote) } as i32;
    let my_trumps = hand & suit_mask(trump);
    let unknown_trumps = unknown & suit_mask(trump);
    // Is card c sure to win (considering only what this seat knows)?
    let sure = |c: u8| -> bool {
        if trump < 4 && suit_of(c) == trump {
            let r = c % 12;
            let six = bit(trump * 12 + 11);
            let five = bit(trump * 12);
            if r == 11 {
                // the 6 of trump wins if no other trump, or if the 5 is played; conservative
                unknown_trumps == 0
            } else {
                let higher = cards_of(unknown_trumps).any(|u| u % 12 < r);
                let six_threat = r == 0 && unknown & six != 0;
                let _ = five;
                !higher && !six_threat
            }
        } else {
            unknown_trumps == 0
                && cards_of(unknown)
                    .all(|u| (trump < 4 && suit_of(u) == trump) || strength(u) < strength(c))
        }
    };
    let pot = prize
        + cards_of(hand).map(|c| points(c) as i32).sum::<i32>() / (hand.count_ones() as i32).max(1);
    // Cheapest card to lose: low points, low strength; Jokers and trumps are kept.
    let dump_cost = |c: u8| -> i32 {
        let keep = if is_joker(c) {
            40
        } else if trump < 4 && suit_of(c) == trump {
            8
        } else {
            0
        };
        points(c) as i32 * 10 + strength(c) as i32 + keep
    };
    if pot >= 3 {
        // Fight: the cheapest sure winner, else the strongest trump, else the strongest card.
        if let Some(c) = cards_of(hand)
            .filter(|&c| sure(c))
            .min_by_key(|&c| (points(c), strength(c)))
        {
            return Some(c);
        }
        if my_trumps != 0 {
            // With both 5 and 6 of trump in hand the 5 cannot lose to the 6.
            return cards_of(my_trumps).max_by_key(|&c| strength(c));
        }
        let best = cards_of(hand).max_by_key(|&c| (strength(c), std::cmp::Reverse(points(c))))?;
        if strength(best) >= 10 && unknown_trumps.count_ones() <= 2 {
            return Some(best);
        }
    }
    cards_of(hand).min_by_key(|&c| dump_cost(c))
}

pub(super) fn bot_action(
    state: &State,
    seat: Seat,
    bot: &str,
    rng: &mut Rng,
) -> CoreResult<pb::Action> {
    let s = seat as usize;
    if state.phase != pb::Phase::TrickCommit || s >= state.n() || state.commits[s] != NO_CARD {
        return Err(CoreError::not_your_turn());
    }
    match bot {
        "tactician" => tactician_card(state, s)
            .map(commit_action)
            .ok_or_else(CoreError::not_your_turn),
        "random" => {
            let hand = state.hands[s];
            let k = rng.index(hand.count_ones().max(1) as usize);
            cards_of(hand)
                .nth(k)
                .map(commit_action)
                .ok_or_else(CoreError::not_your_turn)
        }
        other => Err(CoreError::option(format!(
            "Démocratie has no bot {other:?} (bots: random, tactician)"
        ))),
    }
}

// --------------------------------------------------------------------------------------------
// Match clocks (§11): the timeout policies, the forfeit and its winners.

/// The timeout policy `weakest_card` (match clocks, docs/rules/democratie.md §11).
pub(super) const TIMEOUT_WEAKEST_CARD: &str = "weakest_card";
/// The timeout policy `forfeit`, and the reason of the match end it records (§11).
pub(super) const TIMEOUT_FORFEIT: &str = "forfeit";
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
