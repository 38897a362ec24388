//! Raising the package's exceptions (declared in Python, `aguikit/errors.py`, so that they
//! can subclass both `aguikit.Error` and the matching built-in exception).

use aguikit_client::{ClientError, TimeoutKind};
use aguikit_core::engine::pipeline::{PipelineError, PipelineErrorKind};
use aguikit_core::engine::rules;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

/// The class `aguikit.errors.<name>`.
fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let module = MODULE.get_or_try_init(py, || py.import("aguikit.errors").map(Bound::unbind))?;
    Ok(module.bind(py).getattr(name)?.cast_into::<PyType>()?)
}

/// An exception of class `name` made with `message` and keyword arguments.
fn make(py: Python<'_>, name: &str, message: &str, kwargs: &[(&str, Py<PyAny>)]) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let cls = class(py, name)?;
        let kw = PyDict::new(py);
        for (k, v) in kwargs {
            kw.set_item(k, v)?;
        }
        let exc = cls.call((message,), Some(&kw))?;
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|e| e)
}

/// `aguikit.EncodeError(message)`.
pub fn encode_error(py: Python<'_>, message: &str) -> PyErr {
    make(py, "EncodeError", message, &[])
}

/// `aguikit.DecodeError(message, index)`.
pub fn decode_error(py: Python<'_>, message: &str, index: Option<usize>) -> PyErr {
    let index = index.map_or_else(|| py.None(), |i| int(py, i));
    make(py, "DecodeError", message, &[("index", index)])
}

/// `aguikit.DecodeError(message, index, events)`: with the events read before it.
pub fn decode_error_with(
    py: Python<'_>,
    message: &str,
    index: usize,
    events: Bound<'_, pyo3::types::PyList>,
) -> PyErr {
    make(
        py,
        "DecodeError",
        message,
        &[
            ("index", int(py, index)),
            ("events", events.into_any().unbind()),
        ],
    )
}

fn int(py: Python<'_>, i: usize) -> Py<PyAny> {
    i.into_pyobject(py)
        .map(|o| o.into_any().unbind())
        .unwrap_or_else(|_| py.None())
}

fn text(py: Python<'_>, s: &str) -> Py<PyAny> {
    pyo3::types::PyString::new(py, s).into_any().unbind()
}

/// The keyword arguments of a verification error.
fn verification_fields(py: Python<'_>, e: &PipelineError) -> Vec<(&'static str, Py<PyAny>)> {
    let rule = e.rule();
    let (explanation, reference) = rules::rule(rule)
        .map(|r| (r.explanation, r.reference))
        .unwrap_or(("", ""));
    vec![
        ("index", int(py, e.index)),
        ("rule", text(py, rule)),
        ("event_type", text(py, &e.event_type)),
        ("explanation", text(py, explanation)),
        ("reference", text(py, reference)),
    ]
}

/// The message of a pipeline error without its index and type (they are attributes).
fn pipeline_message(e: &PipelineError) -> String {
    match &e.kind {
        PipelineErrorKind::Rule(v) => v.message.clone(),
        other => other.to_string(),
    }
}

/// `aguikit.VerificationError` for a pipeline error.
pub fn verification_error(py: Python<'_>, e: &PipelineError) -> PyErr {
    make(
        py,
        "VerificationError",
        &pipeline_message(e),
        &verification_fields(py, e),
    )
}

/// `aguikit.VerificationError` for a rule broken by the event at `index`.
pub fn rule_error(
    py: Python<'_>,
    index: usize,
    event_type: &str,
    v: &aguikit_core::engine::Violation,
) -> PyErr {
    verification_error(
        py,
        &PipelineError {
            index,
            event_type: event_type.to_owned(),
            kind: PipelineErrorKind::Rule(v.clone()),
        },
    )
}

/// The exception for a client error.
pub fn client_error(py: Python<'_>, e: &ClientError) -> PyErr {
    let message = e.to_string();
    let received = e
        .progress()
        .map(|p| int(py, p.events))
        .unwrap_or_else(|| py.None());
    match e {
        ClientError::Config(_) => make(py, "ConfigError", &message, &[]),
        ClientError::Request { .. } => make(py, "RequestError", &message, &[]),
        ClientError::Http {
            status,
            body,
            payload,
        } => {
            let payload = payload
                .as_ref()
                .and_then(|p| crate::topy::to_py(py, p).ok())
                .map_or_else(|| py.None(), Bound::unbind);
            make(
                py,
                "HttpError",
                &message,
                &[
                    ("status", int(py, usize::from(*status))),
                    ("body", text(py, body)),
                    ("payload", payload),
                ],
            )
        }
        ClientError::ContentType { content_type, .. } => {
            let ct = content_type
                .as_deref()
                .map_or_else(|| py.None(), |c| text(py, c));
            make(py, "ContentTypeError", &message, &[("content_type", ct)])
        }
        ClientError::ConnectionLost { .. } => make(
            py,
            "ConnectionLostError",
            &message,
            &[("events_received", received)],
        ),
        ClientError::Timeout { kind, .. } => {
            let kind = match kind {
                TimeoutKind::Response => "response",
                TimeoutKind::Idle => "idle",
                TimeoutKind::Total => "total",
                _ => "other",
            };
            make(
                py,
                "TimeoutError",
                &message,
                &[("kind", text(py, kind)), ("events_received", received)],
            )
        }
        ClientError::Framing { .. } => make(
            py,
            "StreamError",
            &message,
            &[("events_received", received)],
        ),
        ClientError::Protocol(p) => make(
            py,
            "ProtocolError",
            &pipeline_message(p),
            &verification_fields(py, p),
        ),
        ClientError::LimitExceeded { .. } => make(
            py,
            "LimitExceededError",
            &message,
            &[("events_received", received)],
        ),
        ClientError::UnansweredInterrupts { .. }
        | ClientError::InterruptExpired { .. }
        | ClientError::UnknownInterrupts { .. }
        | ClientError::DuplicateAnswer { .. }
        | ClientError::NothingToResume => make(py, "InterruptError", &message, &[]),
        _ => make(
            py,
            "ClientError",
            &message,
            &[("events_received", received)],
        ),
    }
}
