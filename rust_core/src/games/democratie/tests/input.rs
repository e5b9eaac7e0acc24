//! Input from the wire: the inline `TrickRevealed` encoding, malformed and illegal commands,
//! options, and the game driven through protobuf bytes.

use super::*;

/// `TrickRevealed` as prost would generate it from the proto.
#[derive(Clone, PartialEq, prost::Message)]
struct GeneratedTrickRevealed {
    #[prost(uint32, tag = "1")]
    day: u32,
    #[prost(uint32, tag = "2")]
    trick_no: u32,
    #[prost(enumeration = "pb::Card", tag = "3")]
    vote_card: i32,
    #[prost(enumeration = "pb::Suit", tag = "4")]
    trump: i32,
    #[prost(enumeration = "pb::Card", repeated, tag = "5")]
    played: Vec<i32>,
}

#[test]
fn inline_trick_reveals_have_the_generated_wire_format() {
    let cases = [
        (0, 0, 0, 0, vec![]),
        (1, 7, 12, 3, vec![1, 52, 0]),
        (2, 12, 53, 0, vec![5, 6, 7, 8, 9, 10]),
        (2, 1, 1, 4, vec![0, 0]),
    ];
    for (day, trick_no, vote_card, trump, played) in cases {
        let generated = GeneratedTrickRevealed {
            day,
            trick_no,
            vote_card,
            trump,
            played: played.clone(),
        };
        let inline = TrickRevealed {
            day,
            trick_no,
            vote_card,
            trump,
            played: played.iter().copied().collect(),
        };
        assert_eq!(inline.encode_to_vec(), generated.encode_to_vec());
        assert_eq!(inline.encoded_len(), generated.encoded_len());
        assert_eq!(
            TrickRevealed::decode(&*generated.encode_to_vec()).unwrap(),
            inline
        );
        let event = ev(pb::event::Kind::TrickRevealed(inline));
        assert_eq!(pb::Event::decode(&*event.encode_to_vec()).unwrap(), event);
    }
    // Seven cards in a trick of at most six seats: read as none, refused on replay.
    let seven = GeneratedTrickRevealed {
        played: vec![1; 7],
        ..Default::default()
    }
    .encode_to_vec();
    assert!(TrickRevealed::decode(&*seven).unwrap().played.is_empty());
}

#[test]
fn malformed_and_illegal_input_is_refused_without_panic() {
    let st = started(3, 2);
    let mut rng = Rng::from_u64(0);
    let held = cards_of(st.hands[0]).next().unwrap();
    assert!(matches!(
        Democratie::decide(&st, 3, &commit(held), &mut rng),
        Err(CoreError::Malformed(_))
    ));
    assert!(matches!(
        Democratie::decide(&st, u32::MAX, &commit(held), &mut rng),
        Err(CoreError::Malformed(_))
    ));
    assert!(matches!(
        Democratie::decide(&st, 0, &pb::Action { kind: None }, &mut rng),
        Err(CoreError::Malformed(_))
    ));
    for code in [0, -1, 51, i32::MAX, i32::MIN] {
        let a = pb::Action {
            kind: Some(pb::action::Kind::CommitCard(pb::CommitCard { card: code })),
        };
        assert!(
            matches!(
                Democratie::decide(&st, 0, &a, &mut rng),
                Err(CoreError::Malformed(_))
            ),
            "{code}"
        );
    }
    // A Joker that is not in a 3-player deck is simply not in hand.
    assert_eq!(
        rule_reason(Democratie::decide(&st, 0, &commit(X1), &mut rng)),
        "CARD_NOT_IN_HAND"
    );
    // Another seat's card: same error as any other missing card.
    let theirs = cards_of(st.hands[1]).next().unwrap();
    assert_eq!(
        Democratie::decide(&st, 0, &commit(theirs), &mut rng).unwrap_err(),
        Democratie::decide(&st, 0, &commit(X2), &mut rng).unwrap_err()
    );
    // Before the start.
    let fresh = Democratie::initial(&config(3));
    assert_eq!(
        rule_reason(Democratie::decide(&fresh, 0, &commit(held), &mut rng)),
        "WRONG_PHASE"
    );
    assert!(
        Democratie::to_act(&fresh).is_empty() && Democratie::legal_actions(&fresh, 0).is_empty()
    );
    assert!(Democratie::legal_actions(&st, 9).is_empty());
    assert!(Democratie::start(&st, &mut rng).is_err());
    // Bad events are Corrupt and leave the state as it was.
    let bad = [
        pb::Event { kind: None },
        ev(pb::event::Kind::CardCommitted(pb::CardCommitted {
            seat: 9,
            card: to_pb(held),
        })),
        ev(pb::event::Kind::CardCommitted(pb::CardCommitted {
            seat: 0,
            card: 0,
        })),
        ev(pb::event::Kind::CardCommitted(pb::CardCommitted {
            seat: 0,
            card: 999,
        })),
        ev(pb::event::Kind::CardCommitted(pb::CardCommitted {
            seat: 0,
            card: to_pb(theirs),
        })),
        ev(pb::event::Kind::TrickResolved(pb::TrickResolved::default())),
        ev(pb::event::Kind::DayDealt(pb::DayDealt::default())),
        ev(pb::event::Kind::DeckShuffled(pb::DeckShuffled {
            deck: vec![1; 48],
            deck_size: 48,
            deal_no: 1,
            ..Default::default()
        })),
        ev(pb::event::Kind::MatchEnded(pb::MatchEnded::default())),
        ev(pb::event::Kind::MatchStarted(pb::MatchStarted::default())),
        ev(pb::event::Kind::VoteCardFlipped(
            pb::VoteCardFlipped::default(),
        )),
        ev(pb::event::Kind::DealScored(pb::DealScored::default())),
    ];
    for e in &bad {
        let mut s2 = st;
        assert!(
            matches!(Democratie::evolve(&mut s2, e), Err(CoreError::Corrupt(_))),
            "{e:?}"
        );
        assert_eq!(s2, st);
    }
    // A stored deal that disagrees with the shuffle is refused on replay.
    let mut st0 = Democratie::initial(&config(3));
    let mut evs = Democratie::start(&st0, &mut Rng::from_u64(3)).unwrap();
    if let Some(pb::event::Kind::DayDealt(d)) = &mut evs[2].kind {
        d.hands.swap(0, 1);
    }
    Democratie::evolve(&mut st0, &evs[0]).unwrap();
    Democratie::evolve(&mut st0, &evs[1]).unwrap();
    assert!(matches!(
        Democratie::evolve(&mut st0, &evs[2]),
        Err(CoreError::Corrupt(_))
    ));
}

#[test]
fn options_are_checked() {
    let mut o = Options::new();
    assert_eq!(
        Democratie::checked_config(4, &o).unwrap(),
        Config {
            seats: 4,
            target: 7,
            max_deals: 200
        }
    );
    assert!(matches!(
        Democratie::checked_config(1, &o),
        Err(CoreError::InvalidOption(_))
    ));
    assert!(matches!(
        Democratie::checked_config(7, &o),
        Err(CoreError::InvalidOption(_))
    ));
    o.insert("target".into(), "10".into());
    assert_eq!(Democratie::checked_config(2, &o).unwrap().target, 10);
    for bad in ["0", "-3", "abc", "1001", ""] {
        o.insert("target".into(), bad.into());
        assert!(
            matches!(
                Democratie::checked_config(2, &o),
                Err(CoreError::InvalidOption(_))
            ),
            "{bad}"
        );
    }
    let mut o = Options::new();
    o.insert("max_deals".into(), "0".into());
    assert!(matches!(
        Democratie::checked_config(2, &o),
        Err(CoreError::InvalidOption(_))
    ));
    let mut o = Options::new();
    o.insert("jokers".into(), "2".into());
    let Err(CoreError::InvalidOption(m)) = Democratie::checked_config(2, &o) else {
        panic!()
    };
    assert!(m.contains("jokers"));
}

#[test]
fn registered_and_driven_through_protobuf_bytes() {
    let g = crate::registry::find("democratie").unwrap();
    assert_eq!(g.info().bots, vec!["random", "evaluator", "tactician"]);
    assert!(g.new_match(7, &Options::new()).is_err());
    let mut m = g.new_match(4, &Options::new()).unwrap();
    for e in m.start(&mut Rng::from_u64(1)).unwrap() {
        m.apply(&e.payload).unwrap();
    }
    let seat = m.to_act()[0];
    assert!(matches!(
        m.decide(seat, &[0xff, 0xff, 0xff], &mut Rng::from_u64(2)),
        Err(CoreError::Malformed(_))
    ));
    assert!(matches!(
        m.decide(9, &[], &mut Rng::from_u64(2)),
        Err(CoreError::Malformed(_))
    ));
    let a = m
        .bot_action(seat, "tactician", &mut Rng::from_u64(2))
        .unwrap();
    let evs = m.decide(seat, &a, &mut Rng::from_u64(2)).unwrap();
    assert_eq!(evs[0].kind, "card_committed");
    let other = (seat + 1) % 4;
    let red = m
        .redact(&evs[0].payload, Viewer::Seat(other))
        .unwrap()
        .unwrap();
    assert_eq!(
        red,
        ev(pb::event::Kind::CardCommitted(pb::CardCommitted {
            seat,
            card: 0
        }))
        .encode_to_vec()
    );
    for e in &evs {
        m.apply(&e.payload).unwrap();
    }
    assert!(!m.view(Viewer::Seat(other)).unwrap().is_empty());
    assert!(m.render(Viewer::Spectator).unwrap().contains("[##]"));
}
