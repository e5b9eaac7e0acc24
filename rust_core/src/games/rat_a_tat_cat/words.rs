//! Rat-a-Tat Cat in words (English): move labels, event sentences, the game's summary.
//! Everything a player reads about this game is worded here and nowhere else.

use crate::game::{Seat, Viewer};
use crate::proto::rat_a_tat_cat as pb;
use crate::words::{list, named, seats, who, whom, whose};

use pb::action::Kind as A;
use pb::event::Kind as E;

pub(super) const SUMMARY: &str =
    "A memory card game for 2 to 6 players. Each player has a row of four \
face-down cards and tries to hold the lowest total by swapping in low cards, using Peek, Swap and \
Draw 2 power cards, and remembering what they have seen. When you think your row is the lowest, \
call \u{201c}Rat-a-tat cat!\u{201d}: everyone else plays one more turn, then the rows are scored.";

pub(super) const RULES_PATH: &str = "docs/rules/rat_a_tat_cat.md";

/// What the scores count (`GameType.score_unit`), singular and plural.
pub(super) const SCORE_UNIT: (&str, &str) = ("point", "points");

/// How the match ended (`Outcome.description`), from the outcome's reason.
pub(super) fn outcome(o: &crate::proto::Outcome) -> String {
    match o.reason.as_str() {
        "LAST_PLAYER_STANDING" => "Every other player reached the point limit: one player is left.",
        "ALL_ELIMINATED" => "Every player reached the point limit in the same round.",
        "ROUNDS_COMPLETED" => "The set number of rounds was played: the lowest total wins.",
        "TIME_CALLED" => "The host called time and the round in progress was finished.",
        "ADMIN_TURN_CAP" => "The match was stopped after too many turns.",
        "FORFEIT" => "A player's time ran out and they forfeited the match.",
        _ => "The match is over.",
    }
    .into()
}

/// A card's name as a sentence writes it ("a 7", "an 8", "a Peek card"); None for a card the
/// message does not show (face down, not sent, or a number whose value is hidden).
fn card(c: i32) -> Option<String> {
    match c {
        9 => Some("an 8".into()),
        1..=10 => Some(format!("a {}", c - 1)),
        11 => Some("a Peek card".into()),
        12 => Some("a Swap card".into()),
        13 => Some("a Draw 2 card".into()),
        _ => None,
    }
}

/// The card as the subject of a label ("the 7", "the Peek card").
fn the(c: i32) -> String {
    card(c).map_or("the card".into(), |n| {
        n.replacen("an ", "the ", 1).replacen("a ", "the ", 1)
    })
}

/// A card shown or, when hidden, "a card".
fn some(c: i32) -> String {
    card(c).unwrap_or_else(|| {
        if c == pb::Card::HiddenNumber as i32 {
            "a number card".into()
        } else {
            "a card".into()
        }
    })
}

fn verb(seat: Seat, viewer: Viewer, you: &str, they: &str) -> String {
    format!(
        "{} {}",
        who(seat, viewer),
        if viewer.is_seat(seat) { you } else { they }
    )
}

fn their(seat: Seat, viewer: Viewer) -> &'static str {
    if viewer.is_seat(seat) {
        "your"
    } else {
        "their"
    }
}

pub(super) fn action_label(view: &pb::View, _seat: Seat, action: &pb::Action) -> String {
    let top = view.discard_pile.last().copied().unwrap_or(0);
    let held = view.pending;
    match &action.kind {
        Some(A::TakeDiscard(a)) => format!(
            "Take {} from the discard pile into slot {}",
            the(top),
            a.slot
        ),
        Some(A::DrawFromPile(_)) => "Draw a card from the pile".into(),
        Some(A::ReplaceCard(a)) => format!(
            "Put {} into slot {} (its card goes to the discard pile)",
            the(held),
            a.slot
        ),
        Some(A::DiscardDrawn(_)) => format!("Discard {}", the(held)),
        Some(A::UsePower(_)) => format!("Use {}", the(held)),
        Some(A::PeekCard(a)) => format!("Peek at your card in slot {}", a.slot),
        Some(A::SwapCards(a)) => format!(
            "Swap your slot {} card with {}'s slot {} card, unseen",
            a.own_slot,
            named(a.target_seat),
            a.target_slot
        ),
        Some(A::SkipSwap(_)) => "Do not swap".into(),
        Some(A::CallRatATatCat(_)) => {
            "Call \u{201c}Rat-a-tat cat!\u{201d} (everyone else plays one more turn)".into()
        }
        Some(A::EndTurn(_)) => "End your turn".into(),
        None => "An empty move".into(),
    }
}

pub(super) fn event_sentence(event: &pb::Event, v: Viewer) -> String {
    let Some(kind) = &event.kind else {
        return "Nothing happened.".into();
    };
    match kind {
        E::RoundDealt(e) => format!(
            "Round {}: {} dealt four cards face down to each player, and the discard pile \
             shows {}. {}.",
            e.round,
            named(e.dealer),
            some(e.discard_top),
            verb(e.first_player, v, "play first", "plays first")
        ),
        E::InitialPeek(e) => match (card(e.slot1), card(e.slot4)) {
            (Some(a), Some(b)) => format!(
                "{} at {} outer cards: {a} in slot 1 and {b} in slot 4.",
                verb(e.seat, v, "looked", "looked"),
                their(e.seat, v)
            ),
            _ => format!(
                "{} at {} two outer cards.",
                verb(e.seat, v, "looked", "looked"),
                their(e.seat, v)
            ),
        },
        E::DiscardTaken(e) => format!(
            "{} took {} from the discard pile into slot {} and discarded {}.",
            who(e.seat, v),
            some(e.taken),
            e.slot,
            some(e.replaced)
        ),
        E::CardDrawn(e) => match card(e.card) {
            Some(c) => format!("{} drew {c} from the pile.", who(e.seat, v)),
            None => format!("{} drew a card from the pile.", who(e.seat, v)),
        },
        E::CardReplaced(e) => match card(e.placed) {
            Some(c) => format!(
                "{} put {c} into slot {} and discarded {}.",
                who(e.seat, v),
                e.slot,
                some(e.replaced)
            ),
            None => format!(
                "{} put the drawn card into slot {} and discarded {}.",
                who(e.seat, v),
                e.slot,
                some(e.replaced)
            ),
        },
        E::DrawnDiscarded(e) => format!("{} discarded {}.", who(e.seat, v), some(e.card)),
        E::PowerUsed(e) => format!("{} used {}.", who(e.seat, v), some(e.power)),
        E::CardPeeked(e) => match card(e.card) {
            Some(c) => format!(
                "{} at {} card in slot {}: it is {c}.",
                verb(e.seat, v, "peeked", "peeked"),
                their(e.seat, v),
                e.slot
            ),
            None => format!(
                "{} at {} card in slot {}.",
                verb(e.seat, v, "peeked", "peeked"),
                their(e.seat, v),
                e.slot
            ),
        },
        E::CardsSwapped(e) => format!(
            "{} swapped {} slot {} card with {} slot {} card, unseen.",
            who(e.seat, v),
            their(e.seat, v),
            e.own_slot,
            whose(e.target_seat, v),
            e.target_slot
        ),
        E::SwapSkipped(e) => format!("{} chose not to swap.", who(e.seat, v)),
        E::Called(e) => format!(
            "{} called \u{201c}Rat-a-tat cat!\u{201d}: everyone else plays one more turn.",
            who(e.seat, v)
        ),
        E::TurnEnded(e) => {
            let mut s = format!("{} ended {} turn.", who(e.seat, v), their(e.seat, v));
            if e.turn_limit_reached {
                s.push_str(" The round reached its turn limit.");
            }
            if e.round_over {
                s.push_str(" The round is over.");
            } else if !e.turn_limit_reached {
                s.push_str(&format!(
                    " {}.",
                    verb(e.next_seat, v, "play next", "plays next")
                ));
            }
            s
        }
        E::PileReshuffled(e) => format!(
            "The draw pile ran out: the discard pile was shuffled into a new draw pile, and the \
             discard pile now shows {}.",
            some(e.discard_top)
        ),
        E::RoundRevealed(_) => "Every row is turned face up.".into(),
        E::RevealDraw(e) => format!(
            "The power card in {} slot {} is replaced by {} from the pile.",
            whose(e.seat, v),
            e.slot,
            some(e.card)
        ),
        E::RoundScored(e) => {
            let scores: Vec<String> = e
                .scores
                .iter()
                .map(|s| {
                    format!(
                        "{} {} (total {})",
                        whom(s.seat, v),
                        s.round_score,
                        s.total_score
                    )
                })
                .collect();
            let mut out = format!("Round {} scored: {}.", e.round, list(&scores));
            if !e.eliminated.is_empty() {
                let out_now = seats(&e.eliminated, v);
                out.push_str(&format!(
                    " {} out of the match.",
                    crate::words::capitalised(&format!(
                        "{out_now} {}",
                        if e.eliminated.len() == 1 && !e.eliminated.iter().any(|&s| v.is_seat(s)) {
                            "is"
                        } else {
                            "are"
                        }
                    ))
                ));
            }
            out
        }
        E::MatchEnded(e) => {
            if e.aborted {
                "The match was stopped by the table's turn limit, without a winner.".into()
            } else if e.winners.is_empty() {
                "The match is over, without a winner.".into()
            } else {
                format!(
                    "The match is over: {} won{}.",
                    seats(&e.winners, v),
                    if e.winners.len() > 1 { " together" } else { "" }
                )
            }
        }
        E::StopRequested(_) => "The host ends the match after this round.".into(),
    }
}

pub(super) fn card_words(event: &pb::Event) -> Vec<String> {
    let cards: Vec<i32> = match &event.kind {
        Some(E::RoundDealt(e)) => e
            .rows
            .iter()
            .flat_map(|r| r.cards.iter().copied())
            .chain(e.flipped_powers.iter().copied())
            .chain([e.discard_top])
            .chain(e.draw_pile.iter().copied())
            .collect(),
        Some(E::InitialPeek(e)) => vec![e.slot1, e.slot4],
        Some(E::DiscardTaken(e)) => vec![e.taken, e.replaced],
        Some(E::CardDrawn(e)) => vec![e.card],
        Some(E::CardReplaced(e)) => vec![e.placed, e.replaced],
        Some(E::DrawnDiscarded(e)) => vec![e.card],
        Some(E::PowerUsed(e)) => vec![e.power],
        Some(E::CardPeeked(e)) => vec![e.card],
        Some(E::PileReshuffled(e)) => e
            .flipped_powers
            .iter()
            .copied()
            .chain([e.discard_top])
            .chain(e.draw_pile.iter().copied())
            .collect(),
        Some(E::RoundRevealed(e)) => e
            .rows
            .iter()
            .flat_map(|r| r.cards.iter().copied())
            .collect(),
        Some(E::RevealDraw(e)) => vec![e.card],
        _ => vec![],
    };
    cards.into_iter().filter_map(card).collect()
}
