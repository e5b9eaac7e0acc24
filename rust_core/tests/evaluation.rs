//! The evaluator of every game with rollouts, through the registry: the same seed gives the
//! same values whatever the thread count, every value carries its sample count and standard
//! error, settings out of range and undecodable positions are refused with a reason.

use prost::Message;
use tablier_core::error::CoreError;
use tablier_core::game::Viewer;
use tablier_core::proto::{MoveValue, RolloutSettings};
use tablier_core::registry::{self, DynMatch};
use tablier_core::rng::Rng;
use tablier_core::rollout::Analysis;

/// Applies the events that start `m` from `seed`; the seq they reach.
fn started(m: &mut dyn DynMatch, seed: &[u8; 32]) -> u64 {
    let events = m.start(&mut Rng::for_command(seed, 1)).unwrap();
    for e in &events {
        m.apply(&e.payload).unwrap();
    }
    events.len() as u64
}

/// Plays `bot`'s move for `seat` (one generator for its choice and for the decision, as the
/// server's bot command does); the seq its events reach.
fn bot_step(m: &mut dyn DynMatch, seat: u32, bot: &str, seed: &[u8; 32], mut seq: u64) -> u64 {
    let r = &mut Rng::for_command(seed, seq + 1);
    let action = m.bot_action(seat, bot, r).unwrap();
    for e in m.decide(seat, &action, r).unwrap() {
        m.apply(&e.payload).unwrap();
        seq += 1;
    }
    seq
}

/// The seed of the `k`th of a series of seeded matches.
fn seed_of(k: u64) -> [u8; 32] {
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&k.to_le_bytes());
    seed
}

/// A seeded match of the strongest bots, played until `seat` has at least two moves after
/// `skip` decisions: its position then.
pub fn mid_game_position(id: &str, seats: u32, seed: u8, skip: usize) -> (Box<dyn DynMatch>, u32) {
    let game = registry::find(id).unwrap();
    let info = game.info();
    let bot = info.bots.last().unwrap().clone();
    let mut m = game.new_match(seats, &Default::default()).unwrap();
    let seed = [seed; 32];
    let mut seq = started(m.as_mut(), &seed);
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
        screen_to: 0,
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
        // (Rollouts need the whole position: an empty one is refused by every game.)
        for bytes in [&[0xffu8, 0xff, 0xff][..], &[], &pos[..pos.len() / 2]] {
            match game.evaluate_with(bytes, &settings(1, 0, 1)) {
                Err(CoreError::Malformed(reason)) => assert!(!reason.is_empty()),
                other => panic!("{id}: {other:?}"),
            }
        }
    }
}

fn refused(id: &str, position: &[u8], expect: &str) {
    match registry::find(id).unwrap().evaluate(position) {
        Err(CoreError::Malformed(reason)) => {
            assert!(reason.contains(expect), "{id}: {reason:?} lacks {expect:?}")
        }
        other => panic!("{id}: expected a refusal with {expect:?}, got {other:?}"),
    }
}

#[test]
fn a_card_in_two_places_and_counts_beyond_the_deck_are_refused_in_every_card_game() {
    use tablier_core::proto::{carre, democratie, grid_knock};
    // Carré: the seat's first card also on the discard pile; a stock beyond the pack.
    let (m, s) = mid_game_position("carre", 2, 8, 6);
    let good = carre::Position::decode(m.position(Viewer::Seat(s), s).unwrap().as_slice()).unwrap();
    let mut p = good.clone();
    let view = p.view.as_mut().unwrap();
    let card = view.players[s as usize].hand[0];
    view.discard.push(card);
    refused("carre", &p.encode_to_vec(), "is in two places");
    let mut p = good.clone();
    p.view.as_mut().unwrap().stock_size += 1;
    refused("carre", &p.encode_to_vec(), "the pack has 52");
    let mut p = good.clone();
    p.view.as_mut().unwrap().players[1 - s as usize].hand = vec![card];
    refused("carre", &p.encode_to_vec(), "cannot see it");
    // Démocratie: a card of the hand also captured; a card beyond the deck of two seats.
    let (m, s) = mid_game_position("democratie", 2, 8, 3);
    let good =
        democratie::Position::decode(m.position(Viewer::Seat(s), s).unwrap().as_slice()).unwrap();
    let mut p = good.clone();
    let card = p.view.as_ref().unwrap().hand[0];
    p.captured[1 - s as usize].cards.push(card);
    p.captured[1 - s as usize].count += 1;
    p.view.as_mut().unwrap().seat_info[1 - s as usize].captured_count += 1;
    refused("democratie", &p.encode_to_vec(), "in two places");
    let mut p = good.clone();
    p.view.as_mut().unwrap().stock_count += 1;
    refused("democratie", &p.encode_to_vec(), "the deck of 2 seats has");
    let mut p = good.clone();
    p.view.as_mut().unwrap().discard.push(50);
    refused(
        "democratie",
        &p.encode_to_vec(),
        "is not in the 48-card deck of 2 seats",
    );
    // Grid Knock: six -2s (the deck holds five); a draw pile beyond the deck.
    let (m, s) = mid_game_position("grid_knock", 2, 8, 6);
    let good =
        grid_knock::Position::decode(m.position(Viewer::Seat(s), s).unwrap().as_slice()).unwrap();
    let mut p = good.clone();
    p.view.as_mut().unwrap().discard_pile.extend([-2; 6]);
    refused("grid_knock", &p.encode_to_vec(), "the deck holds 5");
    let mut p = good.clone();
    p.view.as_mut().unwrap().draw_pile_size += 1;
    refused("grid_knock", &p.encode_to_vec(), "the deck has 150");
    let mut p = good.clone();
    p.view.as_mut().unwrap().slots.pop();
    refused("grid_knock", &p.encode_to_vec(), "12 each");
}

#[test]
fn damaged_positions_never_crash_the_evaluator() {
    // Every byte of real positions flipped in turn: each answer is an evaluation or a refusal
    // with a reason, never a panic.
    for id in rollout_games() {
        let game = registry::find(id).unwrap();
        let (m, seat) = mid_game_position(id, 3.min(game.info().max_players), 9, 8);
        let pos = m.position(Viewer::Seat(seat), seat).unwrap();
        let mut refused = 0;
        for i in 0..pos.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = pos.clone();
                bad[i] ^= flip;
                match game.evaluate(&bad) {
                    Ok(_) => {}
                    Err(CoreError::Malformed(reason)) => {
                        assert!(!reason.is_empty());
                        refused += 1;
                    }
                    Err(e) => panic!("{id}: {e}"),
                }
            }
        }
        assert!(refused > pos.len(), "{id}: {refused} refusals");
    }
}

/// A clocked two-seat match of `id` whose seat awaited times out: the match, that seat, the
/// seed and seq of the timeout command.
fn clocked_match(id: &str, policy: &str, seed: u8, skip: usize) -> (Box<dyn DynMatch>, u32, u64) {
    let game = registry::find(id).unwrap();
    let bot = game.info().bots.last().unwrap().clone();
    let options = [
        ("clock_move_seconds".to_string(), "30".to_string()),
        ("clock_timeout".to_string(), policy.to_string()),
    ]
    .into_iter()
    .collect();
    let mut m = game.new_match(2, &options).unwrap();
    let seed = [seed; 32];
    let mut seq = started(m.as_mut(), &seed);
    for decisions in 0.. {
        assert!(m.outcome().is_none(), "{id}: the match ended first");
        let s = m.to_act()[0];
        if decisions >= skip && m.legal_actions(s).unwrap().len() >= 2 {
            return (m, s, seq + 1);
        }
        seq = bot_step(m.as_mut(), s, &bot, &seed, seq);
    }
    unreachable!()
}

#[test]
fn every_game_with_rollouts_offers_the_evaluator_as_its_timeout_policy() {
    for id in rollout_games() {
        let info = registry::find(id).unwrap().info();
        let policy = info
            .options
            .iter()
            .find(|o| o.name == "clock_timeout")
            .unwrap();
        assert!(
            policy.allowed_values.iter().any(|v| v == "evaluator"),
            "{id}: {:?}",
            policy.allowed_values
        );
        assert!(
            policy.description.contains("evaluator:"),
            "{id}: {}",
            policy.description
        );
        // As every policy, it needs a clock.
        let options = [("clock_timeout".to_string(), "evaluator".to_string())]
            .into_iter()
            .collect();
        let err = registry::find(id)
            .unwrap()
            .new_match(2, &options)
            .err()
            .unwrap();
        assert!(err.to_string().contains("needs a clock"), "{id}: {err}");
    }
}

#[test]
fn a_seat_whose_time_is_up_gets_the_evaluators_move_decided_again_identically() {
    use tablier_core::proto::SeatTimedOut;
    for id in rollout_games() {
        let (m, seat, seq) = clocked_match(id, "evaluator", 11, 6);
        let seed = [11u8; 32];
        let command = format!("timeout:{seat}");
        let events = m
            .host_command(&command, &mut Rng::for_command(&seed, seq))
            .unwrap();
        assert_eq!(events[0].kind, "seat_timed_out", "{id}");
        let timed_out = SeatTimedOut::decode(events[0].payload.as_slice()).unwrap();
        assert_eq!(
            (timed_out.seat, timed_out.policy.as_str()),
            (seat, "evaluator")
        );
        // The evaluator's move from the command's stream, as the registry draws it, decided
        // as the seat's own move would be: the first step of the seat's turn, which the policy
        // plays to its end (`Game::turn_continues`).
        let mut r = Rng::for_command(&seed, seq);
        let action = m
            .bot_action(seat, "evaluator", &mut Rng::from_u64(r.next_u64()))
            .unwrap();
        let decided = m.decide(seat, &action, &mut r).unwrap();
        assert!(!decided.is_empty(), "{id}");
        assert!(events.len() > decided.len(), "{id}");
        for (a, b) in events[1..].iter().zip(&decided) {
            assert_eq!((a.kind, &a.payload), (b.kind, &b.payload), "{id}");
        }
        // A fixed number of rollouts, no clock: decided again (as `tablier verify` does), the
        // same events.
        let again = m
            .host_command(&command, &mut Rng::for_command(&seed, seq))
            .unwrap();
        assert_eq!(
            events.iter().map(|e| &e.payload).collect::<Vec<_>>(),
            again.iter().map(|e| &e.payload).collect::<Vec<_>>(),
            "{id}"
        );
        // The events apply, and the seat is no longer the one whose time ran out.
        let mut after = m.clone_box();
        for e in &events {
            after
                .apply_stored(Some(e.kind), &e.payload)
                .unwrap_or_else(|err| panic!("{id}: {err}"));
        }
        assert_ne!(after.state_hash(), m.state_hash(), "{id}");
        // The default policy (`bot`) still plays the cheap strongest bot, not the evaluator.
        let (m, seat, seq) = clocked_match(id, "bot", 11, 6);
        let events = m
            .host_command(
                &format!("timeout:{seat}"),
                &mut Rng::for_command(&seed, seq),
            )
            .unwrap();
        let timed_out = SeatTimedOut::decode(events[0].payload.as_slice()).unwrap();
        assert_eq!(timed_out.policy, "bot", "{id}");
    }
}

#[test]
fn the_evaluators_move_needs_no_clock_and_is_the_same_for_the_same_stream() {
    // The bot's decisions are a fixed number of rollouts: the same state and stream give the
    // same move however loaded the machine is (what makes the timeout policy verifiable).
    for id in rollout_games() {
        let (m, seat) = mid_game_position(id, 2, 12, 10);
        let one = m
            .bot_action(seat, "evaluator", &mut Rng::from_u64(77))
            .unwrap();
        let two = m
            .bot_action(seat, "evaluator", &mut Rng::from_u64(77))
            .unwrap();
        assert_eq!(one, two, "{id}");
        assert!(
            m.legal_actions(seat).unwrap().contains(&one)
                || m.decide(seat, &one, &mut Rng::from_u64(1)).is_ok(),
            "{id}: the evaluator's move is legal"
        );
    }
}

#[test]
fn a_qwirkle_position_the_rules_cannot_reach_is_refused_with_rollouts() {
    use tablier_core::proto::qwirkle;
    let game = registry::find("qwirkle").unwrap();
    let (m, s) = mid_game_position("qwirkle", 2, 8, 6);
    let good =
        qwirkle::Position::decode(m.position(Viewer::Seat(s), s).unwrap().as_slice()).unwrap();
    let with_rollouts = settings(2, 1, 1);
    assert!(game
        .evaluate_with(&good.encode_to_vec(), &with_rollouts)
        .is_ok());
    let refused = |edit: &dyn Fn(&mut qwirkle::Position), expect: &str| {
        let mut p = good.clone();
        edit(&mut p);
        match game.evaluate_with(&p.encode_to_vec(), &with_rollouts) {
            Err(CoreError::Malformed(reason)) => {
                assert!(reason.contains(expect), "{reason:?} lacks {expect:?}")
            }
            other => panic!("expected a refusal with {expect:?}, got {other:?}"),
        }
    };
    let me = s as usize;
    // A tile of the hand twice.
    refused(
        &|p| {
            let hand = &mut p.view.as_mut().unwrap().seats[me].hand_tile_ids;
            hand[1] = hand[0];
        },
        "repeated or out of range",
    );
    // The hand's types against its tiles.
    refused(
        &|p| p.hand_types[0] = (p.hand_types[0] + 1) % 36,
        "hand_types differs",
    );
    // The other seat's hand shown.
    refused(
        &|p| {
            let tiles = p.view.as_ref().unwrap().seats[me].hand_tile_ids.clone();
            let other = &mut p.view.as_mut().unwrap().seats[1 - me];
            other.hand_tile_ids = tiles;
        },
        "cannot see it",
    );
    refused(&|p| p.seat = 2, "is not a seat");
    refused(&|p| p.view = None, "rollouts need the position's seat");
}

/// A field of an encoded message: its tag, and its bytes if it is length-delimited.
type Field<'a> = (u32, Option<&'a [u8]>);

/// The top-level fields of an encoded protobuf message, in order: (tag, the bytes of a
/// length-delimited field; None for a number). None when the bytes are not a message.
fn fields(mut buf: &[u8]) -> Option<Vec<Field<'_>>> {
    use prost::encoding::{decode_key, decode_varint, WireType};
    let mut out = Vec::new();
    while !buf.is_empty() {
        let (tag, wire) = decode_key(&mut buf).ok()?;
        let width = match wire {
            WireType::Varint => {
                decode_varint(&mut buf).ok()?;
                0
            }
            WireType::SixtyFourBit => 8,
            WireType::ThirtyTwoBit => 4,
            WireType::LengthDelimited => usize::try_from(decode_varint(&mut buf).ok()?).ok()?,
            _ => return None,
        };
        let field = buf.get(..width)?;
        buf = &buf[width..];
        out.push((tag, (wire == WireType::LengthDelimited).then_some(field)));
    }
    Some(out)
}

/// Every move an evaluation of game `G` lists, encoded, with its value (rollouts asked for).
/// Whatever its names, every game's `Evaluation` lists them as one repeated message whose field
/// 1 is the `Action` and whose one other message field is its `tablier.v1.MoveValue`
/// (docs/evaluator.md): the repeated field whose every element decodes so, with samples.
fn valued<G: tablier_core::game::Game>(evaluation: &[u8]) -> Vec<(Vec<u8>, MoveValue)> {
    let as_move = |m: &[u8]| -> Option<(Vec<u8>, MoveValue)> {
        let inner = fields(m)?;
        let action = inner.iter().find(|(t, _)| *t == 1)?.1?;
        let mut others = inner.iter().filter(|(t, b)| *t != 1 && b.is_some());
        let value = MoveValue::decode(others.next()?.1?).ok()?;
        let canonical = G::Action::decode(action).ok()?.encode_to_vec();
        (others.next().is_none() && value.samples > 0 && canonical == action)
            .then_some((canonical, value))
    };
    let top = fields(evaluation).expect("an Evaluation message");
    let tags: std::collections::BTreeSet<u32> = top.iter().map(|(t, _)| *t).collect();
    let found: Vec<Vec<(Vec<u8>, MoveValue)>> = tags
        .into_iter()
        .filter_map(|tag| {
            top.iter()
                .filter(|(t, _)| *t == tag)
                .map(|(_, b)| b.and_then(as_move))
                .collect::<Option<Vec<_>>>()
        })
        .filter(|moves| !moves.is_empty())
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{}: one list of valued moves in its evaluation",
        G::ID
    );
    found.into_iter().next().unwrap()
}

/// [`valued`] for the game `id` (each registered game's type, [`tablier_core::with_games`]).
fn valued_moves(id: &str, evaluation: &[u8]) -> Vec<(Vec<u8>, MoveValue)> {
    macro_rules! each {
        ($($folder:ident :: $game:ident),* $(,)?) => {
            $(if id == <tablier_core::games::$folder::$game as tablier_core::game::Game>::ID {
                return valued::<tablier_core::games::$folder::$game>(evaluation);
            })*
        };
    }
    tablier_core::with_games!(each);
    panic!("{id}: not a registered game")
}

/// The options that keep a match of `id` to one round or deal (as in the strength runs): its
/// test data's `short`.
fn one_round(id: &str) -> tablier_core::game::Options {
    registry::find(id)
        .unwrap()
        .test_data()
        .short
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// How `action` ends the match for the position's seat in deal `deal` of the position (the
/// cards it cannot see dealt at random, as the rules allow), the rest played by the game's
/// strongest bot for every seat: Some(true) with the seat the sole winner, Some(false) with the
/// seat losing, None for a tie.
fn ends_at_once<G: Analysis>(position: &[u8], action: &[u8], deal: u64) -> Option<bool> {
    let known = G::known(position).unwrap();
    let seat = G::seat(&known);
    let mut rng = Rng::from_u64(deal);
    let mut state = G::sample(&known, &mut rng);
    let action = G::Action::decode(action).unwrap();
    let mut events = Vec::new();
    G::play(&mut state, seat, &action, &mut rng, &mut events).ok()?;
    for _ in 0..10_000 {
        if G::outcome(&state).is_some() {
            break;
        }
        let s = G::to_act(&state).first()?;
        let next = G::bot_action(&state, s, G::ROLLOUT_BOT, &mut rng).unwrap();
        G::play(&mut state, s, &next, &mut rng, &mut events).unwrap();
    }
    let o = G::outcome(&state)?;
    if o.winners == [seat] {
        Some(true)
    } else if o.winners.contains(&seat) {
        None
    } else {
        Some(false)
    }
}

/// [`ends_at_once`] for the game `id` (each registered game's type, [`tablier_core::with_games`]).
fn in_deal(id: &str, position: &[u8], action: &[u8], deal: u64) -> Option<bool> {
    macro_rules! each {
        ($($folder:ident :: $game:ident),* $(,)?) => {
            $(if id == <tablier_core::games::$folder::$game as tablier_core::game::Game>::ID {
                return ends_at_once::<tablier_core::games::$folder::$game>(position, action, deal);
            })*
        };
    }
    tablier_core::with_games!(each);
    panic!("{id}: not a registered game")
}

/// The same outcome of `action` in each of 16 deals of the position, if it has one.
fn in_every_deal(id: &str, position: &[u8], action: &[u8]) -> Option<bool> {
    let first = in_deal(id, position, action, 0)?;
    (1..16)
        .all(|d| in_deal(id, position, action, d) == Some(first))
        .then_some(first)
}

/// The outcome of `action` in the first deal of the position (a cheap first look).
fn in_first_deal(id: &str, position: &[u8], action: &[u8]) -> Option<bool> {
    in_deal(id, position, action, 0)
}

/// A position found in seeded one-round matches of the strongest bot: the first decision (of
/// at most 40 moves) where, in each of 16 deals of what the seat cannot see and the rest played
/// by the strongest bot, one move of the seat wins the match and another loses it.
fn decisive_position(id: &str) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let game = registry::find(id).unwrap();
    let bot = game.info().bots.last().unwrap().clone();
    for k in 0..2000u64 {
        let seed = seed_of(k);
        let mut m = game.new_match(2, &one_round(id)).unwrap();
        let mut seq = started(m.as_mut(), &seed);
        while m.outcome().is_none() {
            let s = m.to_act()[0];
            let moves = m.legal_actions(s).unwrap();
            if (2..=40).contains(&moves.len()) {
                let pos = m.position(Viewer::Seat(s), s).unwrap();
                let first: Vec<Option<bool>> =
                    moves.iter().map(|a| in_first_deal(id, &pos, a)).collect();
                if first.contains(&Some(true)) && first.contains(&Some(false)) {
                    let sure = |want: bool| {
                        (0..moves.len()).find(|&i| {
                            first[i] == Some(want)
                                && in_every_deal(id, &pos, &moves[i]) == Some(want)
                        })
                    };
                    if let (Some(w), Some(l)) = (sure(true), sure(false)) {
                        return (pos, moves[w].clone(), moves[l].clone());
                    }
                }
            }
            seq = bot_step(m.as_mut(), s, &bot, &seed, seq);
        }
    }
    panic!("{id}: no decisive position in 2000 seeded matches");
}

/// Rat-a-Tat Cat's decisive position. Its seats seldom know the cards that decide a round (the
/// rows are face down): 2000 seeded one-round matches give no position of [`decisive_position`].
/// So a seeded one-round match of the strongest bot is played until a seat calls, and the last
/// turn of the other seat is set up in its position (what it knows and the piles, the rest of
/// the table as the match left it): its row four 9s it knows, the caller's row four 7s it knows
/// too (taken from the discard pile: public), a 0 on top of the discard pile above every other
/// 0, 1 and 2. Taking the 0 makes 27 against 28, a win; whatever is drawn (a 3 or more, a
/// Draw 2's two cards, a Swap of a 9 for a 7: 34 against 30) loses. The position checker deals
/// what the seat cannot see once and requires the rules' invariants, so the table is one the
/// rules allow.
fn decisive_rat_a_tat_cat_position() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    use tablier_core::proto::rat_a_tat_cat::{self as rtc, action::Kind as A, Card, Phase};
    let id = "rat_a_tat_cat";
    let game = registry::find(id).unwrap();
    let bot = game.info().bots.last().unwrap().clone();
    for k in 0..100u64 {
        let seed = seed_of(k);
        let mut m = game.new_match(2, &one_round(id)).unwrap();
        let mut seq = started(m.as_mut(), &seed);
        while m.outcome().is_none() {
            let s = m.to_act()[0];
            let mut p =
                rtc::Position::decode(m.position(Viewer::Seat(s), s).unwrap().as_slice()).unwrap();
            let view = p.view.as_mut().unwrap();
            if view.has_caller && view.phase == Phase::TurnStart as i32 {
                let (me, caller) = (s as usize, view.caller as usize);
                let card = |c: Card| c as i32;
                for slot in 0..4 {
                    p.known[4 * me + slot] = card(Card::Nine);
                    p.known[4 * caller + slot] = card(Card::Seven);
                }
                p.knowledge[me] = 0xff;
                p.knowledge[caller] = 0xf << (4 * caller);
                let mut discard = vec![card(Card::Zero); 3];
                discard.extend([card(Card::One); 4]);
                discard.extend([card(Card::Two); 4]);
                discard.push(card(Card::Zero));
                view.draw_pile_size = 54 - 8 - discard.len() as u32;
                view.discard_pile = discard;
                let pos = p.encode_to_vec();
                let take = rtc::Action {
                    kind: Some(A::TakeDiscard(rtc::TakeDiscard { slot: 1 })),
                };
                let draw = rtc::Action {
                    kind: Some(A::DrawFromPile(rtc::DrawFromPile {})),
                };
                let (take, draw) = (take.encode_to_vec(), draw.encode_to_vec());
                assert_eq!(in_every_deal(id, &pos, &take), Some(true));
                assert_eq!(in_every_deal(id, &pos, &draw), Some(false));
                return (pos, take, draw);
            }
            seq = bot_step(m.as_mut(), s, &bot, &seed, seq);
        }
    }
    panic!("{id}: no call in 100 seeded matches");
}

#[test]
fn a_move_that_clearly_wins_gets_the_higher_value_in_every_game() {
    // Every game the same way: a position where one move wins at once, for certain, and
    // another loses at once; the rollouts (which know only what the seat may see) must value
    // the first higher, by win share and by margin, and name it (or one as good) the best.
    for id in rollout_games() {
        let game = registry::find(id).unwrap();
        let (pos, wins, loses) = if id == "rat_a_tat_cat" {
            decisive_rat_a_tat_cat_position()
        } else {
            decisive_position(id)
        };
        let values = valued_moves(id, &game.evaluate_with(&pos, &settings(100, 1, 1)).unwrap());
        let value = |a: &[u8]| {
            let a = game.canonical_action(a).unwrap();
            values
                .iter()
                .find(|(b, _)| *b == a)
                .map(|(_, v)| *v)
                .unwrap_or_else(|| panic!("{id}: the move is not evaluated"))
        };
        let (w, l) = (value(&wins), value(&loses));
        let what = format!(
            "{id}: wins {} {w:?}, loses {} {l:?}",
            game.describe_action(&wins).unwrap(),
            game.describe_action(&loses).unwrap()
        );
        assert!(w.samples >= 50 && l.samples >= 50, "{what}");
        assert!(w.win_probability > l.win_probability + 0.5, "{what}");
        assert!(
            w.margin > l.margin + 3.0 * (w.margin_stderr + l.margin_stderr),
            "{what}"
        );
        let best = values
            .iter()
            .map(|(_, v)| (v.win_probability, v.margin))
            .fold((f64::MIN, f64::MIN), |a, b| if b > a { b } else { a });
        assert!(
            (w.win_probability, w.margin) >= best
                || (w.win_probability == best.0 && w.win_probability == 1.0),
            "{what}: best {best:?}"
        );
    }
}

#[test]
fn screening_gives_the_rollouts_to_the_best_moves_and_says_how_many_each_got() {
    // Qwirkle's many moves: `screen_to` 4 of them get the 40 rollouts, the rest fewer; the
    // same bytes whatever the threads; `best` among the moves valued on most deals.
    use tablier_core::proto::qwirkle;
    let game = registry::find("qwirkle").unwrap();
    let (m, seat) = mid_game_position("qwirkle", 2, 5, 12);
    let pos = m.position(Viewer::Seat(seat), seat).unwrap();
    let screened = |threads: u32| {
        let s = RolloutSettings {
            rollouts: 40,
            seed: 3,
            threads,
            screen_to: 4,
            ..Default::default()
        };
        game.evaluate_with(&pos, &s.encode_to_vec()).unwrap()
    };
    let one = screened(1);
    assert_eq!(one, screened(2));
    let e = qwirkle::Evaluation::decode(one.as_slice()).unwrap();
    let samples: Vec<u32> = e.actions.iter().map(|a| a.value.unwrap().samples).collect();
    assert!(samples.len() > 8, "{samples:?}");
    let full = samples.iter().filter(|&&n| n == 40).count();
    assert_eq!(full, 4, "{samples:?}");
    assert!(samples.iter().all(|&n| n >= 1), "{samples:?}");
    let played: u32 = samples.iter().sum();
    assert!(played < 40 * samples.len() as u32 / 2, "{played} playouts");
    let best = e.best_action.unwrap() as usize;
    assert_eq!(samples[best], 40);
    // Without screening every move gets them all.
    let e = qwirkle::Evaluation::decode(
        game.evaluate_with(&pos, &settings(6, 3, 1))
            .unwrap()
            .as_slice(),
    )
    .unwrap();
    assert!(e.actions.iter().all(|a| a.value.unwrap().samples == 6));
}
