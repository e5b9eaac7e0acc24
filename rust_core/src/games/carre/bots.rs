//! Bots (`random`, `greedy`) and the timeout policies' moves (match clocks, §11).

use super::cards::card_mask;
use super::cards::{rank, JACK, KING, QUEEN, TEN};
use super::rules::Moves;
use super::scoring::{base_score, score_square, LINES};
use super::state::Move;
use super::state::{Phase, State};
use super::wire::ev;
use super::Carre;
use crate::error::{CoreError, CoreResult};
use crate::game::{Game, Seat};
use crate::proto::carre as pb;
use crate::rng::Rng;

use pb::event::Kind as Ev;

/// The timeout policy `discard` (match clocks, docs/rules/carre.md §11).
pub(super) const TIMEOUT_DISCARD: &str = "discard";
/// The timeout policy `forfeit`: the match ends, the other seat winning (§11).
pub(super) const TIMEOUT_FORFEIT: &str = "forfeit";

impl Carre {
    fn bot_greedy(s: &State, seat: u8, rng: &mut Rng) -> Move {
        let mut moves = Moves::new();
        s.gen_moves(seat, &mut moves);
        let me = seat as usize;
        let opp = 1 - me;
        let own_raw = s.raw(seat);
        let opp_raw = s.raw(1 - seat);
        // Going out locks the current position in.
        if moves.as_slice().first() == Some(&Move::GoOut) {
            let lead = base_score(own_raw) as i64 - 1 - base_score(opp_raw) as i64;
            if lead >= 3 || (lead >= 1 && s.stock_left() <= 10) || own_raw >= 10 {
                return Move::GoOut;
            }
        }
        let eval = |m: &[[u8; 9]; 2]| -> f64 {
            let mut v =
                base_score(score_square(&m[me])) as f64 - base_score(score_square(&m[opp])) as f64;
            v += 0.35 * potential(&m[me]) - 0.3 * potential(&m[opp]);
            v
        };
        let keep = |c: u8| -> f64 {
            match rank(c) {
                KING => 1.0,
                JACK => 0.8,
                QUEEN => 0.6,
                TEN => 0.5,
                r => {
                    if s.mask[me][s.cfg.cell_of_rank[r as usize] as usize] == 0 {
                        0.3
                    } else {
                        0.05
                    }
                }
            }
        };
        let mut best = f64::NEG_INFINITY;
        let mut best_moves: [Move; 8] = [Move::GoOut; 8];
        let mut n_best = 0usize;
        for &mv in moves.as_slice() {
            let v = match mv {
                Move::GoOut => continue,
                Move::Discard(c) => eval(&s.mask) - keep(c),
                Move::Place(c, owner, idx) => {
                    let mut m = s.mask;
                    let r = rank(c);
                    m[owner as usize][idx as usize] = if r == JACK || r == QUEEN {
                        0
                    } else {
                        card_mask(c)
                    };
                    eval(&m) - keep(c) + 0.01
                }
            };
            if v > best + 1e-9 {
                best = v;
                n_best = 0;
            }
            if (v - best).abs() <= 1e-9 && n_best < best_moves.len() {
                best_moves[n_best] = mv;
                n_best += 1;
            }
        }
        if n_best == 0 {
            return moves.as_slice().first().copied().unwrap_or(Move::GoOut);
        }
        best_moves[rng.index(n_best)]
    }
}

/// Lines two cards away from scoring whose third cell is open to a pip card or Ten.
fn potential(m: &[u8; 9]) -> f64 {
    let mut p = 0.0;
    for l in &LINES {
        let (a, b, c) = (m[l[0]], m[l[1]], m[l[2]]);
        let ups = (a != 0) as u8 + (b != 0) as u8 + (c != 0) as u8;
        if ups == 2 {
            let and = (if a == 0 { 0xFF } else { a })
                & (if b == 0 { 0xFF } else { b })
                & (if c == 0 { 0xFF } else { c });
            if and & 0x0F != 0 {
                p += 1.0;
            } else if and & 0x30 != 0 {
                p += 0.5;
            }
        }
    }
    p
}

pub(super) fn timeout_events(
    s: &State,
    seat: Seat,
    policy: &str,
    rng: &mut Rng,
) -> CoreResult<Vec<pb::Event>> {
    if policy == TIMEOUT_FORFEIT {
        if s.phase != Phase::Action || seat != s.current as Seat {
            return Err(CoreError::not_your_turn());
        }
        let mut ended = *s;
        ended.forfeited = s.current;
        let (winners, result) = ended.result();
        return Ok(vec![ev(Ev::MatchEnded(pb::MatchEnded {
            totals: s.totals.to_vec(),
            winners,
            result: result as i32,
            rounds_played: s.n_history as u32,
        }))]);
    }
    if policy != TIMEOUT_DISCARD {
        return Err(CoreError::Unsupported(format!(
            "carre has no timeout policy {policy:?}"
        )));
    }
    let mut moves = Moves::new();
    s.gen_moves(seat.min(1) as u8, &mut moves);
    // Discarding is legal whenever the seat acts (§4.3); the lowest card code is the
    // lowest rank (§2).
    let lowest = moves.as_slice().iter().filter_map(|m| match m {
        Move::Discard(c) => Some(*c),
        _ => None,
    });
    match (seat < 2, lowest.min()) {
        (true, Some(c)) => Carre::decide(
            s,
            seat,
            &Carre::move_to_action(seat as u8, Move::Discard(c)),
            rng,
        ),
        _ => Err(CoreError::not_your_turn()),
    }
}

pub(super) fn bot_action(
    s: &State,
    seat: Seat,
    bot: &str,
    rng: &mut Rng,
) -> CoreResult<pb::Action> {
    if seat >= 2 || s.phase != Phase::Action || seat as u8 != s.current {
        return Err(CoreError::not_your_turn());
    }
    let seat = seat as u8;
    let mv = match bot {
        "random" => {
            let mut moves = Moves::new();
            s.gen_moves(seat, &mut moves);
            if moves.n == 0 {
                return Err(CoreError::not_your_turn());
            }
            moves.m[rng.index(moves.n)]
        }
        "greedy" => Carre::bot_greedy(s, seat, rng),
        other => {
            return Err(CoreError::option(format!(
                "Carré has no bot {other:?} (bots: random, greedy)"
            )))
        }
    };
    Ok(Carre::move_to_action(seat, mv))
}
