//! Row 8: `--store sqlite:` (no path) started, answered runs with 200 and every read with
//! 500 "no such table" while `/health` said ok: the data was lost. A store that cannot
//! work is refused at start (exit 2, naming why), and `/health` reports the store's real
//! state.

use crate::common::TOKEN;
use crate::server::start;
use std::process::Stdio;
use std::time::Duration;

/// Runs `agui serve ARGS`, which must exit by itself: its exit code and standard error.
async fn refused(args: &[&str]) -> (i32, String) {
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_agui"))
        .arg("serve")
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .env("AGUI_TOKEN", TOKEN)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("agui serve {args:?} started instead of refusing"))
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn a_store_without_a_path_or_in_memory_sqlite_is_refused_at_start() {
    for locator in ["sqlite:", "sqlite:  ", "sqlite::memory:"] {
        let (code, stderr) = refused(&["--store", locator]).await;
        assert_eq!(code, 2, "{locator}: {stderr}");
        assert!(stderr.contains("--store"), "{locator}: {stderr}");
        assert!(stderr.contains("--store memory"), "{locator}: {stderr}");
    }
}

#[tokio::test]
async fn a_store_that_cannot_be_written_and_read_back_is_refused_at_start() {
    // A SQLite "database" that is a device: whatever is written is gone.
    let (code, stderr) = refused(&["--store", "sqlite:/dev/null"]).await;
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--store"), "{stderr}");
    // A database that opens and passes its integrity check but refuses every write (as a
    // read-only user or a full disk would): refused before it loses a run.
    let dir = crate::common::scratch("unwritable-store");
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("agui.sqlite3");
    let locator = format!("sqlite:{}", db.display());
    let mut first = start(&["--store", &locator], &[("AGUI_TOKEN", TOKEN)]).await;
    first.child.kill().await.unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER no_writes BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'writes refused'); END;",
    )
    .unwrap();
    drop(conn);
    let (code, stderr) = refused(&["--store", &locator]).await;
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("cannot be written and read back"),
        "{stderr}"
    );
}

#[tokio::test]
async fn health_reports_a_store_that_lost_its_tables() {
    let dir = crate::common::scratch("health-store");
    let db = dir.join("agui.sqlite3");
    let locator = format!("sqlite:{}", db.display());
    let server = start(&["--store", &locator], &[("AGUI_TOKEN", TOKEN)]).await;
    let (status, _, body) = server.http("GET", "/health", None, "").await;
    assert_eq!(status, 200, "{body}");
    // Another program damages the database under the running server.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("DROP TABLE threads;").unwrap();
    drop(conn);
    let (status, _, body) = server.http("GET", "/health", None, "").await;
    assert_eq!(status, 503, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["status"], "degraded");
    assert!(v["store"].as_str().unwrap().contains("threads"), "{body}");
}
