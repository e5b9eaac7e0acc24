//! The state's invariants (cards conserved, sets consistent), checked by the harness after
//! every event.

use super::state::{deck_histogram, hist_add, Phase, State, DECK_SIZE, NONE, NO_CARD};

pub(super) fn invariants(st: &State) -> Result<(), String> {
    let n = st.n();
    if !(2..=8).contains(&n) {
        return Err(format!("seat count {n}"));
    }
    if st.phase == Phase::DealPending && st.round == 0 {
        return Ok(());
    }
    let range = if n == 8 {
        u128::MAX >> 32
    } else {
        (1u128 << (12 * n)) - 1
    };
    if st.filled & !range != 0 || st.up & !st.filled != 0 {
        return Err("slot sets out of range or face-up empty slot".into());
    }
    let mut h = [0u16; 15];
    let mut count = 0usize;
    for s in 0..(12 * n) as u8 {
        let filled = st.is_filled(s);
        if filled != (st.val[s as usize] != NO_CARD) {
            return Err(format!("slot {s} value/filled mismatch"));
        }
        if filled {
            if !hist_add(&mut h, st.val[s as usize]) {
                return Err(format!("slot {s} bad value"));
            }
            count += 1;
        }
    }
    for &v in st.draw[..st.draw_len as usize]
        .iter()
        .chain(&st.disc[..st.disc_len as usize])
    {
        if !hist_add(&mut h, v) {
            return Err("pile card value".into());
        }
        count += 1;
    }
    for v in [
        st.drawn_card,
        st.held_card,
        st.taken_card,
        st.exchanged_card,
    ] {
        if v != NO_CARD {
            if !hist_add(&mut h, v) {
                return Err("card in transit value".into());
            }
            count += 1;
        }
    }
    if count != DECK_SIZE || h != deck_histogram() {
        return Err(format!("cards not conserved: {count} cards"));
    }
    let holds_x = matches!(
        st.phase,
        Phase::KnockWindow
            | Phase::KnockClosePending
            | Phase::KnockDecision
            | Phase::DecideDrawn
            | Phase::SwapDiscard
            | Phase::KnockerSwap
    );
    if holds_x != (st.drawn_card != NO_CARD) {
        return Err(format!(
            "drawn card present={} in phase {:?}",
            st.drawn_card != NO_CARD,
            st.phase
        ));
    }
    if st.reserved_slot != NONE && (st.is_filled(st.reserved_slot) || st.held_card == NO_CARD) {
        return Err("reserved slot filled or Y missing".into());
    }
    if st.closer == NONE && st.final_taken != 0 {
        return Err("final turns without a closer".into());
    }
    if st.closer != NONE && st.final_taken >> st.closer & 1 == 0 {
        return Err("closer has not taken his final turn".into());
    }
    if st.phase == Phase::Triples && (st.tri_owner as usize) >= n {
        return Err("triples window without owner".into());
    }
    if matches!(
        st.phase,
        Phase::KnockerSwap | Phase::TakeFromKnocker | Phase::ReturnSwap
    ) && (st.knocker as usize) >= n
    {
        return Err("knock path without knocker".into());
    }
    if (st.eligible | st.answered | st.knocked) >> st.active & 1 == 1
        || st.answered & !st.eligible != 0
    {
        return Err("knock sets inconsistent".into());
    }
    let rounds = st.round.max(1) as i32;
    for i in 0..n {
        if !(-20..=360).contains(&st.last[i]) {
            return Err(format!("round score {} out of bounds", st.last[i]));
        }
        if st.totals[i] < -20 * rounds || st.totals[i] > 360 * rounds {
            return Err(format!("total {} out of bounds", st.totals[i]));
        }
    }
    if (st.active as usize) >= n {
        return Err("active seat".into());
    }
    Ok(())
}
