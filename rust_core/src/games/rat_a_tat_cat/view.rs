//! What a viewer sees: the view, the redacted events, the terminal rendering.

use std::fmt::Write as _;

use crate::game::{Game, Viewer};
use crate::proto::rat_a_tat_cat as pb;

use pb::event::Kind as E;

use super::state::{
    bit, card_name, from_pbc, is_power, pbc, Phase, State, CARD_FACE_DOWN, CARD_HIDDEN_NUMBER,
    NONE, REASONS,
};
use super::RatATatCat;

pub(super) fn view(s: &State, viewer: Viewer) -> pb::View {
    let n = s.n();
    let auditor = viewer == Viewer::Auditor;
    let rows_public = auditor || (s.phase == Phase::Reveal && s.revealed);
    let me = match viewer {
        Viewer::Seat(p) if (p as usize) < n => Some(p as usize),
        _ => None,
    };
    let players = (0..n)
        .map(|p| {
            let active = s.is_active(p);
            let row = if active || auditor && s.rows[p][0] != NONE {
                s.rows[p]
                    .iter()
                    .map(|&c| if rows_public { pbc(c) } else { CARD_FACE_DOWN })
                    .collect()
            } else {
                vec![]
            };
            let known = match me {
                Some(v) if s.cfg.memory_aid && active => (0..4)
                    .map(|sl| {
                        if s.known[v] & bit(p, sl) != 0 {
                            pbc(s.rows[p][sl])
                        } else {
                            CARD_FACE_DOWN
                        }
                    })
                    .collect(),
                _ => vec![],
            };
            pb::PlayerView {
                seat: p as u32,
                active,
                total_score: s.totals[p],
                last_round_score: s.last_scores[p] as u32,
                row,
                known,
                last_round_row: if s.last_rows[p][0] == NONE {
                    vec![]
                } else {
                    s.last_rows[p].iter().map(|&c| pbc(c)).collect()
                },
            }
        })
        .collect();
    let pending = if s.pending == NONE {
        0
    } else if auditor || is_power(s.pending) || me == Some(s.current as usize) {
        pbc(s.pending)
    } else {
        CARD_HIDDEN_NUMBER
    };
    pb::View {
        phase: s.phase.to_pb() as i32,
        round: s.round,
        dealer: s.dealer as u32,
        current_seat: s.current as u32,
        to_act: RatATatCat::to_act(s).to_vec(),
        has_caller: s.caller != NONE,
        caller: if s.caller != NONE { s.caller as u32 } else { 0 },
        players,
        draw_pile_size: s.draw.len() as u32,
        discard_pile: s.discard.bottom_first_pb(),
        pending,
        turns_this_round: s.turns_in_round,
        turns_total: s.total_turns,
        over: s.phase == Phase::Over,
        winners: State::seat_list(s.winners),
        end_reason: REASONS
            .get(s.end_reason as usize)
            .copied()
            .unwrap_or("")
            .into(),
        aborted: s.aborted,
        draw_pile: if auditor {
            s.draw.bottom_first_pb()
        } else {
            vec![]
        },
        knowledge: if auditor {
            s.known[..n].to_vec()
        } else {
            vec![]
        },
        viewer: Some(viewer.to_proto()),
        stop_after_round: s.stop_requested,
    }
}

pub(super) fn redact(event: &pb::Event, viewer: Viewer) -> Option<pb::Event> {
    if viewer == Viewer::Auditor {
        return Some(event.clone());
    }
    let mut e = event.clone();
    match e.kind.as_mut()? {
        E::RoundDealt(d) => {
            for r in d.rows.iter_mut() {
                r.cards.iter_mut().for_each(|c| *c = CARD_FACE_DOWN);
            }
            d.draw_pile.clear();
        }
        E::PileReshuffled(d) => d.draw_pile.clear(),
        E::InitialPeek(d) if !viewer.sees_private_of(d.seat) => {
            d.slot1 = 0;
            d.slot4 = 0;
        }
        E::CardDrawn(d)
            if !viewer.sees_private_of(d.seat)
                && from_pbc(d.card).is_some_and(|c| !is_power(c)) =>
        {
            d.card = CARD_HIDDEN_NUMBER;
        }
        E::CardReplaced(d) if !viewer.sees_private_of(d.seat) => d.placed = CARD_HIDDEN_NUMBER,
        E::CardPeeked(d) if !viewer.sees_private_of(d.seat) => d.card = 0,
        _ => {}
    }
    Some(e)
}

pub(super) fn render(s: &State, viewer: Viewer) -> String {
    let v = RatATatCat::view(s, viewer);
    let name = |c: i32| -> &'static str {
        match c {
            0 | CARD_FACE_DOWN => "?",
            CARD_HIDDEN_NUMBER => "#",
            c => card_name((c - 1) as u8),
        }
    };
    let mut out = String::new();
    let _ = write!(
        out,
        "Rat-a-Tat Cat  round {}  dealer P{}  {:?}",
        v.round,
        v.dealer,
        Phase::to_pb(s.phase)
    );
    if s.phase.awaiting() {
        let _ = write!(out, "  P{} to act", v.current_seat);
    }
    if v.has_caller {
        let _ = write!(out, "  caller P{}", v.caller);
    }
    out.push('\n');
    for p in &v.players {
        let mark = if s.phase.awaiting() && p.seat == v.current_seat {
            '>'
        } else {
            ' '
        };
        let _ = write!(out, "{mark}P{} ", p.seat);
        if !p.active {
            let _ = write!(out, "(out)             ");
        } else {
            out.push('[');
            for (i, &c) in p.row.iter().enumerate() {
                let k = p.known.get(i).copied().unwrap_or(0);
                let shown = if c != 0 {
                    name(c)
                } else if k != 0 {
                    name(k)
                } else {
                    "?"
                };
                let _ = write!(out, "{shown:>3}");
            }
            out.push_str(" ]");
        }
        let _ = writeln!(
            out,
            "  total {:>3}  last {:>2}",
            p.total_score, p.last_round_score
        );
    }
    let _ = write!(out, " draw {:>2}  discard", v.draw_pile_size);
    // Top first on the terminal (the view lists the pile bottom first).
    for &c in v.discard_pile.iter().rev().take(8) {
        let _ = write!(out, " {}", name(c));
    }
    if v.discard_pile.len() > 8 {
        let _ = write!(out, " ...({})", v.discard_pile.len());
    }
    if v.pending != 0 {
        let _ = write!(out, "  in hand: {}", name(v.pending));
    }
    out.push('\n');
    if v.over {
        let _ = writeln!(
            out,
            " over: {} winners {:?}{}",
            v.end_reason,
            v.winners,
            if v.aborted { " (aborted)" } else { "" }
        );
    }
    out
}
