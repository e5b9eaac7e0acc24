//! Cards (§2.1) and deck sizes (§2.3): a card is a `u8`, a set of cards a `u64` bitset.

pub(super) const MAX_SEATS: usize = 6;
/// No card in a slot (commit, vote card).
pub(super) const NO_CARD: u8 = 255;
pub(super) const X1: u8 = 48;
pub(super) const X2: u8 = 49;
/// `trump` value for a trick without trump (Joker vote card).
pub(super) const NO_TRUMP: u8 = 4;
/// `trump` value while no vote card is face up.
pub(super) const TRUMP_UNSET: u8 = 5;
pub(super) const NOBODY: u8 = 255;

const RANKS: &[u8; 12] = b"543AKQJT9876";
pub(super) const SUITS: &[u8; 4] = b"CDHS";
/// Card points by rank index (§2.1).
pub(super) const POINTS: [u8; 12] = [5, 4, 3, 3, 2, 2, 2, 1, 1, 1, 1, 0];
/// Points of a 12-bit suit mask.
static SUIT_POINTS: [u8; 4096] = suit_points_table();

const fn suit_points_table() -> [u8; 4096] {
    let mut t = [0u8; 4096];
    let mut m = 0;
    while m < 4096 {
        let mut s = 0u8;
        let mut r = 0;
        while r < 12 {
            if (m >> r) & 1 == 1 {
                s += POINTS[r];
            }
            r += 1;
        }
        t[m] = s;
        m += 1;
    }
    t
}

// ------------------------------------------------------------------ cards

#[inline]
pub(super) fn is_joker(c: u8) -> bool {
    c >= 48
}
/// Comparison strength (§2.1): 5 = 12 … 6 = 1; a Joker counts as 12 (§4.3).
#[inline]
pub fn strength(c: u8) -> u8 {
    if c >= 48 {
        12
    } else {
        12 - c % 12
    }
}
#[inline]
pub(super) fn points(c: u8) -> u8 {
    if c >= 48 {
        0
    } else {
        POINTS[(c % 12) as usize]
    }
}
/// Suit index 0..4, or `NO_TRUMP` for a Joker.
#[inline]
pub fn suit_of(c: u8) -> u8 {
    if c >= 48 {
        NO_TRUMP
    } else {
        c / 12
    }
}
#[inline]
pub(super) fn bit(c: u8) -> u64 {
    1u64 << c
}
/// Points of suit `s` in a set of cards.
#[inline]
pub(super) fn suit_points(mask: u64, s: usize) -> u8 {
    SUIT_POINTS[((mask >> (12 * s)) & 0xfff) as usize]
}
pub(super) fn suit_mask(s: u8) -> u64 {
    if s >= 4 {
        0
    } else {
        0xfffu64 << (12 * s as u32)
    }
}

/// `5H`, `TS`, `X1`.
pub(super) fn card_name(c: u8) -> String {
    match c {
        X1 => "X1".into(),
        X2 => "X2".into(),
        c if c < 48 => {
            let mut s = String::with_capacity(2);
            s.push(RANKS[(c % 12) as usize] as char);
            s.push(SUITS[(c / 12) as usize] as char);
            s
        }
        _ => "--".into(),
    }
}
/// Parses `5H`, `TS`, `10S`, `X1`.
#[cfg(test)]
pub(super) fn parse_card(s: &str) -> Option<u8> {
    let s = s.trim().to_ascii_uppercase();
    match s.as_str() {
        "X1" => return Some(X1),
        "X2" => return Some(X2),
        _ => {}
    }
    let s = s.replace("10", "T");
    let b = s.as_bytes();
    if b.len() != 2 {
        return None;
    }
    let r = RANKS.iter().position(|&x| x == b[0])?;
    let su = SUITS.iter().position(|&x| x == b[1])?;
    Some((su * 12 + r) as u8)
}

/// Cards of a mask in card order; the count is known, so vectors are sized once.
pub(super) struct Cards(u64);

impl Iterator for Cards {
    type Item = u8;
    #[inline]
    fn next(&mut self) -> Option<u8> {
        let c = (self.0 != 0).then(|| self.0.trailing_zeros() as u8)?;
        self.0 &= self.0 - 1;
        Some(c)
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Cards {}

pub(super) fn cards_of(m: u64) -> Cards {
    Cards(m)
}

// ------------------------------------------------------------------ deck sizes (§2.3)

pub(super) fn jokers(n: usize) -> usize {
    match n {
        4 => 2,
        6 => 1,
        _ => 0,
    }
}
pub fn deck_size(n: usize) -> usize {
    48 + jokers(n)
}
pub(super) fn deck_mask(n: usize) -> u64 {
    (1u64 << deck_size(n)) - 1
}
/// Cards per hand (and in the vote pile) on `day` (1 or 2).
pub(super) fn day_size(n: usize, day: u8) -> usize {
    match (n, day) {
        (2, _) => 8,
        (3, _) => 6,
        (4, _) => 5,
        (6, 2) => 3,
        _ => 4,
    }
}
