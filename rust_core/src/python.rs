//! All PyO3 glue, nothing else. Exposed to Python as `tablier._core`; typed in
//! `service/tablier/_core.pyi`. Core errors become Python exceptions here and only here.

use std::collections::BTreeMap;

use prost::Message;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::error::CoreError;
use crate::game::Viewer;
use crate::registry::{self, DynMatch, EncodedEvent};
use crate::rng::Rng;

create_exception!(
    _core,
    CoreException,
    PyException,
    "Base class of every error the rules core reports."
);
create_exception!(
    _core,
    MalformedInput,
    CoreException,
    "The request cannot be decoded or names nothing that exists."
);
create_exception!(
    _core,
    InvalidOption,
    CoreException,
    "An unknown game type, a bad player count or option."
);
create_exception!(
    _core,
    RuleViolation,
    CoreException,
    "The rules refuse the action now; args are (reason, message)."
);
create_exception!(
    _core,
    Unsupported,
    CoreException,
    "The game does not offer this capability."
);
create_exception!(
    _core,
    CorruptLog,
    CoreException,
    "A stored event does not apply to the state it follows."
);

fn to_py(err: CoreError) -> PyErr {
    match err {
        CoreError::Malformed(m) => MalformedInput::new_err(m),
        CoreError::InvalidOption(m) => InvalidOption::new_err(m),
        CoreError::Rule { reason, message } => RuleViolation::new_err((reason, message)),
        CoreError::Unsupported(m) => Unsupported::new_err(m),
        CoreError::Corrupt(m) => CorruptLog::new_err(m),
    }
}

fn viewer(seat: Option<u32>, auditor: bool) -> Viewer {
    match (auditor, seat) {
        (true, _) => Viewer::Auditor,
        (false, Some(s)) => Viewer::Seat(s),
        (false, None) => Viewer::Spectator,
    }
}

fn seed32(seed: &[u8]) -> PyResult<[u8; 32]> {
    seed.try_into()
        .map_err(|_| MalformedInput::new_err(format!("a seed is 32 bytes, not {}", seed.len())))
}

type PyEvents = Vec<(&'static str, Py<PyBytes>)>;

fn events_to_py(py: Python<'_>, events: Vec<EncodedEvent>) -> PyEvents {
    events
        .into_iter()
        .map(|e| (e.kind, PyBytes::new(py, &e.payload).unbind()))
        .collect()
}

/// One match's state. Mutated only by `apply`, which replays stored events.
#[pyclass(module = "tablier._core")]
pub struct Match {
    inner: Box<dyn DynMatch>,
    /// Set when an `apply` failed half-way: the state can no longer be trusted.
    poisoned: bool,
}

impl Match {
    fn get(&self) -> PyResult<&dyn DynMatch> {
        if self.poisoned {
            return Err(CorruptLog::new_err(
                "this state was abandoned after an event failed to apply",
            ));
        }
        Ok(self.inner.as_ref())
    }
}

#[pymethods]
impl Match {
    #[new]
    #[pyo3(signature = (game_type, seats, options=None))]
    fn new(
        game_type: &str,
        seats: u32,
        options: Option<BTreeMap<String, String>>,
    ) -> PyResult<Self> {
        let game = registry::find(game_type).map_err(to_py)?;
        let inner = game
            .new_match(seats, &options.unwrap_or_default())
            .map_err(to_py)?;
        Ok(Match {
            inner,
            poisoned: false,
        })
    }

    #[getter]
    fn game_type(&self) -> &'static str {
        self.inner.game_id()
    }

    #[getter]
    fn seats(&self) -> u32 {
        self.inner.seats()
    }

    fn copy(&self) -> PyResult<Self> {
        Ok(Match {
            inner: self.get()?.clone_box(),
            poisoned: false,
        })
    }

    fn start(&self, py: Python<'_>, seed: &[u8], seq: u64) -> PyResult<PyEvents> {
        let seed = seed32(seed)?;
        let m = self.get()?;
        let events = py
            .allow_threads(|| m.start(&mut Rng::for_command(&seed, seq)))
            .map_err(to_py)?;
        Ok(events_to_py(py, events))
    }

    /// The opening event of a fork: `request` a `tablier.v1.Forked` without its deal.
    fn fork(&self, py: Python<'_>, request: &[u8], seed: &[u8], seq: u64) -> PyResult<PyEvents> {
        let seed = seed32(seed)?;
        let m = self.get()?;
        let events = py
            .allow_threads(|| m.fork(request, &mut Rng::for_command(&seed, seq)))
            .map_err(to_py)?;
        Ok(events_to_py(py, events))
    }

    fn decide(
        &self,
        py: Python<'_>,
        seat: u32,
        action: &[u8],
        seed: &[u8],
        seq: u64,
    ) -> PyResult<PyEvents> {
        let seed = seed32(seed)?;
        let m = self.get()?;
        let events = py
            .allow_threads(|| m.decide(seat, action, &mut Rng::for_command(&seed, seq)))
            .map_err(to_py)?;
        Ok(events_to_py(py, events))
    }

    fn host_command(
        &self,
        py: Python<'_>,
        command: &str,
        seed: &[u8],
        seq: u64,
    ) -> PyResult<PyEvents> {
        let seed = seed32(seed)?;
        let m = self.get()?;
        let events = py
            .allow_threads(|| m.host_command(command, &mut Rng::for_command(&seed, seq)))
            .map_err(to_py)?;
        Ok(events_to_py(py, events))
    }

    /// Applies a stored event (`kind` as stored; None: one of the game's own). With `at_ms`,
    /// its recorded time, the clock is stepped too (`seat`: the seat its command acted for).
    #[pyo3(signature = (payload, kind=None, at_ms=None, seat=None, command_id=None))]
    fn apply(
        &mut self,
        payload: &[u8],
        kind: Option<&str>,
        at_ms: Option<i64>,
        seat: Option<u32>,
        command_id: Option<&str>,
    ) -> PyResult<()> {
        self.get()?;
        if let Err(e) = self.inner.apply_stored(kind, payload) {
            self.poisoned = true;
            return Err(to_py(e));
        }
        if let Some(at) = at_ms {
            self.inner.clock_step(seat, command_id, at);
        }
        Ok(())
    }

    /// Applies events in order with the GIL released (replay; clocks are not stepped).
    #[pyo3(signature = (payloads, kinds=None))]
    fn apply_all(
        &mut self,
        py: Python<'_>,
        payloads: Vec<Vec<u8>>,
        kinds: Option<Vec<String>>,
    ) -> PyResult<()> {
        self.get()?;
        let inner = &mut self.inner;
        let result = py.allow_threads(|| {
            payloads.iter().enumerate().try_for_each(|(i, p)| {
                inner.apply_stored(kinds.as_ref().and_then(|k| k.get(i)).map(String::as_str), p)
            })
        });
        if let Err(e) = result {
            self.poisoned = true;
            return Err(to_py(e));
        }
        Ok(())
    }

    fn to_act(&self) -> PyResult<Vec<u32>> {
        Ok(self.get()?.to_act())
    }

    fn legal_actions(&self, py: Python<'_>, seat: u32) -> PyResult<Vec<Py<PyBytes>>> {
        let m = self.get()?;
        let moves = py.allow_threads(|| m.legal_actions(seat)).map_err(to_py)?;
        Ok(moves.iter().map(|b| PyBytes::new(py, b).unbind()).collect())
    }

    /// The legal actions of `seat`, each with its label in words: `[(action, label)]`.
    /// `names`: per seat, the display name of its player ("" for none), naming seats in the
    /// labels (`words::with_names`).
    #[pyo3(signature = (seat, names=None))]
    fn legal_moves(
        &self,
        py: Python<'_>,
        seat: u32,
        names: Option<Vec<String>>,
    ) -> PyResult<Vec<(Py<PyBytes>, String)>> {
        let m = self.get()?;
        let names = names.unwrap_or_default();
        let moves = py
            .allow_threads(|| crate::words::with_names(&names, || m.legal_moves(seat)))
            .map_err(to_py)?;
        Ok(moves
            .into_iter()
            .map(|(b, label)| (PyBytes::new(py, &b).unbind(), label))
            .collect())
    }

    /// One sentence for the viewer (`seat` / `auditor`) of an event already redacted for it
    /// (`kind` as stored): the game's own words, from the redacted event alone. `names`: per
    /// seat, the display name of its player ("" for none), naming seats in the sentence.
    #[pyo3(signature = (redacted, seat=None, auditor=false, kind=None, names=None))]
    fn event_sentence(
        &self,
        redacted: &[u8],
        seat: Option<u32>,
        auditor: bool,
        kind: Option<&str>,
        names: Option<Vec<String>>,
    ) -> PyResult<String> {
        let m = self.get()?;
        let names = names.unwrap_or_default();
        crate::words::with_names(&names, || {
            m.event_sentence(kind, redacted, viewer(seat, auditor))
        })
        .map_err(to_py)
    }

    #[pyo3(signature = (seat=None, auditor=false))]
    fn view<'py>(
        &self,
        py: Python<'py>,
        seat: Option<u32>,
        auditor: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.get()?.view(viewer(seat, auditor)).map_err(to_py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    #[pyo3(signature = (payload, seat=None, auditor=false, kind=None))]
    fn redact<'py>(
        &self,
        py: Python<'py>,
        payload: &[u8],
        seat: Option<u32>,
        auditor: bool,
        kind: Option<&str>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let out = self
            .get()?
            .redact_stored(kind, payload, viewer(seat, auditor))
            .map_err(to_py)?;
        Ok(out.map(|b: Vec<u8>| PyBytes::new(py, &b)))
    }

    #[pyo3(signature = (payload, kind=None))]
    fn event_kind(&self, payload: &[u8], kind: Option<&str>) -> PyResult<&'static str> {
        self.get()?.stored_kind(kind, payload).map_err(to_py)
    }

    /// `(move limit ms, bank ms or None, increment ms, timeout policy)`, None without a clock.
    fn clock(&self) -> PyResult<Option<(i64, Option<i64>, i64, String)>> {
        Ok(self
            .get()?
            .clock_config()
            .map(|c| (c.move_ms, c.bank_ms, c.increment_ms, c.policy)))
    }

    /// Per seat `(bank ms, wait start ms, deadline ms)` (each None when it does not apply);
    /// empty without a clock.
    fn clock_seats(&self) -> PyResult<Vec<(Option<i64>, Option<i64>, Option<i64>)>> {
        Ok(self.get()?.clock_seats())
    }

    fn is_over(&self) -> PyResult<bool> {
        Ok(self.get()?.outcome().is_some())
    }

    /// The `tablier.v1.Outcome` message once the match is over.
    fn outcome<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        Ok(self
            .get()?
            .outcome()
            .map(|o| PyBytes::new(py, &o.encode_to_vec())))
    }

    /// `(host command, seconds, key)` of the timer running now, or `None`.
    fn timer(&self) -> PyResult<Option<(&'static str, u32, u64)>> {
        Ok(self.get()?.timer().map(|t| (t.command, t.seconds, t.key)))
    }

    /// The recorded time (ms) the timer running now started at, when known (events applied
    /// with their times): its deadline is that plus its seconds.
    fn timer_started_ms(&self) -> PyResult<Option<i64>> {
        Ok(self.get()?.timer_started())
    }

    fn state_hash<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.get()?.state_hash()))
    }

    fn bot_action<'py>(
        &self,
        py: Python<'py>,
        seat: u32,
        bot: &str,
        seed: &[u8],
        seq: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let seed = seed32(seed)?;
        let m = self.get()?;
        let out = py
            .allow_threads(|| m.bot_action(seat, bot, &mut Rng::for_command(&seed, seq)))
            .map_err(to_py)?;
        Ok(PyBytes::new(py, &out))
    }

    /// The encoded `Position` seat `of_seat` faces now (the input of `evaluate`), for the
    /// viewer `seat` / `auditor`: only that seat or the auditor may have it.
    #[pyo3(signature = (of_seat, seat=None, auditor=false))]
    fn position<'py>(
        &self,
        py: Python<'py>,
        of_seat: u32,
        seat: Option<u32>,
        auditor: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self
            .get()?
            .position(viewer(seat, auditor), of_seat)
            .map_err(to_py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    #[pyo3(signature = (seat=None, auditor=false))]
    fn render(&self, seat: Option<u32>, auditor: bool) -> PyResult<String> {
        self.get()?.render(viewer(seat, auditor)).map_err(to_py)
    }
}

/// `tablier.v1.GameType` messages of every registered game.
#[pyfunction]
fn game_types(py: Python<'_>) -> Vec<Py<PyBytes>> {
    registry::games()
        .iter()
        .map(|g| PyBytes::new(py, &g.info().encode_to_vec()).unbind())
        .collect()
}

/// Legal moves with scores for a caller-supplied position (no match, no storage); with
/// `rollouts` (`tablier.v1.RolloutSettings` bytes), each move's value too.
#[pyfunction]
#[pyo3(signature = (game_type, position, rollouts=None))]
fn evaluate<'py>(
    py: Python<'py>,
    game_type: &str,
    position: &[u8],
    rollouts: Option<&[u8]>,
) -> PyResult<Bound<'py, PyBytes>> {
    let game = registry::find(game_type).map_err(to_py)?;
    let out = py
        .allow_threads(|| match rollouts {
            Some(settings) => game.evaluate_with(position, settings),
            None => game.evaluate(position),
        })
        .map_err(to_py)?;
    Ok(PyBytes::new(py, &out))
}

/// The options that keep a match of `game_type` short (its test data's `short`, declared in
/// the game's folder): what end-to-end tests and load tools play, with no table of games.
#[pyfunction]
fn short_options(game_type: &str) -> PyResult<Vec<(&'static str, &'static str)>> {
    let game = registry::find(game_type).map_err(to_py)?;
    Ok(game.test_data().short.to_vec())
}

/// The action as the rules decode it, re-encoded: what a server stores of a client's move.
#[pyfunction]
fn canonical_action<'py>(
    py: Python<'py>,
    game_type: &str,
    action: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let game = registry::find(game_type).map_err(to_py)?;
    let out = game.canonical_action(action).map_err(to_py)?;
    Ok(PyBytes::new(py, &out))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CORE_VERSION", crate::CORE_VERSION)?;
    // Event kinds every game shares, with their protobuf type (the rest are the game's Event).
    m.add(
        "GENERIC_EVENTS",
        BTreeMap::from([
            (crate::clock::SEAT_TIMED_OUT, "tablier.v1.SeatTimedOut"),
            (crate::registry::SEAT_RESIGNED, "tablier.v1.SeatResigned"),
            (crate::registry::SEAT_LEFT, "tablier.v1.SeatLeft"),
            (crate::fork::FORKED, "tablier.v1.Forked"),
        ]),
    )?;
    m.add("TIMEOUT_COMMAND", crate::clock::TIMEOUT_COMMAND)?;
    m.add_class::<Match>()?;
    m.add_function(wrap_pyfunction!(game_types, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_action, m)?)?;
    m.add_function(wrap_pyfunction!(short_options, m)?)?;
    m.add("CoreError", py.get_type::<CoreException>())?;
    m.add("MalformedInput", py.get_type::<MalformedInput>())?;
    m.add("InvalidOption", py.get_type::<InvalidOption>())?;
    m.add("RuleViolation", py.get_type::<RuleViolation>())?;
    m.add("Unsupported", py.get_type::<Unsupported>())?;
    m.add("CorruptLog", py.get_type::<CorruptLog>())?;
    Ok(())
}
