//! The position evaluator: a seat's `Position` (its view, the match's options, what opened a
//! TRIPLES window) checked, dealt out consistently with it for rollouts, and every legal move
//! with its immediate effect on the seat's visible layout.

use prost::Message;

use crate::error::{CoreError, CoreResult};
use crate::game::{Game, Options, Seat, Viewer};
use crate::proto::grid_knock as pb;
use crate::proto::MoveValue;
use crate::rng::Rng;
use crate::rollout::{first_difference, Analysis};

use super::state::{deck_histogram, hist_add, Config, Ctx, Phase, State, DECK_SIZE, NONE, NO_CARD};
use super::GridKnock;

/// Deals a move is followed over to tell its immediate effect.
const IMMEDIATE_DEALS: u64 = 8;

fn options_of(s: &State) -> Options {
    let c = &s.cfg;
    [
        ("target_score", c.target_score.to_string()),
        (
            "closer_penalty",
            if c.closer_penalty { "double" } else { "none" }.to_string(),
        ),
        (
            "knocking",
            if c.knocking { "on" } else { "off" }.to_string(),
        ),
        ("turn_cap", c.turn_cap.to_string()),
        ("knock_timeout", c.knock_timeout.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

pub(super) fn position(s: &State, seat: Seat) -> Vec<u8> {
    let opening = if s.phase == Phase::Triples {
        match s.tri_ctx {
            Ctx::Keep => pb::TriplesOpening::Keep,
            Ctx::Reveal => pb::TriplesOpening::Reveal,
            Ctx::Knocker => pb::TriplesOpening::Knocker,
            Ctx::Return => pb::TriplesOpening::Return,
        }
    } else {
        pb::TriplesOpening::Unspecified
    };
    pb::Position {
        seat,
        options: options_of(s),
        view: Some(GridKnock::view(s, Viewer::Seat(seat))),
        triples_opening: opening as i32,
    }
    .encode_to_vec()
}

/// A checked position: the table with the cards the seat cannot see still to deal.
pub struct Known {
    seat: Seat,
    table: State,
    face_down: Vec<u8>,
    hidden_held: bool,
    /// Other seats that answered a knock window (their answers sealed).
    sealed: Vec<usize>,
    /// Other seats done with their initial choices (their slots sealed).
    chose: Vec<usize>,
    draw: usize,
    /// Unseen copies of each value -2..=12.
    unseen: [u16; 15],
}

fn phase_of(p: i32) -> CoreResult<Phase> {
    use pb::Phase as P;
    Ok(match P::try_from(p).unwrap_or(P::Unspecified) {
        P::InitialReveal => Phase::InitialReveal,
        P::ChooseSource => Phase::ChooseSource,
        P::KnockWindow => Phase::KnockWindow,
        P::KnockDecision => Phase::KnockDecision,
        P::DecideDrawn => Phase::DecideDrawn,
        P::SwapDiscardCard => Phase::SwapDiscard,
        P::KnockerSwap => Phase::KnockerSwap,
        P::Triples => Phase::Triples,
        P::TakeFromKnocker => Phase::TakeFromKnocker,
        P::ReturnSwap => Phase::ReturnSwap,
        P::MatchOver => Phase::Over,
        P::Aborted => Phase::Aborted,
        P::Automatic => {
            return Err(CoreError::malformed(
                "phase AUTOMATIC lies between two events: no seat decides in it",
            ))
        }
        P::Unspecified => return Err(CoreError::malformed(format!("phase {p} is not a phase"))),
    })
}

fn mask(seats: &[u32], n: usize, what: &str) -> CoreResult<u8> {
    let mut m = 0u8;
    for &s in seats {
        if s as usize >= n || m >> s & 1 == 1 {
            return Err(CoreError::malformed(format!(
                "{what}: seat {s} repeated or not at the table"
            )));
        }
        m |= 1 << s;
    }
    Ok(m)
}

fn seat(v: Option<u32>, n: usize, what: &str) -> CoreResult<u8> {
    match v {
        None => Ok(NONE),
        Some(s) if (s as usize) < n => Ok(s as u8),
        Some(s) => Err(CoreError::malformed(format!(
            "{what} {s} is not a seat of the table"
        ))),
    }
}

fn value(v: Option<i32>, what: &str) -> CoreResult<i8> {
    match v {
        None => Ok(NO_CARD),
        Some(v) if (-2..=12).contains(&v) => Ok(v as i8),
        Some(v) => Err(CoreError::malformed(format!(
            "{what}: {v} is not a card value (-2..12)"
        ))),
    }
}

fn slot(s: &pb::Slot, n: usize, what: &str) -> CoreResult<u8> {
    if (s.owner as usize) < n && (1..=3).contains(&s.row) && (1..=4).contains(&s.col) {
        Ok((s.owner * 12 + (s.row - 1) * 4 + (s.col - 1)) as u8)
    } else {
        Err(CoreError::malformed(format!(
            "{what}: not a slot of the table"
        )))
    }
}

fn check(pos: &pb::Position) -> CoreResult<Known> {
    let view = pos
        .view
        .as_ref()
        .ok_or_else(|| CoreError::malformed("the position has no view"))?;
    let n = view.seats as usize;
    let cfg: Config = GridKnock::checked_config(view.seats, &pos.options)
        .map_err(|e| CoreError::malformed(format!("the position's table: {e}")))?;
    if pos.seat as usize >= n {
        return Err(CoreError::malformed(format!(
            "seat {} is not a seat of this {n}-seat table",
            pos.seat
        )));
    }
    let me = pos.seat as usize;
    let mut s = GridKnock::initial(&cfg);
    s.phase = phase_of(view.phase)?;
    s.active = seat(Some(view.active), n, "active")?;
    s.round = view.round;
    s.dealer = seat(Some(view.dealer), n, "dealer")?;
    s.first = seat(Some(view.first_player), n, "first_player")?;
    s.turns = view.turns;
    if view.slots.len() != 12 * n {
        return Err(CoreError::malformed(format!(
            "{} slots for {n} seats: 12 each",
            view.slots.len()
        )));
    }
    let mut seen = [0u16; 15];
    let deck = deck_histogram();
    let see = |v: i8, seen: &mut [u16; 15]| -> CoreResult<()> {
        hist_add(seen, v);
        let i = (v + 2) as usize;
        if seen[i] > deck[i] {
            return Err(CoreError::malformed(format!(
                "value {v} appears {} times: the deck holds {}",
                seen[i], deck[i]
            )));
        }
        Ok(())
    };
    let mut face_down = Vec::new();
    for (i, sv) in view.slots.iter().enumerate() {
        let b = 1u128 << i;
        match pb::SlotState::try_from(sv.state).unwrap_or(pb::SlotState::Unspecified) {
            pb::SlotState::Empty | pb::SlotState::Reserved => {}
            pb::SlotState::FaceUp => {
                let v = value(sv.value, "slot")?;
                if v == NO_CARD {
                    return Err(CoreError::malformed(format!(
                        "slot {i} is face up without a value"
                    )));
                }
                see(v, &mut seen)?;
                s.place_up(i as u8, v);
            }
            pb::SlotState::FaceDown => {
                if sv.value.is_some() {
                    return Err(CoreError::malformed(format!(
                        "slot {i} is face down with its value shown: nobody at the table sees it"
                    )));
                }
                s.filled |= b;
                face_down.push(i as u8);
            }
            pb::SlotState::Unspecified => {
                return Err(CoreError::malformed(format!("slot {i} has no state")))
            }
        }
    }
    if view.discard_pile.len() > DECK_SIZE || view.draw_pile_size as usize > DECK_SIZE {
        return Err(CoreError::malformed("a pile larger than the deck"));
    }
    for &v in &view.discard_pile {
        let v = value(Some(v), "discard_pile")?;
        see(v, &mut seen)?;
        s.push_discard(v)
            .map_err(|e| CoreError::malformed(e.to_string()))?;
    }
    s.draw_len = view.draw_pile_size as u8;
    s.drawn_card = value(view.drawn_card, "drawn_card")?;
    s.taken_card = value(view.taken_card, "taken_card")?;
    s.exchanged_card = value(view.exchanged_card, "exchanged_card")?;
    for v in [s.drawn_card, s.taken_card, s.exchanged_card] {
        if v != NO_CARD {
            see(v, &mut seen)?;
        }
    }
    s.eligible = mask(&view.knock_eligible, n, "knock_eligible")?;
    s.answered = mask(&view.knock_answered, n, "knock_answered")?;
    s.knockers = mask(&view.knockers, n, "knockers")?;
    s.knocker = seat(view.knocker, n, "knocker")?;
    s.final_taken = mask(&view.final_turn_taken, n, "final_turn_taken")?;
    s.closer = seat(view.closer, n, "closer")?;
    s.tri_owner = seat(view.triples_owner, n, "triples_owner")?;
    s.winners = mask(&view.winners, n, "winners")?;
    if s.answered >> me & 1 == 1 && view.own_knock_answer == pb::KnockAnswer::Knock as i32 {
        s.knocked |= 1 << me;
    }
    let sealed: Vec<usize> = (0..n)
        .filter(|&i| i != me && s.answered >> i & 1 == 1)
        .collect();
    s.held_card_was_face_up = view.held_card_was_face_up;
    let hidden_held = view.knocker_holds_card && view.held_card.is_none();
    if view.knocker_holds_card && !hidden_held {
        s.held_card = value(view.held_card, "held_card")?;
        see(s.held_card, &mut seen)?;
    }
    s.reserved_slot = match &view.reserved_slot {
        Some(r) => slot(r, n, "reserved_slot")?,
        None => NONE,
    };
    if view.totals.len() != n || view.last_round_scores.len() != n {
        return Err(CoreError::malformed(
            "totals and last round scores list one per seat",
        ));
    }
    for i in 0..n {
        s.totals[i] = i32::try_from(view.totals[i])
            .map_err(|_| CoreError::malformed("a total out of range"))?;
        s.last[i] = i32::try_from(view.last_round_scores[i])
            .map_err(|_| CoreError::malformed("a round score out of range"))?;
    }
    s.tri_ctx = match pb::TriplesOpening::try_from(pos.triples_opening)
        .unwrap_or(pb::TriplesOpening::Unspecified)
    {
        pb::TriplesOpening::Keep => Ctx::Keep,
        pb::TriplesOpening::Reveal => Ctx::Reveal,
        pb::TriplesOpening::Knocker => Ctx::Knocker,
        pb::TriplesOpening::Return => Ctx::Return,
        pb::TriplesOpening::Unspecified if s.phase == Phase::Triples => {
            return Err(CoreError::malformed("phase TRIPLES needs triples_opening"))
        }
        pb::TriplesOpening::Unspecified => Ctx::Keep,
    };
    let mut chose = Vec::new();
    if s.phase == Phase::InitialReveal {
        let done = mask(&view.initial_done, n, "initial_done")?;
        for (k, c) in view.own_initial_choices.iter().enumerate().take(2) {
            s.init_choice[me][k] = slot(c, n, "own_initial_choices")?;
        }
        s.init_cnt[me] = view.own_initial_choices.len().min(2) as u8;
        chose = (0..n).filter(|&i| i != me && done >> i & 1 == 1).collect();
        for &i in &chose {
            s.init_cnt[i] = 2;
        }
    }
    let hidden = face_down.len() + usize::from(hidden_held) + s.draw_len as usize;
    let shown: usize = seen.iter().map(|&c| c as usize).sum();
    let dealt = !matches!(s.phase, Phase::Over | Phase::Aborted);
    if (dealt && shown + hidden != DECK_SIZE) || shown + hidden > DECK_SIZE {
        return Err(CoreError::malformed(format!(
            "the table holds {} cards (layouts, piles, cards in hand): the deck has {DECK_SIZE}",
            shown + hidden
        )));
    }
    let mut unseen = [0u16; 15];
    for i in 0..15 {
        unseen[i] = deck[i] - seen[i];
    }
    let known = Known {
        seat: me as Seat,
        table: s,
        face_down,
        hidden_held,
        sealed,
        chose,
        draw: view.draw_pile_size as usize,
        unseen,
    };
    let dealt_state = deal(&known, &mut Rng::from_u64(0));
    let rebuilt = GridKnock::view(&dealt_state, Viewer::Seat(me as Seat));
    if &rebuilt != view {
        return Err(CoreError::malformed(format!(
            "the view does not hold together: {}",
            first_difference(view, &rebuilt)
        )));
    }
    if dealt {
        GridKnock::check_invariants(&dealt_state)
            .map_err(|e| CoreError::malformed(format!("a table the rules cannot reach: {e}")))?;
    }
    Ok(known)
}

/// The table with the unseen cards dealt: the face-down cards, a held card the seat cannot
/// see, the draw pile; the other seats' sealed answers and initial choices drawn at random.
fn deal(k: &Known, rng: &mut Rng) -> State {
    let mut s = k.table.clone();
    let mut pool: Vec<i8> = Vec::with_capacity(DECK_SIZE);
    for (i, &c) in k.unseen.iter().enumerate() {
        pool.extend(std::iter::repeat_n(i as i8 - 2, c as usize));
    }
    rng.shuffle(&mut pool);
    for &slot in &k.face_down {
        s.val[slot as usize] = pool.pop().unwrap_or(0);
    }
    if k.hidden_held {
        s.held_card = pool.pop().unwrap_or(0);
    }
    for (j, v) in pool.iter().take(k.draw).enumerate() {
        s.draw[j] = *v;
    }
    for &i in &k.sealed {
        if rng.below(2) == 1 {
            s.knocked |= 1 << i;
        }
    }
    for &i in &k.chose {
        let mut own: Vec<u8> = k
            .face_down
            .iter()
            .copied()
            .filter(|&slot| slot as usize / 12 == i)
            .collect();
        rng.shuffle(&mut own);
        for (c, slot) in own.into_iter().take(2).enumerate() {
            s.init_choice[i][c] = slot;
        }
    }
    s
}

/// The seat's visible layout total: its face-up cards.
fn visible_total(s: &State, me: usize) -> i32 {
    (12 * me..12 * me + 12)
        .filter(|&slot| s.is_up(slot as u8))
        .map(|slot| s.val[slot] as i32)
        .sum()
}

impl Analysis for GridKnock {
    type Known = Known;
    const ROLLOUT_BOT: &'static str = "greedy";
    const EVALUATOR_STEPS: u32 = 33_000; // evaluator_bench --calibrate

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
        let mut out = pb::Evaluation::default();
        for (i, m) in moves.iter().enumerate() {
            let (mut change, mut triples) = (0.0, 0.0);
            for d in 0..IMMEDIATE_DEALS {
                let mut rng = Rng::from_u64(d);
                let mut s = deal(k, &mut rng);
                let before = visible_total(&s, me);
                let cards = (s.filled & (0xFFFu128 << (12 * me))).count_ones() as i32;
                let round = s.round;
                let mut events = Vec::new();
                if GridKnock::play(&mut s, k.seat, m, &mut rng, &mut events).is_err()
                    || s.round != round
                {
                    continue;
                }
                change += (visible_total(&s, me) - before) as f64;
                let after = (s.filled & (0xFFFu128 << (12 * me))).count_ones() as i32;
                triples += ((cards - after).max(0) / 3) as f64;
            }
            let d = IMMEDIATE_DEALS as f64;
            out.moves.push(pb::EvaluatedMove {
                action: Some(m.clone()),
                visible_points_change: change / d,
                triples_completed: triples / d,
                value: values.map(|v| v[i]),
            });
        }
        let key = |m: &pb::EvaluatedMove| match (values, m.value) {
            (Some(_), Some(v)) => (v.win_probability, v.margin),
            _ => (-m.visible_points_change, 0.0),
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
