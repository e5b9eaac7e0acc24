//! The configuration and its options, the match state, and applying events to it
//! (`evolve`), with the invariants the state keeps.

use super::cards::*;

use super::wire::{from_pb, pb_to_mask, to_pb, trump_pb};
use crate::error::{ensure, CoreError, CoreResult};
use crate::game::OptionSpec;
use crate::proto::democratie as pb;

// ------------------------------------------------------------------ config and state

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub seats: u8,
    pub target: u32,
    pub max_deals: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LastTrick {
    pub(super) day: u8,
    pub(super) trick_no: u8,
    pub(super) vote: u8,
    pub(super) trump: u8,
    pub(super) played: [u8; MAX_SEATS],
    /// `NOBODY` on a tie.
    pub(super) winner: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    pub(super) cfg: Config,
    pub(super) phase: pb::Phase,
    pub(super) dealer: u8,
    pub(super) deal_no: u32,
    pub(super) day: u8,
    pub(super) trick_no: u8,
    /// Undealt cards: `stock[stock_pos..stock_end]`, top first.
    pub(super) stock: [u8; 50],
    pub(super) stock_pos: u8,
    pub(super) stock_end: u8,
    /// Vote pile bottom to top: `vote_pile[..vote_len]`.
    pub(super) vote_pile: [u8; 8],
    pub(super) vote_len: u8,
    pub(super) vote_card: u8,
    pub(super) trump: u8,
    pub(super) hands: [u64; MAX_SEATS],
    pub(super) commits: [u8; MAX_SEATS],
    pub(super) captured: [u64; MAX_SEATS],
    pub(super) discard: u64,
    pub(super) tribes: [u32; MAX_SEATS],
    pub(super) last_trick: Option<LastTrick>,
    pub(super) winner: u8,
    pub(super) aborted: bool,
    /// The winners (a seat mask) when a timed-out seat forfeited (match clocks, §11), else 0.
    pub(super) forfeit_winners: u8,
}

impl State {
    pub(super) fn n(&self) -> usize {
        self.cfg.seats as usize
    }
    /// The table after `day_dealt`: `h` cards to every seat and to the vote pile.
    pub(super) fn day_dealt(&mut self, day: u8, h: usize, hands: [u64; MAX_SEATS], vote: [u8; 8]) {
        self.hands = hands;
        self.vote_pile = vote;
        self.vote_len = h as u8;
        self.stock_pos += ((self.n() + 1) * h) as u8;
        self.day = day;
        self.trick_no = 1;
        self.phase = pb::Phase::TrickFlip;
    }
    pub(super) fn stock_slice(&self) -> &[u8] {
        &self.stock[self.stock_pos as usize..self.stock_end as usize]
    }
    fn all_committed(&self) -> bool {
        self.commits[..self.n()].iter().all(|&c| c != NO_CARD)
    }
    /// Cards every seat has seen revealed in this deal (AMB20).
    pub(super) fn revealed_this_deal(&self) -> u64 {
        self.captured[..self.n()]
            .iter()
            .fold(self.discard, |a, &m| a | m)
    }
}

const DEFAULT_TARGET: u32 = 7;
const DEFAULT_MAX_DEALS: u32 = 200;

pub(super) fn options() -> Vec<OptionSpec> {
    vec![
        OptionSpec::int(
            "target",
            "Tribes to win",
            DEFAULT_TARGET,
            1,
            1000,
            "How many tribes win the match (usually 5, 7 or 10; 1 to 1000). The player with the \
             most tribes at or above it wins; equal leaders play on. Default: 7.",
        ),
        OptionSpec::int(
            "max_deals",
            "Deals before the match stops",
            DEFAULT_MAX_DEALS,
            1,
            100_000,
            "Safety limit: after this many deals without a winner the match is stopped, with \
             no winner (1 to 100000). Default: 200.",
        ),
    ]
}

pub(super) fn initial(config: &Config) -> State {
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

// ------------------------------------------------------------------ events

/// Applies one event. With `CHECK` every recorded result is recomputed and compared (stored
/// events, `evolve`). Without it the comparisons are skipped: that is for the scratch state
/// inside `decide`/`start`, whose events were built from that very state one line earlier, so
/// checking them there only doubled the cost of every command; the caller's `evolve` still
/// checks them.
pub(super) fn evolve_state<const CHECK: bool>(st: &mut State, event: &pb::Event) -> CoreResult<()> {
    use pb::event::Kind as K;
    use pb::Phase as P;
    let n = st.n();
    let Some(kind) = &event.kind else {
        return Err(CoreError::corrupt("event without kind"));
    };
    match kind {
        K::MatchStarted(e) => {
            ensure(
                !CHECK || st.phase == P::MatchSetup,
                "match_started after the start",
            )?;
            ensure(
                !CHECK
                    || e.seats as usize == n
                        && e.target == st.cfg.target
                        && e.max_deals == st.cfg.max_deals,
                "match_started does not match the configuration",
            )?;
            ensure(
                !CHECK || (e.first_dealer as usize) < n,
                "first dealer out of range",
            )?;
            st.dealer = e.first_dealer as u8;
            st.deal_no = 0;
            st.phase = P::DealSetup;
        }
        K::DeckShuffled(e) => {
            let dealer = match st.phase {
                P::DealSetup => st.dealer,
                P::MatchCheck => {
                    ensure(
                        !CHECK
                            || match_check(
                                &st.tribes[..n],
                                st.cfg.target,
                                st.deal_no,
                                st.cfg.max_deals,
                            ) == MatchCheck::Continue,
                        "deck_shuffled after a decided match",
                    )?;
                    ((st.dealer as usize + 1) % n) as u8
                }
                _ => return Err(CoreError::corrupt("deck_shuffled in the wrong phase")),
            };
            ensure(
                !CHECK || e.dealer == dealer as u32,
                "deck_shuffled with the wrong dealer",
            )?;
            ensure(
                !CHECK || e.deal_no == st.deal_no + 1,
                "deck_shuffled with the wrong deal number",
            )?;
            let size = deck_size(n);
            ensure(
                !CHECK || e.deck_size as usize == size && e.deck.len() == size,
                "deck_shuffled with a wrong deck size",
            )?;
            ensure(
                !CHECK || pb_to_mask(&e.deck) == Some(deck_mask(n)),
                "deck_shuffled is not a permutation of the deck",
            )?;
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
            ensure(
                !CHECK
                    || e.day == day as u32
                        && e.deal_no == st.deal_no
                        && e.dealer == st.dealer as u32,
                "day_dealt with the wrong day, deal or dealer",
            )?;
            let h = day_size(n, day);
            let need = (n + 1) * h;
            let stock = st.stock_slice();
            ensure(
                !CHECK || stock.len() >= need,
                "day_dealt with too few cards in stock",
            )?;
            let (hands, vote) = deal_day(stock, n, st.dealer as usize, h);
            ensure(
                !CHECK || e.hands.len() == n,
                "day_dealt with the wrong number of hands",
            )?;
            for (i, hand) in e.hands.iter().enumerate() {
                ensure(
                    !CHECK || hand.seat as usize == i && hand.count as usize == h,
                    "day_dealt hand header",
                )?;
                ensure(
                    !CHECK || pb_to_mask(&hand.cards) == Some(hands[i]) && hand.cards.len() == h,
                    "day_dealt hand differs from the stock",
                )?;
            }
            ensure(
                !CHECK || e.vote_pile_count as usize == h && e.vote_pile.len() == h,
                "day_dealt vote pile size",
            )?;
            ensure(
                !CHECK
                    || e.vote_pile
                        .iter()
                        .zip(&vote[..h])
                        .all(|(&p, &c)| p == to_pb(c)),
                "day_dealt vote pile differs",
            )?;
            ensure(
                !CHECK || e.stock_left as usize == stock.len() - need,
                "day_dealt stock count",
            )?;
            st.day_dealt(day, h, hands, vote);
        }
        K::VoteCardFlipped(e) => {
            ensure(
                !CHECK || st.phase == P::TrickFlip && st.vote_len > 0,
                "vote_card_flipped in the wrong phase",
            )?;
            let top = st.vote_pile[st.vote_len as usize - 1];
            ensure(
                !CHECK || e.card == to_pb(top),
                "vote_card_flipped is not the top of the vote pile",
            )?;
            ensure(
                !CHECK || e.trump == trump_pb(suit_of(top)),
                "vote_card_flipped with the wrong trump",
            )?;
            ensure(
                !CHECK
                    || e.day == st.day as u32
                        && e.trick_no == st.trick_no as u32
                        && e.vote_pile_left + 1 == st.vote_len as u32,
                "vote_card_flipped counters",
            )?;
            st.vote_len -= 1;
            st.vote_card = top;
            st.trump = suit_of(top);
            st.commits = [NO_CARD; MAX_SEATS];
            st.phase = P::TrickCommit;
        }
        K::CardCommitted(e) => {
            ensure(
                !CHECK || st.phase == P::TrickCommit,
                "card_committed in the wrong phase",
            )?;
            let s = e.seat as usize;
            ensure(!CHECK || s < n, "card_committed seat out of range")?;
            let c = from_pb(e.card)
                .ok_or_else(|| CoreError::corrupt("card_committed without a card"))?;
            ensure(!CHECK || st.commits[s] == NO_CARD, "card_committed twice")?;
            ensure(
                !CHECK || st.hands[s] & bit(c) != 0,
                "card_committed card not in hand",
            )?;
            st.hands[s] &= !bit(c);
            st.commits[s] = c;
            if st.all_committed() {
                st.phase = P::TrickReveal;
            }
        }
        K::TrickRevealed(e) => {
            ensure(
                !CHECK || st.phase == P::TrickReveal,
                "trick_revealed in the wrong phase",
            )?;
            ensure(
                !CHECK || e.day == st.day as u32 && e.trick_no == st.trick_no as u32,
                "trick_revealed counters",
            )?;
            ensure(
                !CHECK || e.vote_card == to_pb(st.vote_card) && e.trump == trump_pb(st.trump),
                "trick_revealed vote card",
            )?;
            ensure(
                !CHECK
                    || e.played.len() == n
                        && e.played
                            .iter()
                            .zip(&st.commits[..n])
                            .all(|(&p, &c)| p == to_pb(c)),
                "trick_revealed cards differ from the commits",
            )?;
            st.phase = P::TrickResolve;
        }
        K::TrickResolved(e) => {
            ensure(
                !CHECK || st.phase == P::TrickResolve,
                "trick_resolved in the wrong phase",
            )?;
            ensure(
                !CHECK
                    || e.day == st.day as u32
                        && e.trick_no == st.trick_no as u32
                        && e.vote_card == to_pb(st.vote_card),
                "trick_resolved counters",
            )?;
            // Unchecked, the event was built from this very resolution one step earlier.
            let result = if CHECK {
                let out = resolve_trick(&st.commits[..n], st.trump);
                ensure(
                    e.tie == out.winner.is_none()
                        && e.trump_trick == out.trump_trick
                        && e.five_six_rule == out.five_six,
                    "trick_resolved result differs",
                )?;
                ensure(
                    out.winner.is_none_or(|w| e.winner == w as u32),
                    "trick_resolved winner differs",
                )?;
                out.winner
            } else {
                (!e.tie).then_some(e.winner as u8)
            };
            let mut winner = NOBODY;
            match result {
                Some(w) => {
                    let all = st.commits[..n]
                        .iter()
                        .fold(bit(st.vote_card), |a, &c| a | bit(c));
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
            ensure(
                !CHECK || st.phase == P::DealScoring,
                "deal_scored in the wrong phase",
            )?;
            ensure(
                !CHECK || e.deal_no == st.deal_no && e.seats.len() == n,
                "deal_scored header",
            )?;
            ensure(
                !CHECK || pb_to_mask(&e.discard) == Some(st.discard),
                "deal_scored discard differs",
            )?;
            let mut gained = [0u8; MAX_SEATS];
            for (i, s) in e.seats.iter().enumerate() {
                let (p, g) = score_pile(st.captured[i]);
                ensure(
                    !CHECK
                        || s.seat as usize == i && pb_to_mask(&s.captured) == Some(st.captured[i]),
                    "deal_scored pile differs",
                )?;
                ensure(
                    !CHECK
                        || s.points.len() == 4
                            && s.points.iter().zip(p).all(|(&a, b)| a == b as u32),
                    "deal_scored points differ",
                )?;
                ensure(
                    !CHECK
                        || s.tribes_gained == g as u32 && s.tribes_total == st.tribes[i] + g as u32,
                    "deal_scored tribes differ",
                )?;
                gained[i] = g;
            }
            for (t, g) in st.tribes.iter_mut().zip(gained) {
                *t += g as u32;
            }
            st.phase = P::MatchCheck;
        }
        K::MatchEnded(e) if e.reason == REASON_FORFEIT => {
            // A seat awaited for its commit forfeited (§11): the best of the others win.
            ensure(
                st.phase == P::TrickCommit && !e.aborted,
                "a forfeit while no commit is awaited",
            )?;
            ensure(
                e.tribes.len() == n && e.tribes.iter().zip(&st.tribes[..n]).all(|(a, b)| a == b),
                "match_ended tribes differ",
            )?;
            let won = e.winners.iter().try_fold(0u8, |m, &w| {
                if (w as usize) < n {
                    Some(m | 1 << w)
                } else {
                    None
                }
            });
            let fits = |f: usize| st.commits[f] == NO_CARD && won == Some(forfeit_winners(st, f));
            ensure(
                (0..n).any(fits),
                "match_ended winners do not follow a forfeit",
            )?;
            st.forfeit_winners = won.unwrap_or(0);
            st.phase = P::MatchEnd;
        }
        K::MatchEnded(e) => {
            ensure(
                !CHECK || st.phase == P::MatchCheck,
                "match_ended in the wrong phase",
            )?;
            ensure(
                !CHECK
                    || e.tribes.len() == n
                        && e.tribes.iter().zip(&st.tribes[..n]).all(|(a, b)| a == b),
                "match_ended tribes differ",
            )?;
            match match_check(&st.tribes[..n], st.cfg.target, st.deal_no, st.cfg.max_deals) {
                MatchCheck::Winner(w) => {
                    ensure(
                        !CHECK
                            || e.winners == [w as u32]
                                && !e.aborted
                                && e.reason == "TARGET_REACHED",
                        "match_ended winner differs",
                    )?;
                    st.winner = w;
                }
                MatchCheck::Cap => {
                    ensure(
                        !CHECK || e.winners.is_empty() && e.aborted && e.reason == "DEAL_CAP",
                        "match_ended cap differs",
                    )?;
                    st.aborted = true;
                }
                MatchCheck::Continue => {
                    return Err(CoreError::corrupt("match_ended while the match goes on"))
                }
            }
            st.phase = P::MatchEnd;
        }
    }
    Ok(())
}

// ------------------------------------------------------------------ invariants

pub(super) fn check_invariants(st: &State) -> Result<(), String> {
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
        let expect = if st.day == 1 {
            (n + 1) * day_size(n, 2)
        } else {
            0
        };
        if left != expect {
            return Err(format!(
                "stock holds {left} cards on day {}, expected {expect}",
                st.day
            ));
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

/// The reason of a match ended by a forfeit (§11).
pub(super) const REASON_FORFEIT: &str = "FORFEIT";

/// The winners (a seat mask) when `seat` forfeits (§11): the highest tribe total among the
/// other seats (§6.2). The tie-break of §6.2 plays further deals, which a forfeit ends: tied
/// seats share the win.
pub(super) fn forfeit_winners(st: &State, seat: usize) -> u8 {
    let others = (0..st.n()).filter(|&s| s != seat);
    let best = others.clone().map(|s| st.tribes[s]).max().unwrap_or(0);
    others
        .filter(|&s| st.tribes[s] == best)
        .fold(0u8, |m, s| m | 1 << s)
}
