//! `EventEncoder`: a drop-in for `ag_ui.encoder.EventEncoder` that also speaks protobuf.

use crate::errors;
use crate::input;
use crate::pywrite::{self, Writer};
use aguikit_core::Event;
use aguikit_core::codec::media::{self, WireFormat};
use aguikit_core::codec::proto;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString};

/// The SSE media type.
const SSE: &str = "text/event-stream";
/// The protobuf media type.
const PROTO: &str = "application/vnd.ag-ui.event+proto";

/// The JSON of one event as the official Python SDK writes it (`model_dump_json(by_alias=
/// True)` of its model), and whether it still needs checking against the schema.
/// `prefix` followed by the event's JSON text (the prefix is written first so that the SSE
/// frame is built in place, with no copy of the JSON); whether that text must be checked as
/// an event (a dict's; a model's is one).
fn event_json(
    py: Python<'_>,
    event: &Bound<'_, PyAny>,
    prefix: &[u8],
) -> PyResult<(Vec<u8>, bool)> {
    // JSON text: read as Python reads it (`json.loads`: integers of any size), then
    // written as the dict it is.
    let parsed;
    let event = if event.is_instance_of::<PyBytes>()
        || event.is_instance_of::<PyByteArray>()
        || event.is_instance_of::<PyString>()
    {
        static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let loads = LOADS.get_or_try_init(py, || {
            py.import("json")?.getattr("loads").map(Bound::unbind)
        })?;
        parsed = loads
            .bind(py)
            .call1((event,))
            .map_err(|e| errors::encode_error(py, &format!("invalid JSON: {}", e.value(py))))?;
        &parsed
    } else {
        event
    };
    if event.is_instance_of::<PyDict>() {
        let mut w = Writer::new(py);
        w.out.extend_from_slice(prefix);
        return match w.event(event) {
            Ok(()) => Ok((w.out, true)),
            Err(e) => Err(match e {
                pywrite::WriteError::Py(e) => e,
                e => errors::encode_error(py, &e.message(py)),
            }),
        };
    }
    if pywrite::is_sdk_model(event)? {
        let mut w = Writer::new(py);
        w.out.extend_from_slice(prefix);
        return match w.any(event) {
            Ok(()) => Ok((w.out, false)),
            // A value inside the model that only pydantic knows how to write: the model
            // writes itself.
            Err(e) => Ok(([prefix, &input::fallback(py, event, e)?].concat(), false)),
        };
    }
    if event.hasattr("model_dump_json")? {
        let kwargs = PyDict::new(py);
        kwargs.set_item("by_alias", true)?;
        let json: PyBackedStr = event
            .call_method("model_dump_json", (), Some(&kwargs))?
            .extract()?;
        return Ok(([prefix, json.as_bytes()].concat(), false));
    }
    Err(pywrite::not_an_event(event))
}

/// Encodes Agent User Interaction events: a drop-in for `ag_ui.encoder.EventEncoder`.
///
/// The SSE bytes are those of the official encoder (`data: ` + the event's JSON as its
/// `ag_ui.core` model writes it + a blank line), for `ag_ui.core` event models, plain dicts
/// (written in their model's member order, checked against the AG-UI schema) or JSON bytes.
/// Unlike the official encoder it honours `accept`: when the request's `Accept` header names
/// `application/vnd.ag-ui.event+proto` (with a q at least that of `text/event-stream`),
/// `get_content_type()` says so and `encode`/`encode_bytes` write length-prefixed protobuf.
/// `*/*` gets SSE.
///
/// ```python
/// encoder = EventEncoder(accept=request.headers.get("accept"))
/// return StreamingResponse((encoder.encode(e) for e in events()),
///                          media_type=encoder.get_content_type())
/// ```
#[pyclass(module = "aguikit", frozen)]
pub struct EventEncoder {
    proto: bool,
}

impl EventEncoder {
    fn bytes(&self, py: Python<'_>, event: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> PyResult<()> {
        const DATA: &[u8] = b"data: ";
        if self.proto {
            let (json, _) = event_json(py, event, b"")?;
            let e = Event::from_json_slice(&json)
                .map_err(|e| errors::encode_error(py, &format!("not an AG-UI event: {e}")))?;
            let start = out.len();
            out.extend_from_slice(&[0; 4]);
            if !proto::encode_event_into(&e, out) {
                out.truncate(start);
                return Err(errors::encode_error(
                    py,
                    &format!(
                        "a {:?} event has no protobuf form (only the 31 event types of AG-UI 1.0 have one)",
                        e.type_str()
                    ),
                ));
            }
            let len = u32::try_from(out.len() - start - 4).map_err(|_| {
                errors::encode_error(py, "an event over 4 GiB has no protobuf frame")
            })?;
            out[start..start + 4].copy_from_slice(&len.to_be_bytes());
            return Ok(());
        }
        let (mut frame, check) = event_json(py, event, DATA)?;
        if check && let Err(e) = Event::from_json_slice(&frame[DATA.len()..]) {
            return Err(errors::encode_error(
                py,
                &format!("not an AG-UI event: {e}"),
            ));
        }
        frame.extend_from_slice(b"\n\n");
        if out.is_empty() {
            *out = frame;
        } else {
            out.extend_from_slice(&frame);
        }
        Ok(())
    }

    fn text_or_bytes<'py>(&self, py: Python<'py>, out: Vec<u8>) -> PyResult<Bound<'py, PyAny>> {
        if self.proto {
            Ok(PyBytes::new(py, &out).into_any())
        } else {
            // JSON written from Python strings and checked JSON text: UTF-8.
            let text =
                String::from_utf8(out).map_err(|e| errors::encode_error(py, &e.to_string()))?;
            Ok(PyString::new(py, &text).into_any())
        }
    }
}

#[pymethods]
impl EventEncoder {
    /// An encoder for a request whose `Accept` header is `accept` (`None`: SSE).
    #[new]
    #[pyo3(signature = (accept=None))]
    fn new(accept: Option<&str>) -> Self {
        EventEncoder {
            proto: media::negotiate(accept) == WireFormat::Proto,
        }
    }

    /// The response's content type: `text/event-stream`, or
    /// `application/vnd.ag-ui.event+proto` when protobuf was negotiated.
    fn get_content_type(&self) -> &'static str {
        if self.proto { PROTO } else { SSE }
    }

    /// `"sse"` or `"proto"`.
    #[getter]
    fn format(&self) -> &'static str {
        if self.proto { "proto" } else { "sse" }
    }

    /// Encodes one event: the SSE frame as `str`, or, when protobuf was negotiated, the
    /// length-prefixed protobuf frame as `bytes`. Raises `EncodeError` for a dict or JSON
    /// that is not an AG-UI event, and for an event with no protobuf form.
    fn encode<'py>(
        &self,
        py: Python<'py>,
        event: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut out = Vec::new();
        self.bytes(py, event, &mut out)?;
        self.text_or_bytes(py, out)
    }

    /// Encodes one event as `bytes`: the SSE frame's UTF-8, or the protobuf frame.
    fn encode_bytes<'py>(
        &self,
        py: Python<'py>,
        event: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut out = Vec::new();
        self.bytes(py, event, &mut out)?;
        Ok(PyBytes::new(py, &out))
    }

    /// Encodes several events into one `str` (SSE) or `bytes` (protobuf): the
    /// concatenation of their frames.
    fn encode_many<'py>(
        &self,
        py: Python<'py>,
        events: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut out = Vec::new();
        for event in events.try_iter()? {
            self.bytes(py, &event?, &mut out)?;
        }
        self.text_or_bytes(py, out)
    }

    fn __repr__(&self) -> String {
        format!("EventEncoder(format={:?})", self.format())
    }
}
