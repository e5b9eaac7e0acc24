//! Rat-a-Tat Cat's tests: shared helpers here, one file per topic.

use prost::Message;

use super::state::*;
use super::wire::*;
use super::*;
use crate::conformance;
use crate::error::CoreError;
use crate::game::Options;
use pb::action::Kind as A;

mod bots;
mod hidden;
mod round_vectors;
mod rules;
mod timed;
mod turn_vectors;
mod wire;

fn cfg_with(n: u32, opts: &[(&str, &str)]) -> Config {
    let o: Options = opts
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    RatATatCat::checked_config(n, &o).expect("config")
}
fn cfg(n: u32) -> Config {
    cfg_with(n, &[])
}

fn act(k: A) -> pb::Action {
    pb::Action { kind: Some(k) }
}
fn take(slot: u32) -> pb::Action {
    act(A::TakeDiscard(pb::TakeDiscard { slot }))
}
fn draw() -> pb::Action {
    act(A::DrawFromPile(pb::DrawFromPile {}))
}
fn replace(slot: u32) -> pb::Action {
    act(A::ReplaceCard(pb::ReplaceCard { slot }))
}
fn discard() -> pb::Action {
    act(A::DiscardDrawn(pb::DiscardDrawn {}))
}
fn power() -> pb::Action {
    act(A::UsePower(pb::UsePower {}))
}
fn peek(slot: u32) -> pb::Action {
    act(A::PeekCard(pb::PeekCard { slot }))
}
fn swap(own_slot: u32, target_seat: u32, target_slot: u32) -> pb::Action {
    act(A::SwapCards(pb::SwapCards {
        own_slot,
        target_seat,
        target_slot,
    }))
}
fn skip() -> pb::Action {
    act(A::SkipSwap(pb::SkipSwap {}))
}
fn call() -> pb::Action {
    act(A::CallRatATatCat(pb::CallRatATatCat {}))
}
fn end() -> pb::Action {
    act(A::EndTurn(pb::EndTurn {}))
}

/// Applies `a` by the current seat; returns the events.
fn play(s: &mut State, a: pb::Action) -> Vec<pb::Event> {
    let seat = s.current as u32;
    let evs = RatATatCat::decide(s, seat, &a, &mut Rng::from_u64(7))
        .unwrap_or_else(|e| panic!("{a:?}: {e}"));
    for e in &evs {
        RatATatCat::evolve(s, e).expect("own event applies");
        RatATatCat::check_invariants(s).expect("invariants");
    }
    evs
}
fn refused(s: &State, a: pb::Action) -> CoreError {
    crate::game::decide_checked::<RatATatCat>(s, s.current as u32, &a, &mut Rng::from_u64(7))
        .expect_err("must be refused")
}
fn reason(e: CoreError) -> &'static str {
    match e {
        CoreError::Rule { reason, message } => {
            crate::words::refusal_plain(&message).unwrap();
            reason
        }
        other => panic!("not a rule error: {other:?}"),
    }
}
fn discard_pile(s: &State) -> Vec<u8> {
    s.discard.cards().iter().rev().copied().collect()
}
fn legal(s: &State) -> Vec<pb::Action> {
    RatATatCat::legal_actions(s, s.current as u32)
}
fn ev(k: E) -> pb::Event {
    pb::Event { kind: Some(k) }
}
fn cards(v: &[u8]) -> Vec<i32> {
    v.iter().map(|&c| pbc(c)).collect()
}
/// A pile given top first (as the spec's vectors list it), as events carry it: bottom first.
fn pile(top_first: &[u8]) -> Vec<i32> {
    top_first.iter().rev().map(|&c| pbc(c)).collect()
}
