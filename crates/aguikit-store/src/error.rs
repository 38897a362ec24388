//! What can go wrong.

/// An error of the store: bad input (unknown thread, run or sequence; invalid events) or a
/// failing backend.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No thread has this id.
    #[error("unknown thread {0:?}")]
    UnknownThread(String),
    /// The thread has no run with this id.
    #[error("unknown run {run:?} in thread {thread:?}")]
    UnknownRun {
        /// The thread.
        thread: String,
        /// The run asked for.
        run: String,
    },
    /// A sequence past the end of the thread.
    #[error("sequence {seq} is past the end of thread {thread:?} (last sequence {last})")]
    SequenceOutOfRange {
        /// The thread.
        thread: String,
        /// The sequence asked for.
        seq: u64,
        /// The thread's last sequence.
        last: u64,
    },
    /// The run already ended (`RUN_FINISHED` or `RUN_ERROR` stored).
    #[error("run {run:?} of thread {thread:?} has already ended")]
    RunClosed {
        /// The thread.
        thread: String,
        /// The run.
        run: String,
    },
    /// The run already exists in the thread (running or ended): a batch that begins with
    /// `RUN_STARTED` must start a new run. Two requests with the same run id get one run.
    #[error("run {run:?} already exists in thread {thread:?}")]
    RunExists {
        /// The thread.
        thread: String,
        /// The run.
        run: String,
    },
    /// Another run of the thread is in progress (running, and its server's lease has not
    /// expired): a thread runs one run at a time. Refused atomically by the appends that
    /// start a run with a lease ([`EventStore::append_leased`](crate::EventStore::append_leased),
    /// [`EventStore::claim_run_json`](crate::EventStore::claim_run_json)) and by
    /// [`EventStore::delete_thread`](crate::EventStore::delete_thread).
    #[error("thread {thread:?} has a run in progress ({run:?}); one run at a time per thread")]
    ThreadBusy {
        /// The thread.
        thread: String,
        /// The run in progress.
        run: String,
    },
    /// The input does not make sense (empty id, mismatching ids, ...).
    #[error("invalid input: {0}")]
    Invalid(String),
    /// A stored event could not be decoded (the events before it can still be read, see
    /// [`EventStore::read_until_corrupt`](crate::EventStore::read_until_corrupt)).
    #[error("the stored event at sequence {seq} of thread {thread:?} cannot be decoded: {message}")]
    Corrupt {
        /// The thread.
        thread: String,
        /// The event's sequence.
        seq: u64,
        /// The decoder's message.
        message: String,
    },
    /// The store's database is damaged (a corrupt SQLite file, missing tables or columns):
    /// the message says what was found and how to recover.
    #[error("the store is damaged: {0}")]
    Damaged(String),
    /// The backend failed (I/O, database error, lost connection).
    #[error("store backend: {0}")]
    Backend(String),
    /// The database was written in a storage format later than this version reads (a newer
    /// aguikit changed how events are laid out): nothing was read or written.
    #[error(
        "the store {place} is in storage format {found}, written by a newer aguikit; this version reads formats up to {supported}: upgrade aguikit (every process sharing the store), or use another store"
    )]
    NewerFormat {
        /// The file or schema.
        place: String,
        /// The format found.
        found: i64,
        /// The latest format this version reads.
        supported: i64,
    },
}

impl StoreError {
    /// [`UnknownThread`](Self::UnknownThread) for `thread`.
    pub(crate) fn unknown_thread(thread: &str) -> Self {
        StoreError::UnknownThread(thread.to_owned())
    }

    /// Checks that `thread`, whose last sequence is `last`, can be read from `from_seq`: at
    /// most one past the end, else [`SequenceOutOfRange`](Self::SequenceOutOfRange).
    pub(crate) fn check_readable(thread: &str, from_seq: u64, last: u64) -> Result<(), Self> {
        if from_seq > last + 1 {
            return Err(StoreError::SequenceOutOfRange {
                thread: thread.to_owned(),
                seq: from_seq,
                last,
            });
        }
        Ok(())
    }

    /// A short machine-readable code (`unknown_thread`, `unknown_run`, ...), stable across
    /// releases. The store knows nothing of HTTP: `aguikit-server` maps each error to its
    /// status (404 for an unknown thread or run, 400 for a sequence out of range or invalid
    /// input, 409 for a closed or existing run or a busy thread, 503 for a damaged store or one in a
    /// newer storage format, 500 otherwise).
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::UnknownThread(_) => "unknown_thread",
            StoreError::UnknownRun { .. } => "unknown_run",
            StoreError::SequenceOutOfRange { .. } => "sequence_out_of_range",
            StoreError::RunClosed { .. } => "run_closed",
            StoreError::RunExists { .. } => "run_exists",
            StoreError::ThreadBusy { .. } => "thread_busy",
            StoreError::Invalid(_) => "invalid_input",
            StoreError::Corrupt { .. } => "corrupt_event",
            StoreError::Damaged(_) => "store_damaged",
            StoreError::Backend(_) => "store_backend",
            StoreError::NewerFormat { .. } => "store_newer_format",
        }
    }
}
