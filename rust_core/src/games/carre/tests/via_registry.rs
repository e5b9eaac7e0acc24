//! Carré through the type-erased registry, as the service drives it: protobuf bytes in and out.

use crate::error::CoreError;
use crate::game::{Options, Viewer};
use crate::proto::carre as pb;
use crate::registry;
use crate::rng::Rng;
use prost::Message;

#[test]
fn carre_is_registered_and_plays_through_bytes() {
    let g = registry::find("carre").unwrap();
    let info = g.info();
    assert_eq!((info.min_players, info.max_players), (2, 2));
    assert_eq!(info.action_type, "tablier.carre.v1.Action");
    assert_eq!(info.view_type, "tablier.carre.v1.View");
    assert_eq!(info.bots, ["random", "evaluator", "greedy"]);
    assert!(info
        .options
        .iter()
        .any(|o| o.name == "rounds_per_match" && o.default_value == "4"));
    assert!(matches!(
        g.new_match(3, &Options::new()),
        Err(CoreError::InvalidOption(_))
    ));
    let mut bad = Options::new();
    bad.insert("jokers".into(), "2".into());
    assert!(matches!(
        g.new_match(2, &bad),
        Err(CoreError::InvalidOption(_))
    ));

    let mut m = g.new_match(2, &Options::new()).unwrap();
    let seed = [9u8; 32];
    let mut seq = 1u64;
    let evs = m.start(&mut Rng::for_command(&seed, seq)).unwrap();
    assert_eq!(
        evs.iter().map(|e| e.kind).collect::<Vec<_>>(),
        ["match_started", "round_dealt", "card_drawn"]
    );
    for e in &evs {
        m.apply(&e.payload).unwrap();
    }
    seq += evs.len() as u64;
    let mut rounds = 0;
    while m.outcome().is_none() {
        let seat = m.to_act()[0];
        // Undecodable bytes and an idle seat are refused.
        assert!(matches!(
            m.decide(seat, &[0xFF, 0xFF, 0xFF], &mut Rng::for_command(&seed, seq)),
            Err(CoreError::Malformed(_))
        ));
        let action = m
            .bot_action(seat, "greedy", &mut Rng::for_command(&seed, seq))
            .unwrap();
        assert!(matches!(
            m.decide(1 - seat, &action, &mut Rng::for_command(&seed, seq)),
            Err(CoreError::Rule { .. })
        ));
        assert!(m.legal_actions(seat).unwrap().contains(&action));
        let evs = m
            .decide(seat, &action, &mut Rng::for_command(&seed, seq))
            .unwrap();
        for e in &evs {
            m.apply(&e.payload).unwrap();
            assert_eq!(m.event_kind(&e.payload).unwrap(), e.kind);
            // The opponent never receives a card it may not see.
            let seen = m
                .redact(&e.payload, Viewer::Seat(1 - seat))
                .unwrap()
                .unwrap();
            let ev = pb::Event::decode(seen.as_slice()).unwrap();
            if let Some(pb::event::Kind::CardPlaced(p)) = &ev.kind {
                assert_eq!(p.card.is_some(), !p.face_down);
            }
            if e.kind == "round_scored" {
                rounds += 1;
            }
        }
        seq += evs.len() as u64;
        let copy = m.clone_box();
        assert_eq!(copy.state_hash(), m.state_hash());
        let view = pb::View::decode(m.view(Viewer::Seat(seat)).unwrap().as_slice()).unwrap();
        assert!(view.players[1 - seat as usize].hand.is_empty());
    }
    assert_eq!(rounds, 4);
    let out = m.outcome().unwrap();
    assert_eq!(out.scores.len(), 2);
    assert!(!out.aborted && !out.winners.is_empty());
    assert!(m.render(Viewer::Spectator).unwrap().contains("match over"));
    assert!(matches!(
        m.decide(0, &[], &mut Rng::for_command(&seed, seq)),
        Err(CoreError::Rule {
            reason: "GAME_OVER",
            ..
        })
    ));
}
