//! What `agui serve` tells its operator: logs on standard error (`--log-format text|json`,
//! `--log-level`) and the Prometheus text format at `GET /metrics`.

use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use std::time::Duration;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One human-readable line per event, with the run's span (thread and run ids).
    Text,
    /// One JSON object per line: `timestamp`, `level`, `fields`, `target`, and `span` /
    /// `spans` with the run's `thread_id` and `run_id`.
    Json,
}

/// Sends `tracing` events at `filter` (`info`, `warn`, `info,aguikit_server=debug`, ...) to
/// standard error in `format`. A second call does nothing.
pub fn init_logging(format: LogFormat, filter: &str) -> Result<(), String> {
    use std::io::IsTerminal;
    use tracing_subscriber::filter::Targets;
    let targets: Targets = filter
        .parse()
        .map_err(|e| format!("--log-level {filter:?}: {e}"))?;
    let builder = tracing_subscriber::fmt()
        .with_writer(LogWriter::start())
        .with_max_level(tracing::Level::TRACE);
    let result = match format {
        LogFormat::Text if std::io::stderr().is_terminal() => {
            use tracing_subscriber::layer::SubscriberExt;
            // The stock coloured line, with fields written by PlainFields, which escapes
            // the control characters of client-chosen values (a forged line, an escape
            // sequence for the terminal).
            let subscriber = builder
                .with_ansi(true)
                .fmt_fields(crate::logline::PlainFields)
                .finish()
                .with(targets);
            tracing::subscriber::set_global_default(subscriber)
        }
        // The same lines, without colours, written by a formatter that costs a fraction.
        LogFormat::Text => {
            use tracing_subscriber::layer::SubscriberExt;
            let subscriber = builder
                .with_ansi(false)
                .fmt_fields(crate::logline::PlainFields)
                .event_format(crate::logline::PlainLine)
                .finish()
                .with(targets);
            tracing::subscriber::set_global_default(subscriber)
        }
        LogFormat::Json => {
            use tracing_subscriber::layer::SubscriberExt;
            let subscriber = builder
                .json()
                .with_current_span(true)
                .with_span_list(true)
                .finish()
                .with(targets);
            tracing::subscriber::set_global_default(subscriber)
        }
    };
    // Already set (by an embedding program): keep it.
    let _ = result;
    Ok(())
}

/// Where log lines go: a thread of their own that writes them to standard error in order,
/// all the lines waiting in one write. A busy server then makes one `write` per batch, not
/// one per line on the thread serving a run (a run's log line cost it a system call, about
/// 3% of its time). When `LINES_WAITING` lines wait, the thread logging the next one waits
/// for the writer: lines are never dropped. [`flush_logs`] waits until the lines logged
/// before it are written.
#[derive(Clone)]
struct LogWriter {
    tx: std::sync::mpsc::SyncSender<LogLine>,
}

enum LogLine {
    Line(Vec<u8>),
    /// Answered once every line before it is written.
    Flush(std::sync::mpsc::SyncSender<()>),
}

/// Log lines that may wait for the writer thread.
const LINES_WAITING: usize = 4096;

/// A write to standard error holds at most about this many bytes of lines.
const BATCH_BYTES: usize = 64 * 1024;

static LOGS: std::sync::OnceLock<LogWriter> = std::sync::OnceLock::new();

impl LogWriter {
    /// The process's writer, its thread started by the first call.
    fn start() -> LogWriter {
        LOGS.get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::sync_channel(LINES_WAITING);
            let spawned = std::thread::Builder::new()
                .name("agui-log".into())
                .spawn(move || write_logs(rx));
            if let Err(e) = spawned {
                eprintln!("agui: cannot start the log writer thread: {e}");
            }
            LogWriter { tx }
        })
        .clone()
    }
}

/// The writer thread: each line, with every line waiting behind it, in one write.
fn write_logs(rx: std::sync::mpsc::Receiver<LogLine>) {
    use std::io::Write;
    let mut batch = Vec::with_capacity(BATCH_BYTES);
    let mut flushed = Vec::new();
    while let Ok(first) = rx.recv() {
        let mut next = Some(first);
        while let Some(line) = next {
            match line {
                LogLine::Line(l) => batch.extend_from_slice(&l),
                LogLine::Flush(done) => flushed.push(done),
            }
            next = if batch.len() < BATCH_BYTES {
                rx.try_recv().ok()
            } else {
                None
            };
        }
        // Nothing to do when standard error is closed: the lines have nowhere to go.
        let _ = std::io::stderr().lock().write_all(&batch);
        batch.clear();
        for done in flushed.drain(..) {
            let _ = done.send(());
        }
        // Lines logged meanwhile wait without waking this thread: a busy server's lines
        // leave in a few writes a second rather than one (and a thread wake-up) each.
        std::thread::sleep(GATHER);
    }
}

/// How long the writer thread lets lines gather after a write.
const GATHER: Duration = Duration::from_millis(5);

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // The formatter hands each event's whole line in one write.
        if self.tx.send(LogLine::Line(buf.to_vec())).is_err() {
            // The writer thread is gone (it could not start): write here.
            return std::io::stderr().write(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LogWriter;

    fn make_writer(&'a self) -> LogWriter {
        self.clone()
    }
}

/// Waits (up to two seconds) until the log lines logged so far are written to standard
/// error: call it before the process exits.
pub fn flush_logs() {
    let Some(logs) = LOGS.get() else { return };
    let (done, wait) = std::sync::mpsc::sync_channel(1);
    if logs.tx.send(LogLine::Flush(done)).is_ok() {
        let _ = wait.recv_timeout(Duration::from_secs(2));
    }
}

/// Installs the Prometheus recorder for the whole process, with the runtime's metrics
/// described and their histograms bucketed, and keeps it tidy (histogram upkeep every 5 s).
/// Must run inside the tokio runtime.
pub fn install_metrics() -> Result<PrometheusHandle, String> {
    let handle = PrometheusBuilder::new()
        .set_buckets(aguikit_server::metrics::SECONDS_BUCKETS)
        .map_err(|e| format!("metrics: {e}"))?
        .install_recorder()
        .map_err(|e| format!("metrics: {e}"))?;
    aguikit_server::metrics::describe();
    let upkeep = handle.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(5));
        loop {
            every.tick().await;
            upkeep.run_upkeep();
        }
    });
    Ok(handle)
}

/// `GET /metrics`: the Prometheus text exposition format.
pub fn render(handle: &PrometheusHandle) -> axum::response::Response {
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        handle.render(),
    )
        .into_response()
}
