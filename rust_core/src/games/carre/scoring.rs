//! Scoring: the 8 lines of a square and their points, a square's raw points, the round score
//! (R13) and the match result.

use super::state::{RoundRec, State};
use crate::proto::carre as pb;

/// The 8 lines of a square as cell indexes 0..9: R1 R2 R3 C1 C2 C3 D1 D2.
pub(super) const LINES: [[usize; 3]; 8] = [
    [0, 1, 2],
    [3, 4, 5],
    [6, 7, 8],
    [0, 3, 6],
    [1, 4, 7],
    [2, 5, 8],
    [0, 4, 8],
    [2, 4, 6],
];
pub(super) const LINE_NAMES: [&str; 8] = ["R1", "R2", "R3", "C1", "C2", "C3", "D1", "D2"];

#[inline]
fn line_value(m: &[u8; 9], l: &[usize; 3]) -> u32 {
    let a = m[l[0]] & m[l[1]] & m[l[2]];
    ((a & 0x0F) != 0) as u32 + ((a & 0x30) != 0) as u32
}

/// Raw alignment points of a square given its 9 scoring masks (0 = empty or face down).
#[inline]
pub fn score_square(m: &[u8; 9]) -> u32 {
    let mut t = 0;
    for l in &LINES {
        t += line_value(m, l);
    }
    t
}

pub(super) fn line_points(m: &[u8; 9]) -> [u32; 8] {
    let mut out = [0; 8];
    for (i, l) in LINES.iter().enumerate() {
        out[i] = line_value(m, l);
    }
    out
}

/// Round score before the going-out penalty (R13).
#[inline]
pub(super) fn base_score(raw: u32) -> u32 {
    if raw <= 5 {
        raw
    } else {
        2 * raw - 5
    }
}

impl State {
    #[inline]
    pub(super) fn raw(&self, seat: u8) -> u32 {
        score_square(&self.mask[seat as usize & 1])
    }

    pub(super) fn round_result(&self) -> RoundRec {
        let mut rec = RoundRec {
            went_out: self.went_out,
            ..Default::default()
        };
        for s in 0..2u8 {
            let raw = self.raw(s);
            let mut score = base_score(raw);
            if self.went_out == s {
                score = score.saturating_sub(1);
            }
            rec.raw[s as usize] = raw as u8;
            rec.score[s as usize] = score as u8;
        }
        rec
    }

    /// (winners, result) once the match is decided.
    pub(super) fn result(&self) -> (Vec<u32>, pb::MatchResult) {
        if self.aborted {
            return (vec![], pb::MatchResult::Aborted);
        }
        if self.forfeited < 2 {
            // The other seat wins, whatever the totals (§11).
            return (vec![1 - self.forfeited as u32], pb::MatchResult::Win);
        }
        match self.totals[0].cmp(&self.totals[1]) {
            std::cmp::Ordering::Greater => (vec![0], pb::MatchResult::Win),
            std::cmp::Ordering::Less => (vec![1], pb::MatchResult::Win),
            std::cmp::Ordering::Equal => (vec![0, 1], pb::MatchResult::Draw),
        }
    }
}
