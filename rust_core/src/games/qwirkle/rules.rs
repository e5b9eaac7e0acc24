//! Deciding: the deal, the moves of a turn (a play checked by `plays::check_play`, L1-L7),
//! legal actions, and the outcome.

use crate::error::{CoreError, CoreResult};
use crate::game::Seat;
use crate::proto::qwirkle as pb;
use crate::proto::Outcome;
use crate::rng::Rng;

use super::board::{idx, xy, Overlay};
use super::plays::{check_play, enumerate_plays, has_play};
use super::state::{start_player, Phase, State};
use super::tiles::{
    colour_row, draw, group_size, id_of_type, ids_list, ids_types, line_points, shape_col, LineSet,
    TYPES,
};
use super::wire::{action, ended, ev, play_action};

// ------------------------------------------------------------------------------------------------
// The deal, the moves of a turn, legal actions and the outcome

fn winners(scores: &[i64]) -> Vec<u32> {
    let best = scores.iter().copied().max().unwrap_or(0);
    (0..scores.len() as u32)
        .filter(|&s| scores[s as usize] == best)
        .collect()
}

/// The winners when `seat` forfeits (§11): the highest score (§6.3) among the other seats;
/// ties share the win (AMB12).
fn forfeit_winners(scores: &[i64], seat: u32) -> Vec<u32> {
    let others = (0..scores.len() as u32).filter(|&s| s != seat);
    let best = others
        .clone()
        .map(|s| scores[s as usize])
        .max()
        .unwrap_or(0);
    others.filter(|&s| scores[s as usize] == best).collect()
}

/// Events for laying tiles (opening or play) and everything that follows automatically.
fn lay(
    state: &State,
    seat: u32,
    extra: &[(usize, u8)],
    score: u32,
    opening: bool,
    rng: &mut Rng,
) -> Vec<pb::Event> {
    let mut hand = state.hands[seat as usize];
    let mut placed_ids = 0u128;
    let mut placements = Vec::with_capacity(extra.len());
    let mut ids = Vec::with_capacity(extra.len());
    for &(i, t) in extra {
        let id = id_of_type(hand, t).unwrap_or(0);
        hand &= !(1u128 << id);
        placed_ids |= 1u128 << id;
        let (x, y) = xy(i);
        placements.push(pb::Placement {
            x,
            y,
            tile_type: t as u32,
        });
        ids.push(id);
    }
    let mut out = vec![ev(pb::event::Kind::Placed(pb::Placed {
        seat,
        opening,
        placements,
        tile_ids: ids,
        points: score,
    }))];
    let mut bag = state.bag;
    let want = 6 - hand.count_ones().min(6);
    let drawn = draw(&mut bag, want, rng);
    if !drawn.is_empty() {
        hand |= drawn.iter().fold(0u128, |m, &id| m | (1u128 << id));
        out.push(ev(pb::event::Kind::Drew(pb::Drew {
            seat,
            count: drawn.len() as u32,
            tile_ids: drawn,
        })));
    }
    if hand == 0 {
        out.push(ended(
            state,
            pb::EndReason::HandEmptied,
            seat,
            6,
            Some((seat, score)),
        ));
        return out;
    }
    // Start of the next turn: blocked?
    let available = state.available() & !placed_ids;
    let ov = Overlay {
        board: &state.board,
        extra,
    };
    if ov.blocked(ids_types(available)) {
        out.push(ended(
            state,
            pb::EndReason::Blocked,
            0,
            0,
            Some((seat, score)),
        ));
    }
    out
}

fn exchange_options(counts: &[u8; TYPES], max_k: u32) -> Vec<Vec<u32>> {
    let types: Vec<(u32, u8)> = (0..TYPES as u32)
        .filter(|&t| counts[t as usize] > 0)
        .map(|t| (t, counts[t as usize]))
        .collect();
    let mut out = Vec::new();
    let mut pick = vec![0u8; types.len()];
    loop {
        // Odometer over pick[i] in 0..=count_i, last digit fastest.
        let mut i = types.len();
        loop {
            if i == 0 {
                return out;
            }
            i -= 1;
            if pick[i] < types[i].1 {
                pick[i] += 1;
                break;
            }
            pick[i] = 0;
        }
        let k: u32 = pick.iter().map(|&p| p as u32).sum();
        if k >= 1 && k <= max_k {
            let mut v = Vec::with_capacity(k as usize);
            for (j, &(t, _)) in types.iter().enumerate() {
                for _ in 0..pick[j] {
                    v.push(t);
                }
            }
            out.push(v);
        }
    }
}

/// The opening plays of a hand holding `types` whose announced group has `g` types: each group
/// of `g` once, its tiles in ascending type order (AMB23: the orders of one group are one move
/// in the legal moves and in evaluation; `decide` still lays tiles in the order sent, R9, TV02).
pub(super) fn opening_options(types: u64, g: u32) -> Vec<Vec<u32>> {
    let mut groups: Vec<u64> = Vec::new();
    if g == 1 {
        let mut m = types;
        while m != 0 {
            groups.push(1 << m.trailing_zeros());
            m &= m - 1;
        }
    } else {
        for i in 0..6 {
            for m in [types & colour_row(i), types & shape_col(i)] {
                if m.count_ones() == g {
                    groups.push(m);
                }
            }
        }
        groups.sort_unstable();
    }
    groups
        .into_iter()
        .map(|m| {
            let mut items: Vec<u32> = Vec::with_capacity(g as usize);
            let mut r = m;
            while r != 0 {
                items.push(r.trailing_zeros());
                r &= r - 1;
            }
            items
        })
        .collect()
}

pub(super) fn start(state: &State, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
    if state.phase != Phase::Setup {
        return Err(CoreError::rule(
            "ALREADY_STARTED",
            "the match has already started",
        ));
    }
    let mut bag = state.bag;
    let mut hands = Vec::new();
    let mut g = Vec::new();
    for seat in 0..state.seats() {
        let ids = draw(&mut bag, 6, rng);
        g.push(group_size(ids.iter().fold(0u64, |m, &id| m | 1 << (id / 3))) as u8);
        hands.push(pb::SeatTiles {
            seat,
            count: ids.len() as u32,
            tile_ids: ids,
        });
    }
    let start = start_player(&state.config, &g);
    Ok(vec![
        ev(pb::event::Kind::Dealt(pb::Dealt { hands })),
        ev(pb::event::Kind::Announced(pb::Announced {
            group_sizes: g.iter().map(|&x| x as u32).collect(),
            start_seat: start,
        })),
    ])
}

pub(super) fn decide(
    state: &State,
    seat: Seat,
    action: &pb::Action,
    rng: &mut Rng,
) -> CoreResult<Vec<pb::Event>> {
    let Some(kind) = &action.kind else {
        return Err(CoreError::malformed("the action names no move"));
    };
    let hand = state.hands[seat as usize];
    let counts = state.hand_counts(seat);
    match kind {
        pb::action::Kind::Opening(o) => {
            if state.phase != Phase::Opening {
                return Err(CoreError::rule(
                    "WRONG_PHASE",
                    "the opening play has already been made",
                ));
            }
            let g = state.announced[seat as usize] as usize;
            if o.tile_types.len() != g {
                return Err(CoreError::rule(
                    "WRONG_OPENING_SIZE",
                    format!("the opening play must lay exactly {g} tiles (your announced group), not {}", o.tile_types.len()),
                ));
            }
            let mut set = LineSet::default();
            let mut need = [0u8; TYPES];
            let mut extra = Vec::with_capacity(g);
            for (i, &t) in o.tile_types.iter().enumerate() {
                if t as usize >= TYPES {
                    return Err(CoreError::malformed(format!(
                        "tile type {t} is out of range 0..35"
                    )));
                }
                need[t as usize] += 1;
                if need[t as usize] > counts[t as usize] {
                    return Err(CoreError::rule(
                        "NOT_IN_HAND",
                        format!(
                            "your hand does not hold {}",
                            super::words::tiles(need[t as usize] as u32, t)
                        ),
                    ));
                }
                set = set.with(t as u8);
                extra.push((idx(i as i32, 0), t as u8));
            }
            if !set.valid() {
                return Err(CoreError::rule(
                    "NOT_A_GROUP",
                    "the opening tiles must share a colour or a shape, without repeats",
                ));
            }
            let score = line_points(g as u32).max(1);
            Ok(lay(state, seat, &extra, score, true, rng))
        }
        pb::action::Kind::Play(p) => {
            if state.phase != Phase::Turn {
                return Err(CoreError::rule(
                    "WRONG_PHASE",
                    "the start player must make the opening play first",
                ));
            }
            let pl: Vec<(i32, i32, u32)> = p
                .placements
                .iter()
                .map(|q| (q.x, q.y, q.tile_type))
                .collect();
            if pl.len() > 6 {
                return Err(CoreError::rule(
                    "TOO_MANY_TILES",
                    format!("a play lays at most 6 tiles, not {}", pl.len()),
                ));
            }
            let (extra, score) = check_play(&state.board, &counts, &pl)?;
            Ok(lay(state, seat, &extra, score, false, rng))
        }
        pb::action::Kind::Exchange(x) => {
            if state.phase != Phase::Turn {
                return Err(CoreError::rule(
                    "WRONG_PHASE",
                    "the start player must make the opening play, not exchange",
                ));
            }
            let k = x.tile_types.len();
            if k == 0 {
                return Err(CoreError::rule(
                    "EMPTY_EXCHANGE",
                    "an exchange trades at least one tile",
                ));
            }
            let bag_n = state.bag.count_ones() as usize;
            if k > 6 {
                return Err(CoreError::rule(
                    "NOT_IN_HAND",
                    format!("your hand holds 6 tiles at most, not {k}"),
                ));
            }
            let mut returned = 0u128;
            let mut left = hand;
            for &t in &x.tile_types {
                if t as usize >= TYPES {
                    return Err(CoreError::malformed(format!(
                        "tile type {t} is out of range 0..35"
                    )));
                }
                let Some(id) = id_of_type(left, t as u8) else {
                    return Err(CoreError::rule(
                        "NOT_IN_HAND",
                        format!(
                            "your hand does not hold enough {}",
                            super::words::tile_plural(t)
                        ),
                    ));
                };
                left &= !(1u128 << id);
                returned |= 1u128 << id;
            }
            if k > bag_n {
                return Err(CoreError::rule(
                    "BAG_TOO_SMALL",
                    format!("the bag holds {bag_n} tiles: you may exchange at most that many"),
                ));
            }
            let mut bag = state.bag;
            let drawn = draw(&mut bag, k as u32, rng);
            let mut out = vec![ev(pb::event::Kind::Exchanged(pb::Exchanged {
                seat,
                count: k as u32,
                drawn_ids: drawn,
                returned_ids: ids_list(returned),
            }))];
            if state.idle + 1 >= state.config.idle_cap {
                out.push(ended(state, pb::EndReason::IdleCap, 0, 0, None));
            }
            Ok(out)
        }
        pb::action::Kind::Pass(_) => {
            if state.phase != Phase::Turn {
                return Err(CoreError::rule(
                    "WRONG_PHASE",
                    "the start player must make the opening play",
                ));
            }
            if state.bag != 0 {
                return Err(CoreError::rule(
                    "PASS_NOT_ALLOWED",
                    "you may pass only when the bag is empty; exchange instead",
                ));
            }
            if has_play(&state.board, ids_types(hand)) {
                return Err(CoreError::rule(
                    "PASS_NOT_ALLOWED",
                    "you have a legal play, so you must play",
                ));
            }
            let mut out = vec![ev(pb::event::Kind::Passed(pb::Passed { seat }))];
            if state.idle + 1 >= state.config.idle_cap {
                out.push(ended(state, pb::EndReason::IdleCap, 0, 0, None));
            }
            Ok(out)
        }
    }
}

pub(super) fn legal_actions_into(state: &State, seat: Seat, out: &mut Vec<pb::Action>) {
    if seat != state.current || !matches!(state.phase, Phase::Opening | Phase::Turn) {
        return;
    }
    let types = state.hand_types(seat);
    if state.phase == Phase::Opening {
        let g = state.announced[seat as usize & 3] as u32;
        out.extend(
            opening_options(types, g)
                .into_iter()
                .map(|v| action(pb::action::Kind::Opening(pb::OpeningPlay { tile_types: v }))),
        );
        return;
    }
    let mark = out.len();
    enumerate_plays(&state.board, types, |p| out.push(play_action(p)));
    let bag_n = state.bag.count_ones();
    if bag_n > 0 {
        let counts = state.hand_counts(seat);
        for v in exchange_options(&counts, bag_n) {
            out.push(action(pb::action::Kind::Exchange(pb::Exchange {
                tile_types: v,
            })));
        }
    } else if out.len() == mark {
        out.push(action(pb::action::Kind::Pass(pb::Pass {})));
    }
}

pub(super) fn outcome(state: &State) -> Option<Outcome> {
    if state.phase != Phase::Over {
        return None;
    }
    let scores = state.scores[..state.seats() as usize].to_vec();
    Some(Outcome {
        // An administrative cap is reported as an abort, not a result (spec §10.4, AMB18).
        winners: match state.end_reason {
            _ if state.aborted => vec![],
            pb::EndReason::Forfeit => forfeit_winners(&scores, state.current),
            _ => winners(&scores),
        },
        scores,
        reason: match state.end_reason {
            pb::EndReason::HandEmptied => "HAND_EMPTIED",
            pb::EndReason::Blocked => "BLOCKED",
            pb::EndReason::IdleCap => "IDLE_CAP",
            pb::EndReason::Forfeit => "FORFEIT",
            pb::EndReason::Unspecified => "UNSPECIFIED",
        }
        .into(),
        lower_is_better: false,
        aborted: state.aborted,
        description: String::new(), // worded by the registry (Game::outcome_sentence)
    })
}
