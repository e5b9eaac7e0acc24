//! Whole matches: the bots, and the fast simulation against the decider.

use super::*;

#[test]
fn bots_play_legal_moves_and_tactician_beats_random() {
    let mut wins = 0;
    let games = 150;
    for seed in 0..games {
        let mut st = started(3, seed);
        let mut rng = Rng::from_u64(seed);
        while Democratie::outcome(&st).is_none() {
            let seat = Democratie::to_act(&st).first().unwrap();
            let bot = if seat == 0 { "tactician" } else { "random" };
            let a = Democratie::bot_action(&st, seat, bot, &mut rng).unwrap();
            assert!(Democratie::legal_actions(&st, seat).contains(&a));
            let evs = Democratie::decide(&st, seat, &a, &mut rng).unwrap();
            apply_all(&mut st, &evs);
        }
        if Democratie::outcome(&st).unwrap().winners == vec![0] {
            wins += 1;
        }
    }
    eprintln!("tactician won {wins} of {games} three-player matches against two random bots");
    // Random play would win about a third of the matches.
    assert!(wins * 100 / games > 50, "tactician won {wins} of {games}");
    assert!(Democratie::bot_action(&started(3, 1), 0, "nope", &mut Rng::from_u64(0)).is_err());
}

#[test]
fn batched_indices_are_uniform_and_shuffle_is_a_permutation() {
    let mut rng = Rng::from_u64(3);
    let mut counts = [[0u32; 7]; 3];
    let bounds = [3u8, 5, 7];
    let draws = 70_000;
    for _ in 0..draws {
        let mut out = [0u8; 3];
        batched_indices(&mut rng, &bounds, &mut out);
        for k in 0..3 {
            assert!(out[k] < bounds[k]);
            counts[k][out[k] as usize] += 1;
        }
    }
    for k in 0..3 {
        let expect = draws as f64 / bounds[k] as f64;
        for v in 0..bounds[k] as usize {
            assert!(
                (counts[k][v] as f64 - expect).abs() < expect * 0.05,
                "{counts:?}"
            );
        }
    }
    // Where the first card lands after a shuffle is uniform too.
    let mut pos = [0u32; 48];
    for _ in 0..24_000 {
        let mut deck: Vec<u8> = (0..48).collect();
        ShufflePlan::new(48).shuffle(&mut rng, &mut deck);
        let mut sorted = deck.clone();
        sorted.sort();
        assert_eq!(sorted, (0..48).collect::<Vec<u8>>());
        pos[deck.iter().position(|&c| c == 0).unwrap()] += 1;
    }
    assert!(pos.iter().all(|&p| p > 380 && p < 620), "{pos:?}");
}

#[test]
fn fast_simulation_agrees_with_the_decider_on_match_length() {
    // Same rules, two code paths: the mean number of deals of random matches must agree.
    let n = 3u32;
    let matches = 400;
    let mut rng = Rng::from_u64(5);
    let cfg = config(n);
    let fast: u32 = (0..matches)
        .map(|_| simulate_random_match(&cfg, &mut rng).1)
        .sum();
    let mut slow = 0u32;
    for seed in 0..matches as u64 {
        let mut st = started(n, seed);
        while Democratie::outcome(&st).is_none() {
            let seat = Democratie::to_act(&st).first().unwrap();
            let a = Democratie::bot_action(&st, seat, "random", &mut rng).unwrap();
            let evs = Democratie::decide(&st, seat, &a, &mut rng).unwrap();
            for e in &evs {
                Democratie::evolve(&mut st, e).unwrap();
            }
        }
        slow += st.deal_no;
    }
    let (f, s) = (fast as f64 / matches as f64, slow as f64 / matches as f64);
    assert!((f - s).abs() < 0.6, "fast {f} deals per match, decider {s}");
}

#[test]
fn fast_simulation_finishes() {
    let mut rng = Rng::from_u64(1);
    for n in 2..=6u8 {
        let cfg = Config {
            seats: n,
            target: 7,
            max_deals: 200,
        };
        for _ in 0..50 {
            let (w, deals) = simulate_random_match(&cfg, &mut rng);
            assert!(w.is_some() && deals >= 2);
        }
    }
}

/// The `weakest_card` timeout policy's card (§11): a 6 (strength 1) before anything
/// stronger; among equal strength the fewer points.
#[test]
fn timeout_weakest_card_is_the_weakest() {
    let hand = (1u64 << 0) | (1u64 << 11) | (1u64 << 23);
    let c = crate::games::democratie::weakest_card(hand).unwrap();
    assert_eq!(crate::games::democratie::strength(c), 1);
    assert_eq!(crate::games::democratie::weakest_card(0), None);
}
