//! What leaves the core for a viewer: the view, the redaction of events and the text rendering
//! (hidden cards only for the seat that may see them, §7).

use super::cards::{card_name, NONE};
use super::scoring::{base_score, line_points, LINE_NAMES};
use super::state::{CellState, Phase, State};
use super::wire::card_pb;
use super::Carre;
use crate::game::{Game, Viewer};
use crate::proto::carre as pb;

use pb::event::Kind as Ev;

pub(super) fn view(s: &State, viewer: Viewer) -> pb::View {
    let phase = match s.phase {
        Phase::NotStarted => pb::Phase::NotStarted,
        Phase::Dealing => pb::Phase::Dealing,
        Phase::Drawing => pb::Phase::Drawing,
        Phase::Passing => pb::Phase::Passing,
        Phase::Action => pb::Phase::Action,
        Phase::Scoring => pb::Phase::Scoring,
        Phase::Ending => pb::Phase::Ending,
        Phase::Over => pb::Phase::Over,
    };
    let hand_cards = |h: u64| -> Vec<pb::Card> {
        let mut v = Vec::with_capacity(h.count_ones() as usize);
        let mut h = h;
        while h != 0 {
            v.push(card_pb(h.trailing_zeros() as u8));
            h &= h - 1;
        }
        v
    };
    let players = (0..2u32)
        .map(|p| pb::Player {
            seat: p,
            hand_count: s.hands[p as usize].count_ones(),
            hand: if viewer.sees_private_of(p) {
                hand_cards(s.hands[p as usize])
            } else {
                vec![]
            },
            total: s.totals[p as usize],
        })
        .collect();
    let squares = (0..2u8)
        .map(|o| {
            let lines = line_points(&s.mask[o as usize]);
            let raw: u32 = lines.iter().sum();
            pb::Square {
                owner: o as u32,
                cells: (0..9u8)
                    .map(|i| pb::Cell {
                        cell: i as u32 + 1,
                        state: match s.cell_state(o, i) {
                            CellState::Empty => pb::CellState::Empty,
                            CellState::Up => pb::CellState::FaceUp,
                            CellState::Down => pb::CellState::FaceDown,
                        } as i32,
                        pile: s
                            .pile(o, i)
                            .map(|e| pb::PileEntry {
                                card: if !e.down || viewer.sees_private_of(e.by as u32) {
                                    Some(card_pb(e.card))
                                } else {
                                    None
                                },
                                face_down: e.down,
                                placed_by: e.by as u32,
                            })
                            .collect(),
                    })
                    .collect(),
                line_points: lines.to_vec(),
                raw_points: raw,
                base_score: base_score(raw),
            }
        })
        .collect();
    let rounds = s.history[..s.n_history as usize]
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut tot = [0u32; 2];
            for h in &s.history[..=i] {
                tot[0] += h.score[0] as u32;
                tot[1] += h.score[1] as u32;
            }
            pb::RoundRecord {
                round: i as u32 + 1,
                end: if r.went_out == NONE {
                    pb::RoundEnd::Exhaustion
                } else {
                    pb::RoundEnd::WentOut
                } as i32,
                scores: (0..2)
                    .map(|p| pb::SeatRoundScore {
                        seat: p as u32,
                        raw_points: r.raw[p] as u32,
                        base_score: base_score(r.raw[p] as u32),
                        went_out: r.went_out == p as u8,
                        round_score: r.score[p] as u32,
                        total: tot[p],
                    })
                    .collect(),
            }
        })
        .collect();
    let can_go_out = matches!(viewer, Viewer::Seat(x) if x == s.current as u32)
        && s.phase == Phase::Action
        && s.check_go_out(s.current).is_ok();
    let result = if s.phase == Phase::Over {
        let (winners, result) = s.result();
        Some(pb::MatchEnded {
            totals: s.totals.to_vec(),
            winners,
            result: result as i32,
            rounds_played: s.n_history as u32,
        })
    } else {
        None
    };
    pb::View {
        viewer: Some(viewer.to_proto()),
        phase: phase as i32,
        round: s.round as u32,
        rounds_per_match: s.cfg.rounds as u32,
        first_starter: s.first_starter as u32,
        starter: s.starter as u32,
        dealer: 1 - s.starter as u32,
        current: s.current as u32,
        to_act: Carre::to_act(s).to_vec(),
        drew_this_turn: s.drew,
        players,
        squares,
        discard: s.discard[..s.n_discard as usize]
            .iter()
            .map(|&c| card_pb(c))
            .collect(),
        stock_size: s.stock_left() as u32,
        stock: if viewer == Viewer::Auditor {
            s.stock[s.stock_pos as usize..]
                .iter()
                .rev()
                .map(|&c| card_pb(c))
                .collect()
        } else {
            vec![]
        },
        rounds,
        can_go_out,
        went_out: if s.went_out == NONE {
            None
        } else {
            Some(s.went_out as u32)
        },
        result,
        allow_go_out_without_draw: s.cfg.go_out_without_draw,
        tiebreak_extra_rounds: s.cfg.tiebreak,
        cell_of_rank: s.cfg.cell_of_rank.iter().map(|&c| c as u32 + 1).collect(),
    }
}

pub(super) fn redact(event: &pb::Event, viewer: Viewer) -> Option<pb::Event> {
    if viewer == Viewer::Auditor {
        return Some(event.clone());
    }
    let mut e = event.clone();
    match e.kind.as_mut() {
        Some(Ev::RoundDealt(d)) => {
            d.stock.clear();
            for h in &mut d.hands {
                if !viewer.sees_private_of(h.seat) {
                    h.cards.clear();
                }
            }
        }
        Some(Ev::CardDrawn(d)) if !viewer.sees_private_of(d.seat) => d.card = None,
        Some(Ev::CardPlaced(p)) if p.face_down && !viewer.sees_private_of(p.seat) => p.card = None,
        _ => {}
    }
    Some(e)
}

pub(super) fn render(s: &State, viewer: Viewer) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Carré  round {}/{}  starter seat {}  stock {}  totals {}-{}",
        s.round,
        s.cfg.rounds,
        s.starter,
        s.stock_left(),
        s.totals[0],
        s.totals[1]
    );
    // One cell is 7 columns: the top card (`7S`), `##` for a face-down card the viewer did
    // not place, `vJC` for one it may see, `..` when empty; `xN` gives a pile's height.
    let cell_txt = |o: u8, i: u8| -> String {
        let t = s.top[o as usize][i as usize];
        if t == NONE {
            return format!("{:^7}", "..");
        }
        let e = s.log[t as usize];
        let h = s.pile(o, i).count();
        let top = if !e.down {
            card_name(e.card)
        } else if viewer.sees_private_of(e.by as u32) {
            format!("v{}", card_name(e.card))
        } else {
            "##".into()
        };
        if h > 1 {
            format!("{:^7}", format!("{top}x{h}"))
        } else {
            format!("{top:^7}")
        }
    };
    for o in [1u8, 0u8] {
        let raw = s.raw(o);
        let hand = if viewer.sees_private_of(o as u32) {
            let mut h = s.hands[o as usize];
            let mut v = Vec::new();
            while h != 0 {
                v.push(card_name(h.trailing_zeros() as u8));
                h &= h - 1;
            }
            v.join(" ")
        } else {
            format!("{} card(s)", s.hands[o as usize].count_ones())
        };
        let lines: Vec<String> = line_points(&s.mask[o as usize])
            .iter()
            .zip(LINE_NAMES)
            .filter(|(v, _)| **v > 0)
            .map(|(v, n)| format!("{n}:{v}"))
            .collect();
        let _ = writeln!(
            out,
            "seat {o}: raw {raw} -> {} [{}]   hand: {hand}",
            base_score(raw),
            lines.join(" ")
        );
        for r in 0..3u8 {
            let row: Vec<String> = (0..3u8)
                .map(|c| format!("[{}]", cell_txt(o, r * 3 + c)))
                .collect();
            let _ = writeln!(out, "   {}", row.join(""));
        }
    }
    let top = if s.n_discard > 0 {
        card_name(s.discard[s.n_discard as usize - 1])
    } else {
        "--".into()
    };
    let _ = writeln!(out, "discard: {} ({} cards)", top, s.n_discard);
    match s.phase {
        Phase::Over => {
            let (w, _) = s.result();
            let _ = writeln!(
                out,
                "match over: winners {w:?}{}",
                if s.aborted { " (aborted)" } else { "" }
            );
        }
        Phase::Action => {
            let _ = writeln!(
                out,
                "to act: seat {}{}",
                s.current,
                if s.drew { " (has drawn)" } else { "" }
            );
        }
        p => {
            let _ = writeln!(out, "phase {p:?}");
        }
    }
    out
}
