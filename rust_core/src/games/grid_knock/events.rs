//! The compact internal moves and events ([`Move`], [`Ev`]) and [`apply`], the only state
//! transition, which re-validates every event against the state it follows.

use crate::error::{CoreResult, ensure};

use super::bots::forfeit_winners;
use super::rules::{eligible_knockers, initial_flip, score_round, take_targets, to_act_mask, turn_end_result};
use super::state::{Ctx, deck_histogram, DECK_SIZE, hist_add, NO_CARD, NONE, Phase, State};
use super::triples::triples;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    RevealInitial(u8),
    Draw,
    TakeDiscard,
    Knock,
    PassKnock,
    Accept(u8),
    Refuse,
    Keep(u8),
    DiscardReveal(u8),
    KnockerSwap(u8),
    Triple([u8; 3]),
    /// A `discard_triple` that does not name exactly three distinct cells.
    BadTriple,
    EndTriples,
    Take(u8),
    Return(u8),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ev {
    Dealt {
        round: u32,
        dealer: u8,
        nblock: u8,
        cards: [i8; DECK_SIZE],
    },
    InitialChosen {
        seat: u8,
        slot: u8,
    },
    InitialRevealed {
        slots: [u8; 16],
        vals: [i8; 16],
        len: u8,
    },
    Reshuffled {
        pile: [i8; DECK_SIZE],
        len: u8,
        top: i8,
    },
    Drawn {
        seat: u8,
        value: i8,
        eligible: u8,
    },
    TookDiscard {
        seat: u8,
        value: i8,
    },
    KnockAnswered {
        seat: u8,
        knock: bool,
    },
    KnockClosed {
        knockers: u8,
    },
    Accepted {
        seat: u8,
        knocker: u8,
    },
    Refused {
        seat: u8,
    },
    Kept {
        seat: u8,
        slot: u8,
        placed: i8,
        removed: i8,
    },
    DiscardedRevealed {
        seat: u8,
        discarded: i8,
        slot: u8,
        revealed: i8,
    },
    KnockerSwapped {
        knocker: u8,
        slot: u8,
        placed: i8,
        removed: i8,
        removed_up: bool,
    },
    Triple {
        seat: u8,
        cells: [u8; 3],
        value: i8,
    },
    TriplesEnded {
        seat: u8,
        auto: bool,
    },
    Taken {
        seat: u8,
        knocker: u8,
        slot: u8,
        value: i8,
    },
    Returned {
        seat: u8,
        slot: u8,
        placed: i8,
        removed: i8,
    },
    WDiscarded {
        seat: u8,
        value: i8,
    },
    YPlaced {
        knocker: u8,
        slot: u8,
        value: i8,
    },
    YDiscarded {
        knocker: u8,
        value: i8,
    },
    EmptyPassed {
        seat: u8,
    },
    TurnEnded {
        seat: u8,
        closed: bool,
        round_over: bool,
        next: u8,
    },
    RoundScored(Box<Scoring>),
    Aborted {
        turns: u32,
    },
    /// A timed-out seat forfeited (match clocks, §11); `winners` is a seat mask.
    Forfeited {
        seat: u8,
        winners: u8,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Scoring {
    pub(super) seats: u8,
    pub(super) round: u32,
    pub(super) revealed: u128,
    pub(super) vals: [i8; 96],
    pub(super) raw: [i32; 8],
    pub(super) scores: [i32; 8],
    pub(super) totals: [i32; 8],
    pub(super) closer: u8,
    pub(super) doubled: bool,
    pub(super) over: bool,
    pub(super) winners: u8,
}

fn begin_turn(st: &mut State, seat: u8) {
    st.active = seat;
    st.x = NO_CARD;
    st.eligible = 0;
    st.answered = 0;
    st.knocked = 0;
    st.knockers = 0;
    st.knocker = NONE;
    st.y = NO_CARD;
    st.z = NO_CARD;
    st.q = NONE;
    st.w = NO_CARD;
    st.tri_owner = NONE;
    st.phase = if st.cnt(seat) == 0 {
        Phase::PassEmptyPending
    } else {
        Phase::ChooseSource
    };
}

fn open_triples(st: &mut State, owner: u8, ctx: Ctx) {
    st.phase = Phase::Triples;
    st.tri_owner = owner;
    st.tri_ctx = ctx;
}

/// Applies one event (the only state transition). Validates that it fits.
pub(super) fn apply(st: &mut State, ev: &Ev) -> CoreResult<()> {
    let n = st.n();
    let nslots = (12 * n) as u8;
    let slot_ok = |s: u8| s < nslots;
    match *ev {
        Ev::Dealt {
            round,
            dealer,
            nblock,
            ref cards,
        } => {
            ensure(st.phase == Phase::DealPending, "deal outside a deal")?;
            ensure(nblock as usize == 12 * n, "deal size")?;
            ensure(round == st.round + 1, "round number")?;
            ensure((dealer as usize) < n, "dealer")?;
            ensure(round == 1 || dealer == st.first, "dealer rotation")?;
            let mut h = [0u16; 15];
            for &v in cards.iter() {
                ensure(hist_add(&mut h, v), "card value")?;
            }
            ensure(h == deck_histogram(), "deal is not the deck")?;
            let nb = nblock as usize;
            st.val = [NO_CARD; 96];
            st.val[..nb].copy_from_slice(&cards[..nb]);
            st.filled = if nb == 128 {
                u128::MAX
            } else {
                (1u128 << nb) - 1
            };
            st.up = 0;
            st.disc = [0; DECK_SIZE];
            st.disc[0] = cards[nb];
            st.disc_len = 1;
            st.draw = [0; DECK_SIZE];
            let rest = &cards[nb + 1..];
            st.draw[..rest.len()].copy_from_slice(rest);
            st.draw_len = rest.len() as u8;
            st.round = round;
            st.dealer = dealer;
            st.first = ((dealer as usize + 1) % n) as u8;
            st.active = st.first;
            st.closer = NONE;
            st.final_taken = 0;
            st.init_choice = [[NONE; 2]; 8];
            st.init_cnt = [0; 8];
            begin_turn(st, st.first);
            st.phase = Phase::InitialReveal;
        }
        Ev::InitialChosen { seat, slot } => {
            ensure(
                st.phase == Phase::InitialReveal,
                "initial choice outside the initial reveal",
            )?;
            ensure((seat as usize) < n && slot_ok(slot), "seat or slot")?;
            let c = st.init_cnt[seat as usize];
            ensure(c < 2, "third initial choice")?;
            ensure(
                slot / 12 == seat && st.is_filled(slot) && !st.is_up(slot),
                "initial choice slot",
            )?;
            ensure(
                !st.init_choice[seat as usize].contains(&slot),
                "slot chosen twice",
            )?;
            st.init_choice[seat as usize][c as usize] = slot;
            st.init_cnt[seat as usize] = c + 1;
            if st.init_cnt[..n].iter().all(|&c| c == 2) {
                st.phase = Phase::InitialFlipPending;
            }
        }
        Ev::InitialRevealed { slots, vals, len } => {
            ensure(st.phase == Phase::InitialFlipPending, "initial flip")?;
            let (es, ev_, el) = initial_flip(st);
            ensure(
                el == len && es == slots && ev_ == vals,
                "initial flip cards",
            )?;
            for &s in &slots[..len as usize] {
                st.up |= 1u128 << s;
            }
            begin_turn(st, st.first);
        }
        Ev::Reshuffled { ref pile, len, top } => {
            ensure(
                st.phase == Phase::ChooseSource && st.draw_len == 0 && st.disc_len >= 2,
                "reshuffle",
            )?;
            ensure(
                len as usize == st.disc_len as usize - 1 && Some(top) == st.discard_top(),
                "reshuffle sizes",
            )?;
            let mut a = [0u16; 15];
            let mut b = [0u16; 15];
            for (&p, &d) in pile[..len as usize].iter().zip(&st.disc[..len as usize]) {
                ensure(hist_add(&mut a, p), "card value")?;
                hist_add(&mut b, d);
            }
            ensure(a == b, "reshuffle is not the discard pile")?;
            st.draw[..len as usize].copy_from_slice(&pile[..len as usize]);
            st.draw_len = len;
            st.disc[0] = top;
            st.disc_len = 1;
        }
        Ev::Drawn {
            seat,
            value,
            eligible,
        } => {
            ensure(
                st.phase == Phase::ChooseSource && seat == st.active && st.draw_len > 0,
                "draw",
            )?;
            ensure(st.draw[st.draw_len as usize - 1] == value, "drawn value")?;
            ensure(eligible == eligible_knockers(st), "knock eligibility")?;
            st.draw_len -= 1;
            st.x = value;
            st.eligible = eligible;
            st.phase = if eligible != 0 {
                Phase::KnockWindow
            } else {
                Phase::DecideDrawn
            };
        }
        Ev::TookDiscard { seat, value } => {
            ensure(
                st.phase == Phase::ChooseSource && seat == st.active,
                "take discard",
            )?;
            ensure(st.discard_top() == Some(value), "discard value")?;
            st.disc_len -= 1;
            st.x = value;
            st.phase = Phase::SwapDiscard;
        }
        Ev::KnockAnswered { seat, knock } => {
            ensure(
                st.phase == Phase::KnockWindow && (seat as usize) < n,
                "knock answer",
            )?;
            ensure(
                st.eligible >> seat & 1 == 1 && st.answered >> seat & 1 == 0,
                "knock answerer",
            )?;
            st.answered |= 1 << seat;
            if knock {
                st.knocked |= 1 << seat;
            }
            if st.answered == st.eligible {
                st.phase = Phase::KnockClosePending;
            }
        }
        Ev::KnockClosed { knockers } => {
            ensure(
                st.phase == Phase::KnockClosePending && knockers == st.knocked,
                "knock close",
            )?;
            st.knockers = knockers;
            st.phase = if knockers != 0 {
                Phase::KnockDecision
            } else {
                Phase::DecideDrawn
            };
        }
        Ev::Accepted { seat, knocker } => {
            ensure(
                st.phase == Phase::KnockDecision && seat == st.active,
                "accept",
            )?;
            ensure(
                (knocker as usize) < n && st.knockers >> knocker & 1 == 1,
                "accepted knocker",
            )?;
            st.knocker = knocker;
            st.phase = Phase::KnockerSwap;
        }
        Ev::Refused { seat } => {
            ensure(
                st.phase == Phase::KnockDecision && seat == st.active,
                "refuse",
            )?;
            st.phase = Phase::DecideDrawn;
        }
        Ev::Kept {
            seat,
            slot,
            placed,
            removed,
        } => {
            ensure(
                matches!(st.phase, Phase::DecideDrawn | Phase::SwapDiscard) && seat == st.active,
                "keep",
            )?;
            ensure(
                slot_ok(slot) && st.in_dom(seat, slot) && st.is_filled(slot),
                "keep slot",
            )?;
            ensure(
                placed == st.x && removed == st.val[slot as usize],
                "keep values",
            )?;
            st.w = st.take_slot(slot);
            st.place_up(slot, st.x);
            st.x = NO_CARD;
            open_triples(st, seat, Ctx::Keep);
        }
        Ev::DiscardedRevealed {
            seat,
            discarded,
            slot,
            revealed,
        } => {
            ensure(
                st.phase == Phase::DecideDrawn && seat == st.active,
                "discard and reveal",
            )?;
            ensure(
                slot_ok(slot) && st.in_dom(seat, slot) && st.is_filled(slot) && !st.is_up(slot),
                "reveal slot",
            )?;
            ensure(
                discarded == st.x && revealed == st.val[slot as usize],
                "reveal values",
            )?;
            st.push_discard(st.x)?;
            st.x = NO_CARD;
            st.up |= 1u128 << slot;
            open_triples(st, seat, Ctx::Reveal);
        }
        Ev::KnockerSwapped {
            knocker,
            slot,
            placed,
            removed,
            removed_up,
        } => {
            ensure(
                st.phase == Phase::KnockerSwap && knocker == st.knocker,
                "knocker swap",
            )?;
            ensure(
                slot_ok(slot) && st.in_dom(knocker, slot) && st.is_filled(slot),
                "knocker slot",
            )?;
            ensure(
                placed == st.x && removed == st.val[slot as usize] && removed_up == st.is_up(slot),
                "knocker values",
            )?;
            st.y_up = removed_up;
            st.y = st.take_slot(slot);
            st.place_up(slot, st.x);
            st.x = NO_CARD;
            open_triples(st, knocker, Ctx::Knocker);
        }
        Ev::Triple { seat, cells, value } => {
            ensure(st.phase == Phase::Triples && seat == st.tri_owner, "triple")?;
            let t = triples(st, seat);
            ensure(t.cells[..t.len].contains(&cells), "not a triple")?;
            ensure(st.val[cells[0] as usize] == value, "triple value")?;
            for c in cells {
                let v = st.take_slot(c);
                st.push_discard(v)?;
            }
        }
        Ev::TriplesEnded { seat, auto: _ } => {
            ensure(
                st.phase == Phase::Triples && seat == st.tri_owner,
                "end triples",
            )?;
            // `auto` only tells clients the engine closed the window; either way it closes.
            st.tri_owner = NONE;
            st.phase = match st.tri_ctx {
                Ctx::Keep | Ctx::Return => Phase::WDiscardPending,
                Ctx::Reveal => Phase::TurnEndPending,
                Ctx::Knocker => Phase::TakeFromKnocker,
            };
        }
        Ev::Taken {
            seat,
            knocker,
            slot,
            value,
        } => {
            ensure(
                st.phase == Phase::TakeFromKnocker && seat == st.active && knocker == st.knocker,
                "take",
            )?;
            ensure(
                slot_ok(slot) && take_targets(st) >> slot & 1 == 1,
                "take slot",
            )?;
            ensure(value == st.val[slot as usize], "take value")?;
            st.z = st.take_slot(slot);
            st.q = slot;
            st.phase = Phase::ReturnSwap;
        }
        Ev::Returned {
            seat,
            slot,
            placed,
            removed,
        } => {
            ensure(
                st.phase == Phase::ReturnSwap && seat == st.active,
                "return swap",
            )?;
            ensure(
                slot_ok(slot) && st.in_dom(seat, slot) && st.is_filled(slot),
                "return slot",
            )?;
            ensure(
                placed == st.z && removed == st.val[slot as usize],
                "return values",
            )?;
            st.w = st.take_slot(slot);
            st.place_up(slot, st.z);
            st.z = NO_CARD;
            open_triples(st, seat, Ctx::Return);
        }
        Ev::WDiscarded { seat, value } => {
            ensure(
                st.phase == Phase::WDiscardPending && seat == st.active && value == st.w,
                "exchanged card",
            )?;
            st.push_discard(value)?;
            st.w = NO_CARD;
            st.phase = if st.q != NONE {
                Phase::YPlacePending
            } else {
                Phase::TurnEndPending
            };
        }
        Ev::YPlaced {
            knocker,
            slot,
            value,
        } => {
            ensure(
                st.phase == Phase::YPlacePending && knocker == st.knocker,
                "held card placement",
            )?;
            ensure(
                slot == st.q && value == st.y && slot_ok(slot) && !st.is_filled(slot),
                "held card slot",
            )?;
            st.place_up(slot, value);
            st.y = NO_CARD;
            st.q = NONE;
            st.phase = Phase::TurnEndPending;
        }
        Ev::YDiscarded { knocker, value } => {
            ensure(
                st.phase == Phase::TakeFromKnocker
                    && knocker == st.knocker
                    && take_targets(st) == 0,
                "held discard",
            )?;
            ensure(value == st.y, "held value")?;
            st.push_discard(value)?;
            st.y = NO_CARD;
            st.phase = Phase::TurnEndPending;
        }
        Ev::EmptyPassed { seat } => {
            ensure(
                st.phase == Phase::PassEmptyPending && seat == st.active,
                "pass empty",
            )?;
            st.phase = Phase::TurnEndPending;
        }
        Ev::TurnEnded {
            seat,
            closed,
            round_over,
            next,
        } => {
            ensure(
                st.phase == Phase::TurnEndPending && seat == st.active,
                "turn end",
            )?;
            let (c, r, nx, closer, fin) = turn_end_result(st);
            ensure(
                c == closed && r == round_over && nx == next,
                "turn end flags",
            )?;
            st.closer = closer;
            st.final_taken = fin;
            st.turns += 1;
            if round_over {
                st.phase = Phase::RoundEndPending;
            } else if st.turns >= st.cfg.turn_cap {
                st.phase = Phase::AbortPending;
            } else {
                begin_turn(st, next);
            }
        }
        Ev::RoundScored(ref sc) => {
            ensure(st.phase == Phase::RoundEndPending, "scoring")?;
            ensure(**sc == score_round(st), "scores")?;
            st.up = st.filled;
            st.totals = sc.totals;
            st.last = sc.scores;
            st.winners = sc.winners;
            st.phase = if sc.over {
                Phase::Over
            } else if st.turns >= st.cfg.turn_cap {
                Phase::AbortPending
            } else {
                Phase::DealPending
            };
        }
        Ev::Aborted { turns } => {
            ensure(
                st.phase == Phase::AbortPending && turns == st.turns,
                "abort",
            )?;
            st.phase = Phase::Aborted;
        }
        Ev::Forfeited { seat, winners } => {
            ensure(
                (seat as usize) < st.n() && to_act_mask(st) >> seat & 1 == 1 && winners == forfeit_winners(st, seat),
                "forfeit",
            )?;
            // Cards in transit (X, W, Y, Z) go face up onto the discard pile, as at a turn's end.
            for v in [st.x, st.w, st.y, st.z] {
                if v != NO_CARD {
                    ensure((st.disc_len as usize) < DECK_SIZE, "forfeit discard")?;
                    st.disc[st.disc_len as usize] = v;
                    st.disc_len += 1;
                }
            }
            (st.x, st.w, st.y, st.z, st.q) = (NO_CARD, NO_CARD, NO_CARD, NO_CARD, NONE);
            st.winners = winners;
            st.forfeited = true;
            st.phase = Phase::Over;
        }
    }
    Ok(())
}
