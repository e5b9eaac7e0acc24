//! The evaluator: a position (public board, one hand) in, its plays and their scores out.

use crate::error::{CoreError, CoreResult};
use crate::game::Seat;
use crate::proto::qwirkle as pb;

use super::board::Board;
use super::plays::enumerate_plays;
use super::state::State;
use super::tiles::{ids_list, type_code, TILES, TYPES};
use super::view::board_view;

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
