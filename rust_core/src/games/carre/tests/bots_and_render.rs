//! Bots, the text rendering, the uniform random move and the simulated rounds.

use super::*;

#[test]
fn bots_play_legal_moves_and_greedy_beats_random() {
    let cfg = Config::default();
    let mut greedy_wins = 0;
    let mut games = 0;
    for m in 0..120u64 {
        let greedy_seat = (m % 2) as u32;
        let mut rng = Rng::from_u64(5000 + m);
        let mut s = State::new(cfg);
        for e in Carre::start(&s, &mut rng).unwrap() {
            Carre::evolve(&mut s, &e).unwrap();
        }
        while Carre::outcome(&s).is_none() {
            let seat = s.current as u32;
            let bot = if seat == greedy_seat {
                "greedy"
            } else {
                "random"
            };
            let a = Carre::bot_action(&s, seat, bot, &mut rng).unwrap();
            assert!(
                Carre::legal_actions(&s, seat).contains(&a),
                "{bot} played an illegal {a:?}"
            );
            for e in Carre::decide(&s, seat, &a, &mut rng).unwrap() {
                Carre::evolve(&mut s, &e).unwrap();
            }
        }
        games += 1;
        if Carre::outcome(&s).unwrap().winners == vec![greedy_seat] {
            greedy_wins += 1;
        }
    }
    eprintln!("greedy won {greedy_wins}/{games} against random");
    assert!(
        greedy_wins * 10 >= games * 8,
        "greedy won {greedy_wins}/{games}"
    );
}

#[test]
fn render_hides_what_the_viewer_may_not_see() {
    let mut s = pos(1);
    pile(&mut s, 0, 5, &["5S", "KD"]);
    give(&mut s, 1, &["JC", "2H"]);
    give(&mut s, 0, &["QD", "9C"]);
    fill(&mut s, 10);
    act(&mut s, 1, &place("JC", false, 5));
    let mine = Carre::render(&s, Viewer::Seat(1));
    let theirs = Carre::render(&s, Viewer::Seat(0));
    let spect = Carre::render(&s, Viewer::Spectator);
    assert!(
        mine.contains("vJC") && !theirs.contains("JC") && !spect.contains("JC"),
        "{mine}\n{theirs}"
    );
    assert!(theirs.contains("##") && theirs.contains("QD") && !mine.contains("QD"));
    assert!(
        spect.contains("hand: 1 card(s)") && spect.contains("##x3"),
        "{spect}"
    );
    if std::env::var_os("CARRE_SHOW_RENDER").is_some() {
        eprintln!("{mine}\n{theirs}\n{spect}");
    }
}

#[test]
fn random_move_is_uniform_over_the_legal_moves() {
    let mut rng = Rng::from_u64(8);
    let mut n = 0;
    random_states(20, 400, "random", |s| {
        let mut moves = Moves::new();
        s.gen_moves(s.current, &mut moves);
        if s.phase != Phase::Action {
            assert_eq!(s.random_move(s.current, &mut rng), None);
            return;
        }
        let legal = moves.as_slice();
        let mut hits = vec![0u32; legal.len()];
        let draws = 40 * legal.len() as u32;
        for _ in 0..draws {
            let mv = s.random_move(s.current, &mut rng).unwrap();
            let i = legal
                .iter()
                .position(|&m| m == mv)
                .expect("random_move gave an illegal move");
            hits[i] += 1;
        }
        // Every legal move is reachable, none grossly over-drawn.
        assert!(hits.iter().all(|&h| h > 0 && h < 120), "{hits:?}");
        n += 1;
    });
    assert!(n > 500);
}

#[test]
fn simulated_rounds_stay_in_bounds() {
    let mut rng = Rng::from_u64(1);
    for _ in 0..2000 {
        let [a, b] = simulate_random_round(&mut rng);
        assert!(a <= 16 && a != 15 && b <= 16 && b != 15);
    }
}
