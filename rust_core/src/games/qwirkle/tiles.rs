//! Tiles and masks: types, ids, the line sets and the bit tricks the rest of the game is built on.

use crate::error::{CoreError, CoreResult};
use crate::rng::Rng;

// ------------------------------------------------------------------------------------------------
// Tiles, masks

pub(super) const TYPES: usize = 36;
pub(super) const TILES: usize = 108;
pub(super) const ALL_TYPES: u64 = (1u64 << 36) - 1;
pub(super) const ALL_IDS: u128 = (1u128 << 108) - 1;
const COLOURS: &[u8; 6] = b"ROYGBP";
const SHAPES: &[u8; 6] = b"CXDSEL";

/// Types of colour c.
pub(super) const fn colour_row(c: usize) -> u64 {
    0x3F << (6 * c)
}
/// Types of shape s.
pub(super) const fn shape_col(s: usize) -> u64 {
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
pub(super) fn type_code(t: u8) -> String {
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
pub(super) struct LineSet {
    cm: u8,
    sm: u8,
    pub(super) n: u8,
}

impl LineSet {
    #[inline(always)]
    pub(super) fn with(self, t: u8) -> LineSet {
        LineSet {
            cm: self.cm | (1 << (t / 6)),
            sm: self.sm | (1 << (t % 6)),
            n: self.n + 1,
        }
    }
    /// All distinct and one colour or one shape (and therefore at most 6).
    #[inline(always)]
    pub(super) fn valid(self) -> bool {
        let (c, s) = (self.cm.count_ones() as u8, self.sm.count_ones() as u8);
        (c == 1 && s == self.n) || (s == 1 && c == self.n)
    }
    /// Types that may join this (valid, possibly empty) set of tiles.
    #[inline(always)]
    pub(super) fn accepts(self) -> u64 {
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
pub(super) fn line_points(len: u32) -> u32 {
    match len {
        0 | 1 => 0,
        6 => 12,
        l => l,
    }
}

/// g(hand): size of the largest group (distinct types sharing a colour or a shape).
pub(super) fn group_size(types: u64) -> u32 {
    let mut g = 0;
    for i in 0..6 {
        g = g
            .max((types & colour_row(i)).count_ones())
            .max((types & shape_col(i)).count_ones());
    }
    g
}

pub(super) fn ids_types(ids: u128) -> u64 {
    let mut m = 0u64;
    let mut r = ids;
    while r != 0 {
        let id = r.trailing_zeros();
        r &= r - 1;
        m |= 1 << (id / 3);
    }
    m
}

pub(super) fn ids_list(ids: u128) -> Vec<u32> {
    let mut v = Vec::with_capacity(ids.count_ones() as usize);
    let mut r = ids;
    while r != 0 {
        v.push(r.trailing_zeros());
        r &= r - 1;
    }
    v
}

/// The `i`-th set bit of `set` (ascending).
pub(super) fn select(set: u128, mut i: u32) -> u32 {
    let lo = set as u64;
    let lc = lo.count_ones();
    let (mut w, base) = if i < lc {
        (lo, 0)
    } else {
        i -= lc;
        ((set >> 64) as u64, 64)
    };
    for _ in 0..i {
        w &= w - 1;
    }
    base + w.trailing_zeros()
}

pub(super) fn draw(bag: &mut u128, k: u32, rng: &mut Rng) -> Vec<u32> {
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
pub(super) fn id_of_type(ids: u128, t: u8) -> Option<u32> {
    let m = ids & (0b111u128 << (3 * t as u32));
    (m != 0).then(|| m.trailing_zeros())
}

pub(super) fn id_set(ids: &[u32]) -> CoreResult<u128> {
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
