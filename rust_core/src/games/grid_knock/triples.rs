//! Triple detection (hot path): the triples of a domain from its face-up cells as bit masks.

/// What triple detection reads of a match: the seat count, every seat's domain cells
/// (`dom[i][r * 5 + d]`: the slot of cell (r, d)), the slots' values, and the filled and face-up
/// slots as bit sets.
pub(super) struct Grid<'a> {
    pub(super) n: usize,
    pub(super) dom: &'a [[u8; 15]; 8],
    pub(super) val: &'a [i8; 96],
    pub(super) filled: u128,
    pub(super) up: u128,
}

/// Up to 14 candidate triples of one domain (R3): 3 rows x 3 windows + 5 columns.
pub(super) struct Triples {
    pub(super) cells: [[u8; 3]; 14],
    pub(super) len: usize,
}

/// Number of set bits of a 5-bit row mask (no reliance on a popcnt instruction).
const POP5: [u8; 32] = {
    let mut t = [0u8; 32];
    let mut k = 0;
    while k < 32 {
        t[k] = (k as u32).count_ones() as u8;
        k += 1;
    }
    t
};

/// Every triple of domain `i`, rows first (r1..r3, windows left to right), then columns d0..d4.
/// Cells are in line order.
#[inline]
pub(super) fn domain_triples(g: &Grid, i: u8) -> Triples {
    let mut out = Triples {
        cells: [[0; 3]; 14],
        len: 0,
    };
    // Face-up and filled cells of the domain as 15-bit masks (bit r * 5 + d). The own block is
    // 12 contiguous slots; d0 is column 4 of the left neighbour's block.
    let own = i as usize * 12;
    let nb = if i as usize + 1 == g.n {
        0
    } else {
        (i as usize + 1) * 12
    };
    let up_own = (g.up >> own) as u32 & 0xfff;
    let up_nb = (g.up >> nb) as u32 & 0xfff;
    let mut up: u32 = 0;
    for r in 0..3 {
        up |= ((up_nb >> (r * 4 + 3) & 1) | ((up_own >> (r * 4) & 0xf) << 1)) << (r * 5);
    }
    // Fewer than three face-up cells: no triple (x & (x - 1) clears the lowest set bit).
    let two = up & up.wrapping_sub(1);
    if two & two.wrapping_sub(1) == 0 {
        return out;
    }
    let dom = &g.dom[i as usize];
    let ov = &g.val[own..own + 12];
    let nv = &g.val[nb..nb + 12];
    // Value of domain cell (r, d).
    let cell = |r: usize, d: usize| {
        if d == 0 {
            nv[r * 4 + 3]
        } else {
            ov[r * 4 + d - 1]
        }
    };
    // Rows: a triple needs three face-up cards in the row; empty slots are skipped, face-down
    // cards break the run (their key is a sentinel no card value equals).
    let f_own = (g.filled >> own) as u32 & 0xfff;
    let f_nb = (g.filled >> nb) as u32 & 0xfff;
    for r in 0..3 {
        let ru = up >> (r * 5) & 0x1f;
        if POP5[ru as usize] < 3 {
            continue;
        }
        let rf = (f_nb >> (r * 4 + 3) & 1) | ((f_own >> (r * 4) & 0xf) << 1);
        let mut key = [0i8; 5];
        for (d, k) in key.iter_mut().enumerate() {
            *k = if ru >> d & 1 == 1 {
                cell(r, d)
            } else {
                32 + d as i8
            };
        }
        if rf == 0x1f {
            for d in 0..3 {
                if key[d] == key[d + 1] && key[d + 1] == key[d + 2] {
                    let b = r * 5 + d;
                    out.cells[out.len] = [dom[b], dom[b + 1], dom[b + 2]];
                    out.len += 1;
                }
            }
        } else {
            let mut line = [0usize; 5];
            let mut len = 0;
            for d in 0..5 {
                if rf >> d & 1 == 1 {
                    line[len] = d;
                    len += 1;
                }
            }
            let mut w = 0;
            while w + 2 < len {
                let (a, b, c) = (line[w], line[w + 1], line[w + 2]);
                if key[a] == key[b] && key[b] == key[c] {
                    let o = r * 5;
                    out.cells[out.len] = [dom[o + a], dom[o + b], dom[o + c]];
                    out.len += 1;
                }
                w += 1;
            }
        }
    }
    // Columns: all three cells face up and equal.
    let mut cu = up & up >> 5 & up >> 10 & 0x1f;
    while cu != 0 {
        let d = cu.trailing_zeros() as usize;
        cu &= cu - 1;
        let v = cell(0, d);
        if cell(1, d) == v && cell(2, d) == v {
            out.cells[out.len] = [dom[d], dom[5 + d], dom[10 + d]];
            out.len += 1;
        }
    }
    out
}

/// The domains a slot belongs to: its owner's, and for column 4 also the right neighbour's.
#[inline]
pub(super) fn slot_domains(n: usize, s: u8) -> (u8, Option<u8>) {
    let owner = s / 12;
    if s % 4 == 3 {
        (
            owner,
            Some(if owner == 0 { n as u8 - 1 } else { owner - 1 }),
        )
    } else {
        (owner, None)
    }
}
