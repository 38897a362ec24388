//! AG-UI run input → Chat Completions request: messages and tools.

use crate::tools::BackendTool;
use aguikit_core::content::{MediaPart, PartSource};
use aguikit_core::message::{AssistantMessage, ToolMessage};
use aguikit_core::{Content, ContentPart, Message, RunAgentInput, Tool};
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};

/// What an unanswered tool call is answered with, so that the conversation stays valid
/// for the API (every assistant tool call must be followed by its tool message).
pub(crate) const UNANSWERED: &str = "No result: this tool call was not answered.";

/// The request's `messages`: the system prompt, the run's context, then the conversation.
pub(crate) fn conversation(system_prompt: Option<&str>, input: &RunAgentInput) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(prompt) = system_prompt.filter(|p| !p.is_empty()) {
        out.push(json!({"role": "system", "content": prompt}));
    }
    if !input.context().is_empty() {
        let mut text = String::from("Context from the application:");
        for c in input.context() {
            text.push_str(&format!("\n- {}: {}", c.description, c.value));
        }
        out.push(json!({"role": "system", "content": text}));
    }
    let mut converted = Vec::new();
    for m in &input.messages {
        match m {
            // `developer` is newer than most compatible servers; `system` means the same
            // to every one of them.
            Message::System(m) => converted.push(json!({"role": "system", "content": m.content})),
            Message::Developer(m) => {
                converted.push(json!({"role": "system", "content": m.content}))
            }
            Message::User(m) => {
                converted.push(json!({"role": "user", "content": user_content(&m.content)}))
            }
            Message::Assistant(m) => converted.push(assistant(m)),
            Message::Tool(m) => converted.push(tool_message(m)),
            Message::Activity(_) | Message::Reasoning(_) => {}
        }
    }
    out.extend(well_formed_tool_turns(converted));
    out
}

/// An assistant message as the API wants it.
pub(crate) fn assistant(m: &AssistantMessage) -> Value {
    let calls: Vec<Value> = m
        .tool_calls
        .iter()
        .flatten()
        .map(|c| tool_call(&c.id, &c.function.name, &c.function.arguments))
        .collect();
    assistant_value(m.content.as_deref(), calls)
}

/// `{"role": "assistant", "content": ..., "tool_calls": [...]}`; `content` is `null` for a
/// tool-calls-only turn, `""` for an empty one.
pub(crate) fn assistant_value(content: Option<&str>, calls: Vec<Value>) -> Value {
    let mut o = Map::new();
    o.insert("role".into(), "assistant".into());
    let content = content.filter(|c| !c.is_empty());
    o.insert(
        "content".into(),
        match content {
            Some(c) => c.into(),
            None if calls.is_empty() => "".into(),
            None => Value::Null,
        },
    );
    if !calls.is_empty() {
        o.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(o)
}

/// One entry of an assistant message's `tool_calls`. Empty arguments (a tool without
/// parameters) are sent as `{}`: servers that parse them to render a chat template
/// refuse `""`.
pub(crate) fn tool_call(id: &str, name: &str, arguments: &str) -> Value {
    let arguments = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

/// A tool message: its content as text (the API takes text here), its error appended.
fn tool_message(m: &ToolMessage) -> Value {
    let text = m.content.to_text();
    let content = match m.error.as_deref().filter(|e| !e.is_empty()) {
        None => text,
        Some(e) if text.is_empty() => format!("Error: {e}"),
        Some(e) => format!("{text}\n\nError: {e}"),
    };
    tool_result(&m.tool_call_id, content)
}

/// `{"role": "tool", "tool_call_id": ..., "content": ...}`.
pub(crate) fn tool_result(tool_call_id: &str, content: String) -> Value {
    json!({"role": "tool", "tool_call_id": tool_call_id, "content": content})
}

/// A user message's content: a string when it is all text (every server takes that),
/// else an array of content parts.
fn user_content(content: &Content) -> Value {
    match content {
        Content::Text(s) => s.as_str().into(),
        Content::Parts(parts) if parts.iter().all(|p| matches!(p, ContentPart::Text(_))) => {
            content.to_text().into()
        }
        Content::Parts(parts) => parts.iter().map(part).collect(),
    }
}

fn part(p: &ContentPart) -> Value {
    match p {
        ContentPart::Text(t) => json!({"type": "text", "text": t.text}),
        ContentPart::Image(m) => match &m.source {
            PartSource::Data(d) => json!({"type": "image_url", "image_url": {
                "url": format!("data:{};base64,{}", d.mime_type, d.value)
            }}),
            PartSource::Url(u) => json!({"type": "image_url", "image_url": {"url": u.value}}),
            PartSource::File(f) => omitted("image", Some(&f.value)),
        },
        ContentPart::Audio(m) => match &m.source {
            PartSource::Data(d) => match audio_format(&d.mime_type) {
                Some(format) => json!({"type": "input_audio", "input_audio": {
                    "data": d.value, "format": format
                }}),
                None => omitted("audio", None),
            },
            PartSource::Url(u) => omitted("audio", Some(&u.value)),
            PartSource::File(f) => omitted("audio", Some(&f.value)),
        },
        ContentPart::Document(m) => match &m.source {
            PartSource::Data(d) => json!({"type": "file", "file": {
                "filename": filename(m).unwrap_or("document"),
                "file_data": format!("data:{};base64,{}", d.mime_type, d.value)
            }}),
            PartSource::File(f) => json!({"type": "file", "file": {"file_id": f.value}}),
            PartSource::Url(u) => omitted("document", Some(&u.value)),
        },
        ContentPart::Video(m) => match &m.source {
            PartSource::Url(u) => omitted("video", Some(&u.value)),
            _ => omitted("video", None),
        },
    }
}

fn filename(m: &MediaPart) -> Option<&str> {
    m.metadata.as_ref()?.get("filename")?.as_str()
}

fn audio_format(mime: &str) -> Option<&'static str> {
    match mime.split(';').next().unwrap_or("").trim() {
        "audio/wav" | "audio/x-wav" | "audio/wave" => Some("wav"),
        "audio/mpeg" | "audio/mp3" => Some("mp3"),
        _ => None,
    }
}

/// A text part saying what could not be sent, so the model knows something was there.
fn omitted(kind: &str, reference: Option<&str>) -> Value {
    let text = match reference {
        Some(r) => format!("[{kind} attachment not included ({r}): not supported here]"),
        None => format!("[{kind} attachment not included: not supported here]"),
    };
    json!({"type": "text", "text": text})
}

/// Makes the tool turns valid for the API: each assistant message with `tool_calls` is
/// followed directly by one tool message per call (the client's own, moved up if it came
/// later; a "no result" one if there is none); tool messages that answer no call of an
/// earlier assistant message are dropped.
fn well_formed_tool_turns(messages: Vec<Value>) -> Vec<Value> {
    // The first answer to each call id.
    let mut answers: HashMap<String, usize> = HashMap::new();
    for (i, m) in messages.iter().enumerate() {
        if m["role"] == "tool"
            && let Some(id) = m["tool_call_id"].as_str()
        {
            answers.entry(id.to_owned()).or_insert(i);
        }
    }
    let mut used: HashSet<usize> = HashSet::new();
    let mut out = Vec::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        if m["role"] == "tool" {
            if !used.contains(&i) {
                tracing::debug!(
                    tool_call_id = m["tool_call_id"].as_str().unwrap_or(""),
                    "tool message answering no earlier tool call left out"
                );
            }
            continue;
        }
        out.push(m.clone());
        let Some(calls) = m.get("tool_calls").and_then(Value::as_array) else {
            continue;
        };
        for call in calls {
            let id = call["id"].as_str().unwrap_or("");
            match answers.get(id) {
                Some(&j) if j > i && used.insert(j) => out.push(messages[j].clone()),
                _ => out.push(tool_result(id, UNANSWERED.to_owned())),
            }
        }
    }
    out
}

/// The request's `tools`: back-end tools first, then the client's (minus any whose name a
/// back-end tool already has).
pub(crate) fn tools(backend: &[BackendTool], client: &[Tool]) -> Vec<Value> {
    let mut names: HashSet<&str> = HashSet::new();
    let mut out = Vec::new();
    for t in backend {
        names.insert(&t.name);
        out.push(function(&t.name, &t.description, Some(&t.parameters)));
    }
    for t in client {
        if names.insert(&t.name) {
            out.push(function(&t.name, &t.description, t.parameters.as_ref()));
        }
    }
    out
}

fn function(name: &str, description: &str, parameters: Option<&Value>) -> Value {
    let parameters = parameters
        .cloned()
        .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
    json!({"type": "function", "function": {
        "name": name, "description": description, "parameters": parameters
    }})
}

#[cfg(test)]
mod tests {
    use super::*;
    use aguikit_core::Context;
    use aguikit_core::content::{DataSource, FileSource, UrlSource};
    use aguikit_core::message::ToolCall;

    fn input(messages: Vec<Message>) -> RunAgentInput {
        RunAgentInput {
            messages,
            ..RunAgentInput::new("t", "r")
        }
    }

    #[test]
    fn roles_map_and_activity_and_reasoning_are_skipped() {
        let reasoning = aguikit_core::message::ReasoningMessage {
            id: "r1".into(),
            content: "hmm".into(),
            ..Default::default()
        };
        let activity = aguikit_core::message::ActivityMessage {
            id: "act".into(),
            activity_type: "PLAN".into(),
            ..Default::default()
        };
        let mut i = input(vec![
            Message::system("s", "Be brief."),
            Message::developer("d", "Use metric units."),
            Message::user("u", "Hi"),
            Message::Reasoning(reasoning),
            Message::Activity(activity),
            Message::assistant("a", "Hello!"),
        ]);
        i.context = Some(vec![Context {
            description: "user name".into(),
            value: "Ada".into(),
        }]);
        assert_eq!(
            conversation(Some("Prompt."), &i),
            vec![
                json!({"role": "system", "content": "Prompt."}),
                json!({"role": "system", "content": "Context from the application:\n- user name: Ada"}),
                json!({"role": "system", "content": "Be brief."}),
                json!({"role": "system", "content": "Use metric units."}),
                json!({"role": "user", "content": "Hi"}),
                json!({"role": "assistant", "content": "Hello!"}),
            ]
        );
    }

    #[test]
    fn user_parts_become_content_parts() {
        let doc = MediaPart {
            source: PartSource::Data(DataSource {
                value: "UERG".into(),
                mime_type: "application/pdf".into(),
            }),
            id: None,
            metadata: Some(json!({"filename": "a.pdf"})),
        };
        let content = Content::Parts(vec![
            ContentPart::text("What is in "),
            ContentPart::text("these?"),
            ContentPart::image(PartSource::Data(DataSource {
                value: "iVBOR".into(),
                mime_type: "image/png".into(),
            })),
            ContentPart::image(PartSource::Url(UrlSource {
                value: "https://example.org/cat.jpg".into(),
                mime_type: None,
            })),
            ContentPart::Audio(MediaPart::new(PartSource::Data(DataSource {
                value: "UklG".into(),
                mime_type: "audio/wav".into(),
            }))),
            ContentPart::Document(doc),
            ContentPart::Document(MediaPart::new(PartSource::File(FileSource {
                value: "file-123".into(),
                provider: Some("openai".into()),
                mime_type: None,
            }))),
            ContentPart::Video(MediaPart::new(PartSource::Url(UrlSource {
                value: "https://example.org/v.mp4".into(),
                mime_type: None,
            }))),
        ]);
        let out = conversation(None, &input(vec![Message::user("u", content)]));
        assert_eq!(
            out[0]["content"],
            json!([
                {"type": "text", "text": "What is in "},
                {"type": "text", "text": "these?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}},
                {"type": "image_url", "image_url": {"url": "https://example.org/cat.jpg"}},
                {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}},
                {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,UERG"}},
                {"type": "file", "file": {"file_id": "file-123"}},
                {"type": "text", "text": "[video attachment not included (https://example.org/v.mp4): not supported here]"},
            ])
        );
        // All-text parts collapse to a string.
        let text_only = Content::Parts(vec![ContentPart::text("a"), ContentPart::text("b")]);
        let out = conversation(None, &input(vec![Message::user("u", text_only)]));
        assert_eq!(out[0], json!({"role": "user", "content": "ab"}));
    }

    fn assistant_with_calls(id: &str, content: Option<&str>, calls: &[(&str, &str)]) -> Message {
        Message::Assistant(AssistantMessage {
            id: id.into(),
            content: content.map(str::to_owned),
            tool_calls: Some(
                calls
                    .iter()
                    .map(|(cid, name)| ToolCall::new(*cid, *name, r#"{"x":1}"#))
                    .collect(),
            ),
            ..Default::default()
        })
    }

    #[test]
    fn tool_turns_are_made_well_formed() {
        let mut failed = ToolMessage {
            id: "t2".into(),
            tool_call_id: "c2".into(),
            content: "".into(),
            ..Default::default()
        };
        failed.error = Some("denied".into());
        let out = conversation(
            None,
            &input(vec![
                Message::user("u", "go"),
                Message::tool("orphan", "c0", "nobody asked"),
                assistant_with_calls("a1", None, &[("c1", "f"), ("c2", "g"), ("c3", "h")]),
                Message::tool("t1", "c1", "one"),
                Message::assistant("a2", "meanwhile"),
                Message::Tool(failed),
                Message::user("u2", "and?"),
            ]),
        );
        assert_eq!(
            out,
            vec![
                json!({"role": "user", "content": "go"}),
                json!({"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}"}},
                    {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{\"x\":1}"}},
                    {"id": "c3", "type": "function", "function": {"name": "h", "arguments": "{\"x\":1}"}},
                ]}),
                json!({"role": "tool", "tool_call_id": "c1", "content": "one"}),
                json!({"role": "tool", "tool_call_id": "c2", "content": "Error: denied"}),
                json!({"role": "tool", "tool_call_id": "c3", "content": UNANSWERED}),
                json!({"role": "assistant", "content": "meanwhile"}),
                json!({"role": "user", "content": "and?"}),
            ]
        );
    }

    #[test]
    fn empty_arguments_are_sent_as_an_empty_object() {
        assert_eq!(tool_call("c", "f", " ")["function"]["arguments"], "{}");
        assert_eq!(tool_call("c", "f", "[1]")["function"]["arguments"], "[1]");
    }

    #[test]
    fn tools_backend_first_and_deduplicated() {
        let backend = vec![BackendTool {
            name: "clock".into(),
            description: "time".into(),
            parameters: json!({"type": "object"}),
            run: std::sync::Arc::new(|_| Box::pin(async { Ok(json!(1)) })),
        }];
        let client = vec![
            Tool::new("clock", "shadowed", json!({})),
            Tool {
                name: "confirm".into(),
                description: "ask".into(),
                parameters: None,
                metadata: None,
            },
        ];
        assert_eq!(
            tools(&backend, &client),
            vec![
                json!({"type": "function", "function": {"name": "clock", "description": "time", "parameters": {"type": "object"}}}),
                json!({"type": "function", "function": {"name": "confirm", "description": "ask", "parameters": {"type": "object", "properties": {}}}}),
            ]
        );
    }
}
