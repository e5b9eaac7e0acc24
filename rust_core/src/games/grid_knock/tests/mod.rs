//! Grid Knock's tests: the test vectors of docs/rules/grid_knock.md (section 9) (conformance:
//! tests/conformance.rs), hidden-information properties, and refusal of malformed or illegal input.
//! This file holds the helpers the topics share; `cargo test --lib games::grid_knock` runs them all.

mod hidden;
mod input;
mod matches;
mod vectors_knock;
mod vectors_rounds;
mod vectors_triples;

use crate::conformance;
use crate::error::CoreError;
use crate::game::{Game, Options, Viewer};
use crate::games::grid_knock::state::DECK;
use crate::games::grid_knock::{Ev, GridKnock, Move, Phase, State};
use crate::proto::grid_knock as pb;
use crate::rng::Rng;
use prost::Message;

/// The game's parts under one name, as the tests call them (`gk::act`, `gk::triples`, ...).
mod gk {
    pub(super) use crate::games::grid_knock::{
        invariants::*, rules::*, state::*, triples::*, wire::*,
    };
}

// ------------------------------------------------------------------ helpers

/// Slot (owner, row 1..3, col 1..4).
fn sl(o: u8, r: u8, c: u8) -> u8 {
    o * 12 + (r - 1) * 4 + (c - 1)
}

/// Domain cell (row 1..3, d 0..4) of seat i.
fn dc(st: &State, i: u8, r: u8, d: u8) -> u8 {
    st.cfg.dom[i as usize][(r as usize - 1) * 5 + d as usize]
}

/// A constructed position: given slots (face up / down / empty); every other slot holds a
/// face-down card from the rest of the deck; the given discard pile and draw-pile top cards,
/// with the rest of the deck under them.
struct Pos {
    n: u8,
    opts: Options,
    given: Vec<(u8, Option<(i8, bool)>)>,
}

impl Pos {
    fn new(n: u8) -> Pos {
        Pos {
            n,
            opts: Options::new(),
            given: vec![],
        }
    }
    fn opt(mut self, k: &str, v: &str) -> Pos {
        self.opts.insert(k.into(), v.into());
        self
    }
    fn set(&mut self, s: u8, tok: &str) {
        let t = tok.trim();
        let v = if t == "__" {
            None
        } else if let Some(x) = t.strip_prefix('?') {
            Some((x.parse().unwrap(), false))
        } else {
            Some((t.parse().unwrap(), true))
        };
        self.given.retain(|(x, _)| *x != s);
        self.given.push((s, v));
    }
    /// Row r (1..3) of seat i's domain, d0..d4.
    fn drow(mut self, i: u8, r: u8, toks: &[&str]) -> Pos {
        let cfg = GridKnock::checked_config(self.n as u32, &Options::new()).unwrap();
        for (d, t) in toks.iter().enumerate() {
            let s = cfg.dom[i as usize][(r as usize - 1) * 5 + d];
            self.set(s, t);
        }
        self
    }
    fn at(mut self, s: u8, tok: &str) -> Pos {
        self.set(s, tok);
        self
    }
    /// Builds the state at CHOOSE_SOURCE for `active`. `draw_top` is bottom -> top.
    fn build(self, active: u8, discard: &[i8], draw_top: &[i8]) -> State {
        let cfg = GridKnock::checked_config(self.n as u32, &self.opts).unwrap();
        let mut st = GridKnock::initial(&cfg);
        let mut left = [0i32; 15];
        for (v, c) in DECK {
            left[(v + 2) as usize] = c as i32;
        }
        let take = |v: i8, left: &mut [i32; 15]| {
            left[(v + 2) as usize] -= 1;
        };
        let nslots = 12 * self.n;
        let mut given = [None::<Option<(i8, bool)>>; 96];
        for (s, v) in &self.given {
            given[*s as usize] = Some(*v);
        }
        for s in 0..nslots {
            if let Some(Some((v, up))) = given[s as usize] {
                st.val[s as usize] = v;
                st.filled |= 1u128 << s;
                if up {
                    st.up |= 1u128 << s;
                }
                take(v, &mut left);
            }
        }
        for &v in discard.iter().chain(draw_top) {
            take(v, &mut left);
        }
        // Fillers, face down, from the remaining deck (highest values first keeps them varied).
        let mut pool: Vec<i8> = Vec::new();
        for k in (0..15).rev() {
            for _ in 0..left[k].max(0) {
                pool.push(k as i8 - 2);
            }
        }
        // Interleave values so that neighbouring fillers differ.
        let mut inter = Vec::new();
        let (a, b) = pool.split_at(pool.len() / 2);
        for i in 0..a.len().max(b.len()) {
            if i < a.len() {
                inter.push(a[i]);
            }
            if i < b.len() {
                inter.push(b[i]);
            }
        }
        let mut it = inter.into_iter();
        for s in 0..nslots {
            if given[s as usize].is_none() {
                let v = it.next().unwrap();
                st.val[s as usize] = v;
                st.filled |= 1u128 << s;
            }
        }
        let rest: Vec<i8> = it.collect();
        let mut draw: Vec<i8> = rest;
        draw.extend_from_slice(draw_top);
        st.draw[..draw.len()].copy_from_slice(&draw);
        st.draw_len = draw.len() as u8;
        st.disc[..discard.len()].copy_from_slice(discard);
        st.disc_len = discard.len() as u8;
        st.round = 1;
        st.dealer = ((active as usize + self.n as usize - 1) % self.n as usize) as u8;
        st.first = active;
        st.active = active;
        st.phase = Phase::ChooseSource;
        st
    }
}

fn rng() -> Rng {
    Rng::from_u64(42)
}

/// Plays a move through the protobuf boundary (decide + evolve); returns the internal events.
fn play(st: &mut State, seat: u8, mv: Move) -> Vec<Ev> {
    try_play(st, seat, mv).unwrap_or_else(|e| panic!("{mv:?} by {seat} refused: {e}"))
}

fn try_play(st: &mut State, seat: u8, mv: Move) -> Result<Vec<Ev>, CoreError> {
    let evs = GridKnock::decide(st, seat as u32, &gk::to_action(mv), &mut rng())?;
    let mut out = vec![];
    for e in &evs {
        GridKnock::evolve(st, e).unwrap();
        out.push(gk::pb_to_ev(e).unwrap());
    }
    Ok(out)
}

fn refused(st: &State, seat: u8, mv: Move) -> CoreError {
    crate::game::decide_checked::<GridKnock>(st, seat as u32, &gk::to_action(mv), &mut rng())
        .expect_err("should be refused")
}

fn reason(e: &CoreError) -> &'static str {
    match e {
        CoreError::Rule { reason, message } => {
            crate::words::refusal_plain(message).unwrap();
            reason
        }
        CoreError::Malformed(_) => "MALFORMED",
        _ => "OTHER",
    }
}

fn legal(st: &State, seat: u8) -> Vec<Move> {
    let mut v = vec![];
    gk::legal_moves(st, seat, &mut v);
    v
}

fn discard(st: &State) -> Vec<i8> {
    st.disc[..st.disc_len as usize].to_vec()
}

fn pass_all(st: &mut State) {
    while st.phase == Phase::KnockWindow {
        let s = gk::to_act_mask(st).trailing_zeros() as u8;
        play(st, s, Move::PassKnock);
    }
}

fn sorted(mut c: [u8; 3]) -> [u8; 3] {
    c.sort();
    c
}

fn triple_moves(st: &State, seat: u8) -> Vec<[u8; 3]> {
    legal(st, seat)
        .into_iter()
        .filter_map(|m| {
            if let Move::DiscardTriple(c) = m {
                Some(sorted(c))
            } else {
                None
            }
        })
        .collect()
}

/// A plain turn for the active seat: draw, everybody passes, flip a face-down card if any
/// (else swap into the first slot), close any triples window.
fn simple_turn(st: &mut State) {
    let a = st.active;
    if st.phase != Phase::ChooseSource {
        return;
    }
    play(st, a, Move::DrawFromPile);
    pass_all(st);
    if st.phase == Phase::KnockDecision {
        play(st, a, Move::RefuseKnocks);
    }
    let mv = legal(st, a)
        .into_iter()
        .find(|m| matches!(m, Move::DiscardAndReveal(_)))
        .unwrap_or_else(|| legal(st, a)[0]);
    play(st, a, mv);
    while st.phase == Phase::Triples {
        let o = st.tri_owner;
        play(st, o, Move::EndTriples);
    }
}
