//! Forks of every game of the registry ([`tablier_core::fork`]), names no game:
//!
//! * `every_game_forks_and_plays_on`: the fork harness (`conformance::forks`): at several
//!   decisions of seeded matches, a fork from every seat and from the auditor, each checked and
//!   played to its end with every conformance check, at every seat count.
//! * `a_seat_fork_never_depends_on_the_hidden_cards`: two parents that differ only in what the
//!   seat could not see give the seat the same request, and the same fork from the same seed.
//! * `a_seat_forks_hidden_cards_are_independent_of_the_parents`: over many forks, the other
//!   seats' hidden cards equal the parent's no more often than another deal consistent with the
//!   seat's knowledge.
//! * `rollouts_on_a_fork_agree_with_the_parents_position`: EvaluatePosition with rollouts on
//!   the fork's first position gives the very bytes it gives on the parent's Position.
//! * `a_fork_of_a_fork_replays` and `forks_are_refused_in_words`.

use prost::Message;
use tablier_core::fork::{self, ForkedAs, FORKED};
use tablier_core::game::{Options, Viewer};
use tablier_core::proto::RolloutSettings;
use tablier_core::registry::{games, DynGame, DynMatch};
use tablier_core::rng::Rng;

fn short(game: &dyn DynGame) -> Options {
    game.test_data()
        .short
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A match played by the game's cheap strongest bot: its events (kind, payload) and, after
/// each command, (seq, the match then).
struct Parent {
    events: Vec<(String, Vec<u8>)>,
    points: Vec<(u64, Box<dyn DynMatch>)>,
}

fn play(game: &dyn DynGame, seats: u32, options: &Options, seed: u64) -> Parent {
    let info = game.info();
    let bot = info.bots.last().cloned().unwrap_or_else(|| "random".into());
    let mut m = game.new_match(seats, options).expect("a match");
    let seed32 = tablier_core::conformance::seed_bytes(seed);
    let mut events: Vec<(String, Vec<u8>)> = Vec::new();
    let mut points = Vec::new();
    let opening = m.start(&mut Rng::for_command(&seed32, 1)).expect("opens");
    for e in opening {
        m.apply(&e.payload).expect("applies");
        events.push((e.kind.to_string(), e.payload));
    }
    for step in 0..100_000u64 {
        if m.outcome().is_some() {
            break;
        }
        points.push((events.len() as u64, m.clone_box()));
        let seat = m.to_act()[0];
        let seq = events.len() as u64 + 1;
        let action = m
            .bot_action(seat, &bot, &mut Rng::from_u64(seed ^ step))
            .expect("a bot move");
        let decided = m
            .decide(seat, &action, &mut Rng::for_command(&seed32, seq))
            .expect("decided");
        for e in decided {
            m.apply(&e.payload).expect("applies");
            events.push((e.kind.to_string(), e.payload));
        }
    }
    Parent { events, points }
}

fn seat_request(parent: &dyn DynMatch, at: u64, seat: u32) -> Vec<u8> {
    let position = parent.position(Viewer::Auditor, seat).expect("a position");
    fork::request(
        "parent",
        at,
        &[7; 32],
        ForkedAs::Seat(seat),
        position,
        Vec::new(),
    )
    .encode_to_vec()
}

/// The fork decided and applied to a new match of the same table.
fn forked(
    game: &dyn DynGame,
    seats: u32,
    options: &Options,
    request: &[u8],
    seed: u64,
) -> Box<dyn DynMatch> {
    let mut m = game.new_match(seats, options).expect("a match");
    let seed32 = tablier_core::conformance::seed_bytes(seed);
    let events = m
        .fork(request, &mut Rng::for_command(&seed32, 1))
        .expect("forks");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].kind, FORKED);
    m.apply_stored(Some(FORKED), &events[0].payload)
        .expect("the opening replays");
    m
}

#[test]
fn every_game_forks_and_plays_on() {
    std::thread::scope(|scope| {
        for game in games() {
            scope.spawn(move || {
                let info = game.info();
                for seats in info.min_players..=info.max_players {
                    let report = game.fork_conformance(seats, &short(*game), 4, 1, 3);
                    assert!(
                        report.violations.is_empty(),
                        "{} with {seats} seats: {:#?}",
                        info.id,
                        report.violations
                    );
                    assert!(report.steps > 0, "{}: no fork was played", info.id);
                }
            });
        }
    });
}

#[test]
fn a_seat_fork_never_depends_on_the_hidden_cards() {
    for game in games() {
        let info = game.info();
        let options = short(*game);
        let seats = info.min_players;
        let parent = play(*game, seats, &options, 3);
        let (at, p) = &parent.points[parent.points.len() / 2];
        for seat in 0..seats {
            let request = seat_request(p.as_ref(), *at, seat);
            // Another table the seat cannot tell from the parent's: its own fork.
            let other = forked(*game, seats, &options, &request, 99);
            assert_eq!(
                seat_request(other.as_ref(), *at, seat),
                request,
                "{}: seat {seat}'s knowledge changed",
                info.id
            );
            // The request holds the seat's position alone: the same from both, and the same
            // fork from the same seed, whatever the parent's hidden cards were.
            let a = forked(*game, seats, &options, &request, 5);
            let b = forked(
                *game,
                seats,
                &options,
                &seat_request(other.as_ref(), *at, seat),
                5,
            );
            assert_eq!(a.state_hash(), b.state_hash(), "{}", info.id);
        }
    }
}

#[test]
fn a_seat_forks_hidden_cards_are_independent_of_the_parents() {
    const FORKS: u64 = 300;
    for game in games() {
        let info = game.info();
        let options = short(*game);
        let seats = info.min_players;
        let parent = play(*game, seats, &options, 11);
        // Late in the match: few cards hidden, so equal hands are not rare.
        let (at, p) = &parent.points[parent.points.len() * 3 / 4];
        let (seat, other) = (0u32, 1u32);
        let request = seat_request(p.as_ref(), *at, seat);
        // Another deal consistent with what the seat knows, as a second reference.
        let q = forked(*game, seats, &options, &request, 1_000_003);
        let hand = |m: &dyn DynMatch| m.view(Viewer::Seat(other)).expect("a view");
        let (parent_hand, other_hand) = (hand(p.as_ref()), hand(q.as_ref()));
        let (mut same_as_parent, mut same_as_other, mut differs) = (0u64, 0u64, 0u64);
        for n in 0..FORKS {
            let f = forked(*game, seats, &options, &request, 2_000 + n);
            let h = hand(f.as_ref());
            same_as_parent += u64::from(h == parent_hand);
            same_as_other += u64::from(h == other_hand);
            differs += u64::from(f.state_hash() != p.state_hash());
        }
        // Both counts estimate one probability; 4 standard errors of their difference apart
        // at most (and a count or two of slack for probabilities near 0 or 1).
        let rate = (same_as_parent + same_as_other) as f64 / (2 * FORKS) as f64;
        let se = (2.0 * rate * (1.0 - rate) / FORKS as f64).sqrt();
        let gap = (same_as_parent as f64 - same_as_other as f64).abs() / FORKS as f64;
        assert!(
            gap <= 4.0 * se + 2.0 / FORKS as f64,
            "{}: seat {other}'s hand equals the parent's in {same_as_parent} of {FORKS} forks, another deal's in {same_as_other}",
            info.id
        );
        assert!(
            differs > 0,
            "{}: every fork is the parent's very table",
            info.id
        );
        eprintln!(
            "{}: seat {other}'s hand as the parent's {same_as_parent}/{FORKS}, as another deal's {same_as_other}/{FORKS}; tables differing {differs}/{FORKS}",
            info.id
        );
    }
}

#[test]
fn rollouts_on_a_fork_agree_with_the_parents_position() {
    let settings = RolloutSettings {
        rollouts: 4,
        seed: 7,
        threads: 1,
        screen_to: 4,
        ..RolloutSettings::default()
    }
    .encode_to_vec();
    for game in games() {
        let info = game.info();
        let options = short(*game);
        let seats = info.min_players;
        let parent = play(*game, seats, &options, 5);
        for k in [1, 3] {
            let (at, p) = &parent.points[parent.points.len() * k / 4];
            let seat = p.to_act()[0];
            let request = seat_request(p.as_ref(), *at, seat);
            let f = forked(*game, seats, &options, &request, 17);
            let on_parent = game
                .evaluate_with(&p.position(Viewer::Auditor, seat).unwrap(), &settings)
                .expect("evaluates");
            let on_fork = game
                .evaluate_with(&f.position(Viewer::Seat(seat), seat).unwrap(), &settings)
                .expect("evaluates");
            assert_eq!(on_parent, on_fork, "{} at seq {at}", info.id);
        }
    }
}

#[test]
fn a_fork_of_a_fork_replays() {
    for game in games() {
        let info = game.info();
        let options = short(*game);
        let seats = info.min_players;
        let parent = play(*game, seats, &options, 7);
        let (at, p) = &parent.points[parent.points.len() / 3];
        let first = forked(*game, seats, &options, &seat_request(p.as_ref(), *at, 0), 3);
        let first_log = vec![(
            FORKED.to_string(),
            first_opening(*game, seats, &options, &seat_request(p.as_ref(), *at, 0), 3),
        )];
        // The auditor's fork of the fork at its seq 1: the fork's very state.
        let request = fork::request(
            "fork",
            1,
            &[1; 32],
            ForkedAs::Auditor,
            Vec::new(),
            first_log,
        )
        .encode_to_vec();
        let second = forked(*game, seats, &options, &request, 4);
        assert_eq!(second.state_hash(), first.state_hash(), "{}", info.id);
        // A seat's fork of the auditor's fork of the parent.
        let events = parent.events[..*at as usize].to_vec();
        let audit = fork::request(
            "parent",
            *at,
            &[2; 32],
            ForkedAs::Auditor,
            Vec::new(),
            events,
        )
        .encode_to_vec();
        let third = forked(*game, seats, &options, &audit, 5);
        assert_eq!(third.state_hash(), p.state_hash(), "{}", info.id);
        let seat = seats - 1;
        let fourth = forked(
            *game,
            seats,
            &options,
            &seat_request(third.as_ref(), 1, seat),
            6,
        );
        assert_eq!(
            fourth.view(Viewer::Seat(seat)).unwrap(),
            p.view(Viewer::Seat(seat)).unwrap(),
            "{}",
            info.id
        );
    }
}

fn first_opening(
    game: &dyn DynGame,
    seats: u32,
    options: &Options,
    request: &[u8],
    seed: u64,
) -> Vec<u8> {
    let m = game.new_match(seats, options).unwrap();
    let seed32 = tablier_core::conformance::seed_bytes(seed);
    m.fork(request, &mut Rng::for_command(&seed32, 1))
        .unwrap()
        .remove(0)
        .payload
}

#[test]
fn forks_are_refused_in_words() {
    for game in games() {
        let info = game.info();
        let options = short(*game);
        let seats = info.min_players;
        let parent = play(*game, seats, &options, 9);
        let (at, p) = &parent.points[1];
        let refused = |request: Vec<u8>| {
            let m = game.new_match(seats, &options).unwrap();
            let e = m
                .fork(&request, &mut Rng::from_u64(1))
                .expect_err("refused");
            let message = match &e {
                tablier_core::error::CoreError::Rule { message, .. } => message.clone(),
                e => e.to_string(),
            };
            tablier_core::words::refusal_plain(&message).expect("in words");
            e.to_string()
        };
        // The seat count of another table.
        let position = p.position(Viewer::Auditor, 0).unwrap();
        let e = refused(
            fork::request(
                "parent",
                *at,
                &[0; 32],
                ForkedAs::Seat(seats),
                position.clone(),
                vec![],
            )
            .encode_to_vec(),
        );
        assert!(e.contains("not in this"), "{e}");
        // A head that is not a chain hash.
        let e = refused(
            fork::request(
                "parent",
                *at,
                &[0; 3],
                ForkedAs::Seat(0),
                position.clone(),
                vec![],
            )
            .encode_to_vec(),
        );
        assert!(e.contains("32 bytes"), "{e}");
        // Another seat's position under this seat's name.
        let e = refused(
            fork::request(
                "parent",
                *at,
                &[0; 32],
                ForkedAs::Seat(1),
                position.clone(),
                vec![],
            )
            .encode_to_vec(),
        );
        assert!(e.contains("not seat 1's"), "{e}");
        // The parent's whole log: a match that is over has nothing to play on.
        let e = refused(
            fork::request(
                "parent",
                parent.events.len() as u64,
                &[0; 32],
                ForkedAs::Auditor,
                vec![],
                parent.events.clone(),
            )
            .encode_to_vec(),
        );
        assert!(e.contains("nothing to play on"), "{}: {e}", info.id);
        // A fork opens a new match only.
        let mut started = game.new_match(seats, &options).unwrap();
        let opening = started.start(&mut Rng::from_u64(1)).unwrap();
        started.apply(&opening[0].payload).unwrap();
        let request = fork::request("parent", *at, &[0; 32], ForkedAs::Seat(0), position, vec![])
            .encode_to_vec();
        assert!(started.fork(&request, &mut Rng::from_u64(1)).is_err());
    }
}
