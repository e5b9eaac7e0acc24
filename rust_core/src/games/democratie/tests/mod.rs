//! Démocratie's tests, by topic: `vectors` (the test vectors of the rules, TV1-TV22, and
//! trick resolution), `hidden` (hidden information, §7), `input` (the wire format, refused
//! input, options), `play` (bots and the fast simulation) and `registry` (the game driven
//! through the type-erased registry, as the service drives it). The helpers below are shared.

use super::cards::*;
use super::rules::*;
use super::sim::*;
use super::state::*;
use super::wire::*;
use super::Democratie;
use crate::conformance;
use crate::error::{CoreError, CoreResult};
use crate::game::{Game, Options, Seat, Viewer};
use crate::proto::democratie as pb;
use crate::rng::Rng;
use prost::Message;

mod hidden;
mod input;
mod play;
mod registry;
mod vectors;

fn c(s: &str) -> u8 {
    parse_card(s).unwrap_or_else(|| panic!("bad card {s}"))
}
fn cards(s: &str) -> u64 {
    s.split_whitespace()
        .filter(|w| *w != "|")
        .fold(0, |m, w| m | bit(c(w)))
}
fn commit(card: u8) -> pb::Action {
    commit_action(card)
}
fn config(n: u32) -> Config {
    Democratie::checked_config(n, &Options::new()).unwrap()
}
fn rule_reason(r: CoreResult<Vec<pb::Event>>) -> &'static str {
    match r {
        Err(CoreError::Rule { reason, .. }) => reason,
        other => panic!("expected a rule error, got {other:?}"),
    }
}
fn apply_all(st: &mut State, evs: &[pb::Event]) {
    for e in evs {
        Democratie::evolve(st, e).unwrap();
        Democratie::check_invariants(st).unwrap();
    }
}
fn started(n: u32, seed: u64) -> State {
    let mut st = Democratie::initial(&config(n));
    let evs = Democratie::start(&st, &mut Rng::from_u64(seed)).unwrap();
    apply_all(&mut st, &evs);
    st
}

/// Plays one trick from a crafted state (day 2, last trick) and returns the resolution
/// and the state right after it.
fn trick(n: usize, vote: &str, played: &[&str]) -> (pb::TrickResolved, State) {
    let mut st = Democratie::initial(&config(n as u32));
    st.phase = pb::Phase::TrickCommit;
    st.deal_no = 1;
    st.day = 2;
    st.trick_no = 1;
    st.vote_card = c(vote);
    st.trump = suit_of(st.vote_card);
    for (i, p) in played.iter().enumerate() {
        st.hands[i] = bit(c(p));
    }
    let mut rng = Rng::from_u64(9);
    for (i, p) in played.iter().enumerate() {
        let evs = Democratie::decide(&st, i as Seat, &commit(c(p)), &mut rng).unwrap();
        for e in &evs {
            Democratie::evolve(&mut st, e).unwrap();
            if let Some(pb::event::Kind::TrickResolved(r)) = &e.kind {
                return (*r, st);
            }
        }
    }
    panic!("trick not resolved")
}
fn wins(n: usize, vote: &str, played: &[&str], winner: u32, captured: &str) -> State {
    let (r, st) = trick(n, vote, played);
    assert!(!r.tie, "expected a win");
    assert_eq!(r.winner, winner);
    assert_eq!(st.captured[winner as usize], cards(captured));
    assert_eq!(st.discard, 0);
    st
}
fn ties(n: usize, vote: &str, played: &[&str]) -> State {
    let (r, st) = trick(n, vote, played);
    assert!(r.tie, "expected a tie");
    for (i, p) in played.iter().enumerate() {
        assert_eq!(st.captured[i], bit(c(p)), "seat {i} keeps its own card");
    }
    assert_eq!(st.discard, bit(c(vote)));
    st
}
