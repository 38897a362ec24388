//! The behavioural suite every backend runs, as libtest-mimic trials, so that a backend that
//! cannot run here (PostgreSQL without `AGUI_TEST_POSTGRES_URL`) is reported as ignored
//! ("skipped"), never as passed.

#![allow(dead_code, missing_docs)]

use agui_core::Event;
use agui_core::engine::pipeline::Pipeline;
use agui_store::{EventStore, RunStatus, StoreError};
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Opens a store on the backend's database: every call of one `Open` reaches the same data
/// (a fresh database per trial), so a test can "reopen" it or run two instances.
pub type Open = Arc<dyn Fn() -> BoxFuture<'static, Arc<dyn EventStore>> + Send + Sync>;

pub type Case = fn(Open) -> BoxFuture<'static, ()>;

pub fn ev(v: Value) -> Event {
    Event::from_json_slice(&serde_json::to_vec(&v).unwrap()).unwrap()
}

pub fn started(t: &str, r: &str) -> Event {
    ev(json!({"type": "RUN_STARTED", "threadId": t, "runId": r}))
}

pub fn started_from(t: &str, r: &str, parent: &str) -> Event {
    ev(json!({"type": "RUN_STARTED", "threadId": t, "runId": r, "parentRunId": parent}))
}

pub fn finished(t: &str, r: &str) -> Event {
    ev(json!({"type": "RUN_FINISHED", "threadId": t, "runId": r}))
}

pub fn text(id: &str, parts: &[&str]) -> Vec<Event> {
    let mut v = vec![ev(
        json!({"type": "TEXT_MESSAGE_START", "messageId": id, "role": "assistant"}),
    )];
    for p in parts {
        v.push(ev(
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": p}),
        ));
    }
    v.push(ev(json!({"type": "TEXT_MESSAGE_END", "messageId": id})));
    v
}

/// A whole run (9 events): start, a message in three deltas, a state snapshot and delta,
/// finish.
pub fn whole_run(t: &str, r: &str, msg: &str) -> Vec<Event> {
    let mut v = vec![started(t, r)];
    v.extend(text(msg, &["Hel", "lo ", msg]));
    v.push(ev(json!({"type": "STATE_SNAPSHOT", "snapshot": {"n": 1}})));
    v.push(ev(
        json!({"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 2}]}),
    ));
    v.push(finished(t, r));
    v
}

/// Replays events through the client pipeline: (messages, state) as JSON.
pub fn replay(events: &[Event]) -> (Value, Value) {
    let mut p = Pipeline::new();
    for e in events {
        p.push(e.clone()).expect("replay");
    }
    p.finish().expect("replay end");
    let a = p.applier();
    (
        serde_json::to_value(a.messages().to_vec()).unwrap(),
        a.state().clone(),
    )
}

async fn append_assigns_contiguous_sequences(open: Open) {
    let s = open().await;
    assert_eq!(
        s.append("a", "r1", &[started("a", "r1")]).await.unwrap(),
        1..2
    );
    assert_eq!(
        s.append("a", "r1", &text("m", &["x", "y"])).await.unwrap(),
        2..6
    );
    // Another thread counts on its own.
    assert_eq!(
        s.append("b", "r1", &[started("b", "r1")]).await.unwrap(),
        1..2
    );
    assert_eq!(
        s.append("a", "r1", &[finished("a", "r1")]).await.unwrap(),
        6..7
    );
    let seqs: Vec<u64> = s
        .read("a", 1)
        .await
        .unwrap()
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, (1..7).collect::<Vec<_>>());
}

async fn empty_append_is_a_no_op(open: Open) {
    let s = open().await;
    assert_eq!(s.append("a", "r1", &[]).await.unwrap(), 1..1);
    assert!(matches!(
        s.thread("a").await,
        Err(StoreError::UnknownThread(_))
    ));
    assert!(s.threads().await.unwrap().is_empty());
}

async fn reads_from_any_sequence(open: Open) {
    let s = open().await;
    let run = whole_run("t", "r", "m");
    s.append("t", "r", &run).await.unwrap();
    let n = run.len() as u64;
    for from in 0..=n + 1 {
        let got = s.read("t", from).await.unwrap();
        let first = from.max(1);
        assert_eq!(got.len() as u64, n + 1 - first, "from {from}");
        for (e, seq) in got.iter().zip(first..) {
            assert_eq!(e.seq, seq);
            assert_eq!(e.event, run[(seq - 1) as usize]);
            assert_eq!(e.run_id, "r");
        }
    }
    let page = s.read_raw("t", 2, 3).await.unwrap();
    assert_eq!(
        page.iter().map(|e| e.seq).collect::<Vec<_>>(),
        vec![2, 3, 4]
    );
    match s.read("t", n + 2).await {
        Err(e @ StoreError::SequenceOutOfRange { .. }) => assert_eq!(e.http_status(), 400),
        other => panic!("expected out of range, got {other:?}"),
    }
    match s.read("nope", 1).await {
        Err(e @ StoreError::UnknownThread(_)) => assert_eq!(e.http_status(), 404),
        other => panic!("expected unknown thread, got {other:?}"),
    }
}

async fn events_round_trip_verbatim(open: Open) {
    let s = open().await;
    let events = vec![
        ev(
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "timestamp": 1700000000123i64,
                  "metadata": {"k": [1, 2.5, "x", null]}, "rawEvent": {"provider": {"id": 9007199254740993u64}}}),
        ),
        ev(
            json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant", "subagentRunId": "s1"}),
        ),
        ev(
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "héllo \u{1F600} \" \\ \n \u{0}"}),
        ),
        ev(json!({"type": "TEXT_MESSAGE_END", "messageId": "m"})),
        ev(json!({"type": "CUSTOM", "name": "x", "value": {"deep": {"b": 1, "a": 2}}})),
        ev(json!({"type": "SOME_FUTURE_EVENT", "z": 1, "a": [true]})),
    ];
    s.append("t", "r", &events).await.unwrap();
    let raw = s.read_raw("t", 1, usize::MAX).await.unwrap();
    for (r, e) in raw.iter().zip(&events) {
        assert_eq!(r.json, e.to_json_vec(), "stored bytes are the wire JSON");
    }
    let got: Vec<Event> = s
        .read("t", 1)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event)
        .collect();
    assert_eq!(got, events);
}

async fn runs_status_and_lineage(open: Open) {
    let s = open().await;
    s.append("t", "r1", &whole_run("t", "r1", "a"))
        .await
        .unwrap();
    s.append("t", "r2", &[started_from("t", "r2", "r1")])
        .await
        .unwrap();
    s.append(
        "t",
        "r2",
        &[ev(json!({"type": "RUN_ERROR", "message": "boom"}))],
    )
    .await
    .unwrap();
    // A branch from r1, beside r2.
    s.append("t", "r3", &[started_from("t", "r3", "r1")])
        .await
        .unwrap();
    s.append("t", "r3", &text("c", &["x"])).await.unwrap();
    // From r3.
    let r4 = whole_run("t", "r4", "d");
    let mut r4 = r4;
    r4[0] = started_from("t", "r4", "r3");
    s.append("t", "r4", &r4).await.unwrap();

    let runs = s.runs("t").await.unwrap();
    let ids: Vec<&str> = runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(ids, ["r1", "r2", "r3", "r4"]);
    let st: Vec<RunStatus> = runs.iter().map(|r| r.status).collect();
    assert_eq!(
        st,
        [
            RunStatus::Finished,
            RunStatus::Error,
            RunStatus::Running,
            RunStatus::Finished
        ]
    );
    assert_eq!(runs[0].parent_run_id, None);
    assert_eq!(runs[1].parent_run_id.as_deref(), Some("r1"));
    assert_eq!(runs[3].parent_run_id.as_deref(), Some("r3"));
    assert_eq!((runs[0].first_seq, runs[0].last_seq), (1, 9));
    assert_eq!((runs[1].first_seq, runs[1].last_seq), (10, 11));
    assert_eq!((runs[2].first_seq, runs[2].last_seq), (12, 15));

    let path: Vec<String> = s
        .lineage("t", "r4")
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.run_id)
        .collect();
    assert_eq!(path, ["r1", "r3", "r4"]);
    let branch = s.branch("t", "r4").await.unwrap();
    assert!(branch.iter().all(|e| e.run_id != "r2"));
    assert_eq!(branch.len(), 9 + 4 + 9);
    assert!(branch.windows(2).all(|w| w[0].seq < w[1].seq));

    assert_eq!(s.run("t", "r2").await.unwrap().status, RunStatus::Error);
    match s.run("t", "zz").await {
        Err(e @ StoreError::UnknownRun { .. }) => assert_eq!(e.http_status(), 404),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        s.lineage("t", "zz").await,
        Err(StoreError::UnknownRun { .. })
    ));
    assert!(matches!(
        s.runs("zz").await,
        Err(StoreError::UnknownThread(_))
    ));
}

async fn bad_appends_are_rejected_and_change_nothing(open: Open) {
    let s = open().await;
    s.append("t", "r1", &whole_run("t", "r1", "a"))
        .await
        .unwrap();
    let before = s.read("t", 1).await.unwrap();
    // Closed run.
    match s.append("t", "r1", &text("b", &["x"])).await {
        Err(e @ StoreError::RunClosed { .. }) => assert_eq!(e.http_status(), 409),
        other => panic!("{other:?}"),
    }
    // Unknown parent.
    match s
        .append("t", "r2", &[started_from("t", "r2", "ghost")])
        .await
    {
        Err(StoreError::UnknownRun { run, .. }) => assert_eq!(run, "ghost"),
        other => panic!("{other:?}"),
    }
    // Unknown parent in a new thread.
    assert!(matches!(
        s.append("new", "r2", &[started_from("new", "r2", "r1")])
            .await,
        Err(StoreError::UnknownRun { .. })
    ));
    assert!(matches!(
        s.thread("new").await,
        Err(StoreError::UnknownThread(_))
    ));
    // Own parent, mismatching ids, empty ids, events after the terminal event.
    for (thread, run, events) in [
        ("t", "r3", vec![started_from("t", "r3", "r3")]),
        ("t", "r3", vec![started("other", "r3")]),
        ("t", "r3", vec![started("t", "r4")]),
        ("t", "r3", vec![finished("t", "r4")]),
        ("", "r3", vec![started("", "r3")]),
        ("t", "", vec![started("t", "")]),
        (
            "t",
            "r3",
            vec![started("t", "r3"), finished("t", "r3"), started("t", "r3")],
        ),
    ] {
        match s.append(thread, run, &events).await {
            Err(e @ StoreError::Invalid(_)) => assert_eq!(e.http_status(), 400),
            other => panic!("{thread:?} {run:?}: {other:?}"),
        }
    }
    assert_eq!(s.read("t", 1).await.unwrap(), before);
    assert_eq!(s.runs("t").await.unwrap().len(), 1);
    // The log goes on after the failures, with no gap.
    assert_eq!(
        s.append("t", "r5", &[started("t", "r5")]).await.unwrap(),
        before.len() as u64 + 1..before.len() as u64 + 2
    );
}

async fn sql_injection_is_stored_verbatim(open: Open) {
    let s = open().await;
    let nasty = [
        "x'); DROP TABLE events; --",
        "\"; DELETE FROM threads; --",
        "' OR '1'='1",
        "$1; SELECT pg_sleep(10); --",
        "Robert'); DROP TABLE runs;--\u{0}\u{7f}",
    ];
    for (i, t) in nasty.iter().enumerate() {
        let run = format!("{t}-run{i}");
        let mut events = vec![started(t, &run)];
        events.extend(text(t, &[t, "'; DROP TABLE threads; --"]));
        events.push(ev(json!({"type": "CUSTOM", "name": t, "value": {(*t): t}})));
        events.push(finished(t, &run));
        s.append(t, &run, &events).await.unwrap();
        let got: Vec<Event> = s
            .read(t, 1)
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.event)
            .collect();
        assert_eq!(got, events);
        assert_eq!(s.runs(t).await.unwrap()[0].run_id, run);
    }
    let listed: Vec<String> = s
        .threads()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.thread_id)
        .collect();
    assert_eq!(listed, nasty);
    // Reads with quotes in an unknown id are clean errors.
    assert!(matches!(
        s.read("zz' OR 1=1 --", 1).await,
        Err(StoreError::UnknownThread(_))
    ));
}

async fn threads_are_listed(open: Open) {
    let s = open().await;
    s.append("one", "r1", &whole_run("one", "r1", "a"))
        .await
        .unwrap();
    s.append("two", "r1", &[started("two", "r1")])
        .await
        .unwrap();
    s.append("one", "r2", &[started("one", "r2")])
        .await
        .unwrap();
    let list = s.threads().await.unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(
        (
            list[0].thread_id.as_str(),
            list[0].last_seq,
            list[0].run_count
        ),
        ("one", 10, 2)
    );
    assert_eq!(
        (
            list[1].thread_id.as_str(),
            list[1].last_seq,
            list[1].run_count
        ),
        ("two", 1, 1)
    );
    assert_eq!(s.thread("two").await.unwrap(), list[1]);
}

async fn compaction_replays_like_the_log(open: Open) {
    let s = open().await;
    s.append("t", "r1", &whole_run("t", "r1", "a"))
        .await
        .unwrap();
    s.append("t", "r2", &whole_run("t", "r2", "b"))
        .await
        .unwrap();
    // A failed run with a message left open, then a running one: kept as stored.
    s.append("t", "r3", &[started("t", "r3")]).await.unwrap();
    s.append("t", "r3", &text("c", &["x", "y"])[..2])
        .await
        .unwrap();
    s.append(
        "t",
        "r3",
        &[ev(json!({"type": "RUN_ERROR", "message": "boom"}))],
    )
    .await
    .unwrap();
    s.append("t", "r4", &[started("t", "r4")]).await.unwrap();
    s.append("t", "r4", &text("d", &["p", "q", "r"]))
        .await
        .unwrap();

    let all: Vec<Event> = s
        .read("t", 1)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event)
        .collect();
    let compacted = s.compacted("t").await.unwrap();
    assert!(
        compacted.len() < all.len(),
        "{} vs {}",
        compacted.len(),
        all.len()
    );
    // Each finished run: start, 3 text events, one state snapshot, finish.
    assert_eq!(compacted.len(), 6 + 6 + 4 + 6);
    assert_eq!(replay(&compacted), replay(&all));
    assert!(matches!(
        s.compacted("zz").await,
        Err(StoreError::UnknownThread(_))
    ));
}

async fn tail_replays_then_follows(open: Open) {
    let s = open().await;
    s.append("t", "r", &[started("t", "r")]).await.unwrap();
    s.append("t", "r", &text("m", &["a"])).await.unwrap();
    let mut from_start = s.tail("t", 1);
    let mut from_middle = s.tail("t", 3);
    let writer = s.clone();
    let task = tokio::spawn(async move {
        for i in 0..20 {
            tokio::time::sleep(Duration::from_millis(2)).await;
            writer
                .append(
                    "t",
                    "r",
                    &[ev(json!({"type": "CUSTOM", "name": "n", "value": i}))],
                )
                .await
                .unwrap();
        }
        writer
            .append("t", "r", &[finished("t", "r")])
            .await
            .unwrap();
    });
    let within = Duration::from_secs(10);
    for expect in 1..=25u64 {
        let e = tokio::time::timeout(within, from_start.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(e.seq, expect);
        if expect >= 3 {
            let e = tokio::time::timeout(within, from_middle.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            assert_eq!(e.seq, expect);
        }
    }
    task.await.unwrap();
    // Nothing more arrives.
    assert!(
        tokio::time::timeout(Duration::from_millis(50), from_start.next())
            .await
            .is_err()
    );
}

async fn tail_reports_bad_start(open: Open) {
    let s = open().await;
    let first = s.tail("nope", 1).next().await.unwrap();
    assert!(matches!(first, Err(StoreError::UnknownThread(_))));
    s.append("t", "r", &[started("t", "r")]).await.unwrap();
    let mut tail = s.tail("t", 5);
    assert!(matches!(
        tail.next().await.unwrap(),
        Err(StoreError::SequenceOutOfRange { .. })
    ));
    assert!(tail.next().await.is_none());
}

async fn tail_follows_another_instance(open: Open) {
    let a = open().await;
    let b = open().await;
    a.append("t", "r", &[started("t", "r")]).await.unwrap();
    let mut tail = b.tail("t", 1);
    assert_eq!(tail.next().await.unwrap().unwrap().seq, 1);
    a.append("t", "r", &text("m", &["x"])).await.unwrap();
    for seq in 2..=4 {
        let e = tokio::time::timeout(Duration::from_secs(10), tail.next())
            .await
            .expect("live event from the other instance")
            .unwrap()
            .unwrap();
        assert_eq!(e.seq, seq);
    }
}

async fn concurrent_appends_get_distinct_contiguous_sequences(open: Open) {
    let s = open().await;
    let mut tasks = Vec::new();
    for w in 0..8 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            let run = format!("r{w}");
            let mut got = Vec::new();
            got.extend(s.append("t", &run, &[started("t", &run)]).await.unwrap());
            for i in 0..10 {
                let e = ev(json!({"type": "CUSTOM", "name": "w", "value": [w, i]}));
                got.extend(s.append("t", &run, &[e.clone(), e]).await.unwrap());
            }
            got
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort();
    assert_eq!(all, (1..=8 * 21).collect::<Vec<u64>>());
    let stored = s.read("t", 1).await.unwrap();
    assert_eq!(stored.len(), 8 * 21);
    // Each run's events are in its own order.
    for w in 0..8 {
        let run = format!("r{w}");
        let mine: Vec<&Event> = stored
            .iter()
            .filter(|e| e.run_id == run)
            .map(|e| &e.event)
            .collect();
        assert_eq!(mine.len(), 21);
    }
}

async fn data_survives_reopening(open: Open) {
    let s = open().await;
    s.append("t", "r", &whole_run("t", "r", "a")).await.unwrap();
    drop(s);
    let s = open().await;
    assert_eq!(s.read("t", 1).await.unwrap().len(), 9);
    assert_eq!(s.runs("t").await.unwrap()[0].status, RunStatus::Finished);
    assert_eq!(
        s.append("t", "r2", &[started("t", "r2")]).await.unwrap(),
        10..11
    );
}

/// Leases: renewed and read back (shared between instances); a running run whose lease
/// expired is closed with `RUN_ERROR` code `abandoned`; a run with a live lease, without a
/// lease, or already ended is left alone.
async fn expired_leases_abandon_running_runs(open: Open) {
    let store = open().await;
    let other = open().await;
    store
        .append("t", "r1", &[started("t", "r1")])
        .await
        .unwrap();
    assert_eq!(store.lease("t", "r1").await.unwrap(), None);
    // No lease: never abandoned.
    assert!(!store.abandon_if_expired("t", "r1", u64::MAX).await.unwrap());
    store.renew_lease("t", "r1", 1_000).await.unwrap();
    store.renew_lease("t", "r1", 2_000).await.unwrap();
    assert_eq!(other.lease("t", "r1").await.unwrap(), Some(2_000));
    // Live lease.
    assert!(!other.abandon_if_expired("t", "r1", 1_500).await.unwrap());
    assert_eq!(
        store.run("t", "r1").await.unwrap().status,
        RunStatus::Running
    );
    // Expired.
    assert!(other.abandon_if_expired("t", "r1", 2_001).await.unwrap());
    let run = store.run("t", "r1").await.unwrap();
    assert_eq!(run.status, RunStatus::Error);
    let last = store.read("t", run.last_seq).await.unwrap();
    match &last[0].event {
        Event::RunError(e) => assert_eq!(e.code.as_deref(), Some("abandoned")),
        other => panic!("{other:?}"),
    }
    // Ended: nothing more happens, and the owner's late append is refused.
    assert!(!store.abandon_if_expired("t", "r1", u64::MAX).await.unwrap());
    assert!(matches!(
        store.append("t", "r1", &[finished("t", "r1")]).await,
        Err(StoreError::RunClosed { .. })
    ));
    // A finished run with an expired lease stays finished.
    store.renew_lease("t", "r2", 5).await.unwrap();
    store
        .append("t", "r2", &[started("t", "r2"), finished("t", "r2")])
        .await
        .unwrap();
    assert!(!store.abandon_if_expired("t", "r2", 10).await.unwrap());
    assert_eq!(
        store.run("t", "r2").await.unwrap().status,
        RunStatus::Finished
    );
}

/// Every case of the suite, by name.
pub fn cases() -> Vec<(&'static str, Case)> {
    macro_rules! case {
        ($f:ident) => {
            (stringify!($f), (|o| Box::pin($f(o))) as Case)
        };
    }
    vec![
        case!(append_assigns_contiguous_sequences),
        case!(empty_append_is_a_no_op),
        case!(reads_from_any_sequence),
        case!(events_round_trip_verbatim),
        case!(runs_status_and_lineage),
        case!(bad_appends_are_rejected_and_change_nothing),
        case!(sql_injection_is_stored_verbatim),
        case!(threads_are_listed),
        case!(compaction_replays_like_the_log),
        case!(tail_replays_then_follows),
        case!(tail_reports_bad_start),
        case!(tail_follows_another_instance),
        case!(concurrent_appends_get_distinct_contiguous_sequences),
        case!(data_survives_reopening),
        case!(expired_leases_abandon_running_runs),
    ]
}
