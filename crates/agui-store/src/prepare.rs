//! Backend-independent checks and encoding of an append.

use crate::{Result, RunStatus, StoreError};
use agui_core::Event;

/// An append, checked and encoded.
pub(crate) struct Prepared {
    /// The events' wire JSON.
    pub bodies: Vec<Vec<u8>>,
    /// `RUN_STARTED.parentRunId`, if the batch has one.
    pub parent: Option<String>,
    /// The run's status after the batch, if the batch closes it.
    pub closes: Option<RunStatus>,
}

pub(crate) fn prepare(thread: &str, run: &str, events: &[Event]) -> Result<Prepared> {
    if thread.is_empty() {
        return Err(StoreError::Invalid("thread id is empty".into()));
    }
    if run.is_empty() {
        return Err(StoreError::Invalid("run id is empty".into()));
    }
    let mut parent = None;
    let mut closes = None;
    let mut bodies = Vec::with_capacity(events.len());
    for (i, event) in events.iter().enumerate() {
        if closes.is_some() {
            return Err(StoreError::Invalid(format!(
                "event {i} ({}) follows the run's terminal event",
                event.type_str()
            )));
        }
        let ids = match event {
            Event::RunStarted(e) => {
                if e.parent_run_id.as_deref() == Some(run) {
                    return Err(StoreError::Invalid(format!(
                        "run {run:?} names itself as its parent"
                    )));
                }
                parent = e.parent_run_id.clone().or(parent);
                Some((&e.thread_id, &e.run_id))
            }
            Event::RunFinished(e) => {
                closes = Some(RunStatus::Finished);
                Some((&e.thread_id, &e.run_id))
            }
            Event::RunError(_) => {
                closes = Some(RunStatus::Error);
                None
            }
            _ => None,
        };
        if let Some((t, r)) = ids
            && (t != thread || r != run)
        {
            return Err(StoreError::Invalid(format!(
                "event {i} ({}) is for thread {t:?} run {r:?}, appended to thread {thread:?} run {run:?}",
                event.type_str()
            )));
        }
        bodies.push(event.to_json_vec());
    }
    Ok(Prepared {
        bodies,
        parent,
        closes,
    })
}
