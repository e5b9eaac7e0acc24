//! Qwirkle in words (English): move labels, event sentences, tile names for refusals, the
//! game's summary. Everything a player reads about this game is worded here and nowhere else.

use crate::game::{Seat, Viewer};
use crate::proto::qwirkle as pb;
use crate::words::{count, list, named, seats, who, whom};

use pb::action::Kind as A;
use pb::event::Kind as E;

pub(super) const SUMMARY: &str =
    "A tile-laying game for 2 to 4 players with 108 wooden tiles in six \
colours and six shapes. On your turn you lay tiles in one line that share a colour or a shape, \
never repeating a tile, and score a point for every tile in each line you make or extend; \
completing a line of six (a Qwirkle) scores six more. When the bag is empty, the first player to \
use up all their tiles ends the game.";

pub(super) const RULES_PATH: &str = "docs/rules/qwirkle.md";

/// What the scores count (`GameType.score_unit`), singular and plural.
pub(super) const SCORE_UNIT: (&str, &str) = ("point", "points");

/// How the match ended (`Outcome.description`), from the outcome's reason.
pub(super) fn outcome(o: &crate::proto::Outcome) -> String {
    match o.reason.as_str() {
        "HAND_EMPTIED" => "A player laid their last tile with the bag empty.",
        "BLOCKED" => "No tile left could be laid anywhere.",
        "IDLE_CAP" => "The match was stopped after too many turns without a tile laid.",
        "FORFEIT" => "A player's time ran out and they forfeited the match.",
        _ => "The match is over.",
    }
    .into()
}

const COLOURS: [&str; 6] = ["red", "orange", "yellow", "green", "blue", "purple"];
const SHAPES: [&str; 6] = ["circle", "cross", "diamond", "square", "star", "clover"];
const SHAPES_PLURAL: [&str; 6] = [
    "circles", "crosses", "diamonds", "squares", "stars", "clovers",
];

/// A tile type (0..36) in words: "red circle".
pub(super) fn tile(t: u32) -> String {
    let (c, s) = ((t / 6) as usize, (t % 6) as usize);
    match (COLOURS.get(c), SHAPES.get(s)) {
        (Some(c), Some(s)) => format!("{c} {s}"),
        _ => "unknown tile".into(),
    }
}

/// `n` tiles of type `t`: "a red circle", "2 red circles".
pub(super) fn tiles(n: u32, t: u32) -> String {
    if n == 1 {
        return format!("a {}", tile(t));
    }
    let (c, s) = ((t / 6) as usize, (t % 6) as usize);
    match (COLOURS.get(c), SHAPES_PLURAL.get(s)) {
        (Some(c), Some(s)) => format!("{n} {c} {s}"),
        _ => format!("{n} unknown tiles"),
    }
}

/// Tiles of type `t` in general: "red circles" ("your hand does not hold enough red circles").
pub(super) fn tile_plural(t: u32) -> String {
    tiles(2, t)
        .split_once(' ')
        .map_or(String::new(), |(_, rest)| rest.to_string())
}

fn coordinates(x: i32, y: i32) -> String {
    let n = |v: i32| {
        if v < 0 {
            format!("\u{2212}{}", -v)
        } else {
            v.to_string()
        }
    };
    format!("({}, {})", n(x), n(y))
}

fn placements(ps: &[pb::Placement]) -> String {
    list(
        &ps.iter()
            .map(|p| format!("{} at {}", tile(p.tile_type), coordinates(p.x, p.y)))
            .collect::<Vec<_>>(),
    )
}

fn tile_list(types: impl Iterator<Item = u32>) -> String {
    list(&types.map(tile).collect::<Vec<_>>())
}

pub(super) fn action_label(_view: &pb::View, _seat: Seat, action: &pb::Action) -> String {
    match &action.kind {
        Some(A::Opening(a)) => format!(
            "Announce {} for the opening: {}",
            count(a.tile_types.len() as u32, "tile", "tiles"),
            tile_list(a.tile_types.iter().copied())
        ),
        Some(A::Play(a)) => format!("Lay {}", placements(&a.placements)),
        Some(A::Exchange(a)) => format!(
            "Trade {} with the bag",
            tile_list(a.tile_types.iter().copied())
        ),
        Some(A::Pass(_)) => "Pass".into(),
        None => "An empty move".into(),
    }
}

pub(super) fn event_sentence(event: &pb::Event, v: Viewer) -> String {
    let Some(kind) = &event.kind else {
        return "Nothing happened.".into();
    };
    match kind {
        E::Dealt(e) => {
            let mine = e
                .hands
                .iter()
                .find(|h| v.is_seat(h.seat) && !h.tile_ids.is_empty());
            match mine {
                Some(h) => format!(
                    "Six tiles were dealt to each player. Yours: {}.",
                    tile_list(h.tile_ids.iter().map(|id| id / 3))
                ),
                None => "Six tiles were dealt to each player.".into(),
            }
        }
        E::Announced(e) => format!(
            "Each player announced their longest opening group ({}): {} the most and {}.",
            list(&e.group_sizes.iter().map(u32::to_string).collect::<Vec<_>>()),
            if v.is_seat(e.start_seat) {
                "you have".to_string()
            } else {
                format!("{} has", named(e.start_seat))
            },
            if v.is_seat(e.start_seat) {
                "start"
            } else {
                "starts"
            }
        ),
        E::Placed(e) => format!(
            "{} laid {} for {}.",
            who(e.seat, v),
            placements(&e.placements),
            count(e.points, "point", "points")
        ),
        E::Drew(e) => {
            if e.tile_ids.is_empty() {
                format!(
                    "{} drew {} from the bag.",
                    who(e.seat, v),
                    count(e.count, "tile", "tiles")
                )
            } else {
                format!(
                    "{} drew {} from the bag.",
                    who(e.seat, v),
                    tile_list(e.tile_ids.iter().map(|id| id / 3))
                )
            }
        }
        E::Exchanged(e) => {
            if e.returned_ids.is_empty() {
                format!(
                    "{} traded {} with the bag.",
                    who(e.seat, v),
                    count(e.count, "tile", "tiles")
                )
            } else {
                format!(
                    "{} traded {} for {} from the bag.",
                    who(e.seat, v),
                    tile_list(e.returned_ids.iter().map(|id| id / 3)),
                    tile_list(e.drawn_ids.iter().map(|id| id / 3))
                )
            }
        }
        E::Passed(e) => format!("{} passed.", who(e.seat, v)),
        E::Ended(e) => {
            let why = match pb::EndReason::try_from(e.reason) {
                Ok(pb::EndReason::HandEmptied) => format!(
                    "{} used up all {} tiles and {} {} bonus points",
                    who(e.bonus_seat, v),
                    if v.is_seat(e.bonus_seat) {
                        "your"
                    } else {
                        "their"
                    },
                    if v.is_seat(e.bonus_seat) {
                        "score"
                    } else {
                        "scores"
                    },
                    e.bonus
                ),
                Ok(pb::EndReason::Blocked) => "Nobody can lay a tile any more".into(),
                Ok(pb::EndReason::IdleCap) => {
                    "The table's limit of turns without a tile laid was reached".into()
                }
                Ok(pb::EndReason::Forfeit) => "A player forfeited".into(),
                _ => "The game ended".into(),
            };
            let scores: Vec<String> = e
                .final_scores
                .iter()
                .enumerate()
                .map(|(s, p)| format!("{} {p}", whom(s as u32, v)))
                .collect();
            let best = e.final_scores.iter().copied().max();
            let winners: Vec<u32> = e
                .final_scores
                .iter()
                .enumerate()
                .filter(|(_, &p)| Some(p) == best)
                .map(|(s, _)| s as u32)
                .collect();
            if e.aborted {
                format!(
                    "{why}: the match was stopped without a winner (final scores: {}).",
                    list(&scores)
                )
            } else {
                format!(
                    "{why}. Final scores: {}; {} won.",
                    list(&scores),
                    seats(&winners, v)
                )
            }
        }
    }
}

pub(super) fn card_words(event: &pb::Event) -> Vec<String> {
    let ids: Vec<u32> = match &event.kind {
        Some(E::Dealt(e)) => e.hands.iter().flat_map(|h| h.tile_ids.clone()).collect(),
        Some(E::Placed(e)) => {
            // Laid tiles are on the table for everyone: their ids name nothing more.
            return e.placements.iter().map(|p| tile(p.tile_type)).collect();
        }
        Some(E::Drew(e)) => e.tile_ids.clone(),
        Some(E::Exchanged(e)) => e.drawn_ids.iter().chain(&e.returned_ids).copied().collect(),
        _ => vec![],
    };
    ids.into_iter().map(|id| tile(id / 3)).collect()
}
