//! Protobuf conversions: card codes and card sets, the `TrickRevealed` event with its cards
//! inline, and the one action (a commit).

use super::cards::{bit, cards_of, MAX_SEATS, NO_CARD, NO_TRUMP};
use crate::games::inline_cards::{inline_message, InlineCards};
use crate::proto::democratie as pb;

#[inline]
pub(super) fn to_pb(c: u8) -> i32 {
    if c == NO_CARD {
        0
    } else {
        c as i32 + 1
    }
}
#[inline]
pub(super) fn from_pb(code: i32) -> Option<u8> {
    if (1..=50).contains(&code) {
        Some((code - 1) as u8)
    } else {
        None
    }
}
pub(super) fn trump_pb(t: u8) -> i32 {
    match t {
        0..=3 => t as i32 + 1,
        NO_TRUMP => pb::Suit::None as i32,
        _ => pb::Suit::Unspecified as i32,
    }
}

pub(super) fn mask_to_pb(m: u64) -> Vec<i32> {
    cards_of(m).map(to_pb).collect()
}
/// A list of protobuf cards as a set: `None` if a code is invalid or repeated.
pub(super) fn pb_to_mask(cards: &[i32]) -> Option<u64> {
    let mut m = 0u64;
    for &code in cards {
        let c = from_pb(code)?;
        if m & bit(c) != 0 {
            return None;
        }
        m |= bit(c);
    }
    Some(m)
}

/// `tablier.democratie.v1.TrickRevealed` with the played cards inline (see [`InlineCards`]):
/// every trick reveals one.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Debug)]
pub struct TrickRevealed {
    pub day: u32,
    pub trick_no: u32,
    /// `Card`
    pub vote_card: i32,
    /// `Suit`
    pub trump: i32,
    /// One per seat, in seat order.
    pub played: InlineCards<MAX_SEATS>,
}

inline_message!(TrickRevealed { 1 => day, 2 => trick_no, 3 => vote_card, 4 => trump, 5 => played });

pub(super) fn ev(kind: pb::event::Kind) -> pb::Event {
    pb::Event { kind: Some(kind) }
}

pub(super) fn commit_action(c: u8) -> pb::Action {
    pb::Action {
        kind: Some(pb::action::Kind::CommitCard(pb::CommitCard {
            card: to_pb(c),
        })),
    }
}
