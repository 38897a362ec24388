//! Interop with the official TypeScript client (`@ag-ui/client` 1.0.0, full pipeline):
//! the peers are set up by `aguikit-peers` (`shared/interop` copied to `target/interop`, set up
//! with `setup.sh --no-browser`), and `ts-client/client.mjs` runs against the
//! `every_emitter` example.
//!
//! Needs node, npm and python3 (for `setup.sh`). Without them, or if the setup fails, the
//! tests fail — unless `AGUI_SKIP_INTEROP=1`, which skips them with a printed notice.

mod common;
#[path = "../examples/every_emitter.rs"]
mod every_emitter;

use serde_json::Value;
use std::path::Path;

/// The set-up interop folder (`None`: skipped); see [`aguikit_peers::interop_dir`].
fn require_interop() -> Option<&'static Path> {
    aguikit_peers::interop_dir()
}

/// Runs `client.mjs` against a fresh every_emitter server; returns its report.
async fn run_client(dir: &Path, args: &[&str]) -> Value {
    let addr = common::spawn(&every_emitter::server()).await;
    let url = format!("http://{addr}/agent");
    let out = tokio::process::Command::from(aguikit_peers::ts_client(dir, &url, args))
        .output()
        .await
        .expect("node runs");
    aguikit_peers::report(&out)
}

fn assert_clean(report: &Value) {
    assert_eq!(report["ok"], true, "{report:#}");
    assert_eq!(report["warnings"], serde_json::json!([]), "{report:#}");
    if let Some(u) = report.get("unhandledRejections") {
        assert_eq!(u, &serde_json::json!([]), "{report:#}");
    }
}

fn message_texts(report: &Value) -> Vec<String> {
    report["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["content"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_client_accepts_every_emitter_over_sse() {
    let Some(dir) = require_interop() else { return };
    let report = run_client(dir, &["--text", "hello from ts"]).await;
    assert_clean(&report);
    assert_eq!(report["terminal"], "RUN_FINISHED");
    assert_eq!(report["contentType"], "text/event-stream");
    assert_eq!(report["httpStatus"], 200);
    assert_eq!(
        report["state"],
        every_emitter::expected_state(),
        "{report:#}"
    );
    let texts = message_texts(&report);
    for want in [
        every_emitter::expected_echo("hello from ts").as_str(),
        "Chunked text.",
        "Let me look that up.",
        "It is 21 degrees and clear in Berlin.",
        "Researching.",
        "Summary: all good.",
        "Writing in parallel.",
        "Checking at once.",
        "An earlier answer.",
    ] {
        assert!(
            texts.iter().any(|t| t == want),
            "no message {want:?} in {texts:?}"
        );
    }
    let roles: Vec<&str> = report["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    for role in ["user", "assistant", "tool", "reasoning", "activity"] {
        assert!(roles.contains(&role), "no {role} message: {roles:?}");
    }
    let activity = report["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "activity")
        .unwrap();
    assert_eq!(activity["content"]["steps"][1]["status"], "done");
    assert_eq!(report["result"], serde_json::json!({"families": "all"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_client_interrupts_and_resumes() {
    let Some(dir) = require_interop() else { return };
    let report = run_client(dir, &["--scenario", "interrupt", "--auto-resume"]).await;
    assert_clean(&report);
    let first = &report["firstRun"];
    assert_eq!(first["outcome"], "interrupt", "{report:#}");
    assert_eq!(first["interrupts"][0]["reason"], "confirmation");
    assert!(first["interrupts"][0]["subagentRunId"].is_string());
    assert_eq!(report["terminal"], "RUN_FINISHED");
    assert_eq!(report["outcome"], "success");
    assert_eq!(report["result"], serde_json::json!({"approved": true}));
    assert_eq!(report["pendingInterrupts"], serde_json::json!([]));
    assert!(
        message_texts(&report)
            .iter()
            .any(|t| t == "Approved: sending.")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_client_asking_for_protobuf() {
    let Some(dir) = require_interop() else { return };
    let report = run_client(dir, &["--proto"]).await;
    assert_clean(&report);
    let want = if cfg!(feature = "proto") {
        aguikit_server::PROTO_MEDIA_TYPE
    } else {
        aguikit_server::SSE_MEDIA_TYPE
    };
    assert_eq!(report["contentType"], want);
    assert_eq!(report["state"], every_emitter::expected_state());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ts_client_500_runs_at_concurrency_32() {
    let Some(dir) = require_interop() else { return };
    let report = run_client(
        dir,
        &["--runs", "500", "--concurrency", "32", "--timeout", "60000"],
    )
    .await;
    assert_eq!(report["ok"], true, "{report:#}");
    assert_eq!(report["okCount"], 500, "{report:#}");
    assert_eq!(report["failed"], 0);
    assert_eq!(report["terminals"]["RUN_FINISHED"], 500);
    assert_eq!(report["warnings"], serde_json::json!([]));
    eprintln!(
        "interop load: {} runs/s, p50 {} ms, p99 {} ms",
        report["runsPerSec"], report["p50Ms"], report["p99Ms"]
    );
}
