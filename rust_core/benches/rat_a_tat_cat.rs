//! Hot path of Rat-a-Tat Cat: legal actions plus apply over a full random match, in the core
//! alone. Target: >= 100,000 matches per second per core. Apply is `play` (decide and apply in
//! one step); `checked` applies with `decide` and then `evolve`, which re-checks every event
//! as a replay of stored events does.
//!
//! `cargo bench -p tablier-core --bench rat_a_tat_cat -- --warm-up-time 1 --measurement-time 3`

use criterion::{black_box, criterion_group, Criterion, Throughput};
use tablier_core::game::{Game, Options};
use tablier_core::games::rat_a_tat_cat::RatATatCat;
use tablier_core::rng::Rng;

mod common;

/// One full match with uniform random legal actions: `open`, then each action applied with
/// `play` (decide and apply in one step); the legal actions and the events go to buffers reused
/// from move to move. Returns the number of decisions.
fn random_match(config: &<RatATatCat as Game>::Config, seed: u64) -> u64 {
    let mut rng = Rng::from_u64(seed);
    let mut state = RatATatCat::initial(config);
    let (mut moves, mut events) = (Vec::with_capacity(32), Vec::with_capacity(16));
    RatATatCat::open(&mut state, &mut rng, &mut events).expect("open");
    let mut decisions = 0;
    while let Some(seat) = RatATatCat::to_act(&state).first() {
        moves.clear();
        RatATatCat::legal_actions_into(&state, seat, &mut moves);
        let action = &moves[rng.index(moves.len())];
        events.clear();
        RatATatCat::play(&mut state, seat, action, &mut rng, &mut events).expect("play");
        decisions += 1;
    }
    black_box(&state);
    decisions
}

/// The same match with `start` and `decide`, then `evolve` of every event, which checks each
/// event against the state as a replay of stored events does.
fn random_match_checked(config: &<RatATatCat as Game>::Config, seed: u64) -> u64 {
    let mut rng = Rng::from_u64(seed);
    let mut state = RatATatCat::initial(config);
    for e in RatATatCat::start(&state, &mut rng).expect("start") {
        RatATatCat::evolve(&mut state, &e).expect("evolve");
    }
    let mut decisions = 0;
    while let Some(seat) = RatATatCat::to_act(&state).first() {
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
        let config = RatATatCat::checked_config(seats, &Options::new()).expect("config");
        let sample = 2000u64;
        let decisions: u64 = (0..sample).map(|s| random_match(&config, s)).sum();
        eprintln!(
            "{seats} seats: {:.1} decisions per random match",
            decisions as f64 / sample as f64
        );
        group.throughput(Throughput::Elements(1));
        let mut seed = 0u64;
        group.bench_function(format!("full_random_match/{seats}_seats"), |b| {
            b.iter(|| {
                seed = seed.wrapping_add(1);
                random_match(&config, seed)
            })
        });
        group.bench_function(format!("full_random_match_checked/{seats}_seats"), |b| {
            b.iter(|| {
                seed = seed.wrapping_add(1);
                random_match_checked(&config, seed)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);

/// Matches per CPU-second, the median of 7 runs of 5,000 matches, for both ways of applying.
fn cpu_figure() {
    for (path, run) in [
        ("play", random_match as fn(&_, u64) -> u64),
        ("decide+evolve", random_match_checked),
    ] {
        for seats in [2u32, 4, 6] {
            let config = RatATatCat::checked_config(seats, &Options::new()).expect("config");
            let mut seed = 1_000_000u64;
            let figure = common::per_cpu_second(7, || {
                for _ in 0..5_000 {
                    seed += 1;
                    run(&config, seed);
                }
                5_000
            });
            let Some((median, low, high)) = figure else {
                return;
            };
            eprintln!(
                "FIGURE rat_a_tat_cat {path} {seats} seats: {median:.0} matches per CPU-second (median of 7 runs, {low:.0} to {high:.0}; {:.2} us per match)",
                1e6 / median
            );
        }
    }
}

fn main() {
    cpu_figure();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
