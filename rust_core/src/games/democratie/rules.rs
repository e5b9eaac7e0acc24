//! Deciding: the check of a commit, and the automatic steps that follow a command (tricks
//! resolved, deals scored and dealt, by the rules on cards in `cards.rs`).

use super::cards::*;
use super::state::{evolve_state, State};
use super::wire::{ev, from_pb, mask_to_pb, to_pb, trump_pb, TrickRevealed};
use crate::error::{CoreError, CoreResult};
use crate::game::Seat;
use crate::proto::democratie as pb;
use crate::rng::Rng;

// ------------------------------------------------------------------ action checks

const NOT_IN_HAND: &str = "that card is not in your hand";

/// Validates a commit (AMB16 order) and returns the card.
pub(super) fn check_commit(st: &State, seat: Seat, action: &pb::Action) -> CoreResult<u8> {
    let n = st.n();
    if seat as usize >= n {
        return Err(CoreError::malformed(format!(
            "seat {seat} is not in this {n}-seat match"
        )));
    }
    let Some(pb::action::Kind::CommitCard(cc)) = &action.kind else {
        return Err(CoreError::malformed(
            "action has no kind (expected commit_card)",
        ));
    };
    let Some(card) = from_pb(cc.card) else {
        return Err(CoreError::malformed(format!(
            "card code {} is not a card",
            cc.card
        )));
    };
    if st.phase != pb::Phase::TrickCommit {
        return Err(CoreError::rule(
            "WRONG_PHASE",
            "cards can be committed only while a trick is waiting for cards",
        ));
    }
    let s = seat as usize;
    if st.commits[s] != NO_CARD {
        return Err(CoreError::rule(
            "ALREADY_COMMITTED",
            "you have already committed a card for this trick; a commit is final",
        ));
    }
    if st.hands[s] & bit(card) == 0 {
        return Err(CoreError::rule("CARD_NOT_IN_HAND", NOT_IN_HAND));
    }
    Ok(card)
}

// ------------------------------------------------------------------ automatic steps

/// Applies an event this module just built (an error here is a bug, reported as `Corrupt`).
pub(super) fn emit(st: &mut State, out: &mut Vec<pb::Event>, e: pb::Event) -> CoreResult<()> {
    evolve_state::<false>(st, &e)?;
    out.push(e);
    Ok(())
}

/// Runs every automatic step until players are awaited or the match is over.
pub(super) fn run_automatic(
    st: &mut State,
    out: &mut Vec<pb::Event>,
    rng: &mut Rng,
) -> CoreResult<()> {
    use pb::event::Kind as K;
    use pb::Phase as P;
    let n = st.n();
    loop {
        match st.phase {
            P::TrickCommit | P::MatchEnd | P::MatchSetup | P::Unspecified => return Ok(()),
            P::DealSetup => shuffle(st, out, rng, st.dealer)?,
            P::MatchCheck => check_match(st, out, rng)?,
            P::DayDeal | P::DayEnd => deal_day_event(st, out)?,
            P::DealScoring => score_deal(st, out)?,
            P::TrickFlip => {
                let top = st.vote_pile[(st.vote_len as usize).saturating_sub(1)];
                let e = pb::VoteCardFlipped {
                    day: st.day as u32,
                    trick_no: st.trick_no as u32,
                    card: to_pb(top),
                    trump: trump_pb(suit_of(top)),
                    vote_pile_left: st.vote_len.saturating_sub(1) as u32,
                };
                emit(st, out, ev(K::VoteCardFlipped(e)))?
            }
            P::TrickReveal => {
                let e = TrickRevealed {
                    day: st.day as u32,
                    trick_no: st.trick_no as u32,
                    vote_card: to_pb(st.vote_card),
                    trump: trump_pb(st.trump),
                    played: st.commits[..n].iter().map(|&c| to_pb(c)).collect(),
                };
                emit(st, out, ev(K::TrickRevealed(e)))?
            }
            P::TrickResolve => {
                let o = resolve_trick(&st.commits[..n], st.trump);
                let e = pb::TrickResolved {
                    day: st.day as u32,
                    trick_no: st.trick_no as u32,
                    tie: o.winner.is_none(),
                    winner: o.winner.unwrap_or(0) as u32,
                    vote_card: to_pb(st.vote_card),
                    trump_trick: o.trump_trick,
                    five_six_rule: o.five_six,
                };
                emit(st, out, ev(K::TrickResolved(e)))?
            }
        }
    }
}

// The once-a-deal steps stay out of `run_automatic`, whose loop runs after every trick.

/// MATCH_CHECK: the next deal, or the end of the match.
#[inline(never)]
fn check_match(st: &mut State, out: &mut Vec<pb::Event>, rng: &mut Rng) -> CoreResult<()> {
    use pb::event::Kind as K;
    let n = st.n();
    match match_check(&st.tribes[..n], st.cfg.target, st.deal_no, st.cfg.max_deals) {
        MatchCheck::Continue => shuffle(st, out, rng, ((st.dealer as usize + 1) % n) as u8),
        MatchCheck::Winner(w) => emit(
            st,
            out,
            ev(K::MatchEnded(pb::MatchEnded {
                winners: vec![w as u32],
                tribes: st.tribes[..n].to_vec(),
                aborted: false,
                reason: "TARGET_REACHED".into(),
            })),
        ),
        MatchCheck::Cap => emit(
            st,
            out,
            ev(K::MatchEnded(pb::MatchEnded {
                winners: vec![],
                tribes: st.tribes[..n].to_vec(),
                aborted: true,
                reason: "DEAL_CAP".into(),
            })),
        ),
    }
}

/// DAY_DEAL / DAY_END: deals the next day.
#[inline(never)]
fn deal_day_event(st: &mut State, out: &mut Vec<pb::Event>) -> CoreResult<()> {
    let n = st.n();
    let day = if st.phase == pb::Phase::DayDeal { 1 } else { 2 };
    let h = day_size(n, day);
    let stock = st.stock_slice();
    if stock.len() < (n + 1) * h {
        return Err(CoreError::corrupt("stock too small to deal"));
    }
    let (hands, vote) = deal_day(stock, n, st.dealer as usize, h);
    let e = pb::DayDealt {
        deal_no: st.deal_no,
        day: day as u32,
        dealer: st.dealer as u32,
        hands: (0..n)
            .map(|i| pb::DealtHand {
                seat: i as u32,
                count: h as u32,
                cards: mask_to_pb(hands[i]),
            })
            .collect(),
        vote_pile_count: h as u32,
        vote_pile: vote[..h].iter().map(|&c| to_pb(c)).collect(),
        stock_left: (stock.len() - (n + 1) * h) as u32,
    };
    // The table is set from the deal just computed rather than by dealing again while applying
    // the event (the conformance harness checks both agree).
    st.day_dealt(day, h, hands, vote);
    out.push(ev(pb::event::Kind::DayDealt(e)));
    Ok(())
}

/// DEAL_SCORING: every captured pile is shown and tribes are awarded.
#[inline(never)]
fn score_deal(st: &mut State, out: &mut Vec<pb::Event>) -> CoreResult<()> {
    let e = pb::DealScored {
        deal_no: st.deal_no,
        seats: (0..st.n())
            .map(|i| {
                let (points, gained) = score_pile(st.captured[i]);
                pb::SeatScore {
                    seat: i as u32,
                    captured: mask_to_pb(st.captured[i]),
                    points: points.iter().map(|&p| p as u32).collect(),
                    tribes_gained: gained as u32,
                    tribes_total: st.tribes[i] + gained as u32,
                }
            })
            .collect(),
        discard: mask_to_pb(st.discard),
    };
    emit(st, out, ev(pb::event::Kind::DealScored(e)))
}

fn shuffle(st: &mut State, out: &mut Vec<pb::Event>, rng: &mut Rng, dealer: u8) -> CoreResult<()> {
    let size = deck_size(st.n());
    // On the stack: the same Fisher-Yates draws as before, without a heap vector.
    let mut all = [0u8; 50];
    for (i, c) in all.iter_mut().enumerate() {
        *c = i as u8;
    }
    let deck = &mut all[..size];
    rng.shuffle(deck);
    let e = pb::DeckShuffled {
        deal_no: st.deal_no + 1,
        dealer: dealer as u32,
        deck_size: size as u32,
        // Bottom first: the first card dealt last.
        deck: deck.iter().rev().map(|&c| to_pb(c)).collect(),
    };
    emit(st, out, ev(pb::event::Kind::DeckShuffled(e)))
}
