//! Démocratie through the type-erased registry, as the service drives it: the platform's turn
//! check must not hide the game's own rejection codes (docs/rules/democratie.md AMB16, TV19 step 2, TV20;
//! AMB18 in the game's docs).

use crate::error::CoreError;
use crate::game::Viewer;
use crate::proto::democratie as pb;
use crate::registry::{self, DynMatch};
use crate::rng::Rng;
use prost::Message;

fn reason<T: std::fmt::Debug>(r: Result<T, CoreError>) -> &'static str {
    match r {
        Err(CoreError::Rule { reason, message }) => {
            crate::words::refusal_plain(&message).unwrap();
            reason
        }
        other => panic!("expected a rule refusal, got {other:?}"),
    }
}

fn commit(card: i32) -> Vec<u8> {
    pb::Action {
        kind: Some(pb::action::Kind::CommitCard(pb::CommitCard { card })),
    }
    .encode_to_vec()
}

fn view(m: &dyn DynMatch, seat: u32) -> pb::View {
    pb::View::decode(m.view(Viewer::Seat(seat)).unwrap().as_slice()).unwrap()
}

#[test]
fn a_seat_that_committed_gets_already_committed_and_a_finished_match_wrong_phase() {
    let game = registry::find("democratie").unwrap();
    let mut m = game.new_match(3, &Default::default()).unwrap();
    let seed = [4u8; 32];
    let mut seq = 0u64;
    let apply = |m: &mut Box<dyn DynMatch>, evs: Vec<registry::EncodedEvent>, seq: &mut u64| {
        for e in evs {
            m.apply(&e.payload).unwrap();
            *seq += 1;
        }
    };
    let opening = m.start(&mut Rng::for_command(&seed, 1)).unwrap();
    apply(&mut m, opening, &mut seq);
    let mut checked_mid_trick = 0;
    while m.outcome().is_none() {
        let to_act = m.to_act();
        let s = to_act[0];
        let hand = view(m.as_ref(), s).hand;
        let evs = m
            .decide(s, &commit(hand[0]), &mut Rng::for_command(&seed, seq + 1))
            .unwrap();
        apply(&mut m, evs, &mut seq);
        if m.outcome().is_none() && m.to_act().len() + 1 == to_act.len() {
            // TV19 step 2: the seat that just committed is not awaited, and a second commit,
            // even of a card it still holds, is ALREADY_COMMITTED (not NOT_YOUR_TURN).
            assert!(!m.to_act().contains(&s));
            if let Some(&still) = view(m.as_ref(), s).hand.first() {
                assert_eq!(
                    reason(m.decide(s, &commit(still), &mut Rng::for_command(&seed, seq + 1))),
                    "ALREADY_COMMITTED"
                );
            }
            // AMB16 order: ALREADY_COMMITTED comes before CARD_NOT_IN_HAND.
            assert_eq!(
                reason(m.decide(s, &commit(hand[0]), &mut Rng::for_command(&seed, seq + 1))),
                "ALREADY_COMMITTED"
            );
            checked_mid_trick += 1;
        }
    }
    assert!(checked_mid_trick > 10);
    // TV20: a commit once the match is over (MATCH_END) is WRONG_PHASE, not GAME_OVER, for
    // every seat; a seat outside the match is still malformed.
    for s in 0..3 {
        assert_eq!(
            reason(m.decide(s, &commit(1), &mut Rng::for_command(&seed, seq + 1))),
            "WRONG_PHASE"
        );
    }
    assert!(matches!(
        m.decide(3, &commit(1), &mut Rng::for_command(&seed, seq + 1)),
        Err(CoreError::Malformed(_))
    ));
}

#[test]
fn other_games_keep_the_platform_reasons() {
    // Games without a more precise reason: an idle seat is NOT_YOUR_TURN, a finished match GAME_OVER.
    for game in registry::games() {
        if game.id() == "democratie" {
            continue;
        }
        let info = game.info();
        let bot = info.bots.last().unwrap();
        let mut m = game
            .new_match(info.min_players, &Default::default())
            .unwrap();
        let seed = [7u8; 32];
        let mut seq = 0u64;
        for e in m.start(&mut Rng::for_command(&seed, 1)).unwrap() {
            m.apply(&e.payload).unwrap();
            seq += 1;
        }
        let mut idle_checked = false;
        while m.outcome().is_none() {
            let to_act = m.to_act();
            let s = to_act[0];
            let action = m
                .bot_action(s, bot, &mut Rng::for_command(&seed, seq + (1 << 40)))
                .unwrap();
            if let Some(idle) = (0..info.min_players).find(|i| !to_act.contains(i)) {
                assert_eq!(
                    reason(m.decide(idle, &action, &mut Rng::for_command(&seed, seq + 1))),
                    "NOT_YOUR_TURN",
                    "{}",
                    info.id
                );
                idle_checked = true;
            }
            for e in m
                .decide(s, &action, &mut Rng::for_command(&seed, seq + 1))
                .unwrap()
            {
                m.apply(&e.payload).unwrap();
                seq += 1;
            }
        }
        assert!(idle_checked, "{}", info.id);
        assert_eq!(
            reason(m.decide(0, &[], &mut Rng::for_command(&seed, seq + 1))),
            "GAME_OVER",
            "{}",
            info.id
        );
    }
}
