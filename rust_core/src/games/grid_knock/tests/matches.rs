//! Whole matches: bots, the turn-cap-free end of random matches, the registry.

use super::*;

#[test]
fn greedy_bot_beats_random_bot() {
    let cfg = GridKnock::checked_config(2, &Options::new()).unwrap();
    let mut greedy_wins = 0;
    let games = 60;
    for seed in 0..games {
        let mut st = GridKnock::initial(&cfg);
        let mut r = Rng::from_u64(seed);
        let mut evs = vec![];
        gk::auto_steps(&mut st, &mut r, &mut evs).unwrap();
        let greedy_seat = (seed % 2) as u32;
        while GridKnock::outcome(&st).is_none() {
            let seat = GridKnock::to_act(&st).first().unwrap();
            let bot = if seat == greedy_seat {
                "greedy"
            } else {
                "random"
            };
            let a = GridKnock::bot_action(&st, seat, bot, &mut r).unwrap();
            for e in GridKnock::decide(&st, seat, &a, &mut r).unwrap() {
                GridKnock::evolve(&mut st, &e).unwrap();
            }
        }
        if GridKnock::outcome(&st)
            .unwrap()
            .winners
            .contains(&greedy_seat)
        {
            greedy_wins += 1;
        }
    }
    assert!(
        greedy_wins * 10 >= games * 7,
        "greedy won {greedy_wins} of {games}"
    );
}

#[test]
fn random_matches_end_by_the_rules_not_by_the_cap() {
    for n in [2u32, 5, 8] {
        let cfg = GridKnock::checked_config(n, &Options::new()).unwrap();
        let (mut aborted, mut rounds) = (0, 0);
        for seed in 0..100 {
            let mut st = GridKnock::initial(&cfg);
            let mut r = Rng::from_u64(seed);
            let (mut evs, mut moves) = (vec![], vec![]);
            gk::auto_steps(&mut st, &mut r, &mut evs).unwrap();
            while GridKnock::outcome(&st).is_none() {
                let mask = gk::to_act_mask(&st);
                let seat = mask.trailing_zeros() as u8;
                gk::legal_moves(&st, seat, &mut moves);
                let mv = moves[r.index(moves.len())];
                gk::act(&mut st, seat, mv, &mut r, &mut evs).unwrap();
            }
            aborted += GridKnock::outcome(&st).unwrap().aborted as u32;
            rounds += st.round;
        }
        assert_eq!(aborted, 0, "{n} seats");
        assert!(rounds >= 100, "{n} seats: {rounds} rounds");
    }
}

#[test]
fn whole_match_through_the_registry_with_bots() {
    let g = crate::registry::find("grid_knock").unwrap();
    let info = g.info();
    assert_eq!(info.bots, vec!["random", "evaluator", "greedy"]);
    assert_eq!((info.min_players, info.max_players), (2, 8));
    let mut m = g.new_match(4, &Options::new()).unwrap();
    let seed = conformance::seed_bytes(77);
    let mut seq = 1u64;
    let mut log = vec![];
    for e in m.start(&mut Rng::for_command(&seed, seq)).unwrap() {
        m.apply(&e.payload).unwrap();
        log.push(e);
    }
    seq = log.len() as u64 + 1;
    let mut steps = 0;
    while m.outcome().is_none() {
        steps += 1;
        assert!(steps < 20_000);
        let seat = m.to_act()[0];
        let bot = if seat.is_multiple_of(2) {
            "greedy"
        } else {
            "random"
        };
        let a = m
            .bot_action(seat, bot, &mut Rng::for_command(&seed, seq))
            .unwrap();
        let evs = m
            .decide(seat, &a, &mut Rng::for_command(&seed, seq))
            .unwrap();
        for e in evs {
            for v in 0..4 {
                m.redact(&e.payload, Viewer::Seat(v))
                    .unwrap()
                    .expect("every event is at least a stub");
            }
            m.apply(&e.payload).unwrap();
            log.push(e);
            seq += 1;
        }
    }
    let o = m.outcome().unwrap();
    assert!(!o.aborted && !o.winners.is_empty() && o.lower_is_better);
    assert!(o.scores.iter().any(|&s| s >= 100));
    // Replay from the stored payloads gives the same state hash.
    let mut r = g.new_match(4, &Options::new()).unwrap();
    for e in &log {
        r.apply(&e.payload).unwrap();
    }
    assert_eq!(r.state_hash(), m.state_hash());
    assert!(m.render(Viewer::Spectator).unwrap().contains("Grid Knock"));
    assert!(
        m.bot_action(0, "greedy", &mut rng()).is_err(),
        "no bot move once over"
    );
}
