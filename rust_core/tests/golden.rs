//! Golden recorded matches: one seeded bot match per game and player count, played through
//! the type-erased registry exactly as the service drives it (protobuf bytes in and out).
//! Each event's kind and payload digest, and the final state hash, must match the recording
//! in `tests/golden/`: a rules or encoding change that alters a recorded match fails here, so
//! stored event logs keep replaying. Re-record deliberately with `TABLIER_BLESS=1`.

use std::fmt::Write;
use std::path::PathBuf;

use sha2::{Digest, Sha256};
use tablier_core::registry::games;
use tablier_core::rng::Rng;

const MAX_STEPS: usize = 20_000;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn record(game_id: &str, seats: u32) -> String {
    let game = tablier_core::registry::find(game_id).unwrap();
    let bot = game.info().bots.last().cloned().unwrap();
    let mut m = game.new_match(seats, &Default::default()).unwrap();
    let seed = Sha256::digest(format!("golden/{game_id}/{seats}")).into();
    let mut out = format!("# {game_id}, {seats} seats, bot {bot}\n");
    let mut seq = 0u64;
    let append = |m: &mut Box<dyn tablier_core::registry::DynMatch>, events: Vec<tablier_core::registry::EncodedEvent>, seq: &mut u64, out: &mut String| {
        for e in events {
            *seq += 1;
            m.apply(&e.payload).unwrap();
            let _ = writeln!(out, "{seq} {} {}", e.kind, &hex(&Sha256::digest(&e.payload))[..16]);
        }
    };
    let opening = m.start(&mut Rng::for_command(&seed, 1)).unwrap();
    append(&mut m, opening, &mut seq, &mut out);
    let mut steps = 0;
    while m.outcome().is_none() {
        steps += 1;
        assert!(steps <= MAX_STEPS, "{game_id}: no end after {MAX_STEPS} moves");
        let seat = m.to_act()[0];
        let action = m.bot_action(seat, &bot, &mut Rng::for_command(&seed, seq + 1 + (1 << 40))).unwrap();
        let events = m.decide(seat, &action, &mut Rng::for_command(&seed, seq + 1)).unwrap();
        append(&mut m, events, &mut seq, &mut out);
    }
    let _ = writeln!(out, "state {}", hex(&m.state_hash()));
    out
}

#[test]
fn golden_matches_replay_identically() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var_os("TABLIER_BLESS").is_some();
    let mut checked = 0;
    for game in games() {
        let info = game.info();
        let mut counts = vec![info.min_players, info.max_players.min(4)];
        counts.dedup();
        for seats in counts {
            let got = record(&info.id, seats);
            let path = dir.join(format!("{}-{seats}.txt", info.id));
            if bless {
                std::fs::write(&path, &got).unwrap();
            }
            let want = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e} (record with TABLIER_BLESS=1)", path.display()));
            if got != want {
                let line = got.lines().zip(want.lines()).position(|(a, b)| a != b).map_or(0, |i| i + 1);
                panic!("{} differs from the recording (first at line {line})", path.display());
            }
            checked += 1;
        }
    }
    assert!(checked >= games().len(), "every game has a recording");
}
