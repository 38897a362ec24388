//! The SQLite backend: one file, WAL journal, no setup.
//!
//! Durability: every append is committed in a `BEGIN IMMEDIATE … COMMIT` transaction, and
//! `append` returns only after the commit. Appends that arrive while the writer is busy are
//! committed together when it is free (group commit: one transaction and one sync for all;
//! when one of them is refused, the group is done again with each append in its own
//! savepoint, so a refused one undoes nothing else); lease renewals join the same groups.
//! With [`Synchronous::Full`] (the default) SQLite syncs the WAL to disk at each commit, so
//! an acknowledged event survives a killed process *and* an operating-system crash or power
//! loss. [`Synchronous::Normal`] skips that sync: still safe against `kill -9` (the WAL is
//! in the OS page cache) and never corrupt, but the last acknowledged transactions may roll
//! back after a power loss — which breaks "an acknowledged event is never lost", hence not
//! the default. Batching appends amortises the sync.
//!
//! One connection writes (SQLite allows one writer at a time): group commits run on the
//! store's own writer thread, other blocking calls on `tokio::task::spawn_blocking`; reads
//! use a small pool of further connections, which WAL lets run while a write is in
//! progress. Sequence numbers are assigned inside the write transaction
//! from the stored last sequence, so several processes may share one file; live tails see
//! other processes' appends by polling (once a second), their own at once.
//!
//! A file that is not a database, or whose pages SQLite finds damaged, gives
//! [`StoreError::Damaged`] (at opening, at the failing statement, or from
//! [`EventStore::check_integrity`]) with the way out. Files made by earlier versions are
//! migrated when opened (missing columns are added).
//!
//! **Threads by namespace.** A thread is stored under its [`crate::thread_key`], which names
//! its owner and its id, so two owners' threads of one id are two rows. A file of an
//! earlier release stored an owned thread under its id: when this version first opens it,
//! in the transaction that adds missing columns, every owned thread (and an ownerless one
//! whose id begins with `\u{1}`) is moved to its key, with its leases; the file's
//! `user_version` (1) records that it was done, so it happens once. Upgrade every process
//! sharing a file at once.
//!
//! An append's events are stored several to a row (see `rows`: the events `seq..seq + n`,
//! their JSON joined by newlines), which takes the writer about 30% less CPU per run than a
//! row per event; a file of an earlier version, one event per row, reads as such rows. A
//! process of an earlier release would take a row of several events for a damaged one:
//! upgrade every process sharing a file.
//!
//! **Storage format.** The file's `user_version` is its storage format (1 for the layout
//! above, 0 for a file of an earlier release, migrated when opened). A file of a later
//! format, written by a newer aguikit, is refused when opened with
//! [`StoreError::NewerFormat`], which says so, rather than read wrongly.

use crate::notify::Notifier;
use crate::prepare::{Prepared, prepare_rows};
use crate::rows::{Decoded, Packed};
use crate::{
    EventStore, FirstRun, ForkOf, RawEvent, Result, RunInfo, RunStatus, StoreError, StoredEvent,
    ThreadInfo, ThreadPage, ThreadQuery, ThreadUpdate, abandoned, decode_cursor, keeps_thread,
    now_ms, page_limit, page_of,
};
use aguikit_core::Event;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, TransactionBehavior, params};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// SQLite's `synchronous` setting for the store (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Synchronous {
    /// Sync the WAL at every commit: acknowledged events survive power loss.
    #[default]
    Full,
    /// Sync only at checkpoints: survives a killed process, not a power loss.
    Normal,
}

/// Options of [`SqliteStore::open_with`].
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    /// The `synchronous` setting.
    pub synchronous: Synchronous,
    /// How long a statement waits for a lock held by another connection or process.
    pub busy_timeout: Duration,
    /// How often a live tail re-reads the file for other processes' appends.
    pub poll_interval: Duration,
    /// After this long without a statement, every pooled connection gives its page cache
    /// back (`sqlite3_db_release_memory`), so that memory comes back after load; `None`
    /// keeps the caches (up to about 2 MB per connection). Default 10 seconds.
    pub release_idle_memory: Option<Duration>,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            synchronous: Synchronous::Full,
            busy_timeout: Duration::from_secs(10),
            poll_interval: Duration::from_secs(1),
            release_idle_memory: Some(Duration::from_secs(10)),
        }
    }
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS threads (
    tid INTEGER PRIMARY KEY,
    thread_id TEXT NOT NULL UNIQUE,
    last_seq INTEGER NOT NULL,
    owner TEXT,
    created_ms INTEGER NOT NULL DEFAULT 0,
    updated_ms INTEGER NOT NULL DEFAULT 0,
    title TEXT,
    fork_thread TEXT,
    fork_run TEXT
);
CREATE TABLE IF NOT EXISTS runs (
    tid INTEGER NOT NULL,
    run_id TEXT NOT NULL,
    parent_run_id TEXT,
    status TEXT NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    PRIMARY KEY (tid, run_id)
) WITHOUT ROWID;
-- A rowid table (files of earlier versions have a WITHOUT ROWID one, which reads and
-- writes alike): a row of several events is a few kilobytes, which a WITHOUT ROWID table
-- (an index B-tree, about 1 kB in a cell) spills into an overflow page of its own per row.
CREATE TABLE IF NOT EXISTS events (
    tid INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    run_id TEXT NOT NULL,
    body BLOB NOT NULL,
    n INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (tid, seq)
);
CREATE TABLE IF NOT EXISTS leases (
    thread_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    until_ms INTEGER NOT NULL,
    PRIMARY KEY (thread_id, run_id)
) WITHOUT ROWID;
";

/// Columns of `threads` added after the first release: `(name, declaration)`, added by
/// [`migrate`] to files that lack them.
const THREAD_COLUMNS: [(&str, &str); 6] = [
    ("owner", "TEXT"),
    ("created_ms", "INTEGER NOT NULL DEFAULT 0"),
    ("updated_ms", "INTEGER NOT NULL DEFAULT 0"),
    ("title", "TEXT"),
    ("fork_thread", "TEXT"),
    ("fork_run", "TEXT"),
];

/// Columns of `events` added after the first release (see [`THREAD_COLUMNS`]): `n`, the
/// events a row holds (see [`crate::rows`]); a row of an earlier version holds one.
const EVENT_COLUMNS: [(&str, &str); 1] = [("n", "INTEGER NOT NULL DEFAULT 1")];

/// Indexes, made after [`migrate`] (they use its columns). Thread lists walk
/// `threads_by_activity` (or `threads_by_owner`, which holds only owned threads) from the
/// cursor on: keyset pagination.
const INDEXES: &str = "
CREATE INDEX IF NOT EXISTS threads_by_activity ON threads (updated_ms DESC, thread_id);
CREATE INDEX IF NOT EXISTS threads_by_owner ON threads (owner, updated_ms DESC, thread_id)
    WHERE owner IS NOT NULL;
CREATE INDEX IF NOT EXISTS runs_by_start ON runs (tid, first_seq);
CREATE INDEX IF NOT EXISTS runs_running ON runs (tid) WHERE status = 'running';
";

/// A thread's [`ThreadInfo`] (see [`thread_info`]), from `threads t`.
const THREAD_INFO: &str = "SELECT t.thread_id, t.last_seq,
    (SELECT count(*) FROM runs r WHERE r.tid = t.tid),
    t.owner, t.created_ms, t.updated_ms, t.title,
    (SELECT r.status FROM runs r WHERE r.tid = t.tid ORDER BY r.first_seq DESC LIMIT 1),
    t.fork_thread, t.fork_run
    FROM threads t";

/// The rows of a thread's events from a sequence on: `(tid, seq)`, from the row holding
/// that sequence (see [`crate::rows`]).
const EVENTS_FROM: &str = "SELECT seq, n, run_id, body FROM events WHERE tid = ?1 AND seq >= (
        SELECT coalesce(max(seq), 0) FROM events WHERE tid = ?1 AND seq <= ?2)
    ORDER BY seq";

struct Inner {
    path: PathBuf,
    options: SqliteOptions,
    /// The writing connection: the writer thread's for group commits, shared with the few
    /// other writes (deleting a thread...), which run on the blocking pool.
    writer: Arc<Mutex<Connection>>,
    readers: Mutex<Vec<Connection>>,
    notifier: Notifier,
    /// Statements started, for the idle release of page caches.
    activity: AtomicU64,
    /// To the writer thread ([`spawn_writer`]), which commits the writes waiting for it in
    /// one transaction (group commit). It ends when this is dropped with the store.
    writes: std::sync::mpsc::Sender<WriteJob>,
}

impl Drop for Inner {
    /// Copies the WAL into the database file (a passive checkpoint: it waits for no
    /// reader), so that a store closed cleanly leaves its data in its file, and a copy of
    /// the file alone holds it. A write in progress finishes first.
    fn drop(&mut self) {
        let writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let _ = writer.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
    }
}

/// One waiting write: its run, what to write, and where its result goes.
struct WriteJob {
    thread: String,
    run: String,
    work: Work,
    /// What the write did.
    done: tokio::sync::oneshot::Sender<Result<Done>>,
}

/// What a grouped write answers.
enum Done {
    /// The appended range (empty for a lease).
    Range(Range<u64>),
    /// The thread as a claim left it.
    Claimed(ThreadInfo),
}

/// What a grouped write does.
enum Work {
    /// Appends the run's prepared events.
    Append(Prepared),
    /// Records the run's lease until this time (Unix milliseconds).
    Lease(u64),
    /// Appends, then (when the append was accepted and leaves the run going on) records
    /// the lease, as one write; a batch that starts the run waits for no other run in
    /// progress ([`make_room`]).
    AppendLeased(Prepared, u64),
    /// [`EventStore::claim_run_json`]: [`Work::AppendLeased`] to a thread that exists and
    /// that the owner may write to.
    ClaimRun(Claimed),
    /// [`EventStore::append_to_run_json`]: appends to a run that is stored already.
    AppendToRun(Prepared),
    /// Creates the thread if it is new (with this owner), as a run's first step.
    Claim(Option<String>),
    /// [`EventStore::append_if_new`]: creates the thread if it is new; when it holds no
    /// events and its owner matches, appends and records the lease (answered with the
    /// range), else answers with the thread; as one write.
    AppendIfNew(Claimed),
}

/// What [`Work::AppendIfNew`] carries.
struct Claimed {
    owner: Option<String>,
    any_owner: bool,
    prepared: Prepared,
    until_ms: u64,
}

impl Inner {
    /// Gives every pooled connection's page cache back to the allocator. A connection in
    /// use is skipped (it is busy, so the store is not idle).
    fn release_memory(&self) {
        if let Ok(writer) = self.writer.try_lock() {
            let _ = writer.release_memory();
        }
        if let Ok(readers) = self.readers.try_lock() {
            for c in readers.iter() {
                let _ = c.release_memory();
            }
        }
    }
}

/// Releases the page caches of `inner`'s connections once the store has been idle for
/// `idle`; ends with the store.
fn spawn_idle_release(inner: &Arc<Inner>, idle: Duration) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let weak = Arc::downgrade(inner);
    runtime.spawn(async move {
        let mut seen = 0;
        let mut released = 0;
        loop {
            tokio::time::sleep(idle).await;
            let Some(inner) = weak.upgrade() else { return };
            let now = inner.activity.load(Ordering::Relaxed);
            // Idle for a whole period, and used since the last release.
            if now == seen && now != released {
                released = now;
                let inner = inner.clone();
                let _ = tokio::task::spawn_blocking(move || inner.release_memory()).await;
            }
            seen = now;
        }
    });
}

/// An [`EventStore`] in one SQLite file. Cheap to clone (shared).
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

/// A SQLite error: [`StoreError::Damaged`] (without advice yet, see [`advise`]) when
/// SQLite finds the file corrupt or not a database, [`StoreError::Backend`] otherwise.
fn backend(e: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
    match e.sqlite_error_code() {
        Some(DatabaseCorrupt | NotADatabase) => StoreError::Damaged(format!("SQLite reports: {e}")),
        _ => StoreError::Backend(e.to_string()),
    }
}

/// Adds to a [`StoreError::Damaged`] report the file and the ways out.
fn advise(path: &Path, e: StoreError) -> StoreError {
    match e {
        StoreError::Damaged(report) => {
            let p = path.display();
            StoreError::Damaged(format!(
                "{report} (file {p}). Restore the file from a backup, or move it away (with \
                 its -wal and -shm files) to start with an empty store; `sqlite3 {p} .recover` \
                 can salvage what is still readable into a new database"
            ))
        }
        other => other,
    }
}

/// Adds the columns of [`THREAD_COLUMNS`] and [`EVENT_COLUMNS`] that a file of an earlier
/// version lacks.
fn migrate(c: &Connection) -> Result<()> {
    for (table, columns) in [("threads", &THREAD_COLUMNS[..]), ("events", &EVENT_COLUMNS)] {
        let have: Vec<String> = {
            let mut stmt = c
                .prepare(&format!("PRAGMA table_info({table})"))
                .map_err(backend)?;
            let rows = stmt
                .query_map([], |r| r.get::<_, String>(1))
                .map_err(backend)?;
            rows.collect::<Result<_, _>>().map_err(backend)?
        };
        for (name, decl) in columns {
            if !have.iter().any(|h| h == name) {
                c.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {name} {decl}"))
                    .map_err(backend)?;
            }
        }
    }
    Ok(())
}

/// The storage format this version writes and the latest it reads, kept in the file's
/// `user_version`: 0 for a file of an earlier release (threads of owners stored under their
/// ids), 1 since threads are stored under their [`crate::thread_key`] and events several to a
/// row (see `rows`). A change to either layout takes the next number; a file of a later
/// format than this is refused at opening ([`StoreError::NewerFormat`]) instead of being
/// read wrongly or taken for a damaged one.
const FORMAT_VERSION: i64 = 1;

/// Refuses a file of a storage format later than [`FORMAT_VERSION`].
fn check_format(c: &Connection, path: &Path) -> Result<()> {
    let found: i64 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(backend)?;
    if found > FORMAT_VERSION {
        return Err(StoreError::NewerFormat {
            place: path.display().to_string(),
            found,
            supported: FORMAT_VERSION,
        });
    }
    Ok(())
}

/// Moves the threads of a file written before threads had namespaces to their
/// [`crate::thread_key`] (an owned thread was stored under its id), once: the file's
/// `user_version` records it. The leases follow their threads.
fn key_threads(c: &Connection) -> Result<()> {
    let version: i64 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(backend)?;
    if version >= FORMAT_VERSION {
        return Ok(());
    }
    // The key of (owner, thread_id), as `thread_key` writes it.
    let key = "CASE
        WHEN t.owner IS NOT NULL
            THEN char(1) || length(CAST(t.owner AS BLOB)) || ':' || t.owner || t.thread_id
        WHEN substr(t.thread_id, 1, 1) = char(1) THEN char(1) || ':' || t.thread_id
        ELSE t.thread_id END";
    let moved = "(t.owner IS NOT NULL OR substr(t.thread_id, 1, 1) = char(1))";
    c.execute_batch(&format!(
        "UPDATE leases SET thread_id = (
             SELECT {key} FROM threads t WHERE t.thread_id = leases.thread_id)
         WHERE thread_id IN (SELECT t.thread_id FROM threads t WHERE {moved});
         UPDATE threads AS t SET thread_id = {key} WHERE {moved};
         PRAGMA user_version = {FORMAT_VERSION};"
    ))
    .map_err(backend)
}

/// A row of [`THREAD_INFO`].
fn thread_info(r: &Row<'_>) -> rusqlite::Result<ThreadInfo> {
    Ok(ThreadInfo {
        thread_id: r.get(0)?,
        last_seq: r.get::<_, i64>(1)?.max(0) as u64,
        run_count: r.get::<_, i64>(2)?.max(0) as u64,
        owner: r.get(3)?,
        created_ms: r.get::<_, i64>(4)?.max(0) as u64,
        updated_ms: r.get::<_, i64>(5)?.max(0) as u64,
        title: r.get(6)?,
        last_status: r
            .get::<_, Option<String>>(7)?
            .map(|s| RunStatus::parse(&s).unwrap_or(RunStatus::Running)),
        fork_of: match (
            r.get::<_, Option<String>>(8)?,
            r.get::<_, Option<String>>(9)?,
        ) {
            (Some(thread_id), Some(run_id)) => Some(ForkOf { thread_id, run_id }),
            _ => None,
        },
    })
}

/// The thread's info, `None` when absent.
fn thread_info_of(c: &Connection, thread: &str) -> Result<Option<ThreadInfo>> {
    c.prepare_cached(&format!("{THREAD_INFO} WHERE t.thread_id = ?1"))
        .map_err(backend)?
        .query_row([thread], thread_info)
        .optional()
        .map_err(backend)
}

/// A stored value as bytes (`None` for a number or NULL, which no event is).
fn bytes_of(v: ValueRef<'_>) -> Option<&[u8]> {
    match v {
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(b),
        _ => None,
    }
}

/// A stored id as a string (lossy: ids are stored from Rust strings).
fn string_of(v: ValueRef<'_>) -> String {
    bytes_of(v).map_or_else(String::new, |b| String::from_utf8_lossy(b).into_owned())
}

fn connect(path: &Path, options: &SqliteOptions, write: bool) -> Result<Connection> {
    let flags = if write {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
    } else {
        OpenFlags::SQLITE_OPEN_READ_ONLY
    } | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags).map_err(backend)?;
    conn.busy_timeout(options.busy_timeout).map_err(backend)?;
    // Room for every statement the store prepares (about 25): rusqlite keeps 16 by default,
    // and a statement pushed out would be compiled again at its next use.
    conn.set_prepared_statement_cache_capacity(STATEMENTS_CACHED);
    // Reads the header: a file that is not a database fails here, not at first use.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))
        .map_err(backend)?;
    let sync = match options.synchronous {
        Synchronous::Full => "FULL",
        Synchronous::Normal => "NORMAL",
    };
    if write {
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(backend)?;
        // A group done again after a refusal gives each write a savepoint, whose journal
        // holds the pages the group changed before: in memory, not in a temporary file
        // written page by page (three `pwrite`s per run fewer).
        conn.pragma_update(None, "temp_store", "MEMORY")
            .map_err(backend)?;
        // The WAL is copied into the database every 4,000 pages (16 MiB with 4 KiB pages)
        // rather than every 1,000: the pages every group rewrites (the tables' last
        // leaves) are copied once per checkpoint, so fewer checkpoints copy fewer pages
        // (the writer thread's time per run 92–98 to 78–90 µs under load). The WAL file
        // keeps its largest size, up to about that.
        conn.pragma_update(None, "wal_autocheckpoint", WAL_CHECKPOINT_PAGES)
            .map_err(backend)?;
    }
    conn.pragma_update(None, "synchronous", sync)
        .map_err(backend)?;
    Ok(conn)
}

/// Prepared statements each connection keeps (see [`connect`]).
const STATEMENTS_CACHED: usize = 64;

/// WAL pages between automatic checkpoints (SQLite's default is 1,000).
const WAL_CHECKPOINT_PAGES: i64 = 4000;

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StoreError::Backend(format!("store task failed: {e}")))?
}

impl SqliteStore {
    /// Opens (creating when absent, with its parent directories) the store at `path` with
    /// the default options.
    pub async fn open(path: impl AsRef<Path>) -> Result<SqliteStore> {
        Self::open_with(path, SqliteOptions::default()).await
    }

    /// Opens the store at `path`.
    pub async fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<SqliteStore> {
        let path = path.as_ref().to_path_buf();
        let inner = blocking(move || {
            if let Some(dir) = path.parent()
                && !dir.as_os_str().is_empty()
            {
                std::fs::create_dir_all(dir).map_err(|e| {
                    StoreError::Backend(format!("cannot create {}: {e}", dir.display()))
                })?;
            }
            let mut writer = connect(&path, &options, true).map_err(|e| advise(&path, e))?;
            // One transaction, so that two processes opening an old file at once do not
            // both add its columns.
            let made = (|| {
                let tx = writer
                    .transaction_with_behavior(TransactionBehavior::Immediate)
                    .map_err(backend)?;
                check_format(&tx, &path)?;
                tx.execute_batch(SCHEMA).map_err(backend)?;
                migrate(&tx)?;
                tx.execute_batch(INDEXES).map_err(backend)?;
                key_threads(&tx)?;
                tx.commit().map_err(backend)
            })();
            made.map_err(|e| advise(&path, e))?;
            let writer = Arc::new(Mutex::new(writer));
            let writes = spawn_writer(writer.clone(), path.clone())?;
            Ok(Arc::new(Inner {
                path,
                options,
                writer,
                readers: Mutex::new(Vec::new()),
                notifier: Notifier::default(),
                activity: AtomicU64::new(0),
                writes,
            }))
        })
        .await?;
        if let Some(idle) = inner.options.release_idle_memory {
            spawn_idle_release(&inner, idle);
        }
        Ok(SqliteStore { inner })
    }

    /// Runs `f` with the store's state on the blocking pool, counted as a statement started
    /// (see [`Inner::activity`]).
    async fn on_blocking_pool<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Inner) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let inner = self.inner.clone();
        inner.activity.fetch_add(1, Ordering::Relaxed);
        blocking(move || f(&inner)).await
    }

    /// Runs `f` on the writer connection, on the blocking pool.
    async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.on_blocking_pool(move |inner| {
            let mut conn = inner.writer.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut conn).map_err(|e| advise(&inner.path, e))
        })
        .await
    }

    /// Does one run's write (an append or a lease), committed together with every other
    /// write waiting for the writer thread at that moment: one transaction and one sync for
    /// the group (should one append be refused, the others are stored all the same: see
    /// [`commit_group`]). Returns after the group's commit, so an acknowledged write is
    /// durable as before; under concurrent runs the syncs are shared instead of queued one
    /// by one.
    async fn write_grouped(&self, thread: String, run: String, work: Work) -> Result<Done> {
        let (done, result) = tokio::sync::oneshot::channel();
        self.inner.activity.fetch_add(1, Ordering::Relaxed);
        let ended = || StoreError::Backend("the store's writer thread ended".into());
        self.inner
            .writes
            .send(WriteJob {
                thread,
                run,
                work,
                done,
            })
            .map_err(|_| ended())?;
        result.await.unwrap_or_else(|_| Err(ended()))
    }

    /// Writes `work` (an append) in the next group commit and wakes the thread's tails.
    async fn append_work(&self, thread: &str, run: &str, work: Work) -> Result<Range<u64>> {
        self.write_append(thread, run, work)
            .await
            .and_then(Done::range)
    }

    /// Writes `work` in the next group commit; when it stored events, wakes the thread's
    /// tails.
    async fn write_append(&self, thread: &str, run: &str, work: Work) -> Result<Done> {
        let done = self
            .write_grouped(thread.to_owned(), run.to_owned(), work)
            .await?;
        if let Done::Range(range) = &done
            && !range.is_empty()
        {
            self.inner.notifier.notify(thread, range.end - 1);
        }
        Ok(done)
    }

    /// Runs `f` on a pooled read connection, on the blocking pool.
    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.on_blocking_pool(move |inner| {
            let pooled = inner
                .readers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .pop();
            let mut conn = match pooled {
                Some(c) => c,
                None => connect(&inner.path, &inner.options, false)?,
            };
            let out = f(&mut conn).map_err(|e| advise(&inner.path, e));
            let mut pool = inner.readers.lock().unwrap_or_else(|p| p.into_inner());
            if pool.len() < 8 {
                pool.push(conn);
            }
            out
        })
        .await
    }

    /// Runs `PRAGMA integrity_check` and returns its report (`["ok"]` when sound).
    pub async fn integrity_check(&self) -> Result<Vec<String>> {
        self.read(|c| {
            let mut stmt = c.prepare("PRAGMA integrity_check").map_err(backend)?;
            let rows = stmt
                .query_map([], |r| r.get::<_, String>(0))
                .map_err(backend)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(backend)
        })
        .await
    }
}

fn thread_row(c: &Connection, thread: &str) -> Result<Option<(i64, u64)>> {
    c.prepare_cached("SELECT tid, last_seq FROM threads WHERE thread_id = ?1")
        .map_err(backend)?
        .query_row([thread], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)? as u64))
        })
        .optional()
        .map_err(backend)
}

/// The thread's `(tid, last_seq)` when events can be read from `from_seq` (at most one past
/// the last sequence).
fn readable_thread(c: &Connection, thread: &str, from_seq: u64) -> Result<(i64, u64)> {
    let (tid, last) = thread_row(c, thread)?.ok_or_else(|| StoreError::unknown_thread(thread))?;
    StoreError::check_readable(thread, from_seq, last)?;
    Ok((tid, last))
}

fn runs_of(c: &Connection, tid: i64) -> Result<Vec<RunInfo>> {
    let mut stmt = c
        .prepare_cached(
            "SELECT run_id, parent_run_id, status, first_seq, last_seq FROM runs
             WHERE tid = ?1 ORDER BY first_seq",
        )
        .map_err(backend)?;
    let rows = stmt
        .query_map([tid], |r| {
            Ok(RunInfo {
                run_id: r.get(0)?,
                parent_run_id: r.get(1)?,
                status: RunStatus::parse(&r.get::<_, String>(2)?).unwrap_or(RunStatus::Running),
                first_seq: r.get::<_, i64>(3)? as u64,
                last_seq: r.get::<_, i64>(4)? as u64,
            })
        })
        .map_err(backend)?;
    rows.collect::<Result<_, _>>().map_err(backend)
}

/// The events of `thread` from `from_seq` on, decoded straight from SQLite's buffers, up to
/// the first that cannot be decoded, and that one's error.
fn decode_from(
    c: &mut Connection,
    thread: &str,
    from_seq: u64,
) -> Result<(Vec<StoredEvent>, Option<StoreError>)> {
    let tx = c.transaction().map_err(backend)?;
    let (tid, last) = readable_thread(&tx, thread, from_seq)?;
    let from_seq = from_seq.max(1);
    let mut stmt = tx.prepare_cached(EVENTS_FROM).map_err(backend)?;
    let mut rows = stmt.query(params![tid, from_seq as i64]).map_err(backend)?;
    let expected = (last + 1).saturating_sub(from_seq);
    let mut out = Decoded::new(thread, from_seq, usize::try_from(expected).unwrap_or(0));
    while let Some(row) = rows.next().map_err(backend)? {
        let first = row.get::<_, i64>(0).map_err(backend)? as u64;
        let n = row.get::<_, i64>(1).map_err(backend)?;
        let run = bytes_of(row.get_ref(2).map_err(backend)?).unwrap_or_default();
        let body = bytes_of(row.get_ref(3).map_err(backend)?);
        if let Some(e) = out.row(first, n, run, body) {
            return Ok((out.events, Some(e)));
        }
    }
    Ok((out.events, None))
}

/// Does one write of a group inside the group's transaction (or a savepoint of it).
fn do_job(tx: &Connection, job: &WriteJob) -> Result<Done> {
    Ok(match &job.work {
        Work::Append(prepared) => Done::Range(append_in(tx, &job.thread, &job.run, prepared)?),
        Work::Lease(until_ms) => {
            lease_in(tx, &job.thread, &job.run, *until_ms, false)?;
            Done::Range(0..0)
        }
        Work::AppendLeased(prepared, until_ms) => {
            make_room(tx, &job.thread, &job.run, prepared)?;
            let range = append_in(tx, &job.thread, &job.run, prepared)?;
            lease_after_append(tx, &job.thread, &job.run, prepared, *until_ms)?;
            Done::Range(range)
        }
        Work::ClaimRun(c) => {
            let writable =
                thread_owner(tx, &job.thread)?.is_some_and(|owner| c.any_owner || owner == c.owner);
            if !writable {
                return Err(StoreError::unknown_thread(&job.thread));
            }
            make_room(tx, &job.thread, &job.run, &c.prepared)?;
            let range = append_in(tx, &job.thread, &job.run, &c.prepared)?;
            lease_after_append(tx, &job.thread, &job.run, &c.prepared, c.until_ms)?;
            Done::Range(range)
        }
        Work::AppendToRun(prepared) => {
            let (tid, _) = thread_row(tx, &job.thread)?
                .ok_or_else(|| StoreError::unknown_thread(&job.thread))?;
            let found = tx
                .prepare_cached("SELECT 1 FROM runs WHERE tid = ?1 AND run_id = ?2")
                .map_err(backend)?
                .query_row(params![tid, job.run], |_| Ok(()))
                .optional()
                .map_err(backend)?;
            if found.is_none() {
                return Err(StoreError::UnknownRun {
                    thread: job.thread.clone(),
                    run: job.run.clone(),
                });
            }
            Done::Range(append_in(tx, &job.thread, &job.run, prepared)?)
        }
        Work::Claim(owner) => Done::Claimed(claim_in(tx, &job.thread, owner.as_deref())?),
        Work::AppendIfNew(c) => {
            if let Some(range) = append_to_new_thread(tx, &job.thread, &job.run, c)? {
                return Ok(Done::Range(range));
            }
            insert_thread_in(tx, &job.thread, c.owner.as_deref())?;
            let (owner, last_seq) = owner_in(tx, &job.thread)?;
            let last_seq = u64::try_from(last_seq).unwrap_or(u64::MAX);
            if keeps_thread(last_seq, owner.as_deref(), c.owner.as_deref(), c.any_owner) {
                Done::Claimed(
                    thread_info_of(tx, &job.thread)?
                        .ok_or_else(|| StoreError::unknown_thread(&job.thread))?,
                )
            } else {
                let range = append_in(tx, &job.thread, &job.run, &c.prepared)?;
                lease_after_append(tx, &job.thread, &job.run, &c.prepared, c.until_ms)?;
                Done::Range(range)
            }
        }
    })
}

/// Commits a group of writes in one transaction and answers each (after the commit: a
/// failed commit fails every write of the group).
///
/// The writes are first done one after the other in the transaction itself. Should one
/// fail (a refused append: a run that exists or ended, an unknown parent), that
/// transaction is rolled back and the group is done again with each write in its own
/// savepoint, so that the refused one undoes nothing else ([`commit_isolated`]). Refusals
/// are rare, and a savepoint per write costs two statements and a copy of every page it
/// changes.
fn commit_group(conn: &mut Connection, jobs: Vec<WriteJob>, path: &Path) {
    match commit_plain(conn, &jobs) {
        Ok(Some(done)) => {
            for (job, d) in jobs.into_iter().zip(done) {
                let _ = job.done.send(Ok(d));
            }
        }
        Ok(None) => commit_isolated(conn, jobs, path),
        Err(e) => fail_all(jobs, &advise(path, e)),
    }
}

/// Answers every write of a group with `e` (the group could not be committed).
fn fail_all(jobs: Vec<WriteJob>, e: &StoreError) {
    for job in jobs {
        let _ = job.done.send(Err(copy_error(e)));
    }
}

/// Does `jobs` one after the other in one transaction and commits it: what each did, or
/// `None`, with nothing written, when one of them failed.
fn commit_plain(conn: &mut Connection, jobs: &[WriteJob]) -> Result<Option<Vec<Done>>> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let mut done = Vec::with_capacity(jobs.len());
    for job in jobs {
        match do_job(&tx, job) {
            Ok(d) => done.push(d),
            // Dropping `tx` rolls it back.
            Err(_) => return Ok(None),
        }
    }
    tx.commit().map_err(backend)?;
    Ok(Some(done))
}

/// Commits a group of writes in one transaction, each in its own savepoint (a refused
/// write undoes only itself), and answers each after the commit.
fn commit_isolated(conn: &mut Connection, jobs: Vec<WriteJob>, path: &Path) {
    let mut tx = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(tx) => tx,
        Err(e) => return fail_all(jobs, &advise(path, backend(e))),
    };
    let mut answers = Vec::with_capacity(jobs.len());
    for job in jobs {
        let outcome = (|| {
            let sp = tx.savepoint().map_err(backend)?;
            let done = do_job(&sp, &job)?;
            sp.commit().map_err(backend)?;
            Ok(done)
        })()
        .map_err(|e| advise(path, e));
        answers.push((job.done, outcome));
    }
    match tx.commit() {
        Ok(()) => {
            for (done, outcome) in answers {
                let _ = done.send(outcome);
            }
        }
        Err(e) => {
            let e = advise(path, backend(e));
            for (done, outcome) in answers {
                let _ = done.send(outcome.and(Err(copy_error(&e))));
            }
        }
    }
}

/// Starts the thread that owns group commits: it waits for a write, takes every write
/// waiting by then (and those that came while it waited for the connection), and commits
/// them as one group ([`commit_group`]); while it commits, the next group gathers. One
/// thread instead of a blocking task per write: a write costs the writer one wake-up when
/// it is idle and none when it is busy, and no task queues on the connection's lock.
/// It ends when the store (the sender) is dropped.
fn spawn_writer(
    writer: Arc<Mutex<Connection>>,
    path: PathBuf,
) -> Result<std::sync::mpsc::Sender<WriteJob>> {
    let (tx, rx) = std::sync::mpsc::channel::<WriteJob>();
    std::thread::Builder::new()
        .name("agui-sqlite-writer".into())
        .spawn(move || {
            while let Ok(first) = rx.recv() {
                let mut jobs = vec![first];
                jobs.extend(rx.try_iter());
                let mut conn = writer.lock().unwrap_or_else(|p| p.into_inner());
                jobs.extend(rx.try_iter());
                // A panic drops the group's answers (each caller gets an error), not the
                // writer.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    commit_group(&mut conn, jobs, &path)
                }));
            }
        })
        .map_err(|e| StoreError::Backend(format!("cannot start the store's writer thread: {e}")))?;
    Ok(tx)
}

/// The same error again, for each append of a group that failed as a whole.
fn copy_error(e: &StoreError) -> StoreError {
    match e {
        StoreError::Damaged(m) => StoreError::Damaged(m.clone()),
        other => StoreError::Backend(other.to_string()),
    }
}

impl Done {
    /// The appended range; an error for a claim's answer (never asked of one).
    fn range(self) -> Result<Range<u64>> {
        match self {
            Done::Range(range) => Ok(range),
            Done::Claimed(_) => Err(StoreError::Backend(
                "the store answered an append with a claim".into(),
            )),
        }
    }
}

/// Creates `thread` if it is new, inside the group's write transaction, and reads it back.
fn claim_in(tx: &Connection, thread: &str, owner: Option<&str>) -> Result<ThreadInfo> {
    insert_thread_in(tx, thread, owner)?;
    thread_info_of(tx, thread)?.ok_or_else(|| StoreError::UnknownThread(thread.to_owned()))
}

/// The first run of `thread` when the thread is new (the common case of
/// [`EventStore::append_if_new`]): the thread's row is written once, as the append leaves
/// it, rather than inserted, read, and updated (which rewrote its index entries). `None`,
/// with nothing written, when the thread exists, the run names a parent (which a new
/// thread cannot hold: the general path refuses it) or there is nothing to append.
fn append_to_new_thread(
    tx: &Connection,
    thread: &str,
    run: &str,
    c: &Claimed,
) -> Result<Option<Range<u64>>> {
    let p = &c.prepared;
    if p.parent.is_some() || p.count == 0 {
        return Ok(None);
    }
    let n = p.count as u64;
    let now = now_ms() as i64;
    let inserted = tx
        .prepare_cached(
            "INSERT INTO threads (thread_id, last_seq, owner, created_ms, updated_ms, title)
             VALUES (?1, ?2, ?3, ?4, ?4, ?5) ON CONFLICT (thread_id) DO NOTHING",
        )
        .map_err(backend)?
        .execute(params![thread, n as i64, c.owner.as_deref(), now, p.title])
        .map_err(backend)?;
    if inserted == 0 {
        return Ok(None);
    }
    let tid = tx.last_insert_rowid();
    insert_events(tx, tid, 1, run, &p.rows)?;
    let status = p.closes.unwrap_or(RunStatus::Running).as_str();
    tx.prepare_cached(
        "INSERT INTO runs (tid, run_id, parent_run_id, status, first_seq, last_seq)
         VALUES (?1, ?2, NULL, ?3, 1, ?4)",
    )
    .map_err(backend)?
    .execute(params![tid, run, status, n as i64])
    .map_err(backend)?;
    lease_after_append(tx, thread, run, p, c.until_ms)?;
    Ok(Some(1..n + 1))
}

/// Inserts `rows` (see [`crate::rows`]) as events `first..` of run `run` in thread `tid`.
fn insert_events(tx: &Connection, tid: i64, first: u64, run: &str, rows: &[Packed]) -> Result<()> {
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO events (tid, seq, run_id, n, body) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .map_err(backend)?;
    for row in rows {
        let seq = first + row.first as u64;
        insert
            .execute(params![tid, seq as i64, run, row.count as i64, row.body])
            .map_err(backend)?;
    }
    Ok(())
}

/// Creates `thread`, owned by `owner`, if it is new.
fn insert_thread_in(tx: &Connection, thread: &str, owner: Option<&str>) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO threads (thread_id, last_seq, owner, created_ms, updated_ms)
         VALUES (?1, 0, ?2, ?3, ?3) ON CONFLICT (thread_id) DO NOTHING",
    )
    .map_err(backend)?
    .execute(params![thread, owner, now_ms() as i64])
    .map_err(backend)?;
    Ok(())
}

/// The owner of `thread` (`Some(None)`: it has none), `None` when the thread is absent.
fn thread_owner(tx: &Connection, thread: &str) -> Result<Option<Option<String>>> {
    tx.prepare_cached("SELECT owner FROM threads WHERE thread_id = ?1")
        .map_err(backend)?
        .query_row([thread], |r| r.get(0))
        .optional()
        .map_err(backend)
}

/// The runs of thread `tid` (id `thread`) other than `run` that are still running, with
/// their lease's expiry (`None`: no lease).
fn running_runs(
    tx: &Connection,
    tid: i64,
    thread: &str,
    run: &str,
) -> Result<Vec<(String, Option<i64>)>> {
    let mut stmt = tx
        .prepare_cached(
            "SELECT r.run_id, l.until_ms FROM runs r
             LEFT JOIN leases l ON l.thread_id = ?2 AND l.run_id = r.run_id
             WHERE r.tid = ?1 AND r.status = 'running' AND r.run_id <> ?3",
        )
        .map_err(backend)?;
    let rows = stmt
        .query_map(params![tid, thread, run], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(backend)?;
    rows.collect::<Result<_, _>>().map_err(backend)
}

/// One run at a time ([`EventStore::append_leased`]): before a batch that starts `run` is
/// stored with a lease, another run of the thread still running with a live lease refuses
/// it ([`StoreError::ThreadBusy`]); the others still running (their server died, or they
/// have no lease) are closed with a `RUN_ERROR` (code `abandoned`), in the same
/// transaction.
fn make_room(tx: &Connection, thread: &str, run: &str, prepared: &Prepared) -> Result<()> {
    if !prepared.starts_run || prepared.count == 0 {
        return Ok(());
    }
    let Some((tid, _)) = thread_row(tx, thread)? else {
        return Ok(());
    };
    let others = running_runs(tx, tid, thread, run)?;
    let now = i64::try_from(now_ms()).unwrap_or(i64::MAX);
    if let Some((busy, _)) = others
        .iter()
        .find(|(_, until)| until.is_some_and(|u| u >= now))
    {
        return Err(StoreError::ThreadBusy {
            thread: thread.to_owned(),
            run: busy.clone(),
        });
    }
    for (stale, _) in others {
        let closing = prepare_rows(thread, &stale, &[abandoned()], &[])?;
        append_in(tx, thread, &stale, &closing)?;
    }
    Ok(())
}

/// The owner and the last sequence of `thread`, which exists.
fn owner_in(tx: &Connection, thread: &str) -> Result<(Option<String>, i64)> {
    tx.prepare_cached("SELECT owner, last_seq FROM threads WHERE thread_id = ?1")
        .map_err(backend)?
        .query_row([thread], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(backend)
}

/// Records the lease of a run whose append (`prepared`) was just accepted in the same
/// transaction: none when the batch ended the run; when nothing was appended, as a renewal
/// (the run may have ended before).
fn lease_after_append(
    tx: &Connection,
    thread: &str,
    run: &str,
    prepared: &Prepared,
    until_ms: u64,
) -> Result<()> {
    if prepared.count == 0 {
        lease_in(tx, thread, run, until_ms, false)
    } else if prepared.closes.is_none() {
        lease_in(tx, thread, run, until_ms, true)
    } else {
        Ok(())
    }
}

/// Records a run's lease inside the group's write transaction, unless the run has ended
/// (a run not stored yet may have one: a server may renew before its first append). With
/// `going_on` (its append was just accepted and left it running) the run's status is not
/// looked up.
fn lease_in(tx: &Connection, thread: &str, run: &str, until_ms: u64, going_on: bool) -> Result<()> {
    let sql = if going_on {
        "INSERT INTO leases (thread_id, run_id, until_ms) VALUES (?1, ?2, ?3)
         ON CONFLICT (thread_id, run_id) DO UPDATE SET until_ms = excluded.until_ms"
    } else {
        "INSERT INTO leases (thread_id, run_id, until_ms)
         SELECT ?1, ?2, ?3 WHERE NOT EXISTS (
             SELECT 1 FROM runs r JOIN threads t ON t.tid = r.tid
             WHERE t.thread_id = ?1 AND r.run_id = ?2 AND r.status <> 'running')
         ON CONFLICT (thread_id, run_id) DO UPDATE SET until_ms = excluded.until_ms"
    };
    tx.prepare_cached(sql)
        .map_err(backend)?
        .execute(params![
            thread,
            run,
            i64::try_from(until_ms).unwrap_or(i64::MAX)
        ])
        .map_err(backend)?;
    Ok(())
}

/// One run's append inside the group's write transaction (see [`SqliteStore::write_grouped`]).
fn append_in(
    tx: &Connection,
    thread_id: &str,
    run_id: &str,
    prepared: &Prepared,
) -> Result<Range<u64>> {
    let existing = thread_row(tx, thread_id)?;
    let last = existing.map_or(0, |(_, l)| l);
    if prepared.count == 0 {
        return Ok(last + 1..last + 1);
    }
    // Its own statement: tried as a LEFT JOIN in the thread's lookup, SQLite re-prepared
    // that statement at every run (callgrind: `sqlite3Reprepare` once a run, about 70,000
    // more instructions a run).
    let current: Option<String> = match existing {
        Some((tid, _)) => tx
            .prepare_cached("SELECT status FROM runs WHERE tid = ?1 AND run_id = ?2")
            .map_err(backend)?
            .query_row(params![tid, run_id], |r| r.get(0))
            .optional()
            .map_err(backend)?,
        None => None,
    };
    // Inside the write transaction: of two appends starting one run, the second
    // sees the first's run.
    if prepared.starts_run && current.is_some() {
        return Err(StoreError::RunExists {
            thread: thread_id.to_owned(),
            run: run_id.to_owned(),
        });
    }
    if current.as_deref().is_some_and(|s| s != "running") {
        return Err(StoreError::RunClosed {
            thread: thread_id.to_owned(),
            run: run_id.to_owned(),
        });
    }
    if let Some(p) = &prepared.parent {
        let found = match existing {
            Some((tid, _)) => tx
                .prepare_cached("SELECT 1 FROM runs WHERE tid = ?1 AND run_id = ?2")
                .map_err(backend)?
                .query_row(params![tid, p], |_| Ok(()))
                .optional()
                .map_err(backend)?
                .is_some(),
            None => false,
        };
        if !found {
            return Err(StoreError::UnknownRun {
                thread: thread_id.to_owned(),
                run: p.clone(),
            });
        }
    }
    let now = now_ms() as i64;
    let tid = match existing {
        Some((tid, _)) => tid,
        None => {
            tx.prepare_cached(
                "INSERT INTO threads (thread_id, last_seq, created_ms, updated_ms)
                 VALUES (?1, 0, ?2, ?2)",
            )
            .map_err(backend)?
            .execute(params![thread_id, now])
            .map_err(backend)?;
            tx.last_insert_rowid()
        }
    };
    let first = last + 1;
    let end = first + prepared.count as u64;
    insert_events(tx, tid, first, run_id, &prepared.rows)?;
    let status = prepared.closes.unwrap_or(RunStatus::Running).as_str();
    // The run's row is known to exist or not (`current`): updated in place, or inserted
    // (an upsert would first try the insert).
    let last_seq = (end - 1) as i64;
    if current.is_some() {
        tx.prepare_cached(
            "UPDATE runs SET parent_run_id = coalesce(parent_run_id, ?3), status = ?4,
                last_seq = ?5 WHERE tid = ?1 AND run_id = ?2",
        )
        .map_err(backend)?
        .execute(params![tid, run_id, prepared.parent, status, last_seq])
        .map_err(backend)?;
    } else {
        tx.prepare_cached(
            "INSERT INTO runs (tid, run_id, parent_run_id, status, first_seq, last_seq)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(backend)?
        .execute(params![
            tid,
            run_id,
            prepared.parent,
            status,
            first as i64,
            last_seq
        ])
        .map_err(backend)?;
    }
    tx.prepare_cached(
        "UPDATE threads SET last_seq = ?1, updated_ms = max(updated_ms, ?2),
            title = coalesce(title, ?3)
         WHERE tid = ?4",
    )
    .map_err(backend)?
    .execute(params![(end - 1) as i64, now, prepared.title, tid])
    .map_err(backend)?;
    if prepared.closes.is_some() {
        // A lease tells a running run's live server from a dead one; an ended run needs
        // none, and the table keeps only the runs in progress.
        tx.prepare_cached("DELETE FROM leases WHERE thread_id = ?1 AND run_id = ?2")
            .map_err(backend)?
            .execute(params![thread_id, run_id])
            .map_err(backend)?;
    }
    Ok(first..end)
}

impl EventStore for SqliteStore {
    fn append<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        self.append_json(thread, run, events, &[])
    }

    fn append_json<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        Box::pin(async move {
            let work = Work::Append(prepare_rows(thread, run, events, json)?);
            self.append_work(thread, run, work).await
        })
    }

    fn read_raw<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<RawEvent>>> {
        let thread = thread.to_owned();
        Box::pin(self.read(move |c| {
            let tx = c.transaction().map_err(backend)?;
            let (tid, _) = readable_thread(&tx, &thread, from_seq)?;
            let mut stmt = tx.prepare_cached(EVENTS_FROM).map_err(backend)?;
            let mut rows = stmt.query(params![tid, from_seq as i64]).map_err(backend)?;
            let mut out = Vec::new();
            while let Some(r) = rows.next().map_err(backend)? {
                let first = r.get::<_, i64>(0).map_err(backend)? as u64;
                let n = r.get::<_, i64>(1).map_err(backend)?;
                let run_id = string_of(r.get_ref(2).map_err(backend)?);
                let body = bytes_of(r.get_ref(3).map_err(backend)?);
                if !crate::rows::raw_events(&mut out, limit, from_seq, first, n, &run_id, body) {
                    break;
                }
            }
            Ok(out)
        }))
    }

    /// Decodes each row straight from SQLite's buffer (no copy of the JSON, one `run_id`
    /// string per run rather than per row) into a vector sized from the thread's last
    /// sequence: replaying a 1M-event thread this way (also [`EventStore::read`], which
    /// goes through here) is about 3× faster than decoding
    /// [`read_raw`](EventStore::read_raw)'s output.
    fn read_until_corrupt<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
    ) -> BoxFuture<'a, Result<(Vec<StoredEvent>, Option<StoreError>)>> {
        let thread = thread.to_owned();
        Box::pin(self.read(move |c| decode_from(c, &thread, from_seq)))
    }

    fn threads(&self) -> BoxFuture<'_, Result<Vec<ThreadInfo>>> {
        Box::pin(self.read(|c| {
            let mut stmt = c
                .prepare_cached(&format!("{THREAD_INFO} ORDER BY t.tid"))
                .map_err(backend)?;
            let rows = stmt.query_map([], thread_info).map_err(backend)?;
            rows.collect::<Result<_, _>>().map_err(backend)
        }))
    }

    fn claim_thread<'a>(
        &'a self,
        thread: &'a str,
        owner: Option<&'a str>,
    ) -> BoxFuture<'a, Result<ThreadInfo>> {
        let (thread, owner) = (thread.to_owned(), owner.map(str::to_owned));
        Box::pin(async move {
            if thread.is_empty() {
                return Err(StoreError::Invalid("thread id is empty".into()));
            }
            // In the next group commit: a claim per run would otherwise cost a transaction
            // and a sync of its own, queued behind the writer.
            match self
                .write_grouped(thread, String::new(), Work::Claim(owner))
                .await?
            {
                Done::Claimed(info) => Ok(info),
                Done::Range(_) => Err(StoreError::Backend(
                    "the store answered a claim with an append".into(),
                )),
            }
        })
    }

    fn list_threads<'a>(&'a self, query: &'a ThreadQuery) -> BoxFuture<'a, Result<ThreadPage>> {
        Box::pin(async move {
            let limit = page_limit(query.limit);
            let cursor = query.cursor.as_deref().map(decode_cursor).transpose()?;
            let owner = query.owner.clone();
            let scope = query.scope.clone();
            let needles = query.needles();
            let list = self
                .read(move |c| {
                    let mut sql = format!("{THREAD_INFO} WHERE 1");
                    let mut args: Vec<Value> = Vec::new();
                    if let Some(o) = owner {
                        args.push(Value::Text(o));
                        sql += &format!(" AND t.owner = ?{}", args.len());
                    }
                    // A scope's threads are the keys that begin with its prefix; the
                    // unscoped ones, those that do not begin as scoped keys do.
                    let (prefix, equal) = match scope {
                        Some(s) => (crate::scope_prefix(&s), "="),
                        None => (crate::SCOPED.to_owned(), "<>"),
                    };
                    args.push(Value::Text(prefix));
                    let p = args.len();
                    sql += &format!(" AND substr(t.thread_id, 1, length(?{p})) {equal} ?{p}");
                    if let Some(n) = &needles {
                        // ASCII letters without case (SQLite's lower() folds only those),
                        // in the title or in a row of the thread's events (see
                        // `ThreadQuery::matches`).
                        args.push(Value::Text(n.title.clone()));
                        args.push(Value::Text(n.json.clone()));
                        let (q, j) = (args.len() - 1, args.len());
                        sql += &format!(
                            " AND (instr(lower(t.title), ?{q}) > 0 OR EXISTS (
                                SELECT 1 FROM events e WHERE e.tid = t.tid
                                AND instr(lower(CAST(e.body AS TEXT)), ?{j}) > 0))"
                        );
                    }
                    if let Some((ms, id)) = cursor {
                        args.push(Value::Integer(ms as i64));
                        args.push(Value::Text(id));
                        let (m, i) = (args.len() - 1, args.len());
                        // The first term bounds the index walk; the second skips the ties
                        // already listed.
                        sql += &format!(
                            " AND t.updated_ms <= ?{m} AND (t.updated_ms < ?{m} OR t.thread_id > ?{i})"
                        );
                    }
                    args.push(Value::Integer(limit as i64 + 1));
                    sql += &format!(
                        " ORDER BY t.updated_ms DESC, t.thread_id LIMIT ?{}",
                        args.len()
                    );
                    let mut stmt = c.prepare_cached(&sql).map_err(backend)?;
                    let rows = stmt
                        .query_map(rusqlite::params_from_iter(args), thread_info)
                        .map_err(backend)?;
                    rows.collect::<Result<Vec<_>, _>>().map_err(backend)
                })
                .await?;
            Ok(page_of(list, limit))
        })
    }

    fn update_thread<'a>(
        &'a self,
        thread: &'a str,
        update: &'a ThreadUpdate,
    ) -> BoxFuture<'a, Result<ThreadInfo>> {
        let thread = thread.to_owned();
        let update = update.clone();
        Box::pin(self.write(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let fork = update.fork_of.as_ref();
            let changed = tx
                .execute(
                    "UPDATE threads SET title = coalesce(?2, title),
                         fork_thread = coalesce(?3, fork_thread), fork_run = coalesce(?4, fork_run)
                     WHERE thread_id = ?1",
                    params![
                        thread,
                        update.title,
                        fork.map(|f| &f.thread_id),
                        fork.map(|f| &f.run_id)
                    ],
                )
                .map_err(backend)?;
            if changed == 0 {
                return Err(StoreError::UnknownThread(thread));
            }
            let info = thread_info_of(&tx, &thread)?.ok_or(StoreError::UnknownThread(thread))?;
            tx.commit().map_err(backend)?;
            Ok(info)
        }))
    }

    fn delete_thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<bool>> {
        let thread_id = thread.to_owned();
        Box::pin(async move {
            let existed = self
                .write(move |conn| {
                    let tx = conn
                        .transaction_with_behavior(TransactionBehavior::Immediate)
                        .map_err(backend)?;
                    let row = thread_row(&tx, &thread_id)?;
                    if let Some((tid, _)) = row {
                        let now = i64::try_from(now_ms()).unwrap_or(i64::MAX);
                        let running = running_runs(&tx, tid, &thread_id, "")?;
                        if let Some((busy, _)) = running
                            .into_iter()
                            .find(|(_, u)| u.is_some_and(|u| u >= now))
                        {
                            return Err(StoreError::ThreadBusy {
                                thread: thread_id.clone(),
                                run: busy,
                            });
                        }
                        for table in ["events", "runs", "threads"] {
                            tx.prepare_cached(&format!("DELETE FROM {table} WHERE tid = ?1"))
                                .map_err(backend)?
                                .execute([tid])
                                .map_err(backend)?;
                        }
                    }
                    tx.prepare_cached("DELETE FROM leases WHERE thread_id = ?1")
                        .map_err(backend)?
                        .execute([&thread_id])
                        .map_err(backend)?;
                    tx.commit().map_err(backend)?;
                    Ok(row.is_some())
                })
                .await?;
            self.inner.notifier.close(thread);
            Ok(existed)
        })
    }

    fn check_integrity(&self) -> BoxFuture<'_, Result<()>> {
        Box::pin(self.read(|c| {
            let mut stmt = c.prepare("PRAGMA quick_check").map_err(backend)?;
            let rows = stmt
                .query_map([], |r| r.get::<_, String>(0))
                .map_err(backend)?;
            let report = rows.collect::<Result<Vec<_>, _>>().map_err(backend)?;
            if report == ["ok"] {
                return Ok(());
            }
            let mut lines: Vec<&str> = report.iter().take(5).map(String::as_str).collect();
            if report.len() > 5 {
                lines.push("…");
            }
            Err(StoreError::Damaged(format!(
                "SQLite's quick_check reports: {}",
                lines.join("; ")
            )))
        }))
    }

    fn health(&self) -> BoxFuture<'_, Result<()>> {
        Box::pin(self.read(|c| {
            c.prepare_cached("SELECT 1")
                .map_err(backend)?
                .query_row([], |_| Ok(()))
                .map_err(backend)
        }))
    }

    fn thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<ThreadInfo>> {
        let thread = thread.to_owned();
        Box::pin(
            self.read(move |c| {
                thread_info_of(c, &thread)?.ok_or(StoreError::UnknownThread(thread))
            }),
        )
    }

    fn runs<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<RunInfo>>> {
        let thread = thread.to_owned();
        Box::pin(self.read(move |c| {
            let tx = c.transaction().map_err(backend)?;
            let (tid, _) = thread_row(&tx, &thread)?.ok_or(StoreError::UnknownThread(thread))?;
            runs_of(&tx, tid)
        }))
    }

    fn subscribe(&self, thread: &str) -> tokio::sync::watch::Receiver<u64> {
        self.inner.notifier.subscribe(thread)
    }

    fn poll_interval(&self) -> Option<Duration> {
        Some(self.inner.options.poll_interval)
    }

    fn renew_lease<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<()>> {
        // In the next group commit.
        let work = self.write_grouped(thread.to_owned(), run.to_owned(), Work::Lease(until_ms));
        Box::pin(async move { work.await.map(drop) })
    }

    fn append_leased_json<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        Box::pin(async move {
            let work = Work::AppendLeased(prepare_rows(thread, run, events, json)?, until_ms);
            self.append_work(thread, run, work).await
        })
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
        Box::pin(async move {
            let claimed = Claimed {
                owner: owner.map(str::to_owned),
                any_owner,
                prepared: prepare_rows(thread, run, events, json)?,
                until_ms,
            };
            self.append_work(thread, run, Work::ClaimRun(claimed)).await
        })
    }

    fn append_to_run_json<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        Box::pin(async move {
            let work = Work::AppendToRun(prepare_rows(thread, run, events, json)?);
            self.append_work(thread, run, work).await
        })
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
        Box::pin(async move {
            let claimed = Claimed {
                owner: owner.map(str::to_owned),
                any_owner,
                prepared: prepare_rows(thread, run, events, json)?,
                until_ms,
            };
            let work = Work::AppendIfNew(claimed);
            match self.write_append(thread, run, work).await? {
                Done::Range(range) => Ok(FirstRun::Stored(range)),
                Done::Claimed(info) => Ok(FirstRun::Existing(info)),
            }
        })
    }

    fn lease<'a>(&'a self, thread: &'a str, run: &'a str) -> BoxFuture<'a, Result<Option<u64>>> {
        let (thread, run) = (thread.to_owned(), run.to_owned());
        Box::pin(self.read(move |c| {
            c.prepare_cached("SELECT until_ms FROM leases WHERE thread_id = ?1 AND run_id = ?2")
                .map_err(backend)?
                .query_row(params![thread, run], |r| r.get::<_, i64>(0))
                .optional()
                .map(|v| v.map(|ms| ms.max(0) as u64))
                .map_err(backend)
        }))
    }

    fn tail(&self, thread: &str, from_seq: u64) -> BoxStream<'static, Result<StoredEvent>> {
        crate::tail_stream(self.clone(), thread, from_seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writer_connection_has_the_store_settings() {
        let dir = std::env::temp_dir().join(format!("agui-sqlite-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.db");
        let options = SqliteOptions::default();
        let c = connect(&path, &options, true).unwrap();
        let get = |name: &str| -> String {
            c.query_row(&format!("PRAGMA {name}"), [], |r| {
                r.get::<_, Value>(0).map(|v| match v {
                    Value::Integer(i) => i.to_string(),
                    Value::Text(t) => t,
                    other => format!("{other:?}"),
                })
            })
            .unwrap()
        };
        assert_eq!(get("journal_mode"), "wal");
        assert_eq!(get("wal_autocheckpoint"), WAL_CHECKPOINT_PAGES.to_string());
        assert_eq!(get("temp_store"), "2"); // MEMORY
        assert_eq!(get("synchronous"), "2"); // FULL
        drop(c);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A group is done without savepoints first; when one of its writes is refused, the
    /// group is done again with one savepoint per write: the refused write is answered with
    /// its error and the others are stored, each answered as if alone.
    #[test]
    fn a_write_refused_in_a_group_is_refused_alone() {
        use aguikit_core::event::RunStarted;
        let dir = std::env::temp_dir().join(format!("agui-sqlite-group-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("g.db");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let store = SqliteStore::open(&path).await.unwrap();
            let first = [RunStarted::new("t", "r1").into()];
            store.append("t", "r1", &first).await.unwrap();
        });
        let mut conn = connect(&path, &SqliteOptions::default(), true).unwrap();
        let job = |thread: &str, leased: bool| {
            let events = [RunStarted::new(thread, "r1").into()];
            let prepared = prepare_rows(thread, "r1", &events, &[]).unwrap();
            let (done, answer) = tokio::sync::oneshot::channel();
            let work = if leased {
                Work::AppendLeased(prepared, 77)
            } else {
                Work::Append(prepared)
            };
            let job = WriteJob {
                thread: thread.to_owned(),
                run: "r1".to_owned(),
                work,
                done,
            };
            (job, answer)
        };
        let range = |answer: &mut tokio::sync::oneshot::Receiver<Result<Done>>| match answer
            .try_recv()
            .unwrap()
        {
            Ok(Done::Range(r)) => Ok(r),
            Ok(Done::Claimed(_)) => panic!("a claim answered an append"),
            Err(e) => Err(e),
        };
        // Every write accepted: one plain transaction.
        let (a, mut a_answer) = job("a", false);
        let (b, mut b_answer) = job("b", true);
        commit_group(&mut conn, vec![a, b], &path);
        assert_eq!(range(&mut a_answer).unwrap(), 1..2);
        assert_eq!(range(&mut b_answer).unwrap(), 1..2);
        // The run of "t" exists: that write alone is refused.
        let (c, mut c_answer) = job("c", false);
        let (t, mut t_answer) = job("t", false);
        let (d, mut d_answer) = job("d", true);
        commit_group(&mut conn, vec![c, t, d], &path);
        assert_eq!(range(&mut c_answer).unwrap(), 1..2);
        assert!(matches!(
            range(&mut t_answer),
            Err(StoreError::RunExists { .. })
        ));
        assert_eq!(range(&mut d_answer).unwrap(), 1..2);
        let last = |thread: &str| thread_row(&conn, thread).unwrap().map(|(_, l)| l);
        for thread in ["a", "b", "c", "d", "t"] {
            assert_eq!(last(thread), Some(1), "{thread}");
        }
        let lease = |thread: &str| -> Option<i64> {
            conn.query_row(
                "SELECT until_ms FROM leases WHERE thread_id = ?1",
                [thread],
                |r| r.get(0),
            )
            .optional()
            .unwrap()
        };
        assert_eq!(
            (lease("b"), lease("d"), lease("c")),
            (Some(77), Some(77), None)
        );
        drop(conn);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
