//! What the integration tests share: running the `agui` binary, `agui serve` as a child
//! process, a scripted HTTP server that misbehaves on purpose, and the shared folder.
#![allow(dead_code)] // each test binary uses its own part

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// What a finished `agui` run printed.
#[derive(Debug)]
pub struct Out {
    /// Exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Out {
    /// Standard output as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", self.stdout, self.stderr))
    }
}

/// The API token the test servers require (`agui serve` requires one by default) and the
/// test clients send, through `AGUI_TOKEN`.
pub const TOKEN: &str = "agui-test-token-0123456789abcdef";

/// The `Authorization` header value for [`TOKEN`].
pub fn bearer() -> String {
    format!("Bearer {TOKEN}")
}

/// The `agui` binary, with `NO_COLOR` cleared so that tests decide about colours, and
/// `AGUI_TOKEN` set to [`TOKEN`] (a server requires it, a client sends it).
pub fn agui_command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agui"));
    c.env_remove("NO_COLOR");
    c.env("AGUI_TOKEN", TOKEN);
    c
}

/// Runs `agui ARGS` with its output piped.
pub fn agui(args: &[&str]) -> Out {
    let out = agui_command()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("agui runs");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `agui ARGS` with `stdin` as its standard input.
pub fn agui_with_stdin(args: &[&str], stdin: &[u8]) -> Out {
    let mut child = agui_command()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("agui runs");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The shared folder (`AGUI_SHARED_DIR`, else next to the repository).
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("AGUI_SHARED_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    }
}

/// A conformance case file.
pub fn case(name: &str) -> PathBuf {
    let p = shared_dir()
        .join("conformance/cases")
        .join(format!("{name}.json"));
    assert!(p.exists(), "no conformance case {}", p.display());
    p
}

/// A fresh scratch file path under the target directory.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("aguikit-tests");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{}-{name}", std::process::id()))
}

/// `agui serve` on a free loopback port, killed when dropped.
pub struct Serve {
    child: Child,
    /// `http://127.0.0.1:PORT/`.
    pub base: String,
    /// The demo agent: `http://127.0.0.1:PORT/agent`.
    pub url: String,
    /// The bearer token to send: the one the server printed (`#token=` in its banner), else
    /// the one it was offered in `AGUI_TOKEN` (a server without authentication ignores it).
    /// [`Serve::agui`] gives it to the client commands as `AGUI_TOKEN`.
    pub token: String,
}

impl Serve {
    /// Starts `agui serve --listen 127.0.0.1:0 --delay-ms 0` and reads its URL.
    pub fn start() -> Serve {
        Serve::start_with(&[])
    }

    /// Starts `agui serve --listen 127.0.0.1:0 --delay-ms 0 ARGS` and reads its URL and the
    /// token it prints, if any. The server is offered a token in `AGUI_TOKEN`; the one it
    /// prints wins.
    pub fn start_with(args: &[&str]) -> Serve {
        let offered = TOKEN.to_owned();
        let mut child = agui_command()
            .args(["serve", "--listen", "127.0.0.1:0", "--delay-ms", "0"])
            .args(args)
            .env("AGUI_TOKEN", &offered)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("agui serve starts");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        // The banner, up to its last line (or the end of output).
        let mut banner = String::new();
        loop {
            let mut line = String::new();
            if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            banner.push_str(&line);
            if line.starts_with("Press Ctrl-C") {
                break;
            }
        }
        // Keep reading: a closed pipe would kill the server at its next line of output.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let first = banner.lines().next().unwrap_or("");
        let base = first
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {banner:?}"));
        let base = base.split('#').next().unwrap_or(base).to_owned();
        let url = format!("{base}agent");
        let token = banner
            .split("#token=")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| c.is_whitespace() || c == '&').next())
            // `YOUR_TOKEN` stands for a token the operator gave, which is not shown.
            .filter(|t| !t.is_empty() && *t != "YOUR_TOKEN")
            .map_or(offered, str::to_owned);
        Serve {
            child,
            base,
            url,
            token,
        }
    }

    /// Runs `agui ARGS` with `AGUI_TOKEN` set to the server's token.
    pub fn agui(&self, args: &[&str]) -> Out {
        run_piped(agui_command().env("AGUI_TOKEN", &self.token).args(args))
    }

    /// `GET PATH` (e.g. `/agent/threads/t1/connect?after=0`) over HTTP/1.0 with the token:
    /// the status and the body.
    pub fn get(&self, path: &str) -> (u16, String) {
        let addr = self
            .base
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned();
        let mut s = TcpStream::connect(&addr).unwrap();
        let auth = format!("Authorization: Bearer {}\r\n", self.token);
        write!(
            s,
            "GET {path} HTTP/1.0\r\nHost: {addr}\r\nAccept: text/event-stream\r\n{auth}\r\n"
        )
        .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        status_and_body(&text)
    }
}

/// The status and the body of a whole HTTP response (status 0 when there is none).
pub fn status_and_body(response: &str) -> (u16, String) {
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((response, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, body.to_owned())
}

/// Runs a prepared `agui` command with its output piped.
pub fn run_piped(c: &mut Command) -> Out {
    let out = c.stdin(Stdio::null()).output().expect("agui runs");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A loopback port nothing listens on (bound, then freed).
pub fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The token the scripted server's `/needs-token` wants.
pub const TEST_TOKEN: &str = "scripted-s3cret";

const RS: &str = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#;
const RF: &str = r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#;
const TS: &str = r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}"#;
const TC: &str = r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}"#;
const TE: &str = r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#;

fn sse(events: &[&str]) -> String {
    events.iter().map(|e| format!("data: {e}\n\n")).collect()
}

/// A scripted server on loopback that answers every `POST` by its path:
///
/// | path | answer |
/// |---|---|
/// | `/ok` | a valid SSE stream |
/// | `/chunks` | a valid stream of `TEXT_MESSAGE_CHUNK`s |
/// | `/content-before-start` | `TEXT_MESSAGE_CONTENT` before `RUN_STARTED` |
/// | `/no-finish` | no `RUN_FINISHED` |
/// | `/wrong-type` | a valid stream as `text/plain` |
/// | `/everything` | all three above at once |
/// | `/malformed` | a data line that is not JSON |
/// | `/not-object` | a data line that is a JSON array |
/// | `/http-500` | HTTP 500 with a JSON body |
/// | `/drop` | the connection closes mid-body |
/// | `/slow` | `RUN_STARTED`, then nothing for 5 s |
/// | `/needs-token` | `/ok` with `Authorization: Bearer {TEST_TOKEN}`, else HTTP 401 |
/// | `/boasting` | `/ok` with a `STATE_SNAPSHOT`; its `/capabilities` declare protobuf, interrupts and no state snapshots |
/// | `/bad-caps` | `/ok`; its `/capabilities` are not an `AgentCapabilities` object |
/// | `/a2ui-render` | a streamed `render_a2ui` tool call (a card with data), unanswered |
/// | `/echo-last` | an assistant message saying the request's last message's content |
///
/// Serves the agent `make` builds at `/agent` of a free loopback port, on a runtime of its
/// own thread, for the rest of the test process; its `/agent` URL. (A test keeps the URL in
/// a `OnceLock` to serve one agent for all its tests.)
pub fn serve_agent<A: aguikit_server::Agent>(make: impl FnOnce() -> A + Send + 'static) -> String {
    use aguikit_server::{AgentServer, RouterExt};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/agent", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let agent = AgentServer::new(make()).path("/agent");
            let router = axum::Router::new().agent("/agent", &agent);
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, router).await.unwrap();
        });
    });
    url
}

/// Returns `http://127.0.0.1:PORT`.
pub fn scripted() -> &'static str {
    static BASE: OnceLock<String> = OnceLock::new();
    BASE.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                std::thread::spawn(move || {
                    let _ = answer(conn);
                });
            }
        });
        base
    })
}

fn answer(mut conn: TcpStream) -> std::io::Result<()> {
    // Read the head, then the whole body (closing with unread bytes would reset).
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if conn.read(&mut byte)? == 0 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    conn.read_exact(&mut body)?;
    let authorization = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("authorization")
            .then(|| v.trim().to_owned())
    });
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let path = path.split('?').next().unwrap_or("/");
    let stream = |ct: &str, body: String| {
        format!("HTTP/1.1 200 OK\r\nContent-Type: {ct}\r\nConnection: close\r\n\r\n{body}")
    };
    let reply = match path {
        "/ok" => stream("text/event-stream", sse(&[RS, TS, TC, TE, RF])),
        // An A2UI surface whose root lists a child that does not exist (rule A7).
        "/a2ui-dangling" => stream(
            "text/event-stream",
            sse(&[
                RS,
                r#"{"type":"ACTIVITY_SNAPSHOT","messageId":"a2ui-surface-s","activityType":"a2ui-surface","replace":true,"content":{"a2ui_operations":[{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"basic"}},{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Column","children":["gone"]}]}}]}}"#,
                RF,
            ]),
        ),
        "/a2ui-render" => stream("text/event-stream", render_a2ui_events()),
        "/echo-last" => {
            let input: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let last = input["messages"]
                .as_array()
                .and_then(|m| m.last())
                .and_then(|m| m["content"].as_str())
                .unwrap_or("")
                .to_owned();
            let content = serde_json::json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": last});
            stream(
                "text/event-stream",
                sse(&[RS, TS, &content.to_string(), TE, RF]),
            )
        }
        "/chunks" => stream(
            "text/event-stream",
            sse(&[
                RS,
                r#"{"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"Hel"}"#,
                r#"{"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"lo"}"#,
                RF,
            ]),
        ),
        "/boasting" => stream(
            "text/event-stream",
            sse(&[RS, r#"{"type":"STATE_SNAPSHOT","snapshot":{}}"#, TS, TC, TE, RF]),
        ),
        "/boasting/capabilities" => stream(
            "application/json",
            r#"{"transport":{"httpBinary":true},"humanInTheLoop":{"interrupts":true},"state":{"snapshots":false}}"#.into(),
        ),
        "/bad-caps" => stream("text/event-stream", sse(&[RS, TS, TC, TE, RF])),
        "/bad-caps/capabilities" => {
            stream("application/json", r#"{"transport":{"streaming":"yes"}}"#.into())
        }
        "/content-before-start" => stream("text/event-stream", sse(&[TC, RS, TS, TC, TE, RF])),
        "/no-finish" => stream("text/event-stream", sse(&[RS, TS, TC, TE])),
        "/wrong-type" => stream("text/plain", sse(&[RS, TS, TC, TE, RF])),
        "/everything" => stream("text/plain", sse(&[TC, RS, TS, TC, TE])),
        "/malformed" => stream(
            "text/event-stream",
            format!(
                "{}data: {{\"type\":\"TEXT_MESSAGE_START\",\n\n{}",
                sse(&[RS]),
                sse(&[RF])
            ),
        ),
        "/not-object" => stream("text/event-stream", sse(&[RS, "[1, 2, 3]", RF])),
        "/needs-token" if authorization.as_deref() == Some(&format!("Bearer {TEST_TOKEN}")) => {
            stream("text/event-stream", sse(&[RS, TS, TC, TE, RF]))
        }
        "/needs-token" => {
            let body = r#"{"error":"unauthorized"}"#;
            format!(
                "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
        }
        "/http-500" => {
            let body = r#"{"error":"scripted failure"}"#;
            format!(
                "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
        }
        "/drop" => format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n{}",
            sse(&[RS, TS, TC])
        ),
        "/slow" => {
            conn.write_all(stream("text/event-stream", sse(&[RS])).as_bytes())?;
            conn.flush()?;
            std::thread::sleep(Duration::from_secs(5));
            return Ok(());
        }
        _ => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into(),
    };
    conn.write_all(reply.as_bytes())?;
    conn.flush()?;
    conn.shutdown(std::net::Shutdown::Write)?;
    // Let the client read everything before the socket goes away.
    let mut rest = Vec::new();
    let _ = conn.read_to_end(&mut rest);
    Ok(())
}

/// The arguments of the `/a2ui-render` route's `render_a2ui` call.
pub fn render_a2ui_args() -> serde_json::Value {
    serde_json::json!({
        "surfaceId": "status",
        "components": [
            {"id": "root", "component": "Card", "child": "body"},
            {"id": "body", "component": "Column", "children": ["title", "state"]},
            {"id": "title", "component": "Text", "variant": "h3", "text": "Build"},
            {"id": "state", "component": "Text", "text": {"path": "/build/state"}}
        ],
        "data": {"build": {"state": "passing"}}
    })
}

/// `/a2ui-render`: a `render_a2ui` call whose arguments arrive in 40-byte pieces, left
/// unanswered (the A2UI middleware answers it).
fn render_a2ui_events() -> String {
    let args = render_a2ui_args().to_string();
    let mut events = vec![
        RS.to_owned(),
        r#"{"type":"TOOL_CALL_START","toolCallId":"tc-a2ui","toolCallName":"render_a2ui"}"#
            .to_owned(),
    ];
    let bytes = args.as_bytes();
    for piece in bytes.chunks(40) {
        let delta = String::from_utf8_lossy(piece);
        events.push(
            serde_json::json!({"type": "TOOL_CALL_ARGS", "toolCallId": "tc-a2ui", "delta": delta})
                .to_string(),
        );
    }
    events.push(r#"{"type":"TOOL_CALL_END","toolCallId":"tc-a2ui"}"#.to_owned());
    events.push(RF.to_owned());
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    sse(&refs)
}

/// Sends `request` (a whole HTTP/1.0 request: the answer ends with the connection) to
/// `addr` on a fresh connection and reads the answer, at most 30 s: the status, the head
/// and the body.
pub async fn exchange(addr: &str, request: &str) -> (u16, String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), s.read_to_end(&mut out))
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8(out).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_owned(), body.to_owned())
}

/// The string `field` of every object in the JSON array `array`.
///
/// # Panics
///
/// When `array` is not an array or an object lacks the string.
pub fn field_strs<'a>(array: &'a serde_json::Value, field: &str) -> Vec<&'a str> {
    array
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {array}"))
        .iter()
        .map(|v| {
            v[field]
                .as_str()
                .unwrap_or_else(|| panic!("no string {field} in {v}"))
        })
        .collect()
}

/// Asserts that `text` contains every one of `parts`, showing `text` otherwise.
#[track_caller]
pub fn assert_has(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "{part:?} is missing from:\n{text}");
    }
}
