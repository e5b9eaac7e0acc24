//! Carré hot paths: scoring a square (all 8 lines) and a full random round.
//! Targets: <= 50 ns per square scored, >= 50,000 random rounds per second per core.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use tablier_core::game::{Game, Viewer};
use tablier_core::games::carre::{card_mask, score_square, simulate_random_round, Carre};
use tablier_core::rng::Rng;

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
        let cfg = Carre::configure(2, &Default::default()).unwrap();
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
                    let seat = Carre::to_act(&s)[0];
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

criterion_group!(benches, bench);
criterion_main!(benches);
