//! Démocratie in words (English): move labels, event sentences, card names, the game's
//! summary. Everything a player reads about this game is worded here and nowhere else.

use crate::game::{Seat, Viewer};
use crate::proto::democratie as pb;
use crate::words::{count, list, named, named_cap, seats, who, whom};

use pb::action::Kind as A;
use pb::event::Kind as E;

pub(super) const SUMMARY: &str =
    "A trick-taking game for 2 to 6 players with simultaneous, sealed \
plays. Each trick, a vote card is turned up and its suit is trump; every player seals a card, \
then all are revealed and the best card takes the vote card. Captured cards score by suit after \
each deal: 13 points in a suit make a tribe, and the first player to gather the target number of \
tribes wins.";

pub(super) const RULES_PATH: &str = "docs/rules/democratie.md";

/// What the scores count (`GameType.score_unit`), singular and plural.
pub(super) const SCORE_UNIT: (&str, &str) = ("tribe", "tribes");

/// How the match ended (`Outcome.description`), from the outcome's reason.
pub(super) fn outcome(o: &crate::proto::Outcome) -> String {
    match o.reason.as_str() {
        "TARGET_REACHED" => "A player gathered the target number of tribes, more than anyone else.",
        "DEAL_CAP" => "The match was stopped after too many deals without a winner.",
        "FORFEIT" => "A player's time ran out and they forfeited the match.",
        _ => "The match is over.",
    }
    .into()
}

const RANKS: [&str; 12] = [
    "5", "4", "3", "ace", "king", "queen", "jack", "10", "9", "8", "7", "6",
];
const SUITS: [&str; 4] = ["clubs", "diamonds", "hearts", "spades"];

/// A card (the protobuf `Card` value) in words: "the jack of hearts", "the Joker"; None for
/// no card (or one the message does not show).
pub(super) fn card(c: i32) -> Option<String> {
    match c {
        1..=48 => {
            let i = (c - 1) as usize;
            Some(format!("the {} of {}", RANKS[i % 12], SUITS[i / 12]))
        }
        49 => Some("the Joker".into()),
        50 => Some("the second Joker".into()),
        _ => None,
    }
}

fn some(c: i32) -> String {
    card(c).unwrap_or_else(|| "a card".into())
}

fn trump(t: i32) -> String {
    match pb::Suit::try_from(t) {
        Ok(pb::Suit::Clubs) => "clubs are trump".into(),
        Ok(pb::Suit::Diamonds) => "diamonds are trump".into(),
        Ok(pb::Suit::Hearts) => "hearts are trump".into(),
        Ok(pb::Suit::Spades) => "spades are trump".into(),
        _ => "there is no trump".into(),
    }
}

fn cards(cs: &[i32]) -> String {
    list(&cs.iter().map(|&c| some(c)).collect::<Vec<_>>())
}

pub(super) fn action_label(_view: &pb::View, _seat: Seat, action: &pb::Action) -> String {
    match &action.kind {
        Some(A::CommitCard(a)) => format!("Seal {}", some(a.card)),
        None => "An empty move".into(),
    }
}

pub(super) fn event_sentence(event: &pb::Event, v: Viewer) -> String {
    let Some(kind) = &event.kind else {
        return "Nothing happened.".into();
    };
    match kind {
        E::MatchStarted(e) => format!(
            "A match for {} players begins: the first to {} wins. {} deals first.",
            e.seats,
            count(e.target, "tribe", "tribes"),
            named_cap(e.first_dealer)
        ),
        E::DeckShuffled(e) => format!(
            "Deal {}: {} shuffled the {} cards.",
            e.deal_no,
            named(e.dealer),
            e.deck_size
        ),
        E::DayDealt(e) => {
            let each = e.hands.first().map_or(0, |h| h.count);
            let mut s = format!(
                "Day {} of deal {}: each player received {}, and {} lie face down as vote cards.",
                e.day,
                e.deal_no,
                count(each, "card", "cards"),
                e.vote_pile_count
            );
            if let Some(h) = e.hands.iter().find(|h| v.is_seat(h.seat)) {
                if !h.cards.is_empty() {
                    s.push_str(&format!(" Yours: {}.", cards(&h.cards)));
                }
            }
            s
        }
        E::VoteCardFlipped(e) => format!(
            "Trick {} of day {}: the vote card is {}, so {}.",
            e.trick_no,
            e.day,
            some(e.card),
            trump(e.trump)
        ),
        E::CardCommitted(e) => match card(e.card) {
            Some(c) => format!("{} sealed {c}.", who(e.seat, v)),
            None => format!("{} sealed a card.", who(e.seat, v)),
        },
        E::TrickRevealed(e) => {
            let played: Vec<String> = e
                .played
                .iter()
                .enumerate()
                .map(|(s, &c)| format!("{} {}", whom(s as u32, v), some(c)))
                .collect();
            format!("The sealed cards are turned up: {}.", list(&played))
        }
        E::TrickResolved(e) => {
            if e.tie {
                format!(
                    "Trick {} is a tie: nobody takes {}.",
                    e.trick_no,
                    some(e.vote_card)
                )
            } else {
                format!(
                    "{} won trick {} and {} {}{}.",
                    who(e.winner, v),
                    e.trick_no,
                    if v.is_seat(e.winner) { "take" } else { "takes" },
                    some(e.vote_card),
                    if e.five_six_rule {
                        " (the 6 of trump beats the 5 of trump)"
                    } else {
                        ""
                    }
                )
            }
        }
        E::DealScored(e) => {
            let scores: Vec<String> = e
                .seats
                .iter()
                .map(|s| {
                    format!(
                        "{} {} ({} in all)",
                        whom(s.seat, v),
                        if s.tribes_gained == 0 {
                            "no tribe".to_string()
                        } else {
                            count(s.tribes_gained, "tribe", "tribes")
                        },
                        s.tribes_total
                    )
                })
                .collect();
            format!("Deal {} scored: {}.", e.deal_no, list(&scores))
        }
        E::MatchEnded(e) => {
            if e.aborted {
                "The match was stopped by the table's limit on deals, without a winner.".into()
            } else if e.winners.is_empty() {
                "The match is over, without a winner.".into()
            } else {
                format!("The match is over: {} won.", seats(&e.winners, v))
            }
        }
    }
}

pub(super) fn card_words(event: &pb::Event) -> Vec<String> {
    let cs: Vec<i32> = match &event.kind {
        Some(E::DeckShuffled(e)) => e.deck.clone(),
        Some(E::DayDealt(e)) => e
            .hands
            .iter()
            .flat_map(|h| h.cards.iter().copied())
            .chain(e.vote_pile.iter().copied())
            .collect(),
        Some(E::VoteCardFlipped(e)) => vec![e.card],
        Some(E::CardCommitted(e)) => vec![e.card],
        Some(E::TrickRevealed(e)) => e.played.iter().copied().chain([e.vote_card]).collect(),
        Some(E::TrickResolved(e)) => vec![e.vote_card],
        Some(E::DealScored(e)) => e
            .seats
            .iter()
            .flat_map(|s| s.captured.iter().copied())
            .chain(e.discard.iter().copied())
            .collect(),
        _ => vec![],
    };
    cs.into_iter().filter_map(card).collect()
}
