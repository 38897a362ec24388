//! How a server persists its runs: [`StoreOptions`], and the cache of folded threads.

use crate::setters::setters;
use aguikit_store::EventStore;
use std::sync::Arc;
use std::time::Duration;

/// How an [`AgentServer`](crate::AgentServer) persists its runs.
///
/// ```
/// use aguikit_server::StoreOptions;
/// use aguikit_server::aguikit_store::MemoryStore;
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// let options = StoreOptions::new(Arc::new(MemoryStore::new())).lease(Duration::from_secs(10));
/// assert!(!options.cancel_on_disconnect);
/// ```
#[derive(Clone)]
pub struct StoreOptions {
    /// Where events go.
    pub store: Arc<dyn EventStore>,
    /// Cancel a run when the client that started it disconnects (default: the run goes on
    /// and stays resumable).
    pub cancel_on_disconnect: bool,
    /// How long a run stays "alive" in the store without its server renewing it (default
    /// 30 s; renewed every third of that while the run goes on). When a server dies in the
    /// middle of a run, the first reader that finds the lease expired (a `connect`, a
    /// resuming client, the thread route) closes the run with `RUN_ERROR` code `abandoned`,
    /// so nobody waits on it forever. Servers sharing a store should have clocks within a
    /// fraction of this.
    pub lease: Duration,
    /// The most bytes of stored events (their wire JSON) one run may have (default 64 MiB). The event that would pass it is not stored: the
    /// run ends there with `RUN_ERROR` (code `run_too_large`) and its agent is stopped, so
    /// an agent or upstream that streams without end fills neither the store nor the
    /// memory of whoever reads the thread back.
    pub max_run_bytes: u64,
    /// The agent's scope in a store shared by several agents (`None`, the default: none).
    /// Threads are stored under their [`scoped_thread_key`](aguikit_store::scoped_thread_key)
    /// and the thread routes see only the scope's threads: another agent's thread is
    /// unknown here (`404` on the thread routes, a new thread for a run), so one agent's
    /// history never reaches another. Give each agent sharing a store its own scope, or
    /// keep one of them unscoped (the threads stored before it had a scope stay its own).
    pub scope: Option<String>,
    /// Folded threads kept between runs, so a new run folds only what was appended since.
    pub(super) folds: Arc<FoldCache>,
}

/// The default of [`StoreOptions::max_run_bytes`]: 64 MiB.
const DEFAULT_MAX_RUN_BYTES: u64 = 64 << 20;

/// The engine's fold of recently used threads, by thread id: the thread's creation time
/// (a deleted and re-created thread is another thread), the last sequence folded, and the
/// pipeline. Bounded; the oldest entry goes first.
#[derive(Default)]
pub(super) struct FoldCache {
    entries: std::sync::Mutex<(
        std::collections::HashMap<String, CachedFold>,
        std::collections::VecDeque<String>,
    )>,
}

/// A thread's creation time, the last sequence folded, and the pipeline after it.
type CachedFold = (u64, u64, aguikit_core::engine::pipeline::Pipeline);

/// How many threads' folds are kept.
const FOLD_CACHE_THREADS: usize = 256;

impl FoldCache {
    pub(super) fn take(&self, thread: &str) -> Option<CachedFold> {
        let mut g = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let entry = g.0.remove(thread)?;
        g.1.retain(|t| t != thread);
        Some(entry)
    }

    pub(super) fn put(
        &self,
        thread: &str,
        created: u64,
        seq: u64,
        pipeline: aguikit_core::engine::pipeline::Pipeline,
    ) {
        let mut g = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if g.0
            .insert(thread.to_owned(), (created, seq, pipeline))
            .is_none()
        {
            g.1.push_back(thread.to_owned());
        }
        while g.0.len() > FOLD_CACHE_THREADS {
            let Some(oldest) = g.1.pop_front() else { break };
            g.0.remove(&oldest);
        }
    }

    /// Whether a fold of `thread` is kept (then the thread held events when it was made).
    pub(super) fn knows(&self, thread: &str) -> bool {
        let g = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        g.0.contains_key(thread)
    }

    pub(super) fn forget(&self, thread: &str) {
        self.take(thread);
    }
}

impl StoreOptions {
    /// The default options over `store`: runs outlive their client, 30 s leases, runs of
    /// at most 64 MiB.
    pub fn new(store: Arc<dyn EventStore>) -> StoreOptions {
        StoreOptions {
            store,
            cancel_on_disconnect: false,
            lease: Duration::from_secs(30),
            max_run_bytes: DEFAULT_MAX_RUN_BYTES,
            scope: None,
            folds: Arc::default(),
        }
    }

    setters! {
        /// Sets [`cancel_on_disconnect`](Self::cancel_on_disconnect).
        cancel_on_disconnect(cancel: bool) => cancel_on_disconnect = cancel;
        /// Sets [`lease`](Self::lease) (at least 100 ms).
        lease(lease: Duration) => lease = lease.max(Duration::from_millis(100));
        /// Sets [`max_run_bytes`](Self::max_run_bytes) (at least 1 KiB).
        max_run_bytes(bytes: u64) => max_run_bytes = bytes.max(1024);
    }

    /// Sets [`scope`](Self::scope).
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// The store's name of thread `id` of `owner` in this scope.
    pub(super) fn key(&self, owner: Option<&str>, id: &str) -> String {
        aguikit_store::scoped_thread_key(self.scope.as_deref(), owner, id)
    }
}

impl std::fmt::Debug for StoreOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreOptions")
            .field("cancel_on_disconnect", &self.cancel_on_disconnect)
            .field("lease", &self.lease)
            .field("max_run_bytes", &self.max_run_bytes)
            .field("scope", &self.scope)
            .finish()
    }
}
