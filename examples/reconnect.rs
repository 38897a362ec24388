//! Consume an agent with reconnect (aguikit-client): the connection breaks in the middle of
//! a run, the client reconnects with `Last-Event-ID`, and the conversation ends exactly as
//! if nothing had happened — no event lost, none twice.
//!
//! ```sh
//! cargo run -p aguikit-examples --bin reconnect
//! ```
//!
//! Everything runs in this process on loopback ports: an `aguikit-server` agent whose runs
//! are stored (so its SSE frames carry ids a client can resume from) and, between the
//! client and it, a TCP proxy that cuts the first connection after 1200 bytes.

use aguikit_client::{HttpAgent, ReconnectPolicy, Session, Update};
use aguikit_server::aguikit_store::MemoryStore;
use aguikit_server::{AgentServer, Finish, StoreOptions, agent_fn};
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = start_counting_agent().await?;
    let proxy = start_cutting_proxy(server, 1200).await?;

    // The client: resume up to 3 times, starting 50 ms after a break.
    let agent = HttpAgent::builder(&format!("http://{proxy}/agent"))
        .reconnect(ReconnectPolicy {
            max_attempts: 3,
            delay: Duration::from_millis(50),
            max_delay: Duration::from_millis(500),
        })
        .build()?;
    let mut session = Session::new(agent);
    session.add_user_message("count to 20");
    let mut run = session.run()?;
    let mut text = String::new();
    while let Some(update) = run.next().await {
        match update {
            Update::TextDelta { delta, .. } => text.push_str(&delta),
            Update::Ended { status } => println!("run ended: {status}"),
            _ => {}
        }
    }
    println!("reconnections: {}", run.response_info().reconnects);
    drop(run);
    println!("text: {}", text.trim_end());
    let reply = session
        .messages()
        .last()
        .and_then(|m| m.text())
        .unwrap_or_default();
    println!("the session's last message: {}", reply.trim_end());
    Ok(())
}

/// An agent that counts to 20, one delta every 5 ms, its runs stored in memory; returns
/// its address.
async fn start_counting_agent() -> std::io::Result<String> {
    let agent = agent_fn(|_input, ctx| async move {
        let message = ctx.text_message().start().await?;
        for i in 1..=20 {
            message.delta(format!("{i} ")).await?;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        message.end().await?;
        Ok(Finish::success())
    });
    let server = AgentServer::new(agent)
        .path("/agent")
        .store(StoreOptions::new(Arc::new(MemoryStore::new())));
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?.to_string();
    tokio::spawn(async move { server.serve(listener, std::future::pending()).await });
    Ok(address)
}

/// A TCP proxy to `upstream` that closes its first connection after `cut` bytes of the
/// response (a flaky network); later connections pass untouched. Returns its address.
async fn start_cutting_proxy(upstream: String, cut: usize) -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?.to_string();
    tokio::spawn(async move {
        let mut limit = cut;
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = TcpStream::connect(&upstream).await else {
                continue;
            };
            tokio::spawn(relay(client, server, limit));
            limit = usize::MAX;
        }
    });
    Ok(address)
}

/// Copies the request to the server and at most `limit` response bytes back, then drops
/// both connections.
async fn relay(client: TcpStream, server: TcpStream, limit: usize) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let request = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
    });
    let mut sent = 0;
    let mut buf = [0u8; 256];
    while sent < limit {
        let n = match server_read.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n.min(limit - sent),
        };
        if client_write.write_all(&buf[..n]).await.is_err() {
            break;
        }
        sent += n;
    }
    request.abort();
}
