//! The HTTP client for Python: `HttpAgent` (runs as blocking or async iterators of events)
//! and `Session` (a thread that keeps its messages and state across runs), on
//! `aguikit-client`.
//!
//! Runs are driven by tokio tasks on one background runtime (made once per process, and made
//! again in a child after `fork`). A run's events go through a bounded queue (a slow consumer
//! slows the reading of the response, it does not fill memory) to the Python iterator; a
//! blocking `__next__` waits without the GIL and wakes up to let Ctrl-C through; an async
//! `__anext__` waits on an asyncio future resolved from the runtime. Dropping or closing the
//! iterator aborts the run and closes its connection.

use crate::errors;
use crate::input;
use crate::topy::to_py;
use aguikit_client::{
    ClientError, HttpAgent as CoreAgent, ReconnectPolicy, ResponseInfo, RunParams, RunStatus,
    Session as CoreSession, Update, WireFormat,
};
use aguikit_core::{Event, Message, ResumeEntry, RunAgentInput};
use futures_util::StreamExt;
use pyo3::exceptions::{PyRuntimeError, PyStopIteration, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString};
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use tokio::runtime::Runtime;
use tokio::sync::Notify;

/// Events a run may hold ahead of its consumer.
const QUEUE: usize = 256;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The background runtime (rebuilt in a forked child, whose copy has no threads).
fn runtime() -> PyResult<Arc<Runtime>> {
    static RT: Mutex<Option<(u32, Arc<Runtime>)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut rt = lock(&RT);
    if let Some((p, r)) = rt.as_ref()
        && *p == pid
    {
        return Ok(r.clone());
    }
    let r = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("aguikit-client")
        .enable_all()
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("starting the client runtime: {e}")))?;
    let r = Arc::new(r);
    if let Some((_, old)) = rt.replace((pid, r.clone())) {
        // A runtime inherited through fork has no threads to stop: leak it.
        std::mem::forget(old);
    }
    Ok(r)
}

/// One item of a run's queue.
enum Msg {
    Event(Box<Event>),
    /// The run failed: the exception to raise.
    Error(ClientError),
    /// A session run failed with this (already shared) error.
    Failed(Arc<ClientError>),
}

/// What the producing task and the Python iterator share.
#[derive(Default)]
struct Queue {
    items: VecDeque<Msg>,
    closed: bool,
    info: Option<ResponseInfo>,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    /// Wakes a blocking consumer.
    ready: Condvar,
    /// Wakes an async consumer.
    ready_async: Notify,
    /// Wakes the producer when there is room.
    room: Notify,
}

impl Shared {
    async fn send(&self, msg: Msg) {
        loop {
            let room = self.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            {
                let mut q = lock(&self.queue);
                if q.items.len() < QUEUE {
                    q.items.push_back(msg);
                    drop(q);
                    self.ready.notify_all();
                    self.ready_async.notify_one();
                    return;
                }
            }
            room.await;
        }
    }

    fn close(&self, info: Option<ResponseInfo>) {
        let mut q = lock(&self.queue);
        q.closed = true;
        if info.is_some() {
            q.info = info;
        }
        drop(q);
        self.ready.notify_all();
        self.ready_async.notify_one();
    }

    /// The next item, `None` at the end, or `Err(())` when nothing is there yet.
    fn try_next(&self) -> Result<Option<Msg>, ()> {
        let mut q = lock(&self.queue);
        match q.items.pop_front() {
            Some(m) => {
                drop(q);
                self.room.notify_one();
                Ok(Some(m))
            }
            None if q.closed => Ok(None),
            None => Err(()),
        }
    }
}

/// Closes the queue when the producing task ends, however it ends.
struct CloseOnDrop(Arc<Shared>);
impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close(None);
    }
}

/// Resolves an asyncio future from the runtime (unless it was cancelled meanwhile).
fn resolve_soon(py: Python<'_>, event_loop: &Py<PyAny>, future: &Py<PyAny>) {
    static RESOLVE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let Ok(resolve) = RESOLVE.get_or_try_init(py, || {
        py.import("aguikit._client")?
            .getattr("_resolve")
            .map(Bound::unbind)
    }) else {
        return;
    };
    // The loop may be closed already: nothing is waiting then.
    let _ = event_loop
        .bind(py)
        .call_method1("call_soon_threadsafe", (resolve.bind(py), future.bind(py)));
}

/// The events of one run, as a blocking iterator (`for event in run`) or, through
/// `aguikit.HttpAgent.arun`, an async one. Closing it (or dropping it) aborts the run.
#[pyclass(module = "aguikit", name = "Run")]
pub struct RunIter {
    shared: Arc<Shared>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    runtime: Arc<Runtime>,
    models: bool,
    done: Mutex<bool>,
}

impl RunIter {
    fn start<F>(runtime: Arc<Runtime>, models: bool, produce: F) -> RunIter
    where
        F: FnOnce(Arc<Shared>) -> futures_util::future::BoxFuture<'static, ()>,
    {
        let shared = Arc::new(Shared::default());
        let fut = produce(shared.clone());
        let guard = CloseOnDrop(shared.clone());
        let task = runtime.spawn(async move {
            let _guard = guard;
            fut.await;
        });
        RunIter {
            shared,
            task: Mutex::new(Some(task)),
            runtime,
            models,
            done: Mutex::new(false),
        }
    }

    /// The Python value of an item (an event, or the exception to raise).
    fn item<'py>(&self, py: Python<'py>, msg: Msg) -> PyResult<Bound<'py, PyAny>> {
        match msg {
            Msg::Event(e) => {
                let d = to_py(py, &*e)?;
                if self.models {
                    static TO_MODEL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
                    let f = TO_MODEL.get_or_try_init(py, || {
                        py.import("aguikit._models")?
                            .getattr("to_model")
                            .map(Bound::unbind)
                    })?;
                    return f.bind(py).call1((d,));
                }
                Ok(d)
            }
            Msg::Error(e) => {
                *lock(&self.done) = true;
                Err(errors::client_error(py, &e))
            }
            Msg::Failed(e) => {
                *lock(&self.done) = true;
                Err(errors::client_error(py, &e))
            }
        }
    }

    fn abort(&self) {
        if let Some(task) = lock(&self.task).take() {
            task.abort();
        }
        *lock(&self.done) = true;
    }
}

impl Drop for RunIter {
    fn drop(&mut self) {
        self.abort();
    }
}

#[pymethods]
impl RunIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if *lock(&self.done) {
            return Err(PyStopIteration::new_err(()));
        }
        loop {
            match self.shared.try_next() {
                Ok(Some(msg)) => return self.item(py, msg),
                Ok(None) => {
                    *lock(&self.done) = true;
                    return Err(PyStopIteration::new_err(()));
                }
                Err(()) => {}
            }
            // Wait without the GIL, a little at a time, so that Ctrl-C is seen.
            let shared = self.shared.clone();
            py.detach(move || {
                let q = lock(&shared.queue);
                if q.items.is_empty() && !q.closed {
                    let _ = shared
                        .ready
                        .wait_timeout(q, Duration::from_millis(100))
                        .map_err(drop);
                }
            });
            py.check_signals()?;
        }
    }

    /// The next event if one is ready: `(True, event)`, `(False, None)` at the end, or
    /// `None` when nothing is there yet (for the async iterator).
    fn _try_next<'py>(&self, py: Python<'py>) -> PyResult<Option<(bool, Bound<'py, PyAny>)>> {
        if *lock(&self.done) {
            return Ok(Some((false, py.None().into_bound(py))));
        }
        match self.shared.try_next() {
            Ok(Some(msg)) => Ok(Some((true, self.item(py, msg)?))),
            Ok(None) => {
                *lock(&self.done) = true;
                Ok(Some((false, py.None().into_bound(py))))
            }
            Err(()) => Ok(None),
        }
    }

    /// Resolves `future` (on `event_loop`) when the queue may have something.
    fn _wake(&self, event_loop: Py<PyAny>, future: Py<PyAny>) {
        let shared = self.shared.clone();
        self.runtime.spawn(async move {
            let ready = {
                let q = lock(&shared.queue);
                !q.items.is_empty() || q.closed
            };
            if !ready {
                shared.ready_async.notified().await;
            }
            Python::attach(|py| resolve_soon(py, &event_loop, &future));
        });
    }

    /// Aborts the run (closes its connection); iteration then ends.
    fn close(&self) {
        self.abort();
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __exit__(
        &self,
        _t: Option<&Bound<'_, PyAny>>,
        _v: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) {
        self.abort();
    }

    /// Reconnections made with `Last-Event-ID` (known once the run ended).
    #[getter]
    fn reconnects(&self) -> u32 {
        lock(&self.shared.queue)
            .info
            .as_ref()
            .map_or(0, |i| i.reconnects)
    }

    /// The response's HTTP status (known once the run ended).
    #[getter]
    fn status_code(&self) -> Option<u16> {
        lock(&self.shared.queue)
            .info
            .as_ref()
            .and_then(|i| i.status)
    }

    /// The response's content type (known once the run ended).
    #[getter]
    fn content_type(&self) -> Option<String> {
        lock(&self.shared.queue)
            .info
            .as_ref()
            .and_then(|i| i.content_type.clone())
    }
}

/// `aguikit._client.AsyncRun(run)`: the run as an async iterator.
fn async_run<'py>(py: Python<'py>, run: RunIter) -> PyResult<Bound<'py, PyAny>> {
    static CLASS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let class = CLASS.get_or_try_init(py, || {
        py.import("aguikit._client")?
            .getattr("AsyncRun")
            .map(Bound::unbind)
    })?;
    class.bind(py).call1((Bound::new(py, run)?,))
}

/// Seconds as a duration (`None`: no limit).
fn seconds(name: &str, s: Option<f64>) -> PyResult<Option<Duration>> {
    match s {
        None => Ok(None),
        Some(s) if s.is_finite() && s > 0.0 => Ok(Some(Duration::from_secs_f64(s))),
        Some(s) => Err(PyValueError::new_err(format!(
            "{name} must be a positive number of seconds or None, not {s}"
        ))),
    }
}

/// A run input from a dict or `ag_ui.core.RunAgentInput` (ids filled in when missing), or a
/// new one; `text` adds a user message.
fn run_input(
    py: Python<'_>,
    input: Option<&Bound<'_, PyAny>>,
    text: Option<&str>,
) -> PyResult<RunAgentInput> {
    let mut value: Value = match input {
        None => Value::Object(Default::default()),
        Some(obj) => {
            let json = input::event_json(py, obj)?;
            serde_json::from_slice(&json).map_err(|e| config_error(py, &format!("input: {e}")))?
        }
    };
    let Some(o) = value.as_object_mut() else {
        return Err(config_error(py, "input must be a dict or a RunAgentInput"));
    };
    for key in ["threadId", "runId"] {
        if !o.contains_key(key) {
            o.insert(key.into(), aguikit_core::id::random_uuid().into());
        }
    }
    if !o.contains_key("messages") {
        o.insert("messages".into(), Value::Array(Vec::new()));
    }
    let mut input: RunAgentInput = serde_json::from_value(value)
        .map_err(|e| config_error(py, &format!("input is not a RunAgentInput: {e}")))?;
    if let Some(text) = text {
        input
            .messages
            .push(Message::user(aguikit_core::id::random_uuid(), text));
    }
    Ok(input)
}

fn config_error(py: Python<'_>, message: &str) -> PyErr {
    errors::client_error(py, &ClientError::Config(message.to_owned()))
}

/// An AG-UI agent behind an HTTP endpoint.
///
/// ```python
/// agent = HttpAgent("http://127.0.0.1:8000/agent", headers={"Authorization": "Bearer …"})
/// for event in agent.run({"messages": [{"id": "u1", "role": "user", "content": "hi"}]}):
///     print(event["type"])
/// ```
///
/// Every run is one `POST` of the run input, answered with SSE or (with `format="proto"`)
/// protobuf. Events are expanded (chunks become START/CONTENT/END) and verified with the
/// reference client's rules: a violation raises `ProtocolError` (a `VerificationError`)
/// naming the event and the rule. A broken connection of a stream whose SSE frames carry
/// ids is resumed with `Last-Event-ID` (`reconnect_attempts` times, without repeating an
/// event). Time limits: `connect_timeout`, `response_timeout` (to the response headers),
/// `idle_timeout` (between two reads), `timeout` (the whole run), in seconds.
#[pyclass(module = "aguikit", frozen)]
pub struct HttpAgent {
    agent: CoreAgent,
}

#[pymethods]
impl HttpAgent {
    #[new]
    #[pyo3(signature = (
        url, *, headers=None, format="sse", timeout=None, connect_timeout=Some(30.0),
        response_timeout=Some(60.0), idle_timeout=Some(300.0), reconnect_attempts=3,
        reconnect_delay=0.5, max_events=10_000_000, max_frame_size=crate::stream::DEFAULT_MAX_FRAME
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        url: &str,
        headers: Option<&Bound<'_, PyAny>>,
        format: &str,
        timeout: Option<f64>,
        connect_timeout: Option<f64>,
        response_timeout: Option<f64>,
        idle_timeout: Option<f64>,
        reconnect_attempts: u32,
        reconnect_delay: f64,
        max_events: usize,
        max_frame_size: usize,
    ) -> PyResult<Self> {
        let encoding = match format {
            "sse" => WireFormat::Sse,
            "proto" | "protobuf" => WireFormat::Proto,
            other => {
                return Err(config_error(
                    py,
                    &format!("format must be \"sse\" or \"proto\", not {other:?}"),
                ));
            }
        };
        let mut b = CoreAgent::builder(url).wire_format(encoding);
        if let Some(h) = headers {
            let pairs: Vec<(String, String)> = if let Ok(d) = h.cast::<PyDict>() {
                d.iter()
                    .map(|(k, v)| Ok((k.extract()?, v.extract()?)))
                    .collect::<PyResult<_>>()?
            } else {
                h.extract()?
            };
            for (k, v) in pairs {
                b = b.header(&k, &v);
            }
        }
        let mut t = aguikit_client::Timeouts {
            total: seconds("timeout", timeout)?,
            ..Default::default()
        };
        t.connect = seconds("connect_timeout", connect_timeout)?;
        t.response = seconds("response_timeout", response_timeout)?;
        t.idle = seconds("idle_timeout", idle_timeout)?;
        let delay = seconds("reconnect_delay", Some(reconnect_delay))?.unwrap_or_default();
        b = b
            .timeouts(t)
            .reconnect(ReconnectPolicy {
                max_attempts: reconnect_attempts,
                delay,
                ..ReconnectPolicy::default()
            })
            .max_events(max_events)
            .max_frame_size(max_frame_size);
        // Building the HTTP client needs no runtime, but reqwest's resolver does later.
        let agent = b.build().map_err(|e| errors::client_error(py, &e))?;
        Ok(HttpAgent { agent })
    }

    /// The agent's URL.
    #[getter]
    fn url(&self) -> &str {
        self.agent.url()
    }

    /// Starts a run: returns an iterator of its events (dicts, or `ag_ui.core` models with
    /// `models=True`). `input` is a dict (wire names) or an `ag_ui.core.RunAgentInput`;
    /// missing `threadId`/`runId` get fresh UUIDs; `text` appends a user message.
    #[pyo3(signature = (input=None, *, text=None, models=false))]
    fn run(
        &self,
        py: Python<'_>,
        input: Option<&Bound<'_, PyAny>>,
        text: Option<&str>,
        models: bool,
    ) -> PyResult<RunIter> {
        let input = run_input(py, input, text)?;
        let agent = self.agent.clone();
        let rt = runtime()?;
        Ok(RunIter::start(rt, models, move |shared| {
            Box::pin(async move {
                let mut stream = agent.run(input);
                while let Some(item) = stream.next().await {
                    match item {
                        Ok(e) => shared.send(Msg::Event(Box::new(e))).await,
                        Err(e) => {
                            shared.send(Msg::Error(e)).await;
                            break;
                        }
                    }
                }
                shared.close(Some(stream.response_info()));
            })
        }))
    }

    /// As [`run`](Self::run), as an async iterator (`async for event in agent.arun(...)`).
    #[pyo3(signature = (input=None, *, text=None, models=false))]
    fn arun<'py>(
        &self,
        py: Python<'py>,
        input: Option<&Bound<'py, PyAny>>,
        text: Option<&str>,
        models: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let run = self.run(py, input, text, models)?;
        async_run(py, run)
    }

    fn __repr__(&self) -> String {
        format!("HttpAgent({:?})", self.agent.url())
    }
}

/// A conversation thread with an agent: keeps the messages, the state and the pending
/// interrupts across runs, and sends the whole conversation on every run.
///
/// ```python
/// session = Session(agent)
/// for event in session.run("What's the weather in Paris?"):
///     ...
/// session.messages, session.state, session.status
/// ```
#[pyclass(module = "aguikit", frozen)]
pub struct Session {
    inner: Arc<tokio::sync::Mutex<CoreSession>>,
    thread_id: String,
}

fn json_of<T: serde::de::DeserializeOwned>(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    what: &str,
) -> PyResult<T> {
    let json = input::event_json(py, obj)?;
    serde_json::from_slice(&json).map_err(|e| config_error(py, &format!("{what}: {e}")))
}

impl Session {
    fn held(&self, py: Python<'_>) -> PyResult<tokio::sync::MutexGuard<'_, CoreSession>> {
        self.inner.try_lock().map_err(|_| {
            errors::client_error(
                py,
                &ClientError::Config(
                    "a run of this session is in progress: read the session after it".into(),
                ),
            )
        })
    }

    fn start(
        &self,
        py: Python<'_>,
        text: Option<String>,
        params: RunParams,
        resume: Option<Vec<ResumeEntry>>,
        models: bool,
    ) -> PyResult<RunIter> {
        // Refuse at once (not in the iterator) when a run is going on.
        drop(self.held(py)?);
        let inner = self.inner.clone();
        let rt = runtime()?;
        Ok(RunIter::start(rt, models, move |shared| {
            Box::pin(async move {
                let mut session = inner.lock_owned().await;
                if let Some(text) = text {
                    session.add_user_message(text);
                }
                let mut info = None;
                {
                    let run = match resume {
                        Some(answers) => session.resume_with(params, answers),
                        None => session.run_with(params),
                    };
                    let mut run = match run {
                        Ok(r) => r,
                        Err(e) => {
                            shared.send(Msg::Error(e)).await;
                            return;
                        }
                    };
                    while let Some(u) = run.next().await {
                        match u {
                            Update::Event(e) => shared.send(Msg::Event(Box::new(e))).await,
                            Update::Ended { status } => {
                                info = Some(run.response_info());
                                if let RunStatus::Failed { error } = status {
                                    shared.send(Msg::Failed(error)).await;
                                }
                            }
                            _ => {}
                        }
                    }
                }
                drop(session);
                shared.close(info);
            })
        }))
    }
}

#[pymethods]
impl Session {
    /// A session with `agent` on thread `thread_id` (default: a new one), starting from
    /// `messages` and `state`.
    #[new]
    #[pyo3(signature = (agent, *, thread_id=None, messages=None, state=None))]
    fn new(
        py: Python<'_>,
        agent: &HttpAgent,
        thread_id: Option<String>,
        messages: Option<&Bound<'_, PyAny>>,
        state: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let thread_id = thread_id.unwrap_or_else(aguikit_core::id::random_uuid);
        let mut s = CoreSession::with_thread_id(agent.agent.clone(), thread_id.clone());
        if messages.is_some() || state.is_some() {
            let messages: Vec<Message> = match messages {
                Some(m) => json_of(py, m, "messages")?,
                None => Vec::new(),
            };
            let state: Value = match state {
                Some(s) => json_of(py, s, "state")?,
                None => Value::Object(Default::default()),
            };
            s = s.with_history(messages, state);
        }
        Ok(Session {
            inner: Arc::new(tokio::sync::Mutex::new(s)),
            thread_id,
        })
    }

    /// Runs the agent on the conversation (with `text` added as a user message first):
    /// an iterator of the run's events, folded into the session as they come. A failed run
    /// raises when iteration reaches the failure; a `RUN_ERROR` from the agent is an event
    /// (the session's `status` is then `"errored"`).
    #[pyo3(signature = (text=None, *, run_id=None, tools=None, context=None, forwarded_props=None, models=false))]
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        py: Python<'_>,
        text: Option<String>,
        run_id: Option<String>,
        tools: Option<&Bound<'_, PyAny>>,
        context: Option<&Bound<'_, PyAny>>,
        forwarded_props: Option<&Bound<'_, PyAny>>,
        models: bool,
    ) -> PyResult<RunIter> {
        let params = params(py, run_id, tools, context, forwarded_props)?;
        self.start(py, text, params, None, models)
    }

    /// As [`run`](Self::run), as an async iterator.
    #[pyo3(signature = (text=None, *, run_id=None, tools=None, context=None, forwarded_props=None, models=false))]
    #[allow(clippy::too_many_arguments)]
    fn arun<'py>(
        &self,
        py: Python<'py>,
        text: Option<String>,
        run_id: Option<String>,
        tools: Option<&Bound<'py, PyAny>>,
        context: Option<&Bound<'py, PyAny>>,
        forwarded_props: Option<&Bound<'py, PyAny>>,
        models: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let run = self.run(py, text, run_id, tools, context, forwarded_props, models)?;
        async_run(py, run)
    }

    /// As [`resume`](Self::resume), as an async iterator.
    #[pyo3(signature = (answers, *, run_id=None, models=false))]
    fn aresume<'py>(
        &self,
        py: Python<'py>,
        answers: &Bound<'py, PyAny>,
        run_id: Option<String>,
        models: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let run = self.resume(py, answers, run_id, models)?;
        async_run(py, run)
    }

    /// Answers the pending interrupts (`answers`: resume entries, dicts with `interruptId`,
    /// `status` and `payload`) and runs the agent again. Raises `InterruptError` when the
    /// answers do not address every pending interrupt, name unknown ones, or answer an
    /// expired one with anything but `cancelled`.
    #[pyo3(signature = (answers, *, run_id=None, models=false))]
    fn resume(
        &self,
        py: Python<'_>,
        answers: &Bound<'_, PyAny>,
        run_id: Option<String>,
        models: bool,
    ) -> PyResult<RunIter> {
        let answers: Vec<ResumeEntry> = json_of(py, answers, "answers")?;
        let params = params(py, run_id, None, None, None)?;
        self.start(py, None, params, Some(answers), models)
    }

    /// Adds a user message; returns its id.
    fn add_user_message(&self, py: Python<'_>, text: &str) -> PyResult<String> {
        Ok(self.held(py)?.add_user_message(text))
    }

    /// Adds a message (a dict or an `ag_ui.core` message).
    fn add_message(&self, py: Python<'_>, message: &Bound<'_, PyAny>) -> PyResult<()> {
        let m: Message = json_of(py, message, "message")?;
        self.held(py)?.add_message(m);
        Ok(())
    }

    /// The thread id.
    #[getter]
    fn thread_id(&self) -> &str {
        &self.thread_id
    }

    /// The conversation's messages (dicts).
    #[getter]
    fn messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = self.held(py)?;
        let list: Vec<&Message> = s.messages().collect();
        to_py(py, &list)
    }

    /// The shared state.
    #[getter]
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.held(py)?.state())
    }

    /// The interrupts waiting for `resume`.
    #[getter]
    fn pending_interrupts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.held(py)?.pending_interrupts())
    }

    /// How the last run ended: `finished`, `cancelled`, `interrupted`, `errored`, `failed`,
    /// `incomplete` or `aborted`; `None` before the first run.
    #[getter]
    fn status(&self, py: Python<'_>) -> PyResult<Option<&'static str>> {
        Ok(self.held(py)?.status().map(RunStatus::name))
    }

    /// The last `RUN_FINISHED.result`.
    #[getter]
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.held(py)?.result() {
            Some(v) => to_py(py, v),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The last run's `RUN_ERROR` as `{"message", "code"}`, when it ended that way.
    #[getter]
    fn error<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = self.held(py)?;
        match s.status() {
            Some(RunStatus::Errored { message, code }) => {
                let d = PyDict::new(py);
                d.set_item("message", PyString::new(py, message))?;
                d.set_item("code", code.as_deref())?;
                Ok(d.into_any())
            }
            _ => Ok(py.None().into_bound(py)),
        }
    }

    fn __repr__(&self) -> String {
        format!("Session(thread_id={:?})", self.thread_id)
    }
}

fn params(
    py: Python<'_>,
    run_id: Option<String>,
    tools: Option<&Bound<'_, PyAny>>,
    context: Option<&Bound<'_, PyAny>>,
    forwarded_props: Option<&Bound<'_, PyAny>>,
) -> PyResult<RunParams> {
    let mut p = RunParams::new();
    if let Some(id) = run_id {
        p = p.run_id(id);
    }
    if let Some(t) = tools {
        p = p.tools(json_of(py, t, "tools")?);
    }
    if let Some(c) = context {
        p = p.context(json_of(py, c, "context")?);
    }
    if let Some(f) = forwarded_props {
        p = p.forwarded_props(json_of(py, f, "forwarded_props")?);
    }
    Ok(p)
}
