//! Démocratie (Democracy): trick taking with a face-down vote pile that sets a fresh trump
//! every trick, and sealed simultaneous play. Rules: `docs/rules/democratie.md`
//! (seed `004_9aab9d3ed6662a33`); section numbers below refer to that document.
//!
//! # Representation
//! A card is a `u8`: `12 * suit + rank_index` for the 48 suit cards (suits C, D, H, S; rank
//! index 0..12 for 5, 4, 3, A, K, Q, J, T, 9, 8, 7, 6, strongest first), 48 and 49 for the
//! Jokers `X1`/`X2`. The protobuf `Card` code is that number plus one, so the unshuffled deck
//! of TV2 is simply `0..deck_size`. Every unordered zone (hands, captured piles, discard) is
//! a `u64` bitset; the ordered zones (stock, vote pile) are small arrays. The whole state is
//! `Copy` and a few hundred bytes.
//!
//! # Events
//! A player only ever commits a card; every other step is automatic and is produced by the
//! same command: the last commit of a trick yields `CardCommitted`, `TrickRevealed`,
//! `TrickResolved`, then `VoteCardFlipped` for the next trick, or `DayDealt` (day 2), or
//! `DealScored` followed by `MatchEnded` or a new `DeckShuffled` + `DayDealt` +
//! `VoteCardFlipped` (the shuffle is drawn from the command's RNG and written in the event).
//! `evolve` recomputes every automatic result and refuses (`Corrupt`) an event that disagrees.
//!
//! # Hidden information (§7)
//! * `CardCommitted` for anyone but the owner (and the auditor) is `{seat}` with the card unset:
//!   the same bytes whatever the card. Errors for a card the seat does not hold are always
//!   `CARD_NOT_IN_HAND` with one fixed message, whoever holds it (AMB16).
//! * `DeckShuffled` hides the order (players get the deck size); `DayDealt` shows each seat
//!   its own hand and only counts of the others and of the vote pile.
//! * Hands are shown sorted in card order, so they never reveal the deal order. Card ids are
//!   the card faces themselves (no positional ids), so nothing needs re-randomising.
//! * Captured piles are counts only until `DealScored` reveals them all (AMB6, AMB15).
//!
//! # Decisions not in the spec (same style as §8)
//! * **AMB17: Administrative cap.** AMB7 can, with probability zero, go on forever. Option
//!   `max_deals` (default 200) ends the match after that many deals without a decided winner,
//!   as `MatchEnded{aborted: true, reason: "DEAL_CAP"}`; no winners. Not a rule result.
//! * **AMB18: Seat that already committed.** It is not awaited; its requests get
//!   `ALREADY_COMMITTED` (AMB16 order), never `NOT_YOUR_TURN`. Requests in any phase other
//!   than TRICK_COMMIT get `WRONG_PHASE`. A seat number outside the match or a card code
//!   outside the `Card` enum is `Malformed`. A Joker code in a match without that Joker is
//!   simply `CARD_NOT_IN_HAND`.
//! * **AMB19: Phases between commands.** All system steps run inside the command that
//!   triggers them, so between commands the match is in TRICK_COMMIT or MATCH_END. The other
//!   phases of §4.1 exist while events are replayed one by one (and are checked there).
//! * **AMB20: Heuristic bot memory.** The `tactician` bot may use the cards revealed earlier
//!   in the deal (the union of all captured piles and the discard), since every such card
//!   was broadcast to all; it never looks at who holds what now.

use crate::error::{ensure, CoreError, CoreResult};
use crate::game::{Game, OptionSpec, OptionValues, Seat, Seats, Viewer};
use crate::games::inline_cards::{inline_message, InlineCards};
use crate::proto::democratie as pb;
use crate::proto::Outcome;
use crate::rng::Rng;

pub const MAX_SEATS: usize = 6;
/// No card in a slot (commit, vote card).
pub const NO_CARD: u8 = 255;
pub const X1: u8 = 48;
pub const X2: u8 = 49;
/// `trump` value for a trick without trump (Joker vote card).
pub const NO_TRUMP: u8 = 4;
/// `trump` value while no vote card is face up.
pub const TRUMP_UNSET: u8 = 5;
const NOBODY: u8 = 255;

const RANKS: &[u8; 12] = b"543AKQJT9876";
const SUITS: &[u8; 4] = b"CDHS";
/// Card points by rank index (§2.1).
pub const POINTS: [u8; 12] = [5, 4, 3, 3, 2, 2, 2, 1, 1, 1, 1, 0];
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
pub fn is_joker(c: u8) -> bool {
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
pub fn points(c: u8) -> u8 {
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
fn bit(c: u8) -> u64 {
    1u64 << c
}
/// Points of suit `s` in a set of cards.
#[inline]
pub fn suit_points(mask: u64, s: usize) -> u8 {
    SUIT_POINTS[((mask >> (12 * s)) & 0xfff) as usize]
}
pub fn suit_mask(s: u8) -> u64 {
    if s >= 4 {
        0
    } else {
        0xfffu64 << (12 * s as u32)
    }
}

/// `5H`, `TS`, `X1`.
pub fn card_name(c: u8) -> String {
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
pub fn parse_card(s: &str) -> Option<u8> {
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

#[inline]
pub fn to_pb(c: u8) -> i32 {
    if c == NO_CARD {
        0
    } else {
        c as i32 + 1
    }
}
#[inline]
pub fn from_pb(code: i32) -> Option<u8> {
    if (1..=50).contains(&code) {
        Some((code - 1) as u8)
    } else {
        None
    }
}
fn trump_pb(t: u8) -> i32 {
    match t {
        0..=3 => t as i32 + 1,
        NO_TRUMP => pb::Suit::None as i32,
        _ => pb::Suit::Unspecified as i32,
    }
}

/// Cards of a mask in card order; the count is known, so vectors are sized once.
struct Cards(u64);

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

fn cards_of(m: u64) -> Cards {
    Cards(m)
}
fn mask_to_pb(m: u64) -> Vec<i32> {
    cards_of(m).map(to_pb).collect()
}
/// A list of protobuf cards as a set: `None` if a code is invalid or repeated.
fn pb_to_mask(cards: &[i32]) -> Option<u64> {
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

// ------------------------------------------------------------------ deck sizes (§2.3)

pub fn jokers(n: usize) -> usize {
    match n {
        4 => 2,
        6 => 1,
        _ => 0,
    }
}
pub fn deck_size(n: usize) -> usize {
    48 + jokers(n)
}
pub fn deck_mask(n: usize) -> u64 {
    (1u64 << deck_size(n)) - 1
}
/// Cards per hand (and in the vote pile) on `day` (1 or 2).
pub fn day_size(n: usize, day: u8) -> usize {
    match (n, day) {
        (2, _) => 8,
        (3, _) => 6,
        (4, _) => 5,
        (6, 2) => 3,
        _ => 4,
    }
}

// ------------------------------------------------------------------ rules

/// Result of one trick (§4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrickOutcome {
    /// `None` on a tie.
    pub winner: Option<u8>,
    pub trump_trick: bool,
    pub five_six: bool,
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
        return TrickOutcome { winner: Some(six), trump_trick: true, five_six: true };
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
        winner: if trump_trick || count == 1 { Some(who) } else { None },
        trump_trick,
        five_six: false,
    }
}

/// Per-suit points and tribes gained for each captured pile (§6.1).
pub fn score_piles(captured: &[u64]) -> Vec<([u8; 4], u8)> {
    captured.iter().map(|&m| score_pile(m)).collect()
}

/// Per-suit points and tribes gained for one captured pile (§6.1).
#[inline]
fn score_pile(m: u64) -> ([u8; 4], u8) {
    let p = [suit_points(m, 0), suit_points(m, 1), suit_points(m, 2), suit_points(m, 3)];
    let g = p.iter().filter(|&&x| x >= 13).count() as u8;
    (p, g)
}

/// What the match check (§6.2) decides after a deal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchCheck {
    Winner(u8),
    Continue,
    /// Administrative cap reached (AMB17).
    Cap,
}

pub fn match_check(tribes: &[u32], target: u32, deal_no: u32, max_deals: u32) -> MatchCheck {
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
pub fn deal_day(stock: &[u8], n: usize, dealer: usize, h: usize) -> ([u64; MAX_SEATS], [u8; 8]) {
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

// ------------------------------------------------------------------ config and state

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub seats: u8,
    pub target: u32,
    pub max_deals: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastTrick {
    pub day: u8,
    pub trick_no: u8,
    pub vote: u8,
    pub trump: u8,
    pub played: [u8; MAX_SEATS],
    /// `NOBODY` on a tie.
    pub winner: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    pub cfg: Config,
    pub phase: pb::Phase,
    pub dealer: u8,
    pub deal_no: u32,
    pub day: u8,
    pub trick_no: u8,
    /// Undealt cards: `stock[stock_pos..stock_end]`, top first.
    pub stock: [u8; 50],
    pub stock_pos: u8,
    pub stock_end: u8,
    /// Vote pile bottom to top: `vote_pile[..vote_len]`.
    pub vote_pile: [u8; 8],
    pub vote_len: u8,
    pub vote_card: u8,
    pub trump: u8,
    pub hands: [u64; MAX_SEATS],
    pub commits: [u8; MAX_SEATS],
    pub captured: [u64; MAX_SEATS],
    pub discard: u64,
    pub tribes: [u32; MAX_SEATS],
    pub last_trick: Option<LastTrick>,
    pub winner: u8,
    pub aborted: bool,
    /// The winners (a seat mask) when a timed-out seat forfeited (match clocks, §11), else 0.
    pub forfeit_winners: u8,
}

impl State {
    pub fn n(&self) -> usize {
        self.cfg.seats as usize
    }
    /// The table after `day_dealt`: `h` cards to every seat and to the vote pile.
    fn day_dealt(&mut self, day: u8, h: usize, hands: [u64; MAX_SEATS], vote: [u8; 8]) {
        self.hands = hands;
        self.vote_pile = vote;
        self.vote_len = h as u8;
        self.stock_pos += ((self.n() + 1) * h) as u8;
        self.day = day;
        self.trick_no = 1;
        self.phase = pb::Phase::TrickFlip;
    }
    fn stock_slice(&self) -> &[u8] {
        &self.stock[self.stock_pos as usize..self.stock_end as usize]
    }
    fn all_committed(&self) -> bool {
        self.commits[..self.n()].iter().all(|&c| c != NO_CARD)
    }
    /// Cards every seat has seen revealed in this deal (AMB20).
    pub fn revealed_this_deal(&self) -> u64 {
        self.captured[..self.n()].iter().fold(self.discard, |a, &m| a | m)
    }
}


// ------------------------------------------------------------------ events

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

fn ev(kind: pb::event::Kind) -> pb::Event {
    pb::Event { kind: Some(kind) }
}

/// Applies one event. With `CHECK` every recorded result is recomputed and compared (stored
/// events, `evolve`). Without it the comparisons are skipped: that is for the scratch state
/// inside `decide`/`start`, whose events were built from that very state one line earlier, so
/// checking them there only doubled the cost of every command; the caller's `evolve` still
/// checks them.
fn evolve_state<const CHECK: bool>(st: &mut State, event: &pb::Event) -> CoreResult<()> {
    use pb::event::Kind as K;
    use pb::Phase as P;
    let n = st.n();
    let Some(kind) = &event.kind else { return Err(CoreError::corrupt("event without kind")) };
    match kind {
        K::MatchStarted(e) => {
            ensure(!CHECK || st.phase == P::MatchSetup, "match_started after the start")?;
            ensure(!CHECK || e.seats as usize == n && e.target == st.cfg.target && e.max_deals == st.cfg.max_deals,
                "match_started does not match the configuration")?;
            ensure(!CHECK || (e.first_dealer as usize) < n, "first dealer out of range")?;
            st.dealer = e.first_dealer as u8;
            st.deal_no = 0;
            st.phase = P::DealSetup;
        }
        K::DeckShuffled(e) => {
            let dealer = match st.phase {
                P::DealSetup => st.dealer,
                P::MatchCheck => {
                    ensure(!CHECK || match_check(&st.tribes[..n], st.cfg.target, st.deal_no, st.cfg.max_deals) == MatchCheck::Continue,
                        "deck_shuffled after a decided match")?;
                    ((st.dealer as usize + 1) % n) as u8
                }
                _ => return Err(CoreError::corrupt("deck_shuffled in the wrong phase")),
            };
            ensure(!CHECK || e.dealer == dealer as u32, "deck_shuffled with the wrong dealer")?;
            ensure(!CHECK || e.deal_no == st.deal_no + 1, "deck_shuffled with the wrong deal number")?;
            let size = deck_size(n);
            ensure(!CHECK || e.deck_size as usize == size && e.deck.len() == size, "deck_shuffled with a wrong deck size")?;
            ensure(!CHECK || pb_to_mask(&e.deck) == Some(deck_mask(n)), "deck_shuffled is not a permutation of the deck")?;
            // The event lists the deck bottom first; the stock is kept top first.
            for (i, &code) in e.deck.iter().rev().enumerate() {
                st.stock[i] = (code - 1) as u8;
            }
            st.stock_pos = 0;
            st.stock_end = size as u8;
            st.dealer = dealer;
            st.deal_no = e.deal_no;
            st.day = 1;
            st.trick_no = 0;
            st.vote_len = 0;
            st.vote_card = NO_CARD;
            st.trump = TRUMP_UNSET;
            st.hands = [0; MAX_SEATS];
            st.commits = [NO_CARD; MAX_SEATS];
            st.captured = [0; MAX_SEATS];
            st.discard = 0;
            st.last_trick = None;
            st.phase = P::DayDeal;
        }
        K::DayDealt(e) => {
            let day = match st.phase {
                P::DayDeal => 1,
                P::DayEnd if st.day == 1 => 2,
                _ => return Err(CoreError::corrupt("day_dealt in the wrong phase")),
            };
            ensure(!CHECK || e.day == day as u32 && e.deal_no == st.deal_no && e.dealer == st.dealer as u32,
                "day_dealt with the wrong day, deal or dealer")?;
            let h = day_size(n, day);
            let need = (n + 1) * h;
            let stock = st.stock_slice();
            ensure(!CHECK || stock.len() >= need, "day_dealt with too few cards in stock")?;
            let (hands, vote) = deal_day(stock, n, st.dealer as usize, h);
            ensure(!CHECK || e.hands.len() == n, "day_dealt with the wrong number of hands")?;
            for (i, hand) in e.hands.iter().enumerate() {
                ensure(!CHECK || hand.seat as usize == i && hand.count as usize == h, "day_dealt hand header")?;
                ensure(!CHECK || pb_to_mask(&hand.cards) == Some(hands[i]) && hand.cards.len() == h, "day_dealt hand differs from the stock")?;
            }
            ensure(!CHECK || e.vote_pile_count as usize == h && e.vote_pile.len() == h, "day_dealt vote pile size")?;
            ensure(!CHECK || e.vote_pile.iter().zip(&vote[..h]).all(|(&p, &c)| p == to_pb(c)), "day_dealt vote pile differs")?;
            ensure(!CHECK || e.stock_left as usize == stock.len() - need, "day_dealt stock count")?;
            st.day_dealt(day, h, hands, vote);
        }
        K::VoteCardFlipped(e) => {
            ensure(!CHECK || st.phase == P::TrickFlip && st.vote_len > 0, "vote_card_flipped in the wrong phase")?;
            let top = st.vote_pile[st.vote_len as usize - 1];
            ensure(!CHECK || e.card == to_pb(top), "vote_card_flipped is not the top of the vote pile")?;
            ensure(!CHECK || e.trump == trump_pb(suit_of(top)), "vote_card_flipped with the wrong trump")?;
            ensure(!CHECK || e.day == st.day as u32 && e.trick_no == st.trick_no as u32 && e.vote_pile_left + 1 == st.vote_len as u32,
                "vote_card_flipped counters")?;
            st.vote_len -= 1;
            st.vote_card = top;
            st.trump = suit_of(top);
            st.commits = [NO_CARD; MAX_SEATS];
            st.phase = P::TrickCommit;
        }
        K::CardCommitted(e) => {
            ensure(!CHECK || st.phase == P::TrickCommit, "card_committed in the wrong phase")?;
            let s = e.seat as usize;
            ensure(!CHECK || s < n, "card_committed seat out of range")?;
            let c = from_pb(e.card).ok_or_else(|| CoreError::corrupt("card_committed without a card"))?;
            ensure(!CHECK || st.commits[s] == NO_CARD, "card_committed twice")?;
            ensure(!CHECK || st.hands[s] & bit(c) != 0, "card_committed card not in hand")?;
            st.hands[s] &= !bit(c);
            st.commits[s] = c;
            if st.all_committed() {
                st.phase = P::TrickReveal;
            }
        }
        K::TrickRevealed(e) => {
            ensure(!CHECK || st.phase == P::TrickReveal, "trick_revealed in the wrong phase")?;
            ensure(!CHECK || e.day == st.day as u32 && e.trick_no == st.trick_no as u32, "trick_revealed counters")?;
            ensure(!CHECK || e.vote_card == to_pb(st.vote_card) && e.trump == trump_pb(st.trump), "trick_revealed vote card")?;
            ensure(!CHECK || e.played.len() == n && e.played.iter().zip(&st.commits[..n]).all(|(&p, &c)| p == to_pb(c)),
                "trick_revealed cards differ from the commits")?;
            st.phase = P::TrickResolve;
        }
        K::TrickResolved(e) => {
            ensure(!CHECK || st.phase == P::TrickResolve, "trick_resolved in the wrong phase")?;
            ensure(!CHECK || e.day == st.day as u32 && e.trick_no == st.trick_no as u32 && e.vote_card == to_pb(st.vote_card),
                "trick_resolved counters")?;
            // Unchecked, the event was built from this very resolution one step earlier.
            let result = if CHECK {
                let out = resolve_trick(&st.commits[..n], st.trump);
                ensure(e.tie == out.winner.is_none() && e.trump_trick == out.trump_trick && e.five_six_rule == out.five_six,
                    "trick_resolved result differs")?;
                ensure(out.winner.is_none_or(|w| e.winner == w as u32), "trick_resolved winner differs")?;
                out.winner
            } else {
                (!e.tie).then_some(e.winner as u8)
            };
            let mut winner = NOBODY;
            match result {
                Some(w) => {
                    let all = st.commits[..n].iter().fold(bit(st.vote_card), |a, &c| a | bit(c));
                    st.captured[w as usize] |= all;
                    winner = w;
                }
                None => {
                    ensure(!CHECK || e.winner == 0, "trick_resolved tie with a winner")?;
                    for i in 0..n {
                        st.captured[i] |= bit(st.commits[i]);
                    }
                    st.discard |= bit(st.vote_card);
                }
            }
            st.last_trick = Some(LastTrick {
                day: st.day,
                trick_no: st.trick_no,
                vote: st.vote_card,
                trump: st.trump,
                played: st.commits,
                winner,
            });
            st.commits = [NO_CARD; MAX_SEATS];
            st.vote_card = NO_CARD;
            st.trump = TRUMP_UNSET;
            if st.vote_len > 0 {
                st.trick_no += 1;
                st.phase = P::TrickFlip;
            } else if st.day == 1 {
                st.phase = P::DayEnd;
            } else {
                st.phase = P::DealScoring;
            }
        }
        K::DealScored(e) => {
            ensure(!CHECK || st.phase == P::DealScoring, "deal_scored in the wrong phase")?;
            ensure(!CHECK || e.deal_no == st.deal_no && e.seats.len() == n, "deal_scored header")?;
            ensure(!CHECK || pb_to_mask(&e.discard) == Some(st.discard), "deal_scored discard differs")?;
            let mut gained = [0u8; MAX_SEATS];
            for (i, s) in e.seats.iter().enumerate() {
                let (p, g) = score_pile(st.captured[i]);
                ensure(!CHECK || s.seat as usize == i && pb_to_mask(&s.captured) == Some(st.captured[i]), "deal_scored pile differs")?;
                ensure(!CHECK || s.points.len() == 4 && s.points.iter().zip(p).all(|(&a, b)| a == b as u32), "deal_scored points differ")?;
                ensure(!CHECK || s.tribes_gained == g as u32 && s.tribes_total == st.tribes[i] + g as u32, "deal_scored tribes differ")?;
                gained[i] = g;
            }
            for (t, g) in st.tribes.iter_mut().zip(gained) {
                *t += g as u32;
            }
            st.phase = P::MatchCheck;
        }
        K::MatchEnded(e) if e.reason == REASON_FORFEIT => {
            // A seat awaited for its commit forfeited (§11): the best of the others win.
            ensure(st.phase == P::TrickCommit && !e.aborted, "a forfeit while no commit is awaited")?;
            ensure(e.tribes.len() == n && e.tribes.iter().zip(&st.tribes[..n]).all(|(a, b)| a == b), "match_ended tribes differ")?;
            let won = e.winners.iter().try_fold(0u8, |m, &w| if (w as usize) < n { Some(m | 1 << w) } else { None });
            let fits = |f: usize| st.commits[f] == NO_CARD && won == Some(forfeit_winners(st, f));
            ensure((0..n).any(fits), "match_ended winners do not follow a forfeit")?;
            st.forfeit_winners = won.unwrap_or(0);
            st.phase = P::MatchEnd;
        }
        K::MatchEnded(e) => {
            ensure(!CHECK || st.phase == P::MatchCheck, "match_ended in the wrong phase")?;
            ensure(!CHECK || e.tribes.len() == n && e.tribes.iter().zip(&st.tribes[..n]).all(|(a, b)| a == b), "match_ended tribes differ")?;
            match match_check(&st.tribes[..n], st.cfg.target, st.deal_no, st.cfg.max_deals) {
                MatchCheck::Winner(w) => {
                    ensure(!CHECK || e.winners == [w as u32] && !e.aborted && e.reason == "TARGET_REACHED", "match_ended winner differs")?;
                    st.winner = w;
                }
                MatchCheck::Cap => {
                    ensure(!CHECK || e.winners.is_empty() && e.aborted && e.reason == "DEAL_CAP", "match_ended cap differs")?;
                    st.aborted = true;
                }
                MatchCheck::Continue => return Err(CoreError::corrupt("match_ended while the match goes on")),
            }
            st.phase = P::MatchEnd;
        }
    }
    Ok(())
}

/// Applies an event this module just built (an error here is a bug, reported as `Corrupt`).
fn emit(st: &mut State, out: &mut Vec<pb::Event>, e: pb::Event) -> CoreResult<()> {
    evolve_state::<false>(st, &e)?;
    out.push(e);
    Ok(())
}

/// Runs every automatic step until players are awaited or the match is over.
fn run_automatic(st: &mut State, out: &mut Vec<pb::Event>, rng: &mut Rng) -> CoreResult<()> {
    use pb::event::Kind as K;
    use pb::Phase as P;
    let n = st.n();
    loop {
        match st.phase {
            P::TrickCommit | P::MatchEnd | P::MatchSetup | P::Unspecified => return Ok(()),
            P::DealSetup => shuffle(st, out, rng, st.dealer)?,
            P::MatchCheck => check_match(st, out, rng)?,
            P::DayDeal | P::DayEnd => deal_day_event(st, out)?,
            P::DealScoring => score_deal(st, out)?,
            P::TrickFlip => {
                let top = st.vote_pile[(st.vote_len as usize).saturating_sub(1)];
                let e = pb::VoteCardFlipped {
                    day: st.day as u32,
                    trick_no: st.trick_no as u32,
                    card: to_pb(top),
                    trump: trump_pb(suit_of(top)),
                    vote_pile_left: st.vote_len.saturating_sub(1) as u32,
                };
                emit(st, out, ev(K::VoteCardFlipped(e)))?
            }
            P::TrickReveal => {
                let e = TrickRevealed {
                    day: st.day as u32,
                    trick_no: st.trick_no as u32,
                    vote_card: to_pb(st.vote_card),
                    trump: trump_pb(st.trump),
                    played: st.commits[..n].iter().map(|&c| to_pb(c)).collect(),
                };
                emit(st, out, ev(K::TrickRevealed(e)))?
            }
            P::TrickResolve => {
                let o = resolve_trick(&st.commits[..n], st.trump);
                let e = pb::TrickResolved {
                    day: st.day as u32,
                    trick_no: st.trick_no as u32,
                    tie: o.winner.is_none(),
                    winner: o.winner.unwrap_or(0) as u32,
                    vote_card: to_pb(st.vote_card),
                    trump_trick: o.trump_trick,
                    five_six_rule: o.five_six,
                };
                emit(st, out, ev(K::TrickResolved(e)))?
            }
        }
    }
}

// The once-a-deal steps stay out of `run_automatic`, whose loop runs after every trick.

/// MATCH_CHECK: the next deal, or the end of the match.
#[inline(never)]
fn check_match(st: &mut State, out: &mut Vec<pb::Event>, rng: &mut Rng) -> CoreResult<()> {
    use pb::event::Kind as K;
    let n = st.n();
    match match_check(&st.tribes[..n], st.cfg.target, st.deal_no, st.cfg.max_deals) {
        MatchCheck::Continue => shuffle(st, out, rng, ((st.dealer as usize + 1) % n) as u8),
        MatchCheck::Winner(w) => emit(st, out, ev(K::MatchEnded(pb::MatchEnded {
            winners: vec![w as u32],
            tribes: st.tribes[..n].to_vec(),
            aborted: false,
            reason: "TARGET_REACHED".into(),
        }))),
        MatchCheck::Cap => emit(st, out, ev(K::MatchEnded(pb::MatchEnded {
            winners: vec![],
            tribes: st.tribes[..n].to_vec(),
            aborted: true,
            reason: "DEAL_CAP".into(),
        }))),
    }
}

/// DAY_DEAL / DAY_END: deals the next day.
#[inline(never)]
fn deal_day_event(st: &mut State, out: &mut Vec<pb::Event>) -> CoreResult<()> {
    let n = st.n();
    let day = if st.phase == pb::Phase::DayDeal { 1 } else { 2 };
    let h = day_size(n, day);
    let stock = st.stock_slice();
    if stock.len() < (n + 1) * h {
        return Err(CoreError::corrupt("stock too small to deal"));
    }
    let (hands, vote) = deal_day(stock, n, st.dealer as usize, h);
    let e = pb::DayDealt {
        deal_no: st.deal_no,
        day: day as u32,
        dealer: st.dealer as u32,
        hands: (0..n)
            .map(|i| pb::DealtHand { seat: i as u32, count: h as u32, cards: mask_to_pb(hands[i]) })
            .collect(),
        vote_pile_count: h as u32,
        vote_pile: vote[..h].iter().map(|&c| to_pb(c)).collect(),
        stock_left: (stock.len() - (n + 1) * h) as u32,
    };
    // The table is set from the deal just computed rather than by dealing again while applying
    // the event (the conformance harness checks both agree).
    st.day_dealt(day, h, hands, vote);
    out.push(ev(pb::event::Kind::DayDealt(e)));
    Ok(())
}

/// DEAL_SCORING: every captured pile is shown and tribes are awarded.
#[inline(never)]
fn score_deal(st: &mut State, out: &mut Vec<pb::Event>) -> CoreResult<()> {
    let e = pb::DealScored {
        deal_no: st.deal_no,
        seats: (0..st.n())
            .map(|i| {
                let (points, gained) = score_pile(st.captured[i]);
                pb::SeatScore {
                    seat: i as u32,
                    captured: mask_to_pb(st.captured[i]),
                    points: points.iter().map(|&p| p as u32).collect(),
                    tribes_gained: gained as u32,
                    tribes_total: st.tribes[i] + gained as u32,
                }
            })
            .collect(),
        discard: mask_to_pb(st.discard),
    };
    emit(st, out, ev(pb::event::Kind::DealScored(e)))
}

fn shuffle(st: &mut State, out: &mut Vec<pb::Event>, rng: &mut Rng, dealer: u8) -> CoreResult<()> {
    let size = deck_size(st.n());
    // On the stack: the same Fisher-Yates draws as before, without a heap vector.
    let mut all = [0u8; 50];
    for (i, c) in all.iter_mut().enumerate() {
        *c = i as u8;
    }
    let deck = &mut all[..size];
    rng.shuffle(deck);
    let e = pb::DeckShuffled {
        deal_no: st.deal_no + 1,
        dealer: dealer as u32,
        deck_size: size as u32,
        // Bottom first: the first card dealt last.
        deck: deck.iter().rev().map(|&c| to_pb(c)).collect(),
    };
    emit(st, out, ev(pb::event::Kind::DeckShuffled(e)))
}

// ------------------------------------------------------------------ action checks

const NOT_IN_HAND: &str = "that card is not in your hand";

/// Validates a commit (AMB16 order) and returns the card.
fn check_commit(st: &State, seat: Seat, action: &pb::Action) -> CoreResult<u8> {
    let n = st.n();
    if seat as usize >= n {
        return Err(CoreError::malformed(format!("seat {seat} is not in this {n}-seat match")));
    }
    let Some(pb::action::Kind::CommitCard(cc)) = &action.kind else {
        return Err(CoreError::malformed("action has no kind (expected commit_card)"));
    };
    let Some(card) = from_pb(cc.card) else {
        return Err(CoreError::malformed(format!("card code {} is not a card", cc.card)));
    };
    if st.phase != pb::Phase::TrickCommit {
        return Err(CoreError::rule("WRONG_PHASE", "cards can be committed only while a trick is waiting for cards"));
    }
    let s = seat as usize;
    if st.commits[s] != NO_CARD {
        return Err(CoreError::rule("ALREADY_COMMITTED", "you have already committed a card for this trick; a commit is final"));
    }
    if st.hands[s] & bit(card) == 0 {
        return Err(CoreError::rule("CARD_NOT_IN_HAND", NOT_IN_HAND));
    }
    Ok(card)
}

fn commit_action(c: u8) -> pb::Action {
    pb::Action { kind: Some(pb::action::Kind::CommitCard(pb::CommitCard { card: to_pb(c) })) }
}

// ------------------------------------------------------------------ match clocks

/// The timeout policy `weakest_card` (match clocks, docs/rules/democratie.md §11).
const TIMEOUT_WEAKEST_CARD: &str = "weakest_card";
/// The timeout policy `forfeit`, and the reason of the match end it records (§11).
const TIMEOUT_FORFEIT: &str = "forfeit";
const REASON_FORFEIT: &str = "FORFEIT";

/// The winners (a seat mask) when `seat` forfeits (§11): the highest tribe total among the
/// other seats (§6.2). The tie-break of §6.2 plays further deals, which a forfeit ends: tied
/// seats share the win.
fn forfeit_winners(st: &State, seat: usize) -> u8 {
    let others = (0..st.n()).filter(|&s| s != seat);
    let best = others.clone().map(|s| st.tribes[s]).max().unwrap_or(0);
    others.filter(|&s| st.tribes[s] == best).fold(0u8, |m, s| m | 1 << s)
}

/// The seats that won the match: the one of §6.2, or those of a forfeit (§11).
fn match_winners(st: &State) -> Vec<u32> {
    if st.forfeit_winners != 0 {
        return (0..st.n() as u32).filter(|w| st.forfeit_winners >> w & 1 == 1).collect();
    }
    if st.winner == NOBODY { vec![] } else { vec![st.winner as u32] }
}

/// The card a timed-out seat commits (§11): the least committal of its hand, the one least
/// able to win the trick (lowest strength, §2.1, a Joker counting as a 5, §4.3) and worth the
/// fewest points to whoever captures it (§6.1); then the lowest card code.
pub fn weakest_card(hand: u64) -> Option<u8> {
    cards_of(hand).min_by_key(|&c| (strength(c), points(c), c))
}

// ------------------------------------------------------------------ bots

/// The `tactician` bot: fights for valuable vote cards with its best winning chance and
/// dumps cheap cards otherwise. Uses the seat's hand, the face-up vote card and the cards
/// revealed earlier in the deal (AMB20).
pub fn tactician_card(st: &State, seat: usize) -> Option<u8> {
    let hand = st.hands[seat];
    if hand == 0 || st.commits[seat] != NO_CARD {
        return None;
    }
    let n = st.n();
    let trump = st.trump;
    let vote = st.vote_card;
    let known = hand | st.revealed_this_deal() | if vote == NO_CARD { 0 } else { bit(vote) };
    let unknown = deck_mask(n) & !known;
    let prize = if vote == NO_CARD { 0 } else { points(vote) } as i32;
    let my_trumps = hand & suit_mask(trump);
    let unknown_trumps = unknown & suit_mask(trump);
    // Is card c sure to win (considering only what this seat knows)?
    let sure = |c: u8| -> bool {
        if trump < 4 && suit_of(c) == trump {
            let r = c % 12;
            let six = bit(trump * 12 + 11);
            let five = bit(trump * 12);
            if r == 11 {
                // the 6 of trump wins if no other trump, or if the 5 is played; conservative
                unknown_trumps == 0
            } else {
                let higher = cards_of(unknown_trumps).any(|u| u % 12 < r);
                let six_threat = r == 0 && unknown & six != 0;
                let _ = five;
                !higher && !six_threat
            }
        } else {
            unknown_trumps == 0
                && cards_of(unknown).all(|u| (trump < 4 && suit_of(u) == trump) || strength(u) < strength(c))
        }
    };
    let pot = prize + cards_of(hand).map(|c| points(c) as i32).sum::<i32>() / (hand.count_ones() as i32).max(1);
    // Cheapest card to lose: low points, low strength; Jokers and trumps are kept.
    let dump_cost = |c: u8| -> i32 {
        let keep = if is_joker(c) { 40 } else if trump < 4 && suit_of(c) == trump { 8 } else { 0 };
        points(c) as i32 * 10 + strength(c) as i32 + keep
    };
    if pot >= 3 {
        // Fight: the cheapest sure winner, else the strongest trump, else the strongest card.
        if let Some(c) = cards_of(hand).filter(|&c| sure(c)).min_by_key(|&c| (points(c), strength(c))) {
            return Some(c);
        }
        if my_trumps != 0 {
            // With both 5 and 6 of trump in hand the 5 cannot lose to the 6.
            return cards_of(my_trumps).max_by_key(|&c| strength(c));
        }
        let best = cards_of(hand).max_by_key(|&c| (strength(c), std::cmp::Reverse(points(c))))?;
        if strength(best) >= 10 && unknown_trumps.count_ones() <= 2 {
            return Some(best);
        }
    }
    cards_of(hand).min_by_key(|&c| dump_cost(c))
}

// ------------------------------------------------------------------ fast simulation

/// Several uniform indices from one 64-bit draw ("batched ranged random integers",
/// Brackett-Rozinsky & Lemire 2024): `out[k]` is uniform in `0..bounds[k]`, all independent.
/// Multiplying the leftover low word by each bound in turn is exactly one Lemire draw below
/// the product of the bounds written in mixed radix, so the product's rejection test makes
/// it exact. The product must fit in a `u64`.
pub fn batched_indices(rng: &mut Rng, bounds: &[u8], out: &mut [u8]) {
    let product = bounds.iter().fold(1u64, |p, &b| p * b as u64);
    loop {
        let mut l = rng.next_u64();
        for (o, &b) in out.iter_mut().zip(bounds) {
            let m = l as u128 * b as u128;
            *o = (m >> 64) as u8;
            l = m as u64;
        }
        if l >= product || l >= product.wrapping_neg() % product {
            return;
        }
    }
}

/// Fisher-Yates shuffle drawing as many swap positions per 64-bit word as fit: how the
/// swap bounds `len, len-1, …, 2` of a Fisher-Yates shuffle are grouped into
/// batches whose product fits in a `u64` (computed once per match).
struct ShufflePlan {
    bounds: [u8; 64],
    /// End of each batch in `bounds`.
    ends: [u8; 8],
    batches: usize,
}

impl ShufflePlan {
    fn new(len: usize) -> Self {
        let mut plan = ShufflePlan { bounds: [0; 64], ends: [0; 8], batches: 0 };
        let mut k = 0;
        let mut p = 1u64;
        for b in (2..=len).rev() {
            match p.checked_mul(b as u64) {
                Some(q) => p = q,
                None => {
                    plan.ends[plan.batches] = k as u8;
                    plan.batches += 1;
                    p = b as u64;
                }
            }
            plan.bounds[k] = b as u8;
            k += 1;
        }
        plan.ends[plan.batches] = k as u8;
        plan.batches += 1;
        plan
    }

    #[inline]
    fn shuffle(&self, rng: &mut Rng, deck: &mut [u8]) {
        let mut idx = [0u8; 64];
        let mut start = 0;
        for &end in &self.ends[..self.batches] {
            let end = end as usize;
            batched_indices(rng, &self.bounds[start..end], &mut idx[start..end]);
            start = end;
        }
        let len = deck.len();
        for (j, &i) in idx[..len.saturating_sub(1)].iter().enumerate() {
            deck.swap(len - 1 - j, i as usize);
        }
    }
}

/// Plays one whole random match (every seat commits a uniformly random card) on compact
/// arrays with the rule functions above and no events: the simulation hot path measured by
/// the benchmark (the decide/evolve path is measured too). Randomness is batched: one 64-bit
/// draw gives every card choice of a deal, a handful give the shuffle. Returns the winner
/// (`None` when capped) and the number of deals.
pub fn simulate_random_match(cfg: &Config, rng: &mut Rng) -> (Option<u8>, u32) {
    let n = cfg.seats as usize;
    let size = deck_size(n);
    let mut tribes = [0u32; MAX_SEATS];
    let mut dealer = rng.index(n);
    let mut deck = [0u8; 50];
    for (i, x) in deck.iter_mut().enumerate().take(size) {
        *x = i as u8;
    }
    // Choice k of a deal picks among `bounds[k]` cards still in hand: for every trick of both
    // days, every seat in order. (8!)^4 < 2^64 for 2 players, and less for more players.
    let (h1, h2) = (day_size(n, 1), day_size(n, 2));
    let mut bounds = [0u8; 64];
    let mut k = 0;
    for h in [h1, h2] {
        for left in (1..=h).rev() {
            for _ in 0..n {
                bounds[k] = left as u8;
                k += 1;
            }
        }
    }
    let bounds = &bounds[..k];
    let mut picks = [0u8; 64];
    let plan = ShufflePlan::new(size);
    let mut deal_no = 0u32;
    loop {
        deal_no += 1;
        plan.shuffle(rng, &mut deck[..size]);
        batched_indices(rng, bounds, &mut picks[..k]);
        let mut pick = picks.iter();
        let mut captured = [0u64; MAX_SEATS];
        let mut pos = 0;
        for h in [h1, h2] {
            // The canonical deal (§3.4) as arrays: round j gives seat (dealer+1+r)%n the card
            // at pos + j*(n+1) + r, and the vote pile the card at pos + j*(n+1) + n.
            let mut hands = [[0u8; 8]; MAX_SEATS];
            for j in 0..h {
                let round = &deck[pos + j * (n + 1)..pos + (j + 1) * (n + 1)];
                for r in 0..n {
                    hands[(dealer + 1 + r) % n][j] = round[r];
                }
            }
            let vote_at = |j: usize| deck[pos + j * (n + 1) + n];
            // Cards still in hand are hands[i][..=t]; a uniform index picks one and the last
            // fills its place.
            for t in (0..h).rev() {
                let v = vote_at(t);
                let mut played = [0u8; MAX_SEATS];
                for i in 0..n {
                    let k = (*pick.next().unwrap_or(&0) as usize).min(t);
                    played[i] = hands[i][k];
                    hands[i][k] = hands[i][t];
                }
                match resolve_trick(&played[..n], suit_of(v)).winner {
                    Some(w) => captured[w as usize] |= played[..n].iter().fold(bit(v), |a, &c| a | bit(c)),
                    None => {
                        for i in 0..n {
                            captured[i] |= bit(played[i]);
                        }
                    }
                }
            }
            pos += (n + 1) * h;
        }
        for i in 0..n {
            let m = captured[i];
            tribes[i] += (0..4).filter(|&s| suit_points(m, s) >= 13).count() as u32;
        }
        match match_check(&tribes[..n], cfg.target, deal_no, cfg.max_deals) {
            MatchCheck::Winner(w) => return (Some(w), deal_no),
            MatchCheck::Cap => return (None, deal_no),
            MatchCheck::Continue => dealer = (dealer + 1) % n,
        }
    }
}

// ------------------------------------------------------------------ the game

pub struct Democratie;

const DEFAULT_TARGET: u32 = 7;
const DEFAULT_MAX_DEALS: u32 = 200;

impl Game for Democratie {
    type Config = Config;
    type State = State;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const ID: &'static str = "democratie";
    const NAME: &'static str = "Démocratie";
    const PROTO_PACKAGE: &'static str = "tablier.democratie.v1";
    const MIN_PLAYERS: u32 = 2;
    const MAX_PLAYERS: u32 = 6;
    const BOTS: &'static [&'static str] = &["random", "tactician"];

    fn options() -> Vec<OptionSpec> {
        vec![
            OptionSpec::int(
                "target",
                DEFAULT_TARGET,
                1,
                1000,
                "Tribes needed to win the match (usually 5, 7 or 10; any integer 1 to 1000). \
                 The winner is the unique highest total at or above it (AMB7).",
            ),
            OptionSpec::int(
                "max_deals",
                DEFAULT_MAX_DEALS,
                1,
                100_000,
                "Administrative cap: after this many deals without a decided winner the match \
                 ends as aborted (1 to 100000).",
            ),
        ]
    }

    fn configure(seats: u32, options: &OptionValues) -> CoreResult<Config> {
        Ok(Config { seats: seats as u8, target: options.int("target"), max_deals: options.int("max_deals") })
    }

    fn initial(config: &Config) -> State {
        State {
            cfg: *config,
            phase: pb::Phase::MatchSetup,
            dealer: 0,
            deal_no: 0,
            day: 0,
            trick_no: 0,
            stock: [NO_CARD; 50],
            stock_pos: 0,
            stock_end: 0,
            vote_pile: [NO_CARD; 8],
            vote_len: 0,
            vote_card: NO_CARD,
            trump: TRUMP_UNSET,
            hands: [0; MAX_SEATS],
            commits: [NO_CARD; MAX_SEATS],
            captured: [0; MAX_SEATS],
            discard: 0,
            tribes: [0; MAX_SEATS],
            last_trick: None,
            winner: NOBODY,
            aborted: false,
            forfeit_winners: 0,
        }
    }

    fn start(state: &State, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        // Enough for the longest command (last commit of a deal: commit, reveal, resolve,
        // score, shuffle, deal, flip) so the vector never grows.
        let mut out = Vec::with_capacity(8);
        Self::open(&mut state.clone(), rng, &mut out)?;
        Ok(out)
    }

    fn open(st: &mut State, rng: &mut Rng, out: &mut Vec<pb::Event>) -> CoreResult<()> {
        if st.phase != pb::Phase::MatchSetup {
            return Err(CoreError::rule("WRONG_PHASE", "the match has already started"));
        }
        let first_dealer = rng.index(st.n()) as u32;
        let e = ev(pb::event::Kind::MatchStarted(pb::MatchStarted {
            seats: st.n() as u32,
            target: st.cfg.target,
            first_dealer,
            max_deals: st.cfg.max_deals,
        }));
        emit(st, out, e)?;
        run_automatic(st, out, rng)
    }

    fn decide(state: &State, seat: Seat, action: &pb::Action, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        // Enough for the longest command (last commit of a deal: commit, reveal, resolve,
        // score, shuffle, deal, flip) so the vector never grows.
        let mut out = Vec::with_capacity(8);
        Self::play(&mut state.clone(), seat, action, rng, &mut out)?;
        Ok(out)
    }

    fn play(state: &mut State, seat: Seat, action: &pb::Action, rng: &mut Rng, events: &mut Vec<pb::Event>) -> CoreResult<()> {
        // Every check of the command comes first; after it only a bug can fail (`Corrupt`).
        let card = check_commit(state, seat, action)?;
        emit(state, events, ev(pb::event::Kind::CardCommitted(pb::CardCommitted { seat, card: to_pb(card) })))?;
        if state.phase == pb::Phase::TrickCommit {
            return Ok(()); // others still to commit: nothing automatic follows
        }
        run_automatic(state, events, rng)
    }

    /// A seat that has committed is told so (`ALREADY_COMMITTED`), and a commit outside a
    /// trick is `WRONG_PHASE`, even once the match is over (AMB16, TV20).
    fn idle_refusal(state: &State, seat: Seat, action: &pb::Action) -> Option<CoreError> {
        check_commit(state, seat, action).err()
    }

    fn evolve(state: &mut State, event: &pb::Event) -> CoreResult<()> {
        // `evolve_state` checks everything about an event before it writes anything, so a
        // refused event leaves the state untouched without working on a copy (the
        // `malformed_and_illegal_input_is_refused_without_panic` test holds it to that).
        evolve_state::<true>(state, event)
    }

    fn to_act(state: &State) -> Seats {
        if state.phase != pb::Phase::TrickCommit {
            return Seats::NONE;
        }
        let waiting = state.commits[..state.n()].iter().enumerate().filter(|&(_, &c)| c == NO_CARD);
        Seats::from_mask(waiting.fold(0, |m, (i, _)| m | 1 << i))
    }

    fn legal_actions_into(state: &State, seat: Seat, out: &mut Vec<pb::Action>) {
        let s = seat as usize;
        if state.phase == pb::Phase::TrickCommit && s < state.n() && state.commits[s] == NO_CARD {
            out.extend(cards_of(state.hands[s]).map(commit_action));
        }
    }

    fn view(state: &State, viewer: Viewer) -> pb::View {
        let n = state.n();
        let to_act = Self::to_act(state);
        let own = match viewer {
            Viewer::Seat(s) if (s as usize) < n => Some(s as usize),
            _ => None,
        };
        let auditor = viewer == Viewer::Auditor;
        let over = state.phase == pb::Phase::MatchEnd;
        pb::View {
            seats: n as u32,
            target: state.cfg.target,
            phase: state.phase as i32,
            deal_no: state.deal_no,
            dealer: state.dealer as u32,
            day: state.day as u32,
            trick_no: state.trick_no as u32,
            tricks_in_day: if state.day == 0 { 0 } else { day_size(n, state.day) as u32 },
            vote_card: to_pb(state.vote_card),
            trump: trump_pb(state.trump),
            vote_pile_count: state.vote_len as u32,
            stock_count: (state.stock_end - state.stock_pos) as u32,
            discard: mask_to_pb(state.discard),
            seat_info: (0..n)
                .map(|i| pb::SeatPublic {
                    seat: i as u32,
                    hand_count: state.hands[i].count_ones(),
                    committed: state.commits[i] != NO_CARD,
                    captured_count: state.captured[i].count_ones(),
                    tribes: state.tribes[i],
                    awaited: to_act.contains(i as Seat),
                })
                .collect(),
            to_act: to_act.to_vec(),
            viewer: Some(viewer.to_proto()),
            hand: own.map(|s| mask_to_pb(state.hands[s])).unwrap_or_default(),
            my_commit: own.map(|s| to_pb(state.commits[s])).unwrap_or(0),
            last_trick: state.last_trick.map(|t| pb::LastTrick {
                day: t.day as u32,
                trick_no: t.trick_no as u32,
                vote_card: to_pb(t.vote),
                trump: trump_pb(t.trump),
                played: t.played[..n].iter().map(|&c| to_pb(c)).collect(),
                tie: t.winner == NOBODY,
                winner: if t.winner == NOBODY { 0 } else { t.winner as u32 },
            }),
            over,
            winners: match_winners(state),
            aborted: state.aborted,
            max_deals: state.cfg.max_deals,
            hidden: auditor.then(|| pb::Hidden {
                stock: state.stock_slice().iter().rev().map(|&c| to_pb(c)).collect(),
                vote_pile: state.vote_pile[..state.vote_len as usize].iter().map(|&c| to_pb(c)).collect(),
                hands: (0..n)
                    .map(|i| pb::DealtHand {
                        seat: i as u32,
                        count: state.hands[i].count_ones(),
                        cards: mask_to_pb(state.hands[i]),
                    })
                    .collect(),
                commits: state.commits[..n].iter().map(|&c| to_pb(c)).collect(),
                captured: (0..n)
                    .map(|i| pb::DealtHand {
                        seat: i as u32,
                        count: state.captured[i].count_ones(),
                        cards: mask_to_pb(state.captured[i]),
                    })
                    .collect(),
            }),
        }
    }

    fn redact(event: &pb::Event, viewer: Viewer) -> Option<pb::Event> {
        use pb::event::Kind as K;
        if viewer == Viewer::Auditor {
            return Some(event.clone());
        }
        let kind = match &event.kind {
            Some(K::DeckShuffled(e)) => K::DeckShuffled(pb::DeckShuffled { deck: vec![], ..e.clone() }),
            Some(K::DayDealt(e)) => K::DayDealt(pb::DayDealt {
                hands: e
                    .hands
                    .iter()
                    .map(|h| pb::DealtHand {
                        seat: h.seat,
                        count: h.count,
                        cards: if viewer.is_seat(h.seat) { h.cards.clone() } else { vec![] },
                    })
                    .collect(),
                vote_pile: vec![],
                ..e.clone()
            }),
            Some(K::CardCommitted(e)) => K::CardCommitted(pb::CardCommitted {
                seat: e.seat,
                card: if viewer.is_seat(e.seat) { e.card } else { 0 },
            }),
            Some(k) => k.clone(),
            None => return Some(event.clone()),
        };
        Some(ev(kind))
    }

    fn event_type(event: &pb::Event) -> &'static str {
        use pb::event::Kind as K;
        match &event.kind {
            Some(K::MatchStarted(_)) => "match_started",
            Some(K::DeckShuffled(_)) => "deck_shuffled",
            Some(K::DayDealt(_)) => "day_dealt",
            Some(K::VoteCardFlipped(_)) => "vote_card_flipped",
            Some(K::CardCommitted(_)) => "card_committed",
            Some(K::TrickRevealed(_)) => "trick_revealed",
            Some(K::TrickResolved(_)) => "trick_resolved",
            Some(K::DealScored(_)) => "deal_scored",
            Some(K::MatchEnded(_)) => "match_ended",
            None => "unknown",
        }
    }

    fn outcome(state: &State) -> Option<Outcome> {
        if state.phase != pb::Phase::MatchEnd {
            return None;
        }
        Some(Outcome {
            scores: state.tribes[..state.n()].iter().map(|&t| t as i64).collect(),
            winners: match_winners(state),
            reason: if state.forfeit_winners != 0 {
                REASON_FORFEIT.into()
            } else if state.aborted {
                "DEAL_CAP".into()
            } else {
                "TARGET_REACHED".into()
            },
            lower_is_better: false,
            aborted: state.aborted,
        })
    }

    /// Match clocks (§11): a timed-out seat commits its weakest card.
    const TIMEOUT_POLICIES: &'static [&'static str] = &[TIMEOUT_WEAKEST_CARD, TIMEOUT_FORFEIT];
    const TIMEOUT_HELP: &'static str = "weakest_card: the seat commits the weakest card of its hand (lowest \
        strength, then fewest points, then lowest card code), as a commit of its own: sealed until the reveal. \
        forfeit: the seat forfeits: the match ends at once (reason FORFEIT) and the highest tribe total among \
        the other seats wins, shared when tied.";

    fn timeout_events(state: &State, seat: Seat, policy: &str, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        if policy != TIMEOUT_WEAKEST_CARD && policy != TIMEOUT_FORFEIT {
            return Err(CoreError::Unsupported(format!("democratie has no timeout policy {policy:?}")));
        }
        let s = seat as usize;
        if state.phase != pb::Phase::TrickCommit || s >= state.n() || state.commits[s] != NO_CARD {
            return Err(CoreError::not_your_turn());
        }
        if policy == TIMEOUT_FORFEIT {
            let won = forfeit_winners(state, s);
            return Ok(vec![ev(pb::event::Kind::MatchEnded(pb::MatchEnded {
                winners: (0..state.n() as u32).filter(|w| won >> w & 1 == 1).collect(),
                tribes: state.tribes[..state.n()].to_vec(),
                aborted: false,
                reason: REASON_FORFEIT.into(),
            }))]);
        }
        let card = weakest_card(state.hands[s]).ok_or_else(CoreError::not_your_turn)?;
        Self::decide(state, seat, &commit_action(card), rng)
    }

    fn bot_action(state: &State, seat: Seat, bot: &str, rng: &mut Rng) -> CoreResult<pb::Action> {
        let s = seat as usize;
        if state.phase != pb::Phase::TrickCommit || s >= state.n() || state.commits[s] != NO_CARD {
            return Err(CoreError::not_your_turn());
        }
        match bot {
            "tactician" => tactician_card(state, s).map(commit_action).ok_or_else(CoreError::not_your_turn),
            "random" => {
                let hand = state.hands[s];
                let k = rng.index(hand.count_ones().max(1) as usize);
                cards_of(hand).nth(k).map(commit_action).ok_or_else(CoreError::not_your_turn)
            }
            other => Err(CoreError::option(format!("Démocratie has no bot {other:?} (bots: random, tactician)"))),
        }
    }

    fn render(state: &State, viewer: Viewer) -> String {
        use std::fmt::Write;
        let n = state.n();
        let names = |m: u64| cards_of(m).map(card_name).collect::<Vec<_>>().join(" ");
        let mut s = String::new();
        let trump = match state.trump {
            0..=3 => (SUITS[state.trump as usize] as char).to_string(),
            NO_TRUMP => "none".into(),
            _ => "-".into(),
        };
        let _ = writeln!(
            s,
            "Démocratie  deal {} day {} trick {}/{}  dealer P{}  target {}  [{:?}]",
            state.deal_no,
            state.day,
            state.trick_no,
            if state.day == 0 { 0 } else { day_size(n, state.day) },
            state.dealer,
            state.cfg.target,
            state.phase
        );
        let _ = writeln!(
            s,
            "vote {} (trump {})  vote pile {}  stock {}  discard [{}]",
            card_name(state.vote_card),
            trump,
            state.vote_len,
            state.stock_end - state.stock_pos,
            names(state.discard)
        );
        for i in 0..n {
            let mine = viewer.sees_private_of(i as Seat);
            let commit = match (state.commits[i] != NO_CARD, mine) {
                (false, _) => "   ".to_string(),
                (true, true) => format!("[{}]", card_name(state.commits[i])),
                (true, false) => "[##]".to_string(),
            };
            let hand = if mine { names(state.hands[i]) } else { format!("{} cards", state.hands[i].count_ones()) };
            let _ = writeln!(
                s,
                "P{i}{} tribes {:>2}  captured {:>2}  {commit:<5} hand: {hand}",
                if state.dealer as usize == i { "*" } else { " " },
                state.tribes[i],
                state.captured[i].count_ones()
            );
        }
        if let Some(t) = state.last_trick {
            let played: Vec<String> = (0..n).map(|i| format!("P{i} {}", card_name(t.played[i]))).collect();
            let res = if t.winner == NOBODY { "tie".to_string() } else { format!("P{} wins", t.winner) };
            let _ = writeln!(s, "last trick: vote {}  {}  -> {res}", card_name(t.vote), played.join(", "));
        }
        if state.phase == pb::Phase::MatchEnd {
            if state.aborted {
                let _ = writeln!(s, "match stopped by the deal cap");
            } else {
                let _ = writeln!(s, "P{} wins the match", state.winner);
            }
        }
        s
    }

    fn check_invariants(st: &State) -> Result<(), String> {
        use pb::Phase as P;
        let n = st.n();
        if !(2..=6).contains(&n) {
            return Err(format!("seat count {n}"));
        }
        let mut all = 0u64;
        let mut count = 0u32;
        let mut add = |m: u64, what: &str| -> Result<(), String> {
            if all & m != 0 {
                return Err(format!("a card is in two zones ({what})"));
            }
            all |= m;
            count += m.count_ones();
            Ok(())
        };
        for &c in st.stock_slice() {
            if c as usize >= deck_size(n) {
                return Err("bad card in stock".into());
            }
            add(bit(c), "stock")?;
        }
        for &c in &st.vote_pile[..st.vote_len as usize] {
            if c as usize >= deck_size(n) {
                return Err("bad card in vote pile".into());
            }
            add(bit(c), "vote pile")?;
        }
        if st.vote_card != NO_CARD {
            add(bit(st.vote_card), "vote card")?;
        }
        for i in 0..n {
            add(st.hands[i], "hand")?;
            add(st.captured[i], "captured")?;
            if st.commits[i] != NO_CARD {
                add(bit(st.commits[i]), "commit")?;
            }
        }
        add(st.discard, "discard")?;
        let dealt = !matches!(st.phase, P::MatchSetup | P::DealSetup);
        if dealt && (all != deck_mask(n) || count as usize != deck_size(n)) {
            return Err(format!("{count} cards in play, deck has {}", deck_size(n)));
        }
        if !dealt && all != 0 {
            return Err("cards in play before the first shuffle".into());
        }
        let committed = st.commits[..n].iter().filter(|&&c| c != NO_CARD).count();
        let vl = st.vote_len as u32;
        match st.phase {
            P::TrickCommit | P::TrickReveal | P::TrickResolve => {
                if st.vote_card == NO_CARD || st.trump != suit_of(st.vote_card) {
                    return Err("trick without a vote card".into());
                }
                for i in 0..n {
                    let held = st.hands[i].count_ones() + (st.commits[i] != NO_CARD) as u32;
                    if held != vl + 1 {
                        return Err(format!("seat {i} holds {held} cards, vote pile {vl}"));
                    }
                }
                if st.phase != P::TrickCommit && committed != n {
                    return Err("reveal without every commit".into());
                }
                if st.phase == P::TrickCommit && committed == n {
                    return Err("all committed but still in commit phase".into());
                }
            }
            P::TrickFlip | P::DayEnd | P::DealScoring => {
                if st.vote_card != NO_CARD || committed != 0 {
                    return Err("vote card or commits left between tricks".into());
                }
                if (0..n).any(|i| st.hands[i].count_ones() != vl) {
                    return Err("hand sizes differ from the vote pile".into());
                }
            }
            _ => {
                if committed != 0 {
                    return Err("commits outside a trick".into());
                }
            }
        }
        if dealt && st.phase != P::DayDeal && st.day >= 1 {
            let left = (st.stock_end - st.stock_pos) as usize;
            let expect = if st.day == 1 { (n + 1) * day_size(n, 2) } else { 0 };
            if left != expect {
                return Err(format!("stock holds {left} cards on day {}, expected {expect}", st.day));
            }
        }
        let total: u32 = st.tribes[..n].iter().sum();
        if total > 4 * st.deal_no {
            return Err(format!("{total} tribes after {} deals", st.deal_no));
        }
        if (st.phase == P::MatchEnd) != (st.winner != NOBODY || st.aborted || st.forfeit_winners != 0) {
            return Err("end state inconsistent".into());
        }
        if st.winner != NOBODY && st.tribes[st.winner as usize] < st.cfg.target {
            return Err("winner below target".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Options;
    use crate::conformance;
    use prost::Message;

    /// `TrickRevealed` as prost would generate it from the proto.
    #[derive(Clone, PartialEq, prost::Message)]
    struct GeneratedTrickRevealed {
        #[prost(uint32, tag = "1")]
        day: u32,
        #[prost(uint32, tag = "2")]
        trick_no: u32,
        #[prost(enumeration = "pb::Card", tag = "3")]
        vote_card: i32,
        #[prost(enumeration = "pb::Suit", tag = "4")]
        trump: i32,
        #[prost(enumeration = "pb::Card", repeated, tag = "5")]
        played: Vec<i32>,
    }

    #[test]
    fn inline_trick_reveals_have_the_generated_wire_format() {
        let cases = [(0, 0, 0, 0, vec![]), (1, 7, 12, 3, vec![1, 52, 0]), (2, 12, 53, 0, vec![5, 6, 7, 8, 9, 10]), (2, 1, 1, 4, vec![0, 0])];
        for (day, trick_no, vote_card, trump, played) in cases {
            let generated = GeneratedTrickRevealed { day, trick_no, vote_card, trump, played: played.clone() };
            let inline = TrickRevealed { day, trick_no, vote_card, trump, played: played.iter().copied().collect() };
            assert_eq!(inline.encode_to_vec(), generated.encode_to_vec());
            assert_eq!(inline.encoded_len(), generated.encoded_len());
            assert_eq!(TrickRevealed::decode(&*generated.encode_to_vec()).unwrap(), inline);
            let event = ev(pb::event::Kind::TrickRevealed(inline));
            assert_eq!(pb::Event::decode(&*event.encode_to_vec()).unwrap(), event);
        }
        // Seven cards in a trick of at most six seats: read as none, refused on replay.
        let seven = GeneratedTrickRevealed { played: vec![1; 7], ..Default::default() }.encode_to_vec();
        assert!(TrickRevealed::decode(&*seven).unwrap().played.is_empty());
    }

    fn c(s: &str) -> u8 {
        parse_card(s).unwrap_or_else(|| panic!("bad card {s}"))
    }
    fn cards(s: &str) -> u64 {
        s.split_whitespace().filter(|w| *w != "|").fold(0, |m, w| m | bit(c(w)))
    }
    fn commit(card: u8) -> pb::Action {
        commit_action(card)
    }
    fn config(n: u32) -> Config {
        Democratie::checked_config(n, &Options::new()).unwrap()
    }
    fn rule_reason(r: CoreResult<Vec<pb::Event>>) -> &'static str {
        match r {
            Err(CoreError::Rule { reason, .. }) => reason,
            other => panic!("expected a rule error, got {other:?}"),
        }
    }
    fn apply_all(st: &mut State, evs: &[pb::Event]) {
        for e in evs {
            Democratie::evolve(st, e).unwrap();
            Democratie::check_invariants(st).unwrap();
        }
    }
    fn started(n: u32, seed: u64) -> State {
        let mut st = Democratie::initial(&config(n));
        let evs = Democratie::start(&st, &mut Rng::from_u64(seed)).unwrap();
        apply_all(&mut st, &evs);
        st
    }

    /// Plays one trick from a crafted state (day 2, last trick) and returns the resolution
    /// and the state right after it.
    fn trick(n: usize, vote: &str, played: &[&str]) -> (pb::TrickResolved, State) {
        let mut st = Democratie::initial(&config(n as u32));
        st.phase = pb::Phase::TrickCommit;
        st.deal_no = 1;
        st.day = 2;
        st.trick_no = 1;
        st.vote_card = c(vote);
        st.trump = suit_of(st.vote_card);
        for (i, p) in played.iter().enumerate() {
            st.hands[i] = bit(c(p));
        }
        let mut rng = Rng::from_u64(9);
        for (i, p) in played.iter().enumerate() {
            let evs = Democratie::decide(&st, i as Seat, &commit(c(p)), &mut rng).unwrap();
            for e in &evs {
                Democratie::evolve(&mut st, e).unwrap();
                if let Some(pb::event::Kind::TrickResolved(r)) = &e.kind {
                    return (*r, st);
                }
            }
        }
        panic!("trick not resolved")
    }
    fn wins(n: usize, vote: &str, played: &[&str], winner: u32, captured: &str) -> State {
        let (r, st) = trick(n, vote, played);
        assert!(!r.tie, "expected a win");
        assert_eq!(r.winner, winner);
        assert_eq!(st.captured[winner as usize], cards(captured));
        assert_eq!(st.discard, 0);
        st
    }
    fn ties(n: usize, vote: &str, played: &[&str]) -> State {
        let (r, st) = trick(n, vote, played);
        assert!(r.tie, "expected a tie");
        for (i, p) in played.iter().enumerate() {
            assert_eq!(st.captured[i], bit(c(p)), "seat {i} keeps its own card");
        }
        assert_eq!(st.discard, bit(c(vote)));
        st
    }

    #[test]
    fn tv01_deck_composition_and_points() {
        assert_eq!(deck_size(3), 48);
        assert_eq!(deck_size(2), 48);
        assert_eq!(deck_size(5), 48);
        assert_eq!(deck_size(4), 50);
        assert_eq!(deck_size(6), 49);
        for s in 0..4 {
            assert_eq!(suit_points(deck_mask(3), s), 25);
            assert_eq!(cards_of(suit_mask(s as u8)).map(|c| points(c) as u32).sum::<u32>(), 25);
        }
        assert_eq!(cards_of(deck_mask(3)).map(|c| points(c) as u32).sum::<u32>(), 100);
        assert_eq!(points(X1), 0);
        assert_eq!(points(X2), 0);
        assert_eq!(card_name(0), "5C");
        assert_eq!(card_name(47), "6S");
        for code in 1..=50 {
            let id = from_pb(code).unwrap();
            assert_eq!(parse_card(&card_name(id)), Some(id));
            assert!(pb::Card::try_from(code).unwrap().as_str_name().ends_with(&card_name(id)));
        }
        // Strength order 5 > 4 > 3 > A > K > Q > J > 10 > 9 > 8 > 7 > 6.
        let order: Vec<u8> = "5H 4H 3H AH KH QH JH TH 9H 8H 7H 6H".split(' ').map(|x| strength(c(x))).collect();
        assert!(order.windows(2).all(|w| w[0] > w[1]));
        assert_eq!(strength(X1), strength(c("5S")));
    }

    #[test]
    fn tv02_canonical_deal_two_players_unshuffled() {
        let mut st = Democratie::initial(&config(2));
        st.phase = pb::Phase::DealSetup;
        st.dealer = 0;
        // The unshuffled deck, 5C on top: bottom first, as the event lists it.
        let deck: Vec<i32> = (0..48).rev().map(to_pb).collect();
        let shuffled = ev(pb::event::Kind::DeckShuffled(pb::DeckShuffled { deal_no: 1, dealer: 0, deck_size: 48, deck }));
        Democratie::evolve(&mut st, &shuffled).unwrap();
        let mut out = vec![];
        run_automatic(&mut st, &mut out, &mut Rng::from_u64(0)).unwrap();
        assert_eq!(st.hands[1], cards("5C AC JC 8C 5D AD JD 8D"));
        assert_eq!(st.hands[0], cards("4C KC TC 7C 4D KD TD 7D"));
        // The first card was flipped already: 6D is the vote card, the rest bottom to top.
        assert_eq!(st.vote_card, c("6D"));
        assert_eq!(st.trump, 1);
        let pile: Vec<u8> = st.vote_pile[..st.vote_len as usize].to_vec();
        assert_eq!(pile, ["3C", "QC", "9C", "6C", "3D", "QD", "9D"].map(c).to_vec());
        assert_eq!(st.stock_slice().len(), 24);
        assert_eq!(st.stock_slice().iter().fold(0, |m, &x| m | bit(x)), suit_mask(2) | suit_mask(3));
        // Day 2: play day 1 out (any cards), then the same dealer deals the rest.
        let mut rng = Rng::from_u64(3);
        while st.day == 1 {
            let seat = Democratie::to_act(&st).first().unwrap();
            let a = Democratie::bot_action(&st, seat, "random", &mut rng).unwrap();
            let evs = Democratie::decide(&st, seat, &a, &mut rng).unwrap();
            apply_all(&mut st, &evs);
        }
        assert_eq!(st.dealer, 0);
        assert_eq!(st.hands[1], cards("5H AH JH 8H 5S AS JS 8S"));
        assert_eq!(st.hands[0], cards("4H KH TH 7H 4S KS TS 7S"));
        assert_eq!(st.vote_card, c("6S"));
        let pile: Vec<u8> = st.vote_pile[..st.vote_len as usize].to_vec();
        assert_eq!(pile, ["3H", "QH", "9H", "6H", "3S", "QS", "9S"].map(c).to_vec());
        assert_eq!(st.stock_slice().len(), 0);
    }

    #[test]
    fn tv03_deal_sizes_six_players() {
        let st = started(6, 5);
        for i in 0..6 {
            assert_eq!(st.hands[i].count_ones(), 4);
        }
        assert_eq!(st.vote_len + 1, 4); // one already turned up
        assert_eq!(st.stock_slice().len(), 21);
        assert_eq!(day_size(6, 1) + day_size(6, 2), 7);
        let (hands, _) = deal_day(&st.stock_slice()[..21], 6, st.dealer as usize, 3);
        assert!(hands[..6].iter().all(|h| h.count_ones() == 3));
    }

    #[test]
    fn tv04_normal_trump_trick() {
        let st = wins(3, "KH", &["9H", "5S", "AH"], 2, "9H 5S AH KH");
        assert_eq!(suit_points(st.captured[2], 2), 6);
        assert_eq!(suit_points(st.captured[2], 3), 5);
    }

    #[test]
    fn tv05_five_six_exception_with_other_trumps() {
        let (r, _) = trick(4, "JD", &["5D", "6D", "4D", "X1"]);
        assert!(r.five_six_rule);
        let st = wins(4, "JD", &["5D", "6D", "4D", "X1"], 1, "5D 6D 4D X1 JD");
        assert_eq!(suit_points(st.captured[1], 1), 11);
    }

    #[test]
    fn tv06_six_of_trump_only_trump() {
        wins(3, "7C", &["6C", "KS", "5H"], 0, "6C KS 5H 7C");
    }

    #[test]
    fn tv07_five_of_trump_against_non_trump_six() {
        wins(2, "QS", &["5S", "6H"], 0, "5S 6H QS");
    }

    #[test]
    fn tv08_vote_card_six_of_trump_does_not_compete() {
        let st = wins(2, "6H", &["5H", "4H"], 0, "5H 4H 6H");
        assert_eq!(suit_points(st.captured[0], 2), 9);
    }

    #[test]
    fn tv09_no_trump_played_three_beats_ace() {
        wins(3, "TC", &["3D", "AH", "KS"], 0, "3D AH KS TC");
    }

    #[test]
    fn tv10_tie_between_fives() {
        let st = ties(4, "8H", &["5C", "5S", "AD", "7C"]);
        // Hearts still capturable: 25 minus the discarded 8H.
        assert_eq!(25 - suit_points(st.discard, 2), 24);
    }

    #[test]
    fn tv11_trump_beats_would_be_tie_and_joker() {
        wins(4, "7D", &["5C", "5S", "X1", "6D"], 3, "5C 5S X1 6D 7D");
    }

    #[test]
    fn tv12_joker_loses_to_trump() {
        wins(6, "9S", &["X1", "7S", "5H", "4D", "6C", "QH"], 1, "X1 7S 5H 4D 6C QH 9S");
    }

    #[test]
    fn tv13_joker_ties_with_five() {
        ties(4, "4C", &["X1", "5D", "KH", "3S"]);
    }

    #[test]
    fn tv14_joker_wins_without_trump_five_or_joker() {
        let st = wins(4, "AC", &["X2", "4H", "3S", "TD"], 0, "X2 4H 3S TD AC");
        let total: u8 = (0..4).map(|s| suit_points(st.captured[0], s)).sum();
        assert_eq!(total, 11);
    }

    #[test]
    fn tv15_two_jokers_tie() {
        ties(4, "KD", &["X1", "X2", "9H", "6S"]);
    }

    #[test]
    fn tv16_joker_vote_card_means_no_trump() {
        wins(4, "X1", &["4H", "6H", "3D", "AS"], 0, "4H 6H 3D AS X1");
        let (r, _) = trick(4, "X2", &["5H", "6H", "7D", "8S"]);
        assert!(!r.tie && r.winner == 0 && !r.five_six_rule && !r.trump_trick);
        ties(4, "X1", &["X2", "5S", "KC", "QC"]);
    }

    #[test]
    fn tv17_deal_scoring() {
        let piles = [
            cards("5S 4S AS JS | 5H 3H KH | 6C 7C | 4D AD QD TD"),
            cards("3S KS QS TS 9S | 4H AH QH JH TH | 5C 4C 3C KC | 5D 3D 6D"),
            cards("8S 7S 6S | 9H 7H 6H | AC QC JC TC 9C 8C | KD JD 9D 8D 7D"),
        ];
        assert_eq!(piles.iter().map(|m| m.count_ones()).sum::<u32>() + 1, 48);
        let s = score_piles(&piles);
        assert_eq!(s[0], ([1, 10, 10, 14], 1));
        assert_eq!(s[1], ([14, 8, 12, 9], 1));
        assert_eq!(s[2], ([10, 7, 2, 2], 0));
        // Through the state machine: the scoring event carries the same numbers.
        let mut st = Democratie::initial(&config(3));
        st.phase = pb::Phase::DealScoring;
        st.deal_no = 1;
        st.day = 2;
        st.captured[..3].copy_from_slice(&piles);
        st.discard = cards("8H");
        let mut out = vec![];
        run_automatic(&mut st, &mut out, &mut Rng::from_u64(1)).unwrap();
        let Some(pb::event::Kind::DealScored(d)) = &out[0].kind else { panic!("{out:?}") };
        assert_eq!(d.seats.iter().map(|s| s.tribes_gained).collect::<Vec<_>>(), vec![1, 1, 0]);
        assert_eq!(d.seats[1].points, vec![14, 8, 12, 9]);
        assert_eq!(st.tribes[..3], [1, 1, 0]);
    }

    #[test]
    fn tv18_match_end_and_tie_at_target() {
        assert_eq!(match_check(&[7, 7, 7], 7, 5, 200), MatchCheck::Continue);
        assert_eq!(match_check(&[7, 8, 9], 7, 6, 200), MatchCheck::Winner(2));
        assert_eq!(match_check(&[9, 7, 3], 7, 6, 200), MatchCheck::Winner(0));
        assert_eq!(match_check(&[6, 6, 5], 7, 6, 200), MatchCheck::Continue);
        // Administrative cap (AMB17), only when no winner is decided.
        assert_eq!(match_check(&[7, 7, 7], 7, 200, 200), MatchCheck::Cap);
        assert_eq!(match_check(&[7, 8, 7], 7, 200, 200), MatchCheck::Winner(1));
        // (a) through the state machine: a three-way tie at the target goes on, dealer passes left.
        let mut st = Democratie::initial(&config(3));
        st.phase = pb::Phase::DealScoring;
        st.deal_no = 3;
        st.day = 2;
        st.dealer = 1;
        st.tribes[..3].copy_from_slice(&[6, 5, 6]);
        // A: 1 tribe (spades), B: 2 (clubs, diamonds), C: 1 (hearts).
        st.captured[0] = suit_mask(3);
        st.captured[1] = suit_mask(0) | suit_mask(1);
        st.captured[2] = suit_mask(2);
        let mut out = vec![];
        run_automatic(&mut st, &mut out, &mut Rng::from_u64(1)).unwrap();
        assert_eq!(st.tribes[..3], [7, 7, 7]);
        assert!(st.phase == pb::Phase::TrickCommit && st.dealer == 2 && st.deal_no == 4);
        assert!(Democratie::outcome(&st).is_none());
        // (b) next deal: C reaches 9 alone and wins.
        let mut st2 = st;
        st2.phase = pb::Phase::DealScoring;
        st2.vote_card = NO_CARD;
        st2.vote_len = 0;
        st2.stock_pos = st2.stock_end;
        st2.hands = [0; MAX_SEATS];
        st2.captured = [0; MAX_SEATS];
        st2.captured[1] = suit_mask(0);
        st2.captured[2] = suit_mask(1) | suit_mask(2) | suit_mask(3);
        let mut out = vec![];
        run_automatic(&mut st2, &mut out, &mut Rng::from_u64(1)).unwrap();
        let o = Democratie::outcome(&st2).unwrap();
        assert_eq!(o.scores, vec![7, 8, 10]);
        assert_eq!(o.winners, vec![2]);
        assert!(!o.aborted);
    }

    /// TV19 state: n = 3, day 1, trick 5 of 6, vote QD face up, one card left in the vote pile.
    fn tv19_state() -> State {
        let mut st = Democratie::initial(&config(3));
        st.phase = pb::Phase::TrickCommit;
        st.deal_no = 1;
        st.day = 1;
        st.trick_no = 5;
        st.hands[0] = cards("5C 9H");
        st.hands[1] = cards("QH 3C");
        st.hands[2] = cards("AS 7D");
        st.vote_card = c("QD");
        st.trump = 1;
        st.vote_pile[0] = c("6S");
        st.vote_len = 1;
        let used = st.hands[0] | st.hands[1] | st.hands[2] | bit(st.vote_card) | bit(st.vote_pile[0]);
        let rest: Vec<u8> = cards_of(deck_mask(3) & !used).collect();
        for (i, &x) in rest[..24].iter().enumerate() {
            st.stock[i] = x;
        }
        st.stock_end = 24;
        for (k, &x) in rest[24..].iter().enumerate() {
            st.captured[k % 3] |= bit(x);
        }
        Democratie::check_invariants(&st).unwrap();
        st
    }

    #[test]
    fn tv19_simultaneous_commit_protocol() {
        let mut st = tv19_state();
        let mut rng = Rng::from_u64(1);
        // 1. P1 commits QH: P1 sees it, others only "P1 committed".
        let evs = Democratie::decide(&st, 1, &commit(c("QH")), &mut rng).unwrap();
        assert_eq!(evs.len(), 1);
        let own = Democratie::redact(&evs[0], Viewer::Seat(1)).unwrap();
        assert_eq!(own, evs[0]);
        let other = Democratie::redact(&evs[0], Viewer::Seat(0)).unwrap();
        assert_eq!(other, ev(pb::event::Kind::CardCommitted(pb::CardCommitted { seat: 1, card: 0 })));
        assert_eq!(Democratie::redact(&evs[0], Viewer::Spectator).unwrap(), other);
        apply_all(&mut st, &evs);
        let v0 = Democratie::view(&st, Viewer::Seat(0));
        assert_eq!(v0.seat_info[1].hand_count, 1);
        assert!(v0.seat_info[1].committed);
        assert_eq!(Democratie::view(&st, Viewer::Seat(1)).my_commit, to_pb(c("QH")));
        assert_eq!(v0.my_commit, 0);
        assert_eq!(Democratie::to_act(&st).to_vec(), vec![0, 2]);
        // 2. P1 cannot change its commit.
        let before = st;
        assert_eq!(rule_reason(Democratie::decide(&st, 1, &commit(c("3C")), &mut rng)), "ALREADY_COMMITTED");
        assert_eq!(st, before);
        // 3. P2 asking for QH (P1's commit) gets exactly the error of any card it lacks.
        let e1 = Democratie::decide(&st, 2, &commit(c("QH")), &mut rng).unwrap_err();
        let e2 = Democratie::decide(&st, 2, &commit(c("4S")), &mut rng).unwrap_err();
        let e3 = Democratie::decide(&st, 2, &commit(c("5C")), &mut rng).unwrap_err();
        assert_eq!(e1, e2);
        assert_eq!(e1, e3);
        assert!(matches!(e1, CoreError::Rule { reason: "CARD_NOT_IN_HAND", .. }));
        // 4. P2 commits AS: still in the commit phase, no foreign card ids in views.
        let evs = Democratie::decide(&st, 2, &commit(c("AS")), &mut rng).unwrap();
        apply_all(&mut st, &evs);
        assert_eq!(st.phase, pb::Phase::TrickCommit);
        let v0 = Democratie::view(&st, Viewer::Seat(0));
        let bytes = v0.encode_to_vec();
        assert!(v0.hand == vec![to_pb(c("5C")), to_pb(c("9H"))] && v0.my_commit == 0);
        assert!(Democratie::view(&st, Viewer::Spectator).hand.is_empty());
        // 5. P0's commit is the last: reveal and resolution in the same transition.
        let evs = Democratie::decide(&st, 0, &commit(c("5C")), &mut rng).unwrap();
        let kinds: Vec<&str> = evs.iter().map(Democratie::event_type).collect();
        assert_eq!(&kinds[..4], &["card_committed", "trick_revealed", "trick_resolved", "vote_card_flipped"]);
        let Some(pb::event::Kind::TrickRevealed(r)) = &evs[1].kind else { panic!() };
        assert_eq!(*r.played, ["5C", "QH", "AS"].map(|x| to_pb(c(x))));
        for s in 0..3 {
            assert_eq!(Democratie::redact(&evs[1], Viewer::Seat(s)).unwrap(), evs[1]);
        }
        let captured_before = st.captured[0];
        apply_all(&mut st, &evs[..3]);
        assert_eq!(st.captured[0], captured_before | cards("5C QH AS QD"));
        assert!(!bytes.is_empty());
    }

    #[test]
    fn tv20_illegal_actions_outside_the_commit_phase() {
        // DAY_DEAL (after the shuffle, before the deal).
        let mut st = Democratie::initial(&config(3));
        let evs = Democratie::start(&st, &mut Rng::from_u64(4)).unwrap();
        Democratie::evolve(&mut st, &evs[0]).unwrap();
        Democratie::evolve(&mut st, &evs[1]).unwrap();
        assert_eq!(st.phase, pb::Phase::DayDeal);
        assert_eq!(rule_reason(Democratie::decide(&st, 0, &commit(c("9H")), &mut Rng::from_u64(0))), "WRONG_PHASE");
        // TRICK_REVEAL / TRICK_RESOLVE / DEAL_SCORING: replay the last commit's events one by one.
        let mut st = tv19_state();
        let mut rng = Rng::from_u64(1);
        for (s, card) in [(1, "QH"), (2, "AS")] {
            let evs = Democratie::decide(&st, s, &commit(c(card)), &mut rng).unwrap();
            apply_all(&mut st, &evs);
        }
        let evs = Democratie::decide(&st, 0, &commit(c("5C")), &mut rng).unwrap();
        let mut seen = vec![];
        for e in &evs {
            Democratie::evolve(&mut st, e).unwrap();
            if st.phase != pb::Phase::TrickCommit {
                seen.push(st.phase);
                assert_eq!(rule_reason(Democratie::decide(&st, 0, &commit(c("9H")), &mut rng)), "WRONG_PHASE");
            }
        }
        assert!(seen.contains(&pb::Phase::TrickReveal) && seen.contains(&pb::Phase::TrickResolve));
        // A card already played in an earlier trick.
        assert_eq!(st.phase, pb::Phase::TrickCommit);
        assert_eq!(rule_reason(Democratie::decide(&st, 0, &commit(c("5C")), &mut rng)), "CARD_NOT_IN_HAND");
        // DEAL_SCORING and MATCH_END.
        let mut st = Democratie::initial(&config(3));
        st.phase = pb::Phase::DealScoring;
        assert_eq!(rule_reason(Democratie::decide(&st, 0, &commit(c("9H")), &mut rng)), "WRONG_PHASE");
        st.phase = pb::Phase::MatchEnd;
        assert_eq!(rule_reason(Democratie::decide(&st, 0, &commit(c("9H")), &mut rng)), "WRONG_PHASE");
    }

    #[test]
    fn tv21_day_and_deal_transitions_five_players() {
        let mut st = started(5, 21);
        let mut rng = Rng::from_u64(21);
        let dealer = st.dealer;
        assert_eq!(st.stock_slice().len(), 24);
        let mut day2_seen = false;
        loop {
            let seat = Democratie::to_act(&st).first().unwrap();
            let a = Democratie::bot_action(&st, seat, "random", &mut rng).unwrap();
            let evs = Democratie::decide(&st, seat, &a, &mut rng).unwrap();
            for e in &evs {
                let captured_before = st.captured;
                let phase_before = st.phase;
                Democratie::evolve(&mut st, e).unwrap();
                Democratie::check_invariants(&st).unwrap();
                match &e.kind {
                    Some(pb::event::Kind::DayDealt(d)) if d.day == 2 => {
                        assert_eq!(phase_before, pb::Phase::DayEnd);
                        assert_eq!(d.dealer, dealer as u32);
                        assert_eq!(d.stock_left, 0);
                        assert!(d.hands.iter().all(|h| h.count == 4));
                        assert_eq!(st.captured, captured_before);
                        day2_seen = true;
                    }
                    Some(pb::event::Kind::DealScored(_)) => {
                        assert_eq!(phase_before, pb::Phase::DealScoring);
                        assert!(day2_seen);
                    }
                    Some(pb::event::Kind::DeckShuffled(d)) => {
                        assert_eq!(phase_before, pb::Phase::MatchCheck);
                        assert_eq!(d.dealer, (dealer as u32 + 1) % 5);
                        assert_eq!(d.deck.len(), 48);
                        return;
                    }
                    Some(pb::event::Kind::MatchEnded(_)) => panic!("one deal cannot reach 7 tribes"),
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn tv22_five_and_six_of_trump_two_players() {
        let st = wins(2, "9C", &["5C", "6C"], 1, "5C 6C 9C");
        assert_eq!(suit_points(st.captured[1], 0), 6);
    }

    /// §4.3 pseudo-code, written as plainly as possible.
    fn reference_resolve(played: &[u8], trump: u8) -> Option<usize> {
        let is_trump = |c: u8| trump < 4 && !is_joker(c) && c / 12 == trump;
        let t: Vec<usize> = (0..played.len()).filter(|&i| is_trump(played[i])).collect();
        if !t.is_empty() {
            let five = t.iter().any(|&i| played[i].is_multiple_of(12));
            if let Some(&j) = t.iter().find(|&&j| played[j] % 12 == 11) {
                if five {
                    return Some(j);
                }
            }
            return t.iter().copied().max_by_key(|&i| strength(played[i]));
        }
        let m = played.iter().map(|&c| strength(c)).max().unwrap();
        let w: Vec<usize> = (0..played.len()).filter(|&i| strength(played[i]) == m).collect();
        if w.len() == 1 { Some(w[0]) } else { None }
    }

    #[test]
    fn resolve_trick_agrees_with_the_spec_pseudocode() {
        let mut rng = Rng::from_u64(12);
        for _ in 0..100_000 {
            let n = 2 + rng.index(5);
            let mut deck: Vec<u8> = (0..deck_size(n) as u8).collect();
            rng.shuffle(&mut deck);
            let trump = suit_of(deck[n]);
            let got = resolve_trick(&deck[..n], trump);
            assert_eq!(got.winner.map(|w| w as usize), reference_resolve(&deck[..n], trump), "{:?} trump {trump}", &deck[..n]);
        }
    }

    #[test]
    fn resolution_rules_not_in_the_vectors() {
        // AMB12: 5 and 6 of the same non-trump suit: the 5 wins.
        assert_eq!(resolve_trick(&[c("5H"), c("6H")], 0).winner, Some(0));
        // A lone 6 of trump beats everything else.
        assert_eq!(resolve_trick(&[c("5H"), c("6C"), X1], 0).winner, Some(1));
        // 5 of trump without the 6 beats other trumps.
        assert_eq!(resolve_trick(&[c("4C"), c("5C"), c("3C")], 0).winner, Some(1));
        // Three-way tie with a Joker.
        assert_eq!(resolve_trick(&[c("5S"), c("5H"), X1], 1).winner, None);
        // No trump suit at all (Joker vote).
        assert_eq!(resolve_trick(&[c("AH"), c("3C")], NO_TRUMP).winner, Some(1));
    }

    #[test]
    fn short_matches_end_on_the_deal_cap() {
        // With one deal max, some matches end on the cap.
        let mut opts = Options::new();
        opts.insert("target".into(), "1".into());
        opts.insert("max_deals".into(), "1".into());
        let config = Democratie::checked_config(4, &opts).unwrap();
        let mut capped = 0;
        for seed in 0..200 {
            let mut rep = conformance::Report::default();
            let p = conformance::play_checked::<Democratie>(&config, 4, seed, 50_000, &mut rep).unwrap();
            assert!(rep.violations.is_empty(), "{:?}", rep.violations);
            let o = Democratie::outcome(&p.state).unwrap();
            if o.aborted {
                capped += 1;
                assert!(o.winners.is_empty() && o.reason == "DEAL_CAP");
            } else {
                assert_eq!(o.winners.len(), 1);
            }
        }
        assert!(capped > 0);
    }

    /// Redistributes what `seat` may not see: other hands and their sealed commits, the stock
    /// and the unturned vote pile, keeping every zone's size.
    fn perturb(st: &State, seat: usize, rng: &mut Rng) -> State {
        let n = st.n();
        let mut pool: Vec<u8> = vec![];
        for i in (0..n).filter(|&i| i != seat) {
            pool.extend(cards_of(st.hands[i]));
            if st.commits[i] != NO_CARD {
                pool.push(st.commits[i]);
            }
        }
        pool.extend_from_slice(st.stock_slice());
        pool.extend_from_slice(&st.vote_pile[..st.vote_len as usize]);
        rng.shuffle(&mut pool);
        let mut it = pool.into_iter();
        let mut out = *st;
        for i in (0..n).filter(|&i| i != seat) {
            let k = st.hands[i].count_ones();
            out.hands[i] = (0..k).fold(0, |m, _| m | bit(it.next().unwrap()));
            if st.commits[i] != NO_CARD {
                out.commits[i] = it.next().unwrap();
            }
        }
        for k in st.stock_pos as usize..st.stock_end as usize {
            out.stock[k] = it.next().unwrap();
        }
        for k in 0..st.vote_len as usize {
            out.vote_pile[k] = it.next().unwrap();
        }
        assert!(it.next().is_none());
        Democratie::check_invariants(&out).unwrap();
        out
    }

    fn redacted_bytes(evs: &[pb::Event], v: Viewer) -> Vec<Vec<u8>> {
        evs.iter().filter_map(|e| Democratie::redact(e, v)).map(|e| e.encode_to_vec()).collect()
    }

    #[test]
    fn hidden_information_property() {
        let mut checked = 0;
        for n in 2..=6u32 {
            for seed in 0..60u64 {
                let mut rng = Rng::from_u64(seed * 31 + n as u64);
                let mut st = started(n, seed);
                let steps = rng.index(60);
                for _ in 0..steps {
                    let awaited = Democratie::to_act(&st);
                    if awaited.is_empty() {
                        break;
                    }
                    let seat = awaited.nth(rng.index(awaited.len())).unwrap();
                    let a = Democratie::bot_action(&st, seat, "random", &mut rng).unwrap();
                    let evs = Democratie::decide(&st, seat, &a, &mut rng).unwrap();
                    apply_all(&mut st, &evs);
                }
                if st.phase != pb::Phase::TrickCommit {
                    continue;
                }
                for s in 0..n as usize {
                    let copy = perturb(&st, s, &mut rng);
                    for v in [Viewer::Seat(s as Seat), Viewer::Spectator] {
                        assert_eq!(Democratie::view(&st, v).encode_to_vec(), Democratie::view(&copy, v).encode_to_vec());
                        assert_eq!(Democratie::render(&st, v), Democratie::render(&copy, v));
                    }
                    // What s may see is in its view.
                    let view = Democratie::view(&st, Viewer::Seat(s as Seat));
                    assert_eq!(view.hand, mask_to_pb(st.hands[s]));
                    assert_eq!(view.my_commit, to_pb(st.commits[s]));
                    assert_eq!(view.vote_card, to_pb(st.vote_card));
                    assert_eq!(view.discard, mask_to_pb(st.discard));
                    assert!(view.hidden.is_none());
                    // The next public action: a commit that is not the last one.
                    let awaited = Democratie::to_act(&st);
                    if awaited.len() < 2 {
                        continue;
                    }
                    for t in awaited.iter() {
                        let k = rng.index(st.hands[t as usize].count_ones() as usize);
                        let pick = |x: &State| cards_of(x.hands[t as usize]).nth(k).unwrap();
                        let ea = Democratie::decide(&st, t, &commit(pick(&st)), &mut Rng::from_u64(5)).unwrap();
                        let eb = Democratie::decide(&copy, t, &commit(pick(&copy)), &mut Rng::from_u64(5)).unwrap();
                        assert_eq!(redacted_bytes(&ea, Viewer::Seat(s as Seat)), redacted_bytes(&eb, Viewer::Seat(s as Seat)));
                        assert_eq!(redacted_bytes(&ea, Viewer::Spectator), redacted_bytes(&eb, Viewer::Spectator));
                        let mut a2 = st;
                        let mut b2 = copy;
                        apply_all(&mut a2, &ea);
                        apply_all(&mut b2, &eb);
                        assert_eq!(
                            Democratie::view(&a2, Viewer::Seat(s as Seat)).encode_to_vec(),
                            Democratie::view(&b2, Viewer::Seat(s as Seat)).encode_to_vec()
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 500, "only {checked} checks");
    }

    #[test]
    fn redacted_commit_is_byte_identical_whatever_the_card() {
        let st = started(4, 8);
        let seat = Democratie::to_act(&st).first().unwrap();
        let mut seen: Vec<Vec<u8>> = vec![];
        for a in Democratie::legal_actions(&st, seat) {
            let evs = Democratie::decide(&st, seat, &a, &mut Rng::from_u64(0)).unwrap();
            for v in (0..4).filter(|&x| x != seat).map(Viewer::Seat).chain([Viewer::Spectator]) {
                let b = redacted_bytes(&evs, v);
                assert_eq!(b.len(), 1);
                seen.push(b[0].clone());
            }
            let own = redacted_bytes(&evs, Viewer::Seat(seat));
            assert_ne!(own[0], seen[0], "the owner sees its card");
        }
        assert!(seen.windows(2).all(|w| w[0] == w[1]));
    }

    #[test]
    fn deal_events_hide_other_hands_and_deck_order() {
        let mut rng = Rng::from_u64(77);
        for n in 2..=6u32 {
            let st = Democratie::initial(&config(n));
            let evs = Democratie::start(&st, &mut Rng::from_u64(n as u64)).unwrap();
            for e in &evs {
                let mut other = e.clone();
                match &mut other.kind {
                    Some(pb::event::Kind::DeckShuffled(d)) => d.deck.reverse(),
                    Some(pb::event::Kind::DayDealt(d)) => {
                        // Swap cards among every hand but seat 0's and the vote pile.
                        let mut pool: Vec<i32> = d.vote_pile.clone();
                        for h in &d.hands[1..] {
                            pool.extend(&h.cards);
                        }
                        rng.shuffle(&mut pool);
                        let mut it = pool.into_iter();
                        for v in d.vote_pile.iter_mut() {
                            *v = it.next().unwrap();
                        }
                        for h in &mut d.hands[1..] {
                            let mut cs: Vec<i32> = (0..h.cards.len()).map(|_| it.next().unwrap()).collect();
                            cs.sort();
                            h.cards = cs;
                        }
                    }
                    _ => {}
                }
                for v in [Viewer::Seat(0), Viewer::Spectator] {
                    assert_eq!(redacted_bytes(std::slice::from_ref(e), v), redacted_bytes(&[other.clone()], v));
                }
                if let Some(pb::event::Kind::DayDealt(d)) = &Democratie::redact(e, Viewer::Seat(0)).unwrap().kind {
                    assert_eq!(d.hands[0].cards.len(), d.hands[0].count as usize);
                    assert!(d.hands[1..].iter().all(|h| h.cards.is_empty()) && d.vote_pile.is_empty());
                }
            }
        }
    }

    #[test]
    fn malformed_and_illegal_input_is_refused_without_panic() {
        let st = started(3, 2);
        let mut rng = Rng::from_u64(0);
        let held = cards_of(st.hands[0]).next().unwrap();
        assert!(matches!(Democratie::decide(&st, 3, &commit(held), &mut rng), Err(CoreError::Malformed(_))));
        assert!(matches!(Democratie::decide(&st, u32::MAX, &commit(held), &mut rng), Err(CoreError::Malformed(_))));
        assert!(matches!(Democratie::decide(&st, 0, &pb::Action { kind: None }, &mut rng), Err(CoreError::Malformed(_))));
        for code in [0, -1, 51, i32::MAX, i32::MIN] {
            let a = pb::Action { kind: Some(pb::action::Kind::CommitCard(pb::CommitCard { card: code })) };
            assert!(matches!(Democratie::decide(&st, 0, &a, &mut rng), Err(CoreError::Malformed(_))), "{code}");
        }
        // A Joker that is not in a 3-player deck is simply not in hand.
        assert_eq!(rule_reason(Democratie::decide(&st, 0, &commit(X1), &mut rng)), "CARD_NOT_IN_HAND");
        // Another seat's card: same error as any other missing card.
        let theirs = cards_of(st.hands[1]).next().unwrap();
        assert_eq!(
            Democratie::decide(&st, 0, &commit(theirs), &mut rng).unwrap_err(),
            Democratie::decide(&st, 0, &commit(X2), &mut rng).unwrap_err()
        );
        // Before the start.
        let fresh = Democratie::initial(&config(3));
        assert_eq!(rule_reason(Democratie::decide(&fresh, 0, &commit(held), &mut rng)), "WRONG_PHASE");
        assert!(Democratie::to_act(&fresh).is_empty() && Democratie::legal_actions(&fresh, 0).is_empty());
        assert!(Democratie::legal_actions(&st, 9).is_empty());
        assert!(Democratie::start(&st, &mut rng).is_err());
        // Bad events are Corrupt and leave the state as it was.
        let bad = [
            pb::Event { kind: None },
            ev(pb::event::Kind::CardCommitted(pb::CardCommitted { seat: 9, card: to_pb(held) })),
            ev(pb::event::Kind::CardCommitted(pb::CardCommitted { seat: 0, card: 0 })),
            ev(pb::event::Kind::CardCommitted(pb::CardCommitted { seat: 0, card: 999 })),
            ev(pb::event::Kind::CardCommitted(pb::CardCommitted { seat: 0, card: to_pb(theirs) })),
            ev(pb::event::Kind::TrickResolved(pb::TrickResolved::default())),
            ev(pb::event::Kind::DayDealt(pb::DayDealt::default())),
            ev(pb::event::Kind::DeckShuffled(pb::DeckShuffled { deck: vec![1; 48], deck_size: 48, deal_no: 1, ..Default::default() })),
            ev(pb::event::Kind::MatchEnded(pb::MatchEnded::default())),
            ev(pb::event::Kind::MatchStarted(pb::MatchStarted::default())),
            ev(pb::event::Kind::VoteCardFlipped(pb::VoteCardFlipped::default())),
            ev(pb::event::Kind::DealScored(pb::DealScored::default())),
        ];
        for e in &bad {
            let mut s2 = st;
            assert!(matches!(Democratie::evolve(&mut s2, e), Err(CoreError::Corrupt(_))), "{e:?}");
            assert_eq!(s2, st);
        }
        // A stored deal that disagrees with the shuffle is refused on replay.
        let mut st0 = Democratie::initial(&config(3));
        let mut evs = Democratie::start(&st0, &mut Rng::from_u64(3)).unwrap();
        if let Some(pb::event::Kind::DayDealt(d)) = &mut evs[2].kind {
            d.hands.swap(0, 1);
        }
        Democratie::evolve(&mut st0, &evs[0]).unwrap();
        Democratie::evolve(&mut st0, &evs[1]).unwrap();
        assert!(matches!(Democratie::evolve(&mut st0, &evs[2]), Err(CoreError::Corrupt(_))));
    }

    #[test]
    fn options_are_checked() {
        let mut o = Options::new();
        assert_eq!(Democratie::checked_config(4, &o).unwrap(), Config { seats: 4, target: 7, max_deals: 200 });
        assert!(matches!(Democratie::checked_config(1, &o), Err(CoreError::InvalidOption(_))));
        assert!(matches!(Democratie::checked_config(7, &o), Err(CoreError::InvalidOption(_))));
        o.insert("target".into(), "10".into());
        assert_eq!(Democratie::checked_config(2, &o).unwrap().target, 10);
        for bad in ["0", "-3", "abc", "1001", ""] {
            o.insert("target".into(), bad.into());
            assert!(matches!(Democratie::checked_config(2, &o), Err(CoreError::InvalidOption(_))), "{bad}");
        }
        let mut o = Options::new();
        o.insert("max_deals".into(), "0".into());
        assert!(matches!(Democratie::checked_config(2, &o), Err(CoreError::InvalidOption(_))));
        let mut o = Options::new();
        o.insert("jokers".into(), "2".into());
        let Err(CoreError::InvalidOption(m)) = Democratie::checked_config(2, &o) else { panic!() };
        assert!(m.contains("jokers"));
    }

    #[test]
    fn bots_play_legal_moves_and_tactician_beats_random() {
        let mut wins = 0;
        let games = 150;
        for seed in 0..games {
            let mut st = started(3, seed);
            let mut rng = Rng::from_u64(seed);
            while Democratie::outcome(&st).is_none() {
                let seat = Democratie::to_act(&st).first().unwrap();
                let bot = if seat == 0 { "tactician" } else { "random" };
                let a = Democratie::bot_action(&st, seat, bot, &mut rng).unwrap();
                assert!(Democratie::legal_actions(&st, seat).contains(&a));
                let evs = Democratie::decide(&st, seat, &a, &mut rng).unwrap();
                apply_all(&mut st, &evs);
            }
            if Democratie::outcome(&st).unwrap().winners == vec![0] {
                wins += 1;
            }
        }
        eprintln!("tactician won {wins} of {games} three-player matches against two random bots");
        // Random play would win about a third of the matches.
        assert!(wins * 100 / games > 50, "tactician won {wins} of {games}");
        assert!(Democratie::bot_action(&started(3, 1), 0, "nope", &mut Rng::from_u64(0)).is_err());
    }

    #[test]
    fn registered_and_driven_through_protobuf_bytes() {
        let g = crate::registry::find("democratie").unwrap();
        assert_eq!(g.info().bots, vec!["random", "tactician"]);
        assert!(g.new_match(7, &Options::new()).is_err());
        let mut m = g.new_match(4, &Options::new()).unwrap();
        for e in m.start(&mut Rng::from_u64(1)).unwrap() {
            m.apply(&e.payload).unwrap();
        }
        let seat = m.to_act()[0];
        assert!(matches!(m.decide(seat, &[0xff, 0xff, 0xff], &mut Rng::from_u64(2)), Err(CoreError::Malformed(_))));
        assert!(matches!(m.decide(9, &[], &mut Rng::from_u64(2)), Err(CoreError::Malformed(_))));
        let a = m.bot_action(seat, "tactician", &mut Rng::from_u64(2)).unwrap();
        let evs = m.decide(seat, &a, &mut Rng::from_u64(2)).unwrap();
        assert_eq!(evs[0].kind, "card_committed");
        let other = (seat + 1) % 4;
        let red = m.redact(&evs[0].payload, Viewer::Seat(other)).unwrap().unwrap();
        assert_eq!(red, ev(pb::event::Kind::CardCommitted(pb::CardCommitted { seat, card: 0 })).encode_to_vec());
        for e in &evs {
            m.apply(&e.payload).unwrap();
        }
        assert!(!m.view(Viewer::Seat(other)).unwrap().is_empty());
        assert!(m.render(Viewer::Spectator).unwrap().contains("[##]"));
    }

    #[test]
    fn render_and_views_by_viewer() {
        let st = started(4, 3);
        let r0 = Democratie::render(&st, Viewer::Seat(0));
        let ra = Democratie::render(&st, Viewer::Auditor);
        let first = card_name(cards_of(st.hands[1]).next().unwrap());
        assert!(ra.contains(&first));
        assert!(r0.contains("5 cards"));
        let va = Democratie::view(&st, Viewer::Auditor);
        let h = va.hidden.unwrap();
        assert_eq!(h.stock.len(), 25);
        assert_eq!(h.hands.len(), 4);
    }

    #[test]
    fn batched_indices_are_uniform_and_shuffle_is_a_permutation() {
        let mut rng = Rng::from_u64(3);
        let mut counts = [[0u32; 7]; 3];
        let bounds = [3u8, 5, 7];
        let draws = 70_000;
        for _ in 0..draws {
            let mut out = [0u8; 3];
            batched_indices(&mut rng, &bounds, &mut out);
            for k in 0..3 {
                assert!(out[k] < bounds[k]);
                counts[k][out[k] as usize] += 1;
            }
        }
        for k in 0..3 {
            let expect = draws as f64 / bounds[k] as f64;
            for v in 0..bounds[k] as usize {
                assert!((counts[k][v] as f64 - expect).abs() < expect * 0.05, "{counts:?}");
            }
        }
        // Where the first card lands after a shuffle is uniform too.
        let mut pos = [0u32; 48];
        for _ in 0..24_000 {
            let mut deck: Vec<u8> = (0..48).collect();
            ShufflePlan::new(48).shuffle(&mut rng, &mut deck);
            let mut sorted = deck.clone();
            sorted.sort();
            assert_eq!(sorted, (0..48).collect::<Vec<u8>>());
            pos[deck.iter().position(|&c| c == 0).unwrap()] += 1;
        }
        assert!(pos.iter().all(|&p| p > 380 && p < 620), "{pos:?}");
    }

    #[test]
    fn fast_simulation_agrees_with_the_decider_on_match_length() {
        // Same rules, two code paths: the mean number of deals of random matches must agree.
        let n = 3u32;
        let matches = 400;
        let mut rng = Rng::from_u64(5);
        let cfg = config(n);
        let fast: u32 = (0..matches).map(|_| simulate_random_match(&cfg, &mut rng).1).sum();
        let mut slow = 0u32;
        for seed in 0..matches as u64 {
            let mut st = started(n, seed);
            while Democratie::outcome(&st).is_none() {
                let seat = Democratie::to_act(&st).first().unwrap();
                let a = Democratie::bot_action(&st, seat, "random", &mut rng).unwrap();
                let evs = Democratie::decide(&st, seat, &a, &mut rng).unwrap();
                for e in &evs {
                    Democratie::evolve(&mut st, e).unwrap();
                }
            }
            slow += st.deal_no;
        }
        let (f, s) = (fast as f64 / matches as f64, slow as f64 / matches as f64);
        assert!((f - s).abs() < 0.6, "fast {f} deals per match, decider {s}");
    }

    #[test]
    fn fast_simulation_finishes() {
        let mut rng = Rng::from_u64(1);
        for n in 2..=6u8 {
            let cfg = Config { seats: n, target: 7, max_deals: 200 };
            for _ in 0..50 {
                let (w, deals) = simulate_random_match(&cfg, &mut rng);
                assert!(w.is_some() && deals >= 2);
            }
        }
    }
}
