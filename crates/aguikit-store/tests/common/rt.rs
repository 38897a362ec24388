//! The tokio runtime of the store's test suites and bench (a file of its own, so that the
//! durability test and the bench include it with `#[path]` without the rest of `common`).

/// A two-thread tokio runtime.
pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}
