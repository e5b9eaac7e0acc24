//! The state's invariants, checked by the conformance suite after every event: card
//! conservation, tops and masks, hand sizes, scores and rounds in bounds.

use super::cards::card_mask;
use super::cards::{bit, card_name, rank, DECK, JACK, KING, MAX_EXTRA_ROUNDS, NONE, QUEEN, TEN};
use super::scoring::base_score;
use super::state::{Phase, State};

pub(super) fn check_invariants(s: &State) -> Result<(), String> {
    // Conservation (R24): every card in exactly one place once a round was dealt.
    let mut seen = 0u64;
    let mut count = 0u32;
    let mut add = |b: u64| -> Result<(), String> {
        if seen & b != 0 {
            return Err(format!(
                "card {} is in two places",
                card_name(b.trailing_zeros() as u8)
            ));
        }
        seen |= b;
        count += b.count_ones();
        Ok(())
    };
    add(s.hands[0])?;
    add(s.hands[1])?;
    for &c in &s.stock[s.stock_pos as usize..] {
        add(bit(c))?;
    }
    for &c in &s.discard[..s.n_discard as usize] {
        add(bit(c))?;
    }
    for e in &s.log[..s.n_placed as usize] {
        add(bit(e.card))?;
    }
    let expected = if s.round == 0 { 0 } else { DECK as u32 };
    if count != expected {
        return Err(format!("{count} cards accounted for, expected {expected}"));
    }
    // Tops and masks agree with the placement log; only J/Q face down.
    for o in 0..2u8 {
        for i in 0..9u8 {
            let last = s.log[..s.n_placed as usize]
                .iter()
                .rposition(|e| e.cell == o * 9 + i)
                .map(|p| p as u8)
                .unwrap_or(NONE);
            if s.top[o as usize][i as usize] != last {
                return Err(format!("top of square {o} cell {} is stale", i + 1));
            }
            let m = if last == NONE || s.log[last as usize].down {
                0
            } else {
                card_mask(s.log[last as usize].card)
            };
            if s.mask[o as usize][i as usize] != m {
                return Err(format!(
                    "scoring mask of square {o} cell {} is stale",
                    i + 1
                ));
            }
        }
    }
    for e in &s.log[..s.n_placed as usize] {
        let r = rank(e.card);
        if e.down != (r == JACK || r == QUEEN) {
            return Err(format!("{} placed with the wrong face", card_name(e.card)));
        }
        if (r == TEN || r == KING || r == QUEEN) && e.cell / 9 != e.by {
            return Err(format!(
                "{} placed in the opponent's square",
                card_name(e.card)
            ));
        }
    }
    // Hand sizes (§4.5).
    let (hc, ho) = (
        s.hands[s.current as usize].count_ones(),
        s.hands[1 - s.current as usize].count_ones(),
    );
    match s.phase {
        Phase::Action => {
            if s.round == 0 || hc == 0 {
                return Err("the seat to act has no card".into());
            }
            if s.stock_left() > 0 && (hc != 9 || ho != 8) {
                return Err(format!(
                    "hands {hc}/{ho} while the stock lasts (expected 9/8)"
                ));
            }
            if s.stock_left() == 0 && !(hc == ho || hc == ho + 1) {
                return Err(format!("hands {hc}/{ho} after the stock ran out"));
            }
            if s.stock_left() > 0 && !s.drew {
                return Err("acting without the draw while the stock lasts".into());
            }
        }
        Phase::Drawing => {
            if s.stock_left() == 0 {
                return Err("drawing from an empty stock".into());
            }
            if hc != 8 || ho != 8 {
                return Err(format!("hands {hc}/{ho} before a draw (expected 8/8)"));
            }
        }
        Phase::Passing if hc != 0 || ho == 0 || s.stock_left() != 0 => {
            return Err("pass_turn when it is not forced".into());
        }
        Phase::Scoring
            if s.went_out == NONE
                && (s.stock_left() != 0 || s.hands[0] != 0 || s.hands[1] != 0) =>
        {
            return Err("round scoring without going out or exhaustion".into());
        }
        _ => {}
    }
    // The dealer draws the last stock card: the starter acts first with no stock.
    if s.stock_left() == 0
        && s.went_out == NONE
        && s.phase == Phase::Action
        && s.hands[0] + s.hands[1] != 0
    {
        let starter_cards = s.hands[s.starter as usize].count_ones();
        let dealer_cards = s.hands[1 - s.starter as usize].count_ones();
        if !(starter_cards == dealer_cards || starter_cards + 1 == dealer_cards) {
            return Err(format!(
                "starter {starter_cards} / dealer {dealer_cards} cards after the stock ran out"
            ));
        }
    }
    if s.went_out != NONE
        && !matches!(
            s.phase,
            Phase::Scoring | Phase::Dealing | Phase::Ending | Phase::Over
        )
    {
        return Err("went_out set during play".into());
    }
    // Scores in bounds.
    let mut sums = [0u32; 2];
    for r in &s.history[..s.n_history as usize] {
        for (p, sum) in sums.iter_mut().enumerate() {
            if r.raw[p] > 16 || r.raw[p] == 15 {
                return Err(format!("impossible raw points {}", r.raw[p]));
            }
            let expect = base_score(r.raw[p] as u32) - (r.went_out == p as u8) as u32;
            if r.score[p] as u32 != expect {
                return Err("round score does not follow from raw points".into());
            }
            *sum += r.score[p] as u32;
        }
    }
    if sums != s.totals {
        return Err(format!(
            "totals {:?} are not the sum of the rounds {sums:?}",
            s.totals
        ));
    }
    for p in 0..2 {
        let raw = s.raw(p);
        if raw > 16 || raw == 15 {
            return Err(format!("square {p} has impossible raw points {raw}"));
        }
    }
    let max_rounds = (s.cfg.rounds + MAX_EXTRA_ROUNDS) as u32;
    if s.round as u32 > max_rounds || s.n_history as u32 > s.round as u32 {
        return Err("round counter out of bounds".into());
    }
    if s.phase == Phase::Over && s.n_history < s.cfg.rounds && s.forfeited == NONE {
        return Err("match over before the last round".into());
    }
    Ok(())
}
