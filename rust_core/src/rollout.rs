//! Move values by determinized rollouts, the same engine for every game.
//!
//! A game that implements [`Analysis`] turns its `Position` (what one seat may know) into a
//! checked form, deals the rest of the table at random consistently with it ([`Analysis::sample`]),
//! and lists the seat's legal moves with their immediate effect. The engine plays, for each
//! rollout, one such deal: every legal move in it, then the rest of the match with the game's
//! strongest bot for every seat, and averages the final margin and win share per move. Rollout
//! `i` draws from `(seed, i)` alone, and the results are summed in rollout order, so the same
//! seed and count give the same values whatever the number of threads. With `screen_to` the
//! moves go through successive halving instead ([`values`]).
//!
//! The `evaluator` bot ([`best_move`]) spends a count of simulated decisions on the strongest
//! bot's move and the game's shortlist, by successive halving over common deals ([`halving`]),
//! and keeps the strongest bot's move unless a paired comparison says another is better.

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
    /// The `evaluator` bot's budget per decision in simulated decisions (bot moves played
    /// inside its playouts), calibrated so that a decision stays within [`EVALUATOR_CPU_MS`]
    /// of one core's CPU time at the 99th percentile (`evaluator_bench --calibrate`). A count,
    /// not a clock: the bot's moves do not depend on the machine's load; and a count of
    /// decisions, not of playouts, so short playouts (late in a match) buy more of them.
    const EVALUATOR_STEPS: u32 = 20_000;
    /// What a playout costs the bot's budget besides its decisions, in decisions: copying the
    /// table and its share of the deal, which weigh as much as a few decisions in a game of
    /// cheap decisions (and short playouts late in a round would otherwise cost more than the
    /// budget says).
    const PLAYOUT_STEPS: u32 = 0;
    /// The `evaluator` bot's playouts stop this many decisions after the move valued and take
    /// [`Analysis::estimate`] of the table then; 0: played to the end of the match (and
    /// always so for EvaluatePosition's values). A game of costly decisions and long matches
    /// buys many more deals this way.
    const EVALUATOR_HORIZON: u32 = 0;
    /// Whether the `evaluator` bot's playout stops at `now`, reached from the table the move was
    /// played on (`start`), and takes [`Analysis::estimate`] there (a match of many rounds cut
    /// at the end of the round: `rat_a_tat_cat`). Never by default.
    fn playout_ends(start: &Self::State, now: &Self::State) -> bool {
        let _ = (start, now);
        false
    }
    /// How many standard errors of the paired difference a move must beat the rollout bot's
    /// own move by before the `evaluator` bot plays it instead.
    const MARGIN_OF_SAFETY: f64 = 2.0;
    /// The seat's (margin, win share) as a table not yet over stands (for the horizon).
    fn estimate(state: &Self::State, seat: Seat) -> Option<(f64, f64)> {
        let _ = (state, seat);
        None
    }
    /// The move the `evaluator` bot's playouts play for `seat` while valuing a move of `me`,
    /// and the bot's first candidate (`seat` = `me`): the rollout bot's by default. A game
    /// whose strongest bot is crude gives its evaluator a better policy here without making
    /// that bot (the evaluator's measure) any stronger. EvaluatePosition's values keep the
    /// rollout bot.
    fn playout_action(
        state: &Self::State,
        seat: Seat,
        me: Seat,
        rng: &mut Rng,
    ) -> CoreResult<Self::Action> {
        let _ = me;
        Self::bot_action(state, seat, Self::ROLLOUT_BOT, rng)
    }
    /// The moves worth the bot's rollouts, most promising first (indices into `moves`; the
    /// rollout bot's own move is added if missing). Every move by default; a game with many
    /// moves keeps the few its immediate effect ranks best.
    fn shortlist(known: &Self::Known, moves: &[Self::Action]) -> Vec<usize> {
        let _ = known;
        (0..moves.len()).collect()
    }
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
/// With rollouts, an answer whose every deal was played (none cut by a time budget) is kept
/// ([`ValueCache`]): the same position and settings are answered again from it, the very
/// same bytes (they depend on the game, the position, `rollouts`, `seed` and `screen_to`
/// alone, not on the threads or a budget that cut nothing).
pub fn evaluate<G: Analysis>(position: &[u8], settings: &RolloutSettings) -> CoreResult<Vec<u8>> {
    let settings = checked(settings)?;
    let Some(s) = settings else {
        let known = G::known(position)?;
        let (_, moves) = legal_moves::<G>(&known);
        return G::evaluation(&known, &moves, None);
    };
    let key = CacheKey {
        game: G::ID,
        position: position.to_vec(),
        rollouts: s.rollouts,
        seed: s.seed,
        screen_to: s.screen_to,
    };
    if s.rollouts > 0 {
        if let Some(hit) = VALUE_CACHE.get(&key) {
            return Ok(hit);
        }
    }
    let known = G::known(position)?;
    let (_, moves) = legal_moves::<G>(&known);
    let (values, complete) = values_complete::<G>(&known, &moves, &s)?;
    let out = G::evaluation(&known, &moves, Some(&values))?;
    if complete && s.rollouts > 0 {
        VALUE_CACHE.put(key, out.clone());
    }
    Ok(out)
}

/// What an Evaluation with rollouts was computed from (the threads left out: they change
/// nothing in the values).
#[derive(PartialEq, Eq)]
struct CacheKey {
    game: &'static str,
    position: Vec<u8>,
    rollouts: u32,
    seed: u64,
    screen_to: u32,
}

/// The last [`VALUE_CACHE_SIZE`] Evaluations with rollouts, most recent last: a replay's
/// value table asked again (the page revisited, another viewer of the same seq) is answered
/// at once instead of in a second of CPU.
struct ValueCache(std::sync::Mutex<std::collections::VecDeque<(CacheKey, Vec<u8>)>>);

const VALUE_CACHE_SIZE: usize = 64;

static VALUE_CACHE: ValueCache =
    ValueCache(std::sync::Mutex::new(std::collections::VecDeque::new()));

impl ValueCache {
    fn get(&self, key: &CacheKey) -> Option<Vec<u8>> {
        let mut held = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let at = held.iter().position(|(k, _)| k == key)?;
        let entry = held.remove(at)?;
        let out = entry.1.clone();
        held.push_back(entry);
        Some(out)
    }

    fn put(&self, key: CacheKey, evaluation: Vec<u8>) {
        let mut held = self.0.lock().unwrap_or_else(|e| e.into_inner());
        held.retain(|(k, _)| k != &key);
        if held.len() >= VALUE_CACHE_SIZE {
            held.pop_front();
        }
        held.push_back((key, evaluation));
    }
}

/// A seat fork's starting state ([`Game::fork_state`]): the position checked, then dealt once
/// from `rng` as a rollout deals it.
pub fn fork_state<G: Analysis>(position: &[u8], rng: &mut Rng) -> CoreResult<(Seat, G::State)> {
    let known = G::known(position)?;
    Ok((G::seat(&known), G::sample(&known, rng)))
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
    play_out_counted::<G>(state, rng, &mut 0)
}

/// [`play_out`], adding the decisions played to `steps`.
pub fn play_out_counted<G: Analysis>(
    state: &mut G::State,
    rng: &mut Rng,
    steps: &mut u64,
) -> Option<Outcome> {
    let mut events = Vec::new();
    for _ in 0..MAX_ROLLOUT_STEPS {
        if let Some(o) = G::outcome(state) {
            return Some(o);
        }
        *steps += 1;
        let seat = G::to_act(state).first()?;
        let action = G::bot_action(state, seat, G::ROLLOUT_BOT, rng).ok()?;
        events.clear();
        G::play(state, seat, &action, rng, &mut events).ok()?;
    }
    None
}

/// Deal `index` of `seed`: the table dealt, the seed of the rest of the match (one stream per
/// deal, the same for every move played in it), and the deal's stream after both.
fn deal<G: Analysis>(known: &G::Known, seed: u64, index: u64) -> (G::State, u64, Rng) {
    let mut deal_rng = Rng::from_u64(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let dealt = G::sample(known, &mut deal_rng);
    let play_seed = deal_rng.next_u64();
    (dealt, play_seed, deal_rng)
}

/// One move played out in a deal: (margin, win), or None; the decisions played added to
/// `steps`.
fn playout<G: Analysis>(
    dealt: &G::State,
    seat: Seat,
    action: &G::Action,
    play_seed: u64,
    steps: &mut u64,
) -> Option<(f64, f64)> {
    let mut state = dealt.clone();
    let mut rng = Rng::from_u64(play_seed);
    let mut events = Vec::new();
    *steps += 1;
    G::play(&mut state, seat, action, &mut rng, &mut events).ok()?;
    play_out_counted::<G>(&mut state, &mut rng, steps).map(|o| result_for(&o, seat))
}

/// [`playout`] as the `evaluator` bot plays it: every later move by
/// [`Analysis::playout_action`], stopped `horizon` decisions after the move (0: at the end of
/// the match) and valued there by [`Analysis::estimate`].
fn playout_within<G: Analysis>(
    dealt: &G::State,
    seat: Seat,
    action: &G::Action,
    play_seed: u64,
    steps: &mut u64,
    horizon: u32,
) -> Option<(f64, f64)> {
    let mut state = dealt.clone();
    let mut rng = Rng::from_u64(play_seed);
    let mut events = Vec::new();
    *steps += 1;
    G::play(&mut state, seat, action, &mut rng, &mut events).ok()?;
    if G::outcome(&state).is_none() && G::playout_ends(dealt, &state) {
        return G::estimate(&state, seat);
    }
    let limit = if horizon == 0 {
        MAX_ROLLOUT_STEPS
    } else {
        horizon as usize
    };
    for _ in 0..limit {
        if let Some(o) = G::outcome(&state) {
            return Some(result_for(&o, seat));
        }
        *steps += 1;
        let s = G::to_act(&state).first()?;
        let next = G::playout_action(&state, s, seat, &mut rng).ok()?;
        events.clear();
        G::play(&mut state, s, &next, &mut rng, &mut events).ok()?;
        if G::outcome(&state).is_none() && G::playout_ends(dealt, &state) {
            return G::estimate(&state, seat);
        }
    }
    match G::outcome(&state) {
        Some(o) => Some(result_for(&o, seat)),
        None if horizon > 0 => G::estimate(&state, seat),
        None => None,
    }
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
    let (dealt, play_seed, mut deal_rng) = deal::<G>(known, seed, index);
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
    values_complete::<G>(known, moves, settings).map(|(v, _)| v)
}

/// [`values`], and whether every deal asked for was played (no time budget cut any).
fn values_complete<G: Analysis>(
    known: &G::Known,
    moves: &[G::Action],
    settings: &RolloutSettings,
) -> CoreResult<(Vec<MoveValue>, bool)> {
    if moves.is_empty() {
        return Ok((Vec::new(), true));
    }
    if settings.screen_to > 0
        && settings.rollouts > 0
        && (settings.screen_to as usize) < moves.len()
    {
        return Ok(screened::<G>(known, moves, settings));
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
    let mut sums = vec![[0f64; 5]; moves.len()];
    let results = in_parallel(threads, work);
    // Complete: every rollout asked for, and the budget (every check of it came before now)
    // never ran out, so no move was left out of any.
    let complete = settings.rollouts > 0
        && results.len() == limit
        && deadline.is_none_or(|d| Instant::now() < d);
    add_up(&mut sums, results);
    Ok((sums.iter().map(summary).collect(), complete))
}

/// The results of `work` run on `threads` threads (each takes rollouts until none are left),
/// in rollout order: the sums come out the same whatever the number of threads.
fn in_parallel<W>(threads: usize, work: W) -> Vec<(usize, PerMove)>
where
    W: Fn() -> Vec<(usize, PerMove)> + Sync,
{
    let mut results: Vec<(usize, PerMove)> = if threads <= 1 {
        work()
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads).map(|_| scope.spawn(&work)).collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        })
    };
    results.sort_by_key(|(i, _)| *i);
    results
}

/// Adds each move's results to its sums: count, margin, margin squared, win, win squared.
fn add_up(sums: &mut [[f64; 5]], results: Vec<(usize, PerMove)>) {
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
}

/// Each move's value by successive halving (`settings.screen_to` set, below the number of
/// moves): every move played in the first deals, then after each round the better half (by
/// win share, then margin, over the same deals) goes on to the next, until `screen_to` are
/// left; rounds get twice the deals of the round before, at least one, so that the moves left
/// at the end have `rollouts` deals (more when `rollouts` is below the number of rounds). A
/// move dropped earlier keeps the value of the deals it got (its `samples` say how many).
/// Deal `i` is drawn from `(seed, i)` alone and results are summed in deal order: the same
/// settings give the same values whatever the number of threads. A time budget stops starting
/// deals after the first round.
fn screened<G: Analysis>(
    known: &G::Known,
    moves: &[G::Action],
    settings: &RolloutSettings,
) -> (Vec<MoveValue>, bool) {
    let seat = G::seat(known);
    let keep_at_least = settings.screen_to as usize;
    let total = settings.rollouts as usize;
    let mut rounds = 0u32;
    let mut left = moves.len();
    while left > keep_at_least {
        left = left.div_ceil(2).max(keep_at_least);
        rounds += 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = (settings.threads.max(1) as usize).min(cores);
    let deadline = (settings.time_budget_ms > 0)
        .then(|| Instant::now() + Duration::from_millis(settings.time_budget_ms as u64));
    let weight_sum = (1usize << (rounds + 1)) - 1;
    let mut sums = vec![[0f64; 5]; moves.len()];
    let mut alive: Vec<usize> = (0..moves.len()).collect();
    let mut dealt = 0usize;
    for round in 0..=rounds {
        let deals = if round == rounds {
            total.saturating_sub(dealt).max(1)
        } else {
            (total * (1 << round) / weight_sum).max(1)
        };
        let first = dealt;
        dealt += deals;
        let next = AtomicUsize::new(first);
        let alive_now = &alive;
        let work = || {
            let mut done: Vec<(usize, PerMove)> = Vec::new();
            loop {
                let d = next.fetch_add(1, Ordering::Relaxed);
                if d >= first + deals
                    || (round > 0 && deadline.is_some_and(|t| Instant::now() >= t))
                {
                    return done;
                }
                let (table, play_seed, _) = deal::<G>(known, settings.seed, d as u64);
                let mut out = vec![None; moves.len()];
                for &c in alive_now {
                    out[c] = playout::<G>(&table, seat, &moves[c], play_seed, &mut 0);
                }
                done.push((d, out));
            }
        };
        add_up(&mut sums, in_parallel(threads, work));
        if round == rounds || deadline.is_some_and(|t| Instant::now() >= t) {
            break;
        }
        let mean = |c: usize| {
            let n = sums[c][0].max(1.0);
            (sums[c][3] / n, sums[c][1] / n)
        };
        let mut ranked: Vec<usize> = alive.clone();
        // Best first; equal means keep the rules' order (a stable sort).
        ranked.sort_by(|&x, &y| {
            mean(y)
                .partial_cmp(&mean(x))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        ranked.truncate(alive.len().div_ceil(2).max(keep_at_least));
        ranked.sort_unstable();
        alive = ranked;
    }
    // Complete when the budget (every check of it came before now) never ran out.
    let complete = deadline.is_none_or(|t| Instant::now() < t);
    (sums.iter().map(summary).collect(), complete)
}

/// The move of highest value (win share, then margin) among those valued on at least three
/// quarters of the deals of the most valued one: a move screened out early (at most about
/// half the deals of those kept) on a few lucky deals is not named the best over the moves
/// valued on many; a time budget leaves counts a deal apart, all of them kept.
pub fn best_valued(values: &[MoveValue]) -> Option<usize> {
    let most = values.iter().map(|v| v.samples).max()?;
    (0..values.len())
        .filter(|&i| values[i].samples * 4 >= most * 3)
        .reduce(|b, i| {
            let key = |v: &MoveValue| (v.win_probability, v.margin);
            if key(&values[i]) > key(&values[b]) {
                i
            } else {
                b
            }
        })
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

/// The `evaluator` bot: [`Analysis::EVALUATOR_STEPS`] simulated decisions per decision,
/// on one thread, and no clock: the count is calibrated to [`EVALUATOR_CPU_MS`] of one core's
/// CPU time, and the same state and seed give the same move whatever the machine's load, so
/// that a timeout decided by it (the `evaluator` clock policy) is decided again identically
/// when a match is verified.
pub const EVALUATOR_BOT: &str = "evaluator";
pub const EVALUATOR_CPU_MS: u32 = 50;
/// Deals a move and the rollout bot's own move must share before the bot trusts a standard
/// error of their difference.
const MIN_SAMPLES: usize = 4;

/// One move's results in the deals it was played in: (deal, margin, win).
type Results = Vec<(usize, f64, f64)>;

/// Successive halving over common deals: every candidate of `moves` (the `alive` indices,
/// `base` among them) played in the same deals, the worse half dropped after each round,
/// until `budget` simulated decisions are spent. Rounds get equal shares of the budget; a
/// round plays whole deals (every candidate alive in each), so candidates compared in a round
/// met the same cards and the same draws. Each move's results, by deal.
pub fn halving<G: Analysis>(
    known: &G::Known,
    moves: &[G::Action],
    mut alive: Vec<usize>,
    base: usize,
    seed: u64,
    budget: u64,
) -> Vec<Results> {
    let seat = G::seat(known);
    let mut results: Vec<Results> = vec![Vec::new(); moves.len()];
    let mut steps = 0u64;
    let mut next_deal = 0usize;
    let rounds = (usize::BITS - alive.len().saturating_sub(1).leading_zeros()).max(1) as u64;
    let per_round = (budget / rounds).max(1);
    'rounds: loop {
        let round_end = (steps + per_round).min(budget);
        // At least one deal per round; whole deals while the round's share lasts.
        loop {
            let (dealt, play_seed, _) = deal::<G>(known, seed, next_deal as u64);
            for &c in &alive {
                if steps >= budget {
                    break 'rounds;
                }
                steps += G::PLAYOUT_STEPS as u64;
                if let Some((margin, win)) = playout_within::<G>(
                    &dealt,
                    seat,
                    &moves[c],
                    play_seed,
                    &mut steps,
                    G::EVALUATOR_HORIZON,
                ) {
                    results[c].push((next_deal, margin, win));
                }
            }
            next_deal += 1;
            if steps >= round_end {
                break;
            }
        }
        if steps >= budget {
            break;
        }
        if alive.len() > 2 {
            let mean = |c: usize| {
                let r = &results[c];
                let n = r.len().max(1) as f64;
                (
                    r.iter().map(|x| x.2).sum::<f64>() / n,
                    r.iter().map(|x| x.1).sum::<f64>() / n,
                )
            };
            let mut ranked: Vec<(usize, (f64, f64))> =
                alive.iter().map(|&c| (c, mean(c))).collect();
            // Best first; equal means keep the shortlist's order (a stable sort).
            ranked.sort_by(|x, y| y.1.partial_cmp(&x.1).unwrap_or(std::cmp::Ordering::Equal));
            let keep = alive.len().div_ceil(2);
            let mut next: Vec<usize> = ranked.iter().take(keep).map(|x| x.0).collect();
            if !next.contains(&base) {
                next.pop();
                next.insert(0, base);
            }
            // The base first in every deal: a deal cut by the budget still has it.
            next.sort_by_key(|&c| (c != base, alive.iter().position(|&a| a == c)));
            alive = next;
        }
    }
    results
}

/// Mean and standard error of the paired differences `c - b` over the deals both played:
/// ((win mean, win se), (margin mean, margin se), deals).
fn paired(c: &Results, b: &Results) -> ((f64, f64), (f64, f64), usize) {
    let mut d = Vec::new();
    let mut j = 0;
    for &(deal, margin, win) in c {
        while j < b.len() && b[j].0 < deal {
            j += 1;
        }
        if j < b.len() && b[j].0 == deal {
            d.push((win - b[j].2, margin - b[j].1));
        }
    }
    let n = d.len();
    let stat = |f: &dyn Fn(&(f64, f64)) -> f64| {
        if n < 2 {
            return (0.0, f64::INFINITY);
        }
        let mean = d.iter().map(f).sum::<f64>() / n as f64;
        let var = d.iter().map(|x| (f(x) - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        (mean, (var / n as f64).sqrt())
    };
    (stat(&|x| x.0), stat(&|x| x.1), n)
}

/// The move of highest value for the position `seat` faces in `state`, built from what that
/// seat may know only, within `budget` simulated decisions: the shortlist
/// ([`Analysis::shortlist`]) screened by [`halving`] on common deals, and the rollout bot's own
/// move kept unless another beats it in the deals both were played in by more than
/// [`Analysis::MARGIN_OF_SAFETY`] standard errors of the paired difference (win share, then margin at
/// an equal win share), so that the noise of a few deals never trades a good move for a lucky
/// one.
pub fn best_move<G: Analysis>(
    state: &G::State,
    seat: Seat,
    budget: u64,
    seed: u64,
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
    let own = G::playout_action(state, seat, seat, rng)?;
    let base = match moves.iter().position(|m| *m == own) {
        Some(i) => i,
        None => {
            moves.push(own);
            moves.len() - 1
        }
    };
    let mut alive = vec![base];
    alive.extend(
        G::shortlist(&known, &moves)
            .into_iter()
            .filter(|&i| i != base && i < moves.len()),
    );
    if alive.len() <= 1 {
        return Ok(moves.swap_remove(base));
    }
    let results = halving::<G>(&known, &moves, alive, base, seed, budget);
    let mut best = base;
    let mut best_gain = (0.0, 0.0);
    for (i, r) in results.iter().enumerate() {
        if i == base {
            continue;
        }
        let ((win, win_se), (margin, margin_se), n) = paired(r, &results[base]);
        if n < MIN_SAMPLES {
            continue;
        }
        let gain = if win > G::MARGIN_OF_SAFETY * win_se && win > 0.0 {
            (win, margin)
        } else if win >= 0.0 && margin > G::MARGIN_OF_SAFETY * margin_se && margin > 0.0 {
            (0.0, margin)
        } else {
            continue;
        };
        if gain > best_gain {
            (best, best_gain) = (i, gain);
        }
    }
    Ok(moves.swap_remove(best))
}

/// The `evaluator` bot's move ([`Analysis::EVALUATOR_STEPS`]), its deals drawn from `rng`.
pub fn bot_move<G: Analysis>(state: &G::State, seat: Seat, rng: &mut Rng) -> CoreResult<G::Action> {
    let seed = rng.next_u64();
    best_move::<G>(state, seat, G::EVALUATOR_STEPS as u64, seed, rng)
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
