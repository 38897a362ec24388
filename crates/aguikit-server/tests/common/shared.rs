//! Support shared by the tests and the benches (which include this file with `#[path]`):
//! the held-open agent of the many-streams test and the `streams_10k` bench, and a tokio
//! runtime of a given size.

use aguikit_server::{AgentServer, Finish, agent_fn};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// One live agent: counted up on creation, down when its future is dropped (cancelled or
/// done).
struct Live(Arc<AtomicUsize>);

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A server whose every run opens a text message, sends one delta, then holds its stream
/// open until it is cancelled; `live` counts its live agents.
pub fn held_open_server(live: &Arc<AtomicUsize>) -> AgentServer {
    let counter = live.clone();
    AgentServer::new(agent_fn(move |_input, ctx| {
        counter.fetch_add(1, Ordering::SeqCst);
        let guard = Live(counter.clone());
        async move {
            let _guard = guard;
            let msg = ctx.text_message().start().await?;
            msg.delta("open").await?;
            // Hold the stream open until the client goes away (which drops this future).
            tokio::time::sleep(Duration::from_secs(3600)).await;
            drop(msg);
            Ok(Finish::success())
        }
    }))
}

/// A multi-thread tokio runtime of `workers` threads.
pub fn runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap()
}
