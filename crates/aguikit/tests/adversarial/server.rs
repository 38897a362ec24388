//! `agui serve` as a child process for the adversarial tests: its banner, its address, and
//! its standard error collected as it is written (the text logs).
#![allow(dead_code)] // helpers shared by the modules, each uses its part

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};

/// A running `agui serve`.
pub struct Server {
    pub child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// The banner's lines, up to "Press Ctrl-C".
    pub banner: Vec<String>,
    /// What it wrote to standard error so far.
    pub stderr: Arc<Mutex<String>>,
}

/// Starts `agui serve --listen 127.0.0.1:0 --delay-ms 0 ARGS` with `env` (and no
/// `AGUI_TOKEN` unless `env` sets it), and waits for its banner.
pub async fn start(args: &[&str], env: &[(&str, &str)]) -> Server {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agui"));
    cmd.arg("serve")
        .args(["--listen", "127.0.0.1:0", "--delay-ms", "0"])
        .args(args)
        .env_remove("AGUI_TOKEN")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("agui serve starts");
    let stderr = Arc::new(Mutex::new(String::new()));
    let mut err = child.stderr.take().unwrap();
    let sink = stderr.clone();
    tokio::spawn(async move {
        let mut buf = [0u8; 8192];
        while let Ok(n) = err.read(&mut buf).await {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut banner = Vec::new();
    loop {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("agui serve printed its banner")
            .unwrap();
        let Some(line) = line else {
            let _ = child.wait().await;
            panic!("agui serve exited: {banner:#?}\n{}", stderr.lock().unwrap());
        };
        let done = line.starts_with("Press Ctrl-C");
        banner.push(line);
        if done {
            break;
        }
    }
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let addr = banner[0]
        .strip_prefix("agui serve: listening on http://")
        .expect("the first banner line names the address")
        .trim_end_matches('/')
        .to_owned();
    Server {
        child,
        addr,
        banner,
        stderr,
    }
}

impl Server {
    /// One HTTP/1.0 exchange with the server: status, head, body. `token`: sent as a
    /// bearer token.
    pub async fn http(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: &str,
    ) -> (u16, String, String) {
        let mut request = format!("{method} {path} HTTP/1.0\r\nHost: {}\r\n", self.addr);
        if let Some(t) = token {
            request.push_str(&format!("Authorization: Bearer {t}\r\n"));
        }
        if !body.is_empty() {
            request.push_str("Content-Type: application/json\r\n");
        }
        request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
        crate::common::exchange(&self.addr, &request).await
    }

    /// What the server logged so far.
    pub fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

/// A run input with one user message.
pub fn run_body(thread: &str, run: &str, text: &str) -> serde_json::Value {
    serde_json::json!({
        "threadId": thread, "runId": run,
        "messages": [{"id": format!("u-{run}"), "role": "user", "content": text}],
        "state": {}, "tools": [], "context": [], "forwardedProps": {}
    })
}

/// The `data:` payloads of an SSE body.
pub fn events(body: &str) -> Vec<serde_json::Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}
