//! Every test of Carré (docs/rules/carre.md): the spec's §9 vectors, options, legality, hidden
//! information, malformed input, bots and render, and a match through the registry's bytes.

use super::cards::*;
use super::rules::*;
use super::scoring::*;
use super::sim::*;
use super::state::*;
use super::wire::*;
use super::*;
use crate::error::CoreError;
use crate::game::Options;
use prost::Message;

mod bots_and_render;
mod hidden_information;
mod legality;
mod malformed_input;
mod options;
mod vectors;
mod via_registry;

// ---------------------------------------------------------------- helpers

fn c(code: &str) -> u8 {
    parse_card(code).unwrap_or_else(|| panic!("bad card code {code}"))
}

/// An ACTION-phase position of round 1 (starter seat 0) with nothing dealt yet; finish it
/// with `fill`.
fn pos(to_act: u8) -> State {
    let mut s = State::new(Config::default());
    s.phase = Phase::Action;
    s.round = 1;
    s.current = to_act;
    s.drew = true;
    s
}

fn give(s: &mut State, seat: u8, cards: &[&str]) {
    for code in cards {
        s.hands[seat as usize] |= bit(c(code));
    }
}

/// Pushes a pile bottom -> top. `v:JD` is face down; a face-down Queen was placed by the
/// owner, a face-down Jack by the other seat; face-up cards by the owner.
fn pile(s: &mut State, owner: u8, cell: u8, entries: &[&str]) {
    for code in entries {
        let (down, code) = match code.strip_prefix("v:") {
            Some(rest) => (true, rest),
            None => (false, *code),
        };
        let card = c(code);
        let by = if down && rank(card) == JACK {
            1 - owner
        } else {
            owner
        };
        let n = s.n_placed as usize;
        s.log[n] = Entry {
            card,
            cell: owner * 9 + cell - 1,
            down,
            by,
        };
        s.n_placed += 1;
        s.top[owner as usize][cell as usize - 1] = n as u8;
        s.mask[owner as usize][cell as usize - 1] = if down { 0 } else { card_mask(card) };
    }
}

/// A square from a grid like `AS 2S 3S / 4C 5S 6H / 7C 8D 9S`: `..` empty, `v:JH` face
/// down, `8S+v:JS` a pile.
fn square(s: &mut State, owner: u8, grid: &str) {
    let toks: Vec<&str> = grid.split_whitespace().filter(|t| *t != "/").collect();
    assert_eq!(toks.len(), 9, "{grid}");
    for (i, t) in toks.iter().enumerate() {
        if *t != ".." {
            let entries: Vec<&str> = t.split('+').collect();
            pile(s, owner, i as u8 + 1, &entries);
        }
    }
}

/// Puts every card not yet in a hand, pile or the discard pile into the stock (`stock`
/// cards) and the rest into the discard pile, keeping the position card-conserving.
fn fill(s: &mut State, stock: usize) {
    let mut used = s.hands[0] | s.hands[1];
    for e in &s.log[..s.n_placed as usize] {
        used |= bit(e.card);
    }
    for &d in &s.discard[..s.n_discard as usize] {
        used |= bit(d);
    }
    let rest: Vec<u8> = (0..52u8).filter(|&x| used & bit(x) == 0).collect();
    assert!(rest.len() >= stock);
    s.stock_pos = (STOCK - stock) as u8;
    for (i, &x) in rest[..stock].iter().enumerate() {
        s.stock[STOCK - stock + i] = x;
    }
    for &x in &rest[stock..] {
        s.discard[s.n_discard as usize] = x;
        s.n_discard += 1;
    }
    if stock == 0 {
        s.drew = false;
    }
}

fn place(card: &str, own: bool, cell: u32) -> pb::Action {
    pb::Action {
        kind: Some(pb::action::Kind::Place(pb::Place {
            card: Some(card_pb(c(card))),
            square: if own {
                pb::TargetSquare::Own
            } else {
                pb::TargetSquare::Opponent
            } as i32,
            cell,
        })),
    }
}
fn discard(card: &str) -> pb::Action {
    pb::Action {
        kind: Some(pb::action::Kind::Discard(pb::Discard {
            card: Some(card_pb(c(card))),
        })),
    }
}
fn go_out() -> pb::Action {
    pb::Action {
        kind: Some(pb::action::Kind::GoOut(pb::GoOut {})),
    }
}

fn try_act(s: &State, seat: u32, a: &pb::Action) -> CoreResult<Vec<pb::Event>> {
    crate::game::decide_checked::<Carre>(s, seat, a, &mut Rng::from_u64(99))
}

fn act(s: &mut State, seat: u32, a: &pb::Action) -> Vec<pb::Event> {
    let evs = try_act(s, seat, a).unwrap_or_else(|e| panic!("{a:?} refused: {e}"));
    for e in &evs {
        Carre::evolve(s, e).unwrap();
    }
    evs
}

fn reason<T: std::fmt::Debug>(r: CoreResult<T>) -> &'static str {
    match r {
        Err(CoreError::Rule { reason, message }) => {
            crate::words::refusal_plain(&message).unwrap();
            reason
        }
        other => panic!("expected a rule refusal, got {other:?}"),
    }
}

fn is_legal(s: &State, seat: u32, a: &pb::Action) -> bool {
    Carre::legal_actions(s, seat).contains(a)
}

/// Pile of a cell as `["5S", "v:JH"]`.
fn pile_codes(s: &State, owner: u8, cell: u8) -> Vec<String> {
    s.pile(owner, cell - 1)
        .map(|e| {
            if e.down {
                format!("v:{}", card_name(e.card))
            } else {
                card_name(e.card)
            }
        })
        .collect()
}

fn lines_of(s: &State, owner: u8) -> [u32; 8] {
    line_points(&s.mask[owner as usize])
}

fn scored(evs: &[pb::Event]) -> pb::RoundScored {
    evs.iter()
        .find_map(|e| match &e.kind {
            Some(Ev::RoundScored(r)) => Some(r.clone()),
            _ => None,
        })
        .expect("a round_scored event")
}

const TV08: &str = "AS 2S 3S / 4C 5S 6H / 7C 8D 9S";

fn opts(pairs: &[(&str, &str)]) -> Options {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Random reachable states from seeded random play (every decision point of `matches`
/// matches), with the events that led there.
fn random_states(matches: u64, seed: u64, bot: &str, mut f: impl FnMut(&State)) {
    let cfg = Config::default();
    for m in 0..matches {
        let mut rng = Rng::from_u64(seed + m);
        let mut s = State::new(cfg);
        for e in Carre::start(&s, &mut rng).unwrap() {
            Carre::evolve(&mut s, &e).unwrap();
        }
        while Carre::outcome(&s).is_none() {
            f(&s);
            let seat = s.current as u32;
            let a = Carre::bot_action(&s, seat, bot, &mut rng).unwrap();
            for e in Carre::decide(&s, seat, &a, &mut rng).unwrap() {
                Carre::evolve(&mut s, &e).unwrap();
            }
        }
        f(&s);
    }
}
