//! Views, event redaction and the text rendering of a state.

use crate::game::Viewer;
use crate::proto::grid_knock as pb;

use super::rules::phase_name;
use super::state::{to_act_mask, Phase, State, NONE, NO_CARD};
use super::wire::{seat_list, wire_slot};

fn pb_phase(p: Phase) -> pb::Phase {
    match p {
        Phase::InitialReveal => pb::Phase::InitialReveal,
        Phase::ChooseSource => pb::Phase::ChooseSource,
        Phase::KnockWindow => pb::Phase::KnockWindow,
        Phase::KnockDecision => pb::Phase::KnockDecision,
        Phase::DecideDrawn => pb::Phase::DecideDrawn,
        Phase::SwapDiscard => pb::Phase::SwapDiscardCard,
        Phase::KnockerSwap => pb::Phase::KnockerSwap,
        Phase::Triples => pb::Phase::Triples,
        Phase::TakeFromKnocker => pb::Phase::TakeFromKnocker,
        Phase::ReturnSwap => pb::Phase::ReturnSwap,
        Phase::Over => pb::Phase::MatchOver,
        Phase::Aborted => pb::Phase::Aborted,
        _ => pb::Phase::Automatic,
    }
}

fn opt_card(v: i8) -> Option<i32> {
    (v != NO_CARD).then_some(v as i32)
}

fn opt_seat(s: u8) -> Option<u32> {
    (s != NONE).then_some(s as u32)
}

pub(super) fn build_view(st: &State, viewer: Viewer) -> pb::View {
    let n = st.n();
    let auditor = viewer == Viewer::Auditor;
    let me = match viewer {
        Viewer::Seat(s) if (s as usize) < n => Some(s as u8),
        _ => None,
    };
    let slots = (0..(12 * n) as u8)
        .map(|s| {
            if s == st.reserved_slot {
                pb::SlotView {
                    state: pb::SlotState::Reserved as i32,
                    value: None,
                }
            } else if !st.is_filled(s) {
                pb::SlotView {
                    state: pb::SlotState::Empty as i32,
                    value: None,
                }
            } else if st.is_up(s) {
                pb::SlotView {
                    state: pb::SlotState::FaceUp as i32,
                    value: Some(st.val[s as usize] as i32),
                }
            } else {
                pb::SlotView {
                    state: pb::SlotState::FaceDown as i32,
                    value: auditor.then_some(st.val[s as usize] as i32),
                }
            }
        })
        .collect();
    let own_answer = match me {
        Some(s) if st.answered >> s & 1 == 1 => {
            if st.knocked >> s & 1 == 1 {
                pb::KnockAnswer::Knock
            } else {
                pb::KnockAnswer::Pass
            }
        }
        _ => pb::KnockAnswer::Unspecified,
    };
    let y_visible =
        st.held_card != NO_CARD && (auditor || st.held_card_was_face_up || me == Some(st.knocker));
    let choices = |i: usize| -> Vec<pb::Slot> {
        st.init_choice[i][..st.init_cnt[i].min(2) as usize]
            .iter()
            .map(|&s| wire_slot(s))
            .collect()
    };
    let init_phase = st.phase == Phase::InitialReveal;
    pb::View {
        seats: n as u32,
        viewer: Some(viewer.to_proto()),
        phase: pb_phase(st.phase) as i32,
        active: st.active as u32,
        to_act: seat_list(to_act_mask(st)),
        round: st.round,
        dealer: st.dealer as u32,
        first_player: st.first as u32,
        slots,
        draw_pile_size: st.draw_len as u32,
        discard_pile: st.disc[..st.disc_len as usize]
            .iter()
            .map(|&v| v as i32)
            .collect(),
        drawn_card: opt_card(st.drawn_card),
        knock_eligible: seat_list(st.eligible),
        knock_answered: seat_list(st.answered),
        own_knock_answer: own_answer as i32,
        knockers: seat_list(st.knockers),
        knocker: opt_seat(st.knocker),
        knocker_holds_card: st.held_card != NO_CARD,
        held_card: if y_visible {
            opt_card(st.held_card)
        } else {
            None
        },
        taken_card: opt_card(st.taken_card),
        reserved_slot: (st.reserved_slot != NONE).then(|| wire_slot(st.reserved_slot)),
        exchanged_card: opt_card(st.exchanged_card),
        triples_owner: opt_seat(st.tri_owner),
        own_initial_choices: match me {
            Some(s) if init_phase => choices(s as usize),
            _ => vec![],
        },
        initial_done: if init_phase {
            seat_list(((0..n).filter(|&i| st.init_cnt[i] >= 2)).fold(0u8, |m, i| m | 1 << i))
        } else {
            vec![]
        },
        closer: opt_seat(st.closer),
        final_turn_taken: seat_list(st.final_taken),
        totals: st.totals[..n].iter().map(|&v| v as i64).collect(),
        last_round_scores: st.last[..n].iter().map(|&v| v as i64).collect(),
        turns: st.turns,
        draw_pile: if auditor {
            st.draw[..st.draw_len as usize]
                .iter()
                .map(|&v| v as i32)
                .collect()
        } else {
            vec![]
        },
        all_initial_choices: if auditor && init_phase {
            (0..n).flat_map(choices).collect()
        } else {
            vec![]
        },
        knocked: if auditor {
            seat_list(st.knocked)
        } else {
            vec![]
        },
        target_score: st.cfg.target_score as i64,
        winners: seat_list(st.winners),
        held_card_was_face_up: st.held_card != NO_CARD && st.held_card_was_face_up,
    }
}

pub(super) fn redact_event(e: &pb::Event, viewer: Viewer) -> pb::Event {
    use pb::event::Kind as K;
    let mut e = e.clone();
    if viewer == Viewer::Auditor {
        return e;
    }
    match &mut e.kind {
        Some(K::Dealt(d)) => {
            d.blocks.clear();
            d.draw_pile.clear();
        }
        Some(K::Reshuffled(r)) => r.draw_pile.clear(),
        Some(K::InitialChosen(c)) if !viewer.is_seat(c.seat) => c.slot = None,
        Some(K::KnockAnswered(k)) if !viewer.is_seat(k.seat) => {
            k.answer = pb::KnockAnswer::Sealed as i32
        }
        Some(K::KnockerSwapped(k)) if !k.removed_was_face_up && !viewer.is_seat(k.knocker) => {
            k.removed = None
        }
        _ => {}
    }
    e
}

pub(super) fn render_state(st: &State, viewer: Viewer) -> String {
    use std::fmt::Write;
    let v = build_view(st, viewer);
    let n = st.n();
    let mut out = String::new();
    let who = match viewer {
        Viewer::Seat(s) => format!("seat {s}"),
        Viewer::Spectator => "spectator".into(),
        Viewer::Auditor => "auditor".into(),
    };
    let _ = writeln!(
        out,
        "Grid Knock | round {} | {} | active P{} | to act {:?} | view: {who}",
        st.round,
        phase_name(st.phase),
        st.active,
        v.to_act
    );
    let top = st.discard_top().map_or("--".to_string(), |t| t.to_string());
    let _ = write!(
        out,
        "draw pile {} | discard top {top} ({} cards)",
        st.draw_len, st.disc_len
    );
    if let Some(x) = v.drawn_card {
        let _ = write!(out, " | in hand X={x}");
    }
    if let Some(k) = v.knocker {
        let _ = write!(out, " | knocker P{k}");
        if v.knocker_holds_card {
            let _ = write!(
                out,
                " holds Y={}",
                v.held_card.map_or("?".to_string(), |y| y.to_string())
            );
        }
    }
    if let Some(z) = v.taken_card {
        let _ = write!(out, " | taken Z={z}");
    }
    if let Some(w) = v.exchanged_card {
        let _ = write!(out, " | exchanged W={w}");
    }
    if !v.knockers.is_empty() {
        let _ = write!(out, " | knockers {:?}", v.knockers);
    }
    if let Some(c) = v.closer {
        let _ = write!(out, " | closer P{c}");
    }
    out.push('\n');
    // The ring, left to right: P(N-1) .. P0 (each block's col 4 touches the next block's col 1).
    let _ = write!(out, "      ");
    for i in (0..n).rev() {
        let _ = write!(out, "|P{i:<15}");
    }
    out.push_str("|\n");
    for r in 0..3 {
        let _ = write!(out, "row {} ", r + 1);
        for i in (0..n).rev() {
            out.push('|');
            for c in 0..4 {
                let s = i * 12 + r * 4 + c;
                let sv = &v.slots[s];
                let cell = match pb::SlotState::try_from(sv.state) {
                    Ok(pb::SlotState::FaceUp) => format!("{:>4}", sv.value.unwrap_or(0)),
                    Ok(pb::SlotState::FaceDown) => match sv.value {
                        Some(x) => format!("{:>4}", format!("?{x}")),
                        None => "   ?".into(),
                    },
                    Ok(pb::SlotState::Reserved) => "   *".into(),
                    _ => "   .".into(),
                };
                out.push_str(&cell);
            }
        }
        out.push_str("|\n");
    }
    let _ = writeln!(
        out,
        "totals {:?} | last round {:?} | turns {}",
        v.totals, v.last_round_scores, st.turns
    );
    out
}
