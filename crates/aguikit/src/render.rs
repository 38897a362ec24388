//! The live terminal view of a run: [`TerminalRenderer`] turns the typed [`Update`]s of an
//! [`aguikit_client::Session`] run into lines for a terminal (what `agui run` shows without
//! `--json`).

use aguikit_client::{RunStatus, Session, Update};
use aguikit_core::fmt::excerpt;
use std::io::Write;

/// Renders a run for a terminal as it streams: assistant text as it arrives, reasoning,
/// tool calls with their arguments as they stream and their results, state changes (one
/// line), and how the run ended.
///
/// ```
/// use aguikit::render::TerminalRenderer;
/// use aguikit_client::{HttpAgent, Session, Update};
/// let session = Session::new(HttpAgent::new("http://127.0.0.1:9/agent").unwrap());
/// let mut out = Vec::new();
/// let mut r = TerminalRenderer::new(&mut out);
/// r.update(&Update::TextMessageStarted { message_id: "m".into() }, &session);
/// r.update(&Update::TextDelta { message_id: "m".into(), delta: "Hello".into() }, &session);
/// r.update(&Update::TextMessageEnded { message_id: "m".into() }, &session);
/// drop(r);
/// assert_eq!(String::from_utf8(out).unwrap(), "assistant: Hello\n");
/// ```
pub struct TerminalRenderer<'w> {
    out: &'w mut (dyn Write + Send),
    /// Something was written without its line end yet.
    open_line: bool,
    /// The stream whose text is on the open line.
    open_stream: Option<String>,
}

impl std::fmt::Debug for TerminalRenderer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalRenderer")
            .field("open_line", &self.open_line)
            .finish_non_exhaustive()
    }
}

/// State is shown on one line of at most this many characters.
const STATE_LINE: usize = 160;

impl<'w> TerminalRenderer<'w> {
    /// A renderer writing to `out`.
    pub fn new(out: &'w mut (dyn Write + Send)) -> Self {
        TerminalRenderer {
            out,
            open_line: false,
            open_stream: None,
        }
    }

    fn line_end(&mut self) {
        if self.open_line {
            let _ = writeln!(self.out);
            self.open_line = false;
        }
        self.open_stream = None;
    }

    fn continue_stream(&mut self, id: &str, label: &str) {
        if self.open_stream.as_deref() != Some(id) {
            self.line_end();
            let _ = write!(self.out, "{label}: ");
            self.open_line = true;
            self.open_stream = Some(id.to_owned());
        }
    }

    fn line(&mut self, text: &str) {
        self.line_end();
        let _ = writeln!(self.out, "{text}");
    }

    /// Renders one update.
    pub fn update(&mut self, update: &Update, session: &Session) {
        match update {
            Update::RunStarted { run_id, .. } => self.line(&format!("── run {run_id}")),
            Update::TextMessageStarted { message_id } => {
                self.continue_stream(message_id, "assistant")
            }
            Update::TextDelta { message_id, delta } => {
                self.continue_stream(message_id, "assistant");
                let _ = write!(self.out, "{delta}");
            }
            Update::TextMessageEnded { .. } => self.line_end(),
            Update::ReasoningDelta { message_id, delta } => {
                self.continue_stream(message_id, "(thinking)");
                let _ = write!(self.out, "{delta}");
            }
            Update::ToolCallStarted {
                tool_call_id, name, ..
            } => {
                self.line_end();
                let _ = write!(self.out, "tool {name} ");
                self.open_line = true;
                self.open_stream = Some(tool_call_id.clone());
            }
            Update::ToolCallArgs {
                tool_call_id,
                name,
                delta,
                ..
            } => {
                self.continue_stream(tool_call_id, &format!("tool {name}"));
                let _ = write!(self.out, "{delta}");
            }
            Update::ToolCallEnded { .. } => self.line_end(),
            Update::ToolCallResult { content, .. } => {
                self.line(&format!("  -> {}", excerpt(content, 200)))
            }
            Update::StateChanged => {
                let state = serde_json::to_string(session.state()).unwrap_or_default();
                self.line(&format!("state: {}", excerpt(&state, STATE_LINE)));
            }
            Update::RunFinished { status } => match status {
                RunStatus::Interrupted { interrupts } => {
                    self.line("── interrupted, waiting for an answer:");
                    for i in interrupts {
                        let text = i.message.as_deref().unwrap_or("");
                        self.line(&format!("   {} ({}) {text}", i.id, i.reason));
                    }
                }
                RunStatus::Finished {
                    result: Some(r), ..
                } => {
                    let r = serde_json::to_string(r).unwrap_or_default();
                    self.line(&format!("── finished, result {}", excerpt(&r, STATE_LINE)));
                }
                other => self.line(&format!("── {other}")),
            },
            Update::RunFailed { status } => self.line(&format!("── {status}")),
            Update::Ended { status } => {
                self.line_end();
                if matches!(status, RunStatus::Incomplete) {
                    self.line("── the stream ended before the run did (incomplete)");
                }
            }
            _ => {}
        }
        let _ = self.out.flush();
    }
}

impl Drop for TerminalRenderer<'_> {
    fn drop(&mut self) {
        self.line_end();
        let _ = self.out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aguikit_client::HttpAgent;

    #[test]
    fn renderer_writes_tool_calls_state_and_endings() {
        let mut session = Session::new(HttpAgent::new("http://127.0.0.1:9/agent").unwrap());
        session.set_state(serde_json::json!({"n": 1}));
        let mut out = Vec::new();
        {
            let mut r = TerminalRenderer::new(&mut out);
            for u in [
                Update::RunStarted {
                    thread_id: "t".into(),
                    run_id: "r".into(),
                },
                Update::ToolCallStarted {
                    tool_call_id: "c".into(),
                    name: "get".into(),
                    parent_message_id: None,
                },
                Update::ToolCallArgs {
                    tool_call_id: "c".into(),
                    name: "get".into(),
                    delta: "{\"a\":".into(),
                    partial_args: None,
                },
                Update::ToolCallArgs {
                    tool_call_id: "c".into(),
                    name: "get".into(),
                    delta: "1}".into(),
                    partial_args: None,
                },
                Update::ToolCallEnded {
                    tool_call_id: "c".into(),
                    name: "get".into(),
                    args: serde_json::json!({"a": 1}),
                },
                Update::ToolCallResult {
                    tool_call_id: "c".into(),
                    message_id: "m".into(),
                    content: "ok".into(),
                },
                Update::StateChanged,
                Update::RunFinished {
                    status: RunStatus::Cancelled,
                },
                Update::Ended {
                    status: RunStatus::Cancelled,
                },
            ] {
                r.update(&u, &session);
            }
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "── run r\ntool get {\"a\":1}\n  -> ok\nstate: {\"n\":1}\n── cancelled\n"
        );
    }
}
