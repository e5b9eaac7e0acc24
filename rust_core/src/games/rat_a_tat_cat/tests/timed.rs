//! Rat-a-Tat Cat's timed format, driven as the service drives it: the operator's host command
//! `stop_after_round` ends the match after the round in progress (spec 6.2.3).

use crate::error::CoreError;
use crate::game::{Game, Options, Viewer};
use crate::games::rat_a_tat_cat::RatATatCat;
use crate::proto::rat_a_tat_cat as pb;
use crate::registry;
use crate::rng::Rng;
use prost::Message;

type E = pb::event::Kind;

fn options(pairs: &[(&str, &str)]) -> Options {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn random_move(s: &<RatATatCat as Game>::State, rng: &mut Rng) -> Vec<pb::Event> {
    let awaited = RatATatCat::to_act(s);
    let seat = awaited
        .nth(rng.index(awaited.len()))
        .expect("a seat is awaited");
    let moves = RatATatCat::legal_actions(s, seat);
    let action = &moves[rng.index(moves.len())];
    RatATatCat::decide(s, seat, action, rng).expect("a listed move applies")
}

#[test]
fn timed_match_ends_after_the_round_in_progress_once_the_host_calls_time() {
    for seed in 0..40u64 {
        let seats = 2 + (seed % 5) as u32;
        let config =
            RatATatCat::checked_config(seats, &options(&[("match_mode", "timed")])).unwrap();
        let mut s = RatATatCat::initial(&config);
        let mut rng = Rng::from_u64(seed);
        let mut log = RatATatCat::start(&s, &mut rng).unwrap();
        for e in &log {
            RatATatCat::evolve(&mut s, e).unwrap();
        }
        // Play until `seed % 3 + 1` rounds were scored, so the stop comes in the middle of a match.
        let scored = |evs: &[pb::Event]| {
            evs.iter()
                .filter(|e| matches!(e.kind, Some(E::RoundScored(_))))
                .count()
        };
        while scored(&log) < (seed % 3 + 1) as usize {
            let evs = random_move(&s, &mut rng);
            for e in &evs {
                RatATatCat::evolve(&mut s, e).unwrap();
            }
            log.extend(evs);
            assert!(
                RatATatCat::outcome(&s).is_none(),
                "a timed match does not end by itself"
            );
        }
        let before = scored(&log);
        assert!(!RatATatCat::view(&s, Viewer::Spectator).stop_after_round);

        let stop = RatATatCat::host_command(&s, "stop_after_round", &mut rng).unwrap();
        assert_eq!(stop.len(), 1);
        assert!(matches!(stop[0].kind, Some(E::StopRequested(_))));
        // Public: every seat and spectators see the request unchanged.
        for v in (0..seats).map(Viewer::Seat).chain([Viewer::Spectator]) {
            assert_eq!(RatATatCat::redact(&stop[0], v).as_ref(), Some(&stop[0]));
        }
        RatATatCat::evolve(&mut s, &stop[0]).unwrap();
        log.extend(stop);
        assert!(RatATatCat::view(&s, Viewer::Seat(0)).stop_after_round);
        match RatATatCat::host_command(&s, "stop_after_round", &mut rng) {
            Err(CoreError::Rule {
                reason: "ALREADY_REQUESTED",
                ..
            }) => {}
            other => panic!("a second stop was not refused: {other:?}"),
        }

        while RatATatCat::outcome(&s).is_none() {
            let evs = random_move(&s, &mut rng);
            for e in &evs {
                RatATatCat::evolve(&mut s, e).unwrap();
            }
            log.extend(evs);
            assert!(
                scored(&log) <= before + 1,
                "more than the round in progress was played"
            );
        }
        assert_eq!(
            scored(&log),
            before + 1,
            "the round in progress is completed"
        );
        assert!(matches!(log.last().unwrap().kind, Some(E::MatchEnded(_))));
        let outcome = RatATatCat::outcome(&s).unwrap();
        assert_eq!(outcome.reason, "TIME_CALLED");
        assert!(!outcome.aborted && outcome.lower_is_better);
        let best = *outcome.scores.iter().min().unwrap();
        let lowest: Vec<u32> = (0..seats)
            .filter(|&p| outcome.scores[p as usize] == best)
            .collect();
        assert_eq!(outcome.winners, lowest, "lowest total wins, ties share");

        // Replay of the log, stop request included, gives the same state.
        let mut replayed = RatATatCat::initial(&config);
        for e in &log {
            RatATatCat::evolve(&mut replayed, e).unwrap();
        }
        assert_eq!(
            RatATatCat::view(&replayed, Viewer::Auditor).encode_to_vec(),
            RatATatCat::view(&s, Viewer::Auditor).encode_to_vec()
        );
    }
}

#[test]
fn host_commands_are_refused_where_they_do_not_apply() {
    let mut rng = Rng::from_u64(1);
    let rat = registry::find("rat_a_tat_cat").unwrap();
    assert_eq!(
        rat.info().host_commands,
        vec!["stop_after_round".to_string()]
    );

    let elimination = rat.new_match(3, &Options::new()).unwrap();
    match elimination.host_command("stop_after_round", &mut rng) {
        Err(CoreError::Rule {
            reason: "NOT_TIMED",
            ..
        }) => {}
        other => panic!("stop in an elimination match: {other:?}"),
    }
    match elimination.host_command("end_now", &mut rng) {
        Err(CoreError::Unsupported(_)) => {}
        other => panic!("unknown host command: {other:?}"),
    }
    // A stop request that does not fit is refused by replay too (a corrupt log).
    let mut s = RatATatCat::initial(&RatATatCat::checked_config(3, &Options::new()).unwrap());
    let stop = pb::Event {
        kind: Some(E::StopRequested(pb::StopRequested {})),
    };
    assert!(matches!(
        RatATatCat::evolve(&mut s, &stop),
        Err(CoreError::Corrupt(_))
    ));

    for game in registry::games()
        .iter()
        .filter(|g| g.id() != "rat_a_tat_cat")
    {
        let info = game.info();
        let m = game.new_match(info.min_players, &Options::new()).unwrap();
        assert!(
            matches!(
                m.host_command("stop_after_round", &mut rng),
                Err(CoreError::Unsupported(_))
            ),
            "{}",
            info.id
        );
    }
}
