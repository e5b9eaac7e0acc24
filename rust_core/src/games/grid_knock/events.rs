//! The compact internal moves and events ([`Move`], [`Ev`]) and [`apply`], the only state
//! transition, which re-validates every event against the state it follows.

use crate::error::{ensure, CoreResult};
use crate::proto::grid_knock as pb;

use super::bots::forfeit_winners;
use super::rules::{
    eligible_knockers, initial_flip, score_round, take_targets, to_act_mask, turn_end_result,
};
use super::state::{deck_histogram, hist_add, Ctx, Phase, State, DECK_SIZE, NONE, NO_CARD};
use super::triples::triples;

/// The moves, one-to-one with the wire's actions: one variant per message of the `Action.kind`
/// oneof, named as that message, a slot as its index; a `discard_triple` that does not name three
/// distinct cells is `BadTriple`, which the rules refuse (`NOT_A_TRIPLE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    RevealInitial(u8),
    DrawFromPile,
    TakeFromDiscard,
    Knock,
    PassKnock,
    AcceptKnock(u8),
    RefuseKnocks,
    KeepSwap(u8),
    DiscardAndReveal(u8),
    KnockerSwap(u8),
    DiscardTriple([u8; 3]),
    BadTriple,
    EndTriples,
    TakeFromKnocker(u8),
    ReturnSwap(u8),
}

/// The events, one-to-one with the wire: one variant per message of the `Event.kind` oneof of
/// `proto/tablier/grid_knock/v1/grid_knock.proto`, named as that message, its fields named as the
/// message's fields. The values are compact: a seat is a `u8`, a slot its index `s` (module doc),
/// a card its value, a repeated list of seats a seat mask. What the wire spells out but follows
/// from the rest is left out: `Dealt.first_player` and `draw_pile_size` (from the dealer and the
/// deal), `Reshuffled.draw_pile_size` (the pile's length).
#[derive(Clone, Debug, PartialEq)]
pub enum Ev {
    /// `cards` is the deal in order: the wire's `blocks` (the first `blocks_len` cards), then
    /// `discard_start`, then `draw_pile`.
    Dealt {
        round: u32,
        dealer: u8,
        blocks_len: u8,
        cards: [i8; DECK_SIZE],
    },
    InitialChosen {
        seat: u8,
        slot: u8,
    },
    /// The first `len` of `cards`.
    InitialRevealed {
        cards: [Card; 16],
        len: u8,
    },
    /// The first `draw_pile_size` cards of `draw_pile`.
    Reshuffled {
        draw_pile: [i8; DECK_SIZE],
        draw_pile_size: u8,
        discard_top: i8,
    },
    Drawn {
        seat: u8,
        value: i8,
        knock_eligible: u8,
    },
    TookDiscard {
        seat: u8,
        value: i8,
    },
    /// `answer` is `Knock` or `Pass` (`Sealed` exists only in a redacted copy).
    KnockAnswered {
        seat: u8,
        answer: pb::KnockAnswer,
    },
    KnockWindowClosed {
        knockers: u8,
    },
    KnockAccepted {
        seat: u8,
        knocker: u8,
    },
    KnocksRefused {
        seat: u8,
    },
    Kept {
        seat: u8,
        slot: u8,
        placed: i8,
        removed: i8,
    },
    DiscardedAndRevealed {
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
        removed_was_face_up: bool,
    },
    TripleDiscarded {
        seat: u8,
        cells: [u8; 3],
        value: i8,
    },
    TriplesEnded {
        seat: u8,
        automatic: bool,
    },
    TookFromKnocker {
        seat: u8,
        knocker: u8,
        slot: u8,
        value: i8,
    },
    ReturnSwapped {
        seat: u8,
        slot: u8,
        placed: i8,
        removed: i8,
    },
    ExchangedCardDiscarded {
        seat: u8,
        value: i8,
    },
    HeldCardPlaced {
        knocker: u8,
        slot: u8,
        value: i8,
    },
    HeldCardDiscarded {
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
        next_player: u8,
    },
    RoundScored(Box<RoundScored>),
    MatchAborted {
        turns: u32,
    },
    /// A timed-out seat forfeited (match clocks, §11).
    Forfeited {
        seat: u8,
        winners: u8,
    },
}

/// The wire's `Card`: a slot and the card in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Card {
    pub(super) slot: u8,
    pub(super) value: i8,
}

/// The wire's `RoundScored`: `revealed` is the set of slots flipped at the final reveal and
/// `revealed_values` their cards (by slot); the per-seat lists hold `seats` entries.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundScored {
    pub(super) seats: u8,
    pub(super) round: u32,
    pub(super) revealed: u128,
    pub(super) revealed_values: [i8; 96],
    pub(super) raw_scores: [i32; 8],
    pub(super) round_scores: [i32; 8],
    pub(super) totals: [i32; 8],
    pub(super) closer: u8,
    pub(super) closer_doubled: bool,
    pub(super) match_over: bool,
    pub(super) winners: u8,
}

fn begin_turn(st: &mut State, seat: u8) {
    st.active = seat;
    st.drawn_card = NO_CARD;
    st.eligible = 0;
    st.answered = 0;
    st.knocked = 0;
    st.knockers = 0;
    st.knocker = NONE;
    st.held_card = NO_CARD;
    st.taken_card = NO_CARD;
    st.reserved_slot = NONE;
    st.exchanged_card = NO_CARD;
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
            blocks_len,
            ref cards,
        } => {
            ensure(st.phase == Phase::DealPending, "deal outside a deal")?;
            ensure(blocks_len as usize == 12 * n, "deal size")?;
            ensure(round == st.round + 1, "round number")?;
            ensure((dealer as usize) < n, "dealer")?;
            ensure(round == 1 || dealer == st.first, "dealer rotation")?;
            let mut h = [0u16; 15];
            for &v in cards.iter() {
                ensure(hist_add(&mut h, v), "card value")?;
            }
            ensure(h == deck_histogram(), "deal is not the deck")?;
            let nb = blocks_len as usize;
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
        Ev::InitialRevealed { cards, len } => {
            ensure(st.phase == Phase::InitialFlipPending, "initial flip")?;
            ensure(initial_flip(st) == (cards, len), "initial flip cards")?;
            for card in &cards[..len as usize] {
                st.up |= 1u128 << card.slot;
            }
            begin_turn(st, st.first);
        }
        Ev::Reshuffled {
            ref draw_pile,
            draw_pile_size,
            discard_top,
        } => {
            ensure(
                st.phase == Phase::ChooseSource && st.draw_len == 0 && st.disc_len >= 2,
                "reshuffle",
            )?;
            ensure(
                draw_pile_size as usize == st.disc_len as usize - 1
                    && Some(discard_top) == st.discard_top(),
                "reshuffle sizes",
            )?;
            let len = draw_pile_size as usize;
            let mut a = [0u16; 15];
            let mut b = [0u16; 15];
            for (&p, &d) in draw_pile[..len].iter().zip(&st.disc[..len]) {
                ensure(hist_add(&mut a, p), "card value")?;
                hist_add(&mut b, d);
            }
            ensure(a == b, "reshuffle is not the discard pile")?;
            st.draw[..len].copy_from_slice(&draw_pile[..len]);
            st.draw_len = draw_pile_size;
            st.disc[0] = discard_top;
            st.disc_len = 1;
        }
        Ev::Drawn {
            seat,
            value,
            knock_eligible,
        } => {
            ensure(
                st.phase == Phase::ChooseSource && seat == st.active && st.draw_len > 0,
                "draw",
            )?;
            ensure(st.draw[st.draw_len as usize - 1] == value, "drawn value")?;
            ensure(knock_eligible == eligible_knockers(st), "knock eligibility")?;
            st.draw_len -= 1;
            st.drawn_card = value;
            st.eligible = knock_eligible;
            st.phase = if knock_eligible != 0 {
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
            st.drawn_card = value;
            st.phase = Phase::SwapDiscard;
        }
        Ev::KnockAnswered { seat, answer } => {
            ensure(
                st.phase == Phase::KnockWindow && (seat as usize) < n,
                "knock answer",
            )?;
            ensure(
                st.eligible >> seat & 1 == 1 && st.answered >> seat & 1 == 0,
                "knock answerer",
            )?;
            st.answered |= 1 << seat;
            if answer == pb::KnockAnswer::Knock {
                st.knocked |= 1 << seat;
            }
            if st.answered == st.eligible {
                st.phase = Phase::KnockClosePending;
            }
        }
        Ev::KnockWindowClosed { knockers } => {
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
        Ev::KnockAccepted { seat, knocker } => {
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
        Ev::KnocksRefused { seat } => {
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
                placed == st.drawn_card && removed == st.val[slot as usize],
                "keep values",
            )?;
            st.exchanged_card = st.take_slot(slot);
            st.place_up(slot, st.drawn_card);
            st.drawn_card = NO_CARD;
            open_triples(st, seat, Ctx::Keep);
        }
        Ev::DiscardedAndRevealed {
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
                discarded == st.drawn_card && revealed == st.val[slot as usize],
                "reveal values",
            )?;
            st.push_discard(st.drawn_card)?;
            st.drawn_card = NO_CARD;
            st.up |= 1u128 << slot;
            open_triples(st, seat, Ctx::Reveal);
        }
        Ev::KnockerSwapped {
            knocker,
            slot,
            placed,
            removed,
            removed_was_face_up,
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
                placed == st.drawn_card
                    && removed == st.val[slot as usize]
                    && removed_was_face_up == st.is_up(slot),
                "knocker values",
            )?;
            st.held_card_was_face_up = removed_was_face_up;
            st.held_card = st.take_slot(slot);
            st.place_up(slot, st.drawn_card);
            st.drawn_card = NO_CARD;
            open_triples(st, knocker, Ctx::Knocker);
        }
        Ev::TripleDiscarded { seat, cells, value } => {
            ensure(st.phase == Phase::Triples && seat == st.tri_owner, "triple")?;
            let t = triples(st, seat);
            ensure(t.cells[..t.len].contains(&cells), "not a triple")?;
            ensure(st.val[cells[0] as usize] == value, "triple value")?;
            for c in cells {
                let v = st.take_slot(c);
                st.push_discard(v)?;
            }
        }
        Ev::TriplesEnded { seat, automatic: _ } => {
            ensure(
                st.phase == Phase::Triples && seat == st.tri_owner,
                "end triples",
            )?;
            // `automatic` only tells clients the engine closed the window; either way it closes.
            st.tri_owner = NONE;
            st.phase = match st.tri_ctx {
                Ctx::Keep | Ctx::Return => Phase::WDiscardPending,
                Ctx::Reveal => Phase::TurnEndPending,
                Ctx::Knocker => Phase::TakeFromKnocker,
            };
        }
        Ev::TookFromKnocker {
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
            st.taken_card = st.take_slot(slot);
            st.reserved_slot = slot;
            st.phase = Phase::ReturnSwap;
        }
        Ev::ReturnSwapped {
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
                placed == st.taken_card && removed == st.val[slot as usize],
                "return values",
            )?;
            st.exchanged_card = st.take_slot(slot);
            st.place_up(slot, st.taken_card);
            st.taken_card = NO_CARD;
            open_triples(st, seat, Ctx::Return);
        }
        Ev::ExchangedCardDiscarded { seat, value } => {
            ensure(
                st.phase == Phase::WDiscardPending
                    && seat == st.active
                    && value == st.exchanged_card,
                "exchanged card",
            )?;
            st.push_discard(value)?;
            st.exchanged_card = NO_CARD;
            st.phase = if st.reserved_slot != NONE {
                Phase::YPlacePending
            } else {
                Phase::TurnEndPending
            };
        }
        Ev::HeldCardPlaced {
            knocker,
            slot,
            value,
        } => {
            ensure(
                st.phase == Phase::YPlacePending && knocker == st.knocker,
                "held card placement",
            )?;
            ensure(
                slot == st.reserved_slot
                    && value == st.held_card
                    && slot_ok(slot)
                    && !st.is_filled(slot),
                "held card slot",
            )?;
            st.place_up(slot, value);
            st.held_card = NO_CARD;
            st.reserved_slot = NONE;
            st.phase = Phase::TurnEndPending;
        }
        Ev::HeldCardDiscarded { knocker, value } => {
            ensure(
                st.phase == Phase::TakeFromKnocker
                    && knocker == st.knocker
                    && take_targets(st) == 0,
                "held discard",
            )?;
            ensure(value == st.held_card, "held value")?;
            st.push_discard(value)?;
            st.held_card = NO_CARD;
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
            next_player,
        } => {
            ensure(
                st.phase == Phase::TurnEndPending && seat == st.active,
                "turn end",
            )?;
            let (c, r, nx, closer, fin) = turn_end_result(st);
            ensure(
                c == closed && r == round_over && nx == next_player,
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
                begin_turn(st, next_player);
            }
        }
        Ev::RoundScored(ref sc) => {
            ensure(st.phase == Phase::RoundEndPending, "scoring")?;
            ensure(**sc == score_round(st), "scores")?;
            st.up = st.filled;
            st.totals = sc.totals;
            st.last = sc.round_scores;
            st.winners = sc.winners;
            st.phase = if sc.match_over {
                Phase::Over
            } else if st.turns >= st.cfg.turn_cap {
                Phase::AbortPending
            } else {
                Phase::DealPending
            };
        }
        Ev::MatchAborted { turns } => {
            ensure(
                st.phase == Phase::AbortPending && turns == st.turns,
                "abort",
            )?;
            st.phase = Phase::Aborted;
        }
        Ev::Forfeited { seat, winners } => {
            ensure(
                (seat as usize) < st.n()
                    && to_act_mask(st) >> seat & 1 == 1
                    && winners == forfeit_winners(st, seat),
                "forfeit",
            )?;
            // Cards in transit (X, W, Y, Z) go face up onto the discard pile, as at a turn's end.
            for v in [
                st.drawn_card,
                st.exchanged_card,
                st.held_card,
                st.taken_card,
            ] {
                if v != NO_CARD {
                    ensure((st.disc_len as usize) < DECK_SIZE, "forfeit discard")?;
                    st.disc[st.disc_len as usize] = v;
                    st.disc_len += 1;
                }
            }
            (
                st.drawn_card,
                st.exchanged_card,
                st.held_card,
                st.taken_card,
                st.reserved_slot,
            ) = (NO_CARD, NO_CARD, NO_CARD, NO_CARD, NONE);
            st.winners = winners;
            st.forfeited = true;
            st.phase = Phase::Over;
        }
    }
    Ok(())
}
