//! Cards (§2.1) and deck sizes (§2.3): a card is a `u8`, a set of cards a `u64` bitset; and
//! the rules on cards alone: a trick's resolution (§4.3), pile scores, the match check and the
//! deal of a day.

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

// ------------------------------------------------------------------ the rules on cards alone

/// Result of one trick (§4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrickOutcome {
    /// `None` on a tie.
    pub winner: Option<u8>,
    pub(super) trump_trick: bool,
    pub(super) five_six: bool,
}

/// Strength by card id (Jokers 12).
static STRENGTH: [u8; 50] = {
    let mut t = [12u8; 50];
    let mut c = 0;
    while c < 48 {
        t[c] = 12 - (c % 12) as u8;
        c += 1;
    }
    t
};

/// Resolves a trick: `played[i]` is seat i's card, `trump` a suit 0..4 or `NO_TRUMP`.
/// The vote card never competes (AMB1). Written without data-dependent branches in the
/// loops: a trump's key is its strength + 16, so any trump outranks every non-trump.
#[inline]
pub fn resolve_trick(played: &[u8], trump: u8) -> TrickOutcome {
    let base = if trump < 4 { trump * 12 } else { 200 };
    let mut keys = [0u8; MAX_SEATS];
    let mut five = false;
    let mut six = NOBODY;
    for (i, &c) in played.iter().enumerate().take(MAX_SEATS) {
        let r = c.wrapping_sub(base);
        let t = r < 12;
        keys[i] = STRENGTH[(c as usize).min(49)] + ((t as u8) << 4);
        five |= t & (r == 0);
        six = if t & (r == 11) { i as u8 } else { six };
    }
    if five & (six != NOBODY) {
        return TrickOutcome {
            winner: Some(six),
            trump_trick: true,
            five_six: true,
        };
    }
    let (mut best, mut who, mut count) = (0u8, 0u8, 0u8);
    for (i, &k) in keys[..played.len().min(MAX_SEATS)].iter().enumerate() {
        let gt = k > best;
        count = if gt { 1 } else { count + (k == best) as u8 };
        who = if gt { i as u8 } else { who };
        best = best.max(k);
    }
    let trump_trick = best >= 16;
    TrickOutcome {
        winner: if trump_trick || count == 1 {
            Some(who)
        } else {
            None
        },
        trump_trick,
        five_six: false,
    }
}

/// Per-suit points and tribes gained for each captured pile (§6.1).
#[cfg(test)]
pub(super) fn score_piles(captured: &[u64]) -> Vec<([u8; 4], u8)> {
    captured.iter().map(|&m| score_pile(m)).collect()
}

/// Per-suit points and tribes gained for one captured pile (§6.1).
#[inline]
pub(super) fn score_pile(m: u64) -> ([u8; 4], u8) {
    let p = [
        suit_points(m, 0),
        suit_points(m, 1),
        suit_points(m, 2),
        suit_points(m, 3),
    ];
    let g = p.iter().filter(|&&x| x >= 13).count() as u8;
    (p, g)
}

/// What the match check (§6.2) decides after a deal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MatchCheck {
    Winner(u8),
    Continue,
    /// Administrative cap reached (AMB17).
    Cap,
}

pub(super) fn match_check(tribes: &[u32], target: u32, deal_no: u32, max_deals: u32) -> MatchCheck {
    let m = tribes.iter().copied().max().unwrap_or(0);
    if m >= target {
        let mut at = tribes.iter().enumerate().filter(|(_, &t)| t == m);
        if let (Some((w, _)), None) = (at.next(), at.next()) {
            return MatchCheck::Winner(w as u8);
        }
    }
    if deal_no >= max_deals {
        MatchCheck::Cap
    } else {
        MatchCheck::Continue
    }
}

/// The canonical deal of one day (§3.4, AMB4) from the top of `stock`: returns the hands and
/// the vote pile (bottom to top). `stock` must hold at least `(n+1)*h` cards.
pub(super) fn deal_day(
    stock: &[u8],
    n: usize,
    dealer: usize,
    h: usize,
) -> ([u64; MAX_SEATS], [u8; 8]) {
    // Seats in dealing order, starting left of the dealer (no division per card).
    let mut order = [0usize; MAX_SEATS];
    for (r, o) in order.iter_mut().enumerate().take(n) {
        *o = (dealer + 1 + r) % n;
    }
    let mut hands = [0u64; MAX_SEATS];
    let mut vote = [NO_CARD; 8];
    for (v, round) in vote.iter_mut().zip(stock.chunks_exact(n + 1)).take(h) {
        for (&seat, &c) in order[..n].iter().zip(round) {
            hands[seat] |= bit(c);
        }
        *v = round[n];
    }
    (hands, vote)
}
