//! Deterministic randomness. The RNG of a command is a ChaCha20 stream keyed by the match's
//! secret seed, with the stream number set to the seq the command appends at; an auditor who
//! learns the seed after the match can re-derive every random outcome.
//!
//! Sampling is written here (not taken from `rand`) so that the same seed gives the same
//! match whatever version of a sampling library is in use.

use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

pub struct Rng(ChaCha20Rng);

impl Rng {
    /// The RNG for the command that appends its first event at `seq`.
    pub fn for_command(seed: &[u8; 32], seq: u64) -> Self {
        let mut r = ChaCha20Rng::from_seed(*seed);
        r.set_stream(seq);
        Rng(r)
    }

    /// A free-running RNG for simulations and benchmarks.
    pub fn from_u64(n: u64) -> Self {
        Rng(ChaCha20Rng::seed_from_u64(n))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform integer in `0..n` (`n > 0`), unbiased (Lemire's multiply-and-reject). The
    /// rejection threshold `2^64 mod n` is below `n`, so it is computed (a division) only when
    /// the low half falls below `n`, which is rare; the values drawn are the same either way.
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let n = n.max(1);
        let mut m = (self.0.next_u64() as u128) * (n as u128);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = (self.0.next_u64() as u128) * (n as u128);
            }
        }
        (m >> 64) as u64
    }

    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// Fisher-Yates shuffle.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.index(i + 1);
            items.swap(i, j);
        }
    }

    /// Fisher-Yates as [`Rng::shuffle`], drawing 32 bits at a time: each 64-bit word gives two
    /// draws, low half first, each an unbiased 32-bit multiply-and-reject (Lemire) for
    /// `i + 1`; a rejected half is skipped. Half the ChaCha output of `shuffle` for a deck
    /// (Rat-a-Tat Cat's). Slices shorter than 2^32 only.
    pub fn shuffle32<T>(&mut self, items: &mut [T]) {
        debug_assert!(items.len() <= u32::MAX as usize);
        let mut buf = 0u64;
        let mut have = 0u32;
        for i in (1..items.len()).rev() {
            let n = (i + 1) as u32;
            let j = loop {
                if have == 0 {
                    buf = self.0.next_u64();
                    have = 2;
                }
                let x = buf as u32;
                buf >>= 32;
                have -= 1;
                let m = x as u64 * n as u64;
                let low = m as u32;
                if low < n && low < n.wrapping_neg() % n {
                    continue;
                }
                break (m >> 32) as usize;
            };
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_seq_same_stream_other_seq_other_stream() {
        let seed = [7u8; 32];
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::for_command(&seed, 3);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::for_command(&seed, 3);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::for_command(&seed, 4);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    /// Lemire's method as published: the threshold first, then multiply and reject.
    fn below_reference(r: &mut Rng, n: u64) -> u64 {
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = (r.next_u64() as u128) * (n as u128);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    #[test]
    fn below_draws_what_the_published_method_draws() {
        // Small bounds (cards, seats) and bounds near 2^63 where half the draws are rejected.
        let bounds = [
            1,
            2,
            3,
            7,
            54,
            108,
            1 << 32,
            (1 << 63) + 1,
            u64::MAX - 1,
            u64::MAX,
        ];
        let (mut a, mut b) = (Rng::from_u64(9), Rng::from_u64(9));
        for i in 0..20_000 {
            let n = bounds[i % bounds.len()];
            assert_eq!(
                a.below(n),
                below_reference(&mut b, n),
                "bound {n}, draw {i}"
            );
        }
    }

    #[test]
    fn below_stays_in_range_and_hits_every_value() {
        let mut r = Rng::from_u64(1);
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            let v = r.below(7) as usize;
            seen[v] += 1;
        }
        assert!(seen.iter().all(|&n| n > 800 && n < 1200), "{seen:?}");
    }
}
