//! Cards and constants: the pack, ranks and suits of a card code, the `7H` codes, a card's
//! scoring mask and its protobuf form (docs/rules/carre.md §2).

use crate::proto::carre as pb;

pub(super) const DECK: usize = 52;
pub(super) const HAND: usize = 8;
pub(super) const STOCK: usize = DECK - 2 * HAND;
pub(super) const TEN: u8 = 9;
pub(super) const JACK: u8 = 10;
pub(super) const QUEEN: u8 = 11;
pub(super) const KING: u8 = 12;
pub(super) const NONE: u8 = 0xFF;
/// Extra rounds allowed when `tiebreak_extra_rounds` is on (AMB25).
pub(super) const MAX_EXTRA_ROUNDS: u8 = 8;
pub(super) const MAX_ROUNDS_OPTION: u8 = 12;
pub(super) const MAX_HISTORY: usize = (MAX_ROUNDS_OPTION + MAX_EXTRA_ROUNDS) as usize;

#[inline]
pub(super) fn rank(c: u8) -> u8 {
    c >> 2
}
#[inline]
pub(super) fn suit(c: u8) -> u8 {
    c & 3
}
#[inline]
pub(super) fn bit(c: u8) -> u64 {
    1u64 << c
}

const RANK_CODES: &[u8; 13] = b"A23456789TJQK";
const SUIT_CODES: &[u8; 4] = b"SHDC";

/// `7H`, `TS`, `QD`.
pub(super) fn card_name(c: u8) -> String {
    let r = RANK_CODES.get(rank(c) as usize).copied().unwrap_or(b'?') as char;
    let s = SUIT_CODES.get(suit(c) as usize).copied().unwrap_or(b'?') as char;
    format!("{r}{s}")
}

/// Parses `7H` style codes (used by tests and tools).
pub fn parse_card(code: &str) -> Option<u8> {
    let b = code.as_bytes();
    if b.len() != 2 {
        return None;
    }
    let r = RANK_CODES
        .iter()
        .position(|&x| x == b[0].to_ascii_uppercase())?;
    let s = SUIT_CODES
        .iter()
        .position(|&x| x == b[1].to_ascii_uppercase())?;
    Some((r * 4 + s) as u8)
}

pub(super) fn rank_word(c: u8) -> &'static str {
    match rank(c) {
        0..=8 => "pip card",
        TEN => "Ten",
        JACK => "Jack",
        QUEEN => "Queen",
        _ => "King",
    }
}

/// Scoring mask of a face-up card: its suit bit and its colour bit.
#[inline]
pub fn card_mask(c: u8) -> u8 {
    let s = suit(c);
    (1 << s) | if s == 1 || s == 2 { 0x20 } else { 0x10 }
}

pub(super) fn card_from_pb(c: Option<&pb::Card>) -> Option<u8> {
    let c = c?;
    if !(1..=13).contains(&c.rank) || !(1..=4).contains(&c.suit) {
        return None;
    }
    Some(((c.rank - 1) * 4 + (c.suit - 1)) as u8)
}
