//! Limits and switches of the HTTP runtime.

use crate::setters::setters;
use std::time::Duration;

/// Limits and switches of an [`AgentServer`](crate::AgentServer). Every limit has a default
/// and a setter; the getters are the public fields.
///
/// ```
/// use aguikit_server::ServerConfig;
/// use std::time::Duration;
/// let config = ServerConfig::default()
///     .max_body_bytes(1 << 20)
///     .keep_alive(Some(Duration::from_secs(5)));
/// assert_eq!(config.max_body_bytes, 1 << 20);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Largest accepted request body. Default 10 MiB; larger bodies get `413` with a JSON
    /// error (checked against `Content-Length` first, then while reading).
    pub max_body_bytes: usize,
    /// Interval of SSE keep-alive comments (`: keep-alive`) on an idle stream, or `None` for
    /// none. Default 15 s. Protobuf has no comment frame, so protobuf streams get none.
    pub keep_alive: Option<Duration>,
    /// Encoded bytes that may wait between the agent and the socket. When this much is
    /// buffered, emitters wait until the client has read some: a slow client slows the agent
    /// and memory stays bounded. With a store, events sent but not stored yet count too: a
    /// slow store slows the agent the same way. Default 16 KiB. (One event is always
    /// accepted, so a single event larger than this still goes through.)
    pub buffer_bytes: usize,
    /// Largest single encoded event. Default 10 MiB minus 16 bytes, under the reference
    /// client's 10 MiB frame limit for both SSE and protobuf. A larger event ends the run
    /// with `RUN_ERROR` (code `event_too_large`).
    pub max_event_bytes: usize,
    /// Most events one run may emit, lifecycle events included, or `None` for no limit
    /// (the default). Exceeding it ends the run with `RUN_ERROR` (code `too_many_events`).
    pub max_events_per_run: Option<u64>,
    /// Verify every outgoing event with the protocol engine (chunk expansion and the
    /// verifier): a violation becomes `RUN_ERROR` (code `protocol_violation`) and a
    /// `tracing` warning. Default on.
    pub verify: bool,
    /// Stamp `timestamp` (ms since the Unix epoch) on every event that has none. The
    /// lifecycle events are always stamped. Default off.
    pub event_timestamps: bool,
    /// Check `RunAgentInput.resume` against the thread's open interrupts and answer `422`
    /// when it does not answer all of them. Default on.
    pub check_resume: bool,
    /// How many threads' open interrupts are remembered (oldest forgotten first).
    /// Default 10,000.
    pub max_interrupt_threads: usize,
    /// On graceful shutdown (Ctrl-C, `SIGTERM`), how long running streams may continue
    /// before they are ended with `RUN_ERROR` (code `shutdown`). Default 5 s, inside the
    /// 10 s most container runtimes wait between `SIGTERM` and `SIGKILL`.
    pub shutdown_grace: Duration,
    /// Deepest JSON nesting accepted in a request body (`400 too_deep`, naming the path).
    /// Default 64: well inside the 128 levels the store and clients decode, even with the
    /// input embedded in a stored `RUN_STARTED`.
    pub max_depth: usize,
    /// Longest id accepted in a run input (`threadId`, `runId`, `parentRunId`, message and
    /// tool-call ids, resumed interrupt ids): `400 id_too_long`, naming the field. Default
    /// 256 bytes.
    pub max_id_bytes: usize,
    /// Request-body bytes that may be in memory at once across all requests being read and
    /// parsed. A request that cannot get room within [`body_wait`](Self::body_wait) gets
    /// `503 busy`. Default 256 MiB.
    pub max_body_bytes_in_flight: usize,
    /// How long a request waits for room under
    /// [`max_body_bytes_in_flight`](Self::max_body_bytes_in_flight) and
    /// [`max_body_bytes_in_flight_per_principal`](Self::max_body_bytes_in_flight_per_principal).
    /// Default 5 s.
    pub body_wait: Duration,
    /// Request-body bytes that one principal (one token; every caller when there is no
    /// authentication) may have in memory at once, so that one caller's bodies cannot take
    /// the whole [`max_body_bytes_in_flight`](Self::max_body_bytes_in_flight). At least
    /// [`max_body_bytes`](Self::max_body_bytes) is allowed. Default 64 MiB.
    pub max_body_bytes_in_flight_per_principal: usize,
    /// How long a request body may take to arrive, from the end of its head: past it,
    /// `408 body_timeout` and the connection is closed. Default 60 s.
    pub body_timeout: Duration,
    /// The slowest a request body may arrive, in bytes per second on average since the end
    /// of its head, checked from [`BODY_RATE_GRACE`](crate::BODY_RATE_GRACE) on: slower is
    /// `408 body_too_slow` and the connection is closed (a client declaring a large body
    /// and sending a byte now and then would hold its room in the budgets for nothing).
    /// 0: no minimum. Default 16 KiB/s.
    pub min_body_rate: usize,
    /// How long a client may take to send a request's head, counted from the connection's
    /// opening or from the end of the previous response: so it is also how long a
    /// kept-alive connection may sit idle. Default 10 s. (Applies under
    /// [`serve`](crate::serve).)
    pub header_read_timeout: Duration,
    /// Most client connections at once (`None`: derived from the process's file-descriptor
    /// limit, which is raised to its hard limit, keeping descriptors free for the store).
    /// Past it, new connections answer `GET /health` and `503` to everything else, so health
    /// checks keep working. Default `None`. (Applies under [`serve`](crate::serve).)
    pub max_connections: Option<usize>,
    /// Threads that serve the accepted connections, each running a single-threaded tokio
    /// runtime, or 0 (the default) to serve them as tasks of the runtime
    /// [`serve`](crate::serve) is called on. On such a thread a connection and every task
    /// it spawns (its runs, their store writes) stay together, so handing an event from the
    /// agent to the store and to the socket wakes no other thread. Each new connection goes
    /// to the thread with the fewest open. The threads end when `serve` returns.
    ///
    /// No task moves between these threads: an agent that computes for long without
    /// awaiting delays the other connections of its thread (move such work to
    /// `tokio::task::spawn_blocking`). `agui serve` uses one thread per core.
    /// (Applies under [`serve`](crate::serve).)
    pub connection_threads: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_body_bytes: 10 * 1024 * 1024,
            keep_alive: Some(Duration::from_secs(15)),
            buffer_bytes: 16 * 1024,
            max_event_bytes: 10 * 1024 * 1024 - 16,
            max_events_per_run: None,
            verify: true,
            event_timestamps: false,
            check_resume: true,
            max_interrupt_threads: 10_000,
            shutdown_grace: Duration::from_secs(5),
            max_depth: 64,
            max_id_bytes: 256,
            max_body_bytes_in_flight: 256 * 1024 * 1024,
            body_wait: Duration::from_secs(5),
            max_body_bytes_in_flight_per_principal: 64 * 1024 * 1024,
            body_timeout: Duration::from_secs(60),
            min_body_rate: 16 * 1024,
            header_read_timeout: Duration::from_secs(10),
            max_connections: None,
            connection_threads: 0,
        }
    }
}

impl ServerConfig {
    setters! {
        /// Sets [`max_body_bytes`](Self::max_body_bytes).
        max_body_bytes(bytes: usize) => max_body_bytes = bytes;
        /// Sets [`keep_alive`](Self::keep_alive).
        keep_alive(interval: Option<Duration>) => keep_alive = interval.filter(|d| !d.is_zero());
        /// Sets [`buffer_bytes`](Self::buffer_bytes) (at least 1).
        buffer_bytes(bytes: usize) => buffer_bytes = bytes.max(1);
        /// Sets [`max_event_bytes`](Self::max_event_bytes).
        max_event_bytes(bytes: usize) => max_event_bytes = bytes;
        /// Sets [`max_events_per_run`](Self::max_events_per_run).
        max_events_per_run(max: Option<u64>) => max_events_per_run = max;
        /// Sets [`verify`](Self::verify).
        verify(on: bool) => verify = on;
        /// Sets [`event_timestamps`](Self::event_timestamps).
        event_timestamps(on: bool) => event_timestamps = on;
        /// Sets [`check_resume`](Self::check_resume).
        check_resume(on: bool) => check_resume = on;
        /// Sets [`max_interrupt_threads`](Self::max_interrupt_threads).
        max_interrupt_threads(threads: usize) => max_interrupt_threads = threads;
        /// Sets [`shutdown_grace`](Self::shutdown_grace).
        shutdown_grace(grace: Duration) => shutdown_grace = grace;
        /// Sets [`max_depth`](Self::max_depth) (at least 2).
        max_depth(depth: usize) => max_depth = depth.max(2);
        /// Sets [`max_id_bytes`](Self::max_id_bytes) (at least 1).
        max_id_bytes(bytes: usize) => max_id_bytes = bytes.max(1);
        /// Sets [`max_body_bytes_in_flight`](Self::max_body_bytes_in_flight) (at least
        /// `max_body_bytes`, so one largest body always fits).
        max_body_bytes_in_flight(bytes: usize) => max_body_bytes_in_flight = bytes;
        /// Sets [`body_wait`](Self::body_wait).
        body_wait(wait: Duration) => body_wait = wait;
        /// Sets [`max_body_bytes_in_flight_per_principal`](Self::max_body_bytes_in_flight_per_principal).
        max_body_bytes_in_flight_per_principal(bytes: usize) =>
            max_body_bytes_in_flight_per_principal = bytes;
        /// Sets [`body_timeout`](Self::body_timeout) (at least 100 ms).
        body_timeout(timeout: Duration) => body_timeout = timeout.max(Duration::from_millis(100));
        /// Sets [`min_body_rate`](Self::min_body_rate) (bytes per second; 0 for none).
        min_body_rate(bytes_per_sec: usize) => min_body_rate = bytes_per_sec;
        /// Sets [`header_read_timeout`](Self::header_read_timeout) (at least 100 ms).
        header_read_timeout(timeout: Duration) =>
            header_read_timeout = timeout.max(Duration::from_millis(100));
        /// Sets [`max_connections`](Self::max_connections).
        max_connections(max: Option<usize>) => max_connections = max;
        /// Sets [`connection_threads`](Self::connection_threads).
        connection_threads(threads: usize) => connection_threads = threads;
    }
}
