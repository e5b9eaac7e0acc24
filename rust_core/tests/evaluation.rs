//! The evaluator of every game with rollouts, through the registry: the same seed gives the
//! same values whatever the thread count, every value carries its sample count and standard
//! error, settings out of range and undecodable positions are refused with a reason.

use prost::Message;
use tablier_core::error::CoreError;
use tablier_core::game::Viewer;
use tablier_core::proto::RolloutSettings;
use tablier_core::registry::{self, DynMatch};
use tablier_core::rng::Rng;

/// A seeded match of the strongest bots, played until `seat` has at least two moves after
/// `skip` decisions: its position then.
pub fn mid_game_position(id: &str, seats: u32, seed: u8, skip: usize) -> (Box<dyn DynMatch>, u32) {
    let game = registry::find(id).unwrap();
    let info = game.info();
    let bot = info.bots.last().unwrap().clone();
    let mut m = game.new_match(seats, &Default::default()).unwrap();
    let seed = [seed; 32];
    let mut seq = 0u64;
    for e in m.start(&mut Rng::for_command(&seed, 1)).unwrap() {
        m.apply(&e.payload).unwrap();
        seq += 1;
    }
    let mut decisions = 0;
    loop {
        assert!(m.outcome().is_none(), "{id}: the match ended first");
        let s = m.to_act()[0];
        if decisions >= skip && m.legal_actions(s).unwrap().len() >= 2 {
            return (m, s);
        }
        let action = m
            .bot_action(s, &bot, &mut Rng::for_command(&seed, seq + 1))
            .unwrap();
        for e in m
            .decide(s, &action, &mut Rng::for_command(&seed, seq + 1))
            .unwrap()
        {
            m.apply(&e.payload).unwrap();
            seq += 1;
        }
        decisions += 1;
    }
}

fn settings(rollouts: u32, seed: u64, threads: u32) -> Vec<u8> {
    RolloutSettings {
        rollouts,
        time_budget_ms: 0,
        seed,
        threads,
    }
    .encode_to_vec()
}

fn rollout_games() -> Vec<&'static str> {
    registry::games()
        .iter()
        .filter(|g| g.info().bots.iter().any(|b| b == "evaluator"))
        .map(|g| g.id())
        .collect()
}

#[test]
fn the_same_seed_gives_the_same_values_whatever_the_threads() {
    let games = rollout_games();
    assert!(!games.is_empty());
    for id in games {
        let game = registry::find(id).unwrap();
        let (m, seat) = mid_game_position(id, 2, 5, 12);
        let pos = m.position(Viewer::Seat(seat), seat).unwrap();
        let one = game.evaluate_with(&pos, &settings(24, 9, 1)).unwrap();
        let again = game.evaluate_with(&pos, &settings(24, 9, 1)).unwrap();
        let two = game.evaluate_with(&pos, &settings(24, 9, 2)).unwrap();
        let other = game.evaluate_with(&pos, &settings(24, 10, 1)).unwrap();
        assert_eq!(one, again, "{id}");
        assert_eq!(one, two, "{id}: two threads");
        assert_ne!(one, other, "{id}: another seed, other deals");
        // Without settings, the immediate evaluation, the same as `evaluate`.
        assert_eq!(
            game.evaluate_with(&pos, &[]).unwrap(),
            game.evaluate(&pos).unwrap(),
            "{id}"
        );
    }
}

#[test]
fn settings_out_of_range_and_bad_positions_are_refused_with_a_reason() {
    for id in rollout_games() {
        let game = registry::find(id).unwrap();
        let (m, seat) = mid_game_position(id, 2, 6, 4);
        let pos = m.position(Viewer::Seat(seat), seat).unwrap();
        for bad in [
            RolloutSettings {
                rollouts: 100_001,
                ..Default::default()
            },
            RolloutSettings {
                time_budget_ms: 60_001,
                ..Default::default()
            },
        ] {
            let err = game.evaluate_with(&pos, &bad.encode_to_vec()).unwrap_err();
            assert!(matches!(err, CoreError::Malformed(_)), "{id}: {err}");
        }
        let err = game.evaluate_with(&pos, &[0xff, 0xff]).unwrap_err();
        assert!(err.to_string().contains("rollout settings"), "{id}: {err}");
        for bytes in [&[0xffu8, 0xff, 0xff][..], &[], &pos[..pos.len() / 2]] {
            match game.evaluate(bytes) {
                Err(CoreError::Malformed(reason)) => assert!(!reason.is_empty()),
                other => panic!("{id}: {other:?}"),
            }
        }
    }
}
