//! What each viewer sees (§7): the view, the redaction of events, and the text rendering.

use super::bots::match_winners;
use super::cards::*;
use super::state::State;
use super::wire::{ev, mask_to_pb, to_pb, trump_pb};
use super::Democratie;
use crate::game::{Game, Seat, Viewer};
use crate::proto::democratie as pb;

pub(super) fn view(state: &State, viewer: Viewer) -> pb::View {
    let n = state.n();
    let to_act = Democratie::to_act(state);
    let own = match viewer {
        Viewer::Seat(s) if (s as usize) < n => Some(s as usize),
        _ => None,
    };
    let auditor = viewer == Viewer::Auditor;
    let over = state.phase == pb::Phase::MatchEnd;
    pb::View {
        seats: n as u32,
        target: state.cfg.target,
        phase: state.phase as i32,
        deal_no: state.deal_no,
        dealer: state.dealer as u32,
        day: state.day as u32,
        trick_no: state.trick_no as u32,
        tricks_in_day: if state.day == 0 {
            0
        } else {
            day_size(n, state.day) as u32
        },
        vote_card: to_pb(state.vote_card),
        trump: trump_pb(state.trump),
        vote_pile_count: state.vote_len as u32,
        stock_count: (state.stock_end - state.stock_pos) as u32,
        discard: mask_to_pb(state.discard),
        seat_info: (0..n)
            .map(|i| pb::SeatPublic {
                seat: i as u32,
                hand_count: state.hands[i].count_ones(),
                committed: state.commits[i] != NO_CARD,
                captured_count: state.captured[i].count_ones(),
                tribes: state.tribes[i],
                awaited: to_act.contains(i as Seat),
            })
            .collect(),
        to_act: to_act.to_vec(),
        viewer: Some(viewer.to_proto()),
        hand: own.map(|s| mask_to_pb(state.hands[s])).unwrap_or_default(),
        my_commit: own.map(|s| to_pb(state.commits[s])).unwrap_or(0),
        last_trick: state.last_trick.map(|t| pb::LastTrick {
            day: t.day as u32,
            trick_no: t.trick_no as u32,
            vote_card: to_pb(t.vote),
            trump: trump_pb(t.trump),
            played: t.played[..n].iter().map(|&c| to_pb(c)).collect(),
            tie: t.winner == NOBODY,
            winner: if t.winner == NOBODY {
                0
            } else {
                t.winner as u32
            },
        }),
        over,
        winners: match_winners(state),
        aborted: state.aborted,
        max_deals: state.cfg.max_deals,
        hidden: auditor.then(|| pb::Hidden {
            stock: state
                .stock_slice()
                .iter()
                .rev()
                .map(|&c| to_pb(c))
                .collect(),
            vote_pile: state.vote_pile[..state.vote_len as usize]
                .iter()
                .map(|&c| to_pb(c))
                .collect(),
            hands: (0..n)
                .map(|i| pb::DealtHand {
                    seat: i as u32,
                    count: state.hands[i].count_ones(),
                    cards: mask_to_pb(state.hands[i]),
                })
                .collect(),
            commits: state.commits[..n].iter().map(|&c| to_pb(c)).collect(),
            captured: (0..n)
                .map(|i| pb::DealtHand {
                    seat: i as u32,
                    count: state.captured[i].count_ones(),
                    cards: mask_to_pb(state.captured[i]),
                })
                .collect(),
        }),
    }
}

pub(super) fn redact(event: &pb::Event, viewer: Viewer) -> Option<pb::Event> {
    use pb::event::Kind as K;
    if viewer == Viewer::Auditor {
        return Some(event.clone());
    }
    let kind = match &event.kind {
        Some(K::DeckShuffled(e)) => K::DeckShuffled(pb::DeckShuffled {
            deck: vec![],
            ..e.clone()
        }),
        Some(K::DayDealt(e)) => K::DayDealt(pb::DayDealt {
            hands: e
                .hands
                .iter()
                .map(|h| pb::DealtHand {
                    seat: h.seat,
                    count: h.count,
                    cards: if viewer.is_seat(h.seat) {
                        h.cards.clone()
                    } else {
                        vec![]
                    },
                })
                .collect(),
            vote_pile: vec![],
            ..e.clone()
        }),
        Some(K::CardCommitted(e)) => K::CardCommitted(pb::CardCommitted {
            seat: e.seat,
            card: if viewer.is_seat(e.seat) { e.card } else { 0 },
        }),
        Some(k) => k.clone(),
        None => return Some(event.clone()),
    };
    Some(ev(kind))
}

pub(super) fn render(state: &State, viewer: Viewer) -> String {
    use std::fmt::Write;
    let n = state.n();
    let names = |m: u64| cards_of(m).map(card_name).collect::<Vec<_>>().join(" ");
    let mut s = String::new();
    let trump = match state.trump {
        0..=3 => (SUITS[state.trump as usize] as char).to_string(),
        NO_TRUMP => "none".into(),
        _ => "-".into(),
    };
    let _ = writeln!(
        s,
        "Démocratie  deal {} day {} trick {}/{}  dealer P{}  target {}  [{:?}]",
        state.deal_no,
        state.day,
        state.trick_no,
        if state.day == 0 {
            0
        } else {
            day_size(n, state.day)
        },
        state.dealer,
        state.cfg.target,
        state.phase
    );
    let _ = writeln!(
        s,
        "vote {} (trump {})  vote pile {}  stock {}  discard [{}]",
        card_name(state.vote_card),
        trump,
        state.vote_len,
        state.stock_end - state.stock_pos,
        names(state.discard)
    );
    for i in 0..n {
        let mine = viewer.sees_private_of(i as Seat);
        let commit = match (state.commits[i] != NO_CARD, mine) {
            (false, _) => "   ".to_string(),
            (true, true) => format!("[{}]", card_name(state.commits[i])),
            (true, false) => "[##]".to_string(),
        };
        let hand = if mine {
            names(state.hands[i])
        } else {
            format!("{} cards", state.hands[i].count_ones())
        };
        let _ = writeln!(
            s,
            "P{i}{} tribes {:>2}  captured {:>2}  {commit:<5} hand: {hand}",
            if state.dealer as usize == i { "*" } else { " " },
            state.tribes[i],
            state.captured[i].count_ones()
        );
    }
    if let Some(t) = state.last_trick {
        let played: Vec<String> = (0..n)
            .map(|i| format!("P{i} {}", card_name(t.played[i])))
            .collect();
        let res = if t.winner == NOBODY {
            "tie".to_string()
        } else {
            format!("P{} wins", t.winner)
        };
        let _ = writeln!(
            s,
            "last trick: vote {}  {}  -> {res}",
            card_name(t.vote),
            played.join(", ")
        );
    }
    if state.phase == pb::Phase::MatchEnd {
        if state.aborted {
            let _ = writeln!(s, "match stopped by the deal cap");
        } else {
            let _ = writeln!(s, "P{} wins the match", state.winner);
        }
    }
    s
}
