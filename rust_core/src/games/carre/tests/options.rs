//! Options: two seats only, the options checked, `cell_of_rank`, tie-break rounds and their cap.

use super::*;

#[test]
fn only_two_seats_and_options_are_checked() {
    for seats in [0, 1, 3, 4] {
        assert!(matches!(
            Carre::checked_config(seats, &Options::new()),
            Err(CoreError::InvalidOption(_))
        ));
    }
    let bad = [
        ("rounds", "4"),
        ("rounds_per_match", "0"),
        ("rounds_per_match", "13"),
        ("rounds_per_match", "four"),
        ("allow_go_out_without_draw", "yes"),
        ("tiebreak_extra_rounds", "1"),
        ("cell_of_rank", "12345678"),
        ("cell_of_rank", "123456788"),
        ("cell_of_rank", "023456789"),
        ("first_starter", "2"),
    ];
    for (k, v) in bad {
        // A refusal names a known option by its label; an unknown one by the key sent.
        let named = Carre::options()
            .iter()
            .find(|o| o.name == k)
            .map_or(k, |o| o.label);
        match Carre::checked_config(2, &opts(&[(k, v)])) {
            Err(CoreError::InvalidOption(msg)) => assert!(msg.contains(named), "{msg}"),
            other => panic!("{k}={v} accepted: {other:?}"),
        }
    }
    let cfg = Carre::checked_config(
        2,
        &opts(&[("cell_of_rank", "276951438"), ("rounds_per_match", "12")]),
    )
    .unwrap();
    assert_eq!(cfg.cell_of_rank, [1, 6, 5, 8, 4, 0, 3, 2, 7]);
    assert_eq!(cfg.rounds, 12);
    assert_eq!(
        Carre::checked_config(2, &Options::new()).unwrap(),
        Config::default()
    );
}

#[test]
fn cell_of_rank_moves_the_pip_cells() {
    let mut s = pos(0);
    // option "276951438": Ace on cell 2, Two on 7, ..., Nine on cell 8
    s.cfg.cell_of_rank = [1, 6, 5, 8, 4, 0, 3, 2, 7];
    give(&mut s, 0, &["AS", "9H"]);
    fill(&mut s, 10);
    assert_eq!(reason(try_act(&s, 0, &place("AS", true, 1))), "WRONG_CELL");
    assert!(try_act(&s, 0, &place("AS", true, 2)).is_ok());
    assert!(try_act(&s, 0, &place("9H", false, 8)).is_ok());
    assert_eq!(reason(try_act(&s, 0, &place("9H", false, 9))), "WRONG_CELL");
}

#[test]
fn tiebreak_rounds_and_the_round_cap() {
    let mut s = State::new(Config {
        tiebreak: true,
        rounds: 1,
        ..Config::default()
    });
    s.round = 1;
    s.record_round(RoundRec {
        went_out: NONE,
        raw: [3, 3],
        score: [3, 3],
    });
    assert_eq!(
        s.phase,
        Phase::Dealing,
        "a tie after the last round plays on"
    );
    s.round = 2;
    s.record_round(RoundRec {
        went_out: NONE,
        raw: [4, 3],
        score: [4, 3],
    });
    assert_eq!(s.phase, Phase::Ending);
    let mut s = State::new(Config {
        tiebreak: true,
        rounds: 1,
        ..Config::default()
    });
    for r in 1..=1 + MAX_EXTRA_ROUNDS {
        assert_ne!(s.phase, Phase::Ending);
        s.round = r;
        s.record_round(RoundRec {
            went_out: NONE,
            raw: [0, 0],
            score: [0, 0],
        });
    }
    assert_eq!(s.phase, Phase::Ending);
    Carre::auto_steps(&mut s, &mut Rng::from_u64(0), &mut vec![]).unwrap();
    let o = Carre::outcome(&s).unwrap();
    assert!(o.aborted && o.winners.is_empty() && o.reason == "ROUND_CAP");
}
