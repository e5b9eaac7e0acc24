//! Deciding: the legality of a move and the events it makes, the automatic steps that follow,
//! and the legal moves (who is awaited and a round's scores are read off the state, `state.rs`).

use crate::error::{CoreError, CoreResult};
use crate::proto::grid_knock as pb;
use crate::rng::Rng;

use super::state::{apply, Ev, Move};
use super::state::{eligible_knockers, initial_flip, score_round, take_targets, turn_end_result};
use super::state::{to_act_mask, triples, Phase, State, DECK, DECK_SIZE};
use super::wire::ev_to_pb;

fn emit(st: &mut State, evs: &mut Vec<Ev>, ev: Ev) -> CoreResult<()> {
    apply(st, &ev)?;
    evs.push(ev);
    Ok(())
}

fn deal_event(st: &State, rng: &mut Rng) -> Ev {
    let mut cards = [0i8; DECK_SIZE];
    let mut k = 0;
    for (v, c) in DECK {
        for _ in 0..c {
            cards[k] = v;
            k += 1;
        }
    }
    rng.shuffle(&mut cards);
    let n = st.n();
    let dealer = if st.round == 0 {
        rng.index(n) as u8
    } else {
        st.first
    };
    Ev::Dealt {
        round: st.round + 1,
        dealer,
        blocks_len: (12 * n) as u8,
        cards,
    }
}

/// Emits every automatic step until a decision is awaited (or the match is over).
pub fn auto_steps(st: &mut State, rng: &mut Rng, evs: &mut Vec<Ev>) -> CoreResult<()> {
    loop {
        let ev = match st.phase {
            Phase::DealPending => deal_event(st, rng),
            Phase::InitialFlipPending => {
                let (cards, len) = initial_flip(st);
                Ev::InitialRevealed { cards, len }
            }
            Phase::PassEmptyPending => Ev::EmptyPassed { seat: st.active },
            Phase::KnockClosePending => Ev::KnockWindowClosed {
                knockers: st.knocked,
            },
            Phase::Triples => {
                if triples(st, st.tri_owner).len > 0 {
                    return Ok(());
                }
                Ev::TriplesEnded {
                    seat: st.tri_owner,
                    automatic: true,
                }
            }
            Phase::TakeFromKnocker => {
                if take_targets(st) != 0 {
                    return Ok(());
                }
                Ev::HeldCardDiscarded {
                    knocker: st.knocker,
                    value: st.held_card,
                }
            }
            Phase::WDiscardPending => Ev::ExchangedCardDiscarded {
                seat: st.active,
                value: st.exchanged_card,
            },
            Phase::YPlacePending => Ev::HeldCardPlaced {
                knocker: st.knocker,
                slot: st.reserved_slot,
                value: st.held_card,
            },
            Phase::TurnEndPending => {
                let (closed, round_over, next, _, _) = turn_end_result(st);
                Ev::TurnEnded {
                    seat: st.active,
                    closed,
                    round_over,
                    next_player: next,
                }
            }
            Phase::RoundEndPending => Ev::RoundScored(Box::new(score_round(st))),
            Phase::AbortPending => Ev::MatchAborted { turns: st.turns },
            _ => return Ok(()),
        };
        emit(st, evs, ev)?;
    }
}

pub(super) fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::InitialReveal => "the initial reveal",
        Phase::ChooseSource => "choosing where to draw from",
        Phase::KnockWindow => "the knock window",
        Phase::KnockDecision => "the decision on the knocks",
        Phase::DecideDrawn => "deciding what to do with the drawn card",
        Phase::SwapDiscard => "swapping in the card taken from the discard pile",
        Phase::KnockerSwap => "the knocker's swap",
        Phase::Triples => "the triples window",
        Phase::TakeFromKnocker => "taking a card from the knocker",
        Phase::ReturnSwap => "swapping in the card taken from the knocker",
        Phase::Over | Phase::Aborted => "the end of the match",
        _ => "an automatic step",
    }
}

fn wrong_phase(st: &State) -> CoreError {
    CoreError::rule(
        "WRONG_PHASE",
        format!(
            "that action is not possible during {}",
            phase_name(st.phase)
        ),
    )
}

fn need_slot_in(st: &State, owner: u8, s: u8, whose: &str) -> CoreResult<()> {
    if !st.in_dom(owner, s) {
        return Err(CoreError::rule(
            "NOT_IN_DOMAIN",
            format!("that slot is not one of {whose} 15 cards"),
        ));
    }
    if !st.is_filled(s) {
        return Err(CoreError::rule("EMPTY_SLOT", "that slot is empty"));
    }
    Ok(())
}

/// Validates `mv` by `seat` and emits its events plus every automatic follow-up into `evs`,
/// applying them to `st` as it goes.
pub fn act(st: &mut State, seat: u8, mv: Move, rng: &mut Rng, evs: &mut Vec<Ev>) -> CoreResult<()> {
    if matches!(st.phase, Phase::Over | Phase::Aborted) {
        return Err(CoreError::game_over());
    }
    if (seat as usize) >= st.n() {
        return Err(CoreError::malformed(format!(
            "seat {seat} is not in this {}-seat match",
            st.n()
        )));
    }
    if to_act_mask(st) >> seat & 1 == 0 {
        return Err(CoreError::not_your_turn());
    }
    let a = st.active;
    let ev = match (st.phase, mv) {
        (Phase::InitialReveal, Move::RevealInitial(s)) => {
            if s / 12 != seat {
                return Err(CoreError::rule(
                    "NOT_OWN_BLOCK",
                    "the initial reveal flips a card of your own block",
                ));
            }
            if st.is_up(s) || st.init_choice[seat as usize].contains(&s) {
                return Err(CoreError::rule(
                    "NOT_FACE_DOWN",
                    "choose a face-down card you have not chosen yet",
                ));
            }
            Ev::InitialChosen { seat, slot: s }
        }
        (Phase::ChooseSource, Move::DrawFromPile) => {
            if st.draw_len == 0 {
                if st.disc_len < 2 {
                    return Err(CoreError::rule(
                        "DRAW_PILE_EMPTY",
                        "the draw pile is empty and cannot be rebuilt",
                    ));
                }
                let draw_pile_size = st.disc_len - 1;
                let len = draw_pile_size as usize;
                let mut draw_pile = [0i8; DECK_SIZE];
                draw_pile[..len].copy_from_slice(&st.disc[..len]);
                rng.shuffle(&mut draw_pile[..len]);
                let discard_top = st.disc[len];
                emit(
                    st,
                    evs,
                    Ev::Reshuffled {
                        draw_pile,
                        draw_pile_size,
                        discard_top,
                    },
                )?;
            }
            let value = st.draw[st.draw_len as usize - 1];
            Ev::Drawn {
                seat,
                value,
                knock_eligible: eligible_knockers(st),
            }
        }
        (Phase::ChooseSource, Move::TakeFromDiscard) => match st.discard_top() {
            Some(value) => Ev::TookDiscard { seat, value },
            None => {
                return Err(CoreError::rule(
                    "DISCARD_EMPTY",
                    "the discard pile is empty",
                ))
            }
        },
        (Phase::KnockWindow, Move::Knock) => Ev::KnockAnswered {
            seat,
            answer: pb::KnockAnswer::Knock,
        },
        (Phase::KnockWindow, Move::PassKnock) => Ev::KnockAnswered {
            seat,
            answer: pb::KnockAnswer::Pass,
        },
        (Phase::KnockDecision, Move::AcceptKnock(k)) => {
            if (k as usize) >= st.n() {
                return Err(CoreError::malformed(format!(
                    "seat {k} is not in this match"
                )));
            }
            if st.knockers >> k & 1 == 0 {
                return Err(CoreError::rule(
                    "NOT_A_KNOCKER",
                    format!("seat {k} did not knock"),
                ));
            }
            Ev::KnockAccepted { seat, knocker: k }
        }
        (Phase::KnockDecision, Move::RefuseKnocks) => Ev::KnocksRefused { seat },
        (Phase::DecideDrawn | Phase::SwapDiscard, Move::KeepSwap(s)) => {
            need_slot_in(st, a, s, "your")?;
            Ev::Kept {
                seat,
                slot: s,
                placed: st.drawn_card,
                removed: st.val[s as usize],
            }
        }
        (Phase::SwapDiscard, Move::DiscardAndReveal(_)) => {
            return Err(CoreError::rule(
                "MUST_SWAP",
                "a card taken from the discard pile must be swapped in",
            ))
        }
        (Phase::DecideDrawn, Move::DiscardAndReveal(s)) => {
            need_slot_in(st, a, s, "your")?;
            if st.is_up(s) {
                return Err(CoreError::rule(
                    "NOT_FACE_DOWN",
                    "discarding the drawn card means turning up one of your face-down cards",
                ));
            }
            Ev::DiscardedAndRevealed {
                seat,
                discarded: st.drawn_card,
                slot: s,
                revealed: st.val[s as usize],
            }
        }
        (Phase::KnockerSwap, Move::KnockerSwap(s)) => {
            need_slot_in(st, seat, s, "your")?;
            Ev::KnockerSwapped {
                knocker: seat,
                slot: s,
                placed: st.drawn_card,
                removed: st.val[s as usize],
                removed_was_face_up: st.is_up(s),
            }
        }
        (Phase::Triples, Move::DiscardTriple(cells)) => {
            let mut want = cells;
            want.sort_unstable();
            let t = triples(st, seat);
            let found = t.cells[..t.len].iter().find(|c| {
                let mut c = **c;
                c.sort_unstable();
                c == want
            });
            match found {
                Some(&c) => Ev::TripleDiscarded { seat, cells: c, value: st.val[c[0] as usize] },
                None => {
                    return Err(CoreError::rule(
                        "NOT_A_TRIPLE",
                        "those cells are not three identical face-up cards next to each other in a row or column of your domain",
                    ))
                }
            }
        }
        (Phase::Triples, Move::BadTriple) => {
            return Err(CoreError::rule(
                "NOT_A_TRIPLE",
                "a triple is exactly three different cells",
            ))
        }
        (Phase::Triples, Move::EndTriples) => Ev::TriplesEnded {
            seat,
            automatic: false,
        },
        (Phase::TakeFromKnocker, Move::TakeFromKnocker(s)) => {
            need_slot_in(st, st.knocker, s, "the knocker's")?;
            if st.in_dom(a, s) {
                return Err(CoreError::rule(
                    "IN_OWN_DOMAIN",
                    "that card is also one of your own 15 cards",
                ));
            }
            Ev::TookFromKnocker {
                seat,
                knocker: st.knocker,
                slot: s,
                value: st.val[s as usize],
            }
        }
        (Phase::ReturnSwap, Move::ReturnSwap(s)) => {
            need_slot_in(st, a, s, "your")?;
            Ev::ReturnSwapped {
                seat,
                slot: s,
                placed: st.taken_card,
                removed: st.val[s as usize],
            }
        }
        _ => return Err(wrong_phase(st)),
    };
    emit(st, evs, ev)?;
    auto_steps(st, rng, evs)
}

/// Every legal move of `seat`, in a deterministic order (domain cells row by row, d0..d4).
pub fn legal_moves(st: &State, seat: u8, out: &mut Vec<Move>) {
    out.clear();
    if (seat as usize) >= st.n() || to_act_mask(st) >> seat & 1 == 0 {
        return;
    }
    let dom = st.cfg.dom[st.active as usize];
    match st.phase {
        Phase::InitialReveal => {
            for s in seat * 12..seat * 12 + 12 {
                if st.is_filled(s) && !st.is_up(s) && !st.init_choice[seat as usize].contains(&s) {
                    out.push(Move::RevealInitial(s));
                }
            }
        }
        Phase::ChooseSource => {
            if st.draw_len > 0 || st.disc_len >= 2 {
                out.push(Move::DrawFromPile);
            }
            if st.disc_len > 0 {
                out.push(Move::TakeFromDiscard);
            }
        }
        Phase::KnockWindow => {
            out.push(Move::Knock);
            out.push(Move::PassKnock);
        }
        Phase::KnockDecision => {
            for k in 0..st.n() as u8 {
                if st.knockers >> k & 1 == 1 {
                    out.push(Move::AcceptKnock(k));
                }
            }
            out.push(Move::RefuseKnocks);
        }
        Phase::DecideDrawn | Phase::SwapDiscard => {
            for &s in &dom {
                if st.is_filled(s) {
                    out.push(Move::KeepSwap(s));
                }
            }
            if st.phase == Phase::DecideDrawn {
                for &s in &dom {
                    if st.is_filled(s) && !st.is_up(s) {
                        out.push(Move::DiscardAndReveal(s));
                    }
                }
            }
        }
        Phase::KnockerSwap => {
            for &s in &st.cfg.dom[seat as usize] {
                if st.is_filled(s) {
                    out.push(Move::KnockerSwap(s));
                }
            }
        }
        Phase::Triples => {
            let t = triples(st, seat);
            for c in &t.cells[..t.len] {
                out.push(Move::DiscardTriple(*c));
            }
            out.push(Move::EndTriples);
        }
        Phase::TakeFromKnocker => {
            let m = take_targets(st);
            for &s in &st.cfg.dom[st.knocker as usize] {
                if m >> s & 1 == 1 {
                    out.push(Move::TakeFromKnocker(s));
                }
            }
        }
        Phase::ReturnSwap => {
            for &s in &dom {
                if st.is_filled(s) {
                    out.push(Move::ReturnSwap(s));
                }
            }
        }
        _ => {}
    }
}

/// `close_knock_window` (AMB32): every seat still to answer passes.
pub(super) fn close_knock_window(state: &State, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
    if state.phase != Phase::KnockWindow {
        return Err(CoreError::rule(
            "NO_KNOCK_WINDOW",
            "no knock window is open",
        ));
    }
    let mut st = state.clone();
    let mut evs = Vec::with_capacity(12);
    let mut waiting = st.eligible & !st.answered;
    while waiting != 0 {
        let seat = waiting.trailing_zeros() as u8;
        waiting &= waiting - 1;
        emit(
            &mut st,
            &mut evs,
            Ev::KnockAnswered {
                seat,
                answer: pb::KnockAnswer::Pass,
            },
        )?;
    }
    auto_steps(&mut st, rng, &mut evs)?;
    Ok(evs.iter().map(ev_to_pb).collect())
}
