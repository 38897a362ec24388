//! One run on the wire: the driver (agent, lifecycle, shutdown) and the response body that
//! polls it.
//!
//! The agent future is polled by the response body itself, not spawned: it runs only as
//! fast as the socket accepts bytes, it shares the connection's task, and when the client
//! goes away hyper drops the body and with it the agent — cancellation is immediate. (A
//! stored run is driven by its own task instead and goes on without its client: see the
//! `store` module.)

use crate::RunErrorCode;
use crate::agent::AgentResult;
use crate::context::RunShared;
use crate::finish::Finish;
use crate::interrupts::InterruptStore;
use crate::sink::Taken;
use aguikit_core::event::{RunError, RunFinished};
use aguikit_core::{Interrupt, RunOutcome};
use bytes::Bytes;
use futures_util::Stream;
use futures_util::future::{BoxFuture, Either, FutureExt, select};
use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::time::Sleep;
use tracing::Instrument;

/// Runs the agent to its end and writes the terminal event.
pub(crate) fn driver(
    run: Arc<RunShared>,
    agent: BoxFuture<'static, AgentResult>,
    mut shutdown: watch::Receiver<bool>,
    store: Arc<InterruptStore>,
    span: tracing::Span,
    meter: crate::metrics::RunMeter,
) -> BoxFuture<'static, ()> {
    let started = Instant::now();
    Box::pin(
        async move {
            let agent = pin!(AssertUnwindSafe(agent).catch_unwind());
            let stop = pin!(async move {
                if shutdown.wait_for(|down| *down).await.is_err() {
                    std::future::pending::<()>().await;
                }
            });
            let outcome = match select(agent, stop).await {
                Either::Left((Ok(Ok(finish)), _)) => {
                    if let Some(open) = finish_run(&run, finish) {
                        store.set(&run.interrupt_key, open);
                    }
                    "finished"
                }
                Either::Left((Ok(Err(err)), _)) => {
                    let mut e = RunError::new(err.message());
                    e.code = err.code().map(str::to_owned);
                    run.sink.fail(e);
                    "error"
                }
                Either::Left((Err(panic), _)) => {
                    let what = panic_message(&*panic);
                    tracing::error!(panic = %what, "agent panicked");
                    run.sink.fail(
                        RunError::new(format!("the agent panicked: {what}"))
                            .with_code(RunErrorCode::Panic),
                    );
                    "panic"
                }
                Either::Right(_) => {
                    run.sink.fail(
                        RunError::new("the server is shutting down")
                            .with_code(RunErrorCode::Shutdown),
                    );
                    "shutdown"
                }
            };
            meter.end(outcome);
            tracing::info!(
                outcome,
                events = run.sink.events(),
                elapsed_ms = started.elapsed().as_millis() as u64,
                reason = run.sink.end_reason().as_deref().unwrap_or(""),
                "run ended"
            );
        }
        .instrument(span),
    )
}

/// Writes `RUN_FINISHED`; returns the interrupts it leaves open when it was written.
fn finish_run(run: &RunShared, finish: Finish) -> Option<Vec<Interrupt>> {
    let (mut usage, mut interrupts) = run.sink.with(|u, i| (u.clone(), i.clone()));
    usage.extend(finish.usage);
    let mut outcome = finish.outcome;
    if let Some(RunOutcome::Interrupt { interrupts: given }) = &mut outcome {
        for i in given.drain(..) {
            if !interrupts.iter().any(|x| x.id == i.id) {
                interrupts.push(i);
            }
        }
        if interrupts.is_empty() {
            run.sink.fail(
                RunError::new("an interrupt outcome needs at least one interrupt")
                    .with_code(RunErrorCode::InvalidOutcome),
            );
            return None;
        }
    }
    if !interrupts.is_empty() {
        outcome = Some(RunOutcome::Interrupt {
            interrupts: interrupts.clone(),
        });
    }
    let mut event = RunFinished::new(run.thread_id.clone(), run.run_id.clone());
    event.result = finish.result.filter(|v| !v.is_null());
    event.outcome = outcome;
    if !usage.is_empty() {
        event.usage = Some(aguikit_core::usage::aggregate_token_usage(&usage));
    }
    event.metadata = finish.metadata.map(Box::new);
    run.sink
        .push_runtime(event.into(), true)
        .ok()
        .map(|()| interrupts)
}

pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

struct KeepAlive {
    every: Duration,
    sleep: Pin<Box<Sleep>>,
    frame: Bytes,
    last: Instant,
}

/// The streaming response body of one run.
pub(crate) struct RunBody {
    run: Arc<RunShared>,
    driver: Option<BoxFuture<'static, ()>>,
    keep_alive: Option<KeepAlive>,
    span: tracing::Span,
    /// Set when the body goes to a client (not when a store writer drains it).
    meter: Option<crate::metrics::StreamMeter>,
}

impl RunBody {
    pub(crate) fn new(
        run: Arc<RunShared>,
        driver: BoxFuture<'static, ()>,
        keep_alive: Option<Duration>,
        span: tracing::Span,
    ) -> RunBody {
        let keep_alive = keep_alive.and_then(|every| {
            let frame = run.sink.keep_alive_frame()?;
            Some(KeepAlive {
                every,
                sleep: Box::pin(tokio::time::sleep(every)),
                frame,
                last: Instant::now(),
            })
        });
        RunBody {
            run,
            driver: Some(driver),
            keep_alive,
            span,
            meter: None,
        }
    }

    /// Counts this body as a stream to a client in `encoding` (open streams, events and
    /// bytes sent).
    pub(crate) fn metered(mut self, encoding: crate::negotiate::WireFormat) -> RunBody {
        self.meter = Some(crate::metrics::StreamMeter::open(encoding));
        self
    }
}

impl Stream for RunBody {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(driver) = this.driver.as_mut() {
            // The agent's own panics are caught by the driver; one in the runtime's code
            // ends the run here with RUN_ERROR `internal` instead of unwinding through the
            // connection (which would end the response without a terminal event).
            match std::panic::catch_unwind(AssertUnwindSafe(|| driver.as_mut().poll(cx))) {
                Ok(Poll::Pending) => {}
                Ok(Poll::Ready(())) => this.driver = None,
                Err(panic) => {
                    this.driver = None;
                    let _e = this.span.enter();
                    tracing::error!(panic = %panic_message(&*panic), "a run panicked in the server; ended with RUN_ERROR internal");
                    this.run.sink.fail(
                        RunError::new(
                            "the server failed while running the run (an internal error; see its log)",
                        )
                        .with_code(RunErrorCode::Internal),
                    );
                }
            }
        }
        match this.run.sink.take(cx) {
            Taken::Bytes(bytes, events) => {
                if let Some(k) = &mut this.keep_alive {
                    k.last = Instant::now();
                }
                if let Some(m) = &this.meter {
                    m.sent(events, bytes.len());
                }
                return Poll::Ready(Some(Ok(bytes)));
            }
            Taken::End => {
                // Ended by a violation or a limit while the agent still ran: stop it.
                this.driver = None;
                return Poll::Ready(None);
            }
            Taken::Pending => {}
        }
        if let Some(k) = &mut this.keep_alive {
            while k.sleep.as_mut().poll(cx).is_ready() {
                let now = Instant::now();
                let due = k.last + k.every;
                if now >= due {
                    k.last = now;
                    k.sleep.as_mut().reset((now + k.every).into());
                    if let Some(m) = &this.meter {
                        m.sent(0, k.frame.len());
                    }
                    return Poll::Ready(Some(Ok(k.frame.clone())));
                }
                k.sleep.as_mut().reset(due.into());
            }
        }
        Poll::Pending
    }
}

impl Drop for RunBody {
    fn drop(&mut self) {
        if self.run.sink.disconnect() {
            let _e = self.span.enter();
            tracing::info!("client went away; run cancelled");
        }
    }
}
