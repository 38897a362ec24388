//! Session against a scripted loopback server: the conversation across runs, typed updates,
//! tool-call progress, state, interrupts and resume, failures, abort and middleware (the run
//! report and terminal renderer built on it are tested in `aguikit`).

use aguikit_client::middleware::{self, EventStream, FilterToolCalls, Next};
use aguikit_client::{ClientError, HttpAgent, RunParams, RunStatus, Session, Update};
use aguikit_core::{Event, Message, ResumeEntry, RunAgentInput};
use aguikit_peers::scripted::*;
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

async fn updates_of(session: &mut Session) -> Vec<Update> {
    let mut run = session.run().expect("the run starts");
    let mut out = Vec::new();
    while let Some(u) = run.next().await {
        out.push(u);
    }
    out
}

/// A session with the scripted server's agent.
fn session_at(server: &TestServer) -> Session {
    Session::new(HttpAgent::new(&server.url).unwrap())
}

fn texts(session: &Session) -> Vec<(String, String)> {
    session
        .messages()
        .map(|m| {
            (
                m.role().as_str().to_owned(),
                m.text().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_chat_run_builds_the_conversation_and_sends_it_next_time() {
    let server = serve(|n, _| {
        let run = format!("r{n}");
        let mut steps = vec![
            sse_head(),
            data(&run_started(&run)),
            data(&text_start(&format!("m{n}"))),
            data(&text_content(&format!("m{n}"), "Hel")),
            data(&text_content(&format!("m{n}"), "lo")),
            data(&text_end(&format!("m{n}"))),
        ];
        steps.push(data(&format!(
            r#"{{"type":"RUN_FINISHED","threadId":"t","runId":"{run}","result":{{"n":{n}}}}}"#
        )));
        steps.push(Step::End);
        steps
    })
    .await;
    let agent = HttpAgent::new(&server.url).unwrap();
    let mut session = Session::with_thread_id(agent, "t");
    let uid = session.add_user_message("hi");
    let updates = updates_of(&mut session).await;

    let deltas: Vec<&str> = updates
        .iter()
        .filter_map(|u| match u {
            Update::TextDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["Hel", "lo"]);
    assert!(matches!(
        updates.first(),
        Some(Update::Event(Event::RunStarted(_)))
    ));
    assert!(matches!(
        updates.last(),
        Some(Update::Ended {
            status: RunStatus::Finished { .. }
        })
    ));
    assert!(updates.iter().any(|u| matches!(u, Update::MessagesChanged)));
    assert!(updates.iter().any(|u| matches!(
        u,
        Update::RunFinished { status: RunStatus::Finished { result: Some(r), .. } } if r == &json!({"n": 0})
    )));
    assert_eq!(
        texts(&session),
        [
            ("user".to_owned(), "hi".to_owned()),
            ("assistant".to_owned(), "Hello".to_owned())
        ]
    );
    assert_eq!(session.result(), Some(&json!({"n": 0})));
    assert_eq!(session.status().map(RunStatus::name), Some("finished"));

    session.add_message(Message::user("u2", "again"));
    updates_of(&mut session).await;
    let reqs = server.requests();
    let first = reqs[0].json();
    assert_eq!(first["threadId"], "t");
    assert_eq!(first["protocolVersion"], "1.0");
    assert_eq!(
        first["messages"],
        json!([{"id": uid, "role": "user", "content": "hi"}])
    );
    assert_eq!(first["tools"], json!([]));
    assert_eq!(first["forwardedProps"], json!({}));
    let second = reqs[1].json();
    let roles: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_ne!(first["runId"], second["runId"]);
    assert_eq!(session.message_count(), 4);
}

#[tokio::test]
async fn tool_call_arguments_are_parsed_while_they_stream() {
    let server = serve(|_, _| {
        sse_run(&[
            &run_started("r1"),
            r#"{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"get_weather"}"#,
            r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"city\": \"Ber"}"#,
            r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"lin\", \"unit\""}"#,
            r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":": \"c\"}"}"#,
            r#"{"type":"TOOL_CALL_END","toolCallId":"c1"}"#,
            &run_finished("r1"),
        ])
    })
    .await;
    let mut session = session_at(&server);
    let updates = updates_of(&mut session).await;
    let partial: Vec<Option<Value>> = updates
        .iter()
        .filter_map(|u| match u {
            Update::ToolCallArgs {
                partial_args, name, ..
            } => {
                assert_eq!(name, "get_weather");
                Some(partial_args.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        partial,
        [
            Some(json!({"city": "Ber"})),
            Some(json!({"city": "Berlin"})),
            Some(json!({"city": "Berlin", "unit": "c"})),
        ]
    );
    assert!(updates.iter().any(|u| matches!(
        u,
        Update::ToolCallEnded { args, .. } if args == &json!({"city": "Berlin", "unit": "c"})
    )));
    // Started, never answered in this run: left to the client (a front-end tool).
    match session.status() {
        Some(RunStatus::Finished {
            pending_tool_call_ids,
            ..
        }) => assert_eq!(pending_tool_call_ids, &["c1"]),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn state_changes_are_applied_and_sent_back() {
    let server = serve(|n, _| {
        if n == 0 {
            vec![
                sse_head(),
                data(&run_started("r1")),
                data(r#"{"type":"STATE_SNAPSHOT","snapshot":{"n":0,"items":[]}}"#),
                data(r#"{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/n","value":1},{"op":"add","path":"/items/-","value":"a"}]}"#),
                // A failing patch is skipped, the run goes on (AP12).
                data(r#"{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/missing"}]}"#),
                data(&run_finished("r1")),
                Step::End,
            ]
        } else {
            chat("r2", "ok")
        }
    })
    .await;
    let mut session = session_at(&server);
    let mut run = session.run().unwrap();
    let mut seen = Vec::new();
    while let Some(u) = run.next().await {
        if matches!(u, Update::StateChanged) {
            seen.push(run.session().state().clone());
        }
    }
    assert_eq!(run.apply_warnings().len(), 1, "{:?}", run.apply_warnings());
    assert!(run.apply_warnings()[0].starts_with("AP12"));
    drop(run);
    assert_eq!(
        seen,
        [
            json!({"n": 0, "items": []}),
            json!({"n": 1, "items": ["a"]})
        ]
    );
    assert_eq!(session.state(), &json!({"n": 1, "items": ["a"]}));
    updates_of(&mut session).await;
    assert_eq!(
        server.requests()[1].json()["state"],
        json!({"n": 1, "items": ["a"]})
    );
}

fn interrupted_run(run: &str, expires_at: &str) -> Vec<Step> {
    vec![
        sse_head(),
        data(&run_started(run)),
        data(&format!(
            r#"{{"type":"RUN_FINISHED","threadId":"t","runId":"{run}","outcome":{{"type":"interrupt","interrupts":[{{"id":"i1","reason":"tool_call","toolCallId":"c1","expiresAt":"{expires_at}"}},{{"id":"i2","reason":"confirmation","message":"Sure?"}}]}}}}"#
        )),
        Step::End,
    ]
}

/// A server whose first run ends in [`interrupted_run`] (interrupt `i1` expiring at
/// `expires_at`) and whose next runs chat, and a session with its agent.
async fn interrupted_then_chat(expires_at: &'static str) -> (TestServer, Session) {
    let server = serve(move |n, _| match n {
        0 => interrupted_run("r1", expires_at),
        _ => chat("r2", "done"),
    })
    .await;
    let session = session_at(&server);
    (server, session)
}

#[tokio::test]
async fn an_interrupted_thread_is_resumed_only_with_answers_to_everything() {
    let (server, mut session) = interrupted_then_chat("2999-01-01T00:00:00Z").await;
    session.add_user_message("delete it");
    let status = session.run().unwrap().complete().await;
    match &status {
        RunStatus::Interrupted { interrupts } => assert_eq!(interrupts.len(), 2),
        other => panic!("{other:?}"),
    }
    assert_eq!(session.pending_interrupts().len(), 2);

    // The gate: nothing is sent while interrupts are unanswered.
    match session.run() {
        Err(e @ ClientError::UnansweredInterrupts { .. }) => assert_eq!(
            e.to_string(),
            "Thread has 2 pending interrupt(s) not addressed by resume: i1, i2"
        ),
        other => panic!("{:?}", other.map(|_| ())),
    }
    assert!(matches!(
        session.resume(vec![ResumeEntry::cancelled("i2")]),
        Err(ClientError::UnansweredInterrupts { ids }) if ids == ["i1"]
    ));
    assert!(matches!(
        session.resume(vec![
            ResumeEntry::cancelled("i2"),
            ResumeEntry::cancelled("i1"),
            ResumeEntry::cancelled("i9"),
        ]),
        Err(ClientError::UnknownInterrupts { .. })
    ));
    assert_eq!(server.requests().len(), 1);

    let answers = vec![
        ResumeEntry::cancelled("i2"),
        ResumeEntry::resolved("i1", json!({"approved": true})),
    ];
    let status = session.resume(answers).unwrap().complete().await;
    assert_eq!(status.name(), "finished");
    assert!(session.pending_interrupts().is_empty());
    let body = server.requests()[1].json();
    assert_eq!(
        body["resume"],
        json!([
            {"interruptId": "i1", "status": "resolved", "payload": {"approved": true}},
            {"interruptId": "i2", "status": "cancelled"}
        ])
    );
    assert_eq!(body["threadId"], session.thread_id());
}

#[tokio::test]
async fn an_expired_interrupt_can_only_be_cancelled() {
    let (_server, mut session) = interrupted_then_chat("2001-01-01T00:00:00Z").await;
    session.run().unwrap().complete().await;
    let err = session
        .resume(vec![
            ResumeEntry::resolved("i1", json!(true)),
            ResumeEntry::resolved("i2", json!(true)),
        ])
        .map(|_| ())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Interrupt i1 expired at 2001-01-01T00:00:00Z and can no longer be answered. Cancel it to continue the thread."
    );
    let status = session
        .resume(vec![
            ResumeEntry::cancelled("i1"),
            ResumeEntry::resolved("i2", json!(true)),
        ])
        .unwrap()
        .complete()
        .await;
    assert_eq!(status.name(), "finished");
}

#[tokio::test]
async fn run_error_failures_and_incomplete_streams_are_told_apart() {
    // RUN_ERROR from the agent: errored, pending interrupts untouched (I2).
    let server = serve(|n, _| match n {
        0 => interrupted_run("r1", "2999-01-01"),
        _ => sse_run(&[
            &run_started("r2"),
            r#"{"type":"RUN_ERROR","message":"model overloaded","code":"overloaded"}"#,
        ]),
    })
    .await;
    let mut session = session_at(&server);
    session.run().unwrap().complete().await;
    let status = session
        .resume(vec![
            ResumeEntry::cancelled("i1"),
            ResumeEntry::cancelled("i2"),
        ])
        .unwrap()
        .complete()
        .await;
    match status {
        RunStatus::Errored { message, code } => {
            assert_eq!(message, "model overloaded");
            assert_eq!(code.as_deref(), Some("overloaded"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(session.pending_interrupts().len(), 2);

    // A protocol violation: failed, with what came before it applied.
    let server = serve(|_, _| {
        sse_run(&[
            &run_started("r1"),
            &text_start("m1"),
            &text_content("m1", "kept"),
            &text_content("ghost", "boo"),
            &run_finished("r1"),
        ])
    })
    .await;
    let mut session = session_at(&server);
    let updates = updates_of(&mut session).await;
    let status = session.status().unwrap().clone();
    let error = status.error().expect("failed").to_string();
    assert!(
        error.starts_with("event 3 (TEXT_MESSAGE_CONTENT): V16"),
        "{error}"
    );
    assert!(matches!(
        updates.last(),
        Some(Update::Ended {
            status: RunStatus::Failed { .. }
        })
    ));
    assert!(
        updates
            .iter()
            .any(|u| matches!(u, Update::RunFailed { .. }))
    );
    assert_eq!(
        texts(&session),
        [("assistant".to_owned(), "kept".to_owned())]
    );

    // No terminal event: accepted, incomplete, what came is kept.
    let server = serve(|_, _| {
        sse_run(&[
            &run_started("r1"),
            &text_start("m1"),
            &text_content("m1", "half"),
        ])
    })
    .await;
    let mut session = session_at(&server);
    let status = session.run().unwrap().complete().await;
    assert!(matches!(status, RunStatus::Incomplete));
    assert_eq!(
        texts(&session),
        [("assistant".to_owned(), "half".to_owned())]
    );
}

#[tokio::test]
async fn abort_and_drop_leave_an_honest_status() {
    let server = serve(|_, _| vec![sse_head(), data(&run_started("r1")), Step::UntilClosed]).await;
    let mut session = session_at(&server);
    let mut run = session.run().unwrap();
    let mut updates = Vec::new();
    while let Some(u) = run.next().await {
        if matches!(u, Update::RunStarted { .. }) {
            run.abort();
        }
        updates.push(u);
    }
    drop(run);
    assert!(matches!(session.status(), Some(RunStatus::Aborted)));
    assert!(updates.iter().any(|u| matches!(
        u,
        Update::Event(Event::RunError(e)) if e.code.as_deref() == Some("abort")
    )));

    // Dropped after the run finished but before the stream ended: finished.
    let server = serve(|_, _| {
        vec![
            sse_head(),
            data(&run_started("r1")),
            data(&run_finished("r1")),
            Step::UntilClosed,
        ]
    })
    .await;
    let mut session = session_at(&server);
    let mut run = session.run().unwrap();
    while let Some(u) = run.next().await {
        if matches!(u, Update::RunFinished { .. }) {
            break;
        }
    }
    drop(run);
    assert_eq!(session.status().map(RunStatus::name), Some("finished"));

    // Dropped mid-run: aborted.
    let mut run = session.run().unwrap();
    let _ = run.next().await;
    drop(run);
    assert_eq!(session.status().map(RunStatus::name), Some("aborted"));
}

#[tokio::test]
async fn middleware_order_input_rewrite_and_tool_filter() {
    let server = serve(|_, _| {
        vec![
            sse_head(),
            data(&run_started("r1")),
            data(r#"{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"rm_rf","delta":"{}"}"#),
            data(r#"{"type":"TOOL_CALL_CHUNK","toolCallId":"c2","toolCallName":"search","delta":"{}"}"#),
            // The result closes the chunk lane (END c2), then is hidden with its call.
            data(r#"{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1","content":"deleted"}"#),
            data(r#"{"type":"CUSTOM","name":"noise","value":1}"#),
            data(&run_finished("r1")),
            Step::End,
        ]
    })
    .await;
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let tracer = |name: &'static str, log: Arc<Mutex<Vec<String>>>| {
        aguikit_client::middleware_fn(move |mut input: RunAgentInput, next: Next| -> EventStream {
            log.lock().unwrap().push(format!("{name} in"));
            let mut props = input.forwarded_props.take().unwrap_or(json!({}));
            props[name] = json!(true);
            input.forwarded_props = Some(props);
            let log = log.clone();
            next.run(input)
                .inspect(move |e| {
                    if let Ok(Event::RunFinished(_)) = e {
                        log.lock().unwrap().push(format!("{name} out"));
                    }
                })
                .boxed()
        })
    };
    let agent = HttpAgent::builder(&server.url)
        .middleware(tracer("outer", log.clone()))
        .middleware(FilterToolCalls::deny(["rm_rf"]))
        .middleware(middleware::map_events(|e| match e {
            Event::Custom(_) => None,
            other => Some(other),
        }))
        .middleware(tracer("inner", log.clone()))
        .build()
        .unwrap();
    let mut session = Session::new(agent);
    let updates = updates_of(&mut session).await;
    assert_eq!(
        *log.lock().unwrap(),
        ["outer in", "inner in", "inner out", "outer out"]
    );
    let body = server.requests()[0].json();
    assert_eq!(
        body["forwardedProps"],
        json!({"outer": true, "inner": true})
    );
    let events: Vec<&str> = updates
        .iter()
        .filter_map(|u| match u {
            Update::Event(e) => Some(e.type_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        events,
        [
            "RUN_STARTED",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "RUN_FINISHED"
        ]
    );
    let names: Vec<String> = updates
        .iter()
        .filter_map(|u| match u {
            Update::ToolCallStarted { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["search"]);
    assert!(session.messages().all(|m| m.id() != "t1"));
}

#[tokio::test]
async fn drive_calls_a_subscriber_with_the_session() {
    let server = serve(|_, _| chat("r1", "hi there")).await;
    let mut session =
        session_at(&server).with_defaults(RunParams::new().forwarded_props(json!({"app": "test"})));
    let mut texts_seen = Vec::new();
    let status = session
        .run()
        .unwrap()
        .drive(|u, s| {
            if matches!(u, Update::TextMessageEnded { .. }) {
                texts_seen.push(
                    s.messages()
                        .last()
                        .and_then(|m| m.text())
                        .map(str::to_owned),
                );
            }
        })
        .await;
    assert_eq!(status.name(), "finished");
    assert_eq!(texts_seen, [Some("hi there".to_owned())]);
    assert_eq!(
        server.requests()[0].json()["forwardedProps"],
        json!({"app": "test"})
    );
}
