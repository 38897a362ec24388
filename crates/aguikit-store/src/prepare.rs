//! Backend-independent checks and encoding of an append.

#[cfg(any(feature = "sqlite", feature = "postgres"))]
use crate::rows::{Packed, Rows};
use crate::{Result, RunStatus, StoreError};
use aguikit_core::Event;
use aguikit_core::message::Message;
use std::sync::Arc;

/// The longest thread title, in characters (an ellipsis follows a title cut there).
pub(crate) const TITLE_CHARS: usize = 80;

/// An append, checked and encoded.
pub(crate) struct Prepared {
    /// The events' wire JSON, one each ([`prepare`]; empty from [`prepare_rows`]).
    pub bodies: Vec<Arc<[u8]>>,
    /// The events laid out as rows of the SQL backends ([`prepare_rows`]).
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub rows: Vec<Packed>,
    /// How many events the append holds.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub count: usize,
    /// `RUN_STARTED.parentRunId`, if the batch has one.
    pub parent: Option<String>,
    /// The run's status after the batch, if the batch closes it.
    pub closes: Option<RunStatus>,
    /// Whether the batch begins with `RUN_STARTED` (so the run must be new).
    pub starts_run: bool,
    /// The thread title this batch offers: the first user message of the first
    /// `RUN_STARTED.input` of the batch that has one (kept only if the thread has none yet).
    pub title: Option<String>,
}

/// Checks an append of `events` to run `run` of `thread` and encodes it, one body per
/// event. `json` holds the wire JSON of some events, already written by the caller
/// (`json[i]` is that of `events[i]` when `Some`; the others are written here): empty for
/// none.
pub(crate) fn prepare(
    thread: &str,
    run: &str,
    events: &[Event],
    json: &[Option<&[u8]>],
) -> Result<Prepared> {
    let mut bodies = Vec::with_capacity(events.len());
    let mut prepared = check(thread, run, events, json, |event, given| {
        bodies.push(match given {
            // One copy, straight into what the memory store keeps.
            Some(j) => Arc::from(j),
            None => Arc::from(event.to_json_vec()),
        })
    })?;
    prepared.bodies = bodies;
    Ok(prepared)
}

/// [`prepare`], the events laid out as the SQL backends' rows ([`crate::rows`]), each
/// event's JSON written or copied straight into its row.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn prepare_rows(
    thread: &str,
    run: &str,
    events: &[Event],
    json: &[Option<&[u8]>],
) -> Result<Prepared> {
    let mut rows = Rows::default();
    let mut prepared = check(thread, run, events, json, |event, given| match given {
        Some(j) => rows.push(j),
        None => rows.push_with(|out| event.write_json(out)),
    })?;
    prepared.count = rows.count;
    prepared.rows = rows.rows;
    Ok(prepared)
}

/// The checks of [`prepare`]; `encode` takes each event with its JSON when given, in order.
fn check(
    thread: &str,
    run: &str,
    events: &[Event],
    json: &[Option<&[u8]>],
    mut encode: impl FnMut(&Event, Option<&[u8]>),
) -> Result<Prepared> {
    if json.len() > events.len() {
        return Err(StoreError::Invalid(format!(
            "{} events come with {} JSON bodies",
            events.len(),
            json.len()
        )));
    }
    if thread.is_empty() {
        return Err(StoreError::Invalid("thread id is empty".into()));
    }
    if run.is_empty() {
        return Err(StoreError::Invalid("run id is empty".into()));
    }
    // The events name the thread by its id; the store by its key.
    let id = crate::split_thread_key(thread).1;
    let mut parent = None;
    let mut closes = None;
    let mut title = None;
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
                if title.is_none() {
                    title = e.input.as_deref().and_then(|i| title_of(&i.messages));
                }
                Some((&e.thread_id, &e.run_id))
            }
            Event::RunFinished(e) => {
                let interrupted = matches!(
                    e.outcome,
                    Some(aguikit_core::interrupt::RunOutcome::Interrupt { .. })
                );
                closes = Some(if interrupted {
                    RunStatus::Interrupted
                } else {
                    RunStatus::Finished
                });
                Some((&e.thread_id, &e.run_id))
            }
            Event::RunError(_) => {
                closes = Some(RunStatus::Error);
                None
            }
            _ => None,
        };
        if let Some((t, r)) = ids
            && (t != id || r != run)
        {
            return Err(StoreError::Invalid(format!(
                "event {i} ({}) is for thread {t:?} run {r:?}, appended to thread {id:?} run {run:?}",
                event.type_str()
            )));
        }
        encode(event, json.get(i).copied().flatten());
    }
    Ok(Prepared {
        #[cfg(any(feature = "sqlite", feature = "postgres"))]
        count: events.len(),
        bodies: Vec::new(),
        #[cfg(any(feature = "sqlite", feature = "postgres"))]
        rows: Vec::new(),
        parent,
        closes,
        starts_run: matches!(events.first(), Some(Event::RunStarted(_))),
        title,
    })
}

/// The text of the first user message with any text, whitespace collapsed to single spaces,
/// cut to [`TITLE_CHARS`] characters with `…` appended when cut.
pub(crate) fn title_of(messages: &[Message]) -> Option<String> {
    messages.iter().find_map(|m| match m {
        Message::User(u) => {
            let text = u.content.to_text();
            let mut words = text.split_whitespace();
            let mut out = String::from(words.next()?);
            for w in words {
                out.push(' ');
                out.push_str(w);
            }
            if let Some((cut, _)) = out.char_indices().nth(TITLE_CHARS) {
                out.truncate(cut);
                out.push('…');
            }
            Some(out)
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use aguikit_core::message::{AssistantMessage, UserMessage};

    fn user(text: &str) -> Message {
        Message::User(UserMessage {
            id: "u".into(),
            content: aguikit_core::content::Content::Text(text.into()),
            ..Default::default()
        })
    }

    #[test]
    fn title_is_the_first_user_text_collapsed_and_cut() {
        assert_eq!(title_of(&[]), None);
        let assistant = Message::Assistant(AssistantMessage::default());
        assert_eq!(
            title_of(&[
                assistant.clone(),
                user("  \n\t "),
                user(" Hello\n\n  world\t! ")
            ]),
            Some("Hello world !".into())
        );
        let exact = "é".repeat(TITLE_CHARS);
        assert_eq!(title_of(&[user(&exact)]), Some(exact.clone()));
        let long = format!("{exact}xyz");
        assert_eq!(title_of(&[user(&long)]), Some(format!("{exact}…")));
        assert_eq!(title_of(&[assistant]), None);
    }
}
