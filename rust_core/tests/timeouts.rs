//! Match clocks: every timeout policy of every game, for a seat that never answers.
//!
//! Each game documents its policies in its rules (docs/rules/qwirkle.md §11,
//! docs/rules/rat_a_tat_cat.md §11, docs/rules/democratie.md §11, docs/rules/grid_knock.md §11,
//! docs/rules/carre.md §11). Checked here: the state after each timeout is legal (the events
//! apply, the game's invariants hold, the match is over or awaits a seat with a legal move), a
//! timeout decided twice gives the same events (as `tablier verify` decides it again), replay
//! gives the live state, and the match reaches its end with one seat silent throughout. Then
//! the same through the registry, as the service drives it: `timeout:<seat>` commands recorded
//! after `seat_timed_out`, replayed from the stored kinds.

use tablier_core::clock;
use tablier_core::conformance::play_silent_seat;
use tablier_core::game::{Game, Options};
use tablier_core::games::{
    carre::Carre, democratie::Democratie, grid_knock::GridKnock, qwirkle::Qwirkle,
    rat_a_tat_cat::RatATatCat,
};
use tablier_core::registry;
use tablier_core::rng::Rng;

fn opts(pairs: &[(&str, &str)]) -> Options {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Plays `matches` seeded matches for each seat count and each silent seat given.
fn silent_matches<G: Game>(
    policy: &str,
    seat_counts: &[u32],
    options: &Options,
    matches: u64,
    max_steps: u64,
) -> u64 {
    assert!(
        G::TIMEOUT_POLICIES.contains(&policy),
        "{} offers {policy}",
        G::ID
    );
    let mut events = 0;
    for &seats in seat_counts {
        for silent in [0, seats - 1] {
            for seed in 0..matches {
                match play_silent_seat::<G>(
                    seats,
                    options,
                    policy,
                    silent,
                    0,
                    1000 * seats as u64 + seed,
                    max_steps,
                ) {
                    Ok(played) => events += played.events.len() as u64,
                    Err(e) => panic!(
                        "{} {policy}, {seats} seats, seat {silent} silent, seed {seed}: {e}",
                        G::ID
                    ),
                }
            }
        }
    }
    events
}

#[test]
fn qwirkle_pass_keeps_the_match_going_to_its_end() {
    assert!(silent_matches::<Qwirkle>("pass", &[2, 3, 4], &Options::new(), 12, 5_000) > 0);
}

#[test]
fn qwirkle_pass_is_a_pass_even_with_tiles_in_the_bag() {
    use tablier_core::proto::qwirkle as pb;
    let config = Qwirkle::checked_config(2, &Options::new()).unwrap();
    let mut state = Qwirkle::initial(&config);
    for e in Qwirkle::start(&state, &mut Rng::from_u64(3)).unwrap() {
        Qwirkle::evolve(&mut state, &e).unwrap();
    }
    // The opening play cannot be passed: the first listed opening is made (R9).
    let seat = Qwirkle::to_act(&state).first().unwrap();
    let opening = Qwirkle::timeout_events(&state, seat, "pass", &mut Rng::from_u64(4)).unwrap();
    let first = Qwirkle::legal_actions(&state, seat).remove(0);
    assert_eq!(
        opening,
        Qwirkle::decide(&state, seat, &first, &mut Rng::from_u64(4)).unwrap()
    );
    for e in &opening {
        Qwirkle::evolve(&mut state, e).unwrap();
    }
    // After it the next seat, with tiles in the bag, passes: nothing else changes.
    let next = Qwirkle::to_act(&state).first().unwrap();
    assert_ne!(next, seat);
    let before = Qwirkle::view(&state, tablier_core::game::Viewer::Auditor);
    let passed = Qwirkle::timeout_events(&state, next, "pass", &mut Rng::from_u64(5)).unwrap();
    assert!(
        matches!(passed[..], [pb::Event { kind: Some(pb::event::Kind::Passed(pb::Passed { seat: s })) }] if s == next)
    );
    Qwirkle::evolve(&mut state, &passed[0]).unwrap();
    let after = Qwirkle::view(&state, tablier_core::game::Viewer::Auditor);
    assert!(before.bag_count > 0);
    assert_eq!(
        (after.bag_tile_ids, after.board),
        (before.bag_tile_ids, before.board)
    );
    assert_eq!(
        after.turns_without_placement,
        before.turns_without_placement + 1
    );
    assert_eq!(Qwirkle::to_act(&state).first(), Some(seat));
    // Only the awaited seat times out, and only with a policy the game offers.
    assert!(Qwirkle::timeout_events(&state, next, "pass", &mut Rng::from_u64(5)).is_err());
    assert!(Qwirkle::timeout_events(&state, seat, "resign", &mut Rng::from_u64(5)).is_err());
}

#[test]
fn rat_a_tat_cat_draw_and_discard_completes_turns_to_the_end() {
    let formats = [
        opts(&[]),
        opts(&[("match_mode", "fixed_rounds"), ("rounds", "2")]),
        opts(&[("match_mode", "elimination"), ("point_limit", "60")]),
    ];
    for o in &formats {
        assert!(silent_matches::<RatATatCat>("draw_and_discard", &[2, 4], o, 6, 200_000) > 0);
    }
}

#[test]
fn democratie_weakest_card_commits_to_the_end() {
    assert!(
        silent_matches::<Democratie>(
            "weakest_card",
            &[2, 3, 6],
            &opts(&[("target", "3")]),
            8,
            50_000
        ) > 0
    );
    let weakest = tablier_core::games::democratie::weakest_card;
    // A 6 (strength 1) before anything stronger; among equal strength the fewer points.
    let hand = (1u64 << 0) | (1u64 << 11) | (1u64 << 23);
    let c = weakest(hand).unwrap();
    assert_eq!(tablier_core::games::democratie::strength(c), 1);
    assert_eq!(weakest(0), None);
}

#[test]
fn grid_knock_default_move_plays_to_the_end() {
    for o in [opts(&[("target_score", "60")]), opts(&[])] {
        assert!(silent_matches::<GridKnock>("default_move", &[2, 3, 5], &o, 6, 20_000) > 0);
    }
}

#[test]
fn carre_discard_plays_to_the_end() {
    assert!(silent_matches::<Carre>("discard", &[2], &Options::new(), 30, 2_000) > 0);
    assert!(
        silent_matches::<Carre>(
            "discard",
            &[2],
            &opts(&[("tiebreak_extra_rounds", "true")]),
            10,
            4_000
        ) > 0
    );
}

/// Through the registry with a clock: seat 0 never answers and times out each time it is
/// awaited; the others play their bots. Every stored event is replayed into a fresh match from
/// its stored kind, and each timeout decided again from the same stream gives the same events.
fn registry_match(
    game: &str,
    policy: &str,
    seats: u32,
    extra: &[(&str, &str)],
    seed: u64,
) -> usize {
    let g = registry::find(game).unwrap();
    let mut options = opts(extra);
    options.insert(clock::MOVE.into(), "5".into());
    options.insert(clock::POLICY.into(), policy.into());
    let mut m = g.new_match(seats, &options).unwrap();
    let mut replay = g.new_match(seats, &options).unwrap();
    let seed32 = tablier_core::conformance::seed_bytes(seed);
    let mut seq = 1u64;
    let mut timeouts = 0;
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
    let short: &[(&str, &[(&str, &str)])] = &[
        ("qwirkle", &[]),
        (
            "rat_a_tat_cat",
            &[("match_mode", "fixed_rounds"), ("rounds", "1")],
        ),
        ("democratie", &[("target", "1")]),
        ("grid_knock", &[("target_score", "1")]),
        ("carre", &[("rounds_per_match", "1")]),
    ];
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
        let extra = short.iter().find(|(id, _)| *id == g.id()).unwrap().1;
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
/// the winners, who are the best of the others by the game's scoring as it stands.
fn forfeits<G: Game>(
    seat_counts: &[u32],
    options: &Options,
    answers: u64,
    best: impl Fn(&[i64], u32) -> Vec<u32>,
) -> u32 {
    let mut forfeited = 0;
    for &seats in seat_counts {
        for silent in [0, seats - 1] {
            for seed in 0..20 {
                let played = play_silent_seat::<G>(
                    seats,
                    options,
                    "forfeit",
                    silent,
                    answers,
                    7000 + seed,
                    100_000,
                )
                .unwrap_or_else(|e| {
                    panic!(
                        "{} forfeit, {seats} seats, seat {silent}, seed {seed}: {e}",
                        G::ID
                    )
                });
                let outcome = G::outcome(&played.state).unwrap();
                if outcome.reason != "FORFEIT" {
                    continue; // the match ended before the silent seat's first wait
                }
                assert!(
                    !outcome.aborted && !outcome.winners.is_empty(),
                    "{outcome:?}"
                );
                assert!(!outcome.winners.contains(&silent), "{} {outcome:?}", G::ID);
                assert_eq!(
                    outcome.winners,
                    best(&outcome.scores, silent),
                    "{} {outcome:?}",
                    G::ID
                );
                forfeited += 1;
            }
        }
    }
    forfeited
}

/// The seats other than `silent` with the best score (`lower` is better or not).
fn best_others(scores: &[i64], silent: u32, lower: bool) -> Vec<u32> {
    let others = (0..scores.len() as u32).filter(|&s| s != silent);
    let key = |s: u32| {
        if lower {
            -scores[s as usize]
        } else {
            scores[s as usize]
        }
    };
    let top = others.clone().map(key).max().unwrap();
    others.filter(|&s| key(s) == top).collect()
}

#[test]
fn rat_a_tat_cat_forfeit_ends_the_match_for_the_lowest_other_total() {
    let lower = |s: &[i64], f| best_others(s, f, true);
    assert!(forfeits::<RatATatCat>(&[2, 3, 6], &Options::new(), 0, lower) > 0);
    // A seat that stops answering later, once rounds were scored: the totals decide.
    let o = opts(&[("match_mode", "fixed_rounds"), ("rounds", "6")]);
    assert!(forfeits::<RatATatCat>(&[2, 4], &o, 12, lower) > 0);
}

#[test]
fn democratie_forfeit_ends_the_match_for_the_highest_other_tribes() {
    let higher = |s: &[i64], f| best_others(s, f, false);
    assert!(forfeits::<Democratie>(&[2, 3, 6], &Options::new(), 0, higher) > 0);
    assert!(forfeits::<Democratie>(&[3, 4], &opts(&[("target", "9")]), 60, higher) > 0);
}

#[test]
fn carre_forfeit_ends_the_match_for_the_other_seat() {
    assert!(forfeits::<Carre>(&[2], &Options::new(), 0, |_, f| vec![1 - f]) > 0);
    assert!(forfeits::<Carre>(&[2], &Options::new(), 70, |_, f| vec![1 - f]) > 0);
}

#[test]
fn qwirkle_forfeit_ends_the_match_for_the_highest_other_score() {
    let higher = |s: &[i64], f| best_others(s, f, false);
    assert!(forfeits::<Qwirkle>(&[2, 3, 4], &Options::new(), 0, higher) > 0);
    assert!(forfeits::<Qwirkle>(&[2, 4], &Options::new(), 8, higher) > 0);
}

#[test]
fn grid_knock_forfeit_ends_the_match_for_the_lowest_other_total() {
    let lower = |s: &[i64], f| best_others(s, f, true);
    assert!(forfeits::<GridKnock>(&[2, 3, 5], &Options::new(), 0, lower) > 0);
    assert!(forfeits::<GridKnock>(&[3], &opts(&[("target_score", "300")]), 60, lower) > 0);
}
