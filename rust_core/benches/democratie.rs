//! Démocratie hot paths: trick resolution, a whole random match on the compact state, and a
//! whole random match through the decider interface (start/decide/evolve with events).
//!
//! The figure that counts is `FIGURE democratie decider play n=…`: full random matches per
//! CPU-second through `open`, `to_act`, `legal_actions` and `play` (thread CPU time, so a busy
//! machine does not deflate it). `decide+evolve` is the same match with every event re-checked
//! as a replay of stored events does. The `simulate_random_match` figure bypasses events and
//! is not the decider's path.
//!
//! `cargo bench -p tablier-core --bench democratie -- zzz` prints only the figures.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tablier_core::game::{Game, Options};
use tablier_core::games::democratie::{
    deck_size, resolve_trick, simulate_random_match, suit_of, Config, Democratie,
};
use tablier_core::rng::Rng;

mod common;
use common::thread_cpu_ns;

fn tricks(c: &mut Criterion) {
    // 1024 random 4-player tricks with a random vote card each.
    let mut rng = Rng::from_u64(1);
    let mut batch = Vec::with_capacity(1024);
    for _ in 0..1024 {
        let mut deck: Vec<u8> = (0..deck_size(4) as u8).collect();
        rng.shuffle(&mut deck);
        batch.push(([deck[0], deck[1], deck[2], deck[3]], suit_of(deck[4])));
    }
    let mut g = c.benchmark_group("democratie_trick_resolution");
    g.throughput(Throughput::Elements(batch.len() as u64));
    g.bench_function("4_players_x1024", |b| {
        b.iter(|| {
            let mut acc = 0u32;
            for (played, trump) in &batch {
                let o = resolve_trick(black_box(played), black_box(*trump));
                acc += o.winner.map_or(7, |w| w as u32);
            }
            acc
        })
    });
    g.finish();
}

fn fast_matches(c: &mut Criterion) {
    let mut g = c.benchmark_group("democratie_random_match_core");
    for n in 2..=6u8 {
        let cfg = Config {
            seats: n,
            target: 7,
            max_deals: 200,
        };
        let mut rng = Rng::from_u64(n as u64);
        g.throughput(Throughput::Elements(1));
        g.bench_with_input(BenchmarkId::from_parameter(n), &cfg, |b, cfg| {
            b.iter(|| simulate_random_match(black_box(cfg), &mut rng))
        });
    }
    g.finish();
}

fn decider_matches(c: &mut Criterion) {
    let mut g = c.benchmark_group("democratie_random_match_decider");
    for n in [2u32, 4, 6] {
        let cfg = Democratie::checked_config(n, &Options::new()).unwrap();
        let mut rng = Rng::from_u64(n as u64);
        g.throughput(Throughput::Elements(1));
        g.bench_with_input(BenchmarkId::new("play", n), &cfg, |b, cfg| {
            b.iter(|| decider_match(cfg, &mut rng))
        });
        g.bench_with_input(BenchmarkId::new("decide_evolve", n), &cfg, |b, cfg| {
            b.iter(|| decider_match_checked(cfg, &mut rng))
        });
    }
    g.finish();
}

criterion_group!(benches, tricks, fast_matches, decider_matches, figure);
criterion_main!(benches);

/// The figure: tricks and random matches per CPU-second on one core.
fn figure(_: &mut Criterion) {
    let mut rng = Rng::from_u64(7);
    let mut batch = Vec::with_capacity(4096);
    for _ in 0..4096 {
        let n = 2 + rng.index(5);
        let mut deck: Vec<u8> = (0..deck_size(n) as u8).collect();
        rng.shuffle(&mut deck);
        batch.push((deck[..n].to_vec(), suit_of(deck[n])));
    }
    let t0 = thread_cpu_ns();
    let mut acc = 0u32;
    for _ in 0..500 {
        for (played, trump) in &batch {
            acc = acc.wrapping_add(
                resolve_trick(black_box(played), black_box(*trump))
                    .winner
                    .map_or(7, |w| w as u32),
            );
        }
    }
    if let (Some(a), Some(b)) = (t0, thread_cpu_ns()) {
        let tricks = 500.0 * batch.len() as f64;
        println!("FIGURE democratie trick resolution (2-6 players mixed): {:.1} ns per trick CPU time ({acc})", (b - a) as f64 / tricks);
    }
    decider_figure();
    for n in 2..=6u8 {
        let cfg = Config {
            seats: n,
            target: 7,
            max_deals: 200,
        };
        let mut rng = Rng::from_u64(99);
        let matches = 20_000u64;
        let (t0, w0) = (thread_cpu_ns(), std::time::Instant::now());
        let mut deals = 0u64;
        for _ in 0..matches {
            deals += simulate_random_match(&cfg, &mut rng).1 as u64;
        }
        let wall = w0.elapsed().as_secs_f64();
        let cpu = match (t0, thread_cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64 / 1e9,
            _ => wall,
        };
        println!(
            "FIGURE democratie n={n}: {:.0} random matches per CPU-second ({:.0} per wall-second), {:.1} deals per match",
            matches as f64 / cpu,
            matches as f64 / wall,
            deals as f64 / matches as f64
        );
    }
}

/// One full random match through the decider interface: `open` (start and apply in one step),
/// then `to_act`, `legal_actions_into`, a uniform pick and `play` (decide and apply in one step);
/// the legal actions and the events go to buffers reused from move to move. Returns the number
/// of events.
fn decider_match(cfg: &Config, rng: &mut Rng) -> usize {
    let mut st = Democratie::initial(cfg);
    let mut events = Vec::with_capacity(8);
    Democratie::open(&mut st, rng, &mut events).unwrap();
    let mut count = events.len();
    let mut moves = Vec::with_capacity(16);
    while let Some(seat) = Democratie::to_act(&st).first() {
        moves.clear();
        Democratie::legal_actions_into(&st, seat, &mut moves);
        let a = &moves[rng.index(moves.len())];
        events.clear();
        Democratie::play(&mut st, seat, a, rng, &mut events).unwrap();
        count += events.len();
    }
    black_box(&st);
    count
}

/// The same match applied with `decide` and then `evolve` of every event, which re-checks each
/// event against the state as a replay of stored events does.
fn decider_match_checked(cfg: &Config, rng: &mut Rng) -> usize {
    let mut st = Democratie::initial(cfg);
    let mut count = 0;
    for e in Democratie::start(&st, rng).unwrap() {
        Democratie::evolve(&mut st, &e).unwrap();
        count += 1;
    }
    while let Some(seat) = Democratie::to_act(&st).first() {
        let moves = Democratie::legal_actions(&st, seat);
        let a = &moves[rng.index(moves.len())];
        for e in Democratie::decide(&st, seat, a, rng).unwrap() {
            Democratie::evolve(&mut st, &e).unwrap();
            count += 1;
        }
    }
    black_box(&st);
    count
}

/// The figure that counts: full random matches per CPU-second through the decider, the median
/// of 7 runs of 1,000 matches.
fn decider_figure() {
    for (path, run) in [
        ("play", decider_match as fn(&Config, &mut Rng) -> usize),
        ("decide+evolve", decider_match_checked),
    ] {
        for n in [2u32, 3, 4, 5, 6] {
            let cfg = Democratie::checked_config(n, &Options::new()).unwrap();
            let mut rng = Rng::from_u64(1234 + n as u64);
            let mut events = 0usize;
            let figure = common::per_cpu_second(7, || {
                for _ in 0..1_000 {
                    events += run(&cfg, &mut rng);
                }
                1_000
            });
            let Some((median, low, high)) = figure else {
                return;
            };
            println!(
                "FIGURE democratie decider {path} n={n}: {median:.0} matches per CPU-second (median of 7 runs, {low:.0} to {high:.0}; {:.2} us per match), {:.1} events per match",
                1e6 / median,
                events as f64 / 7_000.0
            );
        }
    }
}
