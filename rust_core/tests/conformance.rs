//! One harness for every game of the registry, at every seat count it allows.
//!
//! * `every_game_conforms`: the conformance harness (`tablier_core::conformance`, checks listed
//!   there) on seeded matches of each game and seat count, half of them played by the game's
//!   strongest bot, with the defaults and with each variant the game declares
//!   (`TestData::variants`).
//! * `every_game_conforms_through_the_registry`: the same rules as the service drives them
//!   (protobuf bytes through `DynMatch`): actions decode to themselves and are listed once, a
//!   seat not awaited has none and is refused, stored events decode and redact consistently,
//!   replaying the log gives the live state hash.
//! * `golden_matches_replay_identically`: short recorded matches in each game's
//!   `src/games/<id>/tests/golden/`, one text file per match showing, per move, the seat, the
//!   action and the events decoded, and each seat's rendered view, so a diff says what changed.
//!   Re-record deliberately with `UPDATE_GOLDEN=1`.
//! * `seeded_matches_are_byte_identical_to_the_pinned_digests`: every byte of many seeded
//!   matches per game (events, every redaction, every view, every legal action list), hashed.
//!   Speed work must not move a digest; if one moves, behaviour moved.
//!
//! What is played of each game, and the digests, are the game's own (`TestData`, its folder's
//! `testdata.rs`): this file names no game.

use std::fmt::Write;
use std::path::PathBuf;

use sha2::{Digest, Sha256};
use tablier_core::error::CoreError;
use tablier_core::game::{Options, Viewer};
use tablier_core::registry::{games, DynGame, DynMatch};
use tablier_core::rng::Rng;

fn options(pairs: &[(&str, &str)]) -> Options {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn seat_counts(game: &dyn DynGame) -> std::ops::RangeInclusive<u32> {
    let info = game.info();
    info.min_players..=info.max_players
}

/// Matches per game and seat count (`TABLIER_CONFORMANCE_MATCHES` for a longer run).
fn matches() -> u64 {
    std::env::var("TABLIER_CONFORMANCE_MATCHES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200)
}

#[test]
fn every_game_conforms() {
    let n = matches();
    std::thread::scope(|scope| {
        for game in games() {
            scope.spawn(move || {
                let id = game.id();
                let data = game.test_data();
                for opts in std::iter::once(&[][..]).chain(data.variants.iter().copied()) {
                    for seats in seat_counts(*game) {
                        // A variant for more seats than it names (ages) is for its seat count only.
                        let o = options(opts);
                        if o.get("ages")
                            .is_some_and(|a| a.split(',').count() != seats as usize)
                        {
                            continue;
                        }
                        let matches = if opts.is_empty() { n } else { n / 4 + 1 };
                        let mut r = game.conformance(seats, &o, matches, 1000 * u64::from(seats));
                        r.violations.retain(|v| {
                            let known = data
                                .known_violations
                                .iter()
                                .any(|(n, what)| *n == seats && v.contains(what));
                            if known {
                                eprintln!("known, not fixed: {id}, {seats} seats, {opts:?}: {v}");
                            }
                            !known
                        });
                        assert!(
                            r.violations.is_empty(),
                            "{id}, {seats} seats, {opts:?}: {:#?}",
                            r.violations
                        );
                        assert_eq!(r.matches, matches);
                        assert!(r.steps >= matches, "{id}, {seats} seats: {} steps", r.steps);
                    }
                }
            });
        }
    });
}

fn reason<T>(r: Result<T, CoreError>) -> String {
    match r {
        Err(CoreError::Rule { reason, .. }) => reason.to_string(),
        Err(e) => format!("{e}"),
        Ok(_) => "accepted".into(),
    }
}

/// Plays one match through the registry, checking at every step; `bot` moves for every seat
/// when given, else uniformly chosen legal actions.
fn play_through_registry(game: &dyn DynGame, seats: u32, seed: u64, bot: Option<&str>) {
    let id = game.id();
    let seed32: [u8; 32] = Sha256::digest(format!("conformance/{id}/{seats}/{seed}")).into();
    let mut choice = Rng::from_u64(seed);
    let mut m = game.new_match(seats, &Options::new()).unwrap();
    let mut log: Vec<(&'static str, Vec<u8>)> = Vec::new();
    let mut seq = 0u64;
    let mut append = |m: &mut Box<dyn DynMatch>,
                      events: Vec<tablier_core::registry::EncodedEvent>,
                      seq: &mut u64| {
        for e in events {
            *seq += 1;
            assert_eq!(
                m.event_kind(&e.payload).unwrap(),
                e.kind,
                "{id}: stored kind"
            );
            assert_eq!(
                m.redact(&e.payload, Viewer::Auditor).unwrap().as_deref(),
                Some(&e.payload[..]),
                "{id}: auditor"
            );
            for s in 0..seats {
                let seen = m.redact(&e.payload, Viewer::Seat(s)).unwrap();
                if let Some(seen) = seen {
                    game.describe_event(e.kind, &seen).unwrap();
                }
            }
            m.apply(&e.payload).unwrap();
            log.push((e.kind, e.payload));
        }
    };
    let opening = m.start(&mut Rng::for_command(&seed32, 1)).unwrap();
    append(&mut m, opening, &mut seq);
    let mut steps = 0;
    while m.outcome().is_none() {
        steps += 1;
        assert!(steps <= 1_000_000, "{id}: no end");
        let awaited = m.to_act();
        assert!(!awaited.is_empty(), "{id}: not over, nobody awaited");
        for s in 0..seats {
            m.view(Viewer::Seat(s)).unwrap();
            let legal = m.legal_actions(s).unwrap();
            if !awaited.contains(&s) {
                assert!(
                    legal.is_empty(),
                    "{id}: seat {s} not awaited has legal actions"
                );
                if let Some(other) = awaited
                    .first()
                    .map(|&a| m.legal_actions(a).unwrap()[0].clone())
                {
                    let refused = m.decide(s, &other, &mut Rng::for_command(&seed32, seq + 1));
                    assert!(
                        matches!(refused, Err(CoreError::Rule { .. })),
                        "{id}: seat {s} not awaited: {refused:?}"
                    );
                }
                continue;
            }
            assert!(
                !legal.is_empty(),
                "{id}: seat {s} awaited without legal actions"
            );
            let mut distinct = legal.clone();
            distinct.sort();
            distinct.dedup();
            assert_eq!(
                distinct.len(),
                legal.len(),
                "{id}: seat {s} has a legal action listed twice"
            );
            for a in &legal {
                assert_eq!(
                    &game.canonical_action(a).unwrap(),
                    a,
                    "{id}: a legal action decodes to itself"
                );
            }
            assert_distinct_labels(&*m, s);
        }
        let seat = awaited[choice.index(awaited.len())];
        let legal = m.legal_actions(seat).unwrap();
        let action = match bot {
            Some(bot) => m
                .bot_action(seat, bot, &mut Rng::from_u64(choice.next_u64()))
                .unwrap(),
            None => legal[choice.index(legal.len())].clone(),
        };
        assert!(legal.contains(&action), "{id}: the bot's action is listed");
        let rng = || Rng::for_command(&seed32, seq + 1);
        assert_ne!(
            reason(m.decide(seat, &[0xff, 0xff], &mut rng())),
            "accepted",
            "{id}: undecodable action"
        );
        let events = m.decide(seat, &action, &mut rng()).unwrap();
        assert_eq!(
            m.decide(seat, &action, &mut rng()).unwrap(),
            events,
            "{id}: decide is deterministic"
        );
        append(&mut m, events, &mut seq);
    }
    assert!(m.to_act().is_empty(), "{id}: over but awaiting");
    let last = m.legal_actions(0).unwrap();
    assert!(last.is_empty(), "{id}: legal actions after the end");
    // Replaying the stored log gives the same state.
    let mut replayed = game.new_match(seats, &Options::new()).unwrap();
    for (kind, payload) in &log {
        replayed.apply_stored(Some(kind), payload).unwrap();
    }
    assert_eq!(replayed.state_hash(), m.state_hash(), "{id}: replay");
    assert_ne!(
        reason(m.decide(0, &[], &mut Rng::for_command(&seed32, seq + 1))),
        "accepted",
        "{id}: a move after the end"
    );
}

/// No two legal actions of `seat` share a label: a player choosing by its words must be
/// choosing between different moves (moves that differ only in how they are written, such as
/// the order of a set's items, are listed once).
fn assert_distinct_labels(m: &dyn DynMatch, seat: u32) {
    let moves = m.legal_moves(seat).unwrap();
    let mut labels: Vec<&str> = moves.iter().map(|(_, label)| label.as_str()).collect();
    labels.sort_unstable();
    let twice: Vec<&str> = labels
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    assert!(
        twice.is_empty(),
        "{}: seat {seat} has legal actions sharing a label: {twice:?}",
        m.game_id()
    );
}

/// Random matches of every game at every seat count (uniformly chosen legal actions, so every
/// kind of move and phase is met): every state's legal moves carry distinct labels.
#[test]
fn legal_moves_have_distinct_labels() {
    std::thread::scope(|scope| {
        for game in games() {
            scope.spawn(move || {
                let id = game.id();
                for seats in seat_counts(*game) {
                    for seed in 0..matches() / 10 {
                        let mut rng = Rng::from_u64(seed * 31 + u64::from(seats));
                        let mut m = game.new_match(seats, &Options::new()).unwrap();
                        let mut evs = m.start(&mut rng).unwrap();
                        for _ in 0..2_000 {
                            for e in evs {
                                m.apply(&e.payload).unwrap();
                            }
                            let awaited = m.to_act();
                            if awaited.is_empty() {
                                break;
                            }
                            for &s in &awaited {
                                assert_distinct_labels(&*m, s);
                            }
                            let seat = awaited[rng.index(awaited.len())];
                            let legal = m.legal_actions(seat).unwrap();
                            let a = &legal[rng.index(legal.len())];
                            evs = m
                                .decide(seat, a, &mut rng)
                                .unwrap_or_else(|e| panic!("{id}: a legal action refused: {e}"));
                        }
                    }
                }
            });
        }
    });
}

#[test]
fn every_game_conforms_through_the_registry() {
    std::thread::scope(|scope| {
        for game in games() {
            scope.spawn(move || {
                let bot = game.info().bots.last().cloned();
                for seats in seat_counts(*game) {
                    for seed in 0..4 {
                        play_through_registry(
                            *game,
                            seats,
                            seed,
                            if seed % 2 == 1 { bot.as_deref() } else { None },
                        );
                    }
                }
            });
        }
    });
}

// ---------------------------------------------------------------------------- golden matches

/// The most moves recorded of one golden match (each game's `TestData::golden`).
const GOLDEN_MOVES: usize = 12;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn indented(out: &mut String, text: &str) {
    for line in text.lines() {
        let _ = writeln!(out, "    {}", line.trim_end());
    }
}

/// One bot match through the registry as text: per command the seat and action, the events
/// decoded, then each seat's rendered view.
fn record(game_id: &str, seats: u32, opts: &[(&str, &str)]) -> String {
    let game = tablier_core::registry::find(game_id).unwrap();
    let bot = game.info().bots.last().cloned().unwrap();
    let mut m = game.new_match(seats, &options(opts)).unwrap();
    let seed: [u8; 32] = Sha256::digest(format!("golden/{game_id}/{seats}")).into();
    let mut out =
        format!("# {game_id}, {seats} seats, options {opts:?}, every seat played by bot {bot}\n");
    let mut seq = 0u64;
    let step = |m: &mut Box<dyn DynMatch>,
                title: String,
                events: Vec<tablier_core::registry::EncodedEvent>,
                seq: &mut u64,
                out: &mut String| {
        let _ = writeln!(out, "\n== {title}");
        for e in events {
            *seq += 1;
            m.apply(&e.payload).unwrap();
            let _ = writeln!(
                out,
                "event {seq} {}: {}",
                e.kind,
                game.describe_event(e.kind, &e.payload).unwrap()
            );
        }
        for s in 0..seats {
            let _ = writeln!(out, "view of seat {s}:");
            indented(out, &m.render(Viewer::Seat(s)).unwrap());
        }
    };
    let opening = m.start(&mut Rng::for_command(&seed, 1)).unwrap();
    step(&mut m, "start".into(), opening, &mut seq, &mut out);
    let mut moves = 0;
    while m.outcome().is_none() {
        if moves == GOLDEN_MOVES {
            let _ = writeln!(out, "\n(recording stops after {GOLDEN_MOVES} moves)");
            break;
        }
        moves += 1;
        let seat = m.to_act()[0];
        let action = m
            .bot_action(
                seat,
                &bot,
                &mut Rng::for_command(&seed, seq + 1 + (1 << 40)),
            )
            .unwrap();
        let events = m
            .decide(seat, &action, &mut Rng::for_command(&seed, seq + 1))
            .unwrap();
        let title = format!(
            "move {moves}: seat {seat} {}",
            game.describe_action(&action).unwrap()
        );
        step(&mut m, title, events, &mut seq, &mut out);
    }
    let _ = writeln!(
        out,
        "\noutcome: {:?}\nstate hash: {}",
        m.outcome(),
        hex(&m.state_hash())
    );
    out
}

#[test]
fn golden_matches_replay_identically() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    let recorded = games()
        .iter()
        .flat_map(|g| g.test_data().golden.iter().map(move |r| (g.id(), r)));
    for (id, (seats, opts)) in recorded {
        let got = record(id, *seats, opts);
        let path = golden_dir(id).join(format!("{id}-{seats}.txt"));
        if update {
            std::fs::create_dir_all(golden_dir(id)).unwrap();
            std::fs::write(&path, &got).unwrap();
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (record with UPDATE_GOLDEN=1)", path.display()));
        if got != want {
            let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
            let first = g
                .iter()
                .zip(&w)
                .position(|(a, b)| a != b)
                .unwrap_or(g.len().min(w.len()));
            let context = |lines: &[&str]| {
                lines[first.saturating_sub(3)..(first + 4).min(lines.len())].join("\n")
            };
            failures.push(format!(
                "{} differs from the recording at line {}:\n--- recorded\n{}\n--- now\n{}",
                path.display(),
                first + 1,
                context(&w),
                context(&g)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n(re-record deliberately with UPDATE_GOLDEN=1)",
        failures.join("\n\n")
    );
    for game in games() {
        assert!(
            !game.test_data().golden.is_empty(),
            "{} has a golden match",
            game.id()
        );
    }
}

/// A game's recordings: `src/games/<id>/tests/golden/`.
fn golden_dir(id: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("src/games/{id}/tests/golden"))
}

// ---------------------------------------------------------------------------- pinned digests

/// SHA-256 of seeded matches through the registry: every event (kind and payload), every
/// redaction of it for each seat, the spectator and the auditor, every view after each
/// command, and every legal action list, for each seat count.
fn pinned_digest(game: &dyn DynGame, seats: std::ops::RangeInclusive<u32>, matches: u64) -> String {
    let mut h = Sha256::new();
    for n in seats {
        let viewers: Vec<Viewer> = (0..n)
            .map(Viewer::Seat)
            .chain([Viewer::Spectator, Viewer::Auditor])
            .collect();
        for seed in 0..matches {
            let mut rng = Rng::from_u64(seed * 7 + n as u64);
            let mut m = game.new_match(n, &Options::new()).unwrap();
            let mut evs = m.start(&mut rng).unwrap();
            let mut steps = 0;
            loop {
                for e in &evs {
                    h.update(e.kind.as_bytes());
                    h.update(&e.payload);
                    for &v in &viewers {
                        match m.redact(&e.payload, v).unwrap() {
                            Some(r) => h.update(r),
                            None => h.update(b"-"),
                        }
                    }
                    m.apply(&e.payload).unwrap();
                }
                for &v in &viewers {
                    h.update(m.view(v).unwrap());
                }
                let awaited = m.to_act();
                if awaited.is_empty() || steps > 100_000 {
                    break;
                }
                let seat = awaited[rng.index(awaited.len())];
                let moves = m.legal_actions(seat).unwrap();
                for a in &moves {
                    h.update(a);
                }
                let a = &moves[rng.index(moves.len())];
                evs = m.decide(seat, a, &mut rng).unwrap();
                steps += 1;
            }
            h.update(format!("{:?}", m.outcome()).as_bytes());
        }
    }
    hex(&h.finalize())
}

#[test]
fn seeded_matches_are_byte_identical_to_the_pinned_digests() {
    let got: Vec<(String, String)> = std::thread::scope(|scope| {
        let runs: Vec<_> = games()
            .iter()
            .map(|&game| {
                scope.spawn(move || {
                    let matches = game.test_data().pinned_matches;
                    (
                        game.id().to_string(),
                        pinned_digest(game, seat_counts(game), matches),
                    )
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let moved: Vec<String> = games()
        .iter()
        .zip(&got)
        .map(|(game, (id, got))| (id, game.test_data().pinned_digest, got))
        .filter(|(_, want, got)| want != got)
        .map(|(id, want, got)| format!("{id}: pinned {want}, now {got}"))
        .collect();
    assert!(
        moved.is_empty(),
        "event, redaction or view bytes changed:\n{}",
        moved.join("\n")
    );
}
