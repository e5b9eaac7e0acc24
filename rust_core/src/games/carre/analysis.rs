//! The position evaluator: a seat's `Position` (its view and the match's options) checked,
//! dealt out consistently with it for rollouts, and every legal move with its immediate effect
//! on both squares.

use prost::Message;

use crate::error::{CoreError, CoreResult};
use crate::game::{Game, Options, Seat, Viewer};
use crate::proto::carre as pb;
use crate::proto::MoveValue;
use crate::rng::Rng;
use crate::rollout::{first_difference, Analysis};

use pb::action::Kind as A;

use super::cards::card_from_pb;
use super::cards::card_mask;
use super::cards::{bit, card_name, rank, DECK, JACK, NONE, QUEEN, STOCK};
use super::state::{Entry, Phase, RoundRec, State};
use super::Carre;

fn options_of(s: &State) -> Options {
    let c = &s.cfg;
    let cells: String = c
        .cell_of_rank
        .iter()
        .map(|&i| char::from(b'1' + i))
        .collect();
    [
        ("rounds_per_match", c.rounds.to_string()),
        (
            "allow_go_out_without_draw",
            c.go_out_without_draw.to_string(),
        ),
        ("tiebreak_extra_rounds", c.tiebreak.to_string()),
        ("cell_of_rank", cells),
        (
            "first_starter",
            c.first_starter
                .map_or("random".to_string(), |f| f.to_string()),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

pub(super) fn position(s: &State, seat: Seat) -> Vec<u8> {
    pb::Position {
        seat,
        options: options_of(s),
        view: Some(Carre::view(s, Viewer::Seat(seat))),
    }
    .encode_to_vec()
}

/// A checked position: the table with the cards the seat cannot see still to deal.
pub struct Known {
    seat: Seat,
    table: State,
    /// Log indices of the face-down entries the seat did not place.
    hidden_entries: Vec<usize>,
    opponent_hand: usize,
    stock: usize,
    /// The cards the seat has not seen (a bit per card).
    unseen: u64,
}

fn phase_of(p: i32) -> CoreResult<Phase> {
    Ok(
        match pb::Phase::try_from(p).unwrap_or(pb::Phase::Unspecified) {
            pb::Phase::NotStarted => Phase::NotStarted,
            pb::Phase::Drawing => Phase::Drawing,
            pb::Phase::Passing => Phase::Passing,
            pb::Phase::Action => Phase::Action,
            pb::Phase::Over => Phase::Over,
            pb::Phase::Dealing | pb::Phase::Scoring | pb::Phase::Ending => {
                return Err(CoreError::malformed(format!(
                    "phase {} lies between two events: no seat decides in it",
                    pb::Phase::try_from(p).map_or("?", |x| x.as_str_name())
                )))
            }
            pb::Phase::Unspecified => {
                return Err(CoreError::malformed(format!("phase {p} is not a phase")))
            }
        },
    )
}

fn seat_of(v: u32, what: &str) -> CoreResult<u8> {
    if v < 2 {
        Ok(v as u8)
    } else {
        Err(CoreError::malformed(format!(
            "{what} {v} is not seat 0 or 1"
        )))
    }
}

fn check(pos: &pb::Position) -> CoreResult<Known> {
    let view = pos
        .view
        .as_ref()
        .ok_or_else(|| CoreError::malformed("the position has no view"))?;
    let cfg = Carre::checked_config(2, &pos.options)
        .map_err(|e| CoreError::malformed(format!("the position's table: {e}")))?;
    let me = seat_of(pos.seat, "seat")?;
    let mut s = Carre::initial(&cfg);
    s.phase = phase_of(view.phase)?;
    s.round = u8::try_from(view.round)
        .map_err(|_| CoreError::malformed(format!("round {} is out of range", view.round)))?;
    s.first_starter = seat_of(view.first_starter, "first_starter")?;
    s.starter = seat_of(view.starter, "starter")?;
    s.current = seat_of(view.current, "current")?;
    s.drew = view.drew_this_turn;
    s.went_out = match view.went_out {
        Some(w) => seat_of(w, "went_out")?,
        None => NONE,
    };
    if view.players.len() != 2 || view.squares.len() != 2 {
        return Err(CoreError::malformed(format!(
            "{} players and {} squares: Carré has two of each",
            view.players.len(),
            view.squares.len()
        )));
    }
    let mut seen = 0u64;
    let see = |c: u8, seen: &mut u64| -> CoreResult<()> {
        if *seen & bit(c) != 0 {
            return Err(CoreError::malformed(format!(
                "card {} is in two places",
                card_name(c)
            )));
        }
        *seen |= bit(c);
        Ok(())
    };
    let card = |c: Option<&pb::Card>, what: &str| {
        card_from_pb(c).ok_or_else(|| CoreError::malformed(format!("{what}: not a card")))
    };
    for (p, pl) in view.players.iter().enumerate() {
        if pl.seat as usize != p {
            return Err(CoreError::malformed(format!(
                "players[{p}] is seat {}",
                pl.seat
            )));
        }
        s.totals[p] = pl.total;
        if p == me as usize {
            if pl.hand.len() != pl.hand_count as usize {
                return Err(CoreError::malformed(format!(
                    "the seat's hand lists {} cards but counts {}",
                    pl.hand.len(),
                    pl.hand_count
                )));
            }
            for c in &pl.hand {
                let c = card(Some(c), "hand")?;
                see(c, &mut seen)?;
                s.hands[p] |= bit(c);
            }
        } else if !pl.hand.is_empty() {
            return Err(CoreError::malformed(
                "the position shows the other seat's hand: the seat cannot see it",
            ));
        }
    }
    let opponent_hand = view.players[1 - me as usize].hand_count as usize;
    let mut hidden_entries = Vec::new();
    let mut n = 0usize;
    for (o, sq) in view.squares.iter().enumerate() {
        if sq.owner as usize != o || sq.cells.len() != 9 {
            return Err(CoreError::malformed(format!(
                "squares[{o}] is not square {o} of nine cells"
            )));
        }
        for (i, cell) in sq.cells.iter().enumerate() {
            if cell.cell as usize != i + 1 {
                return Err(CoreError::malformed(format!(
                    "square {o}: cells out of order"
                )));
            }
            for e in &cell.pile {
                if n >= DECK {
                    return Err(CoreError::malformed(
                        "more cards on the squares than the pack",
                    ));
                }
                let by = seat_of(e.placed_by, "placed_by")?;
                let c = match &e.card {
                    Some(c) => {
                        let c = card(Some(c), "pile")?;
                        see(c, &mut seen)?;
                        c
                    }
                    None if e.face_down && by != me => {
                        hidden_entries.push(n);
                        0
                    }
                    None => {
                        return Err(CoreError::malformed(format!(
                            "square {o} cell {}: a card the seat saw is missing",
                            i + 1
                        )))
                    }
                };
                s.log[n] = Entry {
                    card: c,
                    cell: (o * 9 + i) as u8,
                    down: e.face_down,
                    by,
                };
                s.top[o][i] = n as u8;
                s.mask[o][i] = if e.face_down { 0 } else { card_mask(c) };
                n += 1;
            }
        }
    }
    s.n_placed = n as u8;
    if view.discard.len() > DECK {
        return Err(CoreError::malformed("more discarded cards than the pack"));
    }
    for (i, c) in view.discard.iter().enumerate() {
        let c = card(Some(c), "discard")?;
        see(c, &mut seen)?;
        s.discard[i] = c;
    }
    s.n_discard = view.discard.len() as u8;
    let stock = view.stock_size as usize;
    if stock > STOCK {
        return Err(CoreError::malformed(format!(
            "a stock of {stock} cards: at most {STOCK}"
        )));
    }
    s.stock_pos = (STOCK - stock) as u8;
    for r in &view.rounds {
        let score = |p: usize| r.scores.get(p);
        let (Some(a), Some(b)) = (score(0), score(1)) else {
            return Err(CoreError::malformed(
                "a round record without both seats' scores",
            ));
        };
        let went_out = [a, b]
            .iter()
            .position(|x| x.went_out)
            .map_or(NONE, |p| p as u8);
        let small = |v: u32| {
            u8::try_from(v).map_err(|_| CoreError::malformed("a round score out of range"))
        };
        if s.n_history as usize >= s.history.len() {
            return Err(CoreError::malformed("more rounds than a match plays"));
        }
        s.history[s.n_history as usize] = RoundRec {
            went_out,
            raw: [small(a.raw_points)?, small(b.raw_points)?],
            score: [small(a.round_score)?, small(b.round_score)?],
        };
        s.n_history += 1;
    }
    if let Some(r) = &view.result {
        s.aborted = r.result == pb::MatchResult::Aborted as i32;
    }
    let in_round = matches!(s.phase, Phase::Drawing | Phase::Passing | Phase::Action);
    let total = seen.count_ones() as usize + hidden_entries.len() + opponent_hand + stock;
    if in_round && total != DECK {
        return Err(CoreError::malformed(format!(
            "the table holds {total} cards (hands, stock, discard, squares): the pack has {DECK}"
        )));
    }
    if total > DECK {
        return Err(CoreError::malformed(format!(
            "the table holds {total} cards: the pack has {DECK}"
        )));
    }
    let unseen = !seen & ((1u64 << DECK) - 1);
    let faces = (0..DECK as u8)
        .filter(|&c| unseen & bit(c) != 0 && matches!(rank(c), JACK | QUEEN))
        .count();
    let jacks = (0..DECK as u8)
        .filter(|&c| unseen & bit(c) != 0 && rank(c) == JACK)
        .count();
    let in_other = hidden_entries
        .iter()
        .filter(|&&i| s.log[i].cell / 9 != s.log[i].by)
        .count();
    if in_other > jacks {
        return Err(CoreError::malformed(format!(
            "{in_other} face-down cards in the other square, but only {jacks} Jacks unseen"
        )));
    }
    if hidden_entries.len() > faces {
        return Err(CoreError::malformed(format!(
            "{} face-down cards of the other seat, but only {faces} Jacks and Queens unseen",
            hidden_entries.len()
        )));
    }
    let known = Known {
        seat: me as Seat,
        table: s,
        hidden_entries,
        opponent_hand,
        stock,
        unseen,
    };
    let dealt = deal(&known, &mut Rng::from_u64(0));
    let rebuilt = Carre::view(&dealt, Viewer::Seat(me as Seat));
    if &rebuilt != view {
        return Err(CoreError::malformed(format!(
            "the view does not hold together: {}",
            first_difference(view, &rebuilt)
        )));
    }
    if in_round {
        super::invariants::check_invariants(&dealt)
            .map_err(|e| CoreError::malformed(format!("a table the rules cannot reach: {e}")))?;
    }
    Ok(known)
}

/// The table with the unseen cards dealt: face-down cards of the other seat, its hand, the
/// stock. A face-down card is a Jack or a Queen (only those are placed face down).
fn deal(k: &Known, rng: &mut Rng) -> State {
    let mut s = k.table;
    let mut pool: Vec<u8> = (0..DECK as u8)
        .filter(|&c| k.unseen & bit(c) != 0)
        .collect();
    rng.shuffle(&mut pool);
    // A face-down card in the other square is a Jack (a Queen stays in its placer's square):
    // those first, then the rest from the Jacks and Queens left.
    let mut entries = k.hidden_entries.clone();
    entries.sort_by_key(|&i| s.log[i].cell / 9 == s.log[i].by);
    for i in entries {
        let jack_only = s.log[i].cell / 9 != s.log[i].by;
        let face = pool
            .iter()
            .position(|&c| rank(c) == JACK || (!jack_only && rank(c) == QUEEN));
        if let Some(face) = face {
            s.log[i].card = pool.swap_remove(face);
        }
    }
    let other = 1 - k.seat as usize;
    for _ in 0..k.opponent_hand {
        if let Some(c) = pool.pop() {
            s.hands[other] |= bit(c);
        }
    }
    let start = STOCK - k.stock;
    for (j, c) in pool.into_iter().take(k.stock).enumerate() {
        s.stock[start + j] = c;
    }
    s
}

impl Analysis for Carre {
    type Known = Known;
    const ROLLOUT_BOT: &'static str = "greedy";
    const EVALUATOR_STEPS: u32 = 18_000; // evaluator_bench --calibrate

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
        let me = k.seat as u8;
        let table = deal(k, &mut Rng::from_u64(0));
        let (own0, opp0) = (table.raw(me) as i32, table.raw(1 - me) as i32);
        let mut out = pb::Evaluation::default();
        for (i, m) in moves.iter().enumerate() {
            let (mut own, mut opp) = (0, 0);
            if let Some(A::Place(_)) = &m.kind {
                // A placement changes the squares at once and draws nothing.
                let mut t = table;
                let mut events = Vec::new();
                if Carre::play(&mut t, k.seat, m, &mut Rng::from_u64(0), &mut events).is_ok()
                    && t.round == table.round
                {
                    own = t.raw(me) as i32 - own0;
                    opp = t.raw(1 - me) as i32 - opp0;
                }
            }
            out.moves.push(pb::EvaluatedMove {
                action: Some(*m),
                own_points_change: own,
                opponent_points_change: opp,
                value: values.map(|v| v[i]),
            });
        }
        let key = |m: &pb::EvaluatedMove| match (values, m.value) {
            (Some(_), Some(v)) => (v.win_probability, v.margin),
            _ => (0.0, (m.own_points_change - m.opponent_points_change) as f64),
        };
        out.best = (0..out.moves.len())
            .reduce(|b, i| {
                if key(&out.moves[i]) > key(&out.moves[b]) {
                    i
                } else {
                    b
                }
            })
            .map(|b| b as u32);
        if let Some(v) = values {
            // Among the moves valued on most deals (screening drops some early).
            out.best = crate::rollout::best_valued(v).map(|b| b as u32);
        }
        Ok(out.encode_to_vec())
    }
}
