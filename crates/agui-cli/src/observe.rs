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

/// Sends `tracing` events at `filter` (`info`, `warn`, `info,agui_server=debug`, ...) to
/// standard error in `format`. A second call does nothing.
pub fn init_logging(format: LogFormat, filter: &str) -> Result<(), String> {
    use std::io::IsTerminal;
    use tracing_subscriber::filter::Targets;
    let targets: Targets = filter
        .parse()
        .map_err(|e| format!("--log-level {filter:?}: {e}"))?;
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::TRACE);
    let result = match format {
        LogFormat::Text => {
            use tracing_subscriber::layer::SubscriberExt;
            let subscriber = builder
                .with_ansi(std::io::stderr().is_terminal())
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

/// Installs the Prometheus recorder for the whole process, with the runtime's metrics
/// described and their histograms bucketed, and keeps it tidy (histogram upkeep every 5 s).
/// Must run inside the tokio runtime.
pub fn install_metrics() -> Result<PrometheusHandle, String> {
    let handle = PrometheusBuilder::new()
        .set_buckets(agui_server::metrics::SECONDS_BUCKETS)
        .map_err(|e| format!("metrics: {e}"))?
        .install_recorder()
        .map_err(|e| format!("metrics: {e}"))?;
    agui_server::metrics::describe();
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
