//! The bots against each other.

use super::*;

#[test]
fn bots_play_legal_moves_and_memory_beats_random() {
    // Heads-up, fixed rounds: the memory bot (seat 0) against random (seat 1).
    let config = cfg_with(2, &[("match_mode", "fixed_rounds"), ("rounds", "3")]);
    let mut better = 0;
    let games = 100;
    for g in 0..games {
        let mut s = RatATatCat::initial(&config);
        let mut rng = Rng::from_u64(g);
        for e in RatATatCat::start(&s, &mut rng).unwrap() {
            RatATatCat::evolve(&mut s, &e).unwrap();
        }
        let mut steps = 0;
        while RatATatCat::outcome(&s).is_none() {
            let seat = s.current as u32;
            let bot = if seat == 0 { "memory" } else { "random" };
            let a = RatATatCat::bot_action(&s, seat, bot, &mut rng).unwrap();
            assert!(
                RatATatCat::legal_actions(&s, seat).contains(&a),
                "{bot} chose an illegal {a:?}"
            );
            for e in RatATatCat::decide(&s, seat, &a, &mut rng).unwrap() {
                RatATatCat::evolve(&mut s, &e).unwrap();
            }
            steps += 1;
            assert!(steps < 100_000);
        }
        let o = RatATatCat::outcome(&s).unwrap();
        if o.scores[0] < o.scores[1] {
            better += 1;
        }
    }
    assert!(
        better > games * 7 / 10,
        "memory bot won only {better} of {games}"
    );
}
