//! What each viewer sees: views, redaction of events, and the text rendering.

use std::fmt::Write as _;

use crate::game::{Game, Viewer};
use crate::proto::qwirkle as pb;

use super::board::Board;
use super::state::{Phase, State};
use super::tiles::{ids_list, type_code};
use super::Qwirkle;

pub(super) fn board_view(board: &Board, auditor: bool) -> (Vec<pb::BoardTile>, Vec<u32>) {
    let mut tiles: Vec<(i8, i8, u8)> = board.tiles.clone();
    tiles.sort_unstable_by_key(|&(x, y, _)| (y, x));
    let ids = if auditor {
        tiles.iter().map(|t| t.2 as u32).collect()
    } else {
        Vec::new()
    };
    (
        tiles
            .iter()
            .map(|&(x, y, id)| pb::BoardTile {
                x: x as i32,
                y: y as i32,
                tile_type: id as u32 / 3,
            })
            .collect(),
        ids,
    )
}

pub(super) fn view(state: &State, viewer: Viewer) -> pb::View {
    let auditor = viewer == Viewer::Auditor;
    let (board, board_tile_ids) = board_view(&state.board, auditor);
    let seats = (0..state.seats())
        .map(|s| {
            let h = state.hands[s as usize];
            let visible = viewer.sees_private_of(s);
            let ids = if visible { ids_list(h) } else { Vec::new() };
            pb::SeatView {
                seat: s,
                score: state.scores[s as usize],
                hand_count: h.count_ones(),
                announced_group: state.announced[s as usize] as u32,
                hand_visible: visible,
                hand_tile_types: ids.iter().map(|id| id / 3).collect(),
                hand_tile_ids: ids,
            }
        })
        .collect();
    let phase = match state.phase {
        Phase::Setup => pb::Phase::Setup,
        Phase::Opening => pb::Phase::Opening,
        Phase::Turn => pb::Phase::Turn,
        Phase::Over => pb::Phase::GameOver,
    };
    pb::View {
        phase: phase as i32,
        to_act: Qwirkle::to_act(state).to_vec(),
        current_seat: state.current,
        start_seat: state.start_seat,
        seats,
        board,
        bag_count: state.bag.count_ones(),
        bag_tile_ids: if auditor {
            ids_list(state.bag)
        } else {
            Vec::new()
        },
        board_tile_ids,
        turns_without_placement: state.idle,
        idle_cap: state.config.idle_cap,
        turns: state.turns,
        end_reason: state.end_reason as i32,
        aborted: state.aborted,
        viewer: Some(viewer.to_proto()),
    }
}

pub(super) fn redact(event: &pb::Event, viewer: Viewer) -> Option<pb::Event> {
    if viewer == Viewer::Auditor {
        return Some(event.clone());
    }
    let mut e = event.clone();
    match e.kind.as_mut()? {
        pb::event::Kind::Dealt(d) => {
            for h in &mut d.hands {
                if !viewer.sees_private_of(h.seat) {
                    h.tile_ids.clear();
                }
            }
        }
        pb::event::Kind::Placed(p) if !viewer.sees_private_of(p.seat) => {
            p.tile_ids.clear();
        }
        pb::event::Kind::Drew(d) if !viewer.sees_private_of(d.seat) => {
            d.tile_ids.clear();
        }
        pb::event::Kind::Exchanged(x) if !viewer.sees_private_of(x.seat) => {
            x.drawn_ids.clear();
            x.returned_ids.clear();
        }
        _ => {}
    }
    Some(e)
}

pub(super) fn render(state: &State, viewer: Viewer) -> String {
    let mut s = String::new();
    let b = &state.board;
    if !b.is_empty() {
        let _ = write!(s, "     ");
        for x in b.min_x..=b.max_x {
            let _ = write!(s, "{x:>3}");
        }
        s.push('\n');
        for y in b.min_y..=b.max_y {
            let _ = write!(s, "{y:>4} ");
            for x in b.min_x..=b.max_x {
                match b.at(x, y) {
                    0 => s.push_str("  ."),
                    v => {
                        let _ = write!(s, " {}", type_code(v - 1));
                    }
                }
            }
            s.push('\n');
        }
    }
    let _ = writeln!(
        s,
        "bag {} | phase {:?} | to act {:?}",
        state.bag.count_ones(),
        state.phase,
        Qwirkle::to_act(state)
    );
    for seat in 0..state.seats() {
        let h = state.hands[seat as usize];
        let hand = if viewer.sees_private_of(seat) {
            ids_list(h)
                .iter()
                .map(|&id| type_code((id / 3) as u8))
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            format!("{} tiles", h.count_ones())
        };
        let _ = writeln!(
            s,
            "seat {seat}: score {:>3}  g {}  hand {hand}",
            state.scores[seat as usize], state.announced[seat as usize]
        );
    }
    if let Some(o) = Qwirkle::outcome(state) {
        let _ = writeln!(
            s,
            "over: {} winners {:?}{}",
            o.reason,
            o.winners,
            if o.aborted { " (aborted)" } else { "" }
        );
    }
    s
}
