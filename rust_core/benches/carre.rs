//! Carré hot paths: scoring a square (all 8 lines) and a full random round.
//! Targets: <= 50 ns per square scored, >= 50,000 random rounds per second per core.

use std::hint::black_box;

use criterion::{criterion_group, BatchSize, Criterion, Throughput};
use tablier_core::game::{Game, Viewer};
use tablier_core::games::carre::{card_mask, score_square, simulate_random_round, Carre};
use tablier_core::rng::Rng;

mod common;
use common::thread_cpu_ns;

/// 1024 random squares: each cell empty, face down or a random face-up card.
fn squares() -> Vec<[u8; 9]> {
    let mut rng = Rng::from_u64(7);
    (0..1024)
        .map(|_| {
            let mut m = [0u8; 9];
            for c in m.iter_mut() {
                *c = match rng.below(6) {
                    0 => 0,
                    _ => card_mask(rng.below(52) as u8),
                };
            }
            m
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let sq = squares();
    let mut g = c.benchmark_group("carre");
    g.throughput(Throughput::Elements(sq.len() as u64));
    g.bench_function("score_square_x1024", |b| {
        b.iter(|| {
            let mut t = 0u32;
            for m in black_box(&sq) {
                t = t.wrapping_add(score_square(black_box(m)));
            }
            t
        })
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("random_round_internal", |b| {
        let mut rng = Rng::from_u64(11);
        b.iter(|| simulate_random_round(black_box(&mut rng)))
    });
    // The same round through the public decider API (protobuf actions and events, decide +
    // evolve + legal_actions), one full 4-round match per iteration.
    g.bench_function("random_match_via_game_api", |b| {
        let cfg = Carre::checked_config(2, &Default::default()).unwrap();
        let mut n = 0u64;
        b.iter_batched(
            || {
                n += 1;
                n
            },
            |seed| {
                let mut rng = Rng::from_u64(seed);
                let mut s = Carre::initial(&cfg);
                for e in Carre::start(&s, &mut rng).unwrap() {
                    Carre::evolve(&mut s, &e).unwrap();
                }
                while Carre::outcome(&s).is_none() {
                    let seat = Carre::to_act(&s).first().unwrap();
                    let mut moves = Carre::legal_actions(&s, seat);
                    let a = moves.swap_remove(rng.index(moves.len()));
                    for e in Carre::decide(&s, seat, &a, &mut rng).unwrap() {
                        Carre::evolve(&mut s, &e).unwrap();
                    }
                }
                black_box(Carre::view(&s, Viewer::Auditor))
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

/// The computed figures: rounds per CPU-second and ns of CPU per square, over fixed work.
fn cpu_figures() {
    let (Some(_), sq) = (thread_cpu_ns(), squares()) else {
        println!("carre figures: no per-thread CPU clock here");
        return;
    };
    for rep in 0..3 {
        let mut rng = Rng::from_u64(100 + rep);
        let rounds = 100_000u64;
        let t0 = thread_cpu_ns().unwrap();
        let w0 = std::time::Instant::now();
        let mut acc = 0u32;
        for _ in 0..rounds {
            let r = simulate_random_round(&mut rng);
            acc = acc.wrapping_add(r[0] + r[1]);
        }
        let cpu = (thread_cpu_ns().unwrap() - t0) as f64 / 1e9;
        let wall = w0.elapsed().as_secs_f64();
        black_box(acc);
        let passes = 2_000u64;
        let t1 = thread_cpu_ns().unwrap();
        let mut t = 0u32;
        for _ in 0..passes {
            for m in black_box(&sq) {
                t = t.wrapping_add(score_square(black_box(m)));
            }
        }
        black_box(t);
        let sq_ns = (thread_cpu_ns().unwrap() - t1) as f64 / (passes * sq.len() as u64) as f64;
        println!(
            "carre figures (run {rep}): {:.0} random rounds per CPU-second ({:.0} per wall-second), {:.2} ns CPU per square scored",
            rounds as f64 / cpu,
            rounds as f64 / wall,
            sq_ns
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    cpu_figures();
}
