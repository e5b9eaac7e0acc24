//! The inline `SeatRow` wire format, mutated bytes, and the game driven through the registry.

use super::*;

/// `SeatRow` as prost would generate it from the proto.
#[derive(Clone, PartialEq, prost::Message)]
struct GeneratedSeatRow {
    #[prost(uint32, tag = "1")]
    seat: u32,
    #[prost(enumeration = "pb::Card", repeated, tag = "2")]
    cards: Vec<i32>,
}

#[test]
fn inline_seat_rows_have_the_generated_wire_format() {
    for (seat, cards) in [
        (0, [0, 0, 0, 0]),
        (5, [1, 13, 0, 7]),
        (1, [10, 11, 12, 13]),
        (127, [2, 2, 2, 2]),
    ] {
        let row = SeatRow {
            seat,
            cards: cards.into(),
        };
        let generated = GeneratedSeatRow {
            seat,
            cards: cards.to_vec(),
        };
        assert_eq!(row.encode_to_vec(), generated.encode_to_vec());
        assert_eq!(row.encoded_len(), generated.encoded_len());
        assert_eq!(SeatRow::decode(&*generated.encode_to_vec()).unwrap(), row);
        let dealt = pb::RoundDealt {
            rows: vec![row, row],
            ..Default::default()
        };
        assert_eq!(
            pb::RoundDealt::decode(&*dealt.encode_to_vec()).unwrap(),
            dealt
        );
    }
    // Unpacked cards (another encoder's choice) read the same.
    let mut unpacked = Vec::new();
    prost::encoding::uint32::encode(1, &3, &mut unpacked);
    prost::encoding::int32::encode_repeated(2, &[4, 5, 6, 7], &mut unpacked);
    assert_eq!(
        SeatRow::decode(&*unpacked).unwrap(),
        SeatRow {
            seat: 3,
            cards: [4, 5, 6, 7].into()
        }
    );
    // A stored row of five cards reads as a row of none, which a replay refuses.
    let five = GeneratedSeatRow {
        seat: 1,
        cards: vec![1, 2, 3, 4, 5],
    }
    .encode_to_vec();
    let mut twice = five.clone();
    twice.extend(
        GeneratedSeatRow {
            seat: 1,
            cards: vec![1, 2, 3, 4],
        }
        .encode_to_vec(),
    );
    for bytes in [five, twice] {
        let row = SeatRow::decode(&*bytes).unwrap();
        assert!(row.cards.is_empty());
    }
}

#[test]
fn mutated_events_and_actions_never_panic() {
    // Record a match's states and events, then apply byte-mutated events to the states and
    // decide byte-mutated actions: errors are fine, panics are not.
    let config = cfg(4);
    let mut s = RatATatCat::initial(&config);
    let mut rng = Rng::from_u64(99);
    let mut states = vec![s.clone()];
    let mut events = RatATatCat::start(&s, &mut rng).unwrap();
    for e in &events {
        RatATatCat::evolve(&mut s, e).unwrap();
    }
    let mut actions = vec![];
    while RatATatCat::outcome(&s).is_none() {
        let seat = s.current as u32;
        let a = RatATatCat::bot_action(&s, seat, "random", &mut rng).unwrap();
        actions.push(a);
        let evs = RatATatCat::decide(&s, seat, &a, &mut rng).unwrap();
        for e in &evs {
            RatATatCat::evolve(&mut s, e).unwrap();
            states.push(s.clone());
        }
        events.extend(evs);
    }
    for i in 0..30_000usize {
        let st = &states[rng.index(states.len())];
        let mut bytes = events[rng.index(events.len())].encode_to_vec();
        if !bytes.is_empty() {
            for _ in 0..1 + rng.index(3) {
                let k = rng.index(bytes.len());
                bytes[k] = rng.next_u64() as u8;
            }
        }
        if let Ok(e) = pb::Event::decode(bytes.as_slice()) {
            let mut t = st.clone();
            let _ = RatATatCat::evolve(&mut t, &e);
            let _ = RatATatCat::redact(&e, Viewer::Seat(i as u32 % 4));
        }
        let mut ab = actions[rng.index(actions.len())].encode_to_vec();
        if !ab.is_empty() {
            let k = rng.index(ab.len());
            ab[k] = rng.next_u64() as u8;
        }
        if let Ok(a) = pb::Action::decode(ab.as_slice()) {
            for seat in 0..5 {
                let _ = RatATatCat::decide(st, seat, &a, &mut Rng::from_u64(i as u64));
            }
        }
        let _ = RatATatCat::render(st, Viewer::Seat(i as u32 % 4));
    }
}

#[test]
fn registry_drives_the_game_with_bytes() {
    let game = crate::registry::find("rat_a_tat_cat").expect("registered");
    assert_eq!(game.info().bots, vec!["random", "evaluator", "memory"]);
    let mut m = game.new_match(3, &Options::new()).unwrap();
    let seed = [9u8; 32];
    let mut seq = 1;
    for e in m.start(&mut Rng::for_command(&seed, seq)).unwrap() {
        m.apply(&e.payload).unwrap();
        seq += 1;
    }
    let seat = m.to_act()[0];
    assert!(matches!(
        m.decide(seat, &[0xff, 0xff], &mut Rng::from_u64(1)),
        Err(CoreError::Malformed(_))
    ));
    assert!(matches!(
        m.decide(7, &draw().encode_to_vec(), &mut Rng::from_u64(1)),
        Err(CoreError::Malformed(_))
    ));
    let a = m.bot_action(seat, "memory", &mut Rng::from_u64(1)).unwrap();
    let h0 = m.state_hash();
    for e in m
        .decide(seat, &a, &mut Rng::for_command(&seed, seq))
        .unwrap()
    {
        m.apply(&e.payload).unwrap();
    }
    assert_ne!(h0, m.state_hash());
    assert!(m
        .render(Viewer::Seat(seat))
        .unwrap()
        .contains("Rat-a-Tat Cat"));
    assert!(matches!(m.apply(&[0x0a, 0x00]), Err(CoreError::Corrupt(_))));
}
