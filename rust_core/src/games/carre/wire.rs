//! Protobuf conversions: cards, actions in (parsed and rule-checked into moves) and out, and
//! the events a move or a round's end is recorded by.

use super::cards::{bit, card_from_pb, rank, suit, JACK, NONE, QUEEN};
use super::scoring::base_score;
use super::state::{Move, RoundRec, State};
use super::Carre;
use crate::error::{CoreError, CoreResult};
use crate::proto::carre as pb;

use pb::event::Kind as Ev;

pub(super) fn card_pb(c: u8) -> pb::Card {
    pb::Card {
        rank: rank(c) as i32 + 1,
        suit: suit(c) as i32 + 1,
    }
}

pub(super) fn ev(kind: Ev) -> pb::Event {
    pb::Event { kind: Some(kind) }
}

impl Carre {
    pub(super) fn scored_event(s: &State, rec: &RoundRec) -> pb::RoundScored {
        pb::RoundScored {
            round: s.round as u32,
            end: if rec.went_out == NONE {
                pb::RoundEnd::Exhaustion
            } else {
                pb::RoundEnd::WentOut
            } as i32,
            scores: (0..2)
                .map(|i| pb::SeatRoundScore {
                    seat: i as u32,
                    raw_points: rec.raw[i] as u32,
                    base_score: base_score(rec.raw[i] as u32),
                    went_out: rec.went_out == i as u8,
                    round_score: rec.score[i] as u32,
                    total: s.totals[i] + rec.score[i] as u32,
                })
                .collect(),
        }
    }

    pub(super) fn move_to_action(seat: u8, mv: Move) -> pb::Action {
        use pb::action::Kind as A;
        let kind = match mv {
            Move::GoOut => A::GoOut(pb::GoOut {}),
            Move::Discard(c) => A::Discard(pb::Discard {
                card: Some(card_pb(c)),
            }),
            Move::Place(c, owner, idx) => A::Place(pb::Place {
                card: Some(card_pb(c)),
                square: if owner == seat {
                    pb::TargetSquare::Own
                } else {
                    pb::TargetSquare::Opponent
                } as i32,
                cell: idx as u32 + 1,
            }),
        };
        pb::Action { kind: Some(kind) }
    }

    /// Parses and rule-checks a client action into a move.
    pub(super) fn parse_action(state: &State, seat: u8, action: &pb::Action) -> CoreResult<Move> {
        use pb::action::Kind as A;
        let kind = action
            .kind
            .as_ref()
            .ok_or_else(|| CoreError::malformed("action has no kind"))?;
        let bad_card =
            || CoreError::malformed("the action's card is missing or not a card of the pack");
        match kind {
            A::GoOut(_) => {
                state.check_go_out(seat)?;
                Ok(Move::GoOut)
            }
            A::Discard(d) => {
                let c = card_from_pb(d.card.as_ref()).ok_or_else(bad_card)?;
                if state.hands[seat as usize] & bit(c) == 0 {
                    return Err(CoreError::rule(
                        "NOT_IN_HAND",
                        format!("you do not hold {}", super::words::card_code(c)),
                    ));
                }
                Ok(Move::Discard(c))
            }
            A::Place(p) => {
                let c = card_from_pb(p.card.as_ref()).ok_or_else(bad_card)?;
                let owner = match pb::TargetSquare::try_from(p.square) {
                    Ok(pb::TargetSquare::Own) => seat,
                    Ok(pb::TargetSquare::Opponent) => 1 - seat,
                    _ => {
                        return Err(CoreError::malformed(format!(
                            "square {} is not OWN or OPPONENT",
                            p.square
                        )))
                    }
                };
                if !(1..=9).contains(&p.cell) {
                    return Err(CoreError::malformed(format!(
                        "cell {} is not in 1..9",
                        p.cell
                    )));
                }
                let idx = (p.cell - 1) as u8;
                state.check_place(seat, c, owner, idx)?;
                Ok(Move::Place(c, owner, idx))
            }
        }
    }

    pub(super) fn move_event(state: &State, seat: u8, mv: Move) -> pb::Event {
        match mv {
            Move::GoOut => ev(Ev::WentOut(pb::WentOut {
                seat: seat as u32,
                raw_points: state.raw(seat),
            })),
            Move::Discard(c) => ev(Ev::CardDiscarded(pb::CardDiscarded {
                seat: seat as u32,
                card: Some(card_pb(c)),
            })),
            Move::Place(c, owner, idx) => {
                let r = rank(c);
                ev(Ev::CardPlaced(pb::CardPlaced {
                    seat: seat as u32,
                    card: Some(card_pb(c)),
                    square_owner: owner as u32,
                    cell: idx as u32 + 1,
                    face_down: r == JACK || r == QUEEN,
                }))
            }
        }
    }
}
