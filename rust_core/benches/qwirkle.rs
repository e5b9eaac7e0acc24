//! Qwirkle hot paths: legal-play enumeration (worst case, docs/rules/qwirkle.md TV33 position A, a corpus of
//! mid-game positions), one greedy self-play match, and `evolve` throughput.
//!
//! Run: cargo bench -p tablier-core --bench qwirkle -- --warm-up-time 1 --measurement-time 3

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tablier_core::game::{Game, Options};
use tablier_core::games::qwirkle::{count_plays, parse_type, Board, Phase, Qwirkle, State};
use tablier_core::proto::qwirkle as pb;
use tablier_core::rng::Rng;

const REDS: [&str; 6] = ["RC", "RX", "RD", "RS", "RE", "RL"];

fn board(tiles: &[(i32, i32, &str)]) -> Board {
    Board::from_types(
        &tiles
            .iter()
            .map(|&(x, y, c)| (x, y, parse_type(c).unwrap()))
            .collect::<Vec<_>>(),
    )
    .unwrap()
}

fn reds() -> u64 {
    REDS.iter()
        .fold(0u64, |m, c| m | 1 << parse_type(c).unwrap())
}

fn greedy_match(seats: u32, seed: u64, mut on_state: impl FnMut(&State)) -> Vec<pb::Event> {
    let cfg = Qwirkle::checked_config(seats, &Options::new()).unwrap();
    let mut st = Qwirkle::initial(&cfg);
    let mut rng = Rng::from_u64(seed);
    let mut events = Qwirkle::start(&st, &mut rng).unwrap();
    for e in &events {
        Qwirkle::evolve(&mut st, e).unwrap();
    }
    while Qwirkle::outcome(&st).is_none() {
        on_state(&st);
        let seat = st.current;
        let a = Qwirkle::bot_action(&st, seat, "greedy", &mut rng).unwrap();
        let evs = Qwirkle::decide(&st, seat, &a, &mut rng).unwrap();
        for e in &evs {
            Qwirkle::evolve(&mut st, e).unwrap();
        }
        events.extend(evs);
    }
    events
}

/// Mid-game positions (board, hand of the player to act) from seeded greedy 2-4 player matches.
fn corpus(n: usize) -> Vec<(Board, u64)> {
    let mut out = Vec::new();
    let mut seed = 0;
    while out.len() < n {
        let seats = 2 + (seed % 3) as u32;
        let mut turn = 0;
        greedy_match(seats, seed, |st| {
            turn += 1;
            if st.phase == Phase::Turn && turn % 3 == 0 && out.len() < n {
                out.push((st.board.clone(), st.hand_types(st.current)));
            }
        });
        seed += 1;
    }
    out
}

fn percentiles(mut v: Vec<f64>) -> String {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let p = |q: f64| v[((v.len() - 1) as f64 * q) as usize];
    format!(
        "p10 {:.2} us, median {:.2} us, p90 {:.2} us, p99 {:.2} us, max {:.2} us",
        p(0.1),
        p(0.5),
        p(0.9),
        p(0.99),
        p(1.0)
    )
}

/// Per-position medians (each position timed over many repetitions), printed once.
fn corpus_report(positions: &[(Board, u64)]) {
    let mut per = Vec::with_capacity(positions.len());
    let mut plays = Vec::with_capacity(positions.len());
    for (b, h) in positions {
        let reps = 50;
        let mut best = f64::MAX;
        let mut samples = Vec::with_capacity(5);
        for _ in 0..5 {
            let t = Instant::now();
            for _ in 0..reps {
                black_box(count_plays(black_box(b), black_box(*h)));
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
            best = best.min(us);
            samples.push(us);
        }
        samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
        per.push(samples[2]);
        let (c, _) = count_plays(b, *h);
        plays.push(c.iter().sum::<u32>() as f64);
    }
    println!(
        "corpus: {} mid-game positions; enumeration time per position: {}",
        positions.len(),
        percentiles(per)
    );
    plays.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "corpus: legal plays per position: median {}, mean {:.1}, max {}",
        plays[plays.len() / 2],
        plays.iter().sum::<f64>() / plays.len() as f64,
        plays[plays.len() - 1]
    );
}

fn benches(c: &mut Criterion) {
    let e = board(&[(0, 0, "RC")]);
    let a = board(&(0..6).map(|x| (x, 0, REDS[x as usize])).collect::<Vec<_>>());
    assert_eq!(count_plays(&e, reds()).0.iter().sum::<u32>(), 35860);
    assert_eq!(count_plays(&a, reds()).0.iter().sum::<u32>(), 33678);
    c.bench_function("enumerate_tv33_E_35860_plays", |b| {
        b.iter(|| count_plays(black_box(&e), black_box(reds())))
    });
    c.bench_function("enumerate_tv33_A_33678_plays", |b| {
        b.iter(|| count_plays(black_box(&a), black_box(reds())))
    });

    let positions = corpus(1200);
    corpus_report(&positions);
    let mut g = c.benchmark_group("corpus");
    g.throughput(Throughput::Elements(positions.len() as u64));
    g.bench_function("enumerate_1200_midgame_positions", |b| {
        b.iter(|| {
            let mut n = 0u32;
            for (bd, h) in &positions {
                n += count_plays(bd, *h).0[0];
            }
            n
        })
    });
    g.finish();

    let mut seed = 0u64;
    c.bench_function("greedy_2p_selfplay_match", |b| {
        b.iter(|| {
            seed += 1;
            greedy_match(2, seed, |_| {})
        })
    });

    let cfg = Qwirkle::checked_config(2, &Options::new()).unwrap();
    let logs: Vec<Vec<pb::Event>> = (0..20)
        .map(|s| greedy_match(2 + (s % 3) as u32, s, |_| {}))
        .collect();
    let configs: Vec<_> = (0..20u64)
        .map(|s| Qwirkle::checked_config(2 + (s % 3) as u32, &Options::new()).unwrap())
        .collect();
    let total: usize = logs.iter().map(|l| l.len()).sum();
    let _ = cfg;
    let mut g = c.benchmark_group("evolve");
    g.throughput(Throughput::Elements(total as u64));
    g.bench_function(format!("replay_20_matches_{total}_events"), |b| {
        b.iter(|| {
            for (log, cfg) in logs.iter().zip(&configs) {
                let mut st = Qwirkle::initial(cfg);
                for e in log {
                    Qwirkle::evolve(&mut st, e).unwrap();
                }
                black_box(&st);
            }
        })
    });
    g.finish();
}

criterion_group! {
    name = qwirkle;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = benches
}
criterion_main!(qwirkle);
