//! Every run gets a `tracing` span with its ids; violations and panics are logged in it.

mod common;

use aguikit_core::event::TextMessageStart;
use aguikit_server::{AgentServer, Finish, agent_fn};
use common::*;
use std::fmt::Debug;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[derive(Default)]
struct Recorder {
    next: AtomicU64,
    /// (span id, name, fields)
    spans: Mutex<Vec<(u64, String, String)>>,
    /// (level, fields, the span current when it was logged)
    events: Mutex<Vec<(String, String, Option<u64>)>>,
    current: Mutex<std::collections::HashMap<std::thread::ThreadId, Vec<u64>>>,
}

struct Fields(String);
impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.push_str(&format!("{}={:?} ", field.name(), value));
    }
}

impl Subscriber for &'static Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut f = Fields(String::new());
        span.record(&mut f);
        self.spans
            .lock()
            .unwrap()
            .push((id, span.metadata().name().to_owned(), f.0));
        Id::from_u64(id)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut f = Fields(String::new());
        event.record(&mut f);
        let current = self
            .current
            .lock()
            .unwrap()
            .get(&std::thread::current().id())
            .and_then(|s| s.last().copied());
        self.events
            .lock()
            .unwrap()
            .push((event.metadata().level().to_string(), f.0, current));
    }
    fn enter(&self, span: &Id) {
        let mut c = self.current.lock().unwrap();
        c.entry(std::thread::current().id())
            .or_default()
            .push(span.into_u64());
    }
    fn exit(&self, _: &Id) {
        let mut c = self.current.lock().unwrap();
        c.entry(std::thread::current().id()).or_default().pop();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_have_spans_and_failures_are_logged_in_them() {
    let recorder: &'static Recorder = Box::leak(Box::default());
    tracing::subscriber::set_global_default(recorder).unwrap();
    let server = AgentServer::new(agent_fn(|input, ctx| async move {
        match input.thread_id.as_str() {
            "panics" => panic!("kaboom"),
            "violates" => {
                ctx.emit(TextMessageStart::new("m")).await?;
                ctx.emit(TextMessageStart::new("m")).await?;
            }
            _ => {}
        }
        Ok(Finish::success())
    }));
    let addr = spawn(&server).await;
    for thread in ["fine", "panics", "violates"] {
        post_json(addr, "/", &input(thread, "x"))
            .await
            .events()
            .await;
    }
    let spans = recorder.spans.lock().unwrap().clone();
    let events = recorder.events.lock().unwrap().clone();
    let span_of = |thread: &str| {
        spans
            .iter()
            .find(|(_, name, f)| name == "agui_run" && f.contains(&format!("thread_id={thread}")))
            .unwrap_or_else(|| panic!("no span for {thread}: {spans:?}"))
            .0
    };
    let (fine, panics, violates) = (span_of("fine"), span_of("panics"), span_of("violates"));
    let logged = |span: u64, level: &str, text: &str| {
        events
            .iter()
            .any(|(l, f, s)| *s == Some(span) && l == level && f.contains(text))
    };
    assert!(logged(fine, "INFO", "run ended"), "{events:?}");
    assert!(logged(panics, "ERROR", "agent panicked"), "{events:?}");
    assert!(logged(panics, "ERROR", "kaboom"), "{events:?}");
    assert!(
        logged(violates, "WARN", "outgoing event breaks the protocol"),
        "{events:?}"
    );
}
