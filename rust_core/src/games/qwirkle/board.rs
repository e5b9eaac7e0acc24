//! The table: the grid and its laid tiles, and the overlay used to check and score a play.

use crate::error::{CoreError, CoreResult};

use super::tiles::{type_code, LineSet, TYPES};

// ------------------------------------------------------------------------------------------------
// Board

pub(super) const OFF: i32 = 104;
pub(super) const W: usize = 208;
/// Cells a play may name (see AMB20).
pub(super) const MAXC: i32 = 89;

#[inline(always)]
pub(super) fn idx(x: i32, y: i32) -> usize {
    ((y + OFF) as usize) * W + (x + OFF) as usize
}
#[inline(always)]
pub(super) fn xy(i: usize) -> (i32, i32) {
    ((i % W) as i32 - OFF, (i / W) as i32 - OFF)
}

/// The table: a grid of `type + 1` (0 = empty), the laid tiles in order, the bounding box.
#[derive(Clone, PartialEq)]
pub struct Board {
    pub(super) cells: Box<[u8]>,
    /// (x, y, id) in the order laid.
    pub(super) tiles: Vec<(i8, i8, u8)>,
    pub(super) min_x: i32,
    pub(super) max_x: i32,
    pub(super) min_y: i32,
    pub(super) max_y: i32,
    pub(super) ids: u128,
}

/// The grid follows from the laid tiles, so only they are shown.
impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Board")
            .field("tiles", &self.tiles)
            .finish_non_exhaustive()
    }
}

impl Default for Board {
    fn default() -> Self {
        Board {
            cells: vec![0u8; W * W].into_boxed_slice(),
            tiles: Vec::new(),
            min_x: 0,
            max_x: -1,
            min_y: 0,
            max_y: -1,
            ids: 0,
        }
    }
}

impl Board {
    #[inline(always)]
    pub(super) fn at(&self, x: i32, y: i32) -> u8 {
        self.cells[idx(x, y)]
    }
    pub(super) fn is_empty(&self) -> bool {
        self.tiles.is_empty()
    }
    /// Lays tile `id` on an empty in-range cell (callers check).
    pub(super) fn put(&mut self, x: i32, y: i32, id: u32) {
        self.cells[idx(x, y)] = (id / 3) as u8 + 1;
        self.tiles.push((x as i8, y as i8, id as u8));
        self.ids |= 1u128 << id;
        if self.tiles.len() == 1 {
            (self.min_x, self.max_x, self.min_y, self.max_y) = (x, x, y, y);
        } else {
            self.min_x = self.min_x.min(x);
            self.max_x = self.max_x.max(x);
            self.min_y = self.min_y.min(y);
            self.max_y = self.max_y.max(y);
        }
    }
    /// Builds a board from (x, y, type) with synthetic ids (copy 0, 1, 2 in order); used by the
    /// evaluator and tests. Cells must be in range and distinct, at most 3 copies per type.
    pub fn from_types(tiles: &[(i32, i32, u8)]) -> CoreResult<Board> {
        let mut b = Board::default();
        let mut copies = [0u8; TYPES];
        for &(x, y, t) in tiles {
            if x.unsigned_abs() > 89 || y.unsigned_abs() > 89 {
                return Err(CoreError::malformed(format!(
                    "cell ({x},{y}) is out of range (|x|, |y| <= 89)"
                )));
            }
            if t as usize >= TYPES {
                return Err(CoreError::malformed(format!(
                    "tile type {t} is out of range 0..35"
                )));
            }
            if b.at(x, y) != 0 {
                return Err(CoreError::malformed(format!(
                    "cell ({x},{y}) holds two tiles"
                )));
            }
            if copies[t as usize] >= 3 {
                return Err(CoreError::malformed(format!(
                    "more than 3 copies of {}",
                    type_code(t)
                )));
            }
            b.put(x, y, 3 * t as u32 + copies[t as usize] as u32);
            copies[t as usize] += 1;
        }
        Ok(b)
    }
    /// Every run of two or more tiles is a valid line.
    pub(super) fn lines_valid(&self) -> Result<(), String> {
        for &(x, y, _) in &self.tiles {
            let (x, y) = (x as i32, y as i32);
            for (dx, dy) in [(1, 0), (0, 1)] {
                if self.at(x - dx, y - dy) != 0 {
                    continue; // not the start of its run
                }
                let mut set = LineSet::default();
                let (mut cx, mut cy) = (x, y);
                while self.at(cx, cy) != 0 {
                    set = set.with(self.at(cx, cy) - 1);
                    if set.n > 6 {
                        break;
                    }
                    cx += dx;
                    cy += dy;
                }
                if set.n >= 2 && (set.n > 6 || !set.valid()) {
                    return Err(format!("invalid line starting at ({x},{y})"));
                }
            }
        }
        Ok(())
    }
}

/// The board with up to six tiles laid over it (for checking and scoring a play without
/// copying the grid).
pub(super) struct Overlay<'a> {
    pub(super) board: &'a Board,
    pub(super) extra: &'a [(usize, u8)],
}

impl Overlay<'_> {
    #[inline]
    pub(super) fn get(&self, i: usize) -> u8 {
        for &(j, t) in self.extra {
            if j == i {
                return t + 1;
            }
        }
        self.board.cells[i]
    }
    /// Tiles of the run through `i` (excluding `i`) along `step`, walking at most 6 each way.
    pub(super) fn around(&self, i: usize, step: usize) -> LineSet {
        let mut set = LineSet::default();
        let mut j = i;
        for _ in 0..6 {
            j -= step;
            let v = self.get(j);
            if v == 0 {
                break;
            }
            set = set.with(v - 1);
        }
        let mut j = i;
        for _ in 0..6 {
            j += step;
            let v = self.get(j);
            if v == 0 {
                break;
            }
            set = set.with(v - 1);
        }
        set
    }
    /// Types that may be laid alone on empty cell `i`.
    fn single(&self, i: usize) -> u64 {
        self.around(i, 1).accepts() & self.around(i, W).accepts()
    }
    /// True when no type of `available` fits alone anywhere (spec `is_blocked`).
    pub(super) fn blocked(&self, available: u64) -> bool {
        if available == 0 {
            return true;
        }
        let occupied = self
            .board
            .tiles
            .iter()
            .map(|&(x, y, _)| idx(x as i32, y as i32))
            .chain(self.extra.iter().map(|e| e.0));
        for i in occupied {
            for n in [i - 1, i + 1, i - W, i + W] {
                if self.get(n) == 0 && self.single(n) & available != 0 {
                    return false;
                }
            }
        }
        true
    }
}
