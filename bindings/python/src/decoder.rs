//! Decoding for Python: `decode` (a whole recording) and the incremental `SseDecoder` and
//! `ProtoDecoder`. Events come out as dicts (what `agui decode` writes: wire names, absent
//! optionals left out, unknown members dropped), or as `ag_ui.core` models on request.

use crate::errors;
use crate::input;
use crate::stream::Item;
use crate::stream::{self, DEFAULT_MAX_FRAME};
use crate::topy::{list_to_py, with_converter};
use aguikit_core::codec::proto::{self, ProtoFrameDecoder};
use aguikit_core::codec::sse::SseDecoder as CoreSse;
use aguikit_core::event::DecodeError;
use aguikit_core::{Event, EventType};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyList;
use std::ops::{ControlFlow, Range};
use std::sync::Mutex;

/// `aguikit._models.to_models`: dicts to `ag_ui.core` models.
fn to_models<'py>(py: Python<'py>, list: Bound<'py, PyList>) -> PyResult<Bound<'py, PyList>> {
    static CONVERT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let f = CONVERT.get_or_try_init(py, || {
        py.import("aguikit._models")?
            .getattr("to_models")
            .map(Bound::unbind)
    })?;
    Ok(f.bind(py).call1((list,))?.cast_into::<PyList>()?)
}

/// The events as a list of dicts, or of models when `models`.
fn listed<'py>(py: Python<'py>, events: &[Event], models: bool) -> PyResult<Bound<'py, PyList>> {
    let list = list_to_py(py, events)?;
    if models {
        to_models(py, list)
    } else {
        Ok(list)
    }
}

/// Events read, not yet Python objects: the content events (the bulk of a stream) as their
/// parts, their strings in one buffer, the others as events.
#[derive(Default)]
struct Batch {
    read: Vec<Read>,
    text: String,
}

enum Read {
    /// A content event: its type, and where its id and delta are in [`Batch::text`].
    Content(EventType, Range<usize>, Range<usize>),
    Event(Event),
}

impl Batch {
    /// Reads one item of a recording.
    fn read(&mut self, item: Item<'_>) -> Result<(), DecodeError> {
        let text = match &item {
            Item::Str(t) => Some(*t),
            Item::Text(t) => std::str::from_utf8(t).ok(),
            _ => None,
        };
        let event = match text {
            Some(text) => {
                if let Some(parts) = Event::content_parts(text) {
                    let start = self.text.len();
                    self.text.push_str(&parts.id);
                    let mid = self.text.len();
                    self.text.push_str(&parts.delta);
                    self.read.push(Read::Content(
                        parts.event_type,
                        start..mid,
                        mid..self.text.len(),
                    ));
                    return Ok(());
                }
                Event::from_json_str(text)?
            }
            None => item.decode()?,
        };
        self.read.push(Read::Event(event));
        Ok(())
    }

    fn len(&self) -> usize {
        self.read.len()
    }

    /// Moves the events read into `out` as Python objects.
    fn convert(&mut self, py: Python<'_>, out: &mut Vec<Py<PyAny>>) -> PyResult<()> {
        out.reserve(self.read.len());
        let text = &self.text;
        let done = with_converter(py, |c| {
            for r in self.read.drain(..) {
                let obj = match r {
                    Read::Content(et, id, delta) => c.content(et, &text[id], &text[delta])?,
                    Read::Event(e) => c.value(&e)?,
                };
                out.push(obj.unbind());
            }
            Ok(())
        });
        self.text.clear();
        done
    }
}

/// Decodes a whole recording into its events.
///
/// `data` is bytes (or text): SSE, length-prefixed protobuf, JSON Lines, a JSON array, a
/// conformance case file or one JSON event, detected from the first bytes unless `format`
/// (`"sse"`, `"proto"`, `"json"`) says. Returns a list of event dicts, or of `ag_ui.core`
/// models with `models=True` (needs `ag-ui-protocol`). Raises `DecodeError` naming the
/// event (or frame) that cannot be read; its `events` holds the events before it.
#[pyfunction]
#[pyo3(signature = (data, format=None, *, models=false, max_frame_size=DEFAULT_MAX_FRAME))]
pub fn decode<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    format: Option<&str>,
    models: bool,
    max_frame_size: usize,
) -> PyResult<Bound<'py, PyList>> {
    let format = input::format_arg(format)?;
    let Some(data) = input::data_of(data)? else {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "decode() takes bytes or str (a recording); for Python objects use them as they are",
        ));
    };
    // Events are read in batches, each turned into Python objects as soon as it is full:
    // a batch is small enough to stay in the processor's cache, and its memory is reused by
    // the next. Reading takes no GIL (for large input); converting takes it back.
    let mut batch = Batch::default();
    let mut out: Vec<Py<PyAny>> = Vec::new();
    let mut failed = None;
    let mut py_error = None;
    let broken = input::each_detached(py, &data, format, max_frame_size, |item| {
        if let Err(e) = batch.read(item) {
            failed = Some(e);
            return ControlFlow::Break(());
        }
        if batch.len() == BATCH
            && let Err(e) = Python::attach(|py| batch.convert(py, &mut out))
        {
            py_error = Some(e);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    })?;
    if let Some(e) = py_error {
        return Err(e);
    }
    batch.convert(py, &mut out)?;
    let index = out.len();
    let list = PyList::new(py, out)?;
    let list = if models { to_models(py, list)? } else { list };
    if let Some(e) = failed {
        return Err(errors::decode_error_with(
            py,
            &format!("event {index}: {e}"),
            index,
            list,
        ));
    }
    if let Some((index, message)) = broken {
        return Err(errors::decode_error_with(py, &message, index, list));
    }
    Ok(list)
}

/// Events read before their conversion into Python objects (see [`decode`]).
const BATCH: usize = 256;

struct SseState {
    decoder: CoreSse,
    /// Frames handed out so far.
    frames: usize,
}

/// An incremental SSE decoder: bytes in as they arrive, events out.
///
/// Follows the SSE standard (LF, CRLF or CR line endings, comments, `id:`, `event:`,
/// `retry:`, multi-line `data:`, a leading BOM, UTF-8 split across reads); each frame's
/// data is one JSON event, checked against the AG-UI schema.
///
/// ```python
/// d = SseDecoder()
/// for chunk in response.iter_bytes():
///     for event in d.feed(chunk):
///         ...
/// rest = d.finish()   # a last frame without its blank line
/// ```
#[pyclass(module = "aguikit")]
pub struct SseDecoder {
    state: Mutex<SseState>,
    models: bool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl SseDecoder {
    fn drain<'py>(
        &self,
        py: Python<'py>,
        data: Option<&[u8]>,
        end: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut st = lock(&self.state);
        if let Some(data) = data {
            st.decoder.push(data);
        }
        let mut batch = Batch::default();
        let failure = loop {
            let SseState { decoder, frames } = &mut *st;
            let next = if end {
                decoder.finish_ref()
            } else {
                decoder.next_frame_ref()
            };
            match next {
                Ok(Some(frame)) => {
                    let index = *frames;
                    *frames += 1;
                    if let Err(e) = batch.read(Item::Str(frame.data)) {
                        break Some((index, format!("frame {index}: {e}")));
                    }
                }
                Ok(None) => break None,
                Err(e) => {
                    let index = *frames;
                    break Some((index, format!("frame {index}: {}", stream::sse_message(&e))));
                }
            }
        };
        drop(st);
        let mut out = Vec::with_capacity(batch.len());
        batch.convert(py, &mut out)?;
        let list = PyList::new(py, out)?;
        let list = if self.models {
            to_models(py, list)?
        } else {
            list
        };
        match failure {
            None => Ok(list),
            Some((index, message)) => Err(errors::decode_error_with(py, &message, index, list)),
        }
    }
}

#[pymethods]
impl SseDecoder {
    /// A decoder refusing frames over `max_frame_size` bytes (16 MiB by default); events
    /// as dicts, or `ag_ui.core` models with `models=True`.
    #[new]
    #[pyo3(signature = (*, models=false, max_frame_size=DEFAULT_MAX_FRAME))]
    fn new(models: bool, max_frame_size: usize) -> Self {
        SseDecoder {
            state: Mutex::new(SseState {
                decoder: CoreSse::with_max_frame_size(max_frame_size),
                frames: 0,
            }),
            models,
        }
    }

    /// Reads the next bytes; returns the events completed by them. A frame that is not an
    /// AG-UI event raises `DecodeError` (its `events` are the ones completed before it;
    /// decoding goes on after it); broken framing (invalid UTF-8, a frame over the limit)
    /// raises it every time after.
    fn feed<'py>(&self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let data = input::data_of(data)?
            .ok_or_else(|| pyo3::exceptions::PyTypeError::new_err("feed() takes bytes"))?;
        self.drain(py, Some(data.as_slice()), false)
    }

    /// Ends the stream: returns the events of a last frame not followed by a blank line.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.drain(py, None, true)
    }

    /// The last `id:` field seen (what a client sends as `Last-Event-ID`), or `None`.
    #[getter]
    fn last_event_id(&self) -> Option<String> {
        lock(&self.state).decoder.last_event_id().map(str::to_owned)
    }

    /// The last `retry:` field seen (milliseconds), or `None`.
    #[getter]
    fn retry(&self) -> Option<u64> {
        lock(&self.state).decoder.retry()
    }
}

struct ProtoState {
    decoder: ProtoFrameDecoder,
    frames: usize,
}

/// An incremental decoder of length-prefixed protobuf (`application/vnd.ag-ui.event+proto`):
/// bytes in as they arrive, events out. Events of a later protocol version are skipped (as
/// the reference does).
#[pyclass(module = "aguikit")]
pub struct ProtoDecoder {
    state: Mutex<ProtoState>,
    models: bool,
}

#[pymethods]
impl ProtoDecoder {
    /// A decoder refusing frames over `max_frame_size` bytes (16 MiB by default).
    #[new]
    #[pyo3(signature = (*, models=false, max_frame_size=DEFAULT_MAX_FRAME))]
    fn new(models: bool, max_frame_size: usize) -> Self {
        ProtoDecoder {
            state: Mutex::new(ProtoState {
                decoder: ProtoFrameDecoder::with_max_frame_size(max_frame_size),
                frames: 0,
            }),
            models,
        }
    }

    /// Reads the next bytes; returns the events they complete. A malformed frame raises
    /// `DecodeError` (with the events before it).
    fn feed<'py>(&self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let data = input::data_of(data)?
            .ok_or_else(|| pyo3::exceptions::PyTypeError::new_err("feed() takes bytes"))?;
        let mut st = lock(&self.state);
        st.decoder.push(data.as_slice());
        let mut events = Vec::new();
        let failure = loop {
            let index = st.frames;
            match st.decoder.next_frame() {
                Ok(Some(body)) => {
                    st.frames += 1;
                    match proto::decode_event(&body) {
                        Ok(Some(e)) => events.push(e),
                        Ok(None) => {}
                        Err(e) => break Some((index, stream::proto_message(&e, index))),
                    }
                }
                Ok(None) => break None,
                Err(e) => break Some((index, stream::proto_message(&e, index))),
            }
        };
        drop(st);
        let list = listed(py, &events, self.models)?;
        match failure {
            None => Ok(list),
            Some((index, message)) => Err(errors::decode_error_with(py, &message, index, list)),
        }
    }

    /// Ends the stream: raises `DecodeError` when it ended in the middle of a frame.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let st = lock(&self.state);
        match st.decoder.finish() {
            Ok(()) => Ok(PyList::empty(py)),
            Err(e) => {
                let index = st.frames;
                Err(errors::decode_error(
                    py,
                    &stream::proto_message(&e, index),
                    Some(index),
                ))
            }
        }
    }
}
