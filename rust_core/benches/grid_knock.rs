//! Grid Knock hot paths: triple detection on the domains a placed card touches (rows with
//! empty slots skipped, columns, the shared column), and a full random 4-seat round through
//! the engine's own move/event path (validation, events, automatic steps, scoring, next deal).
//! Targets: <= 100 ns per placed card; >= 10,000 rounds per second per core.
//! Before criterion's wall-clock groups, the same two paths are timed in CPU time (the per-core
//! figures); `GK_FIGURE=triples` limits that to triple detection.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use tablier_core::game::Game;
use tablier_core::games::grid_knock::{self as gk, GridKnock, Move};
use tablier_core::rng::Rng;

fn started(seats: u32, seed: u64) -> gk::State {
    let cfg = GridKnock::checked_config(seats, &Default::default()).unwrap();
    let mut st = GridKnock::initial(&cfg);
    let mut evs = Vec::new();
    gk::auto_steps(&mut st, &mut Rng::from_u64(seed), &mut evs).unwrap();
    st
}

/// Plays random legal moves until the round number changes or the match ends.
fn play_round(
    st: &mut gk::State,
    rng: &mut Rng,
    moves: &mut Vec<Move>,
    evs: &mut Vec<gk::Ev>,
) -> u32 {
    let round = st.round;
    let mut steps = 0;
    while st.round == round && !matches!(st.phase, gk::Phase::Over | gk::Phase::Aborted) {
        let mask = gk::to_act_mask(st);
        let k = rng.index(mask.count_ones() as usize);
        let mut m = mask;
        for _ in 0..k {
            m &= m - 1;
        }
        let seat = m.trailing_zeros() as u8;
        gk::legal_moves(st, seat, moves);
        let mv = moves[rng.index(moves.len())];
        evs.clear();
        gk::act(st, seat, mv, rng, evs).unwrap();
        steps += 1;
    }
    steps
}

/// CPU time of this process (user + system), from /proc (Linux; `None` elsewhere). Clock ticks
/// are 10 ms, so the loops below run for seconds to keep the error under 1%.
fn cpu_time() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// The figures against the targets, per core: CPU time, so other processes sharing the
/// machine do not inflate them the way they inflate criterion's wall-clock medians.
fn per_core_figures(base: &gk::State, placements: &[(u8, i8)]) {
    let Some(t0) = cpu_time() else { return };
    let mut st = base.clone();
    let mut found = 0usize;
    let mut placed = 0u64;
    while cpu_time().unwrap_or(t0) - t0 < 2.0 {
        for _ in 0..2000 {
            for &(s, v) in placements {
                st.val[s as usize] = v;
                found += gk::triples_after_change(black_box(&st), s);
            }
        }
        placed += 2000 * placements.len() as u64;
    }
    let dt = cpu_time().unwrap_or(t0) - t0;
    eprintln!(
        "figure: triple detection {:.1} ns CPU per placed card ({placed} placements, {found} triples; target <= 100 ns)",
        dt * 1e9 / placed as f64
    );
    if std::env::var("GK_FIGURE").as_deref() == Ok("triples") {
        return;
    }
    let mut rng = Rng::from_u64(5);
    let (mut moves, mut evs) = (Vec::with_capacity(32), Vec::with_capacity(16));
    let (mut rounds, mut steps) = (0u64, 0u64);
    let t0 = cpu_time().unwrap_or(0.0);
    while cpu_time().unwrap_or(t0) - t0 < 3.0 {
        for _ in 0..500 {
            rounds += 1;
            let mut st = started(4, rounds);
            steps += play_round(&mut st, &mut rng, &mut moves, &mut evs) as u64;
        }
    }
    let dt = cpu_time().unwrap_or(t0) - t0;
    eprintln!(
        "figure: {:.0} random 4-seat rounds per CPU second ({rounds} rounds, {:.1} decisions/round; target >= 10,000)",
        rounds as f64 / dt,
        steps as f64 / rounds as f64
    );
}

fn bench(c: &mut Criterion) {
    // A mid-round 4-seat board, everything face up, with a few empty slots.
    let mut base = started(4, 7);
    base.up = base.filled;
    let mut rng = Rng::from_u64(11);
    for _ in 0..6 {
        let s = rng.index(48) as u8;
        base.val[s as usize] = i8::MIN;
        base.filled &= !(1u128 << s);
        base.up &= !(1u128 << s);
    }
    let placements: Vec<(u8, i8)> = (0..1024)
        .map(|_| loop {
            let s = rng.index(48) as u8;
            if base.filled >> s & 1 == 1 {
                break (s, rng.index(15) as i8 - 2);
            }
        })
        .collect();
    per_core_figures(&base, &placements);
    let mut g = c.benchmark_group("grid_knock");
    g.throughput(Throughput::Elements(placements.len() as u64));
    g.bench_function("triples_after_placement_x1024", |b| {
        let mut st = base.clone();
        b.iter(|| {
            let mut found = 0;
            for &(s, v) in &placements {
                st.val[s as usize] = v;
                found += gk::triples_after_change(black_box(&st), s);
            }
            found
        })
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("random_round_4_seats", |b| {
        let mut rng = Rng::from_u64(3);
        let mut moves = Vec::with_capacity(32);
        let mut evs = Vec::with_capacity(16);
        let mut seed = 0;
        b.iter(|| {
            seed += 1;
            let mut st = started(4, seed);
            play_round(&mut st, &mut rng, &mut moves, &mut evs)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
