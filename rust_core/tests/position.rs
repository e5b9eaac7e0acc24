//! `position`: the evaluator's input that a seat faces, through the registry, for every game.
//! A game with an evaluator gives every seat its position in every state of seeded bot
//! matches, the evaluator accepts it, and only that seat or the auditor may have it; a game
//! without one says so. Qwirkle's position is exactly what the seat's own view shows.

use prost::Message;
use tablier_core::error::CoreError;
use tablier_core::game::Viewer;
use tablier_core::proto::qwirkle as pb;
use tablier_core::registry::{self, DynMatch};
use tablier_core::rng::Rng;

fn reason<T>(r: Result<T, CoreError>) -> &'static str {
    match r {
        Err(CoreError::Rule { reason, .. }) => reason,
        Err(e) => panic!("expected a rule refusal, got {e}"),
        Ok(_) => panic!("expected a refusal"),
    }
}

/// Each state of a seeded bot match with `seats` seats, from the opened match to its end.
fn for_each_state(id: &str, seats: u32, seed: u8, mut check: impl FnMut(&dyn DynMatch)) {
    let game = registry::find(id).unwrap();
    let info = game.info();
    let bot = info.bots.last().unwrap();
    let mut m = game.new_match(seats, &Default::default()).unwrap();
    let seed = [seed; 32];
    let mut seq = 0u64;
    for e in m.start(&mut Rng::for_command(&seed, 1)).unwrap() {
        m.apply(&e.payload).unwrap();
        seq += 1;
    }
    let mut moves = 0;
    while m.outcome().is_none() && moves < 300 {
        check(m.as_ref());
        let s = m.to_act()[0];
        let action = m
            .bot_action(s, bot, &mut Rng::for_command(&seed, seq + 1))
            .unwrap();
        for e in m
            .decide(s, &action, &mut Rng::for_command(&seed, seq + 1))
            .unwrap()
        {
            m.apply(&e.payload).unwrap();
            seq += 1;
        }
        moves += 1;
    }
    check(m.as_ref());
}

#[test]
fn every_evaluator_game_gives_each_seat_a_position_it_accepts_and_nobody_else() {
    let mut evaluated = 0;
    let quick = tablier_core::proto::RolloutSettings {
        rollouts: 1,
        time_budget_ms: 1,
        ..Default::default()
    }
    .encode_to_vec();
    for game in registry::games() {
        let info = game.info();
        if info.position_type.is_empty() {
            let m = game
                .new_match(info.min_players, &Default::default())
                .unwrap();
            assert!(
                matches!(
                    m.position(Viewer::Auditor, 0),
                    Err(CoreError::Unsupported(_))
                ),
                "{}",
                info.id
            );
            continue;
        }
        for seats in [info.min_players, info.max_players] {
            for_each_state(&info.id, seats, 3 + seats as u8, |m| {
                for s in 0..seats {
                    let own = m.position(Viewer::Seat(s), s).unwrap();
                    if let Err(e) = game.evaluate(&own) {
                        panic!(
                            "{} seat {s}: the evaluator refuses its position: {e}",
                            info.id
                        );
                    }
                    // Rollouts accept it too (a playout or two: the budget is 1 ms).
                    if info.bots.iter().any(|b| b == "evaluator") {
                        if let Err(e) = game.evaluate_with(&own, &quick) {
                            panic!("{} seat {s}: rollouts refuse its position: {e}", info.id);
                        }
                    }
                    assert_eq!(
                        m.position(Viewer::Auditor, s).unwrap(),
                        own,
                        "the auditor gets the seat's own"
                    );
                    assert_eq!(
                        reason(m.position(Viewer::Spectator, s)),
                        "POSITION_NOT_VISIBLE"
                    );
                    assert_eq!(
                        reason(m.position(Viewer::Seat((s + 1) % seats), s)),
                        "POSITION_NOT_VISIBLE"
                    );
                    evaluated += 1;
                }
                assert!(matches!(
                    m.position(Viewer::Auditor, seats),
                    Err(CoreError::Malformed(_))
                ));
                assert!(matches!(
                    m.position(Viewer::Seat(seats), 0),
                    Err(CoreError::Malformed(_))
                ));
            });
        }
    }
    assert!(evaluated > 200, "{evaluated} positions evaluated");
}

#[test]
fn a_qwirkle_position_is_what_the_seats_view_shows() {
    let mut non_empty = 0;
    for_each_state("qwirkle", 3, 11, |m| {
        for s in 0..3 {
            let view = pb::View::decode(m.view(Viewer::Seat(s)).unwrap().as_slice()).unwrap();
            let pos =
                pb::Position::decode(m.position(Viewer::Seat(s), s).unwrap().as_slice()).unwrap();
            let own = &view.seats[s as usize];
            assert!(own.hand_visible);
            assert_eq!(pos.hand_types, own.hand_tile_types);
            assert_eq!(pos.board, view.board);
            assert_eq!(pos.bag_empty, view.bag_count == 0);
            non_empty += usize::from(!pos.hand_types.is_empty() && !pos.board.is_empty());
        }
    });
    assert!(non_empty > 20);
}
