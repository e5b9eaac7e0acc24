//! Words for people through the registry, as the service asks for them: every legal move has
//! its label, every event a sentence for each viewer, and a seat's own hidden cards are named
//! to it while the same event told to a spectator names none of them.

use tablier_core::game::{Options, Viewer};
use tablier_core::registry::{self, games};
use tablier_core::rng::Rng;
use tablier_core::words;

#[test]
fn moves_and_events_read_as_words_through_the_registry() {
    for game in games() {
        let info = game.info();
        assert!(
            (2..=4).contains(&info.summary.matches(". ").count().max(1))
                || info.summary.split(". ").count() <= 5,
            "{}: {}",
            info.id,
            info.summary
        );
        assert!(info.rules_path.starts_with("docs/rules/"), "{}", info.id);
        assert!(
            std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
                .join(&info.rules_path)
                .exists(),
            "{}",
            info.rules_path
        );
        let seats = info.min_players;
        let mut m = game.new_match(seats, &Options::new()).unwrap();
        let seed = [7u8; 32];
        let mut seq = 1;
        let mut events = m.start(&mut Rng::for_command(&seed, seq)).unwrap();
        let mut told = Vec::new();
        let mut pick = Rng::from_u64(3);
        for step in 0..60 {
            for e in events.drain(..) {
                for v in [Viewer::Seat(0), Viewer::Spectator] {
                    if let Some(r) = m.redact_stored(Some(e.kind), &e.payload, v).unwrap() {
                        let s = m.event_sentence(Some(e.kind), &r, v).unwrap();
                        words::plain(&s).unwrap_or_else(|w| panic!("{}: {w}", info.id));
                        told.push((v, s));
                    }
                }
                m.apply(&e.payload).unwrap();
                seq += 1;
            }
            let Some(&actor) = m.to_act().first() else {
                break;
            };
            let moves = m.legal_moves(actor).unwrap();
            assert_eq!(moves.len(), m.legal_actions(actor).unwrap().len());
            for (_, label) in &moves {
                words::plain(label).unwrap_or_else(|w| panic!("{}: {w}", info.id));
            }
            let (action, label) = &moves[pick.index(moves.len())];
            if step < 12 {
                eprintln!("{} seat {actor}: {label}", info.id);
            }
            events = m
                .decide(actor, action, &mut Rng::for_command(&seed, seq))
                .unwrap();
        }
        for (v, s) in told.iter().take(24) {
            eprintln!("{} {v:?}: {s}", info.id);
        }
        // The same events told to seat 0 and to a spectator differ where seat 0 sees its own
        // hidden cards (every game deals or draws some at the start).
        let mine: Vec<&String> = told
            .iter()
            .filter(|(v, _)| *v == Viewer::Seat(0))
            .map(|(_, s)| s)
            .collect();
        let public: Vec<&String> = told
            .iter()
            .filter(|(v, _)| *v == Viewer::Spectator)
            .map(|(_, s)| s)
            .collect();
        assert_ne!(mine, public, "{}", info.id);
    }
}

#[test]
fn plain_refuses_what_only_a_program_says() {
    for bad in [
        "",
        "vote card \u{2014} trump unspecified",
        "SUIT_UNSPECIFIED",
        "RevealInitial { slot: Some(Slot { owner: 0 }) }",
        "Seat(1) drew",
        "you do not hold the CARD_AS",
        "phase TURN_START",
    ] {
        assert!(words::plain(bad).is_err(), "{bad:?}");
    }
    assert!(
        words::plain("Lay red circle at (2, \u{2212}1) and red square at (3, \u{2212}1)").is_ok()
    );
    assert!(words::names("Seat 1 drew a 7.", "a 7"));
    for bad in [
        "you do not hold AS",
        "AD can only go on cell 1",
        "your hand does not hold 2 RC",
        "not possible now (phase TURN_START)",
    ] {
        assert!(words::refusal_plain(bad).is_err(), "{bad:?}");
    }
    assert!(words::refusal_plain("you do not hold the ace of spades").is_ok());
    assert!(!words::names("Seat 1 drew a 17.", "a 1"));
    assert!(!words::names("Seat 1 took slot 3.", "a 3"));
}

/// The harness's leak check can fail: a sentence made from the whole event (not the one
/// redacted for the spectator) names the drawn card the spectator may not see.
#[test]
fn a_sentence_of_the_unredacted_event_would_be_caught() {
    use tablier_core::game::Game;
    use tablier_core::games::carre::Carre;
    let config = Carre::checked_config(2, &Options::new()).unwrap();
    let mut state = Carre::initial(&config);
    let mut events = Vec::new();
    Carre::open(&mut state, &mut Rng::from_u64(5), &mut events).unwrap();
    let mut rng = Rng::from_u64(6);
    let mut caught = 0;
    for _ in 0..40 {
        for e in events.drain(..) {
            let hidden: Vec<String> = {
                let seen = Carre::card_words(&Carre::redact(&e, Viewer::Spectator).unwrap());
                Carre::card_words(&e)
                    .into_iter()
                    .filter(|w| !seen.contains(w))
                    .collect()
            };
            let told = Carre::event_sentence(
                &Carre::redact(&e, Viewer::Spectator).unwrap(),
                Viewer::Spectator,
            );
            assert!(!hidden.iter().any(|w| words::names(&told, w)), "{told}");
            let leaked = Carre::event_sentence(&e, Viewer::Spectator);
            caught += usize::from(hidden.iter().any(|w| words::names(&leaked, w)));
        }
        let Some(seat) = Carre::to_act(&state).first() else {
            break;
        };
        let action = Carre::bot_action(&state, seat, "random", &mut rng).unwrap();
        Carre::play(&mut state, seat, &action, &mut rng, &mut events).unwrap();
    }
    assert!(caught > 0, "no drawn card would have been caught");
}

#[test]
fn seats_are_numbered_from_one_and_named_by_their_players_for_one_call() {
    assert_eq!(words::who(0, Viewer::Spectator), "Seat 1");
    assert_eq!(words::whom(1, Viewer::Spectator), "seat 2");
    assert_eq!(words::whose(2, Viewer::Auditor), "seat 3's");
    let names = vec!["Alice".to_string(), String::new()];
    words::with_names(&names, || {
        assert_eq!(words::who(0, Viewer::Spectator), "Alice");
        assert_eq!(words::whose_cap(0, Viewer::Seat(1)), "Alice's");
        assert_eq!(words::who(0, Viewer::Seat(0)), "You");
        assert_eq!(words::whom(1, Viewer::Seat(0)), "seat 2");
        assert_eq!(words::named(0), "Alice");
        assert_eq!(words::seats(&[0, 1], Viewer::Seat(1)), "Alice and you");
    });
    // The table was the call's only.
    assert_eq!(words::who(0, Viewer::Spectator), "Seat 1");
    let r = std::panic::catch_unwind(|| words::with_names(&names, || panic!("inside")));
    assert!(r.is_err());
    assert_eq!(words::named(0), "seat 1");
}

/// Every game through the registry: a seat resigns on its turn (`resign:<seat>`) and another
/// leaves (`leave:<seat>`). The events apply to the match (the stored kinds replayed), every
/// viewer reads them whole in plain words, and a resignation is followed by the game's rule:
/// the match over (a game that ends it on a forfeit), or the strongest bot's move for the seat.
#[test]
fn every_game_takes_a_resignation_and_a_seat_left_through_the_registry() {
    for &game in games() {
        let info = game.info();
        let mut m = game.new_match(info.min_players, &Options::new()).unwrap();
        let seed = [9u8; 32];
        for e in m.start(&mut Rng::for_command(&seed, 1)).unwrap() {
            m.apply_stored(Some(e.kind), &e.payload).unwrap();
        }
        let seat = *m.to_act().first().expect("a seat is awaited at the start");
        let left = m
            .host_command(&format!("leave:{}", seat), &mut Rng::for_command(&seed, 2))
            .unwrap();
        assert_eq!(left.len(), 1, "{}", info.id);
        assert_eq!(left[0].kind, registry::SEAT_LEFT);
        let resigned = m
            .host_command(&format!("resign:{seat}"), &mut Rng::for_command(&seed, 3))
            .unwrap();
        assert_eq!(resigned[0].kind, registry::SEAT_RESIGNED, "{}", info.id);
        for e in left.iter().chain(&resigned) {
            for v in [
                Viewer::Seat(seat),
                Viewer::Seat((seat + 1) % info.min_players),
                Viewer::Spectator,
            ] {
                let r = m
                    .redact_stored(Some(e.kind), &e.payload, v)
                    .unwrap()
                    .expect("public");
                let s = m.event_sentence(Some(e.kind), &r, v).unwrap();
                words::plain(&s).unwrap_or_else(|w| panic!("{}: {w}", info.id));
            }
        }
        for e in &resigned {
            m.apply_stored(Some(e.kind), &e.payload).unwrap();
        }
        assert!(
            m.outcome().is_some() || resigned.len() > 1,
            "{}: after a resignation on its turn the match ends or the bot moves",
            info.id
        );
        if m.outcome().is_none() {
            if let Some(idle) = (0..info.min_players).find(|s| !m.to_act().contains(s)) {
                let off_turn = format!("resign:{idle}");
                assert!(m.host_command(&off_turn, &mut Rng::from_u64(2)).is_err());
            }
        }
        assert!(m.host_command("resign:99", &mut Rng::from_u64(1)).is_err());
        assert!(m.host_command("leave:x", &mut Rng::from_u64(1)).is_err());
    }
}
