//! The position evaluator: a seat's `Position` (its view, the cards captured in the deal, the
//! match's options) checked, dealt out consistently with it for rollouts, and every legal
//! commit with its immediate chance of winning the trick.

use prost::Message;

use crate::error::{CoreError, CoreResult};
use crate::game::{Game, Options, Seat, Viewer};
use crate::proto::democratie as pb;
use crate::proto::MoveValue;
use crate::rng::Rng;
use crate::rollout::{first_difference, Analysis};

use super::cards::{
    bit, card_name, cards_of, deck_mask, deck_size, points, suit_of, MAX_SEATS, NOBODY, NO_CARD,
    TRUMP_UNSET,
};
use super::state::{LastTrick, State};
use super::wire::{from_pb, mask_to_pb, pb_to_mask};
use super::Democratie;

/// Tricks a commit is followed over to tell its immediate effect.
const IMMEDIATE_DEALS: u64 = 16;

fn options_of(s: &State) -> Options {
    [
        ("target", s.cfg.target.to_string()),
        ("max_deals", s.cfg.max_deals.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

pub(super) fn position(s: &State, seat: Seat) -> Vec<u8> {
    pb::Position {
        seat,
        options: options_of(s),
        view: Some(Democratie::view(s, Viewer::Seat(seat))),
        captured: (0..s.n())
            .map(|i| pb::DealtHand {
                seat: i as u32,
                count: s.captured[i].count_ones(),
                cards: mask_to_pb(s.captured[i]),
            })
            .collect(),
    }
    .encode_to_vec()
}

/// A checked position: the table with the cards the seat cannot see still to deal.
pub struct Known {
    seat: Seat,
    table: State,
    /// Cards to deal to each other seat's hand, and the seats whose sealed commit is hidden.
    hand_counts: [usize; MAX_SEATS],
    hidden_commits: Vec<usize>,
    stock: usize,
    vote: usize,
    unseen: u64,
}

fn card(code: i32, what: &str) -> CoreResult<u8> {
    from_pb(code).ok_or_else(|| CoreError::malformed(format!("{what}: {code} is not a card")))
}

fn check(pos: &pb::Position) -> CoreResult<Known> {
    use pb::Phase as P;
    let view = pos
        .view
        .as_ref()
        .ok_or_else(|| CoreError::malformed("the position has no view"))?;
    let n = view.seats as usize;
    let cfg = Democratie::checked_config(view.seats, &pos.options)
        .map_err(|e| CoreError::malformed(format!("the position's table: {e}")))?;
    if pos.seat as usize >= n {
        return Err(CoreError::malformed(format!(
            "seat {} is not a seat of this {n}-seat table",
            pos.seat
        )));
    }
    let me = pos.seat as usize;
    let phase = P::try_from(view.phase).unwrap_or(P::Unspecified);
    if !matches!(phase, P::MatchSetup | P::TrickCommit | P::MatchEnd) {
        return Err(CoreError::malformed(format!(
            "phase {} lies between two events: no seat decides in it",
            phase.as_str_name()
        )));
    }
    if view.seat_info.len() != n || pos.captured.len() != n {
        return Err(CoreError::malformed(format!(
            "{} seats in seat_info and {} captured piles for a {n}-seat table",
            view.seat_info.len(),
            pos.captured.len()
        )));
    }
    let mut s = Democratie::initial(&cfg);
    s.phase = phase;
    s.deal_no = view.deal_no;
    s.dealer = u8::try_from(view.dealer)
        .ok()
        .filter(|&d| (d as usize) < n)
        .ok_or_else(|| CoreError::malformed(format!("dealer {} is not a seat", view.dealer)))?;
    s.day = u8::try_from(view.day)
        .map_err(|_| CoreError::malformed(format!("day {} is out of range", view.day)))?;
    s.trick_no = u8::try_from(view.trick_no)
        .map_err(|_| CoreError::malformed(format!("trick {} is out of range", view.trick_no)))?;
    s.aborted = view.aborted;
    let deck = deck_mask(n);
    let mut seen = 0u64;
    let see = |m: u64, what: &str, seen: &mut u64| -> CoreResult<()> {
        if m & !deck != 0 {
            return Err(CoreError::malformed(format!(
                "{what}: card {} is not in the {}-card deck of {n} seats",
                card_name((m & !deck).trailing_zeros() as u8),
                deck_size(n)
            )));
        }
        if *seen & m != 0 {
            return Err(CoreError::malformed(format!(
                "card {} is in two places ({what})",
                card_name((*seen & m).trailing_zeros() as u8)
            )));
        }
        *seen |= m;
        Ok(())
    };
    let set = |cards: &[i32], what: &str| {
        pb_to_mask(cards)
            .ok_or_else(|| CoreError::malformed(format!("{what}: a card repeated or not a card")))
    };
    if view.vote_card != 0 {
        let v = card(view.vote_card, "vote_card")?;
        see(bit(v), "vote card", &mut seen)?;
        s.vote_card = v;
        s.trump = suit_of(v);
    } else {
        s.trump = TRUMP_UNSET;
    }
    s.discard = set(&view.discard, "discard")?;
    see(s.discard, "discard", &mut seen)?;
    s.hands[me] = set(&view.hand, "hand")?;
    see(s.hands[me], "hand", &mut seen)?;
    if view.my_commit != 0 {
        let c = card(view.my_commit, "my_commit")?;
        see(bit(c), "commit", &mut seen)?;
        s.commits[me] = c;
    }
    let mut hand_counts = [0usize; MAX_SEATS];
    let mut hidden_commits = Vec::new();
    for (i, info) in view.seat_info.iter().enumerate() {
        if info.seat as usize != i || pos.captured[i].seat as usize != i {
            return Err(CoreError::malformed(format!(
                "seat_info or captured out of seat order at {i}"
            )));
        }
        s.tribes[i] = info.tribes;
        let captured = set(&pos.captured[i].cards, "captured")?;
        if captured.count_ones() != info.captured_count
            || pos.captured[i].count != info.captured_count
        {
            return Err(CoreError::malformed(format!(
                "seat {i} captured {} cards, the view counts {}",
                captured.count_ones(),
                info.captured_count
            )));
        }
        see(captured, "captured", &mut seen)?;
        s.captured[i] = captured;
        if i == me {
            if info.hand_count != s.hands[me].count_ones()
                || info.committed != (s.commits[me] != NO_CARD)
            {
                return Err(CoreError::malformed(
                    "the seat's own hand or commit disagrees with its seat_info",
                ));
            }
            continue;
        }
        hand_counts[i] = info.hand_count as usize;
        if info.committed {
            hidden_commits.push(i);
        }
    }
    if let Some(t) = &view.last_trick {
        if t.played.len() != n {
            return Err(CoreError::malformed(
                "the last trick does not list a card per seat",
            ));
        }
        let mut played = [NO_CARD; MAX_SEATS];
        for (i, &c) in t.played.iter().enumerate() {
            played[i] = card(c, "last_trick")?;
        }
        let vote = card(t.vote_card, "last_trick vote_card")?;
        s.last_trick = Some(LastTrick {
            day: t.day as u8,
            trick_no: t.trick_no as u8,
            vote,
            trump: suit_of(vote),
            played,
            winner: if t.tie { NOBODY } else { t.winner as u8 },
        });
    }
    if view.over && view.winners.len() == 1 {
        s.winner = view.winners[0] as u8;
    }
    let stock = view.stock_count as usize;
    let vote = view.vote_pile_count as usize;
    if stock > 50 || vote > 8 {
        return Err(CoreError::malformed(format!(
            "a stock of {stock} or a vote pile of {vote} cards is beyond the deck's deal"
        )));
    }
    let hidden = hand_counts.iter().sum::<usize>() + hidden_commits.len() + stock + vote;
    let total = seen.count_ones() as usize + hidden;
    let dealt = phase != P::MatchSetup;
    if (dealt && phase != P::MatchEnd && total != deck_size(n)) || total > deck_size(n) {
        return Err(CoreError::malformed(format!(
            "the table holds {total} cards (hands, commits, piles, captured): the deck of {n} seats has {}",
            deck_size(n)
        )));
    }
    s.vote_len = vote as u8;
    s.stock_pos = 0;
    s.stock_end = stock as u8;
    let known = Known {
        seat: me as Seat,
        table: s,
        hand_counts,
        hidden_commits,
        stock,
        vote,
        unseen: deck & !seen,
    };
    let dealt_state = deal(&known, &mut Rng::from_u64(0));
    let rebuilt = Democratie::view(&dealt_state, Viewer::Seat(me as Seat));
    if &rebuilt != view {
        return Err(CoreError::malformed(format!(
            "the view does not hold together: {}",
            first_difference(view, &rebuilt)
        )));
    }
    if phase == P::TrickCommit {
        super::state::check_invariants(&dealt_state)
            .map_err(|e| CoreError::malformed(format!("a table the rules cannot reach: {e}")))?;
    }
    Ok(known)
}

/// The table with the unseen cards dealt: the other seats' commits and hands, the vote pile,
/// the stock.
fn deal(k: &Known, rng: &mut Rng) -> State {
    let mut s = k.table;
    let mut pool: Vec<u8> = cards_of(k.unseen).collect();
    rng.shuffle(&mut pool);
    let mut next = || pool.pop().unwrap_or(NO_CARD);
    for &i in &k.hidden_commits {
        s.commits[i] = next();
    }
    for (i, &count) in k.hand_counts.iter().enumerate() {
        for _ in 0..count {
            let c = next();
            if c != NO_CARD {
                s.hands[i] |= bit(c);
            }
        }
    }
    for j in 0..k.vote {
        s.vote_pile[j] = next();
    }
    for j in 0..k.stock {
        s.stock[j] = next();
    }
    s
}

impl Analysis for Democratie {
    type Known = Known;
    const ROLLOUT_BOT: &'static str = "tactician";
    const EVALUATOR_STEPS: u32 = 380_000; // evaluator_bench --calibrate
    const PLAYOUT_STEPS: u32 = 6; // evaluator_bench --calibrate, one-round matches

    fn known(position: &[u8]) -> CoreResult<Known> {
        let pos = pb::Position::decode(position)
            .map_err(|e| CoreError::malformed(format!("cannot decode position: {e}")))?;
        check(&pos)
    }

    fn seat(k: &Known) -> Seat {
        k.seat
    }

    fn sample(k: &Known, rng: &mut Rng) -> State {
        deal(k, rng)
    }

    fn evaluation(
        k: &Known,
        moves: &[pb::Action],
        values: Option<&[MoveValue]>,
    ) -> CoreResult<Vec<u8>> {
        let me = k.seat as usize;
        let mut out = pb::Evaluation::default();
        for (i, m) in moves.iter().enumerate() {
            let (mut wins, mut captured) = (0.0, 0.0);
            for d in 0..IMMEDIATE_DEALS {
                let mut rng = Rng::from_u64(d);
                let mut s = deal(k, &mut rng);
                let before: u32 = cards_of(s.captured[me]).map(|c| points(c) as u32).sum();
                let (day, trick, deal_no) = (s.day, s.trick_no, s.deal_no);
                let mut events = Vec::new();
                if Democratie::play(&mut s, k.seat, m, &mut rng, &mut events).is_err() {
                    continue;
                }
                // The others commit as the strongest bot would, until this trick is resolved.
                while (s.day, s.trick_no, s.deal_no) == (day, trick, deal_no) {
                    let Some(other) = Democratie::to_act(&s).first() else {
                        break;
                    };
                    let Ok(a) = Democratie::bot_action(&s, other, Self::ROLLOUT_BOT, &mut rng)
                    else {
                        break;
                    };
                    events.clear();
                    if Democratie::play(&mut s, other, &a, &mut rng, &mut events).is_err() {
                        break;
                    }
                }
                if let Some(t) = s.last_trick {
                    if (t.day, t.trick_no) == (day, trick) && t.winner as usize == me {
                        wins += 1.0;
                        let after: u32 = cards_of(s.captured[me]).map(|c| points(c) as u32).sum();
                        captured += after.saturating_sub(before) as f64;
                    }
                }
            }
            out.moves.push(pb::EvaluatedMove {
                action: Some(*m),
                trick_win_chance: wins / IMMEDIATE_DEALS as f64,
                points_captured: captured / IMMEDIATE_DEALS as f64,
                value: values.map(|v| v[i]),
            });
        }
        let key = |m: &pb::EvaluatedMove| match (values, m.value) {
            (Some(_), Some(v)) => (v.win_probability, v.margin),
            _ => (m.points_captured, m.trick_win_chance),
        };
        out.best = (0..out.moves.len())
            .reduce(|b, i| {
                if key(&out.moves[i]) > key(&out.moves[b]) {
                    i
                } else {
                    b
                }
            })
            .map(|b| b as u32);
        if let Some(v) = values {
            // Among the moves valued on most deals (screening drops some early).
            out.best = crate::rollout::best_valued(v).map(|b| b as u32);
        }
        Ok(out.encode_to_vec())
    }
}
