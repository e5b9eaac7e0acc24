//! Hot path of Rat-a-Tat Cat: legal actions plus apply (decide + evolve) over a full random
//! match, in the core alone. Target: >= 100,000 matches per second per core.
//!
//! `cargo bench -p tablier-core --bench rat_a_tat_cat -- --warm-up-time 1 --measurement-time 3`

use criterion::{black_box, criterion_group, Criterion, Throughput};
use tablier_core::game::{Game, Options};
use tablier_core::games::rat_a_tat_cat::RatATatCat;
use tablier_core::rng::Rng;

/// One full match with uniform random legal actions; returns the number of decisions.
fn random_match(config: &<RatATatCat as Game>::Config, seed: u64) -> u64 {
    let mut rng = Rng::from_u64(seed);
    let mut state = RatATatCat::initial(config);
    for e in RatATatCat::start(&state, &mut rng).expect("start") {
        RatATatCat::evolve(&mut state, &e).expect("evolve");
    }
    let mut decisions = 0;
    loop {
        let awaited = RatATatCat::to_act(&state);
        let Some(&seat) = awaited.first() else { break };
        let moves = RatATatCat::legal_actions(&state, seat);
        let action = &moves[rng.index(moves.len())];
        for e in RatATatCat::decide(&state, seat, action, &mut rng).expect("decide") {
            RatATatCat::evolve(&mut state, &e).expect("evolve");
        }
        decisions += 1;
    }
    black_box(&state);
    decisions
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("rat_a_tat_cat");
    for seats in [2u32, 4, 6] {
        let config = RatATatCat::configure(seats, &Options::new()).expect("config");
        let sample = 2000u64;
        let decisions: u64 = (0..sample).map(|s| random_match(&config, s)).sum();
        eprintln!("{seats} seats: {:.1} decisions per random match", decisions as f64 / sample as f64);
        group.throughput(Throughput::Elements(1));
        let mut seed = 0u64;
        group.bench_function(format!("full_random_match/{seats}_seats"), |b| {
            b.iter(|| {
                seed = seed.wrapping_add(1);
                random_match(&config, seed)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
