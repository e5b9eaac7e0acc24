//! Rules the test vectors miss: the turn limit, the administrative cap, options, refused moves.

use super::round_vectors::{dealt, quiet_turn};
use super::turn_vectors::{tv1_state, tv6_swap_phase};
use super::*;

#[test]
fn turn_limit_safeguard_reveals_from_left_of_dealer() {
    let mut s = dealt(2, 1, &[("max_turns_per_round", "3")]);
    for _ in 0..2 {
        quiet_turn(&mut s);
        play(&mut s, end());
    }
    quiet_turn(&mut s);
    let evs = play(&mut s, end());
    let Some(E::TurnEnded(t)) = &evs[0].kind else {
        panic!()
    };
    assert!(t.round_over && t.turn_limit_reached);
    assert_eq!(s.round, 2);
}

#[test]
fn admin_cap_aborts() {
    let mut s = dealt(2, 1, &[("admin_turn_cap", "5")]);
    for _ in 0..5 {
        quiet_turn(&mut s);
        play(&mut s, end());
    }
    let o = RatATatCat::outcome(&s).expect("aborted");
    assert!(o.aborted && o.winners.is_empty() && o.reason == "ADMIN_TURN_CAP");
    assert!(RatATatCat::to_act(&s).is_empty());
    assert_eq!(
        crate::game::decide_checked::<RatATatCat>(&s, 0, &draw(), &mut Rng::from_u64(1)),
        Err(CoreError::game_over())
    );
}

#[test]
fn options_are_validated() {
    let bad = |k: &str, v: &str| {
        let o: Options = [(k.to_string(), v.to_string())].into_iter().collect();
        assert!(
            matches!(
                RatATatCat::checked_config(3, &o),
                Err(CoreError::InvalidOption(_))
            ),
            "{k}={v}"
        );
    };
    bad("colour", "red");
    bad("match_mode", "untimed");
    bad("point_limit", "0");
    bad("point_limit", "ten");
    bad("rounds", "-1");
    bad("first_dealer", "3");
    bad("memory_aid", "yes");
    bad("max_turns_per_round", "1000001");
    assert!(RatATatCat::checked_config(1, &Options::new()).is_err());
    assert!(RatATatCat::checked_config(7, &Options::new()).is_err());
    let c = cfg_with(
        6,
        &[
            ("point_limit", "200"),
            ("first_dealer", "5"),
            ("memory_aid", "on"),
        ],
    );
    assert_eq!(
        (c.point_limit, c.first_dealer, c.memory_aid),
        (200, Some(5), true)
    );
}

#[test]
fn malformed_wrong_phase_and_wrong_seat_are_refused() {
    let s = tv1_state();
    let mut rng = Rng::from_u64(1);
    assert_eq!(
        crate::game::decide_checked::<RatATatCat>(&s, 1, &draw(), &mut rng),
        Err(CoreError::not_your_turn())
    );
    assert!(matches!(
        RatATatCat::decide(&s, 0, &pb::Action::default(), &mut rng),
        Err(CoreError::Malformed(_))
    ));
    for a in [
        take(0),
        take(5),
        take(u32::MAX),
        replace(0),
        peek(9),
        swap(0, 1, 1),
        swap(1, 7, 1),
        swap(1, 1, 0),
    ] {
        assert!(
            matches!(
                RatATatCat::decide(&s, 0, &a, &mut rng),
                Err(CoreError::Malformed(_))
            ),
            "{a:?}"
        );
    }
    for a in [
        replace(1),
        discard(),
        power(),
        peek(1),
        swap(1, 1, 1),
        skip(),
        call(),
        end(),
    ] {
        assert_eq!(reason(refused(&s, a)), "WRONG_PHASE");
    }
    let mut t = s.clone();
    play(&mut t, draw());
    for a in [take(1), draw(), peek(1), skip(), end(), call()] {
        assert_eq!(reason(refused(&t, a)), "WRONG_PHASE");
    }
    if !is_power(t.pending) {
        assert_eq!(reason(refused(&t, power())), "NOT_A_POWER_CARD");
    }
    // Eliminated swap target.
    let mut u = tv6_swap_phase();
    u.active &= !(1 << 1);
    u.rows[1] = [NONE; 4];
    assert_eq!(reason(refused(&u, swap(1, 1, 1))), "TARGET_ELIMINATED");
    assert_eq!(legal(&u).len(), 17);
    // Not started / events that do not fit.
    let fresh = RatATatCat::initial(&cfg(2));
    assert_eq!(
        reason(RatATatCat::decide(&fresh, 0, &draw(), &mut rng).unwrap_err()),
        "NOT_STARTED"
    );
    let mut v = s.clone();
    for bad in [
        pb::Event::default(),
        ev(E::Called(pb::Called { seat: 0 })),
        ev(E::CardDrawn(pb::CardDrawn {
            seat: 1,
            card: 1,
            draw_pile_size: 44,
        })),
        ev(E::CardDrawn(pb::CardDrawn {
            seat: 0,
            card: 99,
            draw_pile_size: 44,
        })),
        ev(E::DiscardTaken(pb::DiscardTaken {
            seat: 0,
            slot: 7,
            taken: 5,
            replaced: 4,
        })),
        ev(E::RevealDraw(pb::RevealDraw {
            seat: 0,
            slot: 1,
            card: 1,
        })),
        ev(E::MatchEnded(pb::MatchEnded::default())),
    ] {
        assert!(
            matches!(RatATatCat::evolve(&mut v, &bad), Err(CoreError::Corrupt(_))),
            "{bad:?}"
        );
    }
}
