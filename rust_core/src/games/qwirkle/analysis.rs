//! The evaluator: a seat's `Position` and its `Evaluation` (every play with its score), and the
//! rollouts: the position with its view checked, the other hands and the bag dealt at random
//! among the tiles the seat has not seen, every legal action valued.

use prost::Message;

use crate::error::{CoreError, CoreResult};
use crate::game::{Game, Options, Seat, Viewer};
use crate::proto::qwirkle as pb;
use crate::proto::MoveValue;
use crate::rng::Rng;
use crate::rollout::{first_difference, Analysis};

use super::board::Board;
use super::plays::enumerate_plays;
use super::state::{Phase, State};
use super::tiles::{ids_list, type_code, TILES, TYPES};
use super::view::board_view;
use super::Qwirkle;

pub(super) fn options_of(s: &State) -> Options {
    Options::from([("max_idle_turns".to_string(), s.config.idle_cap.to_string())])
}

/// A checked position: the table with the tiles the seat cannot see still to deal.
pub struct Known {
    seat: Seat,
    position: pb::Position,
    table: State,
    hand_counts: [u32; 4],
    bag: u32,
    unseen: u128,
}

fn check(pos: &pb::Position) -> CoreResult<Known> {
    let view = pos.view.as_ref().ok_or_else(|| {
        CoreError::malformed(
            "rollouts need the position's seat, options and view (GetView with_position gives them)",
        )
    })?;
    let n = view.seats.len() as u32;
    let cfg = Qwirkle::checked_config(n, &pos.options)
        .map_err(|e| CoreError::malformed(format!("the position's table: {e}")))?;
    if pos.seat >= n {
        return Err(CoreError::malformed(format!(
            "seat {} is not a seat of this {n}-seat table",
            pos.seat
        )));
    }
    let me = pos.seat as usize;
    let mut s = Qwirkle::initial(&cfg);
    (s.bag, s.hands) = (0, [0; 4]);
    s.phase = match pb::Phase::try_from(view.phase).unwrap_or(pb::Phase::Unspecified) {
        pb::Phase::Setup => Phase::Setup,
        pb::Phase::Opening => Phase::Opening,
        pb::Phase::Turn => Phase::Turn,
        pb::Phase::GameOver => Phase::Over,
        pb::Phase::Unspecified => {
            return Err(CoreError::malformed(format!(
                "phase {} is not a phase",
                view.phase
            )))
        }
    };
    s.current = view.current_seat;
    s.start_seat = view.start_seat;
    s.idle = view.turns_without_placement;
    s.turns = view.turns;
    s.end_reason = pb::EndReason::try_from(view.end_reason)
        .map_err(|_| CoreError::malformed("end_reason is not a reason"))?;
    s.aborted = view.aborted;
    // The seat's own tiles by id, then the board's types on the copies left.
    let mut used = 0u128;
    let mut hand_counts = [0u32; 4];
    for (i, sv) in view.seats.iter().enumerate() {
        if sv.seat as usize != i {
            return Err(CoreError::malformed(format!(
                "seats[{i}] is seat {}",
                sv.seat
            )));
        }
        s.scores[i] = sv.score;
        s.announced[i] = u8::try_from(sv.announced_group)
            .ok()
            .filter(|&g| g <= 6)
            .ok_or_else(|| CoreError::malformed("an announced group above 6"))?;
        if i == me {
            if sv.hand_tile_ids.len() != sv.hand_count as usize || sv.hand_count > 6 {
                return Err(CoreError::malformed(
                    "the seat's hand does not list its tiles",
                ));
            }
            for &id in &sv.hand_tile_ids {
                if id as usize >= TILES || used >> id & 1 == 1 {
                    return Err(CoreError::malformed(format!(
                        "tile id {id} repeated or out of range"
                    )));
                }
                used |= 1 << id;
                s.hands[i] |= 1 << id;
            }
            let types: Vec<u32> = sv.hand_tile_ids.iter().map(|id| id / 3).collect();
            if types != pos.hand_types {
                return Err(CoreError::malformed(
                    "hand_types differs from the view's hand",
                ));
            }
        } else {
            if sv.hand_visible || !sv.hand_tile_ids.is_empty() {
                return Err(CoreError::malformed(format!(
                    "the position shows seat {i}'s hand: the seat cannot see it"
                )));
            }
            if sv.hand_count > 6 {
                return Err(CoreError::malformed(format!(
                    "seat {i} holds {} tiles",
                    sv.hand_count
                )));
            }
            hand_counts[i] = sv.hand_count;
        }
    }
    let mut board = Board::default();
    for t in &view.board {
        if t.tile_type as usize >= TYPES || t.x.unsigned_abs() > 89 || t.y.unsigned_abs() > 89 {
            return Err(CoreError::malformed("a board tile out of range"));
        }
        if board.at(t.x, t.y) != 0 {
            return Err(CoreError::malformed(format!(
                "cell ({},{}) holds two tiles",
                t.x, t.y
            )));
        }
        let copy = (0..3)
            .map(|c| 3 * t.tile_type + c)
            .find(|&id| used >> id & 1 == 0)
            .ok_or_else(|| {
                CoreError::malformed(format!(
                    "more than 3 copies of {} (board and hand)",
                    type_code(t.tile_type as u8)
                ))
            })?;
        used |= 1 << copy;
        board.put(t.x, t.y, copy);
    }
    if view.board != pos.board {
        return Err(CoreError::malformed("board differs from the view's board"));
    }
    s.board = board;
    let unseen = !used & ((1u128 << TILES) - 1);
    let hidden = hand_counts.iter().sum::<u32>() + view.bag_count;
    if s.phase != Phase::Setup && hidden != unseen.count_ones() {
        return Err(CoreError::malformed(format!(
            "the table holds {} tiles (board, hands, bag): the game has {TILES}",
            TILES as u32 - unseen.count_ones() + hidden
        )));
    }
    if pos.bag_empty != (view.bag_count == 0) {
        return Err(CoreError::malformed(
            "bag_empty differs from the view's bag count",
        ));
    }
    let known = Known {
        seat: me as Seat,
        position: pos.clone(),
        table: s,
        hand_counts,
        bag: view.bag_count,
        unseen,
    };
    let dealt = deal(&known, &mut Rng::from_u64(0));
    let rebuilt = Qwirkle::view(&dealt, Viewer::Seat(me as Seat));
    if &rebuilt != view {
        return Err(CoreError::malformed(format!(
            "the view does not hold together: {}",
            first_difference(view, &rebuilt)
        )));
    }
    if dealt.phase == Phase::Turn {
        Qwirkle::check_invariants(&dealt)
            .map_err(|e| CoreError::malformed(format!("a table the rules cannot reach: {e}")))?;
    }
    Ok(known)
}

fn deal(k: &Known, rng: &mut Rng) -> State {
    let mut s = k.table.clone();
    let mut pool: Vec<u32> = (0..TILES as u32)
        .filter(|&id| k.unseen >> id & 1 == 1)
        .collect();
    rng.shuffle(&mut pool);
    for (i, &count) in k.hand_counts.iter().enumerate() {
        for _ in 0..count {
            if let Some(id) = pool.pop() {
                s.hands[i] |= 1 << id;
            }
        }
    }
    for id in pool.into_iter().take(k.bag as usize) {
        s.bag |= 1 << id;
    }
    s
}

/// Moves the `evaluator` bot's rollouts compare (besides the greedy bot's own).
const SHORTLIST: usize = 7;

impl Analysis for Qwirkle {
    type Known = Known;
    const ROLLOUT_BOT: &'static str = "greedy";
    const EVALUATOR_STEPS: u32 = 2_000; // evaluator_bench --calibrate

    const EVALUATOR_HORIZON: u32 = 3; // the reply, the seat's next play, the reply to it

    /// The score margin as it stands (own score minus the best other's), a win when ahead:
    /// over three plays ahead the scores carry most of what decides a match, and a playout
    /// to the end costs twenty times more.
    fn estimate(s: &State, seat: Seat) -> Option<(f64, f64)> {
        let n = s.seats() as usize;
        let own = s.scores[seat as usize];
        let best_other = (0..n)
            .filter(|&i| i != seat as usize)
            .map(|i| s.scores[i])
            .max()?;
        let margin = (own - best_other) as f64;
        let win = match own.cmp(&best_other) {
            std::cmp::Ordering::Greater => 1.0,
            std::cmp::Ordering::Equal => 0.5,
            std::cmp::Ordering::Less => 0.0,
        };
        Some((margin, win))
    }

    /// The plays of the best immediate scores ([`SHORTLIST`] of them, highest first; the
    /// rules' order among equal scores): a decision's budget gives a hundred moves barely a
    /// deal each, and a play far below the best score seldom wins back the difference.
    fn shortlist(k: &Known, moves: &[pb::Action]) -> Vec<usize> {
        let table = deal(k, &mut Rng::from_u64(0));
        let before = table.scores[k.seat as usize];
        let mut scored: Vec<(i64, usize)> = moves
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let mut t = table.clone();
                let mut events = Vec::new();
                let score =
                    match Qwirkle::play(&mut t, k.seat, m, &mut Rng::from_u64(0), &mut events) {
                        Ok(()) => t.scores[k.seat as usize] - before,
                        Err(_) => i64::MIN,
                    };
                (score, i)
            })
            .collect();
        scored.sort_by_key(|&(score, i)| (std::cmp::Reverse(score), i));
        scored.into_iter().take(SHORTLIST).map(|(_, i)| i).collect()
    }

    fn known(position: &[u8]) -> CoreResult<Known> {
        let pos = pb::Position::decode(position)
            .map_err(|e| CoreError::malformed(format!("cannot decode position: {e}")))?;
        check(&pos)
    }

    fn seat(k: &Known) -> Seat {
        k.seat
    }

    fn sample(k: &Known, rng: &mut Rng) -> State {
        deal(k, rng)
    }

    fn evaluation(
        k: &Known,
        moves: &[pb::Action],
        values: Option<&[MoveValue]>,
    ) -> CoreResult<Vec<u8>> {
        let mut out = evaluate_position(&k.position)?;
        let Some(values) = values else {
            return Ok(out.encode_to_vec());
        };
        let table = deal(k, &mut Rng::from_u64(0));
        let before = table.scores[k.seat as usize];
        for (i, m) in moves.iter().enumerate() {
            let mut t = table.clone();
            let mut events = Vec::new();
            let score = match Qwirkle::play(&mut t, k.seat, m, &mut Rng::from_u64(0), &mut events) {
                Ok(()) => (t.scores[k.seat as usize] - before).max(0) as u32,
                Err(_) => 0,
            };
            out.actions.push(pb::EvaluatedAction {
                action: Some(m.clone()),
                score,
                value: Some(values[i]),
            });
        }
        // The highest value among the moves valued on most deals (screening drops some early).
        out.best_action = crate::rollout::best_valued(values).map(|b| b as u32);
        Ok(out.encode_to_vec())
    }
}

// --------------------------------------------------------------------------------------------
// The evaluator: a position (public board, one hand) in, its plays and their scores out.

pub(super) fn evaluate(position: &[u8]) -> CoreResult<Vec<u8>> {
    use prost::Message;
    let pos = pb::Position::decode(position)
        .map_err(|e| CoreError::malformed(format!("cannot decode position: {e}")))?;
    Ok(evaluate_position(&pos)?.encode_to_vec())
}

/// The public board, the seat's own hand (types, ascending) and whether the bag is empty
/// (public: the bag's count is in every view).
pub(super) fn position(state: &State, seat: Seat) -> Option<Vec<u8>> {
    use prost::Message;
    let (board, _) = board_view(&state.board, false);
    let hand_types = ids_list(state.hands[seat as usize & 3])
        .iter()
        .map(|id| id / 3)
        .collect();
    Some(
        pb::Position {
            board,
            hand_types,
            bag_empty: state.bag == 0,
            seat,
            options: super::analysis::options_of(state),
            view: Some(super::view::view(state, crate::game::Viewer::Seat(seat))),
        }
        .encode_to_vec(),
    )
}

/// The evaluator behind `evaluate`: validates a position and lists its plays.
pub(super) fn evaluate_position(pos: &pb::Position) -> CoreResult<pb::Evaluation> {
    if pos.board.len() > TILES {
        return Err(CoreError::malformed(format!(
            "{} tiles on the board (at most 108)",
            pos.board.len()
        )));
    }
    if pos.hand_types.len() > 6 {
        return Err(CoreError::malformed(format!(
            "{} tiles in the hand (at most 6)",
            pos.hand_types.len()
        )));
    }
    let mut tiles = Vec::with_capacity(pos.board.len());
    for t in &pos.board {
        if t.tile_type as usize >= TYPES {
            return Err(CoreError::malformed(format!(
                "tile type {} is out of range 0..35",
                t.tile_type
            )));
        }
        tiles.push((t.x, t.y, t.tile_type as u8));
    }
    let board = Board::from_types(&tiles)?;
    board.lines_valid().map_err(CoreError::malformed)?;
    let mut copies = [0u8; TYPES];
    for &(_, _, id) in &board.tiles {
        copies[id as usize / 3] += 1;
    }
    let mut hand = 0u64;
    for &t in &pos.hand_types {
        if t as usize >= TYPES {
            return Err(CoreError::malformed(format!(
                "tile type {t} is out of range 0..35"
            )));
        }
        copies[t as usize] += 1;
        if copies[t as usize] > 3 {
            return Err(CoreError::malformed(format!(
                "more than 3 copies of {}",
                type_code(t as u8)
            )));
        }
        hand |= 1 << t;
    }
    let hand_size = pos.hand_types.len();
    let mut eval = pb::Evaluation {
        counts_per_k: vec![0; 6],
        ..Default::default()
    };
    enumerate_plays(&board, hand, |p| {
        let mut score = p.score;
        if pos.bag_empty && p.len() == hand_size {
            score += 6;
        }
        eval.counts_per_k[p.len() - 1] += 1;
        eval.best_score = eval.best_score.max(score);
        eval.plays.push(pb::EvaluatedPlay {
            placements: p
                .placements()
                .map(|(x, y, t)| pb::Placement {
                    x,
                    y,
                    tile_type: t as u32,
                })
                .collect(),
            score,
        });
    });
    eval.total = eval.plays.len() as u32;
    Ok(eval)
}
