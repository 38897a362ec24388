//! Backend-independent checks and encoding of an append.

#[cfg(any(feature = "sqlite", feature = "postgres"))]
use crate::rows::{Packed, pack};
use crate::{Result, RunStatus, StoreError};
use agui_core::Event;
use agui_core::message::Message;

/// The longest thread title, in characters (an ellipsis follows a title cut there).
pub(crate) const TITLE_CHARS: usize = 80;

/// An append, checked and encoded.
pub(crate) struct Prepared {
    /// The events' wire JSON (moved into `rows` by [`Prepared::pack`]).
    pub bodies: Vec<Vec<u8>>,
    /// The events laid out as rows of the SQL backends (see [`Prepared::pack`]).
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

/// Checks an append of `events` to run `run` of `thread` and encodes it. `json` holds the
/// wire JSON of some events, already written by the caller (`json[i]` is that of
/// `events[i]` when `Some`; the others are written here): empty for none.
pub(crate) fn prepare(
    thread: &str,
    run: &str,
    events: &[Event],
    json: &[Option<&[u8]>],
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
    let mut parent = None;
    let mut closes = None;
    let mut title = None;
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
                if title.is_none() {
                    title = e.input.as_deref().and_then(|i| title_of(&i.messages));
                }
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
        bodies.push(match json.get(i).copied().flatten() {
            Some(j) => j.to_vec(),
            None => event.to_json_vec(),
        });
    }
    Ok(Prepared {
        #[cfg(any(feature = "sqlite", feature = "postgres"))]
        count: bodies.len(),
        bodies,
        #[cfg(any(feature = "sqlite", feature = "postgres"))]
        rows: Vec::new(),
        parent,
        closes,
        starts_run: matches!(events.first(), Some(Event::RunStarted(_))),
        title,
    })
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl Prepared {
    /// Moves the events' JSON into rows of several events each ([`crate::rows`]), as the
    /// SQL backends store them.
    pub(crate) fn pack(mut self) -> Prepared {
        self.rows = pack(std::mem::take(&mut self.bodies));
        self
    }
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
    use agui_core::message::{AssistantMessage, UserMessage};

    fn user(text: &str) -> Message {
        Message::User(UserMessage {
            id: "u".into(),
            content: agui_core::content::Content::Text(text.into()),
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
