//! Deciding: the rule checks of a placement and of going out (AMB21 order), the legal moves
//! (AMB28 order), `start` and `decide` with every automatic step after them, whose turn it is
//! and the outcome.

use super::cards::{bit, rank, rank_word, HAND, JACK, KING, QUEEN, STOCK, TEN};
use super::sim::shuffled_deal;
use super::state::{CellState, Move, Phase, State};
use super::wire::{card_pb, ev};
use super::Carre;
use crate::error::{CoreError, CoreResult};
use crate::game::{Game, Seat, Seats};
use crate::proto::carre as pb;
use crate::proto::Outcome;
use crate::rng::Rng;

use pb::event::Kind as Ev;

/// Fixed-capacity move list (the worst case is 127, TV24).
pub(super) struct Moves {
    pub(super) n: usize,
    pub(super) m: [Move; 192],
}

impl Moves {
    pub(super) fn new() -> Self {
        Moves {
            n: 0,
            m: [Move::GoOut; 192],
        }
    }
    #[inline]
    fn push(&mut self, mv: Move) {
        if self.n < self.m.len() {
            self.m[self.n] = mv;
            self.n += 1;
        }
    }
    pub(super) fn as_slice(&self) -> &[Move] {
        &self.m[..self.n]
    }
}

impl Default for Moves {
    fn default() -> Self {
        Self::new()
    }
}

pub(super) fn rule(reason: &'static str, msg: impl Into<String>) -> CoreError {
    CoreError::rule(reason, msg)
}

impl State {
    /// Rule check of a placement (AMB21 order). Returns whether the card goes face down.
    pub(super) fn check_place(&self, seat: u8, card: u8, owner: u8, idx: u8) -> CoreResult<bool> {
        if self.hands[seat as usize] & bit(card) == 0 {
            return Err(rule(
                "NOT_IN_HAND",
                format!("you do not hold {}", super::words::card_code(card)),
            ));
        }
        let r = rank(card);
        let own = owner == seat;
        let st = self.cell_state(owner, idx);
        let name = super::words::card_code(card);
        let cell_no = idx + 1;
        match r {
            0..=8 => {
                let home = self.cfg.cell_of_rank[r as usize];
                if home != idx {
                    return Err(rule(
                        "WRONG_CELL",
                        format!(
                            "{name} can only go on cell {} (of either square), not cell {cell_no}",
                            home + 1
                        ),
                    ));
                }
                if st == CellState::Up {
                    return Err(rule(
                        "CELL_FACE_UP",
                        format!("cell {cell_no} holds a face-up card; {name} needs an empty or face-down cell"),
                    ));
                }
                Ok(false)
            }
            TEN | KING => {
                if !own {
                    return Err(rule(
                        "OWN_SQUARE_ONLY",
                        format!(
                            "a {} can only be placed in your own square",
                            rank_word(card)
                        ),
                    ));
                }
                if r == TEN && st == CellState::Up {
                    return Err(rule(
                        "CELL_FACE_UP",
                        format!("cell {cell_no} holds a face-up card; a Ten needs an empty or face-down cell"),
                    ));
                }
                Ok(false)
            }
            _ => {
                // Jack (either square) or Queen (own square), face down on a face-up card.
                if r == QUEEN && !own {
                    return Err(rule(
                        "OWN_SQUARE_ONLY",
                        "a Queen can only be placed in your own square",
                    ));
                }
                if st != CellState::Up {
                    return Err(rule(
                        "CELL_NOT_FACE_UP",
                        format!(
                            "a {} goes face down on a face-up card; cell {cell_no} is {}",
                            rank_word(card),
                            if st == CellState::Empty {
                                "empty"
                            } else {
                                "face down"
                            }
                        ),
                    ));
                }
                Ok(true)
            }
        }
    }

    pub(super) fn check_go_out(&self, seat: u8) -> CoreResult<u32> {
        let raw = self.raw(seat);
        if raw < 5 {
            return Err(rule(
                "GO_OUT_BELOW_5",
                format!(
                    "going out needs at least 5 alignment points in your own square; it has {raw}"
                ),
            ));
        }
        if !self.drew && !self.cfg.go_out_without_draw {
            return Err(rule(
                "GO_OUT_WITHOUT_DRAW",
                "going out is only allowed right after drawing from the stock",
            ));
        }
        Ok(raw)
    }

    /// Every legal move of the seat to act (AMB28 order). Empty when `seat` is not awaited.
    pub(super) fn gen_moves(&self, seat: u8, out: &mut Moves) {
        out.n = 0;
        if self.phase != Phase::Action || seat != self.current {
            return;
        }
        let me = seat as usize & 1;
        let opp = 1 - me;
        if self.raw(seat) >= 5 && (self.drew || self.cfg.go_out_without_draw) {
            out.push(Move::GoOut);
        }
        let mut h = self.hands[me];
        while h != 0 {
            let c = h.trailing_zeros() as u8;
            h &= h - 1;
            let r = rank(c);
            match r {
                0..=8 => {
                    let idx = self.cfg.cell_of_rank[r as usize];
                    for sq in [me, opp] {
                        if self.mask[sq][idx as usize] == 0 {
                            out.push(Move::Place(c, sq as u8, idx));
                        }
                    }
                }
                TEN => {
                    for i in 0..9u8 {
                        if self.mask[me][i as usize] == 0 {
                            out.push(Move::Place(c, me as u8, i));
                        }
                    }
                }
                KING => {
                    for i in 0..9u8 {
                        out.push(Move::Place(c, me as u8, i));
                    }
                }
                JACK => {
                    for sq in [me, opp] {
                        for i in 0..9u8 {
                            if self.mask[sq][i as usize] != 0 {
                                out.push(Move::Place(c, sq as u8, i));
                            }
                        }
                    }
                }
                _ => {
                    for i in 0..9u8 {
                        if self.mask[me][i as usize] != 0 {
                            out.push(Move::Place(c, me as u8, i));
                        }
                    }
                }
            }
            out.push(Move::Discard(c));
        }
    }

    /// A uniformly random legal move of the seat to act, drawn without listing the moves:
    /// each card's number of legal moves is counted from 9-bit face-up masks, then the chosen
    /// index is decoded (same order as `gen_moves`). `None` when `seat` is not awaited.
    #[inline]
    pub(super) fn random_move(&self, seat: u8, rng: &mut Rng) -> Option<Move> {
        if self.phase != Phase::Action || seat != self.current {
            return None;
        }
        let me = seat as usize & 1;
        let opp = 1 - me;
        let up = |sq: usize| -> u32 {
            let m = &self.mask[sq];
            let mut b = 0u32;
            for (i, &x) in m.iter().enumerate() {
                b |= ((x != 0) as u32) << i;
            }
            b
        };
        let (up_me, up_opp) = (up(me), up(opp));
        let free_me = !up_me & 0x1FF;
        let free_opp = !up_opp & 0x1FF;
        let go = (self.raw(seat) >= 5 && (self.drew || self.cfg.go_out_without_draw)) as u64;
        // Per card: (bitmask of own-square cells, bitmask of opponent cells); +1 for the discard.
        let targets = |c: u8| -> (u32, u32) {
            match rank(c) {
                r @ 0..=8 => {
                    let b = 1u32 << self.cfg.cell_of_rank[r as usize];
                    (free_me & b, free_opp & b)
                }
                TEN => (free_me, 0),
                KING => (0x1FF, 0),
                JACK => (up_me, up_opp),
                _ => (up_me, 0),
            }
        };
        let mut total = go;
        let mut h = self.hands[me];
        while h != 0 {
            let c = h.trailing_zeros() as u8;
            h &= h - 1;
            let (a, b) = targets(c);
            total += (a.count_ones() + b.count_ones() + 1) as u64;
        }
        let mut k = rng.below(total);
        if go == 1 {
            if k == 0 {
                return Some(Move::GoOut);
            }
            k -= 1;
        }
        let nth_bit = |mut bits: u32, n: u64| -> u8 {
            for _ in 0..n {
                bits &= bits - 1;
            }
            bits.trailing_zeros() as u8
        };
        let mut h = self.hands[me];
        while h != 0 {
            let c = h.trailing_zeros() as u8;
            h &= h - 1;
            let (a, b) = targets(c);
            let (na, nb) = (a.count_ones() as u64, b.count_ones() as u64);
            if k < na {
                return Some(Move::Place(c, me as u8, nth_bit(a, k)));
            }
            k -= na;
            if k < nb {
                return Some(Move::Place(c, opp as u8, nth_bit(b, k)));
            }
            k -= nb;
            if k == 0 {
                return Some(Move::Discard(c));
            }
            k -= 1;
        }
        None
    }
}

impl Carre {
    /// Appends (and applies to `s`) every automatic step until a seat must decide or the match
    /// is over.
    pub(super) fn auto_steps(
        s: &mut State,
        rng: &mut Rng,
        out: &mut Vec<pb::Event>,
    ) -> CoreResult<()> {
        loop {
            let e = match s.phase {
                Phase::Dealing => {
                    let round = s.round + 1;
                    let starter = s.expected_starter(round);
                    let (_, order, stock) = shuffled_deal(starter, rng);
                    ev(Ev::RoundDealt(pb::RoundDealt {
                        round: round as u32,
                        starter: starter as u32,
                        dealer: 1 - starter as u32,
                        hands: (0..2)
                            .map(|seat| pb::DealtHand {
                                seat,
                                cards: order[seat as usize].iter().map(|&c| card_pb(c)).collect(),
                                count: HAND as u32,
                            })
                            .collect(),
                        // Bottom first: the next card drawn last.
                        stock: stock.iter().rev().map(|&c| card_pb(c)).collect(),
                        stock_size: STOCK as u32,
                    }))
                }
                Phase::Drawing => {
                    let c = s.stock[s.stock_pos as usize];
                    ev(Ev::CardDrawn(pb::CardDrawn {
                        seat: s.current as u32,
                        card: Some(card_pb(c)),
                        stock_size: (s.stock_left() - 1) as u32,
                    }))
                }
                Phase::Passing => ev(Ev::TurnPassed(pb::TurnPassed {
                    seat: s.current as u32,
                })),
                Phase::Scoring => {
                    let rec = s.round_result();
                    ev(Ev::RoundScored(Self::scored_event(s, &rec)))
                }
                Phase::Ending => {
                    let (winners, result) = s.result();
                    ev(Ev::MatchEnded(pb::MatchEnded {
                        totals: s.totals.to_vec(),
                        winners,
                        result: result as i32,
                        rounds_played: s.n_history as u32,
                    }))
                }
                Phase::NotStarted | Phase::Action | Phase::Over => return Ok(()),
            };
            Self::evolve(s, &e)?;
            out.push(e);
        }
    }
}

pub(super) fn start(state: &State, rng: &mut Rng) -> CoreResult<Vec<pb::Event>> {
    if state.phase != Phase::NotStarted {
        return Err(rule("ALREADY_STARTED", "the match has already started"));
    }
    let first = match state.cfg.first_starter {
        Some(s) => s,
        None => rng.below(2) as u8,
    };
    let e = ev(Ev::MatchStarted(pb::MatchStarted {
        first_starter: first as u32,
        rounds_per_match: state.cfg.rounds as u32,
    }));
    let mut s = *state;
    Carre::evolve(&mut s, &e)?;
    let mut out = vec![e];
    Carre::auto_steps(&mut s, rng, &mut out)?;
    Ok(out)
}

pub(super) fn decide(
    state: &State,
    seat: Seat,
    action: &pb::Action,
    rng: &mut Rng,
) -> CoreResult<Vec<pb::Event>> {
    let seat = seat as u8;
    let mv = Carre::parse_action(state, seat, action)?;
    let e = Carre::move_event(state, seat, mv);
    let mut s = *state;
    Carre::evolve(&mut s, &e)?;
    let mut out = Vec::with_capacity(4);
    out.push(e);
    Carre::auto_steps(&mut s, rng, &mut out)?;
    Ok(out)
}

pub(super) fn to_act(s: &State) -> Seats {
    if s.phase == Phase::Action {
        Seats::one(s.current as Seat)
    } else {
        Seats::NONE
    }
}

pub(super) fn legal_actions_into(s: &State, seat: Seat, out: &mut Vec<pb::Action>) {
    if seat >= 2 {
        return;
    }
    let mut moves = Moves::new();
    s.gen_moves(seat as u8, &mut moves);
    out.extend(
        moves
            .as_slice()
            .iter()
            .map(|&m| Carre::move_to_action(seat as u8, m)),
    );
}

pub(super) fn outcome(s: &State) -> Option<Outcome> {
    if s.phase != Phase::Over {
        return None;
    }
    let (winners, result) = s.result();
    Some(Outcome {
        scores: s.totals.iter().map(|&t| t as i64).collect(),
        winners,
        reason: match result {
            _ if s.forfeited < 2 => "FORFEIT",
            pb::MatchResult::Aborted => "ROUND_CAP",
            pb::MatchResult::Draw => "DRAW",
            _ => "HIGHER_TOTAL",
        }
        .into(),
        lower_is_better: false,
        aborted: s.aborted,
        description: String::new(), // worded by the registry (Game::outcome_sentence)
    })
}
