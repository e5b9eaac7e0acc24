//! The replay's move-value table of a mid-game Qwirkle position (90 to 130 legal moves): how
//! long EvaluatePosition with rollouts takes as the replay asks it now (200 rollouts screened
//! to 8 moves, 2 threads), and asked again (the same position and settings: from the cache),
//! each against the baseline of the same run, the request as it was (200 rollouts of every
//! move on one thread).
//!
//! Run: cargo bench -p tablier-core --bench evaluator [-- --runs N] [-- --no-baseline]
//! [-- --min-moves M] (a position with at least M of the 90 to 130 moves: 120 for the upper end)

use std::time::Instant;

use prost::Message;
use tablier_core::game::{Options, Viewer};
use tablier_core::proto::qwirkle as pb;
use tablier_core::proto::RolloutSettings;
use tablier_core::registry::{find, DynGame};
use tablier_core::rng::Rng;

/// CPU time of the whole process in ns (every thread of a parallel evaluation).
fn process_cpu_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    if rc == 0 {
        t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
    } else {
        0
    }
}

/// The first position of seeded two-seat greedy matches, after the twelfth decision, whose
/// seat has `min` (at least 90) to 130 legal moves: (position bytes, moves, seed, decisions played).
fn mid_game(game: &dyn DynGame, min: usize) -> (Vec<u8>, usize, u64, usize) {
    for seed in 0..2000u64 {
        let mut m = game.new_match(2, &Options::new()).unwrap();
        let mut rng = Rng::from_u64(seed);
        for e in m.start(&mut rng).unwrap() {
            m.apply(&e.payload).unwrap();
        }
        for step in 0..200 {
            let Some(&seat) = m.to_act().first() else {
                break;
            };
            let moves = m.legal_actions(seat).unwrap().len();
            if step >= 12 && (min.max(90)..=130).contains(&moves) {
                return (
                    m.position(Viewer::Seat(seat), seat).unwrap(),
                    moves,
                    seed,
                    step,
                );
            }
            let a = m.bot_action(seat, "greedy", &mut rng).unwrap();
            for e in m.decide(seat, &a, &mut rng).unwrap() {
                m.apply(&e.payload).unwrap();
            }
        }
    }
    panic!("no mid-game position with {} to 130 moves", min.max(90));
}

/// One evaluation: (wall ms, CPU ms of every thread, playouts counted in its values).
fn timed(game: &dyn DynGame, position: &[u8], settings: &RolloutSettings) -> (f64, f64, u64) {
    let bytes = settings.encode_to_vec();
    let (t, c) = (Instant::now(), process_cpu_ns());
    let out = game.evaluate_with(position, &bytes).unwrap();
    let wall = t.elapsed().as_secs_f64() * 1e3;
    let cpu = process_cpu_ns().saturating_sub(c) as f64 / 1e6;
    let ev = pb::Evaluation::decode(&out[..]).unwrap();
    let playouts = ev
        .actions
        .iter()
        .map(|a| u64::from(a.value.map_or(0, |v| v.samples)))
        .sum();
    (wall, cpu, playouts)
}

fn span(mut xs: Vec<f64>) -> (f64, f64, f64) {
    xs.sort_by(f64::total_cmp);
    (xs[xs.len() / 2], xs[0], xs[xs.len() - 1])
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // The number after `flag`, or `default`.
    let number = |flag: &str, default: usize| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(default)
    };
    let runs = number("--runs", 5);
    let baseline = !args.iter().any(|a| a == "--no-baseline");
    let min = number("--min-moves", 90);
    let game = find("qwirkle").unwrap();
    let (position, moves, seed, step) = mid_game(game, min);
    println!("qwirkle: a mid-game position with {moves} legal moves (greedy match seed {seed}, after {step} decisions)");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "{cores} cores; load average {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );

    // Each run its own seed, so that none is answered from the cache.
    let before = |seed: u64| RolloutSettings {
        rollouts: 200,
        seed,
        threads: 1,
        ..Default::default()
    };
    let after = |seed: u64| RolloutSettings {
        rollouts: 200,
        seed,
        threads: 2,
        screen_to: 8,
        ..Default::default()
    };
    let base = baseline.then(|| {
        let (wall, cpu, playouts) = timed(game, &position, &before(1_000));
        println!(
            "before: 200 rollouts of every move, 1 thread: {wall:.0} ms wall, {cpu:.0} ms CPU, {playouts} playouts"
        );
        wall
    });
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    let mut played = 0;
    for run in 0..runs {
        let (wall, cpu, playouts) = timed(game, &position, &after(run as u64 + 1));
        walls.push(wall);
        cpus.push(cpu);
        played = playouts;
    }
    let (w, wlo, whi) = span(walls);
    let (c, clo, chi) = span(cpus);
    println!(
        "after: 200 rollouts screened to 8, 2 threads: {w:.0} ms wall ({wlo:.0}-{whi:.0}), {c:.0} ms CPU ({clo:.0}-{chi:.0}), {played} playouts; median of {runs}"
    );
    // The same position and settings again: from the cache.
    let mut again = Vec::new();
    for _ in 0..runs {
        again.push(timed(game, &position, &after(1)).0);
    }
    let (a, alo, ahi) = span(again);
    println!("asked again (cached): {a:.3} ms wall ({alo:.3}-{ahi:.3})");
    if let Some(base) = base {
        println!(
            "ratio to before (wall): screened {:.3}, asked again {:.5}",
            w / base,
            a / base
        );
    }
}
