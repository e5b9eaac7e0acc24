//! Carré in words (English): move labels, event sentences, card names for refusals, the
//! game's summary. Everything a player reads about this game is worded here and nowhere else.

use crate::game::{Seat, Viewer};
use crate::proto::carre as pb;
use crate::words::{count, list, named, named_cap, seats, who, whom, whose};

use pb::action::Kind as A;
use pb::event::Kind as E;

pub(super) const SUMMARY: &str =
    "A card game for two players, each building a three-by-three square \
of cards. Aces to nines have their own cell, tens and kings go only in your own square, and jacks \
and queens cover a face-up card face down, in your opponent's square too. Lines of your square \
score points; go out once yours is worth enough, and after the last round the higher total wins.";

pub(super) const RULES_PATH: &str = "docs/rules/carre.md";

/// What the scores count (`GameType.score_unit`), singular and plural.
pub(super) const SCORE_UNIT: (&str, &str) = ("point", "points");

/// How the match ended (`Outcome.description`), from the outcome's reason.
pub(super) fn outcome(o: &crate::proto::Outcome) -> String {
    match o.reason.as_str() {
        "HIGHER_TOTAL" => "The last round was played: the higher total wins.",
        "DRAW" => "The last round was played and the totals are equal: a draw.",
        "ROUND_CAP" => "The match was stopped after too many extra rounds without a winner.",
        "FORFEIT" => "A player's time ran out and they forfeited the match.",
        _ => "The match is over.",
    }
    .into()
}

const RANKS: [&str; 13] = [
    "ace", "2", "3", "4", "5", "6", "7", "8", "9", "10", "jack", "queen", "king",
];
const SUITS: [&str; 4] = ["spades", "hearts", "diamonds", "clubs"];

/// A card by the core's code (rank × 4 + suit): "the jack of hearts".
pub(super) fn card_code(c: u8) -> String {
    match (RANKS.get((c >> 2) as usize), SUITS.get((c & 3) as usize)) {
        (Some(r), Some(s)) => format!("the {r} of {s}"),
        _ => "an unknown card".into(),
    }
}

/// A card of the protocol in words; None when the message does not show it.
fn card(c: Option<&pb::Card>) -> Option<String> {
    let c = c?;
    match (
        RANKS.get((c.rank as usize).wrapping_sub(1)),
        SUITS.get((c.suit as usize).wrapping_sub(1)),
    ) {
        (Some(r), Some(s)) => Some(format!("the {r} of {s}")),
        _ => None,
    }
}

fn some(c: Option<&pb::Card>) -> String {
    card(c).unwrap_or_else(|| "a card".into())
}

pub(super) fn action_label(view: &pb::View, seat: Seat, action: &pb::Action) -> String {
    let _ = view;
    match &action.kind {
        Some(A::GoOut(_)) => "Go out (end the round now)".into(),
        Some(A::Discard(a)) => format!("Discard {}", some(a.card.as_ref())),
        Some(A::Place(a)) => {
            let square = if a.square == pb::TargetSquare::Opponent as i32 {
                format!("{}'s square", named(1 - seat.min(1)))
            } else {
                "your square".into()
            };
            format!(
                "Place {} on cell {} of {square}",
                some(a.card.as_ref()),
                a.cell
            )
        }
        None => "An empty move".into(),
    }
}

pub(super) fn event_sentence(event: &pb::Event, v: Viewer) -> String {
    let Some(kind) = &event.kind else {
        return "Nothing happened.".into();
    };
    match kind {
        E::MatchStarted(e) => format!(
            "A match of {} begins. {}.",
            count(e.rounds_per_match, "round", "rounds"),
            if v.is_seat(e.first_starter) {
                "You start the first round".to_string()
            } else {
                format!("{} starts the first round", named_cap(e.first_starter))
            }
        ),
        E::RoundDealt(e) => {
            let mut s = format!(
                "Round {}: {} dealt {} to each player; {} left in the stock.",
                e.round,
                named(e.dealer),
                count(e.hands.first().map_or(0, |h| h.count), "card", "cards"),
                count(e.stock_size, "card is", "cards are")
            );
            if let Some(h) = e.hands.iter().find(|h| v.is_seat(h.seat)) {
                if !h.cards.is_empty() {
                    let names: Vec<String> = h.cards.iter().map(|c| some(Some(c))).collect();
                    s.push_str(&format!(" Your hand: {}.", list(&names)));
                }
            }
            s
        }
        E::CardDrawn(e) => match card(e.card.as_ref()) {
            Some(c) => format!("{} drew {c} from the stock.", who(e.seat, v)),
            None => format!("{} drew a card from the stock.", who(e.seat, v)),
        },
        E::CardPlaced(e) => {
            let square = if e.square_owner == e.seat {
                if v.is_seat(e.seat) {
                    "your own square".to_string()
                } else {
                    "their own square".to_string()
                }
            } else {
                format!("{} square", whose(e.square_owner, v))
            };
            let face = if e.face_down { ", face down" } else { "" };
            match card(e.card.as_ref()) {
                Some(c) => format!(
                    "{} placed {c} on cell {} of {square}{face}.",
                    who(e.seat, v),
                    e.cell
                ),
                None => format!(
                    "{} placed a card face down on cell {} of {square}.",
                    who(e.seat, v),
                    e.cell
                ),
            }
        }
        E::CardDiscarded(e) => format!("{} discarded {}.", who(e.seat, v), some(e.card.as_ref())),
        E::WentOut(e) => format!(
            "{} went out with {} in {} square.",
            who(e.seat, v),
            count(e.raw_points, "point", "points"),
            if v.is_seat(e.seat) { "your" } else { "their" }
        ),
        E::TurnPassed(e) => format!("{} could not draw and passed the turn.", who(e.seat, v)),
        E::RoundScored(e) => {
            let why = match pb::RoundEnd::try_from(e.end) {
                Ok(pb::RoundEnd::WentOut) => "after a player went out",
                _ => "with the stock used up",
            };
            let scores: Vec<String> = e
                .scores
                .iter()
                .map(|s| {
                    format!(
                        "{} {} (total {})",
                        whom(s.seat, v),
                        count(s.round_score, "point", "points"),
                        s.total
                    )
                })
                .collect();
            format!("Round {} ended {why}: {}.", e.round, list(&scores))
        }
        E::MatchEnded(e) => match pb::MatchResult::try_from(e.result) {
            Ok(pb::MatchResult::Aborted) => {
                "The match was stopped by the table's round limit, without a winner.".into()
            }
            Ok(pb::MatchResult::Draw) => format!(
                "The match is over after {}: a draw at {}.",
                count(e.rounds_played, "round", "rounds"),
                list(&e.totals.iter().map(u32::to_string).collect::<Vec<_>>())
            ),
            _ => format!(
                "The match is over after {}: {} won ({}).",
                count(e.rounds_played, "round", "rounds"),
                seats(&e.winners, v),
                list(
                    &e.totals
                        .iter()
                        .enumerate()
                        .map(|(s, t)| format!("{} {t}", whom(s as u32, v)))
                        .collect::<Vec<_>>()
                )
            ),
        },
    }
}

pub(super) fn card_words(event: &pb::Event) -> Vec<String> {
    let cards: Vec<&pb::Card> = match &event.kind {
        Some(E::RoundDealt(e)) => e
            .hands
            .iter()
            .flat_map(|h| h.cards.iter())
            .chain(e.stock.iter())
            .collect(),
        Some(E::CardDrawn(e)) => e.card.iter().collect(),
        Some(E::CardPlaced(e)) => e.card.iter().collect(),
        Some(E::CardDiscarded(e)) => e.card.iter().collect(),
        _ => vec![],
    };
    cards.into_iter().filter_map(|c| card(Some(c))).collect()
}
