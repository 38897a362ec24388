//! Put a Python agent behind the gateway (aguikit-gateway): the agent's runs get stored
//! threads, `Last-Event-ID` resume, protobuf for clients that ask, and verification of every
//! event, with no change to the agent.
//!
//! ```sh
//! cargo run -p aguikit-examples --bin python_agent -- http://127.0.0.1:8123/agent
//! ```
//!
//! It needs a running AG-UI agent written in Python (or anything else), whose URL it takes
//! as its argument or from `AGUI_PYTHON_AGENT_URL`; without one it says so and exits. The
//! repository's interop tests use the scripted server built on the official Python SDK
//! (`interop/py-server/server.py` in the shared test data, `python server.py --port 8123`
//! in its virtual environment): its default scenario echoes the last user message.
//!
//! The gateway listens on a free loopback port; the example runs one conversation turn
//! through it with `aguikit-client`, prints it and what the gateway stored, and shuts down.

use aguikit_client::{HttpAgent, Session, Update};
use aguikit_gateway::Upstream;
use aguikit_server::aguikit_store::{EventStore, MemoryStore};
use aguikit_server::{AgentServer, StoreOptions};
use futures_util::StreamExt;
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let upstream_url = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("AGUI_PYTHON_AGENT_URL").ok())
        .filter(|url| !url.is_empty());
    let Some(upstream_url) = upstream_url else {
        println!(
            "no Python agent to put behind the gateway: start one and pass its URL \
             (python_agent http://127.0.0.1:8123/agent, or AGUI_PYTHON_AGENT_URL); nothing run"
        );
        return Ok(());
    };

    // The gateway: the Python agent as an aguikit-server agent, its threads stored.
    let store = Arc::new(MemoryStore::new());
    let gateway = AgentServer::new(Upstream::builder("python", &upstream_url).build()?)
        .path("/agent")
        .store(StoreOptions::new(store.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/agent", listener.local_addr()?);
    println!("gateway at {url} in front of {upstream_url}");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(async move {
        gateway
            .serve(listener, async move {
                let _ = stopped.await;
            })
            .await
    });

    // A client of the gateway.
    let mut session = Session::new(HttpAgent::new(&url)?);
    session.add_user_message("hello from Rust");
    let mut run = session.run()?;
    while let Some(update) = run.next().await {
        match update {
            Update::TextDelta { delta, .. } => print!("{delta}"),
            Update::Ended { status } => println!("\nrun ended: {status}"),
            _ => {}
        }
    }
    drop(run);

    let _ = stop.send(());
    serving.await??;
    let thread = store.thread(session.thread_id()).await?;
    println!(
        "the gateway stored {} events of thread {}",
        thread.last_seq, thread.thread_id
    );
    Ok(())
}
