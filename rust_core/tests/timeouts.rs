//! Match clocks: every timeout policy of every game of the registry, for a seat that never
//! answers.
//!
//! Each game documents its policies in section 11 of its rules document and declares what is
//! played here in its folder's `testdata.rs` (`TestData::silent`, `forfeits`, `short`,
//! `forfeit_winners`): this file names no game. Checked: the state after each timeout is legal
//! (the events apply, the game's invariants hold, the match is over or awaits a seat with a
//! legal move), a timeout decided twice gives the same events (as `tablier verify` decides it
//! again), replay gives the live state, and the match reaches its end with one seat silent
//! throughout. Then the same through the registry, as the service drives it: `timeout:<seat>`
//! commands recorded after `seat_timed_out`, replayed from the stored kinds.

use tablier_core::clock;
use tablier_core::game::Options;
use tablier_core::registry::{self, games};
use tablier_core::rng::Rng;
use tablier_core::testdata::Opts;

fn opts(pairs: Opts) -> Options {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Every game's silent-seat matches (`TestData::silent`): for each seat count and each silent
/// seat (the first, the last), seeded matches played to their end under the policy.
#[test]
fn every_policy_keeps_the_match_going_to_its_end() {
    std::thread::scope(|scope| {
        for &game in games() {
            scope.spawn(move || {
                let id = game.id();
                let data = game.test_data();
                assert!(!data.silent.is_empty(), "{id} declares silent-seat matches");
                for case in data.silent {
                    let policy = case.policy;
                    let info = game.info();
                    let offered = info.options.iter().find(|o| o.name == clock::POLICY);
                    assert!(
                        offered.is_some_and(|o| o.allowed_values.iter().any(|v| v == policy)),
                        "{id} offers {policy}"
                    );
                    let options = opts(case.options);
                    let mut events = 0;
                    for &seats in case.seats {
                        for silent in [0, seats - 1] {
                            for seed in 0..case.matches {
                                let seed = 1000 * seats as u64 + seed;
                                match game.play_silent_seat(
                                    seats,
                                    &options,
                                    policy,
                                    silent,
                                    0,
                                    seed,
                                    case.max_steps,
                                ) {
                                    Ok((played, _)) => events += played,
                                    Err(e) => panic!(
                                        "{id} {policy}, {seats} seats, seat {silent} silent, seed {seed}: {e}"
                                    ),
                                }
                            }
                        }
                    }
                    assert!(events > 0, "{id} {policy} {:?}: no events", case.options);
                }
            });
        }
    });
}

/// Through the registry with a clock: seat 0 never answers and times out each time it is
/// awaited; the others play their bots. Every stored event is replayed into a fresh match from
/// its stored kind, and each timeout decided again from the same stream gives the same events.
fn registry_match(game: &str, policy: &str, seats: u32, extra: Opts, seed: u64) -> usize {
    let g = registry::find(game).unwrap();
    let mut options = opts(extra);
    options.insert(clock::MOVE.into(), "5".into());
    options.insert(clock::POLICY.into(), policy.into());
    let mut m = g.new_match(seats, &options).unwrap();
    let mut replay = g.new_match(seats, &options).unwrap();
    let seed32 = tablier_core::conformance::seed_bytes(seed);
    let mut seq = 1u64;
    let mut timeouts = 0;
    // Timeouts of the silent seat with no other seat's move between them: a policy plays the
    // seat's whole turn, so a clock never leaves it half played and never runs out twice in one
    // turn.
    let mut in_a_row = 0;
    let mut apply =
        |m: &mut Box<dyn registry::DynMatch>, evs: Vec<registry::EncodedEvent>, seq: &mut u64| {
            for e in evs {
                let kind = registry::is_generic_kind(Some(e.kind)).then_some(e.kind);
                m.apply_stored(kind, &e.payload).unwrap();
                replay.apply_stored(kind, &e.payload).unwrap();
                *seq += 1;
            }
        };
    let opening = m.start(&mut Rng::for_command(&seed32, seq)).unwrap();
    apply(&mut m, opening, &mut seq);
    for _ in 0..200_000 {
        if m.outcome().is_some() {
            break;
        }
        let awaited = m.to_act();
        let evs = if awaited.contains(&0) {
            timeouts += 1;
            in_a_row += 1;
            assert!(
                in_a_row == 1,
                "{game} {policy} seed {seed}: seat 0 timed out again within its turn"
            );
            let evs = m
                .host_command("timeout:0", &mut Rng::for_command(&seed32, seq))
                .unwrap();
            assert_eq!(
                evs,
                m.host_command("timeout:0", &mut Rng::for_command(&seed32, seq))
                    .unwrap()
            );
            assert_eq!(evs[0].kind, clock::SEAT_TIMED_OUT);
            assert!(evs.len() > 1, "the policy's events follow seat_timed_out");
            evs
        } else {
            in_a_row = 0;
            let seat = awaited[0];
            let bots = g.info().bots;
            let action = m
                .bot_action(seat, bots.last().unwrap(), &mut Rng::from_u64(seq))
                .unwrap();
            m.decide(seat, &action, &mut Rng::for_command(&seed32, seq))
                .unwrap()
        };
        apply(&mut m, evs, &mut seq);
    }
    let outcome = m
        .outcome()
        .unwrap_or_else(|| panic!("{game} {policy}: no end"));
    assert_eq!(
        replay.state_hash(),
        m.state_hash(),
        "{game} {policy}: replay differs"
    );
    assert_eq!(replay.outcome(), Some(outcome));
    assert!(timeouts > 0);
    timeouts
}

#[test]
fn every_policy_through_the_registry_reaches_the_end() {
    for g in registry::games() {
        let info = g.info();
        let option = info
            .options
            .iter()
            .find(|o| o.name == clock::POLICY)
            .unwrap();
        assert!(
            option.allowed_values.len() >= 2,
            "{} offers a policy besides bot",
            g.id()
        );
        let extra = g.test_data().short;
        for policy in &option.allowed_values {
            assert!(
                policy == "bot" || option.description.contains(&format!("{policy}:")),
                "{policy} described"
            );
            for seats in [info.min_players, info.max_players.min(4)] {
                for seed in 0..3 {
                    registry_match(g.id(), policy, seats, extra, seed);
                }
            }
        }
    }
}

/// `forfeit`: the first timeout ends the match (reason FORFEIT); the silent seat is not among
/// the winners, who are the game's `TestData::forfeit_winners` by its scoring as it stands.
#[test]
fn forfeit_ends_the_match_for_the_best_of_the_others() {
    std::thread::scope(|scope| {
        for &game in games() {
            scope.spawn(move || {
                let id = game.id();
                let data = game.test_data();
                assert!(!data.forfeits.is_empty(), "{id} declares forfeited matches");
                for case in data.forfeits {
                    let options = opts(case.options);
                    let mut forfeited = 0;
                    for &seats in case.seats {
                        for silent in [0, seats - 1] {
                            for seed in 0..20 {
                                let (_, outcome) = game
                                    .play_silent_seat(
                                        seats,
                                        &options,
                                        "forfeit",
                                        silent,
                                        case.answers,
                                        7000 + seed,
                                        100_000,
                                    )
                                    .unwrap_or_else(|e| {
                                        panic!(
                                            "{id} forfeit, {seats} seats, seat {silent}, seed {seed}: {e}"
                                        )
                                    });
                                let outcome = outcome.unwrap();
                                if outcome.reason != "FORFEIT" {
                                    continue; // the match ended before the silent seat's first wait
                                }
                                assert!(
                                    !outcome.aborted && !outcome.winners.is_empty(),
                                    "{outcome:?}"
                                );
                                assert!(!outcome.winners.contains(&silent), "{id} {outcome:?}");
                                assert_eq!(
                                    outcome.winners,
                                    data.forfeit_winners.of(&outcome.scores, silent),
                                    "{id} {outcome:?}"
                                );
                                forfeited += 1;
                            }
                        }
                    }
                    assert!(forfeited > 0, "{id}: no match forfeited with {:?}", case.options);
                }
            });
        }
    });
}
