//! The protocol engine for Python: `verify`, `apply`, `expand`, `compact`, and the
//! incremental `Verifier` and `Applier`. The same stages, in the same order, as `agui` and
//! the Rust client (compatibility, chunk expansion, verification, application).

use crate::errors;
use crate::input::{self, Data};
use crate::stream::{self, DEFAULT_MAX_FRAME, Item};
use crate::topy::{list_to_py, to_py};
use aguikit_core::engine::apply::Applier as CoreApplier;
use aguikit_core::engine::compact::Compactor;
use aguikit_core::engine::expand::Expander;
use aguikit_core::engine::pipeline::{Pipeline, PipelineError};
use aguikit_core::{Event, Message};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;
use std::ops::ControlFlow;
use std::sync::Mutex;

/// Why feeding stopped.
enum Stop {
    /// An event broke a rule (or is malformed).
    Rule(PipelineError),
    /// Any other Python exception.
    Py(PyErr),
}

impl Stop {
    fn into_py(self, py: Python<'_>) -> PyErr {
        match self {
            Stop::Rule(e) => errors::verification_error(py, &e),
            Stop::Py(e) => e,
        }
    }
}

/// Feeds one recording item to a pipeline.
fn push_item(p: &mut Pipeline, item: Item<'_>) -> Result<(), PipelineError> {
    match item {
        Item::Text(t) => p.push_json(t).map(drop),
        Item::Str(t) => p.push_json(t.as_bytes()).map(drop),
        Item::Value(v) => p.push_value(v).map(drop),
        Item::Event(e) => p.push(*e).map(drop),
    }
}

/// Feeds `events` (a recording as bytes or text, or an iterable of events) to `p`.
fn feed(
    py: Python<'_>,
    p: &mut Pipeline,
    events: &Bound<'_, PyAny>,
    format: Option<&str>,
    max_frame: usize,
) -> Result<(), Stop> {
    let format = input::format_arg(format).map_err(Stop::Py)?;
    if let Some(data) = input::data_of(events).map_err(Stop::Py)? {
        return feed_data(py, p, &data, format, max_frame);
    }
    for item in events.try_iter().map_err(Stop::Py)? {
        let item = item.map_err(Stop::Py)?;
        let json = input::event_json(py, &item).map_err(Stop::Py)?;
        p.push_json(&json).map_err(Stop::Rule)?;
    }
    Ok(())
}

fn feed_data(
    py: Python<'_>,
    p: &mut Pipeline,
    data: &Data,
    format: Option<stream::Format>,
    max_frame: usize,
) -> Result<(), Stop> {
    let mut failed = None;
    let broken = input::each_detached(py, data, format, max_frame, |item| {
        match push_item(p, item) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                failed = Some(e);
                ControlFlow::Break(())
            }
        }
    })
    .map_err(Stop::Py)?;
    if let Some(e) = failed {
        return Err(Stop::Rule(e));
    }
    if let Some((index, message)) = broken {
        return Err(Stop::Py(input::unreadable(py, &message, Some(index))));
    }
    Ok(())
}

/// The folded conversation as `{"messages", "state", "pendingInterrupts"}`.
fn folded<'py>(py: Python<'py>, a: &CoreApplier) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("messages", to_py(py, &a.messages())?)?;
    d.set_item("state", to_py(py, a.state())?)?;
    d.set_item("pendingInterrupts", to_py(py, a.pending_interrupts())?)?;
    Ok(d)
}

/// Checks a stream with the reference client's rules.
///
/// `events` is a recording (bytes or text: SSE, JSON Lines, a JSON array, a case file or
/// length-prefixed protobuf, detected unless `format` says) or an iterable of events (dicts,
/// `ag_ui.core` models, or JSON bytes). Returns `None` for a valid stream; raises
/// `VerificationError` (index, rule, message, the reference client's behaviour) at the first
/// event that breaks a rule, or `DecodeError` for bytes that are not a recording.
#[pyfunction]
#[pyo3(signature = (events, *, format=None, max_frame_size=DEFAULT_MAX_FRAME))]
pub fn verify(
    py: Python<'_>,
    events: &Bound<'_, PyAny>,
    format: Option<&str>,
    max_frame_size: usize,
) -> PyResult<()> {
    let mut p = Pipeline::new().with_apply(false).with_emitted(false);
    feed(py, &mut p, events, format, max_frame_size).map_err(|s| s.into_py(py))?;
    p.finish().map_err(|e| errors::verification_error(py, &e))
}

/// Folds a stream into `{"messages": [...], "state": ..., "pendingInterrupts": [...]}`, as
/// the reference client does (chunks expanded, every event verified). Raises
/// `VerificationError` when the stream breaks a rule.
#[pyfunction]
#[pyo3(signature = (events, *, format=None, max_frame_size=DEFAULT_MAX_FRAME))]
pub fn apply<'py>(
    py: Python<'py>,
    events: &Bound<'py, PyAny>,
    format: Option<&str>,
    max_frame_size: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let mut p = Pipeline::new().with_emitted(false);
    feed(py, &mut p, events, format, max_frame_size).map_err(|s| s.into_py(py))?;
    p.finish().map_err(|e| errors::verification_error(py, &e))?;
    folded(py, p.applier())
}

/// Decodes each event of `events` and hands it to `f` with its index.
fn each_event(
    py: Python<'_>,
    events: &Bound<'_, PyAny>,
    format: Option<&str>,
    max_frame: usize,
    mut f: impl FnMut(usize, Event) -> Result<(), PyErr>,
) -> PyResult<()> {
    let format = input::format_arg(format)?;
    let schema = |py: Python<'_>, index: usize, ty: String, e: aguikit_core::event::DecodeError| {
        errors::verification_error(
            py,
            &PipelineError {
                index,
                event_type: ty,
                kind: e.into(),
            },
        )
    };
    if let Some(data) = input::data_of(events)? {
        let mut decoded = Vec::new();
        let mut failed = None;
        let broken = input::each_detached(py, &data, format, max_frame, |item| {
            let ty = item_type(&item);
            match item.decode() {
                Ok(e) => {
                    decoded.push(e);
                    ControlFlow::Continue(())
                }
                Err(e) => {
                    failed = Some((decoded.len(), ty, e));
                    ControlFlow::Break(())
                }
            }
        })?;
        for (i, e) in decoded.into_iter().enumerate() {
            f(i, e)?;
        }
        if let Some((i, ty, e)) = failed {
            return Err(schema(py, i, ty, e));
        }
        if let Some((index, message)) = broken {
            return Err(input::unreadable(py, &message, Some(index)));
        }
        return Ok(());
    }
    for (i, item) in events.try_iter()?.enumerate() {
        let json = input::event_json(py, &item?)?;
        match Event::from_json_slice(&json) {
            Ok(e) => f(i, e)?,
            Err(e) => return Err(schema(py, i, json_type(&json), e)),
        }
    }
    Ok(())
}

fn item_type(item: &Item<'_>) -> String {
    match item {
        Item::Text(t) => json_type(t),
        Item::Str(t) => json_type(t.as_bytes()),
        Item::Value(v) => v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        Item::Event(e) => e.type_str().to_owned(),
    }
}

fn json_type(json: &[u8]) -> String {
    serde_json::from_slice::<Value>(json)
        .ok()
        .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default()
}

fn events_list<'py>(py: Python<'py>, events: &[Event]) -> PyResult<Bound<'py, PyList>> {
    list_to_py(py, events)
}

/// Expands `*_CHUNK` events into START / CONTENT / END, as the reference client does before
/// verifying (nothing else is checked). Returns the expanded events as dicts; raises
/// `VerificationError` (a `CH` rule, or `schema` for a malformed event).
#[pyfunction]
#[pyo3(signature = (events, *, format=None, max_frame_size=DEFAULT_MAX_FRAME))]
pub fn expand<'py>(
    py: Python<'py>,
    events: &Bound<'py, PyAny>,
    format: Option<&str>,
    max_frame_size: usize,
) -> PyResult<Bound<'py, PyList>> {
    let mut x = Expander::new();
    let mut out = Vec::new();
    each_event(py, events, format, max_frame_size, |i, e| {
        let ty = e.type_str().to_owned();
        x.push(e, &mut out)
            .map_err(|v| errors::rule_error(py, i, &ty, &v))
    })?;
    events_list(py, &out)
}

/// Compacts a stored stream as the reference's `compactEvents` does: each text message's
/// and tool call's deltas joined into one, state windows collapsed into one snapshot.
/// Returns the compacted events as dicts.
#[pyfunction]
#[pyo3(signature = (events, *, format=None, max_frame_size=DEFAULT_MAX_FRAME))]
pub fn compact<'py>(
    py: Python<'py>,
    events: &Bound<'py, PyAny>,
    format: Option<&str>,
    max_frame_size: usize,
) -> PyResult<Bound<'py, PyList>> {
    let mut c = Compactor::new();
    let mut out = Vec::new();
    each_event(py, events, format, max_frame_size, |_, e| {
        c.push(e, &mut out);
        Ok(())
    })?;
    let _warnings = c.finish(&mut out);
    events_list(py, &out)
}

/// Checks a stream one event at a time (chunk expansion, then verification), as the
/// reference client does while a run streams.
///
/// ```python
/// v = Verifier()
/// for event in events:
///     v.push(event)      # raises VerificationError at the first bad event
/// v.finish()             # the end-of-stream checks
/// ```
#[pyclass(module = "aguikit")]
pub struct Verifier {
    pipeline: Mutex<Pipeline>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[pymethods]
impl Verifier {
    /// A verifier at the start of a stream.
    #[new]
    fn new() -> Self {
        Verifier {
            pipeline: Mutex::new(Pipeline::new().with_apply(false).with_emitted(false)),
        }
    }

    /// Checks the next event (a dict, an `ag_ui.core` model or JSON bytes). Raises
    /// `VerificationError` when it breaks a rule; after that, every call raises it again.
    fn push(&self, py: Python<'_>, event: &Bound<'_, PyAny>) -> PyResult<()> {
        let json = input::event_json(py, event)?;
        lock(&self.pipeline)
            .push_json(&json)
            .map(drop)
            .map_err(|e| errors::verification_error(py, &e))
    }

    /// Checks every event of `events` (an iterable of events, or a recording as bytes).
    #[pyo3(signature = (events, *, format=None, max_frame_size=DEFAULT_MAX_FRAME))]
    fn extend(
        &self,
        py: Python<'_>,
        events: &Bound<'_, PyAny>,
        format: Option<&str>,
        max_frame_size: usize,
    ) -> PyResult<()> {
        let mut p = lock(&self.pipeline);
        feed(py, &mut p, events, format, max_frame_size).map_err(|s| s.into_py(py))
    }

    /// Ends the stream: runs the end-of-stream checks (an open run with open messages or
    /// tool calls, ...).
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        lock(&self.pipeline)
            .finish()
            .map_err(|e| errors::verification_error(py, &e))
    }

    /// How many events were pushed.
    #[getter]
    fn events_seen(&self) -> usize {
        lock(&self.pipeline).events_seen()
    }
}

/// Folds a stream into messages, state and pending interrupts one event at a time, verifying
/// each (as the reference client does). Optionally starts from an existing conversation.
///
/// ```python
/// a = Applier()
/// for event in events:
///     a.push(event)
/// a.finish()
/// a.messages, a.state, a.pending_interrupts
/// ```
#[pyclass(module = "aguikit")]
pub struct Applier {
    pipeline: Mutex<Pipeline>,
}

#[pymethods]
impl Applier {
    /// An applier starting from `messages` (a list of message dicts or models) and `state`
    /// (default: no messages, state `{}`).
    #[new]
    #[pyo3(signature = (messages=None, state=None))]
    fn new(
        py: Python<'_>,
        messages: Option<&Bound<'_, PyAny>>,
        state: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let messages: Vec<Message> = match messages {
            None => Vec::new(),
            Some(m) => {
                let json = input::event_json(py, m)?;
                serde_json::from_slice(&json).map_err(|e| {
                    errors::encode_error(py, &format!("messages are not AG-UI messages: {e}"))
                })?
            }
        };
        let state: Value = match state {
            None => Value::Object(Default::default()),
            Some(s) => {
                let json = input::event_json(py, s)?;
                serde_json::from_slice(&json)
                    .map_err(|e| errors::encode_error(py, &format!("state: {e}")))?
            }
        };
        let applier = CoreApplier::with_history(messages, state);
        Ok(Applier {
            pipeline: Mutex::new(Pipeline::with_applier(applier).with_emitted(false)),
        })
    }

    /// Verifies and folds the next event. Raises `VerificationError` when it breaks a rule
    /// (what came before stays folded).
    fn push(&self, py: Python<'_>, event: &Bound<'_, PyAny>) -> PyResult<()> {
        let json = input::event_json(py, event)?;
        lock(&self.pipeline)
            .push_json(&json)
            .map(drop)
            .map_err(|e| errors::verification_error(py, &e))
    }

    /// Verifies and folds every event of `events` (an iterable, or a recording as bytes).
    #[pyo3(signature = (events, *, format=None, max_frame_size=DEFAULT_MAX_FRAME))]
    fn extend(
        &self,
        py: Python<'_>,
        events: &Bound<'_, PyAny>,
        format: Option<&str>,
        max_frame_size: usize,
    ) -> PyResult<()> {
        let mut p = lock(&self.pipeline);
        feed(py, &mut p, events, format, max_frame_size).map_err(|s| s.into_py(py))
    }

    /// Ends the stream (the end-of-stream checks).
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        lock(&self.pipeline)
            .finish()
            .map_err(|e| errors::verification_error(py, &e))
    }

    /// The messages so far (a list of dicts).
    #[getter]
    fn messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &lock(&self.pipeline).applier().messages())
    }

    /// The state so far.
    #[getter]
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, lock(&self.pipeline).applier().state())
    }

    /// The interrupts of the last `RUN_FINISHED` with an interrupt outcome, still pending.
    #[getter]
    fn pending_interrupts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, lock(&self.pipeline).applier().pending_interrupts())
    }

    /// The last `RUN_FINISHED.result`, or `None`.
    #[getter]
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match lock(&self.pipeline).applier().result() {
            Some(v) => to_py(py, v),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// How many events were pushed.
    #[getter]
    fn events_seen(&self) -> usize {
        lock(&self.pipeline).events_seen()
    }

    /// `{"messages", "state", "pendingInterrupts"}`, as `apply` returns.
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        folded(py, lock(&self.pipeline).applier())
    }
}
