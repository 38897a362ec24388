//! Automatic resume against the real store-backed server: the connection is cut in the
//! middle of a run (by a proxy), the client reconnects with `Last-Event-ID`, and the session
//! ends exactly as an uninterrupted run does, with no event delivered twice.
#![allow(missing_docs)]

use aguikit_client::{HttpAgent, ReconnectPolicy, RunParams, Session, Update};
use aguikit_core::Message;
use aguikit_server::aguikit_store::MemoryStore;
use aguikit_server::{AgentServer, Finish, StoreOptions, agent_fn};
use futures_util::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const PIECES: usize = 60;

async fn server() -> String {
    let agent = agent_fn(|_input, ctx| async move {
        let m = ctx.text_message().id("m1").start().await?;
        for i in 0..PIECES {
            m.delta(format!("{i} ")).await?;
            if i % 10 == 0 {
                ctx.update_state(|s| s["count"] = serde_json::json!(i))
                    .await?;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        m.end().await?;
        Ok(Finish::success())
    });
    let app = AgentServer::new(agent)
        .path("/agent")
        .store(StoreOptions::new(Arc::new(MemoryStore::new())))
        .router();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr.to_string()
}

/// A TCP proxy to `upstream` that cuts its first connection after `cut` response bytes;
/// later connections pass untouched.
async fn cutting_proxy(upstream: String, cut: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let n = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        loop {
            let Ok((client, _)) = listener.accept().await else {
                return;
            };
            let first = n.fetch_add(1, Ordering::SeqCst) == 0;
            let upstream = upstream.clone();
            tokio::spawn(async move {
                let server = TcpStream::connect(&upstream).await.unwrap();
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                let up = tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut cr, &mut sw).await;
                });
                let limit = if first { cut } else { usize::MAX };
                let mut sent = 0;
                let mut buf = [0u8; 512];
                while sent < limit {
                    let Ok(k) = sr.read(&mut buf).await else {
                        break;
                    };
                    if k == 0 {
                        break;
                    }
                    let k2 = k.min(limit - sent);
                    if cw.write_all(&buf[..k2]).await.is_err() {
                        break;
                    }
                    sent += k2;
                }
                up.abort();
                // Dropping both halves resets the client's connection mid-body.
            });
        }
    });
    addr.to_string()
}

/// Runs the thread's first run through `addr`; returns the messages, the state, the text
/// the updates carried, and how many reconnections there were.
async fn run(addr: &str, thread: &str) -> (serde_json::Value, serde_json::Value, String, u32) {
    let agent = HttpAgent::builder(&format!("http://{addr}/agent"))
        .reconnect(ReconnectPolicy {
            max_attempts: 3,
            delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
        })
        .build()
        .unwrap();
    let mut session = Session::with_thread_id(agent, thread);
    session.add_message(Message::user("u1", "count"));
    let mut text = String::new();
    let mut run = session.run_with(RunParams::new().run_id("r1")).unwrap();
    while let Some(u) = run.next().await {
        if let Update::TextDelta { delta, .. } = u {
            text.push_str(&delta);
        }
    }
    let reconnects = run.response_info().reconnects;
    drop(run);
    let status = session.status().unwrap();
    assert!(status.is_ended_by_agent(), "{status}");
    (
        serde_json::to_value(session.messages().collect::<Vec<_>>()).unwrap(),
        session.state().clone(),
        text,
        reconnects,
    )
}

#[tokio::test]
async fn a_cut_connection_resumes_with_no_lost_or_repeated_event() {
    let upstream = server().await;
    let expected = run(&upstream, "whole").await;
    assert_eq!(expected.3, 0);
    let want: String = (0..PIECES).map(|i| format!("{i} ")).collect();
    assert_eq!(expected.2, want);
    for cut in [700, 1200, 2000, 3200] {
        let proxy = cutting_proxy(upstream.clone(), cut).await;
        let got = run(&proxy, &format!("cut-{cut}")).await;
        assert_eq!(got.3, 1, "one reconnection after {cut} bytes");
        assert_eq!(got.0, expected.0, "messages after a cut at {cut} bytes");
        assert_eq!(got.1, expected.1, "state after a cut at {cut} bytes");
        assert_eq!(got.2, want, "text deltas after a cut at {cut} bytes");
    }

    // A new session loads the stored thread: the same messages and state.
    let agent = HttpAgent::new(&format!("http://{upstream}/agent")).unwrap();
    let loaded = Session::load(agent.clone(), "cut-1200").await.unwrap();
    assert_eq!(loaded.thread_id(), "cut-1200");
    assert_eq!(
        serde_json::to_value(loaded.messages().collect::<Vec<_>>()).unwrap(),
        expected.0
    );
    assert_eq!(loaded.state(), &expected.1);
    match Session::load(agent, "no-such-thread").await {
        Err(aguikit_client::ClientError::Http { status: 404, .. }) => {}
        other => panic!("{other:?}"),
    }
}

/// The resume test: cuts at 100 random points of the run, each resumed to the same
/// messages, state and text, with no repeated event. Ten cut runs are in flight at a time
/// (each on its own thread of the same server), so all 100 fit in a few seconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cuts_at_random_points_all_resume_to_the_same_end() {
    let upstream = server().await;
    let expected = run(&upstream, "whole").await;
    let want: String = (0..PIECES).map(|i| format!("{i} ")).collect();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    println!("seed {seed}");
    let mut x = seed | 1;
    // xorshift64: a cut after the headers and RUN_STARTED, up to past the end.
    let cuts: Vec<usize> = (0..100)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            700 + (x % 7000) as usize
        })
        .collect();
    let outcomes: Vec<_> = futures_util::stream::iter(cuts.into_iter().enumerate())
        .map(|(i, cut)| {
            let upstream = upstream.clone();
            async move {
                let proxy = cutting_proxy(upstream, cut).await;
                (cut, run(&proxy, &format!("random-{i}")).await)
            }
        })
        .buffer_unordered(10)
        .collect()
        .await;
    assert_eq!(outcomes.len(), 100);
    let mut resumed = 0;
    for (cut, got) in &outcomes {
        assert!(
            got.3 <= 1,
            "seed {seed}, cut {cut}: {} reconnections",
            got.3
        );
        assert_eq!(got.0, expected.0, "seed {seed}, cut {cut}: messages");
        assert_eq!(got.1, expected.1, "seed {seed}, cut {cut}: state");
        assert_eq!(got.2, want, "seed {seed}, cut {cut}: text deltas");
        resumed += got.3;
    }
    println!("100 cuts, {resumed} resumed mid-run");
    assert!(resumed >= 50, "only {resumed} of 100 cuts fell mid-run");
}
