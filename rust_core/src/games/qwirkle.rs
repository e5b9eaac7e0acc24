//! Qwirkle (rules: `docs/rules/qwirkle.md`, seed 003).
//!
//! Representation: tile type `t = 6*colour + shape` (0..35), tile id `3*t + copy` (0..107).
//! Bag and hands are 128-bit sets of ids (so the bag is always in ascending order, and a draw is
//! "the i-th remaining id" for a uniform `i`); the board is a fixed 208 x 208 byte grid
//! (offset 104; the spec bounds occupied cells to |x|, |y| <= 89) plus the list of laid tiles.
//!
//! Hot path: [`enumerate_plays`] yields every legal play with its score without allocating;
//! the greedy bot, the evaluator, `legal_actions` and the benches all use it.
//!
//! Decisions recorded in the spec's style (new, beyond AMB1-AMB16):
//! * **AMB17 Ages option.** `ages` is a comma-separated list of one non-negative integer per seat
//!   (bigger = older; e.g. age in years). Empty = unknown: ties go to the lowest seat (AMB1).
//! * **AMB18 Administrative cap.** `max_idle_turns` (default 1000) consecutive turns without a
//!   placement (exchanges, passes) end the match with reason IDLE_CAP and `aborted = true`; it is
//!   checked after every such turn. It is not a game rule.
//! * **AMB19 Copies.** Actions name tile types; the engine lays / returns the lowest-id copy of
//!   the type in the hand. Ids of laid tiles are shown only to the player who laid them (and the
//!   auditor): copies are rule-identical, so other seats see types only.
//! * **AMB20 Table bound.** A play naming a cell with |x| or |y| > 89 is refused as NOT_CONNECTED
//!   (by the bound of spec 10.1 no legal play reaches such a cell: (0,0) is always occupied and a legal table is at most 90 wide and high).
//! * **AMB21 Hands after the end.** Other seats' hands stay hidden after GAME_OVER (the spec allows
//!   revealing them; nothing needs it). The auditor sees everything.
//! * **AMB22 Evaluator on an empty board.** It lists no play (the opening play is not a board play).

use std::fmt::Write as _;

use crate::error::{CoreError, CoreResult};
use crate::game::{Game, OptionSpec, OptionValues, Seat, Seats, Viewer};
use crate::proto::qwirkle as pb;
use crate::proto::Outcome;
use crate::rng::Rng;

pub struct Qwirkle;

// ------------------------------------------------------------------------------------------------
// Tiles, masks

pub const TYPES: usize = 36;
pub const TILES: usize = 108;
const ALL_TYPES: u64 = (1u64 << 36) - 1;
const ALL_IDS: u128 = (1u128 << 108) - 1;
const COLOURS: &[u8; 6] = b"ROYGBP";
const SHAPES: &[u8; 6] = b"CXDSEL";

/// Types of colour c.
const fn colour_row(c: usize) -> u64 {
    0x3F << (6 * c)
}
/// Types of shape s.
const fn shape_col(s: usize) -> u64 {
    let mut m = 0u64;
    let mut c = 0;
    while c < 6 {
        m |= 1 << (6 * c + s);
        c += 1;
    }
    m
}
/// COLOUR_SET[cm] = types whose colour is in cm; SHAPE_SET[sm] likewise.
const COLOUR_SET: [u64; 64] = {
    let mut t = [0u64; 64];
    let mut m = 0;
    while m < 64 {
        let mut c = 0;
        while c < 6 {
            if m & (1 << c) != 0 {
                t[m] |= colour_row(c);
            }
            c += 1;
        }
        m += 1;
    }
    t
};
const SHAPE_SET: [u64; 64] = {
    let mut t = [0u64; 64];
    let mut m = 0;
    while m < 64 {
        let mut s = 0;
        while s < 6 {
            if m & (1 << s) != 0 {
                t[m] |= shape_col(s);
            }
            s += 1;
        }
        m += 1;
    }
    t
};

/// Notation of a type, e.g. `RC`.
pub fn type_code(t: u8) -> String {
    let t = t as usize % TYPES;
    format!("{}{}", COLOURS[t / 6] as char, SHAPES[t % 6] as char)
}

/// Parses `RC`-style notation.
pub fn parse_type(code: &str) -> Option<u8> {
    let b = code.as_bytes();
    if b.len() != 2 {
        return None;
    }
    let c = COLOURS.iter().position(|&x| x == b[0])?;
    let s = SHAPES.iter().position(|&x| x == b[1])?;
    Some((6 * c + s) as u8)
}

/// The tiles of a line seen so far: colour mask, shape mask, count.
#[derive(Clone, Copy, Default, Debug)]
struct LineSet {
    cm: u8,
    sm: u8,
    n: u8,
}

impl LineSet {
    #[inline(always)]
    fn with(self, t: u8) -> LineSet {
        LineSet { cm: self.cm | (1 << (t / 6)), sm: self.sm | (1 << (t % 6)), n: self.n + 1 }
    }
    /// All distinct and one colour or one shape (and therefore at most 6).
    #[inline(always)]
    fn valid(self) -> bool {
        let (c, s) = (self.cm.count_ones() as u8, self.sm.count_ones() as u8);
        (c == 1 && s == self.n) || (s == 1 && c == self.n)
    }
    /// Types that may join this (valid, possibly empty) set of tiles.
    #[inline(always)]
    fn accepts(self) -> u64 {
        if self.n == 0 {
            return ALL_TYPES;
        }
        if self.n >= 6 || !self.valid() {
            return 0;
        }
        let mut m = 0;
        if self.cm.count_ones() == 1 {
            m |= colour_row(self.cm.trailing_zeros() as usize) & !SHAPE_SET[self.sm as usize];
        }
        if self.sm.count_ones() == 1 {
            m |= shape_col(self.sm.trailing_zeros() as usize) & !COLOUR_SET[self.cm as usize];
        }
        m
    }
}

#[inline]
fn line_points(len: u32) -> u32 {
    match len {
        0 | 1 => 0,
        6 => 12,
        l => l,
    }
}

/// g(hand): size of the largest group (distinct types sharing a colour or a shape).
pub fn group_size(types: u64) -> u32 {
    let mut g = 0;
    for i in 0..6 {
        g = g.max((types & colour_row(i)).count_ones()).max((types & shape_col(i)).count_ones());
    }
    g
}

fn ids_types(ids: u128) -> u64 {
    let mut m = 0u64;
    let mut r = ids;
    while r != 0 {
        let id = r.trailing_zeros();
        r &= r - 1;
        m |= 1 << (id / 3);
    }
    m
}

fn ids_list(ids: u128) -> Vec<u32> {
    let mut v = Vec::with_capacity(ids.count_ones() as usize);
    let mut r = ids;
    while r != 0 {
        v.push(r.trailing_zeros());
        r &= r - 1;
    }
    v
}

/// The `i`-th set bit of `set` (ascending).
fn select(set: u128, mut i: u32) -> u32 {
    let lo = set as u64;
    let lc = lo.count_ones();
    let (mut w, base) = if i < lc { (lo, 0) } else { i -= lc; ((set >> 64) as u64, 64) };
    for _ in 0..i {
        w &= w - 1;
    }
    base + w.trailing_zeros()
}

fn draw(bag: &mut u128, k: u32, rng: &mut Rng) -> Vec<u32> {
    let mut out = Vec::with_capacity(k as usize);
    for _ in 0..k {
        let n = bag.count_ones();
        if n == 0 {
            break;
        }
        let id = select(*bag, rng.index(n as usize) as u32);
        *bag &= !(1u128 << id);
        out.push(id);
    }
    out
}

/// Lowest id of type `t` in `ids`.
fn id_of_type(ids: u128, t: u8) -> Option<u32> {
    let m = ids & (0b111u128 << (3 * t as u32));
    (m != 0).then(|| m.trailing_zeros())
}

// ------------------------------------------------------------------------------------------------
// Board

const OFF: i32 = 104;
const W: usize = 208;
/// Cells a play may name (see AMB20).
const MAXC: i32 = 89;

#[inline(always)]
fn idx(x: i32, y: i32) -> usize {
    ((y + OFF) as usize) * W + (x + OFF) as usize
}
#[inline(always)]
fn xy(i: usize) -> (i32, i32) {
    ((i % W) as i32 - OFF, (i / W) as i32 - OFF)
}

/// The table: a grid of `type + 1` (0 = empty), the laid tiles in order, the bounding box.
#[derive(Clone, PartialEq)]
pub struct Board {
    cells: Box<[u8]>,
    /// (x, y, id) in the order laid.
    tiles: Vec<(i8, i8, u8)>,
    min_x: i32,
    max_x: i32,
    min_y: i32,
    max_y: i32,
    ids: u128,
}

/// The grid follows from the laid tiles, so only they are shown.
impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Board").field("tiles", &self.tiles).finish_non_exhaustive()
    }
}

impl Default for Board {
    fn default() -> Self {
        Board { cells: vec![0u8; W * W].into_boxed_slice(), tiles: Vec::new(), min_x: 0, max_x: -1, min_y: 0, max_y: -1, ids: 0 }
    }
}

impl Board {
    #[inline(always)]
    pub fn at(&self, x: i32, y: i32) -> u8 {
        self.cells[idx(x, y)]
    }
    pub fn len(&self) -> usize {
        self.tiles.len()
    }
    pub fn is_empty(&self) -> bool {
        self.tiles.is_empty()
    }
    /// Lays tile `id` on an empty in-range cell (callers check).
    fn put(&mut self, x: i32, y: i32, id: u32) {
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
                return Err(CoreError::malformed(format!("cell ({x},{y}) is out of range (|x|, |y| <= 89)")));
            }
            if t as usize >= TYPES {
                return Err(CoreError::malformed(format!("tile type {t} is out of range 0..35")));
            }
            if b.at(x, y) != 0 {
                return Err(CoreError::malformed(format!("cell ({x},{y}) holds two tiles")));
            }
            if copies[t as usize] >= 3 {
                return Err(CoreError::malformed(format!("more than 3 copies of {}", type_code(t))));
            }
            b.put(x, y, 3 * t as u32 + copies[t as usize] as u32);
            copies[t as usize] += 1;
        }
        Ok(b)
    }
    /// Every run of two or more tiles is a valid line.
    pub fn lines_valid(&self) -> Result<(), String> {
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
struct Overlay<'a> {
    board: &'a Board,
    extra: &'a [(usize, u8)],
}

impl Overlay<'_> {
    #[inline]
    fn get(&self, i: usize) -> u8 {
        for &(j, t) in self.extra {
            if j == i {
                return t + 1;
            }
        }
        self.board.cells[i]
    }
    /// Tiles of the run through `i` (excluding `i`) along `step`, walking at most 6 each way.
    fn around(&self, i: usize, step: usize) -> LineSet {
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
    fn blocked(&self, available: u64) -> bool {
        if available == 0 {
            return true;
        }
        let occupied = self.board.tiles.iter().map(|&(x, y, _)| idx(x as i32, y as i32)).chain(self.extra.iter().map(|e| e.0));
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

// ------------------------------------------------------------------------------------------------
// Legal-play enumeration (spec 10.2 item 4)

/// One enumerated play: cells (grid indexes) and types along the line, ascending, and its score.
pub struct PlayRef<'a> {
    pub cells: &'a [u32],
    pub types: &'a [u8],
    pub score: u32,
}

impl PlayRef<'_> {
    pub fn len(&self) -> usize {
        self.cells.len()
    }
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }
    pub fn placements(&self) -> impl Iterator<Item = (i32, i32, u8)> + '_ {
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

impl<F: FnMut(&PlayRef)> Dfs<'_, F> {
    fn go(&mut self, depth: usize, set: LineSet, used: u64) {
        if depth == self.k {
            (self.emit)(&PlayRef { cells: &self.cells[..self.k], types: &self.types[..self.k], score: self.score });
            return;
        }
        let mut m = self.cands[depth] & !used;
        while m != 0 {
            let t = m.trailing_zeros() as u8;
            m &= m - 1;
            let s = set.with(t);
            if s.valid() {
                self.types[depth] = t;
                self.go(depth + 1, s, used | (1 << t));
            }
        }
    }
}

/// Calls `emit` for every legal play of a hand holding the types `hand` on `board`, each once
/// (copies are one play), in a deterministic order: rows then columns, lines ascending, spans
/// by first then last cell, types ascending. Single-tile plays come with the rows.
/// Scores exclude the end-of-game bonus (the caller knows whether the bag is empty).
pub fn enumerate_plays<F: FnMut(&PlayRef)>(board: &Board, hand: u64, mut emit: F) {
    if board.is_empty() || hand == 0 {
        return;
    }
    // k placed tiles of one line are k distinct types of one colour or one shape: k <= g(hand).
    let distinct = group_size(hand) as usize;
    let cells = &board.cells;
    // Frontier cells (empty, next to a tile), as sortable keys per direction: line-major.
    let mut keys = [[0u32; 4 * TILES]; 2];
    let mut nk = 0usize;
    for &(x, y, _) in &board.tiles {
        let (x, y) = (x as i32, y as i32);
        for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] {
            if cells[idx(nx, ny)] == 0 && nk < 4 * TILES {
                let (ux, uy) = ((nx + OFF) as u32, (ny + OFF) as u32);
                keys[0][nk] = uy << 8 | ux;
                keys[1][nk] = ux << 8 | uy;
                nk += 1;
            }
        }
    }
    // Per-line scratch, filled lazily: perpendicular acceptance, score and contact of empty cells.
    let mut pmask = [0u64; W];
    let mut pscore = [0u8; W];
    let mut ptouch = [false; W];
    let mut stamp = [u32::MAX; W];
    let mut generation = 0u32;
    for dir in 0..2 {
        let (step, perp) = if dir == 0 { (1usize, W) } else { (W, 1usize) };
        let fr = &mut keys[dir][..nk];
        fr.sort_unstable();
        let mut g = 0;
        while g < fr.len() {
            let line_key = fr[g] >> 8;
            let mut h = g;
            while h < fr.len() && fr[h] >> 8 == line_key {
                h += 1;
            }
            let line = line_key as i32 - OFF;
            let at = |pos: i32| if dir == 0 { idx(pos, line) } else { idx(line, pos) };
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
            // Every play contains a frontier cell f of this line, so its first cell is in f-5..=f.
            let mut next_p0 = i32::MIN;
            let mut last_f = i32::MIN;
            for &key in &fr[g..h] {
                let f = (key & 0xFF) as i32 - OFF;
                if f == last_f {
                    continue;
                }
                last_f = f;
                for p0 in (f - 5).max(next_p0)..=f {
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
                            if (touch || r > 0) && !(dir == 1 && k == 1) {
                                // `full` holds the existing tiles of the whole run; the DFS adds
                                // the placed ones.
                                let line_accept = full.accepts();
                                if cands[..k].iter().all(|&c| c & line_accept != 0) {
                                    let mut dfs = Dfs {
                                        k,
                                        cells: dfs_cells,
                                        cands,
                                        types: [0; 6],
                                        score: line_points(total) + perp_points,
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
            g = h;
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
pub type Cell = (i32, i32, u8);

/// The first play of the highest score (deterministic), as (x, y, type) and its score.
pub fn best_play(board: &Board, hand: u64) -> Option<(Vec<Cell>, u32)> {
    let mut best: Option<([u32; 6], [u8; 6], usize, u32)> = None;
    enumerate_plays(board, hand, |p| {
        if best.as_ref().is_none_or(|b| p.score > b.3) {
            let mut c = [0u32; 6];
            let mut t = [0u8; 6];
            c[..p.len()].copy_from_slice(p.cells);
            t[..p.len()].copy_from_slice(p.types);
            best = Some((c, t, p.len(), p.score));
        }
    });
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

/// Spec `is_blocked()`: no type still in the bag or a hand fits anywhere on the table.
pub fn is_blocked(state: &State) -> bool {
    let ov = Overlay { board: &state.board, extra: &[] };
    !state.board.is_empty() && ov.blocked(ids_types(state.available()))
}

fn has_play(board: &Board, hand: u64) -> bool {
    // A multi-tile play contains a legal single tile, so singles suffice.
    let ov = Overlay { board, extra: &[] };
    !board.is_empty() && !ov.blocked(hand)
}

// ------------------------------------------------------------------------------------------------
// Play validation (L1-L7) and scoring

/// Checks a play of types on cells against the board and a hand of type counts. Returns the
/// grid indexes (in the given order) and the score.
fn check_play(board: &Board, hand_counts: &[u8; TYPES], placements: &[(i32, i32, u32)]) -> CoreResult<(Vec<(usize, u8)>, u32)> {
    let k = placements.len();
    if k == 0 {
        return Err(CoreError::rule("EMPTY_PLAY", "a play lays at least one tile"));
    }
    if k > 6 {
        return Err(CoreError::rule("TOO_MANY_TILES", format!("a play lays at most 6 tiles, not {k}")));
    }
    let mut need = [0u8; TYPES];
    let mut extra: Vec<(usize, u8)> = Vec::with_capacity(k);
    for &(x, y, t) in placements {
        if t as usize >= TYPES {
            return Err(CoreError::malformed(format!("tile type {t} is out of range 0..35")));
        }
        if x.unsigned_abs() > MAXC as u32 || y.unsigned_abs() > MAXC as u32 {
            return Err(CoreError::rule("NOT_CONNECTED", format!("cell ({x},{y}) is too far from the tiles on the table")));
        }
        let t = t as u8;
        need[t as usize] += 1;
        if need[t as usize] > hand_counts[t as usize] {
            return Err(CoreError::rule("NOT_IN_HAND", format!("your hand does not hold {} {}", need[t as usize], type_code(t))));
        }
        let i = idx(x, y);
        if extra.iter().any(|e| e.0 == i) {
            return Err(CoreError::rule("DUPLICATE_CELL", format!("cell ({x},{y}) is named twice")));
        }
        if board.cells[i] != 0 {
            return Err(CoreError::rule("CELL_OCCUPIED", format!("cell ({x},{y}) already holds a tile")));
        }
        extra.push((i, t));
    }
    let (x0, y0, _) = placements[0];
    let step = if k == 1 || placements.iter().all(|p| p.1 == y0) {
        1
    } else if placements.iter().all(|p| p.0 == x0) {
        W
    } else {
        return Err(CoreError::rule("NOT_ONE_LINE", "the tiles of a play must lie in one row or one column"));
    };
    let ov = Overlay { board, extra: &extra };
    let lo = extra.iter().map(|e| e.0).min().unwrap_or(0);
    let hi = extra.iter().map(|e| e.0).max().unwrap_or(0);
    let mut i = lo;
    while i < hi {
        i += step;
        if ov.get(i) == 0 {
            let (x, y) = xy(i);
            return Err(CoreError::rule("GAP_IN_LINE", format!("cell ({x},{y}) between the placed tiles is empty")));
        }
    }
    if !extra.iter().any(|&(i, _)| [i - 1, i + 1, i - W, i + W].iter().any(|&n| board.cells[n] != 0)) {
        return Err(CoreError::rule("NOT_CONNECTED", "a play must touch a tile already on the table"));
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

// ------------------------------------------------------------------------------------------------
// Configuration and state

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub seats: u32,
    /// Age per seat (bigger = older), or None when unknown.
    pub ages: Option<[u32; 4]>,
    pub idle_cap: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Setup,
    Opening,
    Turn,
    Over,
}

#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub config: Config,
    pub phase: Phase,
    pub board: Board,
    pub hands: [u128; 4],
    pub bag: u128,
    pub scores: [i64; 4],
    pub announced: [u8; 4],
    pub current: u32,
    pub start_seat: u32,
    pub idle: u32,
    pub turns: u32,
    pub end_reason: pb::EndReason,
    pub aborted: bool,
}

impl State {
    fn seats(&self) -> u32 {
        self.config.seats
    }
    fn next(&self, s: u32) -> u32 {
        (s + 1) % self.seats()
    }
    /// Ids of the tiles on the table.
    pub fn board_ids(&self) -> u128 {
        self.board.ids
    }
    pub fn hand_types(&self, seat: u32) -> u64 {
        ids_types(self.hands[seat as usize & 3])
    }
    fn hand_counts(&self, seat: u32) -> [u8; TYPES] {
        let mut c = [0u8; TYPES];
        for id in ids_list(self.hands[seat as usize & 3]) {
            c[id as usize / 3] += 1;
        }
        c
    }
    /// Types still in the bag or in some hand.
    fn available(&self) -> u128 {
        let mut ids = self.bag;
        for h in &self.hands[..self.seats() as usize] {
            ids |= h;
        }
        ids
    }
}

fn start_player(config: &Config, g: &[u8]) -> u32 {
    let best = g.iter().copied().max().unwrap_or(0);
    let tied: Vec<u32> = (0..g.len() as u32).filter(|&s| g[s as usize] == best).collect();
    match config.ages {
        Some(ages) => {
            let oldest = tied.iter().map(|&s| ages[s as usize]).max().unwrap_or(0);
            tied.into_iter().find(|&s| ages[s as usize] == oldest).unwrap_or(0)
        }
        None => tied.first().copied().unwrap_or(0),
    }
}

fn winners(scores: &[i64]) -> Vec<u32> {
    let best = scores.iter().copied().max().unwrap_or(0);
    (0..scores.len() as u32).filter(|&s| scores[s as usize] == best).collect()
}

fn ev(kind: pb::event::Kind) -> pb::Event {
    pb::Event { kind: Some(kind) }
}

fn ended(state: &State, reason: pb::EndReason, bonus_seat: u32, bonus: u32, extra_points: Option<(u32, u32)>) -> pb::Event {
    let mut scores: Vec<i64> = state.scores[..state.seats() as usize].to_vec();
    if let Some((s, p)) = extra_points {
        scores[s as usize] += p as i64;
    }
    if bonus > 0 {
        scores[bonus_seat as usize] += bonus as i64;
    }
    ev(pb::event::Kind::Ended(pb::Ended {
        reason: reason as i32,
        bonus_seat,
        bonus,
        final_scores: scores,
        aborted: reason == pb::EndReason::IdleCap,
    }))
}

/// Events for laying tiles (opening or play) and everything that follows automatically.
fn lay(state: &State, seat: u32, extra: &[(usize, u8)], score: u32, opening: bool, rng: &mut Rng) -> Vec<pb::Event> {
    let mut hand = state.hands[seat as usize];
    let mut placed_ids = 0u128;
    let mut placements = Vec::with_capacity(extra.len());
    let mut ids = Vec::with_capacity(extra.len());
    for &(i, t) in extra {
        let id = id_of_type(hand, t).unwrap_or(0);
        hand &= !(1u128 << id);
        placed_ids |= 1u128 << id;
        let (x, y) = xy(i);
        placements.push(pb::Placement { x, y, tile_type: t as u32 });
        ids.push(id);
    }
    let mut out = vec![ev(pb::event::Kind::Placed(pb::Placed { seat, opening, placements, tile_ids: ids, points: score }))];
    let mut bag = state.bag;
    let want = 6 - hand.count_ones().min(6);
    let drawn = draw(&mut bag, want, rng);
    if !drawn.is_empty() {
        hand |= drawn.iter().fold(0u128, |m, &id| m | (1u128 << id));
        out.push(ev(pb::event::Kind::Drew(pb::Drew { seat, count: drawn.len() as u32, tile_ids: drawn })));
    }
    if hand == 0 {
        out.push(ended(state, pb::EndReason::HandEmptied, seat, 6, Some((seat, score))));
        return out;
    }
    // Start of the next turn: blocked?
    let available = state.available() & !placed_ids;
    let ov = Overlay { board: &state.board, extra };
    if ov.blocked(ids_types(available)) {
        out.push(ended(state, pb::EndReason::Blocked, 0, 0, Some((seat, score))));
    }
    out
}

fn parse_options(seats: u32, options: &OptionValues) -> CoreResult<Config> {
    let mut config = Config { seats, ages: None, idle_cap: options.int("max_idle_turns") };
    let ages = options.text("ages");
    if !ages.is_empty() {
        let parts: Vec<&str> = ages.split(',').map(str::trim).collect();
        if parts.len() != seats as usize {
            return Err(CoreError::option(format!("ages: expected {seats} comma-separated ages, got {}", parts.len())));
        }
        let mut parsed = [0u32; 4];
        for (i, p) in parts.iter().enumerate() {
            parsed[i] = p.parse::<u32>().map_err(|_| CoreError::option(format!("ages: {p:?} is not a non-negative integer")))?;
        }
        config.ages = Some(parsed);
    }
    Ok(config)
}


fn id_set(ids: &[u32]) -> CoreResult<u128> {
    let mut m = 0u128;
    for &id in ids {
        if id as usize >= TILES {
            return Err(CoreError::corrupt(format!("tile id {id} out of range")));
        }
        if m & (1u128 << id) != 0 {
            return Err(CoreError::corrupt(format!("tile id {id} repeated")));
        }
        m |= 1u128 << id;
    }
    Ok(m)
}

fn exchange_options(counts: &[u8; TYPES], max_k: u32) -> Vec<Vec<u32>> {
    let types: Vec<(u32, u8)> = (0..TYPES as u32).filter(|&t| counts[t as usize] > 0).map(|t| (t, counts[t as usize])).collect();
    let mut out = Vec::new();
    let mut pick = vec![0u8; types.len()];
    loop {
        // Odometer over pick[i] in 0..=count_i, last digit fastest.
        let mut i = types.len();
        loop {
            if i == 0 {
                return out;
            }
            i -= 1;
            if pick[i] < types[i].1 {
                pick[i] += 1;
                break;
            }
            pick[i] = 0;
        }
        let k: u32 = pick.iter().map(|&p| p as u32).sum();
        if k >= 1 && k <= max_k {
            let mut v = Vec::with_capacity(k as usize);
            for (j, &(t, _)) in types.iter().enumerate() {
                for _ in 0..pick[j] {
                    v.push(t);
                }
            }
            out.push(v);
        }
    }
}

fn opening_options(types: u64, g: u32) -> Vec<Vec<u32>> {
    let mut groups: Vec<u64> = Vec::new();
    if g == 1 {
        let mut m = types;
        while m != 0 {
            groups.push(1 << m.trailing_zeros());
            m &= m - 1;
        }
    } else {
        for i in 0..6 {
            for m in [types & colour_row(i), types & shape_col(i)] {
                if m.count_ones() == g {
                    groups.push(m);
                }
            }
        }
        groups.sort_unstable();
    }
    let mut out = Vec::new();
    for m in groups {
        let mut items: Vec<u32> = Vec::new();
        let mut r = m;
        while r != 0 {
            items.push(r.trailing_zeros());
            r &= r - 1;
        }
        permutations(&mut items, 0, &mut out);
    }
    out
}

fn permutations(items: &mut Vec<u32>, k: usize, out: &mut Vec<Vec<u32>>) {
    if k == items.len() {
        out.push(items.clone());
        return;
    }
    // Lexicographic order: rotate the chosen element into place.
    for i in k..items.len() {
        items[k..=i].rotate_right(1);
        permutations(items, k + 1, out);
        items[k..=i].rotate_left(1);
    }
}

fn action(kind: pb::action::Kind) -> pb::Action {
    pb::Action { kind: Some(kind) }
}

fn play_action(p: &PlayRef) -> pb::Action {
    action(pb::action::Kind::Play(pb::Play {
        placements: p.placements().map(|(x, y, t)| pb::Placement { x, y, tile_type: t as u32 }).collect(),
    }))
}

fn board_view(board: &Board, auditor: bool) -> (Vec<pb::BoardTile>, Vec<u32>) {
    let mut tiles: Vec<(i8, i8, u8)> = board.tiles.clone();
    tiles.sort_unstable_by_key(|&(x, y, _)| (y, x));
    let ids = if auditor { tiles.iter().map(|t| t.2 as u32).collect() } else { Vec::new() };
    (tiles.iter().map(|&(x, y, id)| pb::BoardTile { x: x as i32, y: y as i32, tile_type: id as u32 / 3 }).collect(), ids)
}

// ------------------------------------------------------------------------------------------------

impl Game for Qwirkle {
    type Config = Config;
    type State = State;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const ID: &'static str = "qwirkle";
    const NAME: &'static str = "Qwirkle";
    const PROTO_PACKAGE: &'static str = "tablier.qwirkle.v1";
    const MIN_PLAYERS: u32 = 2;
    const MAX_PLAYERS: u32 = 4;
    const HAS_EVALUATOR: bool = true;
    const BOTS: &'static [&'static str] = &["random", "greedy"];

    fn options() -> Vec<OptionSpec> {
        vec![
            OptionSpec::text(
                "ages",
                64,
                "",
                "Comma-separated age per seat (bigger = older) for the start-player tie-break; empty = unknown (lowest seat wins ties)",
            ),
            OptionSpec::int(
                "max_idle_turns",
                1000,
                1,
                1_000_000,
                "Administrative cap: consecutive turns without a placement before the match is aborted (1..1000000)",
            ),
        ]
    }

    fn configure(seats: u32, options: &OptionValues) -> CoreResult<Config> {
        parse_options(seats, options)
    }

    fn initial(config: &Config) -> State {
        State {
            config: config.clone(),
            phase: Phase::Setup,
            board: Board::default(),
            hands: [0; 4],
            bag: ALL_IDS,
            scores: [0; 4],
            announced: [0; 4],
            current: 0,
            start_seat: 0,
            idle: 0,
            turns: 0,
            end_reason: pb::EndReason::Unspecified,
            aborted: false,
        }
    }

    fn start(state: &State, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        if state.phase != Phase::Setup {
            return Err(CoreError::rule("ALREADY_STARTED", "the match has already started"));
        }
        let mut bag = state.bag;
        let mut hands = Vec::new();
        let mut g = Vec::new();
        for seat in 0..state.seats() {
            let ids = draw(&mut bag, 6, rng);
            g.push(group_size(ids.iter().fold(0u64, |m, &id| m | 1 << (id / 3))) as u8);
            hands.push(pb::SeatTiles { seat, count: ids.len() as u32, tile_ids: ids });
        }
        let start = start_player(&state.config, &g);
        Ok(vec![
            ev(pb::event::Kind::Dealt(pb::Dealt { hands })),
            ev(pb::event::Kind::Announced(pb::Announced { group_sizes: g.iter().map(|&x| x as u32).collect(), start_seat: start })),
        ])
    }

    /// Before the deal nobody is awaited: the match has not started.
    fn idle_refusal(state: &State, _seat: Seat, _action: &pb::Action) -> Option<CoreError> {
        (state.phase == Phase::Setup).then(|| CoreError::rule("NOT_STARTED", "the tiles have not been dealt yet"))
    }

    fn decide(state: &State, seat: Seat, action: &pb::Action, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        let Some(kind) = &action.kind else {
            return Err(CoreError::malformed("the action names no move"));
        };
        let hand = state.hands[seat as usize];
        let counts = state.hand_counts(seat);
        match kind {
            pb::action::Kind::Opening(o) => {
                if state.phase != Phase::Opening {
                    return Err(CoreError::rule("WRONG_PHASE", "the opening play has already been made"));
                }
                let g = state.announced[seat as usize] as usize;
                if o.tile_types.len() != g {
                    return Err(CoreError::rule(
                        "WRONG_OPENING_SIZE",
                        format!("the opening play must lay exactly {g} tiles (your announced group), not {}", o.tile_types.len()),
                    ));
                }
                let mut set = LineSet::default();
                let mut need = [0u8; TYPES];
                let mut extra = Vec::with_capacity(g);
                for (i, &t) in o.tile_types.iter().enumerate() {
                    if t as usize >= TYPES {
                        return Err(CoreError::malformed(format!("tile type {t} is out of range 0..35")));
                    }
                    need[t as usize] += 1;
                    if need[t as usize] > counts[t as usize] {
                        return Err(CoreError::rule("NOT_IN_HAND", format!("your hand does not hold {} {}", need[t as usize], type_code(t as u8))));
                    }
                    set = set.with(t as u8);
                    extra.push((idx(i as i32, 0), t as u8));
                }
                if !set.valid() {
                    return Err(CoreError::rule("NOT_A_GROUP", "the opening tiles must share a colour or a shape, without repeats"));
                }
                let score = line_points(g as u32).max(1);
                Ok(lay(state, seat, &extra, score, true, rng))
            }
            pb::action::Kind::Play(p) => {
                if state.phase != Phase::Turn {
                    return Err(CoreError::rule("WRONG_PHASE", "the start player must make the opening play first"));
                }
                let pl: Vec<(i32, i32, u32)> = p.placements.iter().map(|q| (q.x, q.y, q.tile_type)).collect();
                if pl.len() > 6 {
                    return Err(CoreError::rule("TOO_MANY_TILES", format!("a play lays at most 6 tiles, not {}", pl.len())));
                }
                let (extra, score) = check_play(&state.board, &counts, &pl)?;
                Ok(lay(state, seat, &extra, score, false, rng))
            }
            pb::action::Kind::Exchange(x) => {
                if state.phase != Phase::Turn {
                    return Err(CoreError::rule("WRONG_PHASE", "the start player must make the opening play, not exchange"));
                }
                let k = x.tile_types.len();
                if k == 0 {
                    return Err(CoreError::rule("EMPTY_EXCHANGE", "an exchange trades at least one tile"));
                }
                let bag_n = state.bag.count_ones() as usize;
                if k > 6 {
                    return Err(CoreError::rule("NOT_IN_HAND", format!("your hand holds 6 tiles at most, not {k}")));
                }
                let mut returned = 0u128;
                let mut left = hand;
                for &t in &x.tile_types {
                    if t as usize >= TYPES {
                        return Err(CoreError::malformed(format!("tile type {t} is out of range 0..35")));
                    }
                    let Some(id) = id_of_type(left, t as u8) else {
                        return Err(CoreError::rule("NOT_IN_HAND", format!("your hand does not hold enough {}", type_code(t as u8))));
                    };
                    left &= !(1u128 << id);
                    returned |= 1u128 << id;
                }
                if k > bag_n {
                    return Err(CoreError::rule("BAG_TOO_SMALL", format!("the bag holds {bag_n} tiles: you may exchange at most that many")));
                }
                let mut bag = state.bag;
                let drawn = draw(&mut bag, k as u32, rng);
                let mut out = vec![ev(pb::event::Kind::Exchanged(pb::Exchanged {
                    seat,
                    count: k as u32,
                    drawn_ids: drawn,
                    returned_ids: ids_list(returned),
                }))];
                if state.idle + 1 >= state.config.idle_cap {
                    out.push(ended(state, pb::EndReason::IdleCap, 0, 0, None));
                }
                Ok(out)
            }
            pb::action::Kind::Pass(_) => {
                if state.phase != Phase::Turn {
                    return Err(CoreError::rule("WRONG_PHASE", "the start player must make the opening play"));
                }
                if state.bag != 0 {
                    return Err(CoreError::rule("PASS_NOT_ALLOWED", "you may pass only when the bag is empty; exchange instead"));
                }
                if has_play(&state.board, ids_types(hand)) {
                    return Err(CoreError::rule("PASS_NOT_ALLOWED", "you have a legal play, so you must play"));
                }
                let mut out = vec![ev(pb::event::Kind::Passed(pb::Passed { seat }))];
                if state.idle + 1 >= state.config.idle_cap {
                    out.push(ended(state, pb::EndReason::IdleCap, 0, 0, None));
                }
                Ok(out)
            }
        }
    }

    fn evolve(state: &mut State, event: &pb::Event) -> CoreResult<()> {
        let Some(kind) = &event.kind else { return Err(CoreError::corrupt("event without kind")) };
        let seats = state.seats();
        match kind {
            pb::event::Kind::Dealt(d) => {
                if state.phase != Phase::Setup || !state.board.is_empty() || state.hands.iter().any(|&h| h != 0) {
                    return Err(CoreError::corrupt("deal outside setup"));
                }
                if d.hands.len() != seats as usize {
                    return Err(CoreError::corrupt("deal does not cover every seat"));
                }
                for (i, h) in d.hands.iter().enumerate() {
                    let set = id_set(&h.tile_ids)?;
                    if h.seat != i as u32 || h.tile_ids.len() != 6 || h.count != 6 || set & !state.bag != 0 {
                        return Err(CoreError::corrupt("deal does not fit the bag"));
                    }
                    state.bag &= !set;
                    state.hands[i] = set;
                }
            }
            pb::event::Kind::Announced(a) => {
                if state.phase != Phase::Setup || state.hands[0] == 0 || a.group_sizes.len() != seats as usize {
                    return Err(CoreError::corrupt("announcement out of place"));
                }
                for s in 0..seats {
                    let g = group_size(state.hand_types(s));
                    if a.group_sizes[s as usize] != g {
                        return Err(CoreError::corrupt("announced group size does not match the hand"));
                    }
                    state.announced[s as usize] = g as u8;
                }
                if a.start_seat != start_player(&state.config, &state.announced[..seats as usize]) {
                    return Err(CoreError::corrupt("start seat does not follow the start-player rule"));
                }
                state.start_seat = a.start_seat;
                state.current = a.start_seat;
                state.phase = Phase::Opening;
            }
            pb::event::Kind::Placed(p) => {
                let want = if p.opening { Phase::Opening } else { Phase::Turn };
                if state.phase != want || p.seat != state.current {
                    return Err(CoreError::corrupt("placement out of turn"));
                }
                let set = id_set(&p.tile_ids)?;
                let hand = state.hands[p.seat as usize];
                if set & !hand != 0 || p.tile_ids.len() != p.placements.len() || p.placements.is_empty() || p.placements.len() > 6 || p.points > 90 {
                    return Err(CoreError::corrupt("placed tiles do not fit the hand"));
                }
                for (q, &id) in p.placements.iter().zip(&p.tile_ids) {
                    if q.x.unsigned_abs() > MAXC as u32 || q.y.unsigned_abs() > MAXC as u32 || q.tile_type != id / 3 || state.board.at(q.x, q.y) != 0 {
                        return Err(CoreError::corrupt("placement on a bad cell"));
                    }
                }
                // The play itself must be legal and scored right (a log is never trusted blindly).
                if p.opening {
                    let mut line = LineSet::default();
                    for (i, q) in p.placements.iter().enumerate() {
                        line = line.with(q.tile_type as u8);
                        if (q.x, q.y) != (i as i32, 0) {
                            return Err(CoreError::corrupt("opening play off its canonical cells"));
                        }
                    }
                    let g = p.placements.len() as u32;
                    if g != state.announced[p.seat as usize] as u32 || !line.valid() || p.points != line_points(g).max(1) {
                        return Err(CoreError::corrupt("opening play is not the announced group or is mis-scored"));
                    }
                } else {
                    let pl: Vec<(i32, i32, u32)> = p.placements.iter().map(|q| (q.x, q.y, q.tile_type)).collect();
                    match check_play(&state.board, &state.hand_counts(p.seat), &pl) {
                        Ok((_, score)) if score == p.points => {}
                        Ok(_) => return Err(CoreError::corrupt("play is mis-scored")),
                        Err(e) => return Err(CoreError::corrupt(format!("illegal play in the log: {e}"))),
                    }
                }
                for (q, &id) in p.placements.iter().zip(&p.tile_ids) {
                    state.board.put(q.x, q.y, id);
                }
                state.hands[p.seat as usize] &= !set;
                state.scores[p.seat as usize] += p.points as i64;
                state.idle = 0;
                state.turns += 1;
                state.phase = Phase::Turn;
                state.current = state.next(p.seat);
            }
            pb::event::Kind::Drew(d) => {
                let set = id_set(&d.tile_ids)?;
                if d.seat >= seats || set & !state.bag != 0 || d.count as usize != d.tile_ids.len() || state.phase != Phase::Turn {
                    return Err(CoreError::corrupt("draw does not fit the bag"));
                }
                let h = &mut state.hands[d.seat as usize];
                if (*h | set).count_ones() > 6 {
                    return Err(CoreError::corrupt("draw overfills a hand"));
                }
                *h |= set;
                state.bag &= !set;
            }
            pb::event::Kind::Exchanged(x) => {
                let drawn = id_set(&x.drawn_ids)?;
                let ret = id_set(&x.returned_ids)?;
                let hand = state.hands[x.seat as usize & 3];
                if state.phase != Phase::Turn
                    || x.seat != state.current
                    || drawn & !state.bag != 0
                    || ret & !hand != 0
                    || x.drawn_ids.len() != x.returned_ids.len()
                    || x.count as usize != x.drawn_ids.len()
                    || x.count == 0
                {
                    return Err(CoreError::corrupt("exchange does not fit"));
                }
                state.hands[x.seat as usize] = (hand & !ret) | drawn;
                state.bag = (state.bag & !drawn) | ret;
                state.idle += 1;
                state.turns += 1;
                state.current = state.next(x.seat);
            }
            pb::event::Kind::Passed(p) => {
                // A pass with tiles in the bag is a timed-out seat's (§11): the clock passes for
                // it where the seat itself could not (AMB7, AMB8 bind the seat's own choice).
                if state.phase != Phase::Turn || p.seat != state.current {
                    return Err(CoreError::corrupt("pass out of place"));
                }
                state.idle += 1;
                state.turns += 1;
                state.current = state.next(p.seat);
            }
            pb::event::Kind::Ended(e) => {
                if matches!(state.phase, Phase::Setup | Phase::Over) || e.final_scores.len() != seats as usize || e.bonus > 6 || e.bonus_seat >= seats {
                    return Err(CoreError::corrupt("end out of place"));
                }
                let reason = pb::EndReason::try_from(e.reason).map_err(|_| CoreError::corrupt("unknown end reason"))?;
                let fits = match reason {
                    pb::EndReason::Unspecified => false,
                    pb::EndReason::HandEmptied => e.bonus == 6 && state.hands[e.bonus_seat as usize] == 0 && state.bag == 0 && !e.aborted,
                    pb::EndReason::Blocked => e.bonus == 0 && is_blocked(state) && !e.aborted,
                    pb::EndReason::IdleCap => e.bonus == 0 && state.idle >= state.config.idle_cap && e.aborted,
                    // The seat to act forfeited (§11); `current` stays the forfeiting seat.
                    pb::EndReason::Forfeit => e.bonus == 0 && e.bonus_seat == state.current && !e.aborted,
                };
                if !fits {
                    return Err(CoreError::corrupt("the end does not follow from the state"));
                }
                state.scores[e.bonus_seat as usize] += e.bonus as i64;
                if state.scores[..seats as usize] != e.final_scores[..] {
                    return Err(CoreError::corrupt("final scores do not match the log"));
                }
                state.phase = Phase::Over;
                state.end_reason = reason;
                state.aborted = e.aborted;
            }
        }
        Ok(())
    }

    fn to_act(state: &State) -> Seats {
        match state.phase {
            Phase::Opening | Phase::Turn => Seats::one(state.current),
            _ => Seats::NONE,
        }
    }

    fn legal_actions_into(state: &State, seat: Seat, out: &mut Vec<pb::Action>) {
        if seat != state.current || !matches!(state.phase, Phase::Opening | Phase::Turn) {
            return;
        }
        let types = state.hand_types(seat);
        if state.phase == Phase::Opening {
            let g = state.announced[seat as usize & 3] as u32;
            out.extend(
                opening_options(types, g)
                    .into_iter()
                    .map(|v| action(pb::action::Kind::Opening(pb::OpeningPlay { tile_types: v }))),
            );
            return;
        }
        let mark = out.len();
        enumerate_plays(&state.board, types, |p| out.push(play_action(p)));
        let bag_n = state.bag.count_ones();
        if bag_n > 0 {
            let counts = state.hand_counts(seat);
            for v in exchange_options(&counts, bag_n) {
                out.push(action(pb::action::Kind::Exchange(pb::Exchange { tile_types: v })));
            }
        } else if out.len() == mark {
            out.push(action(pb::action::Kind::Pass(pb::Pass {})));
        }
    }

    fn view(state: &State, viewer: Viewer) -> pb::View {
        let auditor = viewer == Viewer::Auditor;
        let (board, board_tile_ids) = board_view(&state.board, auditor);
        let seats = (0..state.seats())
            .map(|s| {
                let h = state.hands[s as usize];
                let visible = viewer.sees_private_of(s);
                let ids = if visible { ids_list(h) } else { Vec::new() };
                pb::SeatView {
                    seat: s,
                    score: state.scores[s as usize],
                    hand_count: h.count_ones(),
                    announced_group: state.announced[s as usize] as u32,
                    hand_visible: visible,
                    hand_tile_types: ids.iter().map(|id| id / 3).collect(),
                    hand_tile_ids: ids,
                }
            })
            .collect();
        let phase = match state.phase {
            Phase::Setup => pb::Phase::Setup,
            Phase::Opening => pb::Phase::Opening,
            Phase::Turn => pb::Phase::Turn,
            Phase::Over => pb::Phase::GameOver,
        };
        pb::View {
            phase: phase as i32,
            to_act: Self::to_act(state).to_vec(),
            current_seat: state.current,
            start_seat: state.start_seat,
            seats,
            board,
            bag_count: state.bag.count_ones(),
            bag_tile_ids: if auditor { ids_list(state.bag) } else { Vec::new() },
            board_tile_ids,
            turns_without_placement: state.idle,
            idle_cap: state.config.idle_cap,
            turns: state.turns,
            end_reason: state.end_reason as i32,
            aborted: state.aborted,
            viewer: Some(viewer.to_proto()),
        }
    }

    fn redact(event: &pb::Event, viewer: Viewer) -> Option<pb::Event> {
        if viewer == Viewer::Auditor {
            return Some(event.clone());
        }
        let mut e = event.clone();
        match e.kind.as_mut()? {
            pb::event::Kind::Dealt(d) => {
                for h in &mut d.hands {
                    if !viewer.sees_private_of(h.seat) {
                        h.tile_ids.clear();
                    }
                }
            }
            pb::event::Kind::Placed(p) => {
                if !viewer.sees_private_of(p.seat) {
                    p.tile_ids.clear();
                }
            }
            pb::event::Kind::Drew(d) => {
                if !viewer.sees_private_of(d.seat) {
                    d.tile_ids.clear();
                }
            }
            pb::event::Kind::Exchanged(x) => {
                if !viewer.sees_private_of(x.seat) {
                    x.drawn_ids.clear();
                    x.returned_ids.clear();
                }
            }
            _ => {}
        }
        Some(e)
    }

    fn event_type(event: &pb::Event) -> &'static str {
        match &event.kind {
            Some(pb::event::Kind::Dealt(_)) => "dealt",
            Some(pb::event::Kind::Announced(_)) => "announced",
            Some(pb::event::Kind::Placed(_)) => "placed",
            Some(pb::event::Kind::Drew(_)) => "drew",
            Some(pb::event::Kind::Exchanged(_)) => "exchanged",
            Some(pb::event::Kind::Passed(_)) => "passed",
            Some(pb::event::Kind::Ended(_)) => "ended",
            None => "unknown",
        }
    }

    fn outcome(state: &State) -> Option<Outcome> {
        if state.phase != Phase::Over {
            return None;
        }
        let scores = state.scores[..state.seats() as usize].to_vec();
        Some(Outcome {
            // An administrative cap is reported as an abort, not a result (spec §10.4, AMB18).
            winners: match state.end_reason {
                _ if state.aborted => vec![],
                pb::EndReason::Forfeit => forfeit_winners(&scores, state.current),
                _ => winners(&scores),
            },
            scores,
            reason: match state.end_reason {
                pb::EndReason::HandEmptied => "HAND_EMPTIED",
                pb::EndReason::Blocked => "BLOCKED",
                pb::EndReason::IdleCap => "IDLE_CAP",
                pb::EndReason::Forfeit => "FORFEIT",
                pb::EndReason::Unspecified => "UNSPECIFIED",
            }
            .into(),
            lower_is_better: false,
            aborted: state.aborted,
        })
    }

    /// Match clocks (§11): a timed-out seat passes.
    const TIMEOUT_POLICIES: &'static [&'static str] = &[TIMEOUT_PASS, TIMEOUT_FORFEIT];
    const TIMEOUT_HELP: &'static str = "pass: the seat passes its turn, laying and exchanging nothing, even with \
        tiles in the bag (the start player's compulsory opening play is made instead: the first one listed). \
        forfeit: the seat forfeits: the match ends at once (reason FORFEIT) and the highest score among the \
        other seats wins, ties share.";

    fn timeout_events(state: &State, seat: Seat, policy: &str, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
        timeout_pass(state, seat, policy, rng)
    }

    fn bot_action(state: &State, seat: Seat, bot: &str, rng: &mut Rng) -> CoreResult<pb::Action> {
        if seat != state.current || !matches!(state.phase, Phase::Opening | Phase::Turn) {
            return Err(CoreError::not_your_turn());
        }
        if bot != "greedy" {
            let mut moves = Self::legal_actions(state, seat);
            if moves.is_empty() {
                return Err(CoreError::not_your_turn());
            }
            let i = rng.index(moves.len());
            return Ok(moves.swap_remove(i));
        }
        Ok(greedy(state, seat))
    }

    fn render(state: &State, viewer: Viewer) -> String {
        let mut s = String::new();
        let b = &state.board;
        if !b.is_empty() {
            let _ = write!(s, "     ");
            for x in b.min_x..=b.max_x {
                let _ = write!(s, "{x:>3}");
            }
            s.push('\n');
            for y in b.min_y..=b.max_y {
                let _ = write!(s, "{y:>4} ");
                for x in b.min_x..=b.max_x {
                    match b.at(x, y) {
                        0 => s.push_str("  ."),
                        v => {
                            let _ = write!(s, " {}", type_code(v - 1));
                        }
                    }
                }
                s.push('\n');
            }
        }
        let _ = writeln!(s, "bag {} | phase {:?} | to act {:?}", state.bag.count_ones(), state.phase, Self::to_act(state));
        for seat in 0..state.seats() {
            let h = state.hands[seat as usize];
            let hand = if viewer.sees_private_of(seat) {
                ids_list(h).iter().map(|&id| type_code((id / 3) as u8)).collect::<Vec<_>>().join(" ")
            } else {
                format!("{} tiles", h.count_ones())
            };
            let _ = writeln!(s, "seat {seat}: score {:>3}  g {}  hand {hand}", state.scores[seat as usize], state.announced[seat as usize]);
        }
        if let Some(o) = Self::outcome(state) {
            let _ = writeln!(s, "over: {} winners {:?}{}", o.reason, o.winners, if o.aborted { " (aborted)" } else { "" });
        }
        s
    }

    fn evaluate(position: &[u8]) -> CoreResult<Vec<u8>> {
        use prost::Message;
        let pos = pb::Position::decode(position).map_err(|e| CoreError::malformed(format!("cannot decode position: {e}")))?;
        Ok(evaluate_position(&pos)?.encode_to_vec())
    }

    /// The public board, the seat's own hand (types, ascending) and whether the bag is empty
    /// (public: the bag's count is in every view).
    fn position(state: &State, seat: Seat) -> Option<Vec<u8>> {
        use prost::Message;
        let (board, _) = board_view(&state.board, false);
        let hand_types = ids_list(state.hands[seat as usize & 3]).iter().map(|id| id / 3).collect();
        Some(pb::Position { board, hand_types, bag_empty: state.bag == 0 }.encode_to_vec())
    }

    fn check_invariants(state: &State) -> Result<(), String> {
        let seats = state.seats() as usize;
        let mut seen = state.bag;
        if state.bag & state.board.ids != 0 {
            return Err("a tile is both in the bag and on the board".into());
        }
        seen |= state.board.ids;
        for (s, &h) in state.hands.iter().enumerate() {
            if s >= seats {
                if h != 0 {
                    return Err(format!("hand of absent seat {s}"));
                }
                continue;
            }
            if h & seen != 0 {
                return Err(format!("seat {s} holds a tile that is elsewhere"));
            }
            if h.count_ones() > 6 {
                return Err(format!("seat {s} holds {} tiles", h.count_ones()));
            }
            // Between a placement and its refill, only the seat that just played may be short.
            if state.phase != Phase::Setup && state.bag != 0 && h.count_ones() != 6 && s as u32 != (state.current + state.seats() - 1) % state.seats() {
                return Err(format!("seat {s} holds {} tiles while the bag is not empty", h.count_ones()));
            }
            seen |= h;
        }
        if seen != ALL_IDS {
            return Err("tiles are not conserved (108)".into());
        }
        if state.board.tiles.len() != state.board.ids.count_ones() as usize {
            return Err("board list and id set disagree".into());
        }
        for &(x, y, id) in &state.board.tiles {
            if state.board.at(x as i32, y as i32) != id / 3 + 1 {
                return Err("board grid and tile list disagree".into());
            }
        }
        state.board.lines_valid()?;
        for s in 0..seats {
            let sc = state.scores[s];
            if !(0..=84 * 108 + 6).contains(&sc) {
                return Err(format!("score {sc} out of bounds"));
            }
        }
        match state.phase {
            Phase::Setup | Phase::Opening if !state.board.is_empty() => return Err("tiles on the table before the opening".into()),
            Phase::Turn if state.board.is_empty() => return Err("no tile on the table after the opening".into()),
            _ => {}
        }
        if state.current >= state.seats() {
            return Err("current seat out of range".into());
        }
        if state.phase != Phase::Over && state.idle >= state.config.idle_cap {
            return Err("idle cap passed without an end".into());
        }
        Ok(())
    }
}

/// Greedy: the first play of the best immediate score; with no play, exchange everything the
/// bag allows (lowest types first), or pass.
/// The timeout policy `pass` (match clocks, docs/rules/qwirkle.md §11).
const TIMEOUT_PASS: &str = "pass";
/// The timeout policy `forfeit`: the match ends, the seat to act losing (§11).
const TIMEOUT_FORFEIT: &str = "forfeit";

/// The winners when `seat` forfeits (§11): the highest score (§6.3) among the other seats;
/// ties share the win (AMB12).
fn forfeit_winners(scores: &[i64], seat: u32) -> Vec<u32> {
    let others = (0..scores.len() as u32).filter(|&s| s != seat);
    let best = others.clone().map(|s| scores[s as usize]).max().unwrap_or(0);
    others.filter(|&s| scores[s as usize] == best).collect()
}

/// A timed-out seat passes its turn: a `passed` event, even with tiles in the bag or a legal
/// play in hand (§11), counted as a turn without a placement by the idle cap (AMB18). The
/// opening play cannot be passed (R9): the start player makes the first opening play listed.
fn timeout_pass(state: &State, seat: Seat, policy: &str, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
    if policy != TIMEOUT_PASS && policy != TIMEOUT_FORFEIT {
        return Err(CoreError::Unsupported(format!("qwirkle has no timeout policy {policy:?}")));
    }
    if seat != state.current || !matches!(state.phase, Phase::Opening | Phase::Turn) {
        return Err(CoreError::not_your_turn());
    }
    if policy == TIMEOUT_FORFEIT {
        return Ok(vec![ended(state, pb::EndReason::Forfeit, seat, 0, None)]);
    }
    if state.phase == Phase::Opening {
        let first = Qwirkle::legal_actions(state, seat).into_iter().next().ok_or_else(CoreError::not_your_turn)?;
        return Qwirkle::decide(state, seat, &first, rng);
    }
    let mut out = vec![ev(pb::event::Kind::Passed(pb::Passed { seat }))];
    if state.idle + 1 >= state.config.idle_cap {
        out.push(ended(state, pb::EndReason::IdleCap, 0, 0, None));
    }
    Ok(out)
}

fn greedy(state: &State, seat: Seat) -> pb::Action {
    let types = state.hand_types(seat);
    if state.phase == Phase::Opening {
        let g = state.announced[seat as usize & 3] as u32;
        let v = opening_options(types, g).into_iter().next().unwrap_or_default();
        return action(pb::action::Kind::Opening(pb::OpeningPlay { tile_types: v }));
    }
    if let Some((pl, _)) = best_play(&state.board, types) {
        return action(pb::action::Kind::Play(pb::Play {
            placements: pl.into_iter().map(|(x, y, t)| pb::Placement { x, y, tile_type: t as u32 }).collect(),
        }));
    }
    let bag_n = state.bag.count_ones() as usize;
    if bag_n == 0 {
        return action(pb::action::Kind::Pass(pb::Pass {}));
    }
    let mut ids = ids_list(state.hands[seat as usize]);
    ids.truncate(bag_n);
    action(pb::action::Kind::Exchange(pb::Exchange { tile_types: ids.iter().map(|id| id / 3).collect() }))
}

/// The evaluator behind `evaluate`: validates a position and lists its plays.
pub fn evaluate_position(pos: &pb::Position) -> CoreResult<pb::Evaluation> {
    if pos.board.len() > TILES {
        return Err(CoreError::malformed(format!("{} tiles on the board (at most 108)", pos.board.len())));
    }
    if pos.hand_types.len() > 6 {
        return Err(CoreError::malformed(format!("{} tiles in the hand (at most 6)", pos.hand_types.len())));
    }
    let mut tiles = Vec::with_capacity(pos.board.len());
    for t in &pos.board {
        if t.tile_type as usize >= TYPES {
            return Err(CoreError::malformed(format!("tile type {} is out of range 0..35", t.tile_type)));
        }
        tiles.push((t.x, t.y, t.tile_type as u8));
    }
    let board = Board::from_types(&tiles)?;
    board.lines_valid().map_err(CoreError::malformed)?;
    let mut copies = [0u8; TYPES];
    for &(_, _, id) in &board.tiles {
        copies[id as usize / 3] += 1;
    }
    let mut hand = 0u64;
    for &t in &pos.hand_types {
        if t as usize >= TYPES {
            return Err(CoreError::malformed(format!("tile type {t} is out of range 0..35")));
        }
        copies[t as usize] += 1;
        if copies[t as usize] > 3 {
            return Err(CoreError::malformed(format!("more than 3 copies of {}", type_code(t as u8))));
        }
        hand |= 1 << t;
    }
    let hand_size = pos.hand_types.len();
    let mut eval = pb::Evaluation { counts_per_k: vec![0; 6], ..Default::default() };
    enumerate_plays(&board, hand, |p| {
        let mut score = p.score;
        if pos.bag_empty && p.len() == hand_size {
            score += 6;
        }
        eval.counts_per_k[p.len() - 1] += 1;
        eval.best_score = eval.best_score.max(score);
        eval.plays.push(pb::EvaluatedPlay {
            placements: p.placements().map(|(x, y, t)| pb::Placement { x, y, tile_type: t as u32 }).collect(),
            score,
        });
    });
    eval.total = eval.plays.len() as u32;
    Ok(eval)
}

// ------------------------------------------------------------------------------------------------
// Test and bench support: build positions directly.

impl State {
    /// A TURN-phase state from a board, hands and bag given as type codes (tiles not listed are
    /// out of play, as in the spec's test vectors). Panics on bad fixtures (tests only).
    pub fn fixture(seats: u32, board: &[(i32, i32, &str)], hands: &[&[&str]], bag: &[&str], current: u32) -> State {
        let config = parse_options(seats, &OptionValues::defaults(&Qwirkle::options())).expect("seats");
        let mut st = Qwirkle::initial(&config);
        let mut pool = ALL_IDS;
        let mut take = |code: &str| -> u32 {
            let t = parse_type(code).expect("tile code");
            let id = id_of_type(pool, t).expect("at most 3 copies");
            pool &= !(1u128 << id);
            id
        };
        for &(x, y, c) in board {
            let id = take(c);
            st.board.put(x, y, id);
        }
        for (s, h) in hands.iter().enumerate() {
            for c in h.iter() {
                st.hands[s] |= 1u128 << take(c);
            }
        }
        st.bag = 0;
        for c in bag {
            st.bag |= 1u128 << take(c);
        }
        st.phase = if st.board.is_empty() { Phase::Opening } else { Phase::Turn };
        st.current = current;
        st
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks() {
        let rc = parse_type("RC").unwrap();
        let set = LineSet::default().with(rc);
        let acc = set.accepts();
        assert_eq!(acc.count_ones(), 10);
        assert_eq!(acc & (1 << rc), 0);
        assert_eq!(group_size(ALL_TYPES), 6);
        assert_eq!(select(0b1011000, 2), 6);
        assert_eq!(select(1u128 << 100 | 1, 1), 100);
    }
}
