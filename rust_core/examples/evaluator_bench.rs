//! Figures of the move evaluator (issue 32), for every game whose evaluator has rollouts:
//!
//! 1. rollouts per CPU-second of one thread: mid-game positions of seeded two-seat matches,
//!    each evaluated with `--rollouts` rollouts (a playout is one move played to the end of the
//!    match in one deal; a deal plays every legal move);
//! 2. the immediate-only evaluation (no rollout) of the same positions, in microseconds;
//! 3. strength: the `evaluator` bot against the game's strongest bot over seeded two-seat
//!    matches (the evaluator's seat alternates), its win share with a 95% interval and its
//!    time per move (wall clock, one thread).
//!
//! ```text
//! cargo run --release --example evaluator_bench -- [MATCHES=400] [--games a,b] [--rollouts 50]
//!     [--positions 6] [--no-strength] [--options name=value,...] [--first K] [--calibrate]
//! ```
//!
//! The machine is shared: the rates are medians of the positions, each one timed on the
//! measuring thread's CPU clock.

use std::time::Instant;

use prost::Message;
use tablier_core::game::{Options, Viewer};
use tablier_core::proto::RolloutSettings;
use tablier_core::registry::{self, DynMatch};
use tablier_core::rng::Rng;
use tablier_core::rollout;

fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec for the duration of the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Plays `m` one decision with `bot` for the first awaited seat.
fn step(m: &mut Box<dyn DynMatch>, seat: u32, bot: &str, seed: &[u8; 32], seq: &mut u64) {
    let action = m
        .bot_action(seat, bot, &mut Rng::for_command(seed, *seq + 1))
        .expect("the bot moves");
    for e in m
        .decide(seat, &action, &mut Rng::for_command(seed, *seq + 1))
        .expect("the bot's move is legal")
    {
        m.apply(&e.payload).expect("own event applies");
        *seq += 1;
    }
}

fn opened(id: &str, seed: &[u8; 32]) -> (Box<dyn DynMatch>, u64) {
    opened_with(id, seed, &Default::default())
}

fn opened_with(id: &str, seed: &[u8; 32], options: &Options) -> (Box<dyn DynMatch>, u64) {
    let game = registry::find(id).unwrap();
    let mut m = game.new_match(2, options).unwrap();
    let mut seq = 0;
    for e in m.start(&mut Rng::for_command(seed, 1)).unwrap() {
        m.apply(&e.payload).unwrap();
        seq += 1;
    }
    (m, seq)
}

/// Positions (encoded) of seeded greedy two-seat matches where the seat awaited has at least
/// two moves, spread over the matches' first 60 decisions.
fn positions(id: &str, count: usize) -> Vec<(Vec<u8>, usize)> {
    let bot = registry::find(id)
        .unwrap()
        .info()
        .bots
        .last()
        .unwrap()
        .clone();
    let mut out = Vec::new();
    for k in 0..count as u8 {
        let seed = [k + 40; 32];
        let (mut m, mut seq) = opened(id, &seed);
        for d in 0..(12 + 8 * k as usize) {
            if m.outcome().is_some() {
                break;
            }
            let s = m.to_act()[0];
            let moves = m.legal_actions(s).unwrap().len();
            if d >= 10 + 8 * k as usize && moves >= 2 {
                out.push((m.position(Viewer::Seat(s), s).unwrap(), moves));
                break;
            }
            step(&mut m, s, &bot, &seed, &mut seq);
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut matches = 400usize;
    let mut rollouts = 50u32;
    let mut count = 6usize;
    let mut strength = true;
    let mut only: Option<Vec<String>> = None;
    let mut calibrate = false;
    let mut options = Options::new();
    let mut first = 0usize;
    let mut screen = 0u32;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--games" => {
                i += 1;
                only = Some(args[i].split(',').map(str::to_string).collect());
            }
            "--rollouts" => {
                i += 1;
                rollouts = args[i].parse().expect("--rollouts N");
            }
            "--positions" => {
                i += 1;
                count = args[i].parse().expect("--positions N");
            }
            "--screen" => {
                i += 1;
                screen = args[i].parse().expect("--screen K");
            }
            "--no-strength" => strength = false,
            "--calibrate" => calibrate = true,
            "--first" => {
                i += 1;
                first = args[i].parse().expect("--first K");
            }
            "--options" => {
                i += 1;
                for pair in args[i].split(',').filter(|p| !p.is_empty()) {
                    let (k, v) = pair.split_once('=').expect("--options name=value,...");
                    options.insert(k.to_string(), v.to_string());
                }
            }
            a if a.starts_with("--") => {} // cargo's own flags (--bench)
            a => matches = a.parse().expect("MATCHES is a number"),
        }
        i += 1;
    }
    let games: Vec<&str> = registry::games()
        .iter()
        .filter(|g| g.info().bots.iter().any(|b| b == "evaluator"))
        .map(|g| g.id())
        .filter(|id| only.as_ref().is_none_or(|o| o.iter().any(|x| x == id)))
        .collect();
    if calibrate {
        calibration(&games, &options);
        return;
    }
    println!("# evaluator figures: {rollouts} rollouts per position, {count} positions per game, screen_to {screen}");
    println!(
        "game            playouts/cpu-s  deals/cpu-s  immediate-us  moves  cpu-ms per evaluation"
    );
    for id in &games {
        let game = registry::find(id).unwrap();
        let settings = RolloutSettings {
            rollouts,
            seed: 1,
            threads: 1,
            screen_to: screen,
            ..Default::default()
        }
        .encode_to_vec();
        let (mut playouts, mut deals, mut immediate, mut moves) = (vec![], vec![], vec![], vec![]);
        let mut per_eval = vec![];
        for (pos, n) in positions(id, count) {
            let t0 = thread_cpu_ns();
            game.evaluate_with(&pos, &settings).unwrap();
            let ns = (thread_cpu_ns() - t0).max(1) as f64;
            per_eval.push(ns / 1e6);
            playouts.push((rollouts as usize * n) as f64 * 1e9 / ns);
            deals.push(rollouts as f64 * 1e9 / ns);
            let t0 = thread_cpu_ns();
            let reps = 20;
            for _ in 0..reps {
                game.evaluate(&pos).unwrap();
            }
            immediate.push((thread_cpu_ns() - t0) as f64 / 1e3 / reps as f64);
            moves.push(n as f64);
        }
        // (With screening a deal plays fewer moves than listed: the playouts column then
        // counts what the same figures would cost without it.)
        println!(
            "{id:<15} {:>14.0} {:>12.0} {:>13.1} {:>6.1}  {:.1}",
            median(playouts),
            median(deals),
            median(immediate),
            median(moves),
            median(per_eval)
        );
    }
    if !strength {
        return;
    }
    println!(
        "\n# strength: evaluator vs the strongest bot, {matches} seeded two-seat matches per game, options {options:?}"
    );
    println!(
        "game            matches  win-share  95%-interval    cpu-ms/move p50  p99   max   wall-ms p50  p99  (evaluator moves)"
    );
    for id in &games {
        let strongest = registry::find(id)
            .unwrap()
            .info()
            .bots
            .last()
            .unwrap()
            .clone();
        let (mut share, mut sq) = (0.0f64, 0.0f64);
        let mut ms = Vec::new();
        let mut cpu = Vec::new();
        let mut played = 0;
        for k in first..first + matches {
            let mut seed = [0u8; 32];
            seed[..8].copy_from_slice(&(k as u64 + 1000).to_le_bytes());
            let evaluator_seat = (k % 2) as u32;
            let (mut m, mut seq) = opened_with(id, &seed, &options);
            let mut decisions = 0;
            while m.outcome().is_none() && decisions < 100_000 {
                let s = m.to_act()[0];
                if s == evaluator_seat {
                    let many = m.legal_actions(s).unwrap().len() > 1;
                    let t0 = Instant::now();
                    let c0 = thread_cpu_ns();
                    step(&mut m, s, "evaluator", &seed, &mut seq);
                    if many {
                        let wall = t0.elapsed().as_secs_f64() * 1e3;
                        ms.push(wall);
                        cpu.push((thread_cpu_ns() - c0) as f64 / 1e6);
                    }
                } else {
                    step(&mut m, s, &strongest, &seed, &mut seq);
                }
                decisions += 1;
            }
            let Some(outcome) = m.outcome() else { continue };
            let x = if outcome.winners.contains(&evaluator_seat) {
                1.0 / outcome.winners.len() as f64
            } else {
                0.0
            };
            eprintln!("{id} match {k}: {x}");
            share += x;
            sq += x * x;
            played += 1;
            if played % 25 == 0 {
                eprintln!(
                    "{id}: {played} matches, win share {:.3}",
                    share / played as f64
                );
            }
        }
        let n = played as f64;
        let mean = share / n;
        let sd = ((sq / n - mean * mean).max(0.0) * n / (n - 1.0).max(1.0)).sqrt();
        let half = 1.96 * sd / n.sqrt();
        println!(
            "{id:<15} {played:>7} {mean:>10.3}  [{:.3}, {:.3}]  {:>14.1} {:>5.1} {:>5.1}  {:>10.1} {:>5.1}  ({})",
            (mean - half).max(0.0),
            (mean + half).min(1.0),
            median(cpu.clone()),
            percentile(cpu.clone(), 0.99),
            percentile(cpu.clone(), 1.0),
            median(ms.clone()),
            percentile(ms.clone(), 0.99),
            ms.len()
        );
    }
}

#[allow(dead_code)]
/// Positions of seeded two-seat matches of the strongest bot, every third decision with at
/// least two moves, from the first decision to the end: the evaluator meets all of them.
fn positions_throughout(id: &str, matches: u8) -> Vec<(Vec<u8>, usize)> {
    let bot = registry::find(id)
        .unwrap()
        .info()
        .bots
        .last()
        .unwrap()
        .clone();
    let mut out = Vec::new();
    for k in 0..matches {
        let seed = [k + 90; 32];
        let (mut m, mut seq) = opened(id, &seed);
        let mut d = 0;
        while m.outcome().is_none() && d < 2000 {
            let s = m.to_act()[0];
            let moves = m.legal_actions(s).unwrap().len();
            if d % 3 == 0 && moves >= 2 {
                out.push((m.position(Viewer::Seat(s), s).unwrap(), moves));
            }
            step(&mut m, s, &bot, &seed, &mut seq);
            d += 1;
        }
    }
    out
}

/// The evaluator's budget per decision in simulated decisions (`Analysis::EVALUATOR_STEPS`).
fn steps_of(id: &str) -> u32 {
    use tablier_core::games::{carre, democratie, grid_knock, qwirkle, rat_a_tat_cat};
    use tablier_core::rollout::Analysis;
    match id {
        "carre" => <carre::Carre as Analysis>::EVALUATOR_STEPS,
        "democratie" => <democratie::Democratie as Analysis>::EVALUATOR_STEPS,
        "grid_knock" => <grid_knock::GridKnock as Analysis>::EVALUATOR_STEPS,
        "qwirkle" => <qwirkle::Qwirkle as Analysis>::EVALUATOR_STEPS,
        "rat_a_tat_cat" => <rat_a_tat_cat::RatATatCat as Analysis>::EVALUATOR_STEPS,
        _ => 0,
    }
}

/// The CPU time of the `evaluator` bot's decisions at positions from whole matches (every
/// third decision with at least two moves, 6 seeded matches of the strongest bot), with the
/// compiled budget of simulated decisions: per decision and per thousand simulated decisions,
/// and the budget that keeps a decision within `EVALUATOR_CPU_MS` at the 99th percentile
/// (10% kept for the rest of the decision).
fn calibration(games: &[&str], options: &Options) {
    println!("# calibration: CPU time of the evaluator's decisions on one thread (positions throughout 6 matches)");
    println!(
        "game            positions  steps/decision  cpu-ms/decision p50   p99   max   us/1000-steps p50   p99   steps (p99 within {} ms)",
        rollout::EVALUATOR_CPU_MS
    );
    for id in games {
        let game = registry::find(id).unwrap();
        let bot = game.info().bots.last().unwrap().clone();
        let steps = steps_of(id).max(1) as f64;
        let (mut per, mut cpu) = (Vec::new(), Vec::new());
        for k in 0..6u8 {
            let seed = [k + 90; 32];
            let (mut m, mut seq) = opened_with(id, &seed, options);
            let mut d = 0;
            while m.outcome().is_none() && d < 2000 {
                let s = m.to_act()[0];
                if d % 3 == 0 && m.legal_actions(s).unwrap().len() >= 2 {
                    let c0 = thread_cpu_ns();
                    m.bot_action(s, "evaluator", &mut Rng::from_u64(d as u64))
                        .unwrap();
                    let ns = (thread_cpu_ns() - c0) as f64;
                    cpu.push(ns / 1e6);
                    per.push(ns / 1e3 / steps * 1000.0);
                }
                step(&mut m, s, &bot, &seed, &mut seq);
                d += 1;
            }
        }
        let p99 = percentile(per.clone(), 0.99);
        println!(
            "{id:<15} {:>9} {:>15} {:>20.1} {:>5.1} {:>5.1} {:>19.0} {:>5.0}   {:.0}",
            per.len(),
            steps,
            median(cpu.clone()),
            percentile(cpu.clone(), 0.99),
            percentile(cpu.clone(), 1.0),
            median(per.clone()),
            p99,
            0.9 * rollout::EVALUATOR_CPU_MS as f64 * 1e3 / (p99 / 1000.0)
        );
    }
}
