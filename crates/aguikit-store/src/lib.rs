#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_debug_implementations, missing_docs)]

mod error;
mod memory;
mod notify;
#[cfg(feature = "postgres")]
mod postgres;
mod prepare;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod rows;
#[cfg(feature = "sqlite")]
mod sqlite;
mod tail;

pub use error::StoreError;
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::{PostgresOptions, PostgresStore};
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteOptions, SqliteStore, Synchronous};
pub use tail::tail_stream;

use aguikit_core::Event;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use serde::Serialize;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

/// A `Result` whose error is a [`StoreError`].
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// One stored event, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    /// Its sequence number in the thread (from 1, contiguous).
    pub seq: u64,
    /// The run it belongs to.
    pub run_id: String,
    /// The event.
    pub event: Event,
}

/// One stored event as the JSON it was stored as (what a server sends again on resume).
#[derive(Debug, Clone, PartialEq)]
pub struct RawEvent {
    /// Its sequence number in the thread.
    pub seq: u64,
    /// The run it belongs to.
    pub run_id: String,
    /// The event's wire JSON.
    pub json: Vec<u8>,
}

impl RawEvent {
    /// Decodes the stored JSON. Empty JSON is what a backend reads from a damaged row (a
    /// body that is not text, or a row of several events that does not hold them).
    pub fn decode(self, thread: &str) -> Result<StoredEvent> {
        let event = Event::from_json_slice(&self.json).map_err(|e| StoreError::Corrupt {
            thread: thread.to_owned(),
            seq: self.seq,
            message: if self.json.is_empty() {
                "the stored row is damaged: its body is not text, or does not hold the events \
                 its count says"
                    .to_owned()
            } else {
                e.to_string()
            },
        })?;
        Ok(StoredEvent {
            seq: self.seq,
            run_id: self.run_id,
            event,
        })
    }
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RunStatus {
    /// No terminal event stored yet.
    Running,
    /// Closed by `RUN_FINISHED` (an outcome other than an interrupt).
    Finished,
    /// Closed by `RUN_FINISHED` with an `interrupt` outcome: paused, waiting for the
    /// answers to its interrupts, which a new run of the thread gives (`resume`). What it
    /// waits for is the thread's fold's open interrupts.
    Interrupted,
    /// Closed by `RUN_ERROR`.
    Error,
}

impl RunStatus {
    /// The stored spelling (`running`, `finished`, `interrupted`, `error`).
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Error => "error",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<RunStatus> {
        Some(match s {
            "running" => RunStatus::Running,
            "finished" => RunStatus::Finished,
            "interrupted" => RunStatus::Interrupted,
            "error" => RunStatus::Error,
            _ => return None,
        })
    }
}

/// The store's name of thread `id` in `owner`'s namespace (`None`: the namespace of
/// threads without an owner): what every [`EventStore`] method takes as `thread`.
///
/// A thread id names a thread within its owner's namespace: a server stores principal A's
/// thread `x` and principal B's thread `x` as two threads, under `thread_key(Some("A"),
/// "x")` and `thread_key(Some("B"), "x")`. A thread without an owner is stored under its
/// id as it is (so a store used without owners, by a library or a server without
/// authentication, names threads by their ids); an owned thread under `\u{1}`, the byte
/// length of the owner in decimal, `:`, the owner, then the id (and an ownerless id that
/// begins with `\u{1}` under `\u{1}:` and the id), so that no two (owner, id) pairs share a
/// key. [`split_thread_key`] takes a key apart again. The events keep the client's id in
/// their `threadId`; the store checks them against the key's id.
///
/// Stores written before threads had namespaces named owned threads by their ids; the
/// SQLite and PostgreSQL stores move them to their key when they are first opened by this
/// version (see their module documentation). Upgrade every process sharing a database at
/// once: an earlier release does not find owned threads under their keys.
///
/// ```
/// use aguikit_store::{split_thread_key, thread_key};
/// assert_eq!(thread_key(None, "t1"), "t1");
/// let alice = thread_key(Some("alice"), "t1");
/// assert_ne!(alice, thread_key(Some("bob"), "t1"));
/// assert_eq!(split_thread_key(&alice), (Some("alice"), "t1"));
/// assert_eq!(split_thread_key("t1"), (None, "t1"));
/// ```
pub fn thread_key(owner: Option<&str>, id: &str) -> String {
    match owner {
        Some(owner) => format!("\u{1}{}:{owner}{id}", owner.len()),
        None if id.starts_with('\u{1}') => format!("\u{1}:{id}"),
        None => id.to_owned(),
    }
}

/// The store's name of thread `id` in `owner`'s namespace within `scope` (`None`: no
/// scope, the same as [`thread_key`]).
///
/// A scope keeps the threads of one agent apart from another's when several agents share
/// a store (a gateway's upstreams): agent `b`'s thread `x` is not agent `a`'s thread `x`,
/// and [`ThreadQuery::scope`] lists one scope's threads. A scoped key is `\u{1}@`, the
/// byte length of the scope in decimal, `:`, the scope, then the [`thread_key`] of
/// `(owner, id)`; unscoped keys never begin with `\u{1}@`, so the threads of a store
/// written before scopes existed are all unscoped.
///
/// ```
/// use aguikit_store::{scoped_thread_key, split_thread_key, thread_key, thread_key_scope};
/// let b = scoped_thread_key(Some("b"), Some("alice"), "t1");
/// assert_ne!(b, scoped_thread_key(Some("a"), Some("alice"), "t1"));
/// assert_ne!(b, thread_key(Some("alice"), "t1"));
/// assert_eq!(split_thread_key(&b), (Some("alice"), "t1"));
/// assert_eq!(thread_key_scope(&b), Some("b"));
/// assert_eq!(thread_key_scope(&thread_key(None, "t1")), None);
/// assert_eq!(scoped_thread_key(None, None, "t1"), thread_key(None, "t1"));
/// ```
pub fn scoped_thread_key(scope: Option<&str>, owner: Option<&str>, id: &str) -> String {
    match scope {
        None => thread_key(owner, id),
        Some(scope) => format!("{}{}", scope_prefix(scope), thread_key(owner, id)),
    }
}

/// What every key of `scope` begins with ([`scoped_thread_key`]).
pub(crate) fn scope_prefix(scope: &str) -> String {
    format!("{SCOPED}{}:{scope}", scope.len())
}

/// What scoped keys begin with, and unscoped ones never do.
pub(crate) const SCOPED: &str = "\u{1}@";

/// A scoped key taken apart: its scope and the [`thread_key`] inside it; `None` for a key
/// without a scope (or not well formed).
fn split_scope(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix(SCOPED)?;
    let (len, tail) = rest.split_once(':')?;
    if len.is_empty() || !len.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let len: usize = len.parse().ok()?;
    if len > tail.len() || !tail.is_char_boundary(len) {
        return None;
    }
    Some(tail.split_at(len))
}

/// The scope a [`scoped_thread_key`] names (`None`: an unscoped key).
pub fn thread_key_scope(key: &str) -> Option<&str> {
    split_scope(key).map(|(scope, _)| scope)
}

/// Whether `key` is in `scope` (`None`: has no scope), as [`ThreadQuery::scope`] filters:
/// by the key's beginning, as the SQL stores do.
pub(crate) fn in_scope(key: &str, scope: Option<&str>) -> bool {
    match scope {
        None => !key.starts_with(SCOPED),
        Some(scope) => key.starts_with(&scope_prefix(scope)),
    }
}

/// The owner and the id a [`thread_key`] (or [`scoped_thread_key`]) names. A key that is
/// not well formed (a store's own name for a thread made by a library) is an ownerless id.
pub fn split_thread_key(key: &str) -> (Option<&str>, &str) {
    let key = split_scope(key).map_or(key, |(_, inner)| inner);
    let Some(rest) = key.strip_prefix('\u{1}') else {
        return (None, key);
    };
    if let Some(id) = rest.strip_prefix(':') {
        return (None, id);
    }
    let owned = rest.split_once(':').and_then(|(len, tail)| {
        let len: usize = len.parse().ok()?;
        if !tail.is_char_boundary(len.min(tail.len())) || len > tail.len() {
            return None;
        }
        Some((Some(&tail[..len]), &tail[len..]))
    });
    owned.unwrap_or((None, key))
}

/// Serialises a [`ThreadInfo::thread_id`] (a key) as the thread's id.
fn serialize_id<S: serde::Serializer>(key: &str, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(split_thread_key(key).1)
}

/// A thread of the store. Serialised (for thread lists), `threadId` is the thread's id
/// ([`ThreadInfo::id`]), and `owner` names its namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadInfo {
    /// The thread's name in the store: its [`thread_key`] (its id, for a thread without an
    /// owner).
    #[serde(serialize_with = "serialize_id")]
    pub thread_id: String,
    /// The sequence of its last event (its event count; 0 for a claimed thread with no
    /// events yet).
    pub last_seq: u64,
    /// How many runs it has.
    pub run_count: u64,
    /// Who the thread belongs to ([`EventStore::claim_thread`]); `None` for a thread made
    /// by a plain [`EventStore::append`] or claimed without an owner.
    pub owner: Option<String>,
    /// When the thread was made (Unix milliseconds; 0 for threads stored before this field
    /// existed).
    pub created_ms: u64,
    /// When events were last appended to it, or when it was claimed (Unix milliseconds;
    /// never decreases; 0 for threads stored before this field existed and not appended to
    /// since).
    pub updated_ms: u64,
    /// A title for lists: the text of the first user message in the first stored
    /// `RUN_STARTED.input.messages` that has one, whitespace collapsed, cut to 80
    /// characters (then followed by `…`). Set once, never changed.
    pub title: Option<String>,
    /// The status of the thread's most recently started run (`None` before any run).
    pub last_status: Option<RunStatus>,
    /// The thread (of the same namespace) and run this thread was forked from, when a
    /// client said so ([`EventStore::update_thread`]).
    pub fork_of: Option<ForkOf>,
}

/// Where a forked thread comes from: a thread of the same namespace (by its id) and the
/// run of it whose end the fork starts from. Serialised as `{"threadId", "runId"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkOf {
    /// The thread's id (not its key: the fork's namespace is the thread's).
    pub thread_id: String,
    /// The run of that thread the fork branches at: it starts after that run (a fork of
    /// the conversation at its end), or in its place (a message of that run edited and
    /// sent again).
    pub run_id: String,
}

/// What [`EventStore::update_thread`] changes: each field that is `Some`; `None` leaves
/// the thread's value as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadUpdate {
    /// A title given by a person: replaces the thread's title (the one derived from its
    /// first user message included, which is then never derived again).
    pub title: Option<String>,
    /// Where the thread was forked from.
    pub fork_of: Option<ForkOf>,
}

impl ThreadInfo {
    /// The thread's id, within its owner's namespace (see [`thread_key`]).
    pub fn id(&self) -> &str {
        split_thread_key(&self.thread_id).1
    }
}

/// Which threads [`EventStore::list_threads`] returns.
#[derive(Debug, Clone, Default)]
pub struct ThreadQuery {
    /// `Some(x)`: only the threads owned by `x`; `None`: every owner's.
    pub owner: Option<String>,
    /// `Some(s)`: only the threads of scope `s` (stored under a [`scoped_thread_key`] of
    /// `s`); `None`: only the threads without a scope (every thread of a store used
    /// without scopes).
    pub scope: Option<String>,
    /// The most threads in one page: clamped to 1..=1000, 0 meaning 50.
    pub limit: usize,
    /// Where to go on from: a [`ThreadPage::next_cursor`]; `None` for the first page.
    pub cursor: Option<String>,
    /// `Some(text)`: only the threads whose title or stored events hold `text` (see
    /// [`ThreadQuery::matches`]); `None` or an empty text: every thread.
    pub search: Option<String>,
}

impl ThreadQuery {
    /// Whether a thread with this title and these events' JSON matches
    /// [`search`](Self::search): the text occurs, ASCII letters compared without case, in
    /// the title, or in the JSON of one of the events as a JSON string writes it (so `"`
    /// matches `\"`): message text and tool arguments and results, which every run's
    /// `RUN_STARTED.input` repeats whole, but also event types and field names. Every
    /// backend matches this way (the SQL ones in their query).
    pub fn matches<'e>(
        &self,
        title: Option<&str>,
        mut events: impl Iterator<Item = &'e [u8]>,
    ) -> bool {
        let Some(needles) = self.needles() else {
            return true;
        };
        let found = |hay: &[u8], needle: &str| {
            let needle = needle.as_bytes();
            hay.windows(needle.len())
                .any(|w| w.eq_ignore_ascii_case(needle))
        };
        title.is_some_and(|t| found(t.as_bytes(), &needles.title))
            || events.any(|json| found(json, &needles.json))
    }

    /// What the backends look for, when [`search`](Self::search) asks for something.
    pub(crate) fn needles(&self) -> Option<Needles> {
        let text = self.search.as_deref().filter(|s| !s.is_empty())?;
        let json = serde_json::to_string(text).unwrap_or_default();
        let json = json
            .strip_prefix('"')
            .and_then(|j| j.strip_suffix('"'))
            .unwrap_or_default();
        Some(Needles {
            title: text.to_ascii_lowercase(),
            json: json.to_ascii_lowercase(),
        })
    }
}

/// A search's text in lower case (ASCII letters), as it is and as a JSON string writes it.
pub(crate) struct Needles {
    /// For titles.
    pub title: String,
    /// For the stored events' JSON.
    pub json: String,
}

/// One page of [`EventStore::list_threads`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadPage {
    /// The threads, newest activity first (`updated_ms` descending, then `thread_id`
    /// ascending).
    pub threads: Vec<ThreadInfo>,
    /// An opaque cursor for the next page, present only when more threads follow.
    pub next_cursor: Option<String>,
}

/// The page size [`ThreadQuery::limit`] asks for, clamped.
pub(crate) fn page_limit(limit: usize) -> usize {
    match limit {
        0 => 50,
        n => n.min(1000),
    }
}

/// The cursor of a page that ends with the thread `(updated_ms, thread_id)`: the
/// hexadecimal of `{updated_ms}:{thread_id}`.
pub(crate) fn encode_cursor(updated_ms: u64, thread: &str) -> String {
    use std::fmt::Write;
    let plain = format!("{updated_ms}:{thread}");
    let mut out = String::with_capacity(plain.len() * 2);
    for b in plain.bytes() {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// The `(updated_ms, thread_id)` a cursor of [`encode_cursor`] names.
pub(crate) fn decode_cursor(cursor: &str) -> Result<(u64, String)> {
    let bad = || StoreError::Invalid(format!("malformed thread cursor {:?}", truncated(cursor)));
    if !cursor.len().is_multiple_of(2) || !cursor.is_ascii() {
        return Err(bad());
    }
    let bytes = (0..cursor.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&cursor[i..i + 2], 16))
        .collect::<std::result::Result<Vec<u8>, _>>()
        .map_err(|_| bad())?;
    let plain = String::from_utf8(bytes).map_err(|_| bad())?;
    let (ms, thread) = plain.split_once(':').ok_or_else(bad)?;
    if ms.is_empty() || !ms.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let ms: u64 = ms.parse().map_err(|_| bad())?;
    // Database columns are signed 64-bit.
    if ms > i64::MAX as u64 {
        return Err(bad());
    }
    Ok((ms, thread.to_owned()))
}

/// At most 64 characters of `s` (for error messages quoting input).
fn truncated(s: &str) -> &str {
    s.char_indices().nth(64).map_or(s, |(i, _)| &s[..i])
}

/// Builds a page from up to `limit + 1` threads in list order.
pub(crate) fn page_of(mut threads: Vec<ThreadInfo>, limit: usize) -> ThreadPage {
    let next_cursor = if threads.len() > limit {
        threads.truncate(limit);
        threads
            .last()
            .map(|t| encode_cursor(t.updated_ms, &t.thread_id))
    } else {
        None
    };
    ThreadPage {
        threads,
        next_cursor,
    }
}

/// The current time in Unix milliseconds.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .min(i64::MAX as u64)
}

/// A run of a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    /// The run id.
    pub run_id: String,
    /// The run it branches from (`RUN_STARTED.parentRunId`).
    pub parent_run_id: Option<String>,
    /// Where it is.
    pub status: RunStatus,
    /// The sequence of its first stored event.
    pub first_seq: u64,
    /// The sequence of its last stored event.
    pub last_seq: u64,
}

/// Whether [`EventStore::append_if_new`] leaves a thread as it is: it holds events
/// (`last_seq` past 0), or `stored_owner` is not the caller's `owner` and the caller may
/// not write to every thread (`any_owner`). The PostgreSQL schema's `append_if_new_v1`
/// applies the same rule.
pub(crate) fn keeps_thread(
    last_seq: u64,
    stored_owner: Option<&str>,
    owner: Option<&str>,
    any_owner: bool,
) -> bool {
    last_seq != 0 || (!any_owner && stored_owner != owner)
}

/// What [`EventStore::append_if_new`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FirstRun {
    /// The thread held no events (it may have been made now): the run's events were
    /// stored at these sequences, with the run's lease.
    Stored(Range<u64>),
    /// The thread holds events, or is another owner's: nothing was stored. The thread as
    /// it is.
    Existing(ThreadInfo),
}

/// An append-only event log of threads. Object safe: servers hold an `Arc<dyn EventStore>`.
///
/// Sequence numbers start at 1 and are contiguous per thread. An `append` that returned `Ok`
/// is durable as far as the backend promises (see each backend).
pub trait EventStore: Send + Sync + 'static {
    /// Appends `events` to run `run` of thread `thread` (both created when new), in one
    /// atomic step, and returns their sequence numbers. A `RUN_STARTED` sets the run's parent
    /// (which must be a run of the thread); `RUN_FINISHED` / `RUN_ERROR` close it, after which
    /// nothing more may be appended to it.
    ///
    /// A batch that begins with `RUN_STARTED` starts the run: if the thread already has a
    /// run with this id (running or ended) it fails with [`StoreError::RunExists`] and stores
    /// nothing, atomically — of two concurrent appends starting the same run, exactly one
    /// wins. A batch that begins with another event may start a run too (it is created
    /// when new) or continue one.
    ///
    /// A thread made by `append` has no owner; its `updated_ms` becomes the time of the
    /// append, and its title is taken from the batch's `RUN_STARTED.input` if it has none.
    fn append<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
    ) -> BoxFuture<'a, Result<Range<u64>>>;

    /// [`append`](Self::append), for a caller who has written the events' wire JSON already
    /// (a server, for the response): `json[i]`, when `Some`, must be exactly
    /// `events[i].to_json_vec()`, and the backends store it as it is instead of writing it
    /// again; the events without one are written as `append` writes them. More bodies than
    /// events is [`StoreError::Invalid`]. The default ignores `json`.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use aguikit_core::Event;
    /// use aguikit_core::event::RunStarted;
    /// use aguikit_store::{EventStore, MemoryStore};
    /// let store = MemoryStore::new();
    /// let started: Event = RunStarted::new("t", "r").into();
    /// let json = started.to_json_vec();
    /// let range = store.append_json("t", "r", &[started], &[Some(&json)]).await.unwrap();
    /// assert_eq!(range, 1..2);
    /// assert_eq!(store.read_raw("t", 1, 1).await.unwrap()[0].json, json);
    /// # });
    /// ```
    fn append_json<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        let _ = json;
        self.append(thread, run, events)
    }

    /// At most `limit` stored events of `thread` from sequence `from_seq` on (inclusive), as
    /// stored JSON. `from_seq` may be at most one past the last sequence (then nothing is
    /// returned); beyond that is [`StoreError::SequenceOutOfRange`].
    fn read_raw<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<RawEvent>>>;

    /// Every thread, in creation order (see [`EventStore::list_threads`] for pages).
    fn threads(&self) -> BoxFuture<'_, Result<Vec<ThreadInfo>>>;

    /// Makes thread `thread` with owner `owner` if it does not exist (with no events:
    /// `last_seq` 0, `run_count` 0, `created_ms` and `updated_ms` now), or leaves an existing
    /// thread unchanged; returns the thread's info, whose `owner` the caller compares with
    /// its principal. Atomic: of concurrent claims of a new thread, one sets the owner and
    /// every caller sees it.
    fn claim_thread<'a>(
        &'a self,
        thread: &'a str,
        owner: Option<&'a str>,
    ) -> BoxFuture<'a, Result<ThreadInfo>>;

    /// One page of threads, newest activity first (`updated_ms` descending, then
    /// `thread_id` ascending), filtered by owner and scope; `next_cursor` continues from the page's
    /// last thread (keyset pagination: a thread appended to meanwhile moves to the front
    /// and is not listed twice on later pages). A malformed cursor is
    /// [`StoreError::Invalid`].
    fn list_threads<'a>(&'a self, query: &'a ThreadQuery) -> BoxFuture<'a, Result<ThreadPage>>;

    /// Removes thread `thread` with its runs, events and leases; returns whether it
    /// existed. Afterwards every read behaves as for an unknown thread, its id can be used
    /// again from scratch, and live tails of it end with [`StoreError::UnknownThread`] (at
    /// once in this process, at their next wake-up or poll elsewhere).
    ///
    /// A thread with a run in progress (running, with a lease that has not expired: see
    /// [`append_leased`](Self::append_leased)) is not removed: [`StoreError::ThreadBusy`],
    /// decided atomically with the removal, so a run that claims the thread first keeps
    /// it, and one that comes after finds no thread. A running run without a lease, or
    /// whose lease expired (its server died), does not hold the thread.
    fn delete_thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<bool>>;

    /// Changes what `update` names of thread `thread` (its title, where it was forked
    /// from) and returns the thread as it is then ([`StoreError::UnknownThread`] if
    /// absent). Its events, runs and `updated_ms` stay as they are: a rename is not
    /// activity, and does not move the thread in the list.
    fn update_thread<'a>(
        &'a self,
        thread: &'a str,
        update: &'a ThreadUpdate,
    ) -> BoxFuture<'a, Result<ThreadInfo>>;

    /// Checks the backing database thoroughly (SQLite: `PRAGMA quick_check`, which reads
    /// the whole file; PostgreSQL: the tables and their columns): [`StoreError::Damaged`]
    /// with what was found and how to recover. For start-up, not for every request.
    fn check_integrity(&self) -> BoxFuture<'_, Result<()>>;

    /// A cheap liveness probe: the database answers a trivial query.
    fn health(&self) -> BoxFuture<'_, Result<()>>;

    /// One thread ([`StoreError::UnknownThread`] if absent).
    fn thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<ThreadInfo>>;

    /// The runs of a thread, in the order they started.
    fn runs<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<RunInfo>>>;

    /// A receiver that changes (to the new last sequence, or to some value) after events are
    /// appended to `thread`, and whose sender is dropped (so `changed()` fails) when the
    /// thread is deleted. Used by [`tail_stream`]; it may miss changes made by other
    /// processes, which [`EventStore::poll_interval`] covers.
    fn subscribe(&self, thread: &str) -> tokio::sync::watch::Receiver<u64>;

    /// How often a live tail re-reads the store when no wake-up came (`None`: never, every
    /// writer is in this process).
    fn poll_interval(&self) -> Option<Duration>;

    /// The stored events of `thread` from `from_seq` on, then the live ones as they are
    /// appended; ends only after an error. An unknown thread or a sequence out of range is
    /// reported as the first item; a stored event that cannot be decoded comes as
    /// [`StoreError::Corrupt`] after every event before it; a deleted thread ends the tail
    /// with [`StoreError::UnknownThread`].
    fn tail(&self, thread: &str, from_seq: u64) -> BoxStream<'static, Result<StoredEvent>>;

    /// Records that the process running `run` of `thread` is alive until `until_ms` (Unix
    /// milliseconds): a server renews this lease while the run goes on, so that a run whose
    /// server died can be told from a run that is only quiet (see
    /// [`EventStore::abandon_if_expired`]). The lease may be renewed before the run's first
    /// event is stored. A run that has ended gets none: the append that ended it dropped its
    /// lease, and a late renewal does not bring it back.
    fn renew_lease<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<()>>;

    /// [`append`](Self::append), then, when the append was accepted,
    /// [`renew_lease`](Self::renew_lease): what a server does when it claims a run by
    /// storing its `RUN_STARTED`. A refused append records no lease.
    ///
    /// **One run at a time.** A batch that starts a run (begins with `RUN_STARTED`) is
    /// refused with [`StoreError::ThreadBusy`] while another run of the thread is in
    /// progress: running, with a lease that has not expired. Another run that is still
    /// running but whose lease expired (its server died without ending it), or that has
    /// no lease (written by a plain [`append`](Self::append)), is closed first with a
    /// `RUN_ERROR` (code `abandoned`), as [`abandon_if_expired`](Self::abandon_if_expired)
    /// closes it. Check, close and append are one atomic step in the SQLite, PostgreSQL
    /// (the thread's row lock, so it holds across servers sharing a database) and memory
    /// stores; a stale claim therefore holds a thread for at most one lease. The default is
    /// [`append_leased_json`](Self::append_leased_json) with no JSON given: a backend that
    /// does both in one transaction (the SQLite store does: one sync instead of two per
    /// run) overrides that one.
    fn append_leased<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        self.append_leased_json(thread, run, events, &[], until_ms)
    }

    /// A run's first events, stored as [`append_leased`](Self::append_leased) stores
    /// them, if thread `thread` holds no events yet: a missing thread is made first, owned
    /// by `owner` (as [`claim_thread`](Self::claim_thread) makes it). A thread that holds
    /// events, or that is owned by another than `owner` (unless `any_owner`: a caller who
    /// may write to every thread), is left as it is, and returned.
    ///
    /// What a server does first with a run: the first run of a new thread is claimed and
    /// stored in one step, and for any other the caller learns the thread (to check its
    /// owner and read its history) before it appends. The default is
    /// [`append_if_new_json`](Self::append_if_new_json) with no JSON given, which claims,
    /// compares and appends in turn; the SQLite and PostgreSQL stores override that one to
    /// do it in one write (one commit instead of two for a new thread).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use aguikit_core::event::RunStarted;
    /// use aguikit_store::{EventStore, FirstRun, MemoryStore};
    /// let store = MemoryStore::new();
    /// let r1 = [RunStarted::new("t", "r1").into()];
    /// let first = store.append_if_new("t", Some("alice"), false, "r1", &r1, 9_000).await;
    /// assert_eq!(first.unwrap(), FirstRun::Stored(1..2));
    /// let r2 = [RunStarted::new("t", "r2").into()];
    /// match store.append_if_new("t", Some("alice"), false, "r2", &r2, 9_000).await {
    ///     Ok(FirstRun::Existing(info)) => assert_eq!(info.last_seq, 1),
    ///     other => panic!("{other:?}"),
    /// }
    /// # });
    /// ```
    fn append_if_new<'a>(
        &'a self,
        thread: &'a str,
        owner: Option<&'a str>,
        any_owner: bool,
        run: &'a str,
        events: &'a [Event],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<FirstRun>> {
        self.append_if_new_json(thread, owner, any_owner, run, events, &[], until_ms)
    }

    /// [`append_leased`](Self::append_leased), for a caller who has written the events'
    /// wire JSON already: `json` as [`append_json`](Self::append_json) takes it. The
    /// default is [`append_json`](Self::append_json), then
    /// [`renew_lease`](Self::renew_lease).
    fn append_leased_json<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        Box::pin(async move {
            let range = self.append_json(thread, run, events, json).await?;
            // A batch that ended the run gets no lease: renewing an ended run records none.
            self.renew_lease(thread, run, until_ms).await?;
            Ok(range)
        })
    }

    /// [`append_if_new`](Self::append_if_new), for a caller who has written the events'
    /// wire JSON already (a server stores a run's `RUN_STARTED` and sends the same bytes):
    /// `json` as [`append_json`](Self::append_json) takes it. The default claims the
    /// thread ([`claim_thread`](Self::claim_thread)), compares, then stores with
    /// [`append_leased_json`](Self::append_leased_json).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use aguikit_core::Event;
    /// use aguikit_core::event::RunStarted;
    /// use aguikit_store::{EventStore, FirstRun, MemoryStore};
    /// let store = MemoryStore::new();
    /// let started: Event = RunStarted::new("t", "r1").into();
    /// let json = started.to_json_vec();
    /// let first = store
    ///     .append_if_new_json("t", None, false, "r1", &[started], &[Some(&json)], 9_000)
    ///     .await;
    /// assert_eq!(first.unwrap(), FirstRun::Stored(1..2));
    /// assert_eq!(store.read_raw("t", 1, 1).await.unwrap()[0].json, json);
    /// # });
    /// ```
    #[allow(clippy::too_many_arguments)]
    fn append_if_new_json<'a>(
        &'a self,
        thread: &'a str,
        owner: Option<&'a str>,
        any_owner: bool,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<FirstRun>> {
        Box::pin(async move {
            let info = self.claim_thread(thread, owner).await?;
            if keeps_thread(info.last_seq, info.owner.as_deref(), owner, any_owner) {
                return Ok(FirstRun::Existing(info));
            }
            let range = self
                .append_leased_json(thread, run, events, json, until_ms)
                .await?;
            Ok(FirstRun::Stored(range))
        })
    }

    /// What a server does to claim a run on a thread that holds events already:
    /// [`append_leased_json`](Self::append_leased_json) (one run at a time, the lease
    /// recorded), but only to an existing thread that `owner` may write to (its owner, or
    /// any thread with `any_owner`): else [`StoreError::UnknownThread`], with nothing
    /// written — never a thread made again after a delete, nor one without its owner.
    /// The default checks the thread, then appends (not atomic); the SQLite, PostgreSQL
    /// and memory stores do both in one step.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use aguikit_core::event::{RunFinished, RunStarted};
    /// use aguikit_store::{EventStore, MemoryStore, StoreError};
    /// let store = MemoryStore::new();
    /// let far = u64::MAX / 2;
    /// let r1 = [RunStarted::new("t", "r1").into(), RunFinished::new("t", "r1").into()];
    /// store.append_if_new("t", Some("alice"), false, "r1", &r1, far).await.unwrap();
    /// let r2 = [RunStarted::new("t", "r2").into()];
    /// let range = store.claim_run_json("t", Some("alice"), false, "r2", &r2, &[], far).await;
    /// assert_eq!(range.unwrap(), 3..4);
    /// // Bob may not write to alice's thread; a second run waits for r2 to end.
    /// let r3 = [RunStarted::new("t", "r3").into()];
    /// let bob = store.claim_run_json("t", Some("bob"), false, "r3", &r3, &[], far).await;
    /// assert!(matches!(bob, Err(StoreError::UnknownThread(_))));
    /// let busy = store.claim_run_json("t", Some("alice"), false, "r3", &r3, &[], far).await;
    /// assert!(matches!(busy, Err(StoreError::ThreadBusy { .. })));
    /// # });
    /// ```
    #[allow(clippy::too_many_arguments)]
    fn claim_run_json<'a>(
        &'a self,
        thread: &'a str,
        owner: Option<&'a str>,
        any_owner: bool,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        Box::pin(async move {
            let info = self.thread(thread).await?;
            if !any_owner && info.owner.as_deref() != owner {
                return Err(StoreError::unknown_thread(thread));
            }
            self.append_leased_json(thread, run, events, json, until_ms)
                .await
        })
    }

    /// [`append_json`](Self::append_json) to a run that is stored already: what a server
    /// does with a run's events after its `RUN_STARTED`. A thread or run that is not there
    /// (the thread was deleted after its run's server lost its lease) is
    /// [`StoreError::UnknownThread`] / [`StoreError::UnknownRun`], with nothing written:
    /// a late server never makes a deleted thread again. The default checks the run, then
    /// appends (not atomic); the SQLite, PostgreSQL and memory stores do both in one step.
    fn append_to_run_json<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        Box::pin(async move {
            self.run(thread, run).await?;
            self.append_json(thread, run, events, json).await
        })
    }

    /// The expiry of `run`'s lease (Unix milliseconds), `None` when none is recorded: a run
    /// written without a server (never considered abandoned), or one that ended (the append
    /// that ends a run drops its lease, so the store holds leases of runs in progress only).
    fn lease<'a>(&'a self, thread: &'a str, run: &'a str) -> BoxFuture<'a, Result<Option<u64>>>;

    /// Closes `run` with a `RUN_ERROR` (code `abandoned`) when it is still running and its
    /// lease expired before `now_ms`: its server stopped without ending it, and readers that
    /// follow it would otherwise wait forever. Returns whether it did. A run that ended
    /// meanwhile (its server was only late) is left as it is.
    fn abandon_if_expired<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            if self.run(thread, run).await?.status != RunStatus::Running {
                return Ok(false);
            }
            match self.lease(thread, run).await? {
                Some(until) if until < now_ms => {}
                _ => return Ok(false),
            }
            // Only to the run as stored: a thread deleted meanwhile is not made again.
            match self
                .append_to_run_json(thread, run, &[abandoned()], &[])
                .await
            {
                Ok(_) => Ok(true),
                Err(
                    StoreError::RunClosed { .. }
                    | StoreError::UnknownThread(_)
                    | StoreError::UnknownRun { .. },
                ) => Ok(false),
                Err(e) => Err(e),
            }
        })
    }

    /// Every stored event of `thread` from `from_seq` on (inclusive), decoded. A stored
    /// event that cannot be decoded fails the whole read with [`StoreError::Corrupt`] (see
    /// [`EventStore::read_until_corrupt`] for the events before it). By default,
    /// [`EventStore::read_until_corrupt`]'s events, or its error: a backend with a faster
    /// decoding path overrides that one method.
    fn read<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
    ) -> BoxFuture<'a, Result<Vec<StoredEvent>>> {
        Box::pin(async move {
            match self.read_until_corrupt(thread, from_seq).await? {
                (events, None) => Ok(events),
                (_, Some(e)) => Err(e),
            }
        })
    }

    /// Like [`EventStore::read`], but a stored event that cannot be decoded does not hide
    /// the others: the events before the first such event, and its
    /// [`StoreError::Corrupt`] (`None` when every event decoded). Other failures (unknown
    /// thread, sequence out of range, backend) are still `Err`.
    fn read_until_corrupt<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
    ) -> BoxFuture<'a, Result<(Vec<StoredEvent>, Option<StoreError>)>> {
        Box::pin(async move {
            let raw = self.read_raw(thread, from_seq, usize::MAX).await?;
            let mut out = Vec::with_capacity(raw.len());
            for r in raw {
                match r.decode(thread) {
                    Ok(e) => out.push(e),
                    Err(e) => return Ok((out, Some(e))),
                }
            }
            Ok((out, None))
        })
    }

    /// One run ([`StoreError::UnknownRun`] if absent).
    fn run<'a>(&'a self, thread: &'a str, run: &'a str) -> BoxFuture<'a, Result<RunInfo>> {
        Box::pin(async move {
            self.runs(thread)
                .await?
                .into_iter()
                .find(|r| r.run_id == run)
                .ok_or_else(|| StoreError::UnknownRun {
                    thread: thread.to_owned(),
                    run: run.to_owned(),
                })
        })
    }

    /// The runs from the root of `run`'s lineage down to `run` (following `parentRunId`).
    fn lineage<'a>(&'a self, thread: &'a str, run: &'a str) -> BoxFuture<'a, Result<Vec<RunInfo>>> {
        Box::pin(async move {
            let runs = self.runs(thread).await?;
            lineage_of(thread, &runs, run)
        })
    }

    /// The events of the runs on `run`'s lineage only, in stream order: the history of one
    /// branch (spec L4), which a new run branching from `run` continues.
    fn branch<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
    ) -> BoxFuture<'a, Result<Vec<StoredEvent>>> {
        Box::pin(async move {
            let path = self.lineage(thread, run).await?;
            let ids: std::collections::HashSet<&str> =
                path.iter().map(|r| r.run_id.as_str()).collect();
            let first = path.iter().map(|r| r.first_seq).min().unwrap_or(1);
            let all = self.read(thread, first).await?;
            Ok(all
                .into_iter()
                .filter(|e| ids.contains(e.run_id.as_str()))
                .collect())
        })
    }

    /// The thread's history compacted for a fast load (`aguikit_core::engine::compact`): each
    /// cleanly finished run is compacted on its own; runs that failed or are still running
    /// are kept as stored, since compacting them can break replay (spec C5).
    fn compacted<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<Event>>> {
        Box::pin(async move {
            let runs = self.runs(thread).await?;
            let events = self.read(thread, 1).await?;
            Ok(compact_stored(&runs, events))
        })
    }
}

impl<S: EventStore + ?Sized> EventStore for Arc<S> {
    fn append<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        (**self).append(thread, run, events)
    }
    fn append_json<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        (**self).append_json(thread, run, events, json)
    }
    fn read_raw<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<RawEvent>>> {
        (**self).read_raw(thread, from_seq, limit)
    }
    fn threads(&self) -> BoxFuture<'_, Result<Vec<ThreadInfo>>> {
        (**self).threads()
    }
    fn claim_thread<'a>(
        &'a self,
        thread: &'a str,
        owner: Option<&'a str>,
    ) -> BoxFuture<'a, Result<ThreadInfo>> {
        (**self).claim_thread(thread, owner)
    }
    fn list_threads<'a>(&'a self, query: &'a ThreadQuery) -> BoxFuture<'a, Result<ThreadPage>> {
        (**self).list_threads(query)
    }
    fn delete_thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<bool>> {
        (**self).delete_thread(thread)
    }
    fn update_thread<'a>(
        &'a self,
        thread: &'a str,
        update: &'a ThreadUpdate,
    ) -> BoxFuture<'a, Result<ThreadInfo>> {
        (**self).update_thread(thread, update)
    }
    fn check_integrity(&self) -> BoxFuture<'_, Result<()>> {
        (**self).check_integrity()
    }
    fn health(&self) -> BoxFuture<'_, Result<()>> {
        (**self).health()
    }
    fn thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<ThreadInfo>> {
        (**self).thread(thread)
    }
    fn runs<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<RunInfo>>> {
        (**self).runs(thread)
    }
    fn subscribe(&self, thread: &str) -> tokio::sync::watch::Receiver<u64> {
        (**self).subscribe(thread)
    }
    fn poll_interval(&self) -> Option<Duration> {
        (**self).poll_interval()
    }
    fn tail(&self, thread: &str, from_seq: u64) -> BoxStream<'static, Result<StoredEvent>> {
        (**self).tail(thread, from_seq)
    }
    fn read<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
    ) -> BoxFuture<'a, Result<Vec<StoredEvent>>> {
        (**self).read(thread, from_seq)
    }
    fn read_until_corrupt<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
    ) -> BoxFuture<'a, Result<(Vec<StoredEvent>, Option<StoreError>)>> {
        (**self).read_until_corrupt(thread, from_seq)
    }
    fn run<'a>(&'a self, thread: &'a str, run: &'a str) -> BoxFuture<'a, Result<RunInfo>> {
        (**self).run(thread, run)
    }
    fn lineage<'a>(&'a self, thread: &'a str, run: &'a str) -> BoxFuture<'a, Result<Vec<RunInfo>>> {
        (**self).lineage(thread, run)
    }
    fn branch<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
    ) -> BoxFuture<'a, Result<Vec<StoredEvent>>> {
        (**self).branch(thread, run)
    }
    fn compacted<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<Event>>> {
        (**self).compacted(thread)
    }
    fn renew_lease<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<()>> {
        (**self).renew_lease(thread, run, until_ms)
    }
    fn append_leased<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        (**self).append_leased(thread, run, events, until_ms)
    }
    fn append_if_new<'a>(
        &'a self,
        thread: &'a str,
        owner: Option<&'a str>,
        any_owner: bool,
        run: &'a str,
        events: &'a [Event],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<FirstRun>> {
        (**self).append_if_new(thread, owner, any_owner, run, events, until_ms)
    }
    fn append_leased_json<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        (**self).append_leased_json(thread, run, events, json, until_ms)
    }
    fn append_if_new_json<'a>(
        &'a self,
        thread: &'a str,
        owner: Option<&'a str>,
        any_owner: bool,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<FirstRun>> {
        (**self).append_if_new_json(thread, owner, any_owner, run, events, json, until_ms)
    }
    fn claim_run_json<'a>(
        &'a self,
        thread: &'a str,
        owner: Option<&'a str>,
        any_owner: bool,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        (**self).claim_run_json(thread, owner, any_owner, run, events, json, until_ms)
    }
    fn append_to_run_json<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        (**self).append_to_run_json(thread, run, events, json)
    }
    fn lease<'a>(&'a self, thread: &'a str, run: &'a str) -> BoxFuture<'a, Result<Option<u64>>> {
        (**self).lease(thread, run)
    }
    fn abandon_if_expired<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<bool>> {
        (**self).abandon_if_expired(thread, run, now_ms)
    }
}

/// The `RUN_ERROR` (code `abandoned`) that closes a running run whose server stopped
/// without ending it.
pub(crate) fn abandoned() -> Event {
    aguikit_core::event::RunError::new("the run's server stopped before the run ended")
        .with_code("abandoned")
        .into()
}

/// The lineage path of `run` among `runs`, root first.
fn lineage_of(thread: &str, runs: &[RunInfo], run: &str) -> Result<Vec<RunInfo>> {
    let find = |id: &str| runs.iter().find(|r| r.run_id == id);
    let mut path = Vec::new();
    let mut cur = find(run).ok_or_else(|| StoreError::UnknownRun {
        thread: thread.to_owned(),
        run: run.to_owned(),
    })?;
    loop {
        path.push(cur.clone());
        // A parent is checked to exist when its child is stored, and parents start earlier,
        // so the walk ends; the length guard only defends against a hand-edited database.
        match cur.parent_run_id.as_deref().and_then(find) {
            Some(p) if path.len() <= runs.len() => cur = p,
            _ => break,
        }
    }
    path.reverse();
    Ok(path)
}

/// Compacts each cleanly finished run of `events` on its own (statuses from `runs`) and
/// keeps the others as stored: what [`EventStore::compacted`] returns, for callers that
/// already read the events.
pub fn compact_stored(runs: &[RunInfo], events: Vec<StoredEvent>) -> Vec<Event> {
    use std::collections::HashMap;
    let status: HashMap<&str, RunStatus> =
        runs.iter().map(|r| (r.run_id.as_str(), r.status)).collect();
    let mut out = Vec::with_capacity(events.len());
    let mut group: Vec<Event> = Vec::new();
    let mut group_run: Option<String> = None;
    let flush = |group: &mut Vec<Event>, run: &Option<String>, out: &mut Vec<Event>| {
        let finished = run
            .as_deref()
            .and_then(|r| status.get(r))
            .is_some_and(|s| matches!(s, RunStatus::Finished | RunStatus::Interrupted));
        if finished {
            match aguikit_core::engine::compact::compact(group) {
                Ok(c) => out.extend(c),
                Err(_) => out.append(group),
            }
        } else {
            out.append(group);
        }
        group.clear();
    };
    for e in events {
        if group_run.as_deref() != Some(e.run_id.as_str()) {
            flush(&mut group, &group_run, &mut out);
            group_run = Some(e.run_id.clone());
        }
        group.push(e.event);
    }
    flush(&mut group, &group_run, &mut out);
    out
}

/// Whether [`open`] takes `locator` for a PostgreSQL store (`postgres://...` or
/// `postgresql://...`), whether or not this build has the `postgres` feature.
///
/// ```
/// assert!(aguikit_store::is_postgres("postgresql://u@db/agui"));
/// assert!(!aguikit_store::is_postgres("sqlite:agui.db"));
/// ```
pub fn is_postgres(locator: &str) -> bool {
    locator.starts_with("postgres://") || locator.starts_with("postgresql://")
}

/// Opens a store from a locator: `memory`, `sqlite:PATH` (or a path ending in `.db` /
/// `.sqlite`), or `postgres://...` / `postgresql://...` (feature `postgres`).
pub async fn open(locator: &str) -> Result<Arc<dyn EventStore>> {
    if locator == "memory" {
        return Ok(Arc::new(MemoryStore::new()));
    }
    #[cfg(feature = "sqlite")]
    if let Some(path) = locator.strip_prefix("sqlite:") {
        return Ok(Arc::new(SqliteStore::open(path).await?));
    }
    if is_postgres(locator) {
        #[cfg(feature = "postgres")]
        return Ok(Arc::new(PostgresStore::connect(locator, "agui").await?));
        #[cfg(not(feature = "postgres"))]
        return Err(StoreError::Invalid(
            "this build has no PostgreSQL support (feature `postgres`)".into(),
        ));
    }
    Err(StoreError::Invalid(format!(
        "unknown store {locator:?}: expected memory, sqlite:PATH or postgres://..."
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    /// A store whose every method fails with its own name: calling each through an `Arc`
    /// tells whether the `Arc` forwards it or falls back on the trait's default.
    struct Probe;

    fn named<T: Send + 'static>(name: &'static str) -> BoxFuture<'static, Result<T>> {
        Box::pin(async move { Err(StoreError::Invalid(name.into())) })
    }

    impl EventStore for Probe {
        fn append<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            _: &'a [Event],
        ) -> BoxFuture<'a, Result<Range<u64>>> {
            named("append")
        }
        fn append_json<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            _: &'a [Event],
            _: &'a [Option<&'a [u8]>],
        ) -> BoxFuture<'a, Result<Range<u64>>> {
            named("append_json")
        }
        fn read_raw<'a>(
            &'a self,
            _: &'a str,
            _: u64,
            _: usize,
        ) -> BoxFuture<'a, Result<Vec<RawEvent>>> {
            named("read_raw")
        }
        fn threads(&self) -> BoxFuture<'_, Result<Vec<ThreadInfo>>> {
            named("threads")
        }
        fn claim_thread<'a>(
            &'a self,
            _: &'a str,
            _: Option<&'a str>,
        ) -> BoxFuture<'a, Result<ThreadInfo>> {
            named("claim_thread")
        }
        fn list_threads<'a>(&'a self, _: &'a ThreadQuery) -> BoxFuture<'a, Result<ThreadPage>> {
            named("list_threads")
        }
        fn delete_thread<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<bool>> {
            named("delete_thread")
        }
        fn update_thread<'a>(
            &'a self,
            _: &'a str,
            _: &'a ThreadUpdate,
        ) -> BoxFuture<'a, Result<ThreadInfo>> {
            named("update_thread")
        }
        fn check_integrity(&self) -> BoxFuture<'_, Result<()>> {
            named("check_integrity")
        }
        fn health(&self) -> BoxFuture<'_, Result<()>> {
            named("health")
        }
        fn thread<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<ThreadInfo>> {
            named("thread")
        }
        fn runs<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Vec<RunInfo>>> {
            named("runs")
        }
        fn subscribe(&self, _: &str) -> tokio::sync::watch::Receiver<u64> {
            tokio::sync::watch::channel(4242).1
        }
        fn poll_interval(&self) -> Option<Duration> {
            Some(Duration::from_millis(4242))
        }
        fn tail(&self, _: &str, _: u64) -> BoxStream<'static, Result<StoredEvent>> {
            futures_util::stream::once(named("tail")).boxed()
        }
        fn renew_lease<'a>(&'a self, _: &'a str, _: &'a str, _: u64) -> BoxFuture<'a, Result<()>> {
            named("renew_lease")
        }
        fn append_leased<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            _: &'a [Event],
            _: u64,
        ) -> BoxFuture<'a, Result<Range<u64>>> {
            named("append_leased")
        }
        fn append_if_new<'a>(
            &'a self,
            _: &'a str,
            _: Option<&'a str>,
            _: bool,
            _: &'a str,
            _: &'a [Event],
            _: u64,
        ) -> BoxFuture<'a, Result<FirstRun>> {
            named("append_if_new")
        }
        fn append_leased_json<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            _: &'a [Event],
            _: &'a [Option<&'a [u8]>],
            _: u64,
        ) -> BoxFuture<'a, Result<Range<u64>>> {
            named("append_leased_json")
        }
        fn append_if_new_json<'a>(
            &'a self,
            _: &'a str,
            _: Option<&'a str>,
            _: bool,
            _: &'a str,
            _: &'a [Event],
            _: &'a [Option<&'a [u8]>],
            _: u64,
        ) -> BoxFuture<'a, Result<FirstRun>> {
            named("append_if_new_json")
        }
        fn claim_run_json<'a>(
            &'a self,
            _: &'a str,
            _: Option<&'a str>,
            _: bool,
            _: &'a str,
            _: &'a [Event],
            _: &'a [Option<&'a [u8]>],
            _: u64,
        ) -> BoxFuture<'a, Result<Range<u64>>> {
            named("claim_run_json")
        }
        fn append_to_run_json<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            _: &'a [Event],
            _: &'a [Option<&'a [u8]>],
        ) -> BoxFuture<'a, Result<Range<u64>>> {
            named("append_to_run_json")
        }
        fn lease<'a>(&'a self, _: &'a str, _: &'a str) -> BoxFuture<'a, Result<Option<u64>>> {
            named("lease")
        }
        fn abandon_if_expired<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            _: u64,
        ) -> BoxFuture<'a, Result<bool>> {
            named("abandon_if_expired")
        }
        fn read<'a>(&'a self, _: &'a str, _: u64) -> BoxFuture<'a, Result<Vec<StoredEvent>>> {
            named("read")
        }
        fn read_until_corrupt<'a>(
            &'a self,
            _: &'a str,
            _: u64,
        ) -> BoxFuture<'a, Result<(Vec<StoredEvent>, Option<StoreError>)>> {
            named("read_until_corrupt")
        }
        fn run<'a>(&'a self, _: &'a str, _: &'a str) -> BoxFuture<'a, Result<RunInfo>> {
            named("run")
        }
        fn lineage<'a>(&'a self, _: &'a str, _: &'a str) -> BoxFuture<'a, Result<Vec<RunInfo>>> {
            named("lineage")
        }
        fn branch<'a>(&'a self, _: &'a str, _: &'a str) -> BoxFuture<'a, Result<Vec<StoredEvent>>> {
            named("branch")
        }
        fn compacted<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Vec<Event>>> {
            named("compacted")
        }
    }

    fn name<T: std::fmt::Debug>(r: Result<T>) -> String {
        match r {
            Err(StoreError::Invalid(m)) => m,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn arc_forwards_every_method() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let s: Arc<dyn EventStore> = Arc::new(Probe);
        let q = ThreadQuery::default();
        rt.block_on(async {
            assert_eq!(name(s.append("t", "r", &[]).await), "append");
            assert_eq!(name(s.append_json("t", "r", &[], &[]).await), "append_json");
            assert_eq!(name(s.read_raw("t", 1, 1).await), "read_raw");
            assert_eq!(name(s.threads().await), "threads");
            assert_eq!(name(s.claim_thread("t", None).await), "claim_thread");
            assert_eq!(name(s.list_threads(&q).await), "list_threads");
            assert_eq!(name(s.delete_thread("t").await), "delete_thread");
            let u = ThreadUpdate::default();
            assert_eq!(name(s.update_thread("t", &u).await), "update_thread");
            assert_eq!(name(s.check_integrity().await), "check_integrity");
            assert_eq!(name(s.health().await), "health");
            assert_eq!(name(s.thread("t").await), "thread");
            assert_eq!(name(s.runs("t").await), "runs");
            assert_eq!(*s.subscribe("t").borrow(), 4242);
            assert_eq!(s.poll_interval(), Some(Duration::from_millis(4242)));
            assert_eq!(name(s.tail("t", 1).next().await.unwrap()), "tail");
            assert_eq!(name(s.renew_lease("t", "r", 1).await), "renew_lease");
            assert_eq!(
                name(s.append_leased("t", "r", &[], 1).await),
                "append_leased"
            );
            assert_eq!(
                name(s.append_if_new("t", None, true, "r", &[], 1).await),
                "append_if_new"
            );
            assert_eq!(
                name(s.append_leased_json("t", "r", &[], &[], 1).await),
                "append_leased_json"
            );
            assert_eq!(
                name(
                    s.append_if_new_json("t", None, true, "r", &[], &[], 1)
                        .await
                ),
                "append_if_new_json"
            );
            assert_eq!(
                name(s.claim_run_json("t", None, true, "r", &[], &[], 1).await),
                "claim_run_json"
            );
            assert_eq!(
                name(s.append_to_run_json("t", "r", &[], &[]).await),
                "append_to_run_json"
            );
            assert_eq!(name(s.lease("t", "r").await), "lease");
            assert_eq!(
                name(s.abandon_if_expired("t", "r", 1).await),
                "abandon_if_expired"
            );
            assert_eq!(name(s.read("t", 1).await), "read");
            assert_eq!(
                name(s.read_until_corrupt("t", 1).await),
                "read_until_corrupt"
            );
            assert_eq!(name(s.run("t", "r").await), "run");
            assert_eq!(name(s.lineage("t", "r").await), "lineage");
            assert_eq!(name(s.branch("t", "r").await), "branch");
            assert_eq!(name(s.compacted("t").await), "compacted");
        });
    }

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        for (ms, id) in [(0, ""), (1_700_000_000_123, "a:b:c"), (7, "é \u{0} '")] {
            let c = encode_cursor(ms, id);
            assert!(c.bytes().all(|b| b.is_ascii_hexdigit()));
            assert_eq!(decode_cursor(&c).unwrap(), (ms, id.to_owned()));
        }
        let hex = |s: &str| s.bytes().map(|b| format!("{b:02x}")).collect::<String>();
        for bad in [
            "".to_owned(),
            "abc".to_owned(),
            "zz".to_owned(),
            "é1".to_owned(),
            hex("12"),
            hex(":x"),
            hex("-1:x"),
            hex("+1:x"),
            hex("99999999999999999999:x"),
            hex(&format!("{}:x", u64::MAX)),
            "ff3a78".to_owned(),
        ] {
            match decode_cursor(&bad) {
                Err(e @ StoreError::Invalid(_)) => assert_eq!(e.code(), "invalid_input"),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        assert_eq!(page_limit(0), 50);
        assert_eq!(page_limit(1), 1);
        assert_eq!(page_limit(5000), 1000);
    }

    #[test]
    fn errors_have_their_code() {
        let busy = StoreError::ThreadBusy {
            thread: "t".into(),
            run: "r".into(),
        };
        assert_eq!(busy.code(), "thread_busy");
        let exists = StoreError::RunExists {
            thread: "t".into(),
            run: "r".into(),
        };
        assert_eq!(exists.code(), "run_exists");
        let damaged = StoreError::Damaged("x".into());
        assert_eq!(damaged.code(), "store_damaged");
        let corrupt = StoreError::Corrupt {
            thread: "t".into(),
            seq: 17,
            message: "bad".into(),
        };
        assert_eq!(corrupt.code(), "corrupt_event");
        assert!(corrupt.to_string().contains("sequence 17"), "{corrupt}");
    }
}
