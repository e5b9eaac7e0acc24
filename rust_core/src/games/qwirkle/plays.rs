//! The hot path: every legal play of a hand on a board, with its score, without allocating;
//! and the check of one play (L1-L7) with its score, as `decide` and `evolve` make it.

use crate::error::{CoreError, CoreResult};

use super::board::{idx, xy, Board, Overlay, MAXC, OFF, W};
use super::tiles::{group_size, line_points, LineSet, TYPES};

// ------------------------------------------------------------------------------------------------
// Legal-play enumeration (spec 10.2 item 4)

/// One enumerated play: cells (grid indexes) and types along the line, ascending, and its score.
pub(super) struct PlayRef<'a> {
    pub(super) cells: &'a [u32],
    pub(super) types: &'a [u8],
    pub(super) score: u32,
}

impl PlayRef<'_> {
    pub(super) fn len(&self) -> usize {
        self.cells.len()
    }
    pub(super) fn placements(&self) -> impl Iterator<Item = (i32, i32, u8)> + '_ {
        self.cells.iter().zip(self.types).map(|(&c, &t)| {
            let (x, y) = xy(c as usize);
            (x, y, t)
        })
    }
}

struct Dfs<'a, F> {
    k: usize,
    cells: [u32; 6],
    cands: [u64; 6],
    types: [u8; 6],
    score: u32,
    emit: &'a mut F,
}

impl<F: FnMut(&PlayRef) -> bool> Dfs<'_, F> {
    /// True when `emit` asked to stop (the rest of the span is not wanted).
    fn go(&mut self, depth: usize, set: LineSet, used: u64) -> bool {
        if depth == self.k {
            return (self.emit)(&PlayRef {
                cells: &self.cells[..self.k],
                types: &self.types[..self.k],
                score: self.score,
            });
        }
        let mut m = self.cands[depth] & !used;
        while m != 0 {
            let t = m.trailing_zeros() as u8;
            m &= m - 1;
            let s = set.with(t);
            if s.valid() {
                self.types[depth] = t;
                if self.go(depth + 1, s, used | (1 << t)) {
                    return true;
                }
            }
        }
        false
    }
}

/// Calls `emit` for every legal play of a hand holding the types `hand` on `board`, each once
/// (copies are one play), in a deterministic order: rows then columns, lines ascending, spans
/// by first then last cell, types ascending. Single-tile plays come with the rows.
/// Scores exclude the end-of-game bonus (the caller knows whether the bag is empty).
pub(super) fn enumerate_plays<F: FnMut(&PlayRef)>(board: &Board, hand: u64, mut emit: F) {
    walk_plays(
        board,
        hand,
        |_| true,
        |p| {
            emit(p);
            false
        },
    );
}

/// Lines of a direction next to the bounding box of tiles within |x|, |y| <= MAXC, and the
/// 64-bit words of frontier positions along one of them.
const FRONTIER_LINES: usize = 2 * MAXC as usize + 3;
const FRONTIER_WORDS: usize = FRONTIER_LINES.div_ceil(64);

/// [`enumerate_plays`] for a caller that wants only some spans: the plays of one span (the
/// same cells, different types) all score the same, so `want(score)` is asked once per span
/// before its types are tried, and `emit` returns true when it wants no more of that span.
/// The plays given are those of `enumerate_plays`, in its order, less the ones declined.
fn walk_plays<W: FnMut(u32) -> bool, F: FnMut(&PlayRef) -> bool>(
    board: &Board,
    hand: u64,
    mut want: W,
    mut emit: F,
) {
    if board.is_empty() || hand == 0 {
        return;
    }
    // k placed tiles of one line are k distinct types of one colour or one shape: k <= g(hand).
    let distinct = group_size(hand) as usize;
    let cells = &board.cells;
    // Frontier cells (empty, next to a tile) per line of each direction, as bit masks over the
    // line's positions: rows, then columns, each in ascending order without sorting. Lines and
    // positions count from just before the bounding box (|x|, |y| <= 89: at most 181 of each).
    let (x0, y0) = (board.min_x - 1, board.min_y - 1);
    let (nx_lines, ny_lines) = (
        (board.max_x - x0 + 2) as usize,
        (board.max_y - y0 + 2) as usize,
    );
    let mut frontier = [[[0u64; FRONTIER_WORDS]; FRONTIER_LINES]; 2];
    for &(x, y, _) in &board.tiles {
        let (x, y) = (x as i32, y as i32);
        for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] {
            if cells[idx(nx, ny)] == 0 {
                let (ux, uy) = ((nx - x0) as usize, (ny - y0) as usize);
                frontier[0][uy][ux / 64] |= 1 << (ux % 64);
                frontier[1][ux][uy / 64] |= 1 << (uy % 64);
            }
        }
    }
    // Per-line scratch, filled lazily: perpendicular acceptance, score and contact of empty cells.
    let mut pmask = [0u64; W];
    let mut pscore = [0u8; W];
    let mut ptouch = [false; W];
    let mut stamp = [u32::MAX; W];
    let mut generation = 0u32;
    for (dir, lines) in frontier.iter().enumerate() {
        let (step, perp) = if dir == 0 { (1usize, W) } else { (W, 1usize) };
        let (line_base, pos_base, n_lines) = if dir == 0 {
            (y0, x0, ny_lines)
        } else {
            (x0, y0, nx_lines)
        };
        for (l, words) in lines[..n_lines].iter().enumerate() {
            if words.iter().all(|&w| w == 0) {
                continue;
            }
            let line = line_base + l as i32;
            let at = |pos: i32| {
                if dir == 0 {
                    idx(pos, line)
                } else {
                    idx(line, pos)
                }
            };
            generation += 1;
            let mut info = |pos: i32| -> (u64, u8, bool) {
                let slot = (pos + OFF) as usize;
                if stamp[slot] != generation {
                    stamp[slot] = generation;
                    let i = at(pos);
                    if cells[i - perp] == 0 && cells[i + perp] == 0 {
                        pmask[slot] = hand;
                        pscore[slot] = 0;
                        ptouch[slot] = false;
                    } else {
                        let mut set = LineSet::default();
                        let mut j = i;
                        for _ in 0..6 {
                            j -= perp;
                            if cells[j] == 0 {
                                break;
                            }
                            set = set.with(cells[j] - 1);
                        }
                        let mut j = i;
                        for _ in 0..6 {
                            j += perp;
                            if cells[j] == 0 {
                                break;
                            }
                            set = set.with(cells[j] - 1);
                        }
                        pmask[slot] = set.accepts() & hand;
                        pscore[slot] = line_points(set.n as u32 + 1) as u8;
                        ptouch[slot] = true;
                    }
                }
                (pmask[slot], pscore[slot], ptouch[slot])
            };
            // Every play contains a frontier cell f of this line. The cells before the first
            // frontier cell at or after a play's first cell are empty and touch nothing, so the
            // play places each of them and f too: its first cell is in f+1-distinct..=f.
            let reach = distinct as i32 - 1;
            let mut next_p0 = i32::MIN;
            let positions = words.iter().enumerate().flat_map(|(w, &bits)| {
                std::iter::successors((bits != 0).then_some(bits), |&b| {
                    Some(b & (b - 1)).filter(|&b| b != 0)
                })
                .map(move |b| pos_base + (w * 64) as i32 + b.trailing_zeros() as i32)
            });
            for f in positions {
                for p0 in (f - reach).max(next_p0)..=f {
                    let i0 = at(p0);
                    if cells[i0] != 0 {
                        continue;
                    }
                    let (m0, _, _) = info(p0);
                    if m0 == 0 {
                        continue;
                    }
                    // Existing tiles just before the span.
                    let mut set = LineSet::default();
                    let mut j = i0;
                    for _ in 0..6 {
                        j -= step;
                        if cells[j] == 0 {
                            break;
                        }
                        set = set.with(cells[j] - 1);
                    }
                    if set.n >= 6 || (set.n >= 2 && !set.valid()) {
                        continue;
                    }
                    let mut dfs_cells = [0u32; 6];
                    let mut cands = [0u64; 6];
                    let mut k = 0usize;
                    let mut len = set.n as u32;
                    let mut touch = set.n > 0;
                    let mut perp_points = 0u32;
                    let mut pos = p0;
                    let mut i = i0;
                    loop {
                        if cells[i] != 0 {
                            set = set.with(cells[i] - 1);
                            len += 1;
                            touch = true;
                            if len > 6 || !set.valid() {
                                break;
                            }
                        } else {
                            if k == distinct || k == 6 {
                                break;
                            }
                            let (m, ps, pt) = info(pos);
                            if m == 0 {
                                break;
                            }
                            dfs_cells[k] = i as u32;
                            cands[k] = m;
                            k += 1;
                            len += 1;
                            if len > 6 {
                                break;
                            }
                            touch |= pt;
                            perp_points += ps as u32;
                            // The span ends here: add the existing tiles after it.
                            let mut full = set;
                            let mut j = i;
                            let mut r = 0;
                            for _ in 0..6 {
                                j += step;
                                if cells[j] == 0 {
                                    break;
                                }
                                full = full.with(cells[j] - 1);
                                r += 1;
                            }
                            let total = len + r;
                            if total > 6 || (full.n >= 2 && !full.valid()) {
                                break;
                            }
                            let score = line_points(total) + perp_points;
                            if (touch || r > 0) && !(dir == 1 && k == 1) && want(score) {
                                // `full` holds the existing tiles of the whole run; the DFS adds
                                // the placed ones.
                                let line_accept = full.accepts();
                                if cands[..k].iter().all(|&c| c & line_accept != 0) {
                                    let mut dfs = Dfs {
                                        k,
                                        cells: dfs_cells,
                                        cands,
                                        types: [0; 6],
                                        score,
                                        emit: &mut emit,
                                    };
                                    for c in dfs.cands[..k].iter_mut() {
                                        *c &= line_accept;
                                    }
                                    dfs.go(0, full, 0);
                                }
                            }
                        }
                        pos += 1;
                        i += step;
                    }
                }
                next_p0 = f + 1;
            }
        }
    }
}

/// Counts of legal plays per size and the best score.
pub fn count_plays(board: &Board, hand: u64) -> ([u32; 6], u32) {
    let mut counts = [0u32; 6];
    let mut best = 0;
    enumerate_plays(board, hand, |p| {
        counts[p.len() - 1] += 1;
        best = best.max(p.score);
    });
    (counts, best)
}

/// A placed tile: (x, y, type).
type Cell = (i32, i32, u8);

/// The first play of the highest score (deterministic), as (x, y, type) and its score.
/// Every play of a span scores the same, so only a span that would beat the best so far is
/// searched, and only for its first play: the play `enumerate_plays` would have kept.
pub(super) fn best_play(board: &Board, hand: u64) -> Option<(Vec<Cell>, u32)> {
    let mut best: Option<([u32; 6], [u8; 6], usize, u32)> = None;
    // The best score so far (none yet: any span is wanted), read by `want`, set by `emit`.
    let beat = std::cell::Cell::new(None::<u32>);
    walk_plays(
        board,
        hand,
        |score| beat.get().is_none_or(|b| score > b),
        |p| {
            let mut c = [0u32; 6];
            let mut t = [0u8; 6];
            c[..p.len()].copy_from_slice(p.cells);
            t[..p.len()].copy_from_slice(p.types);
            best = Some((c, t, p.len(), p.score));
            beat.set(Some(p.score));
            true
        },
    );
    best.map(|(c, t, k, s)| {
        (
            (0..k)
                .map(|i| {
                    let (x, y) = xy(c[i] as usize);
                    (x, y, t[i])
                })
                .collect(),
            s,
        )
    })
}

pub(super) fn has_play(board: &Board, hand: u64) -> bool {
    // A multi-tile play contains a legal single tile, so singles suffice.
    let ov = Overlay { board, extra: &[] };
    !board.is_empty() && !ov.blocked(hand)
}

/// Checks a play of types on cells against the board and a hand of type counts. Returns the
/// grid indexes (in the given order) and the score.
pub(super) fn check_play(
    board: &Board,
    hand_counts: &[u8; TYPES],
    placements: &[(i32, i32, u32)],
) -> CoreResult<(Vec<(usize, u8)>, u32)> {
    let k = placements.len();
    if k == 0 {
        return Err(CoreError::rule(
            "EMPTY_PLAY",
            "a play lays at least one tile",
        ));
    }
    if k > 6 {
        return Err(CoreError::rule(
            "TOO_MANY_TILES",
            format!("a play lays at most 6 tiles, not {k}"),
        ));
    }
    let mut need = [0u8; TYPES];
    let mut extra: Vec<(usize, u8)> = Vec::with_capacity(k);
    for &(x, y, t) in placements {
        if t as usize >= TYPES {
            return Err(CoreError::malformed(format!(
                "tile type {t} is out of range 0..35"
            )));
        }
        if x.unsigned_abs() > MAXC as u32 || y.unsigned_abs() > MAXC as u32 {
            return Err(CoreError::rule(
                "NOT_CONNECTED",
                format!("cell ({x},{y}) is too far from the tiles on the table"),
            ));
        }
        let t = t as u8;
        need[t as usize] += 1;
        if need[t as usize] > hand_counts[t as usize] {
            return Err(CoreError::rule(
                "NOT_IN_HAND",
                format!(
                    "your hand does not hold {}",
                    super::words::tiles(need[t as usize] as u32, t as u32)
                ),
            ));
        }
        let i = idx(x, y);
        if extra.iter().any(|e| e.0 == i) {
            return Err(CoreError::rule(
                "DUPLICATE_CELL",
                format!("cell ({x},{y}) is named twice"),
            ));
        }
        if board.cells[i] != 0 {
            return Err(CoreError::rule(
                "CELL_OCCUPIED",
                format!("cell ({x},{y}) already holds a tile"),
            ));
        }
        extra.push((i, t));
    }
    let (x0, y0, _) = placements[0];
    let step = if k == 1 || placements.iter().all(|p| p.1 == y0) {
        1
    } else if placements.iter().all(|p| p.0 == x0) {
        W
    } else {
        return Err(CoreError::rule(
            "NOT_ONE_LINE",
            "the tiles of a play must lie in one row or one column",
        ));
    };
    let ov = Overlay {
        board,
        extra: &extra,
    };
    let lo = extra.iter().map(|e| e.0).min().unwrap_or(0);
    let hi = extra.iter().map(|e| e.0).max().unwrap_or(0);
    let mut i = lo;
    while i < hi {
        i += step;
        if ov.get(i) == 0 {
            let (x, y) = xy(i);
            return Err(CoreError::rule(
                "GAP_IN_LINE",
                format!("cell ({x},{y}) between the placed tiles is empty"),
            ));
        }
    }
    if !extra.iter().any(|&(i, _)| {
        [i - 1, i + 1, i - W, i + W]
            .iter()
            .any(|&n| board.cells[n] != 0)
    }) {
        return Err(CoreError::rule(
            "NOT_CONNECTED",
            "a play must touch a tile already on the table",
        ));
    }
    // Every line through a placed tile.
    let check = |i: usize, t: u8, dir_step: usize| -> CoreResult<u32> {
        let set = ov.around(i, dir_step).with(t);
        if set.n >= 2 && (set.n > 6 || !set.valid()) {
            let (x, y) = xy(i);
            let what = if dir_step == 1 { "row" } else { "column" };
            return Err(CoreError::rule(
                "INVALID_LINE",
                format!("the {what} through ({x},{y}) would not be one colour or one shape without repeats (max 6)"),
            ));
        }
        Ok(line_points(set.n as u32))
    };
    let perp = if step == 1 { W } else { 1 };
    let mut score = check(extra[0].0, extra[0].1, step)?;
    for &(i, t) in &extra {
        score += check(i, t, perp)?;
    }
    Ok((extra, score.max(1)))
}
