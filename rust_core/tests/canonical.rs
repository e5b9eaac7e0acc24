//! What a server stores of a client's action is what the rules decode of it: every game's
//! `canonical_action` drops unknown fields and keeps a legal action's own encoding.

use tablier_core::error::CoreError;
use tablier_core::registry::games;
use tablier_core::rng::Rng;

/// Field 2047, length-delimited, `n` bytes: an unknown field no game's Action has.
fn padding(n: usize) -> Vec<u8> {
    let mut out = vec![0xfa, 0x7f];
    let mut len = n;
    loop {
        let b = (len & 0x7f) as u8;
        len >>= 7;
        if len == 0 {
            out.push(b);
            break;
        }
        out.push(b | 0x80);
    }
    out.extend(std::iter::repeat_n(b'x', n));
    out
}

#[test]
fn canonical_actions_drop_unknown_fields_and_keep_legal_actions() {
    for game in games() {
        let info = game.info();
        let mut m = game
            .new_match(info.min_players, &Default::default())
            .unwrap();
        for e in m.start(&mut Rng::for_command(&[7; 32], 1)).unwrap() {
            m.apply(&e.payload).unwrap();
        }
        let seat = m.to_act()[0];
        let legal = m.legal_actions(seat).unwrap();
        assert!(!legal.is_empty(), "{}: no legal action to try", info.id);
        for action in legal.iter().take(20) {
            assert_eq!(
                &game.canonical_action(action).unwrap(),
                action,
                "{}",
                info.id
            );
            let padded = [action.as_slice(), &padding(100_000)].concat();
            assert_eq!(
                &game.canonical_action(&padded).unwrap(),
                action,
                "{}: padding kept",
                info.id
            );
        }
        assert!(
            matches!(
                game.canonical_action(&[0xff, 0xff, 0xff]),
                Err(CoreError::Malformed(_))
            ),
            "{}",
            info.id
        );
    }
}
