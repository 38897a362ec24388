//! Run leases: a running run's server renews its lease while it appends the run's events;
//! a reader that finds a lease expired closes the run as abandoned.

use crate::RunErrorCode;
use crate::context::RunShared;
use crate::server::RunGuard;
use aguikit_core::Event;
use aguikit_core::event::RunError;
use aguikit_store::{EventStore, RunStatus};
use std::sync::Arc;
use std::time::Duration;

use super::StoreOptions;
use super::stream::{Live, is_terminal, sse_json};

/// Now, in Unix milliseconds, as leases count it.
pub(super) fn lease_now() -> u64 {
    u64::try_from(crate::event_ext::now_ms()).unwrap_or(0)
}

/// Closes the thread's running runs whose lease expired (their server died); errors are
/// left to the caller's next store access to report.
pub(super) async fn sweep_abandoned(store: &dyn EventStore, thread: &str) {
    let Ok(runs) = store.runs(thread).await else {
        return;
    };
    let now = lease_now();
    for r in runs.iter().filter(|r| r.status == RunStatus::Running) {
        if let Ok(true) = store.abandon_if_expired(thread, &r.run_id, now).await {
            tracing::warn!(thread_id = %thread, run_id = %r.run_id, "run abandoned by its server (lease expired); closed with RUN_ERROR");
        }
    }
}

/// How often a follower that is caught up checks a running run's lease.
pub(super) const LEASE_CHECK: Duration = Duration::from_secs(1);

/// The most events one append of a run takes.
const MAX_BATCH: usize = 1024;

/// Deepest nesting of an event the store accepts: what is stored must decode again under
/// serde_json's 128-level limit, with room to spare.
const MAX_STORED_DEPTH: usize = 120;

/// Appends the run's events to thread `key` (the thread's name in the store) as they come,
/// in batches of what is waiting, hands each to the response once stored (`live`) and
/// renews the run's lease (every third of the options' lease) until it ends. An event
/// nested too deeply to be read back, or one that passes the run's size cap
/// ([`StoreOptions::max_run_bytes`]), is not stored: the run ends there with `RUN_ERROR`
/// (code `event_too_deep` or `run_too_large`).
pub(super) async fn persist(
    options: StoreOptions,
    run: Arc<RunShared>,
    key: String,
    encoding: crate::negotiate::WireFormat,
    mut live: Option<Live>,
    _writer: RunGuard,
) {
    let (store, lease, max_run_bytes) = (options.store, options.lease, options.max_run_bytes);
    let renew = || async {
        let until = lease_now() + lease.as_millis() as u64;
        if let Err(e) = store.renew_lease(&key, &run.run_id, until).await {
            tracing::warn!(thread_id = %run.thread_id, run_id = %run.run_id, "cannot renew the run's lease: {e}");
        }
    };
    // The first lease was recorded with the run's RUN_STARTED (`claim`); renewals follow
    // every third of the lease, the first a period from now (awaiting an interval's
    // immediate first tick would wait for the timer driver's next turn, up to a
    // millisecond, before the run's first append).
    let every = lease / 3;
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let sse = encoding == crate::negotiate::WireFormat::Sse;
    // The bytes of the run's events stored so far (its RUN_STARTED was stored with the
    // claim: not counted, it holds the client's own input).
    let mut run_bytes: u64 = 0;
    let mut batch = Vec::with_capacity(crate::sink::TAP_ROOM);
    let mut frames = Vec::with_capacity(crate::sink::TAP_ROOM);
    loop {
        // Everything sent since the last batch, at once (emptied vectors go back to the
        // sink in exchange).
        batch.clear();
        frames.clear();
        let more = tokio::select! {
            more = run.sink.tapped(&mut batch, &mut frames, MAX_BATCH) => more,
            _ = ticks.tick() => {
                renew().await;
                continue;
            }
        };
        if !more {
            break;
        }
        // What the sink counts as waiting to be stored, released once this batch is.
        let taken: usize = frames.iter().flatten().map(bytes::Bytes::len).sum();
        if let Some(i) = batch
            .iter()
            .zip(&frames)
            // The event's JSON is in its SSE frame; a protobuf frame has none.
            .position(|(e, f)| {
                !matches!(e, Event::RunError(_)) && too_deep(e, f.as_ref().filter(|_| sse))
            })
        {
            let kind = batch[i].event_type();
            tracing::warn!(thread_id = %run.thread_id, run_id = %run.run_id, "a {kind:?} event nests deeper than {MAX_STORED_DEPTH} levels; run ended");
            batch.truncate(i);
            frames.truncate(i);
            batch.push(
                RunError::new(format!(
                    "the agent emitted a {kind:?} event nested deeper than {MAX_STORED_DEPTH} levels, which could not be read back"
                ))
                .with_code(RunErrorCode::EventTooDeep)
                .into(),
            );
            frames.push(None);
            run.sink.disconnect();
        }
        // The run's size: past the cap, the event that passes it is not stored and the run
        // ends there.
        if let Some(i) = past_cap(&batch, &frames, sse, &mut run_bytes, max_run_bytes) {
            tracing::warn!(thread_id = %run.thread_id, run_id = %run.run_id, "the run's stored events pass {max_run_bytes} bytes; run ended");
            batch.truncate(i);
            frames.truncate(i);
            batch.push(
                RunError::new(format!(
                    "the run's events pass the limit of {max_run_bytes} bytes a stored run may have"
                ))
                .with_code(RunErrorCode::RunTooLarge)
                .into(),
            );
            frames.push(None);
            run.sink.disconnect();
        }
        // The events' JSON, written for the response already, is stored as it is.
        let json: Vec<Option<&[u8]>> = frames
            .iter()
            .map(|f| f.as_ref().filter(|_| sse).and_then(|f| sse_json(f)))
            .collect();
        let t0 = std::time::Instant::now();
        // Only to the run as stored: a thread deleted meanwhile is not made again.
        let appended = store
            .append_to_run_json(&key, &run.run_id, &batch, &json)
            .await;
        crate::metrics::store_append(t0.elapsed());
        match appended {
            Ok(range) => {
                run.sink.stored(taken);
                live = live.and_then(|l| l.feed(range.start, &batch, &frames));
                if batch.iter().any(is_terminal) {
                    return;
                }
            }
            Err(e) => {
                tracing::error!(thread_id = %run.thread_id, run_id = %run.run_id, "cannot store events: {e}");
                run.sink.disconnect();
                if let Some(l) = live {
                    l.fail(&e);
                }
                return;
            }
        }
    }
}

/// Adds the stored size of `batch`'s events (their JSON: from the SSE frame when `sse`,
/// else written anew) to `total`, up to the first that would pass `cap`: its index. A run's
/// terminal `RUN_ERROR` always fits.
fn past_cap(
    batch: &[Event],
    frames: &[Option<bytes::Bytes>],
    sse: bool,
    total: &mut u64,
    cap: u64,
) -> Option<usize> {
    for (i, e) in batch.iter().enumerate() {
        let len = match frames.get(i).and_then(|f| f.as_ref().filter(|_| sse)) {
            Some(f) => sse_json(f).map_or(f.len(), <[u8]>::len),
            None => e.to_json_vec().len(),
        } as u64;
        if *total + len > cap && !matches!(e, Event::RunError(_)) {
            return Some(i);
        }
        *total += len;
    }
    None
}

/// Whether `event` nests deeper than the store reads back. Its JSON is taken from its SSE
/// frame when given, else written anew.
fn too_deep(event: &Event, frame: Option<&bytes::Bytes>) -> bool {
    let json = frame.and_then(|f| sse_json(f));
    let check = |json: &[u8]| crate::ingress::check_depth(json, MAX_STORED_DEPTH).is_err();
    match json {
        Some(json) => check(json),
        None => check(&event.to_json_vec()),
    }
}
