//! The behavioural suite every backend runs, as libtest-mimic trials, so that a backend that
//! cannot run here (PostgreSQL without `AGUI_TEST_POSTGRES_URL`) is reported as ignored
//! ("skipped"), never as passed.

#![allow(dead_code, missing_docs)]

pub mod rt;

use aguikit_core::Event;
use aguikit_core::engine::pipeline::Pipeline;
use aguikit_store::{
    EventStore, FirstRun, ForkOf, RunStatus, StoreError, StoredEvent, ThreadInfo, ThreadPage,
    ThreadQuery, ThreadUpdate,
};
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use serde_json::{Value, json};
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

/// Opens a store on the backend's database: every call of one `Open` reaches the same data
/// (a fresh database per trial), so a test can "reopen" it or run two instances.
pub type Open = Arc<dyn Fn() -> BoxFuture<'static, Arc<dyn EventStore>> + Send + Sync>;

/// Writes `body` as the stored JSON of event `seq` of `thread`, bypassing every check (what
/// a damaged disk or a hand edit does): `(thread, seq, body)`.
pub type Corrupt = Arc<dyn Fn(String, u64, Vec<u8>) -> BoxFuture<'static, ()> + Send + Sync>;

/// What a case gets from its backend.
#[derive(Clone)]
pub struct Backend {
    pub open: Open,
    pub corrupt: Corrupt,
}

pub type Case = fn(Backend) -> BoxFuture<'static, ()>;

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

/// The store as every case holds it.
type Store = Arc<dyn EventStore>;

/// Appends `events`, which must be accepted: the sequences they were given.
async fn append_ok(s: &Store, thread: &str, run: &str, events: &[Event]) -> Range<u64> {
    s.append(thread, run, events).await.unwrap()
}

/// Every event of `thread`, without its sequence and run.
async fn events_of(s: &Store, thread: &str) -> Vec<Event> {
    let stored = s.read(thread, 1).await.unwrap();
    stored.into_iter().map(|e| e.event).collect()
}

/// The ids of every thread, in listing order.
async fn thread_ids(s: &Store) -> Vec<String> {
    let threads = s.threads().await.unwrap();
    threads.into_iter().map(|t| t.thread_id).collect()
}

/// The first page of the thread listing, `limit` threads at most.
async fn first_page(s: &Store, limit: usize) -> ThreadPage {
    let query = ThreadQuery {
        limit,
        ..Default::default()
    };
    s.list_threads(&query).await.unwrap()
}

/// The next event of a tail, which must arrive within ten seconds (`what` says which).
async fn next_within(
    tail: &mut BoxStream<'static, aguikit_store::Result<StoredEvent>>,
    what: &str,
) -> StoredEvent {
    let next = tokio::time::timeout(Duration::from_secs(10), tail.next()).await;
    next.expect(what).unwrap().unwrap()
}

/// Asserts that a call failed as one about a thread the store does not know.
#[track_caller]
fn assert_unknown_thread<T: std::fmt::Debug>(result: Result<T, StoreError>) {
    assert!(
        matches!(result, Err(StoreError::UnknownThread(_))),
        "{result:?}"
    );
}

async fn append_assigns_contiguous_sequences(open: Open) {
    let s = open().await;
    assert_eq!(append_ok(&s, "a", "r1", &[started("a", "r1")]).await, 1..2);
    assert_eq!(
        append_ok(&s, "a", "r1", &text("m", &["x", "y"])).await,
        2..6
    );
    // Another thread counts on its own.
    assert_eq!(append_ok(&s, "b", "r1", &[started("b", "r1")]).await, 1..2);
    assert_eq!(append_ok(&s, "a", "r1", &[finished("a", "r1")]).await, 6..7);
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
    assert_eq!(append_ok(&s, "a", "r1", &[]).await, 1..1);
    assert_unknown_thread(s.thread("a").await);
    assert!(s.threads().await.unwrap().is_empty());
}

async fn reads_from_any_sequence(open: Open) {
    let s = open().await;
    let run = whole_run("t", "r", "m");
    append_ok(&s, "t", "r", &run).await;
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
    // Pages of every size from every sequence, across appends of one and of several
    // events (a SQL backend stores an append's events in one row).
    let mut all = run.clone();
    let second = whole_run("t", "r2", "n");
    append_ok(&s, "t", "r2", &second[..1]).await;
    append_ok(&s, "t", "r2", &second[1..4]).await;
    append_ok(&s, "t", "r2", &second[4..]).await;
    all.extend(second);
    let n = all.len() as u64;
    for from in 1..=n + 1 {
        for limit in [0, 1, 2, 3, 7, usize::MAX] {
            let page = s.read_raw("t", from, limit).await.unwrap();
            let want: Vec<u64> = (from..=n).take(limit).collect();
            let got: Vec<u64> = page.iter().map(|e| e.seq).collect();
            assert_eq!(got, want, "from {from}, limit {limit}");
            for raw in page {
                let seq = raw.seq;
                let e = raw.decode("t").unwrap();
                assert_eq!(e.event, all[(seq - 1) as usize], "event {seq}");
                assert_eq!(e.run_id, if seq <= run.len() as u64 { "r" } else { "r2" });
            }
        }
        let got = s.read("t", from).await.unwrap();
        assert_eq!(got.len() as u64, n + 1 - from, "from {from}");
        assert!(
            got.iter()
                .zip(from..)
                .all(|(e, seq)| e.seq == seq && e.event == all[(seq - 1) as usize])
        );
    }
    match s.read("t", n + 2).await {
        Err(e @ StoreError::SequenceOutOfRange { .. }) => {
            assert_eq!(e.code(), "sequence_out_of_range")
        }
        other => panic!("expected out of range, got {other:?}"),
    }
    match s.read("nope", 1).await {
        Err(e @ StoreError::UnknownThread(_)) => assert_eq!(e.code(), "unknown_thread"),
        other => panic!("expected unknown thread, got {other:?}"),
    }
}

/// JSON given with its event is stored byte for byte even when it spans lines (which a
/// SQL backend cannot join with other events in one row).
async fn json_over_several_lines_is_stored_as_given(open: Open) {
    let s = open().await;
    let events = [
        started("t", "r"),
        custom(json!({"a": 1})),
        custom(json!("x")),
        custom(json!([2])),
        finished("t", "r"),
    ];
    let pretty: Vec<Vec<u8>> = events
        .iter()
        .map(|e| serde_json::to_vec_pretty(e).unwrap())
        .collect();
    assert!(pretty[1].contains(&b'\n'));
    let given = [None, Some(&pretty[1][..]), None, Some(&pretty[3][..]), None];
    append_ok_json(&s, "t", "r", &events, &given).await;
    let raw = s.read_raw("t", 1, usize::MAX).await.unwrap();
    assert_eq!(raw.len(), 5);
    for (i, r) in raw.iter().enumerate() {
        let want = given[i].map_or_else(|| events[i].to_json_vec(), <[u8]>::to_vec);
        assert_eq!(r.json, want, "event {}", i + 1);
    }
    for from in 1..=5 {
        let got = s.read("t", from).await.unwrap();
        let want: Vec<&Event> = events[from as usize - 1..].iter().collect();
        assert_eq!(got.iter().map(|e| &e.event).collect::<Vec<_>>(), want);
    }
}

/// The JSON given to `append_if_new_json` and `append_leased_json` is stored as given (a
/// pretty-printed body, which the stores would not write themselves), with the lease
/// recorded; a thread that holds events is returned as it is, nothing stored.
async fn claims_store_the_json_given(open: Open) {
    let s = open().await;
    let first = [started("t", "r1")];
    let pretty = serde_json::to_vec_pretty(&first[0]).unwrap();
    let claimed = s
        .append_if_new_json(
            "t",
            Some("alice"),
            false,
            "r1",
            &first,
            &[Some(&pretty)],
            9_000,
        )
        .await
        .unwrap();
    assert_eq!(claimed, FirstRun::Stored(1..2));
    assert_eq!(s.lease("t", "r1").await.unwrap(), Some(9_000));
    let again = [started("t", "r9")];
    match s
        .append_if_new_json(
            "t",
            Some("alice"),
            false,
            "r9",
            &again,
            &[Some(&pretty)],
            9_000,
        )
        .await
        .unwrap()
    {
        FirstRun::Existing(info) => assert_eq!(info.last_seq, 1),
        other => panic!("{other:?}"),
    }
    s.append_json("t", "r1", &[finished("t", "r1")], &[])
        .await
        .unwrap();
    let second = [started("t", "r2")];
    let pretty2 = serde_json::to_vec_pretty(&second[0]).unwrap();
    let range = s
        .append_leased_json("t", "r2", &second, &[Some(&pretty2)], 8_000)
        .await
        .unwrap();
    assert_eq!(range, 3..4);
    assert_eq!(s.lease("t", "r2").await.unwrap(), Some(8_000));
    let raw = s.read_raw("t", 1, usize::MAX).await.unwrap();
    let stored: Vec<&[u8]> = raw.iter().map(|r| &r.json[..]).collect();
    let finished_json = finished("t", "r1").to_json_vec();
    assert_eq!(stored, [&pretty[..], &finished_json[..], &pretty2[..]]);
    let events: Vec<Event> = s
        .read("t", 1)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event)
        .collect();
    assert_eq!(
        events,
        [first[0].clone(), finished("t", "r1"), second[0].clone()]
    );
}

async fn append_ok_json(
    s: &Store,
    thread: &str,
    run: &str,
    events: &[Event],
    json: &[Option<&[u8]>],
) -> Range<u64> {
    s.append_json(thread, run, events, json).await.unwrap()
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
    append_ok(&s, "t", "r", &events).await;
    let raw = s.read_raw("t", 1, usize::MAX).await.unwrap();
    for (r, e) in raw.iter().zip(&events) {
        assert_eq!(r.json, e.to_json_vec(), "stored bytes are the wire JSON");
    }
    let got = events_of(&s, "t").await;
    assert_eq!(got, events);
}

async fn events_with_their_json_are_stored_as_given(open: Open) {
    let s = open().await;
    let mut events = whole_run("t", "r", "m");
    let last = events.pop().unwrap();
    let json: Vec<Vec<u8>> = events.iter().map(Event::to_json_vec).collect();
    // Some events come with their JSON, the others are written by the store.
    let given: Vec<Option<&[u8]>> = json
        .iter()
        .enumerate()
        .map(|(i, j)| (i % 2 == 0).then_some(&j[..]))
        .collect();
    let range = s.append_json("t", "r", &events, &given).await.unwrap();
    assert_eq!(range, 1..events.len() as u64 + 1);
    // More bodies than events: refused, nothing stored.
    let two = [json[0].as_slice(), json[0].as_slice()].map(Some);
    match s
        .append_json("t", "r", std::slice::from_ref(&last), &two)
        .await
    {
        Err(StoreError::Invalid(m)) => assert!(m.contains("2 JSON bodies"), "{m}"),
        other => panic!("{other:?}"),
    }
    // The append's checks hold: the run cannot be started again.
    let again = [started("t", "r")];
    let again_json = again[0].to_json_vec();
    assert!(matches!(
        s.append_json("t", "r", &again, &[Some(&again_json)]).await,
        Err(StoreError::RunExists { .. })
    ));
    let end = last.to_json_vec();
    s.append_json("t", "r", std::slice::from_ref(&last), &[Some(&end)])
        .await
        .unwrap();
    events.push(last);
    let raw = s.read_raw("t", 1, usize::MAX).await.unwrap();
    assert_eq!(raw.len(), events.len());
    for (r, e) in raw.iter().zip(&events) {
        assert_eq!(r.json, e.to_json_vec(), "stored bytes are the wire JSON");
    }
    assert_eq!(events_of(&s, "t").await, events);
    assert_eq!(s.run("t", "r").await.unwrap().status, RunStatus::Finished);
}

async fn batches_of_any_size_keep_their_order(open: Open) {
    let s = open().await;
    append_ok(&s, "t", "r", &[started("t", "r")]).await;
    let mut all = vec![started("t", "r")];
    let mut next = 2;
    // Around the sizes a backend may write in several statements.
    for n in [1usize, 15, 16, 17, 32, 33, 40] {
        let batch: Vec<Event> = (0..n).map(|i| custom(json!([n, i]))).collect();
        let range = append_ok(&s, "t", "r", &batch).await;
        assert_eq!(range, next..next + n as u64, "batch of {n}");
        next += n as u64;
        all.extend(batch);
    }
    // A new thread's first run, in one batch of more than a statement's rows.
    let mut first = vec![started("n", "r")];
    first.extend((0..35).map(|i| custom(json!(i))));
    let stored = s
        .append_if_new("n", None, false, "r", &first, 1)
        .await
        .unwrap();
    assert_eq!(stored, FirstRun::Stored(1..37));
    assert_eq!(events_of(&s, "n").await, first);
    let got = s.read("t", 1).await.unwrap();
    assert!(got.iter().zip(1..).all(|(e, seq)| e.seq == seq));
    assert_eq!(events_of(&s, "t").await, all);
    assert_eq!(s.run("t", "r").await.unwrap().last_seq, next - 1);
}

async fn runs_status_and_lineage(open: Open) {
    let s = open().await;
    append_ok(&s, "t", "r1", &whole_run("t", "r1", "a")).await;
    append_ok(&s, "t", "r2", &[started_from("t", "r2", "r1")]).await;
    append_ok(&s, "t", "r2", &[run_error("boom")]).await;
    // A branch from r1, beside r2.
    append_ok(&s, "t", "r3", &[started_from("t", "r3", "r1")]).await;
    append_ok(&s, "t", "r3", &text("c", &["x"])).await;
    // From r3.
    let r4 = whole_run("t", "r4", "d");
    let mut r4 = r4;
    r4[0] = started_from("t", "r4", "r3");
    append_ok(&s, "t", "r4", &r4).await;

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
        Err(e @ StoreError::UnknownRun { .. }) => assert_eq!(e.code(), "unknown_run"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        s.lineage("t", "zz").await,
        Err(StoreError::UnknownRun { .. })
    ));
    assert_unknown_thread(s.runs("zz").await);
}

async fn bad_appends_are_rejected_and_change_nothing(open: Open) {
    let s = open().await;
    append_ok(&s, "t", "r1", &whole_run("t", "r1", "a")).await;
    let before = s.read("t", 1).await.unwrap();
    // Closed run.
    match s.append("t", "r1", &text("b", &["x"])).await {
        Err(e @ StoreError::RunClosed { .. }) => assert_eq!(e.code(), "run_closed"),
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
    assert_unknown_thread(s.thread("new").await);
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
            Err(e @ StoreError::Invalid(_)) => assert_eq!(e.code(), "invalid_input"),
            other => panic!("{thread:?} {run:?}: {other:?}"),
        }
    }
    assert_eq!(s.read("t", 1).await.unwrap(), before);
    assert_eq!(s.runs("t").await.unwrap().len(), 1);
    // The log goes on after the failures, with no gap.
    assert_eq!(
        append_ok(&s, "t", "r5", &[started("t", "r5")]).await,
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
        append_ok(&s, t, &run, &events).await;
        let got = events_of(&s, t).await;
        assert_eq!(got, events);
        assert_eq!(s.runs(t).await.unwrap()[0].run_id, run);
    }
    let listed = thread_ids(&s).await;
    assert_eq!(listed, nasty);
    // Reads with quotes in an unknown id are clean errors.
    assert_unknown_thread(s.read("zz' OR 1=1 --", 1).await);
}

async fn threads_are_listed(open: Open) {
    let s = open().await;
    append_ok(&s, "one", "r1", &whole_run("one", "r1", "a")).await;
    append_ok(&s, "two", "r1", &[started("two", "r1")]).await;
    append_ok(&s, "one", "r2", &[started("one", "r2")]).await;
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
    append_ok(&s, "t", "r1", &whole_run("t", "r1", "a")).await;
    append_ok(&s, "t", "r2", &whole_run("t", "r2", "b")).await;
    // A failed run with a message left open, then a running one: kept as stored.
    append_ok(&s, "t", "r3", &[started("t", "r3")]).await;
    append_ok(&s, "t", "r3", &text("c", &["x", "y"])[..2]).await;
    append_ok(&s, "t", "r3", &[run_error("boom")]).await;
    append_ok(&s, "t", "r4", &[started("t", "r4")]).await;
    append_ok(&s, "t", "r4", &text("d", &["p", "q", "r"])).await;

    let all = events_of(&s, "t").await;
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
    assert_unknown_thread(s.compacted("zz").await);
}

async fn tail_replays_then_follows(open: Open) {
    let s = open().await;
    append_ok(&s, "t", "r", &[started("t", "r")]).await;
    append_ok(&s, "t", "r", &text("m", &["a"])).await;
    let mut from_start = s.tail("t", 1);
    let mut from_middle = s.tail("t", 3);
    let writer = s.clone();
    let task = tokio::spawn(async move {
        for i in 0..20 {
            tokio::time::sleep(Duration::from_millis(2)).await;
            append_ok(&writer, "t", "r", &[custom(json!(i))]).await;
        }
        append_ok(&writer, "t", "r", &[finished("t", "r")]).await;
    });
    for expect in 1..=25u64 {
        let e = next_within(&mut from_start, "the tail from the start").await;
        assert_eq!(e.seq, expect);
        if expect >= 3 {
            let e = next_within(&mut from_middle, "the tail from the middle").await;
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
    assert_unknown_thread(first);
    append_ok(&s, "t", "r", &[started("t", "r")]).await;
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
    append_ok(&a, "t", "r", &[started("t", "r")]).await;
    let mut tail = b.tail("t", 1);
    assert_eq!(tail.next().await.unwrap().unwrap().seq, 1);
    append_ok(&a, "t", "r", &text("m", &["x"])).await;
    for seq in 2..=4 {
        let e = next_within(&mut tail, "live event from the other instance").await;
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
            got.extend(append_ok(&s, "t", &run, &[started("t", &run)]).await);
            for i in 0..10 {
                let e = ev(json!({"type": "CUSTOM", "name": "w", "value": [w, i]}));
                got.extend(append_ok(&s, "t", &run, &[e.clone(), e]).await);
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

/// A burst of appends on one instance (which SQLite commits as one group): refused ones
/// (a second start of a run, an append to a closed run) change nothing, and every accepted
/// one is stored with contiguous sequences.
async fn refused_appends_in_a_burst_undo_nothing_else(open: Open) {
    let s = open().await;
    append_ok(&s, "t", "done", &whole_run("t", "done", "a")).await;
    let before = s.thread("t").await.unwrap().last_seq;
    let mut tasks = Vec::new();
    for i in 0..48 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            match i % 3 {
                // Two starts of each run r0..r15: one must win.
                0 | 1 => {
                    let run = format!("r{}", i / 3);
                    let events = [started("t", &run), custom(json!(i))];
                    (i, s.append("t", &run, &events).await)
                }
                _ => (i, s.append("t", "done", &[custom(json!(i))]).await),
            }
        }));
    }
    let mut accepted = 0;
    for t in tasks {
        let (i, outcome) = t.await.unwrap();
        match (i % 3, outcome) {
            (2, Err(StoreError::RunClosed { .. })) => {}
            (2, other) => panic!("append {i} to a closed run: {other:?}"),
            (_, Ok(range)) => {
                assert_eq!(range.end - range.start, 2, "append {i}");
                accepted += 1;
            }
            (_, Err(StoreError::RunExists { .. })) => {}
            (_, other) => panic!("start {i}: {other:?}"),
        }
    }
    assert_eq!(accepted, 16);
    let stored = s.read("t", before + 1).await.unwrap();
    assert_eq!(stored.len(), 32);
    let seqs: Vec<u64> = stored.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (before + 1..=before + 32).collect::<Vec<u64>>());
    assert_eq!(s.runs("t").await.unwrap().len(), 17);
    assert_eq!(s.thread("t").await.unwrap().last_seq, before + 32);
}

async fn data_survives_reopening(open: Open) {
    let s = open().await;
    append_ok(&s, "t", "r", &whole_run("t", "r", "a")).await;
    drop(s);
    let s = open().await;
    assert_eq!(s.read("t", 1).await.unwrap().len(), 9);
    assert_eq!(s.runs("t").await.unwrap()[0].status, RunStatus::Finished);
    assert_eq!(
        append_ok(&s, "t", "r2", &[started("t", "r2")]).await,
        10..11
    );
}

/// A run claimed with its lease (`append_leased`, what a server does with RUN_STARTED) has
/// that lease; a refused claim of the same run records nothing, so it cannot extend the
/// lease of the run that holds the id.
async fn claims_record_their_lease_and_refused_ones_nothing(open: Open) {
    let s = open().await;
    let range = s
        .append_leased("t", "r1", &[started("t", "r1")], 1_000)
        .await
        .unwrap();
    assert_eq!(range, 1..2);
    assert_eq!(s.lease("t", "r1").await.unwrap(), Some(1_000));
    let again = s
        .append_leased("t", "r1", &[started("t", "r1")], 9_000)
        .await;
    assert!(
        matches!(again, Err(StoreError::RunExists { .. })),
        "{again:?}"
    );
    assert_eq!(s.lease("t", "r1").await.unwrap(), Some(1_000));
    assert_eq!(s.thread("t").await.unwrap().last_seq, 1);
    // No events: nothing appended, the lease recorded all the same.
    let empty = s.append_leased("t", "r1", &[], 2_000).await.unwrap();
    assert_eq!(empty, 2..2);
    assert_eq!(s.lease("t", "r1").await.unwrap(), Some(2_000));
}

/// Leases: renewed and read back (shared between instances); a running run whose lease
/// expired is closed with `RUN_ERROR` code `abandoned`; a run with a live lease, without a
/// lease, or already ended is left alone.
async fn expired_leases_abandon_running_runs(open: Open) {
    let store = open().await;
    let other = open().await;
    append_ok(&store, "t", "r1", &[started("t", "r1")]).await;
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
    append_ok(
        &store,
        "t",
        "r2",
        &[started("t", "r2"), finished("t", "r2")],
    )
    .await;
    assert!(!store.abandon_if_expired("t", "r2", 10).await.unwrap());
    assert_eq!(
        store.run("t", "r2").await.unwrap().status,
        RunStatus::Finished
    );
}

/// A run's lease lasts while the run does: the append that ends a run (`RUN_FINISHED`,
/// `RUN_ERROR`, an abandonment) drops it, and a claim whose batch ends the run records
/// none, so the store keeps leases for runs in progress only. A running run keeps its own.
async fn ended_runs_drop_their_leases(open: Open) {
    let s = open().await;
    let other = open().await;
    s.append_leased("t", "r1", &[started("t", "r1")], 1_000)
        .await
        .unwrap();
    append_ok(&s, "t", "r1", &[finished("t", "r1")]).await;
    s.append_leased("t", "r2", &[started("t", "r2")], 2_000)
        .await
        .unwrap();
    assert_eq!(s.lease("t", "r1").await.unwrap(), None);
    assert_eq!(other.lease("t", "r1").await.unwrap(), None);
    assert_eq!(s.lease("t", "r2").await.unwrap(), Some(2_000));
    // A late renewal, or a claim with nothing to append, records none for an ended run;
    // a run not stored yet may have one.
    s.renew_lease("t", "r1", 3_000).await.unwrap();
    assert_eq!(s.append_leased("t", "r1", &[], 3_000).await.unwrap(), 4..4);
    assert_eq!(s.lease("t", "r1").await.unwrap(), None);
    s.renew_lease("t", "later", 4_000).await.unwrap();
    assert_eq!(s.lease("t", "later").await.unwrap(), Some(4_000));
    s.renew_lease("t", "r2", 2_500).await.unwrap();
    assert_eq!(s.lease("t", "r2").await.unwrap(), Some(2_500));
    // An error ends it too, and so does abandonment.
    append_ok(&s, "t", "r2", &[run_error("boom")]).await;
    assert_eq!(s.lease("t", "r2").await.unwrap(), None);
    s.append_leased("t", "r3", &[started("t", "r3")], 5)
        .await
        .unwrap();
    assert!(other.abandon_if_expired("t", "r3", 6).await.unwrap());
    assert_eq!(s.lease("t", "r3").await.unwrap(), None);
    // A claim that ends its run at once, in an existing thread and in a new one.
    s.append_leased("t", "r4", &[started("t", "r4"), finished("t", "r4")], 9)
        .await
        .unwrap();
    assert_eq!(s.lease("t", "r4").await.unwrap(), None);
    let whole = [started("n", "r1"), finished("n", "r1")];
    let r = s.append_if_new("n", None, false, "r1", &whole, 9).await;
    assert_eq!(r.unwrap(), FirstRun::Stored(1..3));
    assert_eq!(s.lease("n", "r1").await.unwrap(), None);
    assert_eq!(s.run("n", "r1").await.unwrap().status, RunStatus::Finished);
    // A claimed thread without events takes its first run by the general path.
    s.claim_thread("e", None).await.unwrap();
    let whole = [started("e", "r1"), finished("e", "r1")];
    let r = s.append_if_new("e", None, false, "r1", &whole, 9).await;
    assert_eq!(r.unwrap(), FirstRun::Stored(1..3));
    assert_eq!(s.lease("e", "r1").await.unwrap(), None);
}

/// A lease that lasts past any test.
const FAR: u64 = u64::MAX / 4;

/// Replays the whole stored stream of `thread` through the client pipeline (chunk
/// expansion, verification, application): it must verify.
async fn assert_verifies(s: &Store, thread: &str) {
    let events = events_of(s, thread).await;
    let mut p = Pipeline::new();
    for (i, e) in events.into_iter().enumerate() {
        if let Err(err) = p.push(e) {
            panic!("thread {thread}: event {i} breaks the stream: {err}");
        }
    }
}

/// The kinds and runs of a thread's stored events, in order.
async fn kinds(s: &Store, thread: &str) -> Vec<(String, String)> {
    let stored = s.read(thread, 1).await.unwrap();
    stored
        .into_iter()
        .map(|e| (e.event.type_str().to_owned(), e.run_id))
        .collect()
}

/// One run at a time per thread: a leased start (a server's claim) while another run is in
/// progress (running, lease live) is refused with `thread_busy` and stores nothing; once
/// that run ends, or its lease expires (then it is closed as abandoned first), or it has
/// no lease, the start goes through and the stream still verifies. A thread with a run in
/// progress is not deleted.
async fn one_run_at_a_time_per_thread(open: Open) {
    let s = open().await;
    let other = open().await;
    let first = [started("t", "r1")];
    let r = s
        .append_if_new("t", Some("alice"), false, "r1", &first, FAR)
        .await;
    assert_eq!(r.unwrap(), FirstRun::Stored(1..2));
    // From this instance and another, by every leased start: refused, nothing stored.
    for store in [&s, &other] {
        let busy = store
            .append_leased("t", "r2", &[started("t", "r2")], FAR)
            .await;
        match busy {
            Err(e @ StoreError::ThreadBusy { .. }) => {
                assert_eq!(e.code(), "thread_busy");
                assert!(e.to_string().contains("\"r1\""), "{e}");
            }
            other => panic!("{other:?}"),
        }
        let claimed = store
            .claim_run_json(
                "t",
                Some("alice"),
                false,
                "r2",
                &[started("t", "r2")],
                &[],
                FAR,
            )
            .await;
        assert!(
            matches!(claimed, Err(StoreError::ThreadBusy { .. })),
            "{claimed:?}"
        );
        let deleted = store.delete_thread("t").await;
        assert!(
            matches!(deleted, Err(StoreError::ThreadBusy { .. })),
            "{deleted:?}"
        );
    }
    let info = s.thread("t").await.unwrap();
    assert_eq!((info.last_seq, info.run_count), (1, 1));
    assert_eq!(s.lease("t", "r2").await.unwrap(), None);
    // More of the running run is not a start: accepted.
    append_ok(&s, "t", "r1", &text("m1", &["hi"])).await;
    append_ok(&s, "t", "r1", &[finished("t", "r1")]).await;
    // Ended: the next run goes through.
    let r2 = other
        .claim_run_json(
            "t",
            Some("alice"),
            false,
            "r2",
            &[started("t", "r2")],
            &[],
            FAR,
        )
        .await;
    assert_eq!(r2.unwrap(), 6..7);
    // Its server dies: once the lease expired, the next start closes it as abandoned
    // first, in the same step.
    s.renew_lease("t", "r2", 5).await.unwrap();
    let r3 = s
        .append_leased("t", "r3", &[started("t", "r3")], FAR)
        .await
        .unwrap();
    assert_eq!(r3, 8..9);
    assert_eq!(s.run("t", "r2").await.unwrap().status, RunStatus::Error);
    assert_eq!(s.lease("t", "r2").await.unwrap(), None);
    match &s.read("t", 7).await.unwrap()[0] {
        e @ StoredEvent {
            event: Event::RunError(err),
            ..
        } => {
            assert_eq!(
                (e.run_id.as_str(), err.code.as_deref()),
                ("r2", Some("abandoned"))
            );
        }
        other => panic!("{other:?}"),
    }
    append_ok(&s, "t", "r3", &[finished("t", "r3")]).await;
    // A run written without a server (no lease) does not hold the thread either.
    append_ok(&s, "t", "lib", &[started("t", "lib")]).await;
    s.claim_run_json("t", None, true, "r4", &[started("t", "r4")], &[], FAR)
        .await
        .unwrap();
    assert_eq!(s.run("t", "lib").await.unwrap().status, RunStatus::Error);
    // A refused start after a stale run closes nothing: the refusal undoes it all.
    append_ok(&s, "t", "r4", &[finished("t", "r4")]).await;
    append_ok(&s, "t", "lib2", &[started("t", "lib2")]).await;
    let again = s.append_leased("t", "r4", &[started("t", "r4")], FAR).await;
    assert!(
        matches!(again, Err(StoreError::RunExists { .. })),
        "{again:?}"
    );
    assert_eq!(s.run("t", "lib2").await.unwrap().status, RunStatus::Running);
    append_ok(&s, "t", "lib2", &[finished("t", "lib2")]).await;
    assert_verifies(&s, "t").await;
    let got: Vec<String> = kinds(&s, "t")
        .await
        .into_iter()
        .map(|(k, r)| format!("{r}:{k}"))
        .collect();
    assert_eq!(
        got,
        [
            "r1:RUN_STARTED",
            "r1:TEXT_MESSAGE_START",
            "r1:TEXT_MESSAGE_CONTENT",
            "r1:TEXT_MESSAGE_END",
            "r1:RUN_FINISHED",
            "r2:RUN_STARTED",
            "r2:RUN_ERROR",
            "r3:RUN_STARTED",
            "r3:RUN_FINISHED",
            "lib:RUN_STARTED",
            "lib:RUN_ERROR",
            "r4:RUN_STARTED",
            "r4:RUN_FINISHED",
            "lib2:RUN_STARTED",
            "lib2:RUN_FINISHED",
        ]
    );
    // Nothing in progress: deleted.
    assert!(other.delete_thread("t").await.unwrap());
}

/// Many rounds of two instances (two connections for PostgreSQL, two writers for SQLite)
/// starting different runs on one thread at the same moment, and of a delete racing a
/// start: exactly one start wins each round, the other is `thread_busy`; a delete and a
/// start are serialised (the delete wins and the start finds no thread, never making it
/// again, or the start wins and the delete is `thread_busy`); the stream verifies.
async fn racing_runs_on_one_thread_are_serialised(open: Open) {
    let a = open().await;
    let b = open().await;
    let first = [started("t", "r0"), finished("t", "r0")];
    a.append_if_new("t", Some("alice"), false, "r0", &first, FAR)
        .await
        .unwrap();
    for round in 0..30 {
        let (x, y) = (format!("x{round}"), format!("y{round}"));
        let (ex, ey) = ([started("t", &x)], [started("t", &y)]);
        let (rx, ry) = tokio::join!(
            a.claim_run_json("t", Some("alice"), false, &x, &ex, &[], FAR),
            b.claim_run_json("t", Some("alice"), false, &y, &ey, &[], FAR),
        );
        let winner = match (&rx, &ry) {
            (Ok(_), Err(StoreError::ThreadBusy { .. })) => &x,
            (Err(StoreError::ThreadBusy { .. }), Ok(_)) => &y,
            other => panic!("round {round}: {other:?}"),
        };
        append_ok(&a, "t", winner, &text(&format!("m{round}"), &["a", "b"])).await;
        append_ok(&b, "t", winner, &[finished("t", winner)]).await;
    }
    assert_verifies(&a, "t").await;
    assert_eq!(b.runs("t").await.unwrap().len(), 31);
    // A delete racing a start.
    let (mut deleted, mut kept) = (0, 0);
    for round in 0..30 {
        let thread = format!("d{round}");
        let r0 = [started(&thread, "r0"), finished(&thread, "r0")];
        a.append_if_new(&thread, Some("alice"), false, "r0", &r0, FAR)
            .await
            .unwrap();
        let start = [started(&thread, "r1")];
        let (del, claim) = tokio::join!(
            b.delete_thread(&thread),
            a.claim_run_json(&thread, Some("alice"), false, "r1", &start, &[], FAR),
        );
        match (del, claim) {
            (Ok(true), Err(StoreError::UnknownThread(_))) => {
                deleted += 1;
                assert_unknown_thread(a.thread(&thread).await);
                assert_unknown_thread(b.runs(&thread).await);
                // A late append of the run makes nothing again.
                let late_events = [finished(&thread, "r1")];
                let late = a.append_to_run_json(&thread, "r1", &late_events, &[]);
                assert_unknown_thread(late.await);
                assert_unknown_thread(b.thread(&thread).await);
            }
            (Err(StoreError::ThreadBusy { .. }), Ok(range)) => {
                kept += 1;
                assert_eq!(range, 3..4);
                let info = b.thread(&thread).await.unwrap();
                assert_eq!(info.owner.as_deref(), Some("alice"));
                append_ok(&a, &thread, "r1", &[finished(&thread, "r1")]).await;
                assert_verifies(&b, &thread).await;
            }
            other => panic!("round {round}: {other:?}"),
        }
    }
    assert_eq!(deleted + kept, 30);
}

/// The writes a server makes after a thread's first run never make a thread: a claim of a
/// run needs the thread, owned by the caller (else `unknown_thread`, as for any unknown
/// thread); more of a run needs the run.
async fn server_writes_never_make_a_thread(open: Open) {
    let s = open().await;
    let start = [started("t", "r1")];
    let r = s.claim_run_json("t", Some("alice"), false, "r1", &start, &[], FAR);
    assert_unknown_thread(r.await);
    assert_unknown_thread(s.thread("t").await);
    let more_events = [custom(json!(1))];
    let more = s.append_to_run_json("t", "r1", &more_events, &[]);
    assert_unknown_thread(more.await);
    assert_unknown_thread(s.thread("t").await);
    s.append_if_new("t", Some("alice"), false, "r1", &start, FAR)
        .await
        .unwrap();
    append_ok(&s, "t", "r1", &[finished("t", "r1")]).await;
    // Another principal's thread: as unknown, nothing stored; an admin may.
    let r2 = [started("t", "r2")];
    let bob = s.claim_run_json("t", Some("bob"), false, "r2", &r2, &[], FAR);
    assert_unknown_thread(bob.await);
    let anon = s.claim_run_json("t", None, false, "r2", &r2, &[], FAR);
    assert_unknown_thread(anon.await);
    assert_eq!(s.thread("t").await.unwrap().last_seq, 2);
    let admin = s.claim_run_json("t", Some("root"), true, "r2", &r2, &[], FAR);
    assert_eq!(admin.await.unwrap(), 3..4);
    assert_eq!(s.lease("t", "r2").await.unwrap(), Some(FAR));
    // More of a stored run: accepted; of a run that is not stored: unknown run.
    let more_events = [custom(json!(2))];
    let more = s.append_to_run_json("t", "r2", &more_events, &[]);
    assert_eq!(more.await.unwrap(), 4..5);
    let ghost_events = [custom(json!(3))];
    let ghost = s.append_to_run_json("t", "ghost", &ghost_events, &[]);
    assert!(matches!(ghost.await, Err(StoreError::UnknownRun { .. })));
    let done_events = [finished("t", "r2")];
    let done = s.append_to_run_json("t", "r2", &done_events, &[]);
    assert_eq!(done.await.unwrap(), 5..6);
    assert_eq!(s.lease("t", "r2").await.unwrap(), None);
    assert_eq!(s.runs("t").await.unwrap().len(), 2);
    assert_verifies(&s, "t").await;
}

/// A thread id names a thread within its owner's namespace: two owners' threads of one id
/// are two threads (keys of `thread_key`), each with its own events, runs, lease and owner;
/// listed by owner with the id as `threadId`; events must name the key's id.
async fn owners_have_their_own_threads_of_one_id(open: Open) {
    use aguikit_store::{split_thread_key, thread_key};
    let s = open().await;
    let (alice, bob) = (thread_key(Some("alice"), "t"), thread_key(Some("bob"), "t"));
    for (key, owner) in [(&alice, "alice"), (&bob, "bob")] {
        let first = whole_run("t", "r1", owner);
        let r = s
            .append_if_new(key, Some(owner), false, "r1", &first, FAR)
            .await;
        assert_eq!(r.unwrap(), FirstRun::Stored(1..10), "{owner}");
    }
    let r2 = [started("t", "r2")];
    s.claim_run_json(&bob, Some("bob"), false, "r2", &r2, &[], FAR)
        .await
        .unwrap();
    // Bob's run in progress holds his thread, not alice's.
    s.claim_run_json(&alice, Some("alice"), false, "r2", &r2, &[], FAR)
        .await
        .unwrap();
    let (a, b) = (
        s.thread(&alice).await.unwrap(),
        s.thread(&bob).await.unwrap(),
    );
    assert_eq!((a.owner.as_deref(), a.id()), (Some("alice"), "t"));
    assert_eq!((b.owner.as_deref(), b.id()), (Some("bob"), "t"));
    assert_eq!((a.last_seq, b.last_seq), (10, 10));
    assert_eq!(split_thread_key(&a.thread_id), (Some("alice"), "t"));
    assert_eq!(
        replay(&events_of(&s, &alice).await[..9]).0[0]["content"],
        "Hello alice"
    );
    // No thread "t" without an owner.
    assert_unknown_thread(s.thread("t").await);
    // Listed by owner, named by their id.
    let query = ThreadQuery {
        owner: Some("bob".into()),
        ..Default::default()
    };
    let page = s.list_threads(&query).await.unwrap();
    assert_eq!(page.threads.len(), 1);
    let listed = serde_json::to_value(&page.threads[0]).unwrap();
    assert_eq!(
        (listed["threadId"].as_str(), listed["owner"].as_str()),
        (Some("t"), Some("bob"))
    );
    assert_eq!(first_page(&s, 10).await.threads.len(), 2);
    // Events name the thread by its id.
    let wrong = s.append(&alice, "x", &[started("u", "x")]).await;
    assert!(matches!(wrong, Err(StoreError::Invalid(_))), "{wrong:?}");
    // Deleting one leaves the other.
    let done = [finished("t", "r2")];
    append_ok(&s, &alice, "r2", &done).await;
    assert!(s.delete_thread(&alice).await.unwrap());
    assert_eq!(s.thread(&bob).await.unwrap().last_seq, 10);
    assert_eq!(s.lease(&bob, "r2").await.unwrap(), Some(FAR));
}

/// Every page of `scope`'s threads (of `owner`), `limit` at a time: (owner, id) sorted;
/// each listed thread's key is in `scope`.
async fn scoped_list(
    s: &Store,
    scope: Option<&str>,
    owner: Option<&str>,
    limit: usize,
) -> Vec<(String, String)> {
    use aguikit_store::thread_key_scope;
    let mut q = ThreadQuery {
        owner: owner.map(str::to_owned),
        scope: scope.map(str::to_owned),
        limit,
        ..Default::default()
    };
    let mut out = Vec::new();
    loop {
        let page = s.list_threads(&q).await.unwrap();
        for t in &page.threads {
            assert_eq!(thread_key_scope(&t.thread_id), scope, "{t:?}");
            out.push((t.owner.clone().unwrap_or_default(), t.id().to_owned()));
        }
        match page.next_cursor {
            Some(c) => q.cursor = Some(c),
            None => break,
        }
    }
    out.sort();
    out
}

/// Scopes (one per agent sharing the store) keep their threads apart: thread `t` of
/// alice in scope `a`, in scope `ab`, in scope `b` and unscoped are four threads, each
/// listed only in its scope (with its owner filter, a page at a time), named by its id;
/// deleting one leaves the others.
async fn scopes_have_their_own_threads_of_one_id(open: Open) {
    use aguikit_store::{scoped_thread_key, split_thread_key, thread_key_scope};
    let s = open().await;
    let scopes = [None, Some("a"), Some("ab"), Some("b"), Some("é'%_\"")];
    for scope in scopes {
        let key = scoped_thread_key(scope, Some("alice"), "t");
        let first = whole_run("t", "r1", scope.unwrap_or("none"));
        let r = s
            .append_if_new(&key, Some("alice"), false, "r1", &first, FAR)
            .await;
        assert_eq!(r.unwrap(), FirstRun::Stored(1..10), "{scope:?}");
        assert_eq!(thread_key_scope(&key), scope);
        assert_eq!(split_thread_key(&key), (Some("alice"), "t"));
    }
    // Two more of bob's in scope b, one ownerless in scope a.
    for id in ["u", "v"] {
        let key = scoped_thread_key(Some("b"), Some("bob"), id);
        s.append_if_new(
            &key,
            Some("bob"),
            false,
            "r1",
            &whole_run(id, "r1", "bob"),
            FAR,
        )
        .await
        .unwrap();
    }
    let ownerless = scoped_thread_key(Some("a"), None, "w");
    append_ok(&s, &ownerless, "r1", &whole_run("w", "r1", "w")).await;
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(o, i)| (o.to_string(), i.to_string()))
            .collect()
    };
    assert_eq!(
        scoped_list(&s, None, None, 10).await,
        pairs(&[("alice", "t")])
    );
    assert_eq!(
        scoped_list(&s, Some("a"), None, 1).await,
        pairs(&[("", "w"), ("alice", "t")])
    );
    assert_eq!(
        scoped_list(&s, Some("a"), Some("alice"), 1).await,
        pairs(&[("alice", "t")])
    );
    assert_eq!(
        scoped_list(&s, Some("ab"), None, 10).await,
        pairs(&[("alice", "t")])
    );
    assert_eq!(
        scoped_list(&s, Some("b"), None, 1).await,
        pairs(&[("alice", "t"), ("bob", "u"), ("bob", "v")])
    );
    assert_eq!(
        scoped_list(&s, Some("b"), Some("bob"), 10).await,
        pairs(&[("bob", "u"), ("bob", "v")])
    );
    assert_eq!(
        scoped_list(&s, Some("é'%_\""), None, 10).await,
        pairs(&[("alice", "t")])
    );
    assert_eq!(scoped_list(&s, Some("c"), None, 10).await, pairs(&[]));
    // Each holds its own run.
    for scope in scopes {
        let key = scoped_thread_key(scope, Some("alice"), "t");
        let content = &replay(&events_of(&s, &key).await).0[0]["content"];
        assert_eq!(content, &format!("Hello {}", scope.unwrap_or("none")));
    }
    // Events name the thread by its id, whatever its scope.
    let b = scoped_thread_key(Some("b"), Some("alice"), "t");
    let wrong = s.append(&b, "x", &[started("u", "x")]).await;
    assert!(matches!(wrong, Err(StoreError::Invalid(_))), "{wrong:?}");
    assert!(s.delete_thread(&b).await.unwrap());
    assert_unknown_thread(s.thread(&b).await);
    for scope in [None, Some("a"), Some("ab")] {
        let key = scoped_thread_key(scope, Some("alice"), "t");
        assert_eq!(s.thread(&key).await.unwrap().last_seq, 9, "{scope:?}");
    }
    assert_eq!(
        scoped_list(&s, Some("b"), None, 10).await,
        pairs(&[("bob", "u"), ("bob", "v")])
    );
}

/// A run that ends waiting on an interrupt (`RUN_FINISHED` with an `interrupt` outcome) is
/// `interrupted`, in its run and the thread's `last_status`, as stored (read back by another
/// instance); it holds nothing: the next run (its resume) starts at once, and ends
/// `finished`.
async fn interrupted_runs_are_listed_as_such(open: Open) {
    let s = open().await;
    let other = open().await;
    let paused = ev(
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r1",
        "outcome": {"type": "interrupt", "interrupts": [{"id": "i1", "reason": "approval"}]}}),
    );
    let r1 = [started("t", "r1"), paused];
    s.append_if_new("t", None, false, "r1", &r1, FAR)
        .await
        .unwrap();
    assert_eq!(
        other.run("t", "r1").await.unwrap().status,
        RunStatus::Interrupted
    );
    let info = other.thread("t").await.unwrap();
    assert_eq!(info.last_status, Some(RunStatus::Interrupted));
    let listed = serde_json::to_value(&first_page(&other, 10).await.threads[0]).unwrap();
    assert_eq!(listed["lastStatus"], "interrupted");
    assert_eq!(s.lease("t", "r1").await.unwrap(), None);
    let r2 = [started_from("t", "r2", "r1")];
    s.claim_run_json("t", None, true, "r2", &r2, &[], FAR)
        .await
        .unwrap();
    append_ok(&s, "t", "r2", &[finished("t", "r2")]).await;
    assert_eq!(
        other.run("t", "r2").await.unwrap().status,
        RunStatus::Finished
    );
    assert_eq!(
        RunStatus::parse("interrupted"),
        Some(RunStatus::Interrupted)
    );
    assert_eq!(RunStatus::Interrupted.as_str(), "interrupted");
    assert_verifies(&s, "t").await;
}

/// A `RUN_STARTED` whose input carries `messages`.
pub fn started_with(t: &str, r: &str, messages: Value) -> Event {
    ev(json!({"type": "RUN_STARTED", "threadId": t, "runId": r,
              "input": {"threadId": t, "runId": r, "messages": messages, "tools": [],
                        "context": [], "state": null, "forwardedProps": null}}))
}

/// A `RUN_ERROR` with `message`.
pub fn run_error(message: &str) -> Event {
    ev(json!({"type": "RUN_ERROR", "message": message}))
}

pub fn custom(v: Value) -> Event {
    ev(json!({"type": "CUSTOM", "name": "n", "value": v}))
}

async fn starting_an_existing_run_is_refused(open: Open) {
    let s = open().await;
    append_ok(&s, "t", "r1", &[started("t", "r1")]).await;
    // Running, then ended: both refused, nothing stored.
    for round in 0..2 {
        let before = s.thread("t").await.unwrap();
        match s
            .append("t", "r1", &[started("t", "r1"), custom(json!(1))])
            .await
        {
            Err(e @ StoreError::RunExists { .. }) => {
                assert_eq!(e.code(), "run_exists");
                assert!(e.to_string().contains("r1"), "{e}");
            }
            other => panic!("round {round}: {other:?}"),
        }
        let now = s.thread("t").await.unwrap();
        assert_eq!(
            (now.last_seq, now.run_count),
            (before.last_seq, before.run_count)
        );
        if round == 0 {
            append_ok(&s, "t", "r1", &[finished("t", "r1")]).await;
        }
    }
    let before = s.thread("t").await.unwrap();
    // A batch that does not begin with RUN_STARTED still creates a new run (library use)
    // and continues a running one.
    assert_eq!(
        append_ok(&s, "t", "lib", &[custom(json!(1))]).await,
        before.last_seq + 1..before.last_seq + 2
    );
    append_ok(&s, "t", "lib", &[custom(json!(2))]).await;
    assert_eq!(s.run("t", "lib").await.unwrap().status, RunStatus::Running);
    // ... but cannot be started afterwards: it exists.
    assert!(matches!(
        s.append("t", "lib", &[started("t", "lib")]).await,
        Err(StoreError::RunExists { .. })
    ));
    // The same run id in another thread is another run.
    assert_eq!(append_ok(&s, "u", "r1", &[started("u", "r1")]).await, 1..2);
    let kinds: Vec<String> = s
        .read("t", 1)
        .await
        .unwrap()
        .iter()
        .map(|e| e.event.type_str().to_owned())
        .collect();
    assert_eq!(kinds, ["RUN_STARTED", "RUN_FINISHED", "CUSTOM", "CUSTOM"]);
}

/// Two instances (two connections for PostgreSQL, two writers for SQLite) start the same
/// run at the same moment: exactly one wins, in new threads and in an existing one.
async fn racing_starts_of_one_run_have_one_winner(open: Open) {
    let a = open().await;
    let b = open().await;
    for round in 0..20 {
        let thread = if round % 2 == 0 {
            format!("new{round}")
        } else {
            "shared".to_owned()
        };
        let run = format!("r{round}");
        let events = [started(&thread, &run), custom(json!(round))];
        let (x, y) = tokio::join!(
            a.append(&thread, &run, &events),
            b.append(&thread, &run, &events)
        );
        let outcomes = [&x, &y];
        let won = outcomes.iter().filter(|o| o.is_ok()).count();
        let refused = outcomes
            .iter()
            .filter(|o| matches!(o, Err(StoreError::RunExists { .. })))
            .count();
        assert_eq!((won, refused), (1, 1), "round {round}: {x:?} {y:?}");
        let runs = a.runs(&thread).await.unwrap();
        assert_eq!(runs.iter().filter(|r| r.run_id == run).count(), 1);
        let starts = a
            .read(&thread, 1)
            .await
            .unwrap()
            .into_iter()
            .filter(|e| e.run_id == run && e.event.type_str() == "RUN_STARTED")
            .count();
        assert_eq!(starts, 1, "round {round}");
    }
    assert_eq!(a.runs("shared").await.unwrap().len(), 10);
    assert_eq!(b.thread("shared").await.unwrap().last_seq, 20);
}

/// A run's first events stored with the claim of its thread (`append_if_new`, what a
/// server does first with a run): a new (or empty) thread takes them, made with its
/// owner; a thread with events, or another owner's, is returned untouched.
async fn first_runs_of_new_threads_are_stored_with_their_claim(open: Open) {
    let s = open().await;
    let start = |run: &str| [started("t", run)];
    let r = s
        .append_if_new("t", Some("alice"), false, "r1", &start("r1"), 9_000)
        .await;
    assert_eq!(r.unwrap(), FirstRun::Stored(1..2));
    let info = s.thread("t").await.unwrap();
    assert_eq!(info.owner.as_deref(), Some("alice"));
    assert_eq!((info.last_seq, info.run_count), (1, 1));
    assert_eq!(s.lease("t", "r1").await.unwrap(), Some(9_000));
    // A new thread is as an append leaves it: title, status, times, the run and its events.
    let titled = [
        started_with(
            "n",
            "r1",
            json!([{"id": "u", "role": "user", "content": "Hi  there"}]),
        ),
        text("m", &["a", "b"]).remove(0),
    ];
    let r = s.append_if_new("n", None, false, "r1", &titled, 7).await;
    assert_eq!(r.unwrap(), FirstRun::Stored(1..3));
    let n = s.thread("n").await.unwrap();
    assert_eq!((n.last_seq, n.run_count, n.owner), (2, 1, None));
    assert_eq!(n.title.as_deref(), Some("Hi there"));
    assert_eq!(n.last_status, Some(RunStatus::Running));
    assert!(n.created_ms > 0 && n.updated_ms >= n.created_ms);
    let run = s.run("n", "r1").await.unwrap();
    assert_eq!(
        (run.first_seq, run.last_seq, run.parent_run_id),
        (1, 2, None)
    );
    assert_eq!(events_of(&s, "n").await, titled);
    assert_eq!(s.lease("n", "r1").await.unwrap(), Some(7));
    // A first run naming a parent in a new thread: the parent is unknown, nothing stored.
    let child = [started_from("p", "r2", "r1")];
    assert!(matches!(
        s.append_if_new("p", None, false, "r2", &child, 7).await,
        Err(StoreError::UnknownRun { .. })
    ));
    assert_eq!(s.thread("p").await.map(|t| t.last_seq).unwrap_or(0), 0);
    // Not new any more: the thread as it is, for its owner or anyone else; nothing stored.
    for (owner, any) in [(Some("alice"), false), (Some("bob"), false), (None, true)] {
        let r = s
            .append_if_new("t", owner, any, "r2", &start("r2"), 9_000)
            .await;
        assert_eq!(r.unwrap(), FirstRun::Existing(info.clone()), "{owner:?}");
    }
    assert_eq!(s.lease("t", "r2").await.unwrap(), None);
    // A claimed thread without events takes the first run of its owner (or of a caller
    // who may write everywhere), not another's.
    let claimed = s.claim_thread("c", Some("alice")).await.unwrap();
    let r = s
        .append_if_new("c", Some("bob"), false, "r1", &[started("c", "r1")], 1)
        .await;
    assert_eq!(r.unwrap(), FirstRun::Existing(claimed));
    let r = s
        .append_if_new("c", Some("root"), true, "r1", &[started("c", "r1")], 1)
        .await;
    assert_eq!(r.unwrap(), FirstRun::Stored(1..2));
    assert_eq!(s.thread("c").await.unwrap().owner.as_deref(), Some("alice"));
    // Concurrent first runs of a new thread by different owners, through two handles:
    // exactly one is stored, and the others see the thread it made, not theirs.
    let mut tasks = Vec::new();
    for i in 0..8 {
        let s = if i % 2 == 0 { s.clone() } else { open().await };
        tasks.push(tokio::spawn(async move {
            let (owner, run) = (format!("owner{i}"), format!("r{i}"));
            let first = [started("race", &run)];
            let r = s.append_if_new("race", Some(&owner), false, &run, &first, 1);
            let r = r.await.unwrap();
            (owner, r)
        }));
    }
    let mut stored = 0;
    for t in tasks {
        match t.await.unwrap() {
            (_, FirstRun::Stored(range)) => {
                assert_eq!(range, 1..2);
                stored += 1;
            }
            // Another's thread (its run may not be stored yet where the claim and the
            // append are two steps, as in the default).
            (owner, FirstRun::Existing(info)) => assert_ne!(info.owner, Some(owner)),
        }
    }
    assert_eq!(stored, 1);
    assert_eq!(s.thread("race").await.unwrap().last_seq, 1);
}

async fn threads_are_claimed_once(open: Open) {
    let s = open().await;
    let claimed = s.claim_thread("c", Some("alice")).await.unwrap();
    assert_eq!(claimed.thread_id, "c");
    assert_eq!(claimed.owner.as_deref(), Some("alice"));
    assert_eq!((claimed.last_seq, claimed.run_count), (0, 0));
    assert!(claimed.created_ms > 0);
    assert_eq!(claimed.updated_ms, claimed.created_ms);
    assert_eq!(
        (claimed.title.as_deref(), claimed.last_status),
        (None, None)
    );
    // Claimed again by someone else: unchanged, and the caller sees the owner.
    assert_eq!(s.claim_thread("c", Some("bob")).await.unwrap(), claimed);
    assert_eq!(s.claim_thread("c", None).await.unwrap(), claimed);
    assert_eq!(s.thread("c").await.unwrap(), claimed);
    // A claimed thread reads as an empty thread, and its tail sees the first append.
    assert!(s.read("c", 1).await.unwrap().is_empty());
    assert!(s.runs("c").await.unwrap().is_empty());
    let mut tail = s.tail("c", 1);
    append_ok(&s, "c", "r1", &[started("c", "r1")]).await;
    let first = next_within(
        &mut tail,
        "the tail of a claimed thread sees its first event",
    )
    .await;
    assert_eq!(first.seq, 1);
    let after = s.thread("c").await.unwrap();
    assert_eq!(after.owner.as_deref(), Some("alice"));
    assert_eq!((after.last_seq, after.run_count), (1, 1));
    assert_eq!(after.created_ms, claimed.created_ms);
    // Claiming a thread made by append changes nothing: it has no owner.
    append_ok(&s, "plain", "r1", &[started("plain", "r1")]).await;
    let plain = s.claim_thread("plain", Some("mallory")).await.unwrap();
    assert_eq!((plain.owner, plain.last_seq), (None, 1));
    // Claimed without an owner.
    assert_eq!(s.claim_thread("free", None).await.unwrap().owner, None);
    assert!(matches!(
        s.claim_thread("", Some("x")).await,
        Err(StoreError::Invalid(_))
    ));
    // Concurrent claims of a new thread: one owner, seen by all.
    let mut tasks = Vec::new();
    for i in 0..8 {
        let s = if i % 2 == 0 { s.clone() } else { open().await };
        tasks.push(tokio::spawn(async move {
            s.claim_thread("race", Some(&format!("owner{i}")))
                .await
                .unwrap()
        }));
    }
    let mut owners = Vec::new();
    for t in tasks {
        owners.push(t.await.unwrap().owner.unwrap());
    }
    assert!(owners.windows(2).all(|w| w[0] == w[1]), "{owners:?}");
    assert_eq!(
        s.thread("race").await.unwrap().owner.as_ref(),
        Some(&owners[0])
    );
    let ids = thread_ids(&s).await;
    assert_eq!(ids, ["c", "plain", "free", "race"]);
    // Runs that each claim a thread and append to it at once (claims and appends share
    // the store's write transactions): every thread keeps its own owner and events.
    let mut tasks = Vec::new();
    for i in 0..12 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            let thread = format!("busy{i}");
            let claimed = s
                .claim_thread(&thread, Some(&format!("u{i}")))
                .await
                .unwrap();
            append_ok(&s, &thread, "r1", &[started(&thread, "r1")]).await;
            claimed
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        let claimed = t.await.unwrap();
        assert_eq!(claimed.last_seq, 0, "busy{i} was claimed before its append");
        let after = s.thread(&format!("busy{i}")).await.unwrap();
        assert_eq!(after.owner, Some(format!("u{i}")));
        assert_eq!((after.last_seq, after.run_count), (1, 1));
    }
}

async fn threads_carry_title_status_and_times(open: Open) {
    let s = open().await;
    let messages = json!([
        {"id": "s", "role": "system", "content": "You are terse."},
        {"id": "a", "role": "assistant", "content": "Hi"},
        {"id": "u", "role": "user", "content": "  Plan\n\n a   trip\tto Oslo  "},
        {"id": "u2", "role": "user", "content": "second"}
    ]);
    append_ok(&s, "t", "r1", &[started_with("t", "r1", messages)]).await;
    let info = s.thread("t").await.unwrap();
    assert_eq!(info.title.as_deref(), Some("Plan a trip to Oslo"));
    assert_eq!(info.last_status, Some(RunStatus::Running));
    assert!(info.created_ms > 0 && info.updated_ms >= info.created_ms);
    append_ok(&s, "t", "r1", &[finished("t", "r1")]).await;
    let later = s.thread("t").await.unwrap();
    assert_eq!(later.last_status, Some(RunStatus::Finished));
    assert_eq!(later.created_ms, info.created_ms);
    assert!(later.updated_ms >= info.updated_ms);
    // Set once: a later run's first user message does not change it.
    append_ok(
        &s,
        "t",
        "r2",
        &[started_with(
            "t",
            "r2",
            json!([{"id": "x", "role": "user", "content": "Other"}]),
        )],
    )
    .await;
    assert_eq!(s.thread("t").await.unwrap().title, info.title);
    assert_eq!(
        s.thread("t").await.unwrap().last_status,
        Some(RunStatus::Running)
    );
    append_ok(&s, "t", "r2", &[run_error("boom")]).await;
    assert_eq!(
        s.thread("t").await.unwrap().last_status,
        Some(RunStatus::Error)
    );

    // No user text in the first run (no input; then only an image): the first later run
    // that has one gives the title, cut at 80 characters.
    append_ok(&s, "u", "r1", &[started("u", "r1"), finished("u", "r1")]).await;
    assert_eq!(s.thread("u").await.unwrap().title, None);
    let image = json!([{"id": "i", "role": "user", "content": [
        {"type": "image", "source": {"type": "url", "value": "https://example.com/a.png"}}
    ]}]);
    append_ok(&s, "u", "r2", &[started_with("u", "r2", image)]).await;
    assert_eq!(s.thread("u").await.unwrap().title, None);
    let long = format!("{} tail", "ä".repeat(79));
    append_ok(
        &s,
        "u",
        "r3",
        &[started_with(
            "u",
            "r3",
            json!([{"id": "l", "role": "user", "content": [
                {"type": "text", "text": long}
            ]}]),
        )],
    )
    .await;
    let title = s.thread("u").await.unwrap().title.unwrap();
    assert_eq!(title, format!("{} …", "ä".repeat(79)));
    assert_eq!(title.chars().count(), 81);

    // Serialized camelCase, like the rest.
    let v = serde_json::to_value(s.thread("t").await.unwrap()).unwrap();
    for key in [
        "threadId",
        "lastSeq",
        "runCount",
        "owner",
        "createdMs",
        "updatedMs",
        "title",
        "lastStatus",
    ] {
        assert!(v.get(key).is_some(), "{key} in {v}");
    }
    assert_eq!(v["lastStatus"], "error");
    let page = first_page(&s, 1).await;
    let v = serde_json::to_value(&page).unwrap();
    assert!(
        v["threads"].is_array() && v["nextCursor"].is_string(),
        "{v}"
    );
}

/// The ids of the threads `search` finds (of `owner`'s, or every owner's), in list order,
/// read a page of `limit` at a time.
async fn found(s: &Store, owner: Option<&str>, search: &str, limit: usize) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor = None;
    loop {
        let page = s
            .list_threads(&ThreadQuery {
                owner: owner.map(str::to_owned),
                limit,
                cursor: cursor.take(),
                search: Some(search.to_owned()),
                ..Default::default()
            })
            .await
            .unwrap();
        ids.extend(page.threads.iter().map(|t| t.id().to_owned()));
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => return ids,
        }
    }
}

/// `ThreadQuery::search` finds threads by title and by the text of their stored events
/// (ASCII letters without case, as a JSON string writes the text, never as a pattern),
/// within the owner asked for, page by page; `update_thread` renames a thread and records
/// where it was forked from, without moving it in the list.
async fn threads_are_searched_and_updated(open: Open) {
    let s = open().await;
    let user = |id: &str, text: &str| json!([{"id": id, "role": "user", "content": text}]);
    let mut run = vec![started_with("a", "r1", user("u1", "Plan a trip to Oslo"))];
    run.extend(text("m1", &["The fjo", "rds are lovely"]));
    run.push(finished("a", "r1"));
    append_ok(&s, "a", "r1", &run).await;
    let quoted = user("u2", "Say \"hi\" to Åsa, 100% sure");
    append_ok(
        &s,
        "b",
        "r1",
        &[started_with("b", "r1", quoted), finished("b", "r1")],
    )
    .await;
    append_ok(&s, "c", "r1", &[started("c", "r1"), finished("c", "r1")]).await;
    let bob = aguikit_store::thread_key(Some("bob"), "d");
    s.claim_thread(&bob, Some("bob")).await.unwrap();
    let owned = started_with("d", "r1", user("u3", "Oslo again"));
    append_ok(&s, &bob, "r1", &[owned, finished("d", "r1")]).await;
    let order = found(&s, None, "", 10).await;
    assert_eq!(
        order.len(),
        4,
        "an empty search lists every thread: {order:?}"
    );

    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    // The title, without case; another owner's thread only when every owner is listed.
    assert_eq!(sorted(found(&s, None, "oSLO", 10).await), ["a", "d"]);
    assert_eq!(found(&s, Some("bob"), "oslo", 10).await, ["d"]);
    let alice = found(&s, Some("alice"), "oslo", 10).await;
    assert!(alice.is_empty(), "{alice:?}");
    // The events' text: a delta whole, as stored.
    assert_eq!(found(&s, None, "RDS ARE", 10).await, ["a"]);
    // Quotes as a JSON string writes them, letters beyond ASCII as they are (with their
    // case), and no pattern characters.
    assert_eq!(found(&s, None, "say \"hi\"", 10).await, ["b"]);
    assert_eq!(found(&s, None, "Åsa", 10).await, ["b"]);
    assert!(found(&s, None, "åsa", 10).await.is_empty());
    assert_eq!(found(&s, None, "100%", 10).await, ["b"]);
    for nothing in ["o%s", "l_v", "zzz-no-such-text"] {
        let got = found(&s, None, nothing, 10).await;
        assert!(got.is_empty(), "{nothing:?} found {got:?}");
    }
    // Paged: every match once, in list order.
    let all = found(&s, None, "RUN_", 10).await;
    assert_eq!(all, order, "every thread has a run");
    assert_eq!(found(&s, None, "RUN_", 1).await, order);

    // A rename; the thread keeps its place and its activity time.
    let before = s.thread("a").await.unwrap();
    let rename = ThreadUpdate {
        title: Some("Fjord weekend".into()),
        ..Default::default()
    };
    let after = s.update_thread("a", &rename).await.unwrap();
    assert_eq!(after.title.as_deref(), Some("Fjord weekend"));
    assert_eq!(after.updated_ms, before.updated_ms);
    assert_eq!(after.last_seq, before.last_seq);
    assert_eq!(after.fork_of, None);
    assert_eq!(s.thread("a").await.unwrap(), after);
    assert_eq!(found(&s, None, "", 10).await, order);
    assert_eq!(found(&s, None, "weekend", 10).await, ["a"]);
    // A fork's origin, kept with the title it had.
    let fork = ForkOf {
        thread_id: "a".into(),
        run_id: "r1".into(),
    };
    let update = ThreadUpdate {
        fork_of: Some(fork.clone()),
        ..Default::default()
    };
    let b = s.update_thread("b", &update).await.unwrap();
    assert_eq!(b.fork_of.as_ref(), Some(&fork));
    assert!(
        b.title.as_deref().is_some_and(|t| t.starts_with("Say")),
        "{b:?}"
    );
    let v = serde_json::to_value(&b).unwrap();
    assert_eq!(v["forkOf"], json!({"threadId": "a", "runId": "r1"}));
    assert_eq!(serde_json::to_value(&after).unwrap()["forkOf"], Value::Null);
    // Both, and the next run's first user message does not take the title back.
    let both = ThreadUpdate {
        title: Some("Named".into()),
        fork_of: Some(ForkOf {
            thread_id: "b".into(),
            run_id: "r1".into(),
        }),
    };
    s.update_thread("c", &both).await.unwrap();
    let next = started_with("c", "r2", user("u4", "something else"));
    append_ok(&s, "c", "r2", &[next, finished("c", "r2")]).await;
    let c = s.thread("c").await.unwrap();
    assert_eq!(c.title.as_deref(), Some("Named"));
    assert_eq!(c.fork_of.map(|f| f.thread_id).as_deref(), Some("b"));
    // Nothing asked: nothing changes. Listed as the thread is.
    let same = s
        .update_thread("b", &ThreadUpdate::default())
        .await
        .unwrap();
    assert_eq!(same, s.thread("b").await.unwrap());
    let listed = found(&s, None, "", 10).await;
    assert_eq!(listed.len(), 4);
    let page = s.list_threads(&ThreadQuery::default()).await.unwrap();
    let c_listed = page.threads.iter().find(|t| t.id() == "c").unwrap();
    assert_eq!(
        c_listed.fork_of.as_ref().map(|f| f.run_id.as_str()),
        Some("r1")
    );
    // Unknown threads, another owner's key included.
    assert_unknown_thread(s.update_thread("nope", &rename).await);
    assert_unknown_thread(s.update_thread("d", &rename).await);
    assert_eq!(
        s.thread(&bob).await.unwrap().title.as_deref(),
        Some("Oslo again")
    );
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// Waits until the clock is past `ms`, so that the next append is strictly newer.
async fn pass(ms: u64) {
    while now_ms() <= ms {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Every page of a listing, following the cursors.
async fn all_pages(
    s: &Arc<dyn EventStore>,
    owner: Option<&str>,
    limit: usize,
) -> Vec<Vec<ThreadInfo>> {
    let mut pages = Vec::new();
    let mut cursor = None;
    loop {
        let page = s
            .list_threads(&ThreadQuery {
                owner: owner.map(str::to_owned),
                limit,
                cursor: cursor.take(),
                ..Default::default()
            })
            .await
            .unwrap();
        pages.push(page.threads);
        assert!(pages.len() <= 1000, "the cursors never end");
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    pages
}

fn in_list_order(list: &[ThreadInfo]) -> bool {
    list.windows(2).all(|w| {
        (std::cmp::Reverse(w[0].updated_ms), &w[0].thread_id)
            < (std::cmp::Reverse(w[1].updated_ms), &w[1].thread_id)
    })
}

async fn threads_are_paged_newest_first(open: Open) {
    let s = open().await;
    let ids: Vec<String> = (0..60).map(|i| format!("p{i:02}")).collect();
    for id in &ids {
        append_ok(&s, id, "r", &[started(id, "r")]).await;
    }
    let pages = all_pages(&s, None, 25).await;
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [25, 25, 10]);
    let listed: Vec<ThreadInfo> = pages.into_iter().flatten().collect();
    assert!(in_list_order(&listed));
    let mut seen: Vec<&str> = listed.iter().map(|t| t.thread_id.as_str()).collect();
    seen.sort();
    assert_eq!(seen, ids);
    // The same listing, one page at a time or all at once.
    let one = all_pages(&s, None, 1).await;
    assert_eq!(one.len(), 60);
    assert_eq!(one.into_iter().flatten().collect::<Vec<_>>(), listed);
    let all = first_page(&s, 5000).await;
    assert_eq!((all.threads.len(), all.next_cursor), (60, None));
    let default = s.list_threads(&ThreadQuery::default()).await.unwrap();
    assert_eq!(default.threads.len(), 50);
    assert!(default.next_cursor.is_some());

    // Activity moves a thread to the front.
    pass(listed.iter().map(|t| t.updated_ms).max().unwrap()).await;
    append_ok(&s, "p00", "r", &[custom(json!(1))]).await;
    let first = first_page(&s, 2).await;
    assert_eq!(first.threads[0].thread_id, "p00");
    assert!(first.threads[0].updated_ms > first.threads[1].updated_ms);

    // By owner.
    for (id, owner) in [
        ("o1", "alice"),
        ("o2", "alice"),
        ("o3", "alice"),
        ("o4", "bob"),
    ] {
        s.claim_thread(id, Some(owner)).await.unwrap();
    }
    let alice = all_pages(&s, Some("alice"), 2).await;
    assert_eq!(alice.iter().map(Vec::len).collect::<Vec<_>>(), [2, 1]);
    let mut mine: Vec<String> = alice.into_iter().flatten().map(|t| t.thread_id).collect();
    mine.sort();
    assert_eq!(mine, ["o1", "o2", "o3"]);
    let bob = all_pages(&s, Some("bob"), 10).await;
    assert_eq!(
        bob.concat()
            .iter()
            .map(|t| t.thread_id.as_str())
            .collect::<Vec<_>>(),
        ["o4"]
    );
    assert!(all_pages(&s, Some("nobody"), 10).await.concat().is_empty());
    assert_eq!(all_pages(&s, None, 1000).await.concat().len(), 64);

    // Malformed cursors.
    for bad in ["not a cursor", "zz", "3132", "ff3a78", "e282ac"] {
        match s
            .list_threads(&ThreadQuery {
                cursor: Some(bad.into()),
                ..Default::default()
            })
            .await
        {
            Err(e @ StoreError::Invalid(_)) => assert_eq!(e.code(), "invalid_input"),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
}

async fn deleted_threads_are_gone(open: Open) {
    let s = open().await;
    let other = open().await;
    s.claim_thread("t", Some("alice")).await.unwrap();
    append_ok(&s, "t", "r1", &whole_run("t", "r1", "a")).await;
    append_ok(&s, "t", "r2", &[started_from("t", "r2", "r1")]).await;
    s.renew_lease("t", "r2", 5_000).await.unwrap();
    append_ok(&s, "keep", "r1", &[started("keep", "r1")]).await;
    let mut here = s.tail("t", 1);
    let mut there = other.tail("t", 9);
    for seq in 1..=10 {
        assert_eq!(here.next().await.unwrap().unwrap().seq, seq);
    }
    for seq in 9..=10 {
        assert_eq!(there.next().await.unwrap().unwrap().seq, seq);
    }

    assert!(s.delete_thread("t").await.unwrap());
    assert!(!s.delete_thread("t").await.unwrap());
    assert!(!other.delete_thread("never").await.unwrap());
    // Live tails end, here and on the other instance.
    for tail in [&mut here, &mut there] {
        let end = tokio::time::timeout(Duration::from_secs(10), tail.next())
            .await
            .expect("the tail of a deleted thread ends");
        assert!(
            matches!(end, Some(Err(StoreError::UnknownThread(_)))),
            "{end:?}"
        );
        assert!(tail.next().await.is_none());
    }
    // Every read is as for an unknown thread.
    for store in [&s, &other] {
        assert_unknown_thread(store.thread("t").await);
        assert_unknown_thread(store.read("t", 1).await);
        assert_unknown_thread(store.read_raw("t", 1, 10).await);
        assert_unknown_thread(store.read_until_corrupt("t", 1).await);
        assert_unknown_thread(store.runs("t").await);
        assert_unknown_thread(store.compacted("t").await);
        assert!(matches!(
            store.tail("t", 1).next().await,
            Some(Err(StoreError::UnknownThread(_)))
        ));
        assert_eq!(store.lease("t", "r2").await.unwrap(), None);
        let ids = thread_ids(store).await;
        assert_eq!(ids, ["keep"]);
        let page = store.list_threads(&ThreadQuery::default()).await.unwrap();
        assert_eq!(page.threads.len(), 1);
    }
    // The id starts again from scratch, without owner, title or old runs.
    assert_eq!(append_ok(&s, "t", "r1", &[started("t", "r1")]).await, 1..2);
    let info = s.thread("t").await.unwrap();
    assert_eq!((info.owner, info.last_seq, info.run_count), (None, 1, 1));
    assert_eq!(s.runs("t").await.unwrap()[0].parent_run_id, None);
    assert_eq!(other.read("t", 1).await.unwrap().len(), 1);
    assert_eq!(other.lease("t", "r2").await.unwrap(), None);
    assert_eq!(s.read("keep", 1).await.unwrap().len(), 1);
    // And can be claimed again.
    assert!(s.delete_thread("t").await.unwrap());
    assert_eq!(
        s.claim_thread("t", Some("bob"))
            .await
            .unwrap()
            .owner
            .as_deref(),
        Some("bob")
    );
}

/// JSON that no decoder accepts: 200 nested arrays (past serde_json's depth limit), then
/// bytes that are not UTF-8.
fn undecodable() -> [Vec<u8>; 2] {
    let deep = format!(
        r#"{{"type":"CUSTOM","name":"deep","value":{}{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    assert!(serde_json::from_slice::<Value>(deep.as_bytes()).is_err());
    [
        deep.into_bytes(),
        b"{\"type\":\"CUSTOM\",\"name\":\"\xff\xfe\"}".to_vec(),
    ]
}

async fn undecodable_events_hide_nothing(b: Backend) {
    let s = (b.open)().await;
    let mut events = vec![started("t", "r")];
    events.extend((1..10).map(|i| custom(json!(i))));
    append_ok(&s, "t", "r", &events).await;
    let [deep, not_utf8] = undecodable();
    (b.corrupt)("t".into(), 5, deep).await;
    (b.corrupt)("t".into(), 8, not_utf8).await;

    match s.read("t", 1).await {
        Err(e @ StoreError::Corrupt { seq: 5, .. }) => {
            assert_eq!(e.code(), "corrupt_event");
            assert!(e.to_string().contains("sequence 5"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    let seqs = |v: &[aguikit_store::StoredEvent]| v.iter().map(|e| e.seq).collect::<Vec<_>>();
    let (before, error) = s.read_until_corrupt("t", 1).await.unwrap();
    assert_eq!(seqs(&before), [1, 2, 3, 4]);
    assert_eq!(before[3].event, events[3]);
    assert!(
        matches!(error, Some(StoreError::Corrupt { seq: 5, .. })),
        "{error:?}"
    );
    let (before, error) = s.read_until_corrupt("t", 6).await.unwrap();
    assert_eq!(seqs(&before), [6, 7]);
    assert!(
        matches!(error, Some(StoreError::Corrupt { seq: 8, .. })),
        "{error:?}"
    );
    let (after, error) = s.read_until_corrupt("t", 9).await.unwrap();
    assert_eq!((seqs(&after), error.is_none()), (vec![9, 10], true));
    // The raw JSON is still there for whoever wants to look.
    assert_eq!(s.read_raw("t", 1, 100).await.unwrap().len(), 10);

    // Tails yield everything before the damaged event, then its error, then end.
    for (from, expect, bad) in [(1, vec![1, 2, 3, 4], 5), (6, vec![6, 7], 8)] {
        let mut tail = s.tail("t", from);
        let mut got = Vec::new();
        let error = loop {
            match tail.next().await {
                Some(Ok(e)) => got.push(e.seq),
                Some(Err(e)) => break e,
                None => panic!("the tail ended without an error"),
            }
        };
        assert_eq!(got, expect);
        assert!(
            matches!(error, StoreError::Corrupt { seq, .. } if seq == bad),
            "{error:?}"
        );
        assert!(tail.next().await.is_none());
    }

    // Past a tail's page: the 1,499 events before the damage all arrive.
    let many: Vec<Event> = (0..2000).map(|i| custom(json!(i))).collect();
    append_ok(&s, "big", "r", &many).await;
    (b.corrupt)("big".into(), 1500, undecodable()[0].clone()).await;
    let mut tail = s.tail("big", 1);
    let mut n = 0u64;
    loop {
        match tail.next().await {
            Some(Ok(e)) => {
                n += 1;
                assert_eq!(e.seq, n);
            }
            Some(Err(StoreError::Corrupt { seq: 1500, .. })) => break,
            other => panic!("after {n}: {other:?}"),
        }
    }
    assert_eq!(n, 1499);
    assert!(tail.next().await.is_none());
    let (before, error) = s.read_until_corrupt("big", 1).await.unwrap();
    assert_eq!((before.len(), error.is_some()), (1499, true));
}

async fn sound_stores_pass_their_checks(open: Open) {
    let s = open().await;
    s.health().await.unwrap();
    s.check_integrity().await.unwrap();
    append_ok(&s, "t", "r", &whole_run("t", "r", "a")).await;
    s.claim_thread("c", Some("o")).await.unwrap();
    s.health().await.unwrap();
    s.check_integrity().await.unwrap();
}

/// Every case of the suite, by name.
pub fn cases() -> Vec<(&'static str, Case)> {
    // Most cases need only to open the store; the others get the whole backend.
    macro_rules! case {
        ($f:ident) => {
            (stringify!($f), (|b: Backend| Box::pin($f(b.open))) as Case)
        };
        (backend $f:ident) => {
            (stringify!($f), (|b: Backend| Box::pin($f(b))) as Case)
        };
    }
    vec![
        case!(append_assigns_contiguous_sequences),
        case!(empty_append_is_a_no_op),
        case!(reads_from_any_sequence),
        case!(events_round_trip_verbatim),
        case!(events_with_their_json_are_stored_as_given),
        case!(json_over_several_lines_is_stored_as_given),
        case!(claims_store_the_json_given),
        case!(batches_of_any_size_keep_their_order),
        case!(runs_status_and_lineage),
        case!(bad_appends_are_rejected_and_change_nothing),
        case!(sql_injection_is_stored_verbatim),
        case!(threads_are_listed),
        case!(compaction_replays_like_the_log),
        case!(tail_replays_then_follows),
        case!(tail_reports_bad_start),
        case!(tail_follows_another_instance),
        case!(concurrent_appends_get_distinct_contiguous_sequences),
        case!(refused_appends_in_a_burst_undo_nothing_else),
        case!(data_survives_reopening),
        case!(expired_leases_abandon_running_runs),
        case!(ended_runs_drop_their_leases),
        case!(claims_record_their_lease_and_refused_ones_nothing),
        case!(starting_an_existing_run_is_refused),
        case!(racing_starts_of_one_run_have_one_winner),
        case!(threads_are_claimed_once),
        case!(first_runs_of_new_threads_are_stored_with_their_claim),
        case!(threads_carry_title_status_and_times),
        case!(threads_are_paged_newest_first),
        case!(threads_are_searched_and_updated),
        case!(deleted_threads_are_gone),
        case!(one_run_at_a_time_per_thread),
        case!(racing_runs_on_one_thread_are_serialised),
        case!(server_writes_never_make_a_thread),
        case!(owners_have_their_own_threads_of_one_id),
        case!(scopes_have_their_own_threads_of_one_id),
        case!(interrupted_runs_are_listed_as_such),
        case!(backend undecodable_events_hide_nothing),
        case!(sound_stores_pass_their_checks),
    ]
}
