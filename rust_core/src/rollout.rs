//! Move values by determinized rollouts, the same engine for every game.
//!
//! A game that implements [`Analysis`] turns its `Position` (what one seat may know) into a
//! checked form, deals the rest of the table at random consistently with it ([`Analysis::sample`]),
//! and lists the seat's legal moves with their immediate effect. The engine plays, for each
//! rollout, one such deal: every legal move in it, then the rest of the match with the game's
//! strongest bot for every seat, and averages the final margin and win share per move. Rollout
//! `i` draws from `(seed, i)` alone, and the results are summed in rollout order, so the same
//! seed and count give the same values whatever the number of threads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::error::{CoreError, CoreResult};
use crate::game::{Game, Seat};
use crate::proto::{MoveValue, Outcome, RolloutSettings};
use crate::rng::Rng;

/// Decisions a rollout plays at most before it is given up (not counted): far beyond any
/// match's administrative caps from a reachable position.
const MAX_ROLLOUT_STEPS: usize = 200_000;
pub const MAX_ROLLOUTS: u32 = 100_000;
pub const MAX_BUDGET_MS: u32 = 60_000;

/// What a game gives the engine (besides [`Game`]).
pub trait Analysis: Game {
    /// A decoded and checked position.
    type Known: Send + Sync;
    /// The bot the rollouts play with (the game's strongest).
    const ROLLOUT_BOT: &'static str;
    /// The `evaluator` bot's playouts per decision (deals times moves), calibrated so that a
    /// decision stays within [`EVALUATOR_CPU_MS`] of one core's CPU time
    /// (`evaluator_bench --calibrate`). A count, not a clock: the bot's moves do not depend on
    /// the machine's load.
    const EVALUATOR_PLAYOUTS: u32 = 1000;
    /// Decodes and checks a `Position`: `Malformed` with a reason for anything the rules
    /// cannot reach (a card in two places, more cards than the deck, impossible counts).
    fn known(position: &[u8]) -> CoreResult<Self::Known>;
    /// The seat whose position it is.
    fn seat(known: &Self::Known) -> Seat;
    /// A full state consistent with the position: what the seat knows as it is, every card it
    /// cannot see dealt at random among those it has not seen.
    fn sample(known: &Self::Known, rng: &mut Rng) -> Self::State;
    /// The encoded `Evaluation`: every move of `moves` (the seat's legal moves, in the order
    /// the rules list them) with its immediate effect, and its value when `values` is given.
    fn evaluation(
        known: &Self::Known,
        moves: &[Self::Action],
        values: Option<&[MoveValue]>,
    ) -> CoreResult<Vec<u8>>;
}

/// Settings checked; `None` when no rollout is asked for.
pub fn checked(settings: &RolloutSettings) -> CoreResult<Option<RolloutSettings>> {
    if settings.rollouts > MAX_ROLLOUTS {
        return Err(CoreError::malformed(format!(
            "rollouts {} is above {MAX_ROLLOUTS}",
            settings.rollouts
        )));
    }
    if settings.time_budget_ms > MAX_BUDGET_MS {
        return Err(CoreError::malformed(format!(
            "time_budget_ms {} is above {MAX_BUDGET_MS}",
            settings.time_budget_ms
        )));
    }
    if settings.rollouts == 0 && settings.time_budget_ms == 0 {
        return Ok(None);
    }
    Ok(Some(*settings))
}

/// The seat's legal moves in the position (computed from what it may know: any deal gives
/// the same list, the engine checks it in every rollout).
pub fn legal_moves<G: Analysis>(known: &G::Known) -> (G::State, Vec<G::Action>) {
    let state = G::sample(known, &mut Rng::from_u64(0));
    let moves = G::legal_actions(&state, G::seat(known));
    (state, moves)
}

/// `evaluate` of a game with an [`Analysis`]: the encoded Evaluation of an encoded Position.
pub fn evaluate<G: Analysis>(position: &[u8], settings: &RolloutSettings) -> CoreResult<Vec<u8>> {
    let settings = checked(settings)?;
    let known = G::known(position)?;
    let (_, moves) = legal_moves::<G>(&known);
    match settings {
        None => G::evaluation(&known, &moves, None),
        Some(s) => {
            let values = values::<G>(&known, &moves, &s)?;
            G::evaluation(&known, &moves, Some(&values))
        }
    }
}

/// Per move of one rollout: (margin, win share), or None when not played or not finished.
type PerMove = Vec<Option<(f64, f64)>>;

/// The seat's final margin and win share in a finished match.
pub fn result_for(outcome: &Outcome, seat: Seat) -> (f64, f64) {
    let own = outcome.scores.get(seat as usize).copied().unwrap_or(0);
    let sign = if outcome.lower_is_better { -1 } else { 1 };
    let best_other = outcome
        .scores
        .iter()
        .enumerate()
        .filter(|&(s, _)| s != seat as usize)
        .map(|(_, &v)| v * sign)
        .max()
        .unwrap_or(0);
    let margin = (own * sign - best_other) as f64;
    let win = if outcome.winners.contains(&seat) {
        1.0 / outcome.winners.len() as f64
    } else {
        0.0
    };
    (margin, win)
}

/// Plays `state` to its end with the rollout bot for every seat; the outcome, or `None` when
/// the step cap is reached or a bot has no move (not counted).
pub fn play_out<G: Analysis>(state: &mut G::State, rng: &mut Rng) -> Option<Outcome> {
    let mut events = Vec::new();
    for _ in 0..MAX_ROLLOUT_STEPS {
        if let Some(o) = G::outcome(state) {
            return Some(o);
        }
        let seat = G::to_act(state).first()?;
        let action = G::bot_action(state, seat, G::ROLLOUT_BOT, rng).ok()?;
        events.clear();
        G::play(state, seat, &action, rng, &mut events).ok()?;
    }
    None
}

/// One rollout: a deal, then every move in it played out, in an order drawn for the deal.
/// Per move: (margin, win), or None. Past `deadline` the moves not yet played are left out
/// (None), except in the first rollout, which plays at least one: a time budget smaller than a
/// deal still spreads its playouts over every move across rollouts.
fn rollout<G: Analysis>(
    known: &G::Known,
    moves: &[G::Action],
    seed: u64,
    index: u64,
    deadline: Option<Instant>,
) -> PerMove {
    let seat = G::seat(known);
    let mut deal_rng = Rng::from_u64(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let dealt = G::sample(known, &mut deal_rng);
    // The rest of the match draws from one stream per rollout, the same for every move.
    let play_seed = deal_rng.next_u64();
    let mut order: Vec<usize> = (0..moves.len()).collect();
    deal_rng.shuffle(&mut order);
    let mut out = vec![None; moves.len()];
    for (k, &i) in order.iter().enumerate() {
        if (index > 0 || k > 0) && deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let mut state = dealt.clone();
        let mut rng = Rng::from_u64(play_seed);
        let mut events = Vec::new();
        if G::play(&mut state, seat, &moves[i], &mut rng, &mut events).is_ok() {
            out[i] = play_out::<G>(&mut state, &mut rng).map(|o| result_for(&o, seat));
        }
    }
    out
}

/// Each move's value over rollouts as `settings` asks (checked).
pub fn values<G: Analysis>(
    known: &G::Known,
    moves: &[G::Action],
    settings: &RolloutSettings,
) -> CoreResult<Vec<MoveValue>> {
    if moves.is_empty() {
        return Ok(Vec::new());
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = (settings.threads.max(1) as usize).min(cores);
    let limit = if settings.rollouts == 0 {
        MAX_ROLLOUTS as usize
    } else {
        settings.rollouts as usize
    };
    let deadline = (settings.time_budget_ms > 0)
        .then(|| Instant::now() + Duration::from_millis(settings.time_budget_ms as u64));
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            // At least one rollout, whatever the budget.
            if i >= limit || (i > 0 && deadline.is_some_and(|d| Instant::now() >= d)) {
                return done;
            }
            done.push((
                i,
                rollout::<G>(known, moves, settings.seed, i as u64, deadline),
            ));
        }
    };
    let mut results: Vec<(usize, PerMove)> = if threads <= 1 {
        work()
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        })
    };
    results.sort_by_key(|(i, _)| *i);
    let mut sums = vec![[0f64; 5]; moves.len()];
    for (_, per_move) in &results {
        for (acc, r) in sums.iter_mut().zip(per_move) {
            if let Some((margin, win)) = r {
                acc[0] += 1.0;
                acc[1] += margin;
                acc[2] += margin * margin;
                acc[3] += win;
                acc[4] += win * win;
            }
        }
    }
    Ok(sums.iter().map(summary).collect())
}

fn summary(a: &[f64; 5]) -> MoveValue {
    let n = a[0];
    if n == 0.0 {
        return MoveValue::default();
    }
    let stderr = |sum: f64, sq: f64| {
        if n < 2.0 {
            return 0.0;
        }
        let mean = sum / n;
        let var = ((sq - n * mean * mean) / (n - 1.0)).max(0.0);
        (var / n).sqrt()
    };
    MoveValue {
        margin: a[1] / n,
        margin_stderr: stderr(a[1], a[2]),
        win_probability: a[3] / n,
        win_stderr: stderr(a[3], a[4]),
        samples: n as u32,
    }
}

/// The `evaluator` bot's settings: [`Analysis::EVALUATOR_PLAYOUTS`] playouts per decision,
/// spread over the moves (at least one deal), on one thread, and no clock: the count is
/// calibrated to [`EVALUATOR_CPU_MS`] of one core's CPU time, and the same state and seed give
/// the same move whatever the machine's load, so that a timeout decided by it (the
/// `evaluator` clock policy) is decided again identically when a match is verified.
pub const EVALUATOR_BOT: &str = "evaluator";
pub const EVALUATOR_CPU_MS: u32 = 50;
/// Samples each side of a comparison needs before the bot trusts a standard error.
const MIN_SAMPLES: u32 = 4;

/// The `evaluator` bot's settings for a decision among `moves` moves.
pub fn evaluator_settings<G: Analysis>(moves: usize, seed: u64) -> RolloutSettings {
    let deals = (G::EVALUATOR_PLAYOUTS as usize / moves.max(1)).max(1);
    RolloutSettings {
        rollouts: deals.min(MAX_ROLLOUTS as usize) as u32,
        time_budget_ms: 0,
        seed,
        threads: 1,
    }
}

/// The move of highest value for the position `seat` faces in `state`, built from what that
/// seat may know only: the rollout bot's own move unless another is better by more than twice
/// the standard error of the difference (win share, then margin), so that the noise of a few
/// rollouts over many moves never trades a good move for a lucky one.
pub fn best_move<G: Analysis>(
    state: &G::State,
    seat: Seat,
    settings: &RolloutSettings,
    rng: &mut Rng,
) -> CoreResult<G::Action> {
    best_move_with::<G>(state, seat, |_| *settings, rng)
}

/// [`best_move`] with settings chosen from the number of candidate moves.
pub fn best_move_with<G: Analysis>(
    state: &G::State,
    seat: Seat,
    settings: impl FnOnce(usize) -> RolloutSettings,
    rng: &mut Rng,
) -> CoreResult<G::Action> {
    let position = G::position(state, seat)
        .ok_or_else(|| CoreError::Unsupported(format!("{} has no position", G::ID)))?;
    let known = G::known(&position)?;
    let mut moves = G::legal_actions(state, seat);
    if moves.len() <= 1 {
        return moves
            .into_iter()
            .next()
            .ok_or_else(CoreError::not_your_turn);
    }
    // The bot's move may be written otherwise than the listed one (Qwirkle's placements in
    // another order): it is then a candidate of its own.
    let own = G::bot_action(state, seat, G::ROLLOUT_BOT, rng)?;
    let base = match moves.iter().position(|m| *m == own) {
        Some(i) => i,
        None => {
            moves.push(own);
            moves.len() - 1
        }
    };
    let settings = settings(moves.len());
    // Fewer deals than a standard error needs can never overturn the bot's move: no rollout
    // then (a many-move position within a small budget).
    if settings.time_budget_ms == 0 && settings.rollouts < MIN_SAMPLES {
        return Ok(moves.swap_remove(base));
    }
    let values = values::<G>(&known, &moves, &settings)?;
    let b = values[base];
    let gain = |v: &MoveValue| {
        let se = |x: f64, y: f64| 2.0 * (x * x + y * y).sqrt();
        // A standard error needs a few samples on each side.
        if v.samples < MIN_SAMPLES || b.samples < MIN_SAMPLES {
            return None;
        }
        let win = v.win_probability - b.win_probability;
        let margin = v.margin - b.margin;
        if win > se(v.win_stderr, b.win_stderr) {
            Some((win, margin))
        } else if win >= 0.0 && margin > se(v.margin_stderr, b.margin_stderr) {
            Some((0.0, margin))
        } else {
            None
        }
    };
    let mut best = base;
    let mut best_gain = (0.0, 0.0);
    for (i, v) in values.iter().enumerate() {
        if let Some(g) = gain(v) {
            if g > best_gain {
                (best, best_gain) = (i, g);
            }
        }
    }
    Ok(moves[best].clone())
}

/// The `evaluator` bot's move ([`evaluator_settings`]), its deals drawn from `rng`.
pub fn bot_move<G: Analysis>(state: &G::State, seat: Seat, rng: &mut Rng) -> CoreResult<G::Action> {
    let seed = rng.next_u64();
    best_move_with::<G>(state, seat, |n| evaluator_settings::<G>(n, seed), rng)
}

/// Where two renderings of a message first differ (for a position whose parts contradict each
/// other): the field, as the debug form names it, with both values.
pub fn first_difference(given: &impl std::fmt::Debug, rebuilt: &impl std::fmt::Debug) -> String {
    let a: Vec<char> = format!("{given:?}").chars().collect();
    let b: Vec<char> = format!("{rebuilt:?}").chars().collect();
    let at = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    // Back to the start of the field: the last "name: " before the difference.
    let colon = (1..at).rev().find(|&i| a[i - 1] == ':' && a[i] == ' ');
    let start = colon
        .and_then(|c| {
            (0..c)
                .rev()
                .find(|&i| matches!(a[i], ' ' | '{' | '(' | '['))
        })
        .map_or(0, |i| i + 1);
    let part = |s: &[char]| -> String {
        s[start.min(s.len())..(at + 40).min(s.len())]
            .iter()
            .collect()
    };
    format!(
        "the position says {:?}, the table it describes gives {:?}",
        part(&a),
        part(&b)
    )
}
