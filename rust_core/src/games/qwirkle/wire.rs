//! Protobuf conversions: actions built, events built and their tile ids decoded.

use crate::proto::qwirkle as pb;

use super::plays::PlayRef;
use super::state::State;

pub(super) fn ev(kind: pb::event::Kind) -> pb::Event {
    pb::Event { kind: Some(kind) }
}

pub(super) fn ended(
    state: &State,
    reason: pb::EndReason,
    bonus_seat: u32,
    bonus: u32,
    extra_points: Option<(u32, u32)>,
) -> pb::Event {
    let mut scores: Vec<i64> = state.scores[..state.seats() as usize].to_vec();
    if let Some((s, p)) = extra_points {
        scores[s as usize] += p as i64;
    }
    if bonus > 0 {
        scores[bonus_seat as usize] += bonus as i64;
    }
    ev(pb::event::Kind::Ended(pb::Ended {
        reason: reason as i32,
        bonus_seat,
        bonus,
        final_scores: scores,
        aborted: reason == pb::EndReason::IdleCap,
    }))
}

pub(super) fn action(kind: pb::action::Kind) -> pb::Action {
    pb::Action { kind: Some(kind) }
}

pub(super) fn play_action(p: &PlayRef) -> pb::Action {
    action(pb::action::Kind::Play(pb::Play {
        placements: p
            .placements()
            .map(|(x, y, t)| pb::Placement {
                x,
                y,
                tile_type: t as u32,
            })
            .collect(),
    }))
}
