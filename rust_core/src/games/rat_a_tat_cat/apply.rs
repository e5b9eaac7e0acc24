//! Applying an event to the table: stored events (`evolve`, checked) and the scratch state of
//! `decide` (unchecked).

use crate::error::{CoreError, CoreResult};
use crate::proto::rat_a_tat_cat as pb;

use pb::event::Kind as E;

use super::state::{
    bit, from_pbc, is_power, MatchMode, Phase, Pile, State, COUNTS, DECK, MAXP, NONE, PK, REASONS,
    R_CAP, R_FORFEIT, SW,
};

/// A pile from its protobuf cards, bottom first (the top last), counting its cards into `counts`.
fn pile_from_pb(cards: &[i32], counts: &mut [u8; 13]) -> CoreResult<Pile> {
    if cards.len() > DECK {
        return Err(CoreError::corrupt(format!(
            "a pile of {} cards",
            cards.len()
        )));
    }
    let mut p = Pile::EMPTY;
    for (i, &v) in cards.iter().enumerate() {
        let Some(c) = from_pbc(v) else {
            return Err(CoreError::corrupt(format!("card value {v} is not a card")));
        };
        counts[c as usize] = counts[c as usize].saturating_add(1);
        p.c[i] = c;
    }
    p.n = cards.len() as u8;
    Ok(p)
}

/// Applies one event. With `CHECK` every recorded result is compared with the table and a
/// mismatch is `Corrupt` (stored events, `evolve`). Without it the comparisons are skipped: that
/// is for the scratch state inside `decide`, whose events were built from that very state one
/// line earlier, so checking them again only doubled the cost of every command; the caller's
/// `evolve` still checks them.
pub(super) fn apply_event<const CHECK: bool>(s: &mut State, event: &pb::Event) -> CoreResult<()> {
    let Some(kind) = event.kind.as_ref() else {
        return Err(CoreError::corrupt("event without kind".to_string()));
    };
    let n = s.n();
    let card = |v: i32| -> CoreResult<u8> {
        match from_pbc(v) {
            Some(c) => Ok(c),
            None => Err(CoreError::corrupt(format!("card value {v} is not a card"))),
        }
    };
    let actor = |seat: u32, s: &State| -> CoreResult<usize> {
        if CHECK && (seat as usize >= n || seat != s.current as u32) {
            return Err(CoreError::corrupt(format!(
                "seat {seat} acts but seat {} is current",
                s.current
            )));
        }
        Ok(seat as usize)
    };
    let slot = |v: u32| -> CoreResult<usize> {
        if (1..=4).contains(&v) {
            Ok(v as usize - 1)
        } else {
            Err(CoreError::corrupt(format!("slot {v}")))
        }
    };
    match kind {
        E::RoundDealt(e) => {
            let between = s.phase == Phase::RoundOver && s.match_end().is_none();
            if CHECK && (!(s.phase == Phase::NotStarted || between)) {
                return Err(CoreError::corrupt(format!("a deal in phase {:?}", s.phase)));
            }
            if CHECK && (e.round != s.round + 1) {
                return Err(CoreError::corrupt(format!(
                    "round {} dealt after round {}",
                    e.round, s.round
                )));
            }
            let dealer = e.dealer as usize;
            if CHECK
                && (dealer >= n
                    || (s.phase != Phase::NotStarted && e.dealer as u8 != s.next_active(s.dealer)))
            {
                return Err(CoreError::corrupt(format!(
                    "dealer {} does not follow dealer {}",
                    e.dealer, s.dealer
                )));
            }
            let first = s.next_active(e.dealer as u8);
            if CHECK && (e.first_player != first as u32) {
                return Err(CoreError::corrupt(format!(
                    "first player {} is not left of dealer {}",
                    e.first_player, e.dealer
                )));
            }
            let mut counts = [0u8; 13];
            let mut rows = [[NONE; 4]; MAXP];
            let mut seen = 0u8;
            for r in &e.rows {
                let p = r.seat as usize;
                if CHECK && (!s.is_active(p) || seen & (1 << p) != 0 || r.cards.len() != 4) {
                    return Err(CoreError::corrupt(format!(
                        "dealt row for seat {p} does not fit"
                    )));
                }
                seen |= 1 << p;
                for (i, &v) in r.cards.iter().enumerate() {
                    let c = card(v)?;
                    rows[p][i] = c;
                    counts[c as usize] += 1;
                }
            }
            if CHECK && (seen != s.active) {
                return Err(CoreError::corrupt(
                    "the deal does not cover every active seat".to_string(),
                ));
            }
            let top = card(e.discard_top)?;
            if CHECK && (is_power(top)) {
                return Err(CoreError::corrupt(
                    "the first discard is a power card".to_string(),
                ));
            }
            for &f in &e.flipped_powers {
                if CHECK && (!is_power(card(f)?)) {
                    return Err(CoreError::corrupt(
                        "a flipped-back card is not a power card".to_string(),
                    ));
                }
            }
            counts[top as usize] += 1;
            let draw = pile_from_pb(&e.draw_pile, &mut counts)?;
            if CHECK && (counts != COUNTS || draw.len() != e.draw_pile_size as usize) {
                return Err(CoreError::corrupt(
                    "the deal does not hold the 54-card deck".to_string(),
                ));
            }
            s.dealt(rows, draw, top, e.dealer as u8, e.round)?;
        }
        E::InitialPeek(e) => {
            let p = e.seat as usize;
            if CHECK && (s.phase != Phase::TurnStart || s.turns_in_round != 0 || !s.is_active(p)) {
                return Err(CoreError::corrupt(format!(
                    "initial peek of seat {p} out of place"
                )));
            }
            if CHECK && (card(e.slot1)? != s.rows[p][0] || card(e.slot4)? != s.rows[p][3]) {
                return Err(CoreError::corrupt(format!(
                    "initial peek of seat {p} does not match its row"
                )));
            }
            s.initial_peek(p);
        }
        E::DiscardTaken(e) => {
            if CHECK && (s.phase != Phase::TurnStart) {
                return Err(CoreError::corrupt(format!(
                    "discard taken in phase {:?}",
                    s.phase
                )));
            }
            let p = actor(e.seat, s)?;
            let sl = slot(e.slot)?;
            let top = s.discard.top();
            let taken = card(e.taken)?;
            if CHECK
                && (top != Some(taken) || is_power(taken) || card(e.replaced)? != s.rows[p][sl])
            {
                return Err(CoreError::corrupt(
                    "discard taken does not match the table".to_string(),
                ));
            }
            s.discard.pop();
            s.discard.push(s.rows[p][sl])?;
            s.rows[p][sl] = taken;
            for k in s.known.iter_mut() {
                *k |= bit(p, sl);
            }
            s.phase = Phase::EndOfTurn;
        }
        E::CardDrawn(e) => {
            actor(e.seat, s)?;
            let c = card(e.card)?;
            if CHECK && (s.draw.top() != Some(c) || e.draw_pile_size as usize + 1 != s.draw.len()) {
                return Err(CoreError::corrupt(
                    "drawn card is not the top of the draw pile".to_string(),
                ));
            }
            s.drew()?;
        }
        E::CardReplaced(e) => {
            if CHECK && (!s.phase.holding()) {
                return Err(CoreError::corrupt(format!(
                    "card replaced in phase {:?}",
                    s.phase
                )));
            }
            let p = actor(e.seat, s)?;
            let sl = slot(e.slot)?;
            let placed = card(e.placed)?;
            if CHECK
                && (placed != s.pending || is_power(placed) || card(e.replaced)? != s.rows[p][sl])
            {
                return Err(CoreError::corrupt(
                    "replacement does not match the table".to_string(),
                ));
            }
            s.discard.push(s.rows[p][sl])?;
            s.rows[p][sl] = placed;
            s.pending = NONE;
            for k in s.known.iter_mut() {
                *k &= !bit(p, sl);
            }
            s.known[p] |= bit(p, sl);
            s.phase = Phase::EndOfTurn;
        }
        E::DrawnDiscarded(e) => {
            if CHECK && (!s.phase.holding()) {
                return Err(CoreError::corrupt(format!(
                    "drawn card discarded in phase {:?}",
                    s.phase
                )));
            }
            actor(e.seat, s)?;
            if CHECK && (card(e.card)? != s.pending) {
                return Err(CoreError::corrupt(
                    "discarded card is not the card in hand".to_string(),
                ));
            }
            s.discard.push(s.pending)?;
            s.pending = NONE;
            s.phase = if s.phase == Phase::Draw2First {
                Phase::DrawingSecond
            } else {
                Phase::EndOfTurn
            };
        }
        E::PowerUsed(e) => {
            if CHECK && (!s.phase.holding()) {
                return Err(CoreError::corrupt(format!(
                    "power used in phase {:?}",
                    s.phase
                )));
            }
            actor(e.seat, s)?;
            let c = card(e.power)?;
            if CHECK && (c != s.pending || !is_power(c)) {
                return Err(CoreError::corrupt(
                    "power used is not the power card in hand".to_string(),
                ));
            }
            s.discard.push(c)?;
            s.pending = NONE;
            s.phase = match c {
                PK => Phase::Peek,
                SW => Phase::Swap,
                _ => Phase::DrawingFirst,
            };
        }
        E::CardPeeked(e) => {
            if CHECK && (s.phase != Phase::Peek) {
                return Err(CoreError::corrupt(format!("peek in phase {:?}", s.phase)));
            }
            let p = actor(e.seat, s)?;
            let sl = slot(e.slot)?;
            if CHECK && (card(e.card)? != s.rows[p][sl]) {
                return Err(CoreError::corrupt(
                    "peeked card does not match the row".to_string(),
                ));
            }
            s.known[p] |= bit(p, sl);
            s.phase = Phase::EndOfTurn;
        }
        E::CardsSwapped(e) => {
            if CHECK && (s.phase != Phase::Swap) {
                return Err(CoreError::corrupt(format!("swap in phase {:?}", s.phase)));
            }
            let p = actor(e.seat, s)?;
            let a = slot(e.own_slot)?;
            let b = slot(e.target_slot)?;
            let q = e.target_seat as usize;
            if CHECK && (q == p || !s.is_active(q)) {
                return Err(CoreError::corrupt(format!(
                    "swap target seat {q} does not fit"
                )));
            }
            let tmp = s.rows[p][a];
            s.rows[p][a] = s.rows[q][b];
            s.rows[q][b] = tmp;
            let (ba, bb) = (bit(p, a), bit(q, b));
            for k in s.known.iter_mut() {
                let ka = *k & ba != 0;
                let kb = *k & bb != 0;
                *k &= !(ba | bb);
                if ka {
                    *k |= bb;
                }
                if kb {
                    *k |= ba;
                }
            }
            s.phase = Phase::EndOfTurn;
        }
        E::SwapSkipped(e) => {
            if CHECK && (s.phase != Phase::Swap) {
                return Err(CoreError::corrupt(format!(
                    "swap skipped in phase {:?}",
                    s.phase
                )));
            }
            actor(e.seat, s)?;
            s.phase = Phase::EndOfTurn;
        }
        E::Called(e) => {
            if CHECK && (s.phase != Phase::EndOfTurn || s.caller != NONE) {
                return Err(CoreError::corrupt("call out of place".to_string()));
            }
            s.caller = actor(e.seat, s)? as u8;
        }
        E::TurnEnded(e) => {
            if CHECK && (s.phase != Phase::EndOfTurn) {
                return Err(CoreError::corrupt(format!(
                    "turn ended in phase {:?}",
                    s.phase
                )));
            }
            actor(e.seat, s)?;
            let (next, over, limit) = s.turn_end();
            if CHECK
                && (e.next_seat != next as u32
                    || e.round_over != over
                    || e.turn_limit_reached != limit)
            {
                return Err(CoreError::corrupt(
                    "turn end does not fit the table".to_string(),
                ));
            }
            s.turn_ended(next, over);
        }
        E::PileReshuffled(e) => {
            if CHECK
                && (s.draw.len() != 0
                    || matches!(s.phase, Phase::NotStarted | Phase::RoundOver | Phase::Over))
            {
                return Err(CoreError::corrupt(
                    "reshuffle while the draw pile is not empty".to_string(),
                ));
            }
            let top = card(e.discard_top)?;
            if CHECK && (is_power(top)) {
                return Err(CoreError::corrupt(
                    "a reshuffle flipped a power card face up".to_string(),
                ));
            }
            for &f in &e.flipped_powers {
                if CHECK && (!is_power(card(f)?)) {
                    return Err(CoreError::corrupt(
                        "a flipped-back card is not a power card".to_string(),
                    ));
                }
            }
            // At reveal the reshuffle follows the draw that emptied the pile, and the card
            // that draw sent to the discard pile (on top) is not part of it: it ends on top of
            // the new discard pile (R7: a card in hand is not reshuffled; AMB9: the replaced
            // card is discarded after its slot is filled). Logs recorded before this rule was
            // fixed reshuffled it too; such a reshuffle holds one card more and replays as recorded.
            let held = match s.discard.top() {
                Some(top)
                    if s.phase == Phase::Reveal && e.draw_pile.len() + 2 == s.discard.len() =>
                {
                    top
                }
                _ => NONE,
            };
            let mut before = [0u8; 13];
            for &c in s.discard.cards() {
                before[c as usize] += 1;
            }
            if held != NONE {
                before[held as usize] -= 1;
            }
            let mut after = [0u8; 13];
            after[top as usize] += 1;
            let draw = pile_from_pb(&e.draw_pile, &mut after)?;
            if CHECK && (before != after || draw.len() != e.draw_pile_size as usize) {
                return Err(CoreError::corrupt(
                    "the reshuffled pile is not the old discard pile".to_string(),
                ));
            }
            s.draw = draw;
            s.discard = Pile::EMPTY;
            s.discard.push(top)?;
            if held != NONE {
                s.discard.push(held)?;
            }
        }
        E::RoundRevealed(e) => {
            if CHECK && (s.phase != Phase::Reveal || s.revealed) {
                return Err(CoreError::corrupt("reveal out of place".to_string()));
            }
            let mut seen = 0u8;
            for r in &e.rows {
                let p = r.seat as usize;
                if CHECK && (!s.is_active(p) || r.cards.len() != 4) {
                    return Err(CoreError::corrupt(format!(
                        "revealed row of seat {p} does not fit"
                    )));
                }
                seen |= 1 << p;
                for (i, &v) in r.cards.iter().enumerate() {
                    if CHECK && (card(v)? != s.rows[p][i]) {
                        return Err(CoreError::corrupt(format!(
                            "revealed row of seat {p} does not match"
                        )));
                    }
                }
            }
            if CHECK && (seen != s.active) {
                return Err(CoreError::corrupt(
                    "the reveal does not cover every active seat".to_string(),
                ));
            }
            s.revealed = true;
        }
        E::RevealDraw(e) => {
            if CHECK && (s.phase != Phase::Reveal || !s.revealed) {
                return Err(CoreError::corrupt("reveal draw out of place".to_string()));
            }
            let sl = slot(e.slot)?;
            if CHECK && (e.seat as usize >= n || s.next_power() != Some((e.seat as u8, sl as u8))) {
                return Err(CoreError::corrupt(format!(
                    "reveal draw for seat {} slot {} is out of order",
                    e.seat, e.slot
                )));
            }
            let c = card(e.card)?;
            if CHECK && (s.draw.top() != Some(c)) {
                return Err(CoreError::corrupt(
                    "reveal draw is not the top of the draw pile".to_string(),
                ));
            }
            s.draw.pop();
            // The drawn power card, or the power card the drawn number card replaces, goes on
            // the discard pile; when this draw emptied the draw pile, the `pile_reshuffled`
            // that follows leaves it out (R7, AMB9).
            if is_power(c) {
                s.discard.push(c)?;
            } else {
                let p = e.seat as usize;
                let old = s.rows[p][sl];
                s.rows[p][sl] = c;
                s.discard.push(old)?;
            }
        }
        E::RoundScored(e) => {
            if CHECK
                && (s.phase != Phase::Reveal
                    || !s.revealed
                    || s.next_power().is_some()
                    || e.round != s.round)
            {
                return Err(CoreError::corrupt("scoring out of place".to_string()));
            }
            let mut seen = 0u8;
            let mut totals = s.totals;
            let mut last = [0u8; MAXP];
            for sc in &e.scores {
                let p = sc.seat as usize;
                if CHECK && (!s.is_active(p) || seen & (1 << p) != 0) {
                    return Err(CoreError::corrupt(format!(
                        "score for seat {p} does not fit"
                    )));
                }
                seen |= 1 << p;
                let r = s.row_score(p);
                if CHECK && (sc.round_score != r || sc.total_score != s.totals[p] + r) {
                    return Err(CoreError::corrupt(format!("score for seat {p} is wrong")));
                }
                totals[p] = sc.total_score;
                last[p] = r as u8;
            }
            if CHECK && (seen != s.active) {
                return Err(CoreError::corrupt(
                    "scores do not cover every active seat".to_string(),
                ));
            }
            let mut elim = 0u8;
            if s.cfg.mode == MatchMode::Elimination {
                for (p, &t) in totals.iter().enumerate().take(n) {
                    if s.is_active(p) && t >= s.cfg.point_limit {
                        elim |= 1 << p;
                    }
                }
            }
            let mut got = 0u8;
            for &p in &e.eliminated {
                if CHECK && (p as usize >= n) {
                    return Err(CoreError::corrupt(format!("eliminated seat {p}")));
                }
                got |= 1 << p;
            }
            if CHECK && (got != elim || e.eliminated.len() != elim.count_ones() as usize) {
                return Err(CoreError::corrupt(
                    "eliminated seats do not fit the totals".to_string(),
                ));
            }
            s.totals = totals;
            s.last_scores = last;
            s.last_rows = s.rows;
            s.last_eliminated = elim;
            s.active &= !elim;
            for p in 0..MAXP {
                if s.active & (1 << p) == 0 {
                    s.rows[p] = [NONE; 4];
                }
            }
            s.phase = Phase::RoundOver;
        }
        E::StopRequested(_) => {
            if s.cfg.mode != MatchMode::Timed || s.stop_requested || s.phase == Phase::Over {
                return Err(CoreError::corrupt(
                    "a stop request does not fit this match".to_string(),
                ));
            }
            s.stop_requested = true;
        }
        E::MatchEnded(e) if !e.aborted && e.reason == REASONS[R_FORFEIT as usize] => {
            // The seat to act forfeited (§11): a card in its hand goes to the discard pile.
            if CHECK && !s.phase.awaiting() {
                return Err(CoreError::corrupt("a forfeit while no seat is awaited"));
            }
            let w = s.forfeit_winners();
            if e.winners != State::seat_list(w) || e.totals.as_slice() != &s.totals[..n] {
                return Err(CoreError::corrupt("forfeit result does not fit the totals"));
            }
            if s.pending != NONE {
                s.discard.push(s.pending)?;
                s.pending = NONE;
            }
            s.winners = w;
            s.end_reason = R_FORFEIT;
            s.aborted = false;
            s.phase = Phase::Over;
        }
        E::MatchEnded(e) => {
            let (w, reason) = if e.aborted {
                if CHECK && (s.phase != Phase::TurnStart || s.total_turns < s.cfg.admin_turn_cap) {
                    return Err(CoreError::corrupt(
                        "administrative stop before the cap".to_string(),
                    ));
                }
                (0u8, R_CAP)
            } else {
                if CHECK && (s.phase != Phase::RoundOver) {
                    return Err(CoreError::corrupt("match end out of place".to_string()));
                }
                match s.match_end() {
                    Some(x) => x,
                    None => return Err(CoreError::corrupt("the match is not over".to_string())),
                }
            };
            if e.winners != State::seat_list(w)
                || e.reason != REASONS[reason as usize]
                || e.totals.as_slice() != &s.totals[..n]
            {
                return Err(CoreError::corrupt(
                    "match result does not fit the totals".to_string(),
                ));
            }
            s.winners = w;
            s.end_reason = reason;
            s.aborted = e.aborted;
            s.phase = Phase::Over;
        }
    }
    Ok(())
}
