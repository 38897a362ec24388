//! The accept loop behind [`serve`](crate::serve): `TCP_NODELAY` on every accepted socket,
//! a request-head timeout (which also closes kept-alive connections left idle), a
//! connection limit kept under the process's file-descriptor limit with room for health
//! checks, the local address on every request (for the `Host` check), and a graceful
//! shutdown that waits for the runs' stored ends; connections run on the caller's runtime or
//! on threads of their own ([`ServerConfig::connection_threads`](crate::ServerConfig)).

use crate::access::LocalAddr;
use crate::api_error::{ApiError, ErrorCode};
use crate::server::ShutdownHandle;
use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, Response, header};
use axum::response::IntoResponse;
use futures_util::FutureExt;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::{Notify, watch};

/// The path answered on connections beyond the connection limit (everything else gets
/// `503`): health checks keep working when a server is flooded.
pub const HEALTH_PATH: &str = "/health";

/// File descriptors kept free for everything that is not a client connection (the store,
/// logs, outgoing requests of agents).
const RESERVED_FDS: u64 = 64;

/// The connection limit in force: `configured`, or one derived from the process's
/// file-descriptor limit (raised to its hard limit first), always under it.
pub(crate) fn connection_limit(configured: Option<usize>) -> usize {
    let fds = fd_limit();
    let ceiling = fds.map(|n| n.saturating_sub(RESERVED_FDS) as usize * 7 / 8);
    match (configured, ceiling) {
        (Some(c), Some(max)) => c.min(max).max(1),
        (Some(c), None) => c.max(1),
        (None, Some(max)) => max.max(1),
        (None, None) => 10_000,
    }
}

/// The soft limit on open files, after raising it to the hard limit where allowed.
#[cfg(unix)]
fn fd_limit() -> Option<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut lim = getrlimit(Resource::Nofile);
    if let (Some(cur), max) = (lim.current, lim.maximum)
        && max.is_none_or(|m| m > cur)
    {
        let want = max.unwrap_or(1 << 20).min(1 << 20);
        let raised = rustix::process::Rlimit {
            current: Some(want),
            maximum: max,
        };
        if setrlimit(Resource::Nofile, raised).is_ok() {
            lim = getrlimit(Resource::Nofile);
        }
    }
    lim.current
}

#[cfg(not(unix))]
fn fd_limit() -> Option<u64> {
    None
}

/// Counts live connections and wakes the shutdown when the last one closes.
#[derive(Default)]
struct Live {
    normal: AtomicUsize,
    limited: AtomicUsize,
    gone: Notify,
}

impl Live {
    fn total(&self) -> usize {
        self.normal.load(Ordering::Acquire) + self.limited.load(Ordering::Acquire)
    }
}

/// One live connection, counted from [`Slot::take`] until dropped, however the connection
/// ends (closed, panicked, dropped with its runtime): a panic never leaks a slot.
struct Slot {
    live: Arc<Live>,
    limited: bool,
}

impl Slot {
    fn take(live: Arc<Live>, limited: bool) -> Slot {
        let counter = if limited { &live.limited } else { &live.normal };
        counter.fetch_add(1, Ordering::AcqRel);
        Slot { live, limited }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let counter = if self.limited {
            &self.live.limited
        } else {
            &self.live.normal
        };
        counter.fetch_sub(1, Ordering::AcqRel);
        self.live.gone.notify_waiters();
    }
}

/// Serves `router` on `listener` (see [`crate::serve`]).
pub(crate) async fn run(
    listener: tokio::net::TcpListener,
    router: Router,
    handles: Vec<ShutdownHandle>,
    signal: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let config = handles
        .first()
        .map(|h| h.config().clone())
        .unwrap_or_default();
    let limit = connection_limit(config.max_connections);
    // Connections past the limit answer one health check each, briefly.
    let overflow = (limit / 8).clamp(4, 64);
    let head_timeout = config.header_read_timeout;
    let grace = handles
        .iter()
        .map(ShutdownHandle::grace)
        .max()
        .unwrap_or_default();
    tracing::debug!(limit, overflow, "accepting connections");
    let threads = Threads::start(config.connection_threads)?;
    let live = Arc::new(Live::default());
    let (closing_tx, closing) = watch::channel(false);
    let mut signal = pin!(signal);
    loop {
        let (stream, _peer) = tokio::select! {
            _ = &mut signal => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors (EMFILE) or a connection reset before accept:
                    // wait a little instead of spinning.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let limited = if live.normal.load(Ordering::Acquire) < limit {
            false
        } else if live.limited.load(Ordering::Acquire) < overflow {
            true
        } else {
            // Past both: close at once, keeping descriptors for what is being served.
            drop(stream);
            continue;
        };
        // Counted until the guard drops: when the connection ends, and also when its
        // task panics or is dropped unfinished (a runtime shutting down).
        let slot = Slot::take(live.clone(), limited);
        let _ = stream.set_nodelay(true);
        let local = stream.local_addr().ok();
        let router = router.clone();
        let mut closing = closing.clone();
        threads.spawn(async move {
            let _slot = slot;
            let service = hyper::service::service_fn(move |mut req: hyper::Request<_>| {
                let mut router = router.clone();
                if let Some(local) = local {
                    req.extensions_mut().insert(LocalAddr(local));
                }
                async move {
                    if limited && req.uri().path() != HEALTH_PATH {
                        return Ok::<_, Infallible>(overloaded());
                    }
                    // A handler that panics answers 500 `internal`; the connection and
                    // everything it holds are given back by their guards.
                    let call = tower_service::Service::call(&mut router, req.map(Body::new));
                    match AssertUnwindSafe(call).catch_unwind().await {
                        Ok(res) => res,
                        Err(panic) => {
                            tracing::error!(
                                panic = %crate::body::panic_message(&*panic),
                                "a request handler panicked; answered 500"
                            );
                            Ok(internal_error())
                        }
                    }
                }
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(if limited {
                    head_timeout.min(Duration::from_secs(2))
                } else {
                    head_timeout
                })
                .keep_alive(!limited);
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            let mut conn = pin!(conn);
            let closed = async move {
                let _ = closing.wait_for(|c| *c).await.map(|_| ());
            };
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = closed => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
    drop(listener);
    tracing::info!(grace_ms = grace.as_millis() as u64, "shutting down");
    // Idle connections close now, busy ones after their response; runs get the grace
    // period, then end with RUN_ERROR (code `shutdown`).
    closing_tx.send_replace(true);
    let stop_runs = {
        let handles = handles.clone();
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            for h in &handles {
                h.shutdown_now();
            }
        })
    };
    loop {
        let gone = live.gone.notified();
        if live.total() == 0 {
            break;
        }
        // A connection whose client never reads would hold the shutdown forever: give up
        // on connections a while after the runs were ended.
        if tokio::time::timeout(grace + Duration::from_secs(5), gone)
            .await
            .is_err()
        {
            tracing::warn!(
                open = live.total(),
                "connections still open after the grace period; closing anyway"
            );
            break;
        }
    }
    // Runs that outlive their clients (store mode) end and store their last event.
    for h in &handles {
        if !h.wait_runs(grace + Duration::from_secs(5)).await {
            // The grace is over: end what still runs, then wait for the stored ends.
            h.shutdown_now();
            h.wait_runs(Duration::from_secs(5)).await;
        }
    }
    stop_runs.abort();
    threads.stop().await;
    Ok(())
}

/// The threads connections are served on when
/// [`ServerConfig::connection_threads`](crate::ServerConfig) is set, else none (connections
/// are tasks of the caller's runtime).
struct Threads(Vec<ConnThread>);

/// One connection thread: a single-threaded runtime that runs until `stop` is sent or
/// dropped.
struct ConnThread {
    handle: tokio::runtime::Handle,
    /// Connections open on it.
    open: Arc<AtomicUsize>,
    stop: tokio::sync::oneshot::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

/// Counts a connection as open on its thread until dropped (also when it panics).
struct OpenOn(Arc<AtomicUsize>);

impl Drop for OpenOn {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How long a connection thread's runtime waits for its blocking tasks when it stops.
const THREAD_STOP_WAIT: Duration = Duration::from_secs(5);

impl Threads {
    /// Starts `n` connection threads (none for 0).
    fn start(n: usize) -> std::io::Result<Threads> {
        let mut threads = Vec::with_capacity(n);
        let failed = |i: usize, e: std::io::Error| {
            std::io::Error::new(
                e.kind(),
                format!("starting connection thread {i} of {n}: {e}"),
            )
        };
        for i in 0..n {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| failed(i, e))?;
            let handle = runtime.handle().clone();
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let thread = std::thread::Builder::new()
                .name(format!("agui-conn-{i}"))
                .spawn(move || {
                    // Ends when `stop` is sent or dropped (also when `serve` is dropped).
                    runtime.block_on(async {
                        let _ = stopped.await;
                    });
                    runtime.shutdown_timeout(THREAD_STOP_WAIT);
                })
                .map_err(|e| failed(i, e))?;
            threads.push(ConnThread {
                handle,
                open: Arc::default(),
                stop,
                thread,
            });
        }
        Ok(Threads(threads))
    }

    /// Runs a connection on the thread with the fewest open, or on the caller's runtime.
    fn spawn(&self, connection: impl Future<Output = ()> + Send + 'static) {
        let Some(thread) = self.0.iter().min_by_key(|t| t.open.load(Ordering::Relaxed)) else {
            tokio::spawn(connection);
            return;
        };
        thread.open.fetch_add(1, Ordering::Relaxed);
        let open = OpenOn(thread.open.clone());
        thread.handle.spawn(async move {
            connection.await;
            drop(open);
        });
    }

    /// Stops the threads (dropping what still runs on them) and waits until they have.
    async fn stop(self) {
        if self.0.is_empty() {
            return;
        }
        let mut joins = Vec::with_capacity(self.0.len());
        for thread in self.0 {
            let _ = thread.stop.send(());
            joins.push(thread.thread);
        }
        let _ = tokio::task::spawn_blocking(move || {
            for j in joins {
                let _ = j.join();
            }
        })
        .await;
    }
}

/// The answer of a request whose handler panicked.
fn internal_error() -> Response<Body> {
    ApiError::new(
        ErrorCode::Internal,
        "the server failed while handling the request",
    )
    .into_response()
}

/// The answer beyond the connection limit.
fn overloaded() -> Response<Body> {
    let mut res = ApiError::new(
        ErrorCode::TooManyConnections,
        "the server is at its connection limit; try again shortly",
    )
    .retry_after(1)
    .into_response();
    res.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_stays_under_the_descriptors() {
        let fds = fd_limit();
        let derived = connection_limit(None);
        if let Some(fds) = fds {
            assert!((derived as u64) < fds, "{derived} vs {fds}");
        }
        assert!(connection_limit(Some(5)) <= 5);
        assert_eq!(connection_limit(Some(0)), 1);
    }
}
