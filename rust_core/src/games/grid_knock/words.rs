//! Grid Knock in words (English): move labels, event sentences, the game's summary.
//! Everything a player reads about this game is worded here and nowhere else.

use crate::game::{Seat, Viewer};
use crate::proto::grid_knock as pb;
use crate::words::{capitalised, list, named, seats, who, whom, whose};

use pb::action::Kind as A;
use pb::event::Kind as E;

pub(super) const SUMMARY: &str =
    "A card game for 2 to 8 players, each with a grid of twelve face-down \
cards whose last column is shared with the neighbour. On your turn you draw or take the discard \
and swap it into your cards, turning them up as you go; three equal cards in a line are discarded. \
Other players may knock to trade a card with you. Lowest total wins once someone reaches the \
target score.";

pub(super) const RULES_PATH: &str = "docs/rules/grid_knock.md";

/// What the scores count (`GameType.score_unit`), singular and plural.
pub(super) const SCORE_UNIT: (&str, &str) = ("point", "points");

/// How the match ended (`Outcome.description`), from the outcome's reason.
pub(super) fn outcome(o: &crate::proto::Outcome) -> String {
    match o.reason.as_str() {
        "TARGET_SCORE_REACHED" => {
            "A player's total reached the target score: the lowest total wins."
        }
        "TURN_CAP" => "The match was stopped after too many turns.",
        "FORFEIT" => "A player's time ran out and they forfeited the match.",
        _ => "The match is over.",
    }
    .into()
}

/// A card value in words: "a 7", "an 8", "a \u{2212}2".
pub(super) fn value(v: i32) -> String {
    match v {
        8 | 11 | 18 => format!("an {v}"),
        v if v < 0 => format!("a \u{2212}{}", -v),
        v => format!("a {v}"),
    }
}

/// The same card as a label's object: "the 7".
fn the(v: i32) -> String {
    if v < 0 {
        format!("the \u{2212}{}", -v)
    } else {
        format!("the {v}")
    }
}

/// Where a card lies, for `viewer`: "your card at row 1, column 4".
fn slot(s: Option<&pb::Slot>, v: Viewer) -> String {
    match s {
        Some(s) => format!(
            "{} card at row {}, column {}",
            whose(s.owner, v),
            s.row,
            s.col
        ),
        None => "a card".into(),
    }
}

/// Where a card lies, told of `actor`'s move: "their card at row 1, column 4" when the card
/// is the actor's own and the viewer is someone else.
fn slot_of(s: Option<&pb::Slot>, actor: Seat, v: Viewer) -> String {
    match s {
        Some(x) if x.owner == actor && !v.is_seat(actor) => {
            format!("their card at row {}, column {}", x.row, x.col)
        }
        _ => slot(s, v),
    }
}

fn held(view: &pb::View) -> String {
    view.drawn_card
        .or(view.taken_card)
        .or(view.held_card)
        .map_or("the card in hand".into(), the)
}

pub(super) fn action_label(view: &pb::View, seat: Seat, action: &pb::Action) -> String {
    let me = Viewer::Seat(seat);
    match &action.kind {
        Some(A::RevealInitial(a)) => format!("Turn up {}", slot(a.slot.as_ref(), me)),
        Some(A::DrawFromPile(_)) => "Draw a card from the pile".into(),
        Some(A::TakeFromDiscard(_)) => match view.discard_pile.last() {
            Some(&v) => format!("Take {} from the discard pile", the(v)),
            None => "Take the top card of the discard pile".into(),
        },
        Some(A::Knock(_)) => "Knock (offer to trade a card with the player on turn)".into(),
        Some(A::PassKnock(_)) => "Do not knock".into(),
        Some(A::AcceptKnock(a)) => format!("Accept {}'s knock", named(a.knocker)),
        Some(A::RefuseKnocks(_)) => "Refuse every knock".into(),
        Some(A::KeepSwap(a)) => format!(
            "Put {} in place of {}",
            held(view),
            slot(a.slot.as_ref(), me)
        ),
        Some(A::DiscardAndReveal(a)) => format!(
            "Discard {} and turn up {}",
            held(view),
            slot(a.slot.as_ref(), me)
        ),
        Some(A::KnockerSwap(a)) => format!(
            "Put {} in place of {}",
            view.held_card.map_or("the card you received".into(), the),
            slot(a.slot.as_ref(), me)
        ),
        // Whose grid each cell is in: column 4 of a grid is also in the next seat's domain, so
        // "row 1, column 4" alone names two places (two moves with one label).
        Some(A::DiscardTriple(a)) => format!(
            "Discard the three equal cards at {}",
            list(
                &a.cells
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let at = format!("row {}, column {}", c.row, c.col);
                        match a.cells.get(i + 1) {
                            Some(next) if next.owner == c.owner => at,
                            _ => format!("{at} of {} grid", whose(c.owner, me)),
                        }
                    })
                    .collect::<Vec<_>>()
            )
        ),
        Some(A::EndTriples(_)) => "Discard no more triples".into(),
        Some(A::TakeFromKnocker(a)) => format!("Take {}", slot(a.slot.as_ref(), me)),
        Some(A::ReturnSwap(a)) => format!(
            "Put {} in place of {}",
            view.taken_card.map_or("the card you took".into(), the),
            slot(a.slot.as_ref(), me)
        ),
        None => "An empty move".into(),
    }
}

fn verb(seat: Seat, v: Viewer, you: &str, they: &str) -> String {
    format!(
        "{} {}",
        who(seat, v),
        if v.is_seat(seat) { you } else { they }
    )
}

pub(super) fn event_sentence(event: &pb::Event, v: Viewer) -> String {
    let Some(kind) = &event.kind else {
        return "Nothing happened.".into();
    };
    match kind {
        E::Dealt(e) => format!(
            "Round {}: {} dealt twelve cards face down to each player, and the discard pile \
             starts with {}. {}.",
            e.round,
            named(e.dealer),
            value(e.discard_start),
            verb(e.first_player, v, "play first", "plays first")
        ),
        E::InitialChosen(e) => match &e.slot {
            Some(_) => format!(
                "{} chose {} to turn up.",
                who(e.seat, v),
                slot_of(e.slot.as_ref(), e.seat, v)
            ),
            None => format!("{} chose a card to turn up.", who(e.seat, v)),
        },
        E::InitialRevealed(e) => format!(
            "The chosen cards are turned up: {}.",
            list(
                &e.cards
                    .iter()
                    .map(|c| format!("{} at {}", value(c.value), position(c.slot.as_ref(), v)))
                    .collect::<Vec<_>>()
            )
        ),
        E::Reshuffled(e) => format!(
            "The discard pile was shuffled into a new draw pile of {} cards; {} stays on the \
             discard pile.",
            e.draw_pile_size,
            value(e.discard_top)
        ),
        E::Drawn(e) => format!("{} drew {} from the pile.", who(e.seat, v), value(e.value)),
        E::TookDiscard(e) => format!(
            "{} took {} from the discard pile.",
            who(e.seat, v),
            value(e.value)
        ),
        E::KnockAnswered(e) => match pb::KnockAnswer::try_from(e.answer) {
            Ok(pb::KnockAnswer::Knock) => format!("{} knocked.", who(e.seat, v)),
            Ok(pb::KnockAnswer::Pass) => verb(e.seat, v, "did not knock.", "did not knock."),
            _ => format!("{} answered the knock window, sealed.", who(e.seat, v)),
        },
        E::KnockWindowClosed(e) => {
            if e.knockers.is_empty() {
                "The knock window closed: nobody knocked.".into()
            } else {
                format!(
                    "The knock window closed: {} knocked.",
                    seats(&e.knockers, v)
                )
            }
        }
        E::KnockAccepted(e) => {
            format!("{} accepted {} knock.", who(e.seat, v), whose(e.knocker, v))
        }
        E::KnocksRefused(e) => format!("{} refused the knocks.", who(e.seat, v)),
        E::Kept(e) => format!(
            "{} put {} in place of {}, which was {}.",
            who(e.seat, v),
            value(e.placed),
            slot_of(e.slot.as_ref(), e.seat, v),
            value(e.removed)
        ),
        E::DiscardedAndRevealed(e) => format!(
            "{} discarded {} and turned up {}: {}.",
            who(e.seat, v),
            value(e.discarded),
            slot_of(e.slot.as_ref(), e.seat, v),
            value(e.revealed)
        ),
        E::KnockerSwapped(e) => match e.removed {
            Some(r) => format!(
                "{} put {} in place of {}, which was {}.",
                who(e.knocker, v),
                value(e.placed),
                slot_of(e.slot.as_ref(), e.knocker, v),
                value(r)
            ),
            None => format!(
                "{} put {} in place of {}, a face-down card.",
                who(e.knocker, v),
                value(e.placed),
                slot_of(e.slot.as_ref(), e.knocker, v)
            ),
        },
        E::TripleDiscarded(e) => format!(
            "{} discarded three cards of {}: {}.",
            who(e.seat, v),
            value(e.value)
                .trim_start_matches("an ")
                .trim_start_matches("a "),
            list(
                &e.cells
                    .iter()
                    .map(|c| position(Some(c), v))
                    .collect::<Vec<_>>()
            )
        ),
        E::TriplesEnded(e) => {
            if e.automatic {
                format!(
                    "{} no triple left to discard.",
                    verb(e.seat, v, "have", "has")
                )
            } else {
                format!(
                    "{} discarding triples.",
                    verb(e.seat, v, "stopped", "stopped")
                )
            }
        }
        E::TookFromKnocker(e) => format!(
            "{} took {} from {}.",
            who(e.seat, v),
            value(e.value),
            slot(e.slot.as_ref(), v)
        ),
        E::ReturnSwapped(e) => format!(
            "{} put {} in place of {}, which was {}.",
            who(e.seat, v),
            value(e.placed),
            slot_of(e.slot.as_ref(), e.seat, v),
            value(e.removed)
        ),
        E::ExchangedCardDiscarded(e) => format!("{} discarded {}.", who(e.seat, v), value(e.value)),
        E::HeldCardPlaced(e) => format!(
            "{} put {} into {}.",
            who(e.knocker, v),
            value(e.value),
            slot_of(e.slot.as_ref(), e.knocker, v)
        ),
        E::HeldCardDiscarded(e) => format!("{} discarded {}.", who(e.knocker, v), value(e.value)),
        E::EmptyPassed(e) => format!(
            "{} no cards left to play with and passed.",
            verb(e.seat, v, "have", "has")
        ),
        E::TurnEnded(e) => {
            let mut s = format!(
                "{} ended {} turn.",
                who(e.seat, v),
                if v.is_seat(e.seat) { "your" } else { "their" }
            );
            if e.closed {
                s.push_str(&format!(
                    " {} all cards face up: everyone else plays one last turn.",
                    verb(e.seat, v, "have", "has")
                ));
            }
            if e.round_over {
                s.push_str(" The round is over.");
            } else {
                s.push_str(&format!(
                    " {}.",
                    verb(e.next_player, v, "play next", "plays next")
                ));
            }
            s
        }
        E::RoundScored(e) => {
            let scores: Vec<String> = e
                .round_scores
                .iter()
                .zip(&e.totals)
                .enumerate()
                .map(|(s, (r, t))| format!("{} {r} (total {t})", whom(s as u32, v)))
                .collect();
            let mut s = format!("Round {} scored: {}.", e.round, list(&scores));
            if e.closer_doubled {
                s.push_str(&format!(
                    " {} round score was doubled for closing without the lowest score.",
                    capitalised(&whose(e.closer, v))
                ));
            }
            if e.match_over {
                s.push_str(&format!(
                    " The match is over: {} won.",
                    seats(&e.winners, v)
                ));
            }
            s
        }
        E::MatchAborted(e) => format!(
            "The match was stopped by the table's limit after {} turns, without a winner.",
            e.turns
        ),
        E::Forfeited(e) => format!(
            "{} forfeited the match; {} won.",
            who(e.seat, v),
            seats(&e.winners, v)
        ),
    }
}

/// "row 1, column 2 of your grid".
fn position(s: Option<&pb::Slot>, v: Viewer) -> String {
    match s {
        Some(s) => format!(
            "row {}, column {} of {} grid",
            s.row,
            s.col,
            whose(s.owner, v)
        ),
        None => "a hidden place".into(),
    }
}

pub(super) fn card_words(event: &pb::Event) -> Vec<String> {
    let values: Vec<i32> = match &event.kind {
        Some(E::Dealt(e)) => e
            .blocks
            .iter()
            .chain(&e.draw_pile)
            .copied()
            .chain([e.discard_start])
            .collect(),
        Some(E::InitialRevealed(e)) => e.cards.iter().map(|c| c.value).collect(),
        Some(E::Reshuffled(e)) => e.draw_pile.iter().copied().chain([e.discard_top]).collect(),
        Some(E::Drawn(e)) => vec![e.value],
        Some(E::TookDiscard(e)) => vec![e.value],
        Some(E::Kept(e)) => vec![e.placed, e.removed],
        Some(E::DiscardedAndRevealed(e)) => vec![e.discarded, e.revealed],
        Some(E::KnockerSwapped(e)) => e.removed.into_iter().chain([e.placed]).collect(),
        Some(E::TripleDiscarded(e)) => vec![e.value],
        Some(E::TookFromKnocker(e)) => vec![e.value],
        Some(E::ReturnSwapped(e)) => vec![e.placed, e.removed],
        Some(E::ExchangedCardDiscarded(e)) => vec![e.value],
        Some(E::HeldCardPlaced(e)) => vec![e.value],
        Some(E::HeldCardDiscarded(e)) => vec![e.value],
        _ => vec![],
    };
    values.into_iter().map(value).collect()
}
