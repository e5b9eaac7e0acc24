//! The position evaluator: a seat's `Position` (its view, its memory, the public knowledge
//! masks, the match's options) checked, dealt out consistently with it for rollouts, and every
//! legal move with its immediate effect on the seat's row.

use prost::Message;

use crate::error::{CoreError, CoreResult};
use crate::game::{Game, Options, Seat, Viewer};
use crate::proto::rat_a_tat_cat as pb;
use crate::proto::MoveValue;
use crate::rng::Rng;
use crate::rollout::{first_difference, Analysis};

use pb::action::Kind as A;

use super::state::{
    bit, card_name, from_pbc, pbc, MatchMode, Phase, Pile, State, CARD_FACE_DOWN,
    CARD_HIDDEN_NUMBER, COUNTS, DECK, NONE,
};
use super::RatATatCat;

/// The options a match's configuration came from (the opening dealer is past: left out).
fn options_of(s: &State) -> Options {
    let c = &s.cfg;
    let mode = match c.mode {
        MatchMode::Elimination => "elimination",
        MatchMode::FixedRounds => "fixed_rounds",
        MatchMode::Timed => "timed",
    };
    [
        ("match_mode", mode.to_string()),
        ("point_limit", c.point_limit.to_string()),
        ("rounds", c.rounds.to_string()),
        ("max_turns_per_round", c.max_turns_per_round.to_string()),
        ("memory_aid", if c.memory_aid { "on" } else { "off" }.into()),
        ("admin_turn_cap", c.admin_turn_cap.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

pub(super) fn position(s: &State, seat: Seat) -> Vec<u8> {
    let me = seat as usize;
    let n = s.n();
    let known = (0..4 * n)
        .map(|i| {
            if s.known[me] & (1 << i) != 0 && s.rows[i / 4][i % 4] != NONE {
                pbc(s.rows[i / 4][i % 4])
            } else {
                CARD_FACE_DOWN
            }
        })
        .collect();
    pb::Position {
        seat,
        options: options_of(s),
        view: Some(RatATatCat::view(s, Viewer::Seat(seat))),
        known,
        knowledge: s.known[..n].to_vec(),
    }
    .encode_to_vec()
}

/// A checked position: the table with every card the seat cannot see still to deal.
pub struct Known {
    seat: Seat,
    /// The table, hidden cards set to `NONE` (rows), the draw pile empty, pending `NONE`
    /// when hidden.
    table: State,
    /// Row positions (seat, slot) to deal.
    hidden_rows: Vec<(usize, usize)>,
    draw_size: usize,
    hidden_pending: bool,
    /// The cards the seat has not seen, by code.
    unseen: [u8; 13],
}

fn phase_of(p: i32) -> CoreResult<Phase> {
    Ok(
        match pb::Phase::try_from(p).unwrap_or(pb::Phase::Unspecified) {
            pb::Phase::NotStarted => Phase::NotStarted,
            pb::Phase::TurnStart => Phase::TurnStart,
            pb::Phase::Drawn => Phase::Drawn,
            pb::Phase::Draw2First => Phase::Draw2First,
            pb::Phase::Draw2Second => Phase::Draw2Second,
            pb::Phase::Peek => Phase::Peek,
            pb::Phase::Swap => Phase::Swap,
            pb::Phase::EndOfTurn => Phase::EndOfTurn,
            pb::Phase::Reveal => Phase::Reveal,
            pb::Phase::RoundOver => Phase::RoundOver,
            pb::Phase::MatchOver => Phase::Over,
            pb::Phase::Drawing => {
                return Err(CoreError::malformed(
                    "phase DRAWING lies between two events: no seat decides in it",
                ))
            }
            pb::Phase::Unspecified => {
                return Err(CoreError::malformed(format!("phase {p} is not a phase")))
            }
        },
    )
}

fn card_of(v: i32, what: &str) -> CoreResult<u8> {
    from_pbc(v).ok_or_else(|| CoreError::malformed(format!("{what}: {v} is not a card")))
}

fn seat_of(v: u32, n: usize, what: &str) -> CoreResult<u8> {
    if (v as usize) < n {
        Ok(v as u8)
    } else {
        Err(CoreError::malformed(format!(
            "{what} {v} is not a seat of this {n}-seat table"
        )))
    }
}

fn check(pos: &pb::Position) -> CoreResult<Known> {
    let view = pos
        .view
        .as_ref()
        .ok_or_else(|| CoreError::malformed("the position has no view"))?;
    let n = view.players.len();
    let cfg = RatATatCat::checked_config(n as u32, &pos.options)
        .map_err(|e| CoreError::malformed(format!("the position's table: {e}")))?;
    let me = seat_of(pos.seat, n, "seat")? as usize;
    let mut s = super::state::initial(&cfg);
    s.phase = phase_of(view.phase)?;
    s.round = view.round;
    s.dealer = seat_of(view.dealer, n, "dealer")?;
    s.current = seat_of(view.current_seat, n, "current_seat")?;
    s.caller = if view.has_caller {
        seat_of(view.caller, n, "caller")?
    } else {
        NONE
    };
    s.turns_in_round = view.turns_this_round;
    s.total_turns = view.turns_total;
    s.stop_requested = view.stop_after_round;
    s.aborted = view.aborted;
    s.winners = 0;
    for &w in &view.winners {
        s.winners |= 1 << seat_of(w, n, "winner")?;
    }
    s.end_reason = super::state::REASONS
        .iter()
        .position(|r| *r == view.end_reason)
        .ok_or_else(|| {
            CoreError::malformed(format!("end reason {:?} is unknown", view.end_reason))
        })? as u8;
    s.active = 0;
    if pos.known.len() != 4 * n {
        return Err(CoreError::malformed(format!(
            "known lists {} row positions, the table has {}",
            pos.known.len(),
            4 * n
        )));
    }
    if pos.knowledge.len() != n {
        return Err(CoreError::malformed(format!(
            "knowledge lists {} seats, the table has {n}",
            pos.knowledge.len()
        )));
    }
    let mut seen = [0u8; 13];
    let see = |c: u8, seen: &mut [u8; 13]| -> CoreResult<()> {
        seen[c as usize] += 1;
        if seen[c as usize] > COUNTS[c as usize] {
            return Err(CoreError::malformed(format!(
                "card {} appears {} times: the deck holds {}",
                card_name(c),
                seen[c as usize],
                COUNTS[c as usize]
            )));
        }
        Ok(())
    };
    let mut hidden_rows = Vec::new();
    let mut own_mask = 0u32;
    for (p, pv) in view.players.iter().enumerate() {
        if pv.seat as usize != p {
            return Err(CoreError::malformed(format!(
                "players[{p}] is seat {}",
                pv.seat
            )));
        }
        s.totals[p] = pv.total_score;
        s.last_scores[p] = u8::try_from(pv.last_round_score)
            .map_err(|_| CoreError::malformed(format!("seat {p}: last round score above 36")))?;
        if !pv.last_round_row.is_empty() {
            if pv.last_round_row.len() != 4 {
                return Err(CoreError::malformed(format!(
                    "seat {p}: a last round row of {} cards",
                    pv.last_round_row.len()
                )));
            }
            for (sl, &c) in pv.last_round_row.iter().enumerate() {
                s.last_rows[p][sl] = card_of(c, "last_round_row")?;
            }
        }
        if !pv.active {
            if pos.known[4 * p..4 * p + 4]
                .iter()
                .any(|&c| c != CARD_FACE_DOWN && c != 0)
            {
                return Err(CoreError::malformed(format!(
                    "seat {p} is out of the match but the seat knows cards in its row"
                )));
            }
            continue;
        }
        s.active |= 1 << p;
        if pv.row.len() != 4 {
            return Err(CoreError::malformed(format!(
                "seat {p} is in the match with a row of {} cards",
                pv.row.len()
            )));
        }
        for sl in 0..4 {
            let shown = pv.row[sl];
            let remembered = pos.known[4 * p + sl];
            let card = if shown != CARD_FACE_DOWN {
                Some(card_of(shown, "row")?)
            } else if remembered != CARD_FACE_DOWN && remembered != 0 {
                own_mask |= bit(p, sl);
                Some(card_of(remembered, "known")?)
            } else {
                None
            };
            if let (Some(c), Some(r)) = (card, from_pbc(remembered)) {
                if c != r {
                    return Err(CoreError::malformed(format!(
                        "seat {p} slot {}: the row shows {} where the seat remembers {}",
                        sl + 1,
                        card_name(c),
                        card_name(r)
                    )));
                }
            }
            match card {
                Some(c) => {
                    see(c, &mut seen)?;
                    s.rows[p][sl] = c;
                }
                None => hidden_rows.push((p, sl)),
            }
        }
    }
    for (v, &mask) in pos.knowledge.iter().enumerate() {
        if mask >> (4 * n) != 0 {
            return Err(CoreError::malformed(format!(
                "knowledge of seat {v} names row positions outside the table"
            )));
        }
        s.known[v] = mask;
    }
    if own_mask & !s.known[me] != 0 || s.known[me] & hidden_mask(&hidden_rows) != 0 {
        return Err(CoreError::malformed(format!(
            "the seat's knowledge mask {:#x} and the cards it remembers (positions {:#x}) disagree",
            s.known[me], own_mask
        )));
    }
    let mut discard = Vec::with_capacity(view.discard_pile.len());
    for &c in &view.discard_pile {
        let c = card_of(c, "discard_pile")?;
        see(c, &mut seen)?;
        discard.push(c);
    }
    if discard.len() > DECK {
        return Err(CoreError::malformed("a discard pile larger than the deck"));
    }
    discard.reverse();
    s.discard = Pile::from_top_first(&discard)?;
    let hidden_pending = view.pending == CARD_HIDDEN_NUMBER;
    s.pending = match view.pending {
        0 => NONE,
        CARD_HIDDEN_NUMBER => NONE,
        c => {
            let c = card_of(c, "pending")?;
            see(c, &mut seen)?;
            c
        }
    };
    let draw_size = view.draw_pile_size as usize;
    let in_play = !matches!(s.phase, Phase::RoundOver | Phase::Over | Phase::NotStarted);
    let on_table = 4 * s.active_count()
        + s.discard.len()
        + draw_size
        + usize::from(s.pending != NONE || hidden_pending);
    if in_play && on_table != DECK {
        return Err(CoreError::malformed(format!(
            "the table holds {on_table} cards (rows, piles and the card in hand): the deck has {DECK}"
        )));
    }
    if !in_play && on_table > DECK {
        return Err(CoreError::malformed(format!(
            "the table holds {on_table} cards: the deck has {DECK}"
        )));
    }
    let mut unseen = [0u8; 13];
    for c in 0..13 {
        unseen[c] = COUNTS[c] - seen[c];
    }
    if hidden_pending && unseen[..=9].iter().all(|&k| k == 0) {
        return Err(CoreError::malformed(
            "another seat holds a number card, but the seat has seen every number card",
        ));
    }
    let known = Known {
        seat: me as Seat,
        table: s,
        hidden_rows,
        draw_size,
        hidden_pending,
        unseen,
    };
    // The table dealt once must give back the view, and hold together as the rules keep it.
    let dealt = deal(&known, &mut Rng::from_u64(0));
    let rebuilt = RatATatCat::view(&dealt, Viewer::Seat(me as Seat));
    if &rebuilt != view {
        return Err(CoreError::malformed(format!(
            "the view does not hold together: {}",
            first_difference(view, &rebuilt)
        )));
    }
    if in_play {
        super::state::check_invariants(&dealt)
            .and_then(|()| super::state::check_decision_point(&dealt))
            .map_err(|e| CoreError::malformed(format!("a table the rules cannot reach: {e}")))?;
    }
    Ok(known)
}

fn hidden_mask(rows: &[(usize, usize)]) -> u32 {
    rows.iter().fold(0, |m, &(p, sl)| m | bit(p, sl))
}

/// How often, per copy in the deck, a card of each code (0..9, Peek, Swap, Draw 2) is one a
/// seat knows in its own row, relative to a 0 (seeded one-round matches of the `memory` bot,
/// every fifth decision: 9s five times rarer, 6s to 8s two to four times): seats replace their
/// high cards, so the hidden cards another seat knows are mostly low.
const KEPT_WEIGHT: [u64; 13] = [100, 95, 95, 100, 100, 90, 50, 36, 23, 17, 60, 60, 60];

/// The table with the unseen cards dealt: a number in hand first (when another seat holds
/// one), then the hidden row positions (those their owner knows weighted by [`KEPT_WEIGHT`]),
/// then the draw pile.
fn deal(k: &Known, rng: &mut Rng) -> State {
    let mut s = k.table.clone();
    let mut pool: Vec<u8> = Vec::with_capacity(DECK);
    for (c, &m) in k.unseen.iter().enumerate() {
        pool.extend(std::iter::repeat_n(c as u8, m as usize));
    }
    rng.shuffle(&mut pool);
    if k.hidden_pending {
        // The first number of the shuffled pool.
        if let Some(i) = pool.iter().position(|&c| c <= 9) {
            s.pending = pool.swap_remove(i);
        }
    }
    // A card another seat knows in its own row was kept there, or taken for it, because it
    // was low: those first, weighted as seats keep cards; then the rest uniformly.
    let me = k.seat as usize;
    let kept = |&(p, sl): &(usize, usize)| p != me && k.table.known[p] & bit(p, sl) != 0;
    for &(p, sl) in k.hidden_rows.iter().filter(|x| kept(x)) {
        let total: u64 = pool.iter().map(|&c| KEPT_WEIGHT[c as usize]).sum();
        let mut r = rng.below(total.max(1));
        let i = pool
            .iter()
            .position(|&c| {
                let w = KEPT_WEIGHT[c as usize];
                if r < w {
                    true
                } else {
                    r -= w;
                    false
                }
            })
            .unwrap_or(0);
        if i < pool.len() {
            s.rows[p][sl] = pool.swap_remove(i);
        }
    }
    for &(p, sl) in k.hidden_rows.iter().filter(|x| !kept(x)) {
        s.rows[p][sl] = pool.pop().unwrap_or(0);
    }
    let draw: Vec<u8> = pool.iter().copied().take(k.draw_size).collect();
    s.draw = Pile::from_top_first(&draw).unwrap_or(Pile::EMPTY);
    s
}

/// Mean score of an unseen card (a power card counted 0, as in a row).
fn unseen_mean(k: &Known) -> f64 {
    let (mut sum, mut count) = (0u32, 0u32);
    for (c, &m) in k.unseen.iter().enumerate() {
        sum += if c <= 9 { c as u32 } else { 0 } * m as u32;
        count += m as u32;
    }
    if count == 0 {
        4.5
    } else {
        sum as f64 / count as f64
    }
}

/// The seat's row as it can value it: a known number its value, a power card or an unknown
/// card the mean of the unseen cards.
fn row_estimate(s: &State, me: usize, known_mask: u32, mean: f64) -> f64 {
    (0..4)
        .map(|sl| {
            let c = s.rows[me][sl];
            if known_mask & bit(me, sl) != 0 && c <= 9 {
                c as f64
            } else {
                mean
            }
        })
        .sum()
}

/// Whether the `evaluator` bot's playouts stop at the end of the round ([`Analysis::playout_ends`]).
const CUT_AT_ROUND_END: bool = false;

impl Analysis for RatATatCat {
    type Known = Known;
    const ROLLOUT_BOT: &'static str = "memory";
    const EVALUATOR_STEPS: u32 = 300_000; // evaluator_bench --calibrate
    const PLAYOUT_STEPS: u32 = 6; // evaluator_bench --calibrate, one-round matches

    /// At the end of a turn, only the call is weighed against the `memory` bot's choice: a
    /// bot that would call is not talked out of it. The rollouts after `end_turn` have the
    /// seat call a turn later (the `memory` bot's rule), so they value waiting a turn; but the
    /// `evaluator` bot deciding again next turn would wait again, and never call (it declined
    /// 43 of the 56 calls the `memory` bot made in 60 one-round matches, winning 0.55 to 0.57).
    fn shortlist(k: &Known, moves: &[pb::Action]) -> Vec<usize> {
        if k.table.phase != Phase::EndOfTurn {
            return (0..moves.len()).collect();
        }
        (0..moves.len())
            .filter(|&i| matches!(moves[i].kind, Some(A::CallRatATatCat(_))))
            .collect()
    }

    /// The seat's own later moves by the playout policy (`policy.rs`: the `memory` bot's
    /// heuristic with the unseen cards' mean, the other seat's kept cards counted low, calls
    /// only well ahead, the last turn played for any gain); the other seats' by the `memory`
    /// bot, as they play. The policy for every seat did worse (0.524 against 0.599 over the
    /// same 400 one-round matches): the other seats are best foreseen as they play.
    fn playout_action(s: &State, seat: Seat, me: Seat, rng: &mut Rng) -> CoreResult<pb::Action> {
        if seat != me {
            return RatATatCat::bot_action(s, seat, Self::ROLLOUT_BOT, rng);
        }
        if !s.phase.awaiting() || seat != s.current as u32 {
            return Err(CoreError::not_your_turn());
        }
        Ok(super::policy::action(
            s,
            me as usize,
            &super::policy::PARAMS,
        ))
    }

    /// A match of many rounds is cut at the end of the round the move was made in (the next
    /// one dealt): the totals then carry what decides it.
    fn playout_ends(start: &State, now: &State) -> bool {
        CUT_AT_ROUND_END && now.round > start.round
    }

    /// The totals' margin (lower is better), a win when the seat's total is the lowest.
    fn estimate(s: &State, seat: Seat) -> Option<(f64, f64)> {
        let me = seat as usize;
        let own = s.totals[me] as f64;
        let best_other = (0..s.n())
            .filter(|&p| p != me && s.is_active(p))
            .map(|p| s.totals[p] as f64)
            .fold(f64::MAX, f64::min);
        if best_other == f64::MAX {
            return None;
        }
        let win = if own < best_other {
            1.0
        } else if own == best_other {
            0.5
        } else {
            0.0
        };
        Some((best_other - own, win))
    }

    fn known(position: &[u8]) -> CoreResult<Known> {
        let pos = pb::Position::decode(position)
            .map_err(|e| CoreError::malformed(format!("cannot decode position: {e}")))?;
        check(&pos)
    }

    fn seat(k: &Known) -> Seat {
        k.seat
    }

    fn sample(k: &Known, rng: &mut Rng) -> State {
        deal(k, rng)
    }

    fn evaluation(
        k: &Known,
        moves: &[pb::Action],
        values: Option<&[MoveValue]>,
    ) -> CoreResult<Vec<u8>> {
        let me = k.seat as usize;
        let mean = unseen_mean(k);
        let s = &k.table;
        let before = row_estimate(s, me, s.known[me], mean);
        let mut out = pb::Evaluation::default();
        for (i, m) in moves.iter().enumerate() {
            // What the seat's row becomes, as far as the seat can tell without drawing.
            let change = match &m.kind {
                Some(A::TakeDiscard(t)) => match s.discard.top() {
                    Some(c) => replaced(s, me, t.slot, c, mean, before),
                    None => 0.0,
                },
                Some(A::ReplaceCard(r)) if s.pending != NONE && s.pending <= 9 => {
                    replaced(s, me, r.slot, s.pending, mean, before)
                }
                _ => 0.0,
            };
            let ends_turn = matches!(m.kind, Some(A::EndTurn(_)) | Some(A::CallRatATatCat(_)));
            out.moves.push(pb::EvaluatedMove {
                action: Some(*m),
                row_points_change: change,
                ends_turn,
                value: values.map(|v| v[i]),
            });
        }
        out.best = best_index(&out.moves, values.is_some());
        if let Some(v) = values {
            // Among the moves valued on most deals (screening drops some early).
            out.best = crate::rollout::best_valued(v).map(|b| b as u32);
        }
        Ok(out.encode_to_vec())
    }
}

/// The change of the row estimate when `card` (a number) goes to own `slot` (1..4).
fn replaced(s: &State, me: usize, slot: u32, card: u8, mean: f64, before: f64) -> f64 {
    let Some(sl) = (slot as usize).checked_sub(1).filter(|&sl| sl < 4) else {
        return 0.0;
    };
    let mut t = s.clone();
    t.rows[me][sl] = card;
    let after = row_estimate(&t, me, s.known[me] | bit(me, sl), mean);
    after - before
}

fn best_index(moves: &[pb::EvaluatedMove], valued: bool) -> Option<u32> {
    let mut best: Option<usize> = None;
    for (i, m) in moves.iter().enumerate() {
        let better = match best {
            None => true,
            Some(b) if valued => {
                let (v, w) = (
                    m.value.unwrap_or_default(),
                    moves[b].value.unwrap_or_default(),
                );
                (v.win_probability, v.margin) > (w.win_probability, w.margin)
            }
            Some(b) => m.row_points_change < moves[b].row_points_change,
        };
        if better {
            best = Some(i);
        }
    }
    best.map(|b| b as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::OptionValues;

    /// The last turn of the last round (seat 1 called): seat 0's row is four 9s it knows,
    /// seat 1's four 7s it knows too, a 0 tops the discard pile. (The same last turn, set up
    /// from a seeded match, is Rat-a-Tat Cat's decisive position in tests/evaluation.rs.)
    fn last_turn() -> State {
        let options = [("match_mode", "fixed_rounds"), ("rounds", "1")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let values = OptionValues::check(&RatATatCat::options(), &options).unwrap();
        let cfg = super::super::state::configure(2, &values).unwrap();
        let mut s = super::super::state::initial(&cfg);
        let mut deck: Vec<u8> = super::super::state::full_deck().to_vec();
        let mut take = |c: u8| {
            let i = deck.iter().position(|&d| d == c).unwrap();
            deck.remove(i);
            c
        };
        s.rows[0] = [take(9), take(9), take(9), take(9)];
        s.rows[1] = [take(7), take(7), take(7), take(7)];
        let top = take(0);
        s.discard = Pile::from_top_first(&[top]).unwrap();
        s.draw = Pile::from_top_first(&deck).unwrap();
        // Seat 0 knows both rows (its own, and seat 1's from the public log).
        s.known[0] = 0xFF;
        s.known[1] = bit(1, 0) | bit(1, 3);
        (s.phase, s.round, s.dealer, s.current, s.caller) = (Phase::TurnStart, 1, 1, 0, 1);
        s.turns_in_round = 5;
        s.total_turns = 5;
        super::super::state::check_invariants(&s).unwrap();
        s
    }

    #[test]
    fn bad_positions_are_refused_with_a_reason() {
        let s = last_turn();
        let good = pb::Position::decode(position(&s, 0).as_slice()).unwrap();
        assert!(check(&good).is_ok());
        let refused = |edit: &dyn Fn(&mut pb::Position), expect: &str| {
            let mut p = good.clone();
            edit(&mut p);
            match RatATatCat::known(&p.encode_to_vec()) {
                Err(CoreError::Malformed(reason)) => {
                    assert!(reason.contains(expect), "{reason:?} lacks {expect:?}")
                }
                Err(e) => panic!("{e}"),
                Ok(_) => panic!("accepted, expected {expect:?}"),
            }
        };
        fn view(p: &mut pb::Position) -> &mut pb::View {
            p.view.as_mut().unwrap()
        }
        // A card in more places than the deck has copies: six 9s on the discard pile and four in the row (the deck holds nine).
        refused(
            &|p| {
                view(p).discard_pile = vec![pbc(9), pbc(9), pbc(9), pbc(9), pbc(9), pbc(9), pbc(0)];
                view(p).draw_pile_size -= 6;
            },
            "card 9 appears 10 times",
        );
        // More copies than the deck: a discard pile of five 0s.
        refused(
            &|p| view(p).discard_pile = vec![pbc(0); 5],
            "card 0 appears 5 times",
        );
        // Counts beyond the deck.
        refused(&|p| view(p).draw_pile_size += 1, "the table holds 55 cards");
        // A seat that does not exist, a phase between events, no view.
        refused(&|p| p.seat = 2, "seat 2 is not a seat");
        refused(
            &|p| view(p).phase = pb::Phase::Drawing as i32,
            "between two events",
        );
        refused(&|p| p.view = None, "no view");
        refused(
            &|p| {
                p.options
                    .insert("rounds".into(), "0".into())
                    .map_or((), drop)
            },
            "Rounds must be",
        );
        // A state the rules cannot reach: the caller takes another turn.
        refused(&|p| view(p).caller = 0, "the caller takes another turn");
        refused(
            &|p| {
                view(p).current_seat = 1;
            },
            "does not hold together",
        );
        // A knowledge mask that disagrees with what the seat remembers.
        refused(&|p| p.knowledge[0] = 0, "disagree");
    }
}
