//! The fast simulation: a whole random match on compact arrays, without events (the hot path
//! of the benchmark).

use super::cards::{
    bit, day_size, deck_size, match_check, resolve_trick, suit_of, suit_points, MatchCheck,
    MAX_SEATS,
};

use super::state::Config;
use crate::rng::Rng;

/// Several uniform indices from one 64-bit draw ("batched ranged random integers",
/// Brackett-Rozinsky & Lemire 2024): `out[k]` is uniform in `0..bounds[k]`, all independent.
/// Multiplying the leftover low word by each bound in turn is exactly one Lemire draw below
/// the product of the bounds written in mixed radix, so the product's rejection test makes
/// it exact. The product must fit in a `u64`.
pub(super) fn batched_indices(rng: &mut Rng, bounds: &[u8], out: &mut [u8]) {
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
pub(super) struct ShufflePlan {
    bounds: [u8; 64],
    /// End of each batch in `bounds`.
    ends: [u8; 8],
    batches: usize,
}

impl ShufflePlan {
    pub(super) fn new(len: usize) -> Self {
        let mut plan = ShufflePlan {
            bounds: [0; 64],
            ends: [0; 8],
            batches: 0,
        };
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
    pub(super) fn shuffle(&self, rng: &mut Rng, deck: &mut [u8]) {
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
                    Some(w) => {
                        captured[w as usize] |= played[..n].iter().fold(bit(v), |a, &c| a | bit(c))
                    }
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
