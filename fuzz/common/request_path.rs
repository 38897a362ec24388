//! One request through `aguikit_server`'s request path, from bytes: admission (the token,
//! the content type, the declared length), the body read under its limits, the ingress
//! checks (depth, id lengths), the input's parse and validation, and a run of an agent that
//! finishes at once. What must hold for any bytes: no panic, an answer with a known status,
//! an error body that is JSON naming its code, and a run stream that ends with its
//! terminal event.
//!
//! Shared by the cargo-fuzz target `request_path` and by the stable test that replays the
//! seed corpus (`fuzz/seeds/request_path`) in `cargo test -p aguikit-server`.

use aguikit_server::{Access, AgentServer, Finish, ServerConfig, Tokens, agent_fn};
use axum::body::Body;
use axum::http::Request;
use std::sync::OnceLock;

/// The token the server requires (flag bit 3 sends it).
const TOKEN: &str = "fuzz-token";

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

fn server() -> &'static AgentServer {
    static SERVER: OnceLock<AgentServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        let agent = agent_fn(|input, ctx| async move {
            if let Some(m) = input.messages.last() {
                ctx.say(format!(
                    "{} message(s); last {}",
                    input.messages.len(),
                    m.id()
                ))
                .await?;
            }
            Ok(Finish::success())
        });
        AgentServer::new(agent)
            .config(
                ServerConfig::default()
                    .max_body_bytes(64 * 1024)
                    .max_depth(16)
                    .max_id_bytes(64)
                    .keep_alive(None),
            )
            .access(Access::default().auth(Tokens::single(TOKEN)))
    })
}

/// Runs the request that `data` describes: its first byte holds flags (bit 0: a
/// `text/plain` content type instead of JSON; bit 1: a `Content-Length`; bit 2: one that
/// lies, larger than the body; bit 3: the right token, else none; bit 4: asking for
/// protobuf); the rest is the body.
pub fn check(data: &[u8]) {
    let (flags, body) = match data.split_first() {
        Some((f, rest)) => (*f, rest),
        None => (0, &[][..]),
    };
    let mut req = Request::post("/").header(
        "content-type",
        if flags & 1 == 0 {
            "application/json"
        } else {
            "text/plain"
        },
    );
    if flags & 2 != 0 {
        let declared = if flags & 4 != 0 {
            body.len() * 2 + 1
        } else {
            body.len()
        };
        req = req.header("content-length", declared.to_string());
    }
    if flags & 8 != 0 {
        req = req.header("authorization", format!("Bearer {TOKEN}"));
    }
    if flags & 16 != 0 {
        req = req.header("accept", "application/vnd.ag-ui.event+proto");
    }
    let req = req
        .body(Body::from(body.to_vec()))
        .expect("a well-formed request");
    runtime().block_on(async {
        let res = server().handle(req).await;
        let status = res.status().as_u16();
        assert!(
            matches!(status, 200 | 400 | 401 | 413 | 415 | 422 | 503),
            "unexpected status {status}"
        );
        let bytes = axum::body::to_bytes(res.into_body(), 16 << 20)
            .await
            .expect("the response body reads to its end");
        if status == 200 {
            assert!(flags & 8 != 0, "a run without the token");
            assert!(!bytes.is_empty(), "a run stream without events");
            if flags & 16 == 0 {
                let text = String::from_utf8(bytes.to_vec()).expect("SSE is text");
                assert!(
                    text.contains("RUN_FINISHED") || text.contains("RUN_ERROR"),
                    "a run stream without its end: {text}"
                );
            }
        } else {
            let v: serde_json::Value =
                serde_json::from_slice(&bytes).expect("an error body is JSON");
            assert!(
                v["error"].is_string(),
                "an error body without its code: {v}"
            );
        }
    });
}
