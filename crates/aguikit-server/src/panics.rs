//! The background tasks of a stored run, made panic-safe: whatever panics in the runtime
//! (not the agent, whose panics [`driver`](crate::body::driver) catches), the run ends with
//! a stored `RUN_ERROR` (code `internal`) instead of staying `running` with no end, and
//! every guard the task holds (run count, quota permit, body permit) is given back as it
//! unwinds.

use crate::RunErrorCode;
use crate::body::{RunBody, panic_message};
use crate::context::RunShared;
use aguikit_core::Event;
use aguikit_core::event::RunError;
use aguikit_store::EventStore;
use futures_util::{FutureExt, StreamExt};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

fn internal_error() -> RunError {
    RunError::new("the server failed while running the run (an internal error; see its log)")
        .with_code(RunErrorCode::Internal)
}

/// Drives a stored run's response body to its end (which drives the agent). When the body
/// panics, the run ends with `RUN_ERROR` `internal`, which the store writer stores.
pub(crate) async fn drain_or_fail(run: Arc<RunShared>, mut body: RunBody) {
    let drained = AssertUnwindSafe(async { while body.next().await.is_some() {} })
        .catch_unwind()
        .await;
    if let Err(panic) = drained {
        tracing::error!(
            thread_id = %run.thread_id,
            run_id = %run.run_id,
            panic = %panic_message(&*panic),
            "a run panicked in the server; ended with RUN_ERROR internal"
        );
        // Written to the sink (and from there stored) before the body is dropped, which
        // would otherwise close the sink without an end.
        run.sink.fail(internal_error());
    }
}

/// Runs a stored run's writer (`persisting`); when it panics, stores `RUN_ERROR`
/// `internal` for the run directly and stops the run.
pub(crate) async fn persist_or_fail(
    store: Arc<dyn EventStore>,
    run: Arc<RunShared>,
    key: String,
    persisting: impl Future<Output = ()>,
) {
    let Err(panic) = AssertUnwindSafe(persisting).catch_unwind().await else {
        return;
    };
    tracing::error!(
        thread_id = %run.thread_id,
        run_id = %run.run_id,
        panic = %panic_message(&*panic),
        "a run's store writer panicked; ended with RUN_ERROR internal"
    );
    run.sink.disconnect();
    let mut end = internal_error();
    end.timestamp = Some(crate::event_ext::now_ms());
    let end = Event::from(end);
    // The thread's name in the store (its key in its owner's namespace); only to the run
    // as stored, so a thread deleted meanwhile is not made again.
    if let Err(e) = store
        .append_to_run_json(&key, &run.run_id, std::slice::from_ref(&end), &[None])
        .await
    {
        tracing::error!(thread_id = %run.thread_id, run_id = %run.run_id, "cannot store the run's RUN_ERROR: {e}");
    }
}
