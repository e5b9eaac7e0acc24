//! The conformance harness shared by every game: plays seeded matches and checks, at every
//! step, the invariants any decider must keep. `tests/conformance.rs` runs it for every game of
//! the registry and every seat count ([`crate::registry::DynGame::conformance`]).
//!
//! Checked at every step: the match awaits somebody until it is over; every awaited seat has a
//! legal action, each listed once; a seat that is not awaited has none, and is refused (by the
//! registry's turn check); the chosen action and a sample of the others apply; `decide` is
//! deterministic; the game's own invariants hold after every event; every action, event,
//! redacted event and view decodes to itself; the auditor sees events unredacted; `play` gives
//! the same events and the same state as `decide` followed by `evolve`, and a refused `play`
//! (an empty action) changes nothing; `open` likewise gives `start`'s events and state. At the
//! end of each match: replaying the events from the initial state gives the live state, the
//! same seed gives the same match, and the match ended within the step cap. Even seeds play
//! uniformly chosen legal actions, odd seeds the game's strongest bot for every seat.

use prost::Message;

use crate::error::CoreError;
use crate::game::{decide_checked, Game, Options, Seats, Viewer};
use crate::rng::Rng;
use crate::words;

#[derive(Debug, Default)]
pub struct Report {
    pub matches: u64,
    pub steps: u64,
    pub events: u64,
    pub violations: Vec<String>,
}

impl Report {
    fn violation(&mut self, seed: u64, step: u64, what: String) {
        if self.violations.len() < 20 {
            self.violations
                .push(format!("seed {seed} step {step}: {what}"));
        }
    }
}

/// The 32-byte match seed the harness uses for seed number `n`.
pub fn seed_bytes(n: u64) -> [u8; 32] {
    let mut s = [0u8; 32];
    s[..8].copy_from_slice(&n.to_le_bytes());
    s[8..16].copy_from_slice(&0x0074_6162_6c69_6572u64.to_le_bytes());
    s
}

/// True when `m` encodes to bytes that decode to `m` again.
fn round_trips<M: Message + Default + PartialEq>(m: &M) -> bool {
    M::decode(m.encode_to_vec().as_slice()).as_ref() == Ok(m)
}

/// One played match: its events and final state.
pub struct Played<G: Game> {
    pub events: Vec<G::Event>,
    pub state: G::State,
    /// How many events had been played at each decision (after the opening and after each
    /// command), where one is known.
    pub decisions: Vec<usize>,
}

fn hash_state<G: Game>(state: &G::State) -> Vec<u8> {
    G::view(state, Viewer::Auditor).encode_to_vec()
}

/// Every viewer's sentence of `event` (made from its redacted event) reads as words and names
/// no card or tile that viewer's redacted event does not hold.
fn check_sentences<G: Game>(
    event: &G::Event,
    seats: u32,
    report: &mut Report,
    seed: u64,
    step: u64,
) {
    let all = G::card_words(event);
    for v in (0..seats)
        .map(Viewer::Seat)
        .chain([Viewer::Spectator, Viewer::Auditor])
    {
        let Some(r) = G::redact(event, v) else {
            continue;
        };
        let sentence = G::event_sentence(&r, v);
        if let Err(what) = words::plain(&sentence) {
            report.violation(
                seed,
                step,
                format!("{} for {v:?}: {what}", G::event_type(event)),
            );
        }
        let seen = G::card_words(&r);
        if let Some(hidden) = all
            .iter()
            .find(|w| !seen.contains(w) && words::names(&sentence, w))
        {
            report.violation(
                seed,
                step,
                format!(
                    "{} for {v:?} names {hidden:?}, which its redacted event does not hold: {sentence:?}",
                    G::event_type(event)
                ),
            );
        }
    }
}

/// Plays one match (uniform over the awaited seats; each plays a uniformly chosen legal action
/// for an even `seed`, the game's strongest bot's for an odd one), checking every step. `max_steps` bounds a match the rules could let run forever.
pub fn play_checked<G: Game>(
    config: &G::Config,
    seats: u32,
    seed: u64,
    max_steps: u64,
    report: &mut Report,
) -> Option<Played<G>> {
    play_from::<G>(config, seats, seed, max_steps, report, None)
}

/// [`play_checked`], from `from` (a fork's starting state, its opening at seq 1) instead of
/// the game's own opening when given; the events returned are those played after it.
pub fn play_from<G: Game>(
    config: &G::Config,
    seats: u32,
    seed: u64,
    max_steps: u64,
    report: &mut Report,
    from: Option<G::State>,
) -> Option<Played<G>> {
    let seed32 = seed_bytes(seed);
    let mut choice = Rng::from_u64(seed ^ 0x5eed);
    let mut state = G::initial(config);
    let mut events: Vec<G::Event> = Vec::new();
    let mut seq: u64 = 0;
    let apply = |state: &mut G::State,
                 evs: &[G::Event],
                 events: &mut Vec<G::Event>,
                 report: &mut Report,
                 step: u64| {
        for e in evs {
            if let Err(err) = G::evolve(state, e) {
                report.violation(seed, step, format!("own event does not apply: {err}"));
                return false;
            }
            if let Err(msg) = G::check_invariants(state) {
                report.violation(
                    seed,
                    step,
                    format!("invariant after {}: {msg}", G::event_type(e)),
                );
                return false;
            }
            if G::redact(e, Viewer::Auditor).as_ref() != Some(e) {
                report.violation(
                    seed,
                    step,
                    format!("auditor sees {} redacted", G::event_type(e)),
                );
            }
            if !round_trips(e) {
                report.violation(
                    seed,
                    step,
                    format!("{} does not decode to itself: {e:?}", G::event_type(e)),
                );
            }
            check_sentences::<G>(e, seats, report, seed, step);
            for s in (0..seats).map(Viewer::Seat).chain([Viewer::Spectator]) {
                if let Some(r) = G::redact(e, s) {
                    if !round_trips(&r) {
                        report.violation(
                            seed,
                            step,
                            format!("{} for {s:?} does not decode to itself", G::event_type(e)),
                        );
                    }
                }
            }
            events.push(e.clone());
        }
        if let Err(msg) = G::check_decision_point(state) {
            report.violation(
                seed,
                step,
                format!("at a decision after {} events: {msg}", evs.len()),
            );
            return false;
        }
        true
    };

    if let Some(forked) = from {
        state = forked;
        seq = 1;
        if let Err(msg) = G::check_invariants(&state) {
            report.violation(seed, 0, format!("invariant of the fork's start: {msg}"));
            return None;
        }
        if let Err(msg) = G::check_decision_point(&state) {
            report.violation(seed, 0, format!("the fork's start: {msg}"));
            return None;
        }
    } else {
        let start = match G::start(&state, &mut Rng::for_command(&seed32, seq + 1)) {
            Ok(evs) => evs,
            Err(e) => {
                report.violation(seed, 0, format!("start failed: {e}"));
                return None;
            }
        };
        let before = state.clone();
        if !apply(&mut state, &start, &mut events, report, 0) {
            return None;
        }
        seq += start.len() as u64;
        let mut opened = before;
        let mut opening = Vec::new();
        match G::open(&mut opened, &mut Rng::for_command(&seed32, 1), &mut opening) {
            Ok(()) if opening == start && opened == state => {}
            Ok(()) => {
                report.violation(seed, 0, "open differs from start followed by evolve".into())
            }
            Err(e) => report.violation(seed, 0, format!("open failed: {e}")),
        }
    }

    let mut step = 0u64;
    let mut decisions = Vec::new();
    loop {
        if G::outcome(&state).is_some() {
            if !G::to_act(&state).is_empty() {
                report.violation(seed, step, "over but still awaiting seats".into());
            }
            break;
        }
        decisions.push(events.len());
        step += 1;
        report.steps += 1;
        if step > max_steps {
            report.violation(seed, step, format!("no end after {max_steps} steps"));
            return None;
        }
        let awaited = G::to_act(&state);
        if awaited.is_empty() {
            report.violation(seed, step, "not over but nobody to act".into());
            return None;
        }
        for v in (0..seats)
            .map(Viewer::Seat)
            .chain([Viewer::Spectator, Viewer::Auditor])
        {
            let bytes = G::view(&state, v).encode_to_vec();
            if G::View::decode(bytes.as_slice())
                .map(|d| d.encode_to_vec())
                .as_ref()
                != Ok(&bytes)
            {
                report.violation(
                    seed,
                    step,
                    format!("the view of {v:?} does not decode to itself"),
                );
            }
        }
        // A seat that is not awaited has no legal action.
        for idle in (0..seats).filter(|s| !awaited.contains(*s)) {
            if !G::legal_actions(&state, idle).is_empty() {
                report.violation(
                    seed,
                    step,
                    format!("seat {idle} is not awaited but has legal actions"),
                );
            }
        }

        let Some(actor) = awaited.nth(choice.index(awaited.len())) else {
            unreachable!("awaited is not empty")
        };
        let moves = G::legal_actions(&state, actor);
        if moves.is_empty() {
            report.violation(
                seed,
                step,
                format!("seat {actor} is awaited but has no legal action"),
            );
            return None;
        }
        // Each listed once, each decoding to itself.
        let mut encoded: Vec<Vec<u8>> = moves.iter().map(|m| m.encode_to_vec()).collect();
        if let Some(m) = moves.iter().find(|m| !round_trips(*m)) {
            report.violation(
                seed,
                step,
                format!("legal action does not decode to itself: {m:?}"),
            );
        }
        encoded.sort_unstable();
        encoded.dedup();
        if encoded.len() != moves.len() {
            report.violation(
                seed,
                step,
                format!(
                    "seat {actor} has {} legal actions, {} distinct",
                    moves.len(),
                    encoded.len()
                ),
            );
        }
        // Every legal action reads as words for the seat, from its own view.
        let own_view = G::view(&state, Viewer::Seat(actor));
        for m in &moves {
            let label = G::action_label(&own_view, actor, m);
            if let Err(what) = words::plain(&label) {
                report.violation(seed, step, format!("label of {m:?}: {what}"));
            }
        }
        // The evaluator lists every legal move once, from the position the seat faces (on
        // every seventh decision: the evaluation deals the unseen cards, slower than a move).
        if step.is_multiple_of(7) {
            match G::position(&state, actor).map(|p| G::evaluate(&p)) {
                Some(Err(e)) => report.violation(
                    seed,
                    step,
                    format!("the evaluator refuses the position of seat {actor}: {e}"),
                ),
                Some(Ok(evaluation)) => {
                    if let Some(listed) = G::evaluated_actions(&evaluation) {
                        let mut listed: Vec<Vec<u8>> =
                            listed.iter().map(|m| m.encode_to_vec()).collect();
                        listed.sort_unstable();
                        if listed != encoded {
                            report.violation(
                                seed,
                                step,
                                format!(
                                    "the evaluation of seat {actor}'s position lists {} moves, not its {} legal ones",
                                    listed.len(),
                                    encoded.len()
                                ),
                            );
                        }
                    }
                }
                None => {}
            }
        }
        // A sample of the other legal actions must apply too.
        for _ in 0..2 {
            let m = &moves[choice.index(moves.len())];
            if let Err(e) = G::decide(&state, actor, m, &mut Rng::for_command(&seed32, seq + 1)) {
                report.violation(seed, step, format!("listed action refused: {e} ({m:?})"));
            }
        }
        // A seat that is not awaited is refused by the turn check, and has no legal action.
        if let Some(idle) = (0..seats).find(|s| !awaited.contains(*s)) {
            match decide_checked::<G>(
                &state,
                idle,
                &moves[0],
                &mut Rng::for_command(&seed32, seq + 1),
            ) {
                Err(CoreError::Rule { .. }) => {}
                other => report.violation(
                    seed,
                    step,
                    format!("idle seat {idle} not refused: {other:?}"),
                ),
            }
        }
        // An empty action by the awaited seat is refused and changes nothing.
        let (mut after, mut out) = (state.clone(), Vec::new());
        let empty = G::play(
            &mut after,
            actor,
            &G::Action::default(),
            &mut Rng::for_command(&seed32, seq + 1),
            &mut out,
        );
        if empty.is_ok() || after != state || !out.is_empty() {
            report.violation(
                seed,
                step,
                format!("an empty action by seat {actor} changed the match: {empty:?}"),
            );
        }
        // Odd seeds: the game's strongest bot plays every seat; even seeds: uniform choice.
        let action = if seed % 2 == 1 {
            let bot = G::BOTS.last().copied().unwrap_or("random");
            match G::bot_action(&state, actor, bot, &mut choice) {
                Ok(a) if moves.contains(&a) => a,
                Ok(a) => {
                    report.violation(
                        seed,
                        step,
                        format!("bot {bot} chose an action not listed: {a:?}"),
                    );
                    return None;
                }
                Err(e) => {
                    report.violation(
                        seed,
                        step,
                        format!("bot {bot} found no move for awaited seat {actor}: {e}"),
                    );
                    return None;
                }
            }
        } else {
            moves[choice.index(moves.len())].clone()
        };
        let evs = match G::decide(
            &state,
            actor,
            &action,
            &mut Rng::for_command(&seed32, seq + 1),
        ) {
            Ok(evs) => evs,
            Err(e) => {
                report.violation(
                    seed,
                    step,
                    format!("listed action refused: {e} ({action:?})"),
                );
                return None;
            }
        };
        let again = G::decide(
            &state,
            actor,
            &action,
            &mut Rng::for_command(&seed32, seq + 1),
        );
        if again.as_ref().ok() != Some(&evs) {
            report.violation(seed, step, "decide is not deterministic".into());
        }
        if evs.is_empty() {
            report.violation(seed, step, "an accepted action produced no event".into());
        }
        // `play` gives the same events, and the same state as checking and applying them.
        let mut played = state.clone();
        let mut play_events = Vec::new();
        let play = G::play(
            &mut played,
            actor,
            &action,
            &mut Rng::for_command(&seed32, seq + 1),
            &mut play_events,
        );
        if !apply(&mut state, &evs, &mut events, report, step) {
            return None;
        }
        match play {
            Ok(()) if play_events == evs && played == state => {}
            Ok(()) if play_events != evs => {
                report.violation(seed, step, "play and decide give different events".into())
            }
            Ok(()) => report.violation(
                seed,
                step,
                format!("play leaves {played:?}, evolve {state:?}"),
            ),
            Err(e) => report.violation(seed, step, format!("play refused a listed action: {e}")),
        }
        seq += evs.len() as u64;
    }
    report.events += events.len() as u64;
    Some(Played {
        events,
        state,
        decisions,
    })
}

/// Plays `matches` seeded random matches from `first_seed` and checks them (see module docs).
pub fn run<G: Game>(
    seats: u32,
    options: &Options,
    matches: u64,
    first_seed: u64,
    max_steps: u64,
) -> Report {
    let mut report = Report::default();
    let config = match G::checked_config(seats, options) {
        Ok(c) => c,
        Err(e) => {
            report.violations.push(format!("configure failed: {e}"));
            return report;
        }
    };
    for seed in first_seed..first_seed + matches {
        report.matches += 1;
        let Some(played) = play_checked::<G>(&config, seats, seed, max_steps, &mut report) else {
            continue;
        };
        // Replay equals the live state.
        let mut replayed = G::initial(&config);
        for e in &played.events {
            if let Err(err) = G::evolve(&mut replayed, e) {
                report.violation(seed, 0, format!("replay failed: {err}"));
                break;
            }
        }
        if hash_state::<G>(&replayed) != hash_state::<G>(&played.state) {
            report.violation(seed, 0, "replay differs from the live state".into());
        }
        // Same seed, same match (every tenth match, to keep the harness fast).
        if seed % 10 == 0 {
            let mut quiet = Report::default();
            if let Some(again) = play_checked::<G>(&config, seats, seed, max_steps, &mut quiet) {
                if again.events != played.events {
                    report.violation(seed, 0, "same seed gave a different match".into());
                }
            }
        }
    }
    report
}

/// Plays one match in which `silent` stops answering after its first `answers` moves (random
/// legal ones): each time it is awaited after that its time is up and the game's timeout
/// `policy` decides for it ([`Game::timeout_events`]); the other seats play random legal
/// actions. Checks at every timeout that the policy's events are deterministic
/// (the same stream gives the same events, as `verify` decides them again), that they apply
/// and keep the game's invariants, and that the match after them is over or awaits a seat that
/// has a legal action; at the end, that the match ended within `max_steps` and that replaying
/// its events gives the live state. Returns the played match, or what went wrong.
pub fn play_silent_seat<G: Game>(
    seats: u32,
    options: &Options,
    policy: &str,
    silent: u32,
    answers: u64,
    seed: u64,
    max_steps: u64,
) -> Result<Played<G>, String> {
    let config = G::checked_config(seats, options).map_err(|e| format!("configure failed: {e}"))?;
    let seed32 = seed_bytes(seed);
    let mut choice = Rng::from_u64(seed ^ 0x5113);
    let mut state = G::initial(&config);
    let mut events: Vec<G::Event> = Vec::new();
    let mut seq = 0u64;
    let apply = |state: &mut G::State,
                 evs: Vec<G::Event>,
                 events: &mut Vec<G::Event>|
     -> Result<(), String> {
        for e in evs {
            G::evolve(state, &e)
                .map_err(|err| format!("{} does not apply: {err}", G::event_type(&e)))?;
            G::check_invariants(state)
                .map_err(|m| format!("invariant after {}: {m}", G::event_type(&e)))?;
            events.push(e);
        }
        G::check_decision_point(state).map_err(|m| format!("at a decision: {m}"))
    };
    let opening = G::start(&state, &mut Rng::for_command(&seed32, 1))
        .map_err(|e| format!("start failed: {e}"))?;
    seq += opening.len() as u64;
    apply(&mut state, opening, &mut events)?;
    let (mut timeouts, mut answered) = (0u64, 0u64);
    for step in 0.. {
        if G::outcome(&state).is_some() {
            if !G::to_act(&state).is_empty() {
                return Err("over but still awaiting seats".into());
            }
            break;
        }
        if step >= max_steps {
            return Err(format!(
                "no end after {max_steps} steps ({timeouts} timeouts)"
            ));
        }
        let awaited = G::to_act(&state);
        let Some(first) = awaited.first() else {
            return Err(format!("step {step}: not over but nobody to act"));
        };
        let answers_now = awaited.contains(silent) && answered < answers;
        answered += u64::from(answers_now);
        let evs = if awaited.contains(silent) && !answers_now {
            timeouts += 1;
            let decided = G::timeout_events(
                &state,
                silent,
                policy,
                &mut Rng::for_command(&seed32, seq + 1),
            )
            .map_err(|e| format!("step {step}: timeout refused: {e}"))?;
            let again = G::timeout_events(
                &state,
                silent,
                policy,
                &mut Rng::for_command(&seed32, seq + 1),
            );
            if again.as_ref().ok() != Some(&decided) {
                return Err(format!("step {step}: the timeout is not deterministic"));
            }
            if decided.is_empty() {
                return Err(format!("step {step}: the timeout decided nothing"));
            }
            decided
        } else {
            let others = Seats::from_mask(awaited.mask() & !Seats::one(silent).mask());
            let actor = match answers_now {
                true => silent,
                false => others.nth(choice.index(others.len())).unwrap_or(first),
            };
            let moves = G::legal_actions(&state, actor);
            if moves.is_empty() {
                return Err(format!(
                    "step {step}: seat {actor} is awaited but has no legal action"
                ));
            }
            let action = &moves[choice.index(moves.len())];
            G::decide(
                &state,
                actor,
                action,
                &mut Rng::for_command(&seed32, seq + 1),
            )
            .map_err(|e| format!("step {step}: listed action refused: {e}"))?
        };
        seq += evs.len() as u64;
        apply(&mut state, evs, &mut events).map_err(|e| format!("step {step}: {e}"))?;
        if G::outcome(&state).is_none() {
            for s in G::to_act(&state).iter() {
                if G::legal_actions(&state, s).is_empty() {
                    return Err(format!(
                        "step {step}: seat {s} is awaited after a timeout but has no legal action"
                    ));
                }
            }
        }
    }
    if timeouts == 0 && answers == 0 {
        return Err("the silent seat was never awaited".into());
    }
    let mut replayed = G::initial(&config);
    for e in &events {
        G::evolve(&mut replayed, e).map_err(|err| format!("replay failed: {err}"))?;
    }
    if hash_state::<G>(&replayed) != hash_state::<G>(&state) {
        return Err("replay differs from the live state".into());
    }
    Ok(Played {
        events,
        state,
        decisions: Vec::new(),
    })
}

/// A log as stored: (kind, payload) per event.
type Log = Vec<(String, Vec<u8>)>;

/// Forks of seeded matches, checked ([`crate::fork`]): for each match (played as
/// [`play_checked`] plays it), at `points` decisions spread over it, a fork from every seat's
/// knowledge and one from the auditor's. Each fork's opening is deterministic, replays to the
/// state it was decided on, keeps the game's invariants and starts where the parent was: the
/// auditor's fork in the parent's very state, a seat's fork with that seat's view and
/// Position unchanged. Every viewer but the auditor receives the lineage alone, and every
/// sentence of it reads as words. Then each fork is played to its end with every check of
/// [`play_checked`].
pub fn forks<G: Game>(
    seats: u32,
    options: &Options,
    matches: u64,
    first_seed: u64,
    points: usize,
) -> Report {
    use crate::fork::{self, ForkedAs};
    let mut report = Report::default();
    let config = match G::checked_config(seats, options) {
        Ok(c) => c,
        Err(e) => {
            report.violations.push(format!("configure failed: {e}"));
            return report;
        }
    };
    let initial = G::initial(&config);
    for seed in first_seed..first_seed + matches {
        report.matches += 1;
        let Some(played) = play_checked::<G>(&config, seats, seed, 1_000_000, &mut report) else {
            continue;
        };
        // The decision points of the parent: (seq, state, log), after its opening and each
        // command.
        let mut state = initial.clone();
        let mut points_seen: Vec<(u64, G::State, Log)> = Vec::new();
        let mut log: Log = Vec::new();
        for (n, e) in played.events.iter().enumerate() {
            if G::evolve(&mut state, e).is_err() {
                break;
            }
            log.push((G::event_type(e).to_string(), e.encode_to_vec()));
            if played.decisions.contains(&(n + 1)) {
                points_seen.push((log.len() as u64, state.clone(), log.clone()));
            }
        }
        if points_seen.is_empty() {
            continue;
        }
        let picks: Vec<usize> = (0..points)
            .map(|i| i * (points_seen.len() - 1) / points.max(2).saturating_sub(1).max(1))
            .collect();
        for (k, &pick) in picks.iter().enumerate() {
            let (at, parent, parent_log) = &points_seen[pick.min(points_seen.len() - 1)];
            let head = [k as u8; 32];
            for from in (0..seats).map(ForkedAs::Seat).chain([ForkedAs::Auditor]) {
                let (position, events) = match from {
                    ForkedAs::Seat(s) => match G::position(parent, s) {
                        Some(p) => (p, Vec::new()),
                        None => continue,
                    },
                    ForkedAs::Auditor => (Vec::new(), parent_log.clone()),
                };
                let request = fork::request("parent", *at, &head, from, position.clone(), events)
                    .encode_to_vec();
                let fork_seed = seed_bytes(seed ^ (k as u64 + 1) << 32);
                let opening = match fork::open::<G>(
                    &initial,
                    seats,
                    &request,
                    &mut Rng::for_command(&fork_seed, 1),
                ) {
                    Ok(o) => o,
                    Err(e) => {
                        report.violation(seed, *at, format!("fork {from:?} refused: {e}"));
                        continue;
                    }
                };
                let again = fork::open::<G>(
                    &initial,
                    seats,
                    &request,
                    &mut Rng::for_command(&fork_seed, 1),
                );
                if again.as_ref().ok() != Some(&opening) || !round_trips(&opening) {
                    report.violation(
                        seed,
                        *at,
                        format!("fork {from:?}: the opening is not deterministic"),
                    );
                }
                let started = match fork::started::<G>(&initial, seats, &opening) {
                    Ok(s) => s,
                    Err(e) => {
                        report.violation(seed, *at, format!("fork {from:?} does not replay: {e}"));
                        continue;
                    }
                };
                match from {
                    ForkedAs::Auditor if hash_state::<G>(&started) != hash_state::<G>(parent) => {
                        report.violation(
                            seed,
                            *at,
                            "the auditor's fork is not the parent's state".into(),
                        )
                    }
                    ForkedAs::Seat(s)
                        if G::position(&started, s).as_ref() != Some(&position)
                            || G::view(&started, Viewer::Seat(s)).encode_to_vec()
                                != G::view(parent, Viewer::Seat(s)).encode_to_vec() =>
                    {
                        report.violation(
                            seed,
                            *at,
                            format!("seat {s}'s fork does not start where it stood"),
                        )
                    }
                    _ => {}
                }
                for v in (0..seats)
                    .map(Viewer::Seat)
                    .chain([Viewer::Spectator, Viewer::Auditor])
                {
                    let seen = fork::redact(&opening, v);
                    let hides = seen.position.is_empty()
                        && seen.deal.is_empty()
                        && seen.parent_events.is_empty();
                    if v != Viewer::Auditor && !hides || v == Viewer::Auditor && seen != opening {
                        report.violation(
                            seed,
                            *at,
                            format!("the fork's opening for {v:?} is not redacted right"),
                        );
                    }
                    if let Err(what) = words::plain(&fork::sentence(&seen, v)) {
                        report.violation(
                            seed,
                            *at,
                            format!("the fork's sentence for {v:?}: {what}"),
                        );
                    }
                }
                let _ = play_from::<G>(
                    &config,
                    seats,
                    seed ^ *at << 20,
                    1_000_000,
                    &mut report,
                    Some(started),
                );
            }
        }
    }
    report
}
