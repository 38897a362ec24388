//! The console's embedded files and the security headers of every response.

use aguikit_server::{Access, CorsLayer, ServerConfig};
use axum::http::{HeaderValue, header};

/// The console's files, embedded in the binary: the page, its stylesheet and its ES
/// modules, each served at `/NAME` (the page imports the modules by relative URL).
pub(super) mod assets {
    /// The page, at `/` and `/index.html`.
    pub const INDEX: &str = include_str!("../../console/index.html");
    const JS: &str = "text/javascript; charset=utf-8";
    /// `(path, content type, text)` of every other file.
    pub const FILES: &[(&str, &str, &str)] = &[
        (
            "/style.css",
            "text/css; charset=utf-8",
            include_str!("../../console/style.css"),
        ),
        ("/a2ui.js", JS, include_str!("../../console/a2ui.js")),
        (
            "/a2ui-icons.js",
            JS,
            include_str!("../../console/a2ui-icons.js"),
        ),
        (
            "/a2ui-view.js",
            JS,
            include_str!("../../console/a2ui-view.js"),
        ),
        ("/app.js", JS, include_str!("../../console/app.js")),
        ("/api.js", JS, include_str!("../../console/api.js")),
        ("/compare.js", JS, include_str!("../../console/compare.js")),
        ("/dom.js", JS, include_str!("../../console/dom.js")),
        ("/events.js", JS, include_str!("../../console/events.js")),
        ("/expand.js", JS, include_str!("../../console/expand.js")),
        ("/find.js", JS, include_str!("../../console/find.js")),
        ("/fold.js", JS, include_str!("../../console/fold.js")),
        (
            "/inspector.js",
            JS,
            include_str!("../../console/inspector.js"),
        ),
        ("/latency.js", JS, include_str!("../../console/latency.js")),
        ("/layout.js", JS, include_str!("../../console/layout.js")),
        ("/patch.js", JS, include_str!("../../console/patch.js")),
        (
            "/recording.js",
            JS,
            include_str!("../../console/recording.js"),
        ),
        ("/redact.js", JS, include_str!("../../console/redact.js")),
        ("/render.js", JS, include_str!("../../console/render.js")),
        ("/search.js", JS, include_str!("../../console/search.js")),
        ("/sse.js", JS, include_str!("../../console/sse.js")),
        (
            "/timeline.js",
            JS,
            include_str!("../../console/timeline.js"),
        ),
        ("/util.js", JS, include_str!("../../console/util.js")),
        ("/views.js", JS, include_str!("../../console/views.js")),
    ];
}

/// How the router guards the agent: who may call it, from which origins, with which limits.
#[derive(Default)]
pub struct Site {
    /// The access policy (authentication, hosts, quotas).
    pub access: Access,
    /// CORS grants (none by default).
    pub cors: Option<CorsLayer>,
    /// Limits of the HTTP runtime.
    pub config: ServerConfig,
}

/// The security headers of every response: the console may only run its own scripts, may
/// not be framed, and leaks no `Referer`. Images, video and audio of A2UI surfaces (what an
/// agent shows) may come from any http(s) address; images also from `data:` URLs.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                   img-src 'self' data: http: https:; media-src 'self' http: https:; \
                   connect-src 'self' http: https:; frame-ancestors 'none'; \
                   base-uri 'none'; form-action 'none'; object-src 'none'";

pub(super) async fn security_headers(
    mut res: axum::response::Response,
) -> axum::response::Response {
    let h = res.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    res
}
