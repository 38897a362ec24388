//! Store threads in SQLite, then in PostgreSQL (aguikit-store behind aguikit-server): a
//! two-turn conversation is served with its runs stored, then read back from the store —
//! for SQLite after opening the file again, as a restarted server would.
//!
//! ```sh
//! cargo run -p aguikit-examples --bin store_threads
//! AGUI_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test cargo run -p aguikit-examples --bin store_threads
//! ```
//!
//! The SQLite file goes to the system's temporary directory and is removed at the end. The
//! PostgreSQL part runs when `AGUI_TEST_POSTGRES_URL` is set (tables in the schema
//! `aguikit_examples`, made when missing; the example's thread is deleted at the end), and
//! says that it is skipped otherwise.

use aguikit_client::{HttpAgent, Session};
use aguikit_core::Pipeline;
use aguikit_server::{AgentServer, Finish, StoreOptions, agent_fn};
use aguikit_store::{EventStore, PostgresStore, SqliteStore};
use futures_util::StreamExt;
use std::sync::Arc;

type Error = Box<dyn std::error::Error>;

#[tokio::main]
async fn main() -> Result<(), Error> {
    // SQLite: one file.
    let dir = std::env::temp_dir().join(format!("aguikit-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("threads.db");
    let thread = format!("trip-{}", aguikit_core::id::random_uuid());
    converse(Arc::new(SqliteStore::open(&path).await?), &thread).await?;
    println!("sqlite: the file opened again");
    show(&SqliteStore::open(&path).await?, &thread).await?;
    std::fs::remove_dir_all(&dir)?;

    // PostgreSQL: the same, shared by every server that connects to it.
    match std::env::var("AGUI_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => {
            let store = Arc::new(PostgresStore::connect(&url, "aguikit_examples").await?);
            converse(store.clone(), &thread).await?;
            println!("postgres: read back");
            show(store.as_ref(), &thread).await?;
            store.delete_thread(&thread).await?;
        }
        _ => println!("postgres: skipped (set AGUI_TEST_POSTGRES_URL=postgres://... to run it)"),
    }
    Ok(())
}

/// Serves an agent whose runs go to `store`, and talks to it twice on thread `thread`.
async fn converse(store: Arc<dyn EventStore>, thread: &str) -> Result<(), Error> {
    let agent = agent_fn(|input, ctx| async move {
        let said = input
            .messages
            .last()
            .and_then(|m| m.text())
            .unwrap_or("")
            .to_owned();
        ctx.say(format!("Noted: {said}")).await?;
        Ok(Finish::success())
    });
    let server = AgentServer::new(agent)
        .path("/agent")
        .store(StoreOptions::new(store));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/agent", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(async move {
        server
            .serve(listener, async move {
                let _ = stopped.await;
            })
            .await
    });

    let mut session = Session::with_thread_id(HttpAgent::new(&url)?, thread);
    for text in ["a trip to Paris", "then Rome"] {
        session.add_user_message(text);
        session.run()?.collect::<Vec<_>>().await;
    }
    // A graceful shutdown returns once every run has stored its end.
    let _ = stop.send(());
    serving.await??;
    Ok(())
}

/// Prints what `store` holds of thread `thread`: its runs, and its conversation folded
/// from the stored events.
async fn show(store: &dyn EventStore, thread: &str) -> Result<(), Error> {
    let info = store.thread(thread).await?;
    println!("  {} events in {} runs", info.last_seq, info.run_count);
    for run in store.runs(thread).await? {
        println!("  run {}: {:?}", run.run_id, run.status);
    }
    let mut pipeline = Pipeline::new();
    for stored in store.read(thread, 1).await? {
        pipeline.push(stored.event)?;
    }
    pipeline.finish()?;
    for message in pipeline.applier().messages() {
        let role = format!("{:?}", message.role()).to_lowercase();
        println!("  {role}: {}", message.text().unwrap_or(""));
    }
    Ok(())
}
