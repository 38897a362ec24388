//! One model call: folding `chat.completion.chunk`s into AG-UI events as they arrive.

use crate::codes;
use crate::stream::error;
use aguikit_core::TokenUsage;
use aguikit_server::{AgentError, Reasoning, ReasoningMessage, RunContext, TextMessage, ToolCall};
use serde_json::Value;
use std::collections::HashSet;

/// A tool call being streamed, keyed by the chunks' `index`.
struct Slot {
    /// The chunks' `index` (absent on some servers).
    index: Option<u64>,
    /// The id the server gave, if any.
    server_id: Option<String>,
    name: String,
    arguments: String,
    /// Open once the name is known.
    handle: Option<ToolCall>,
}

/// A tool call of a finished turn (its `TOOL_CALL_END` sent).
pub(crate) struct Call {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) arguments: String,
    pub(crate) handle: ToolCall,
}

/// What a finished turn said.
pub(crate) struct TurnOutput {
    /// The text, if any.
    pub(crate) content: Option<String>,
    /// The tool calls, in the order they started.
    pub(crate) calls: Vec<Call>,
}

/// The state of one model call. Text, reasoning and tool calls of the turn belong to one
/// assistant message (`message_id`): the text message has that id and every tool call
/// names it as its parent.
pub(crate) struct Turn<'a> {
    ctx: RunContext,
    message_id: String,
    /// Tool call ids already used in this conversation: a server that repeats ids gets
    /// fresh ones, so that no AG-UI tool call is reopened.
    taken: &'a mut HashSet<String>,
    text: Option<TextMessage>,
    content: String,
    reasoning: Option<(Reasoning, ReasoningMessage)>,
    calls: Vec<Slot>,
    /// The last `finish_reason` of choice 0.
    pub(crate) finish_reason: Option<String>,
    /// The last `usage` object.
    pub(crate) usage: Option<Value>,
    /// The model the server says answered.
    pub(crate) model: Option<String>,
}

fn non_empty(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| !s.is_empty())
}

impl<'a> Turn<'a> {
    pub(crate) fn new(ctx: &RunContext, taken: &'a mut HashSet<String>) -> Self {
        Turn {
            // A UUID: unique across runs, servers and restarts sharing one store.
            message_id: aguikit_core::id::random_uuid(),
            ctx: ctx.clone(),
            taken,
            text: None,
            content: String::new(),
            reasoning: None,
            calls: Vec::new(),
            finish_reason: None,
            usage: None,
            model: None,
        }
    }

    /// Applies one chunk: emits what it adds. Only choice 0 is read (`n` is never set).
    pub(crate) async fn apply(&mut self, chunk: &Value) -> Result<(), AgentError> {
        if let Some(m) = non_empty(chunk.get("model")) {
            self.model = Some(m.to_owned());
        }
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            return Ok(());
        };
        for choice in choices {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.get("delta").filter(|d| d.is_object()) {
                self.delta(delta).await?;
            }
            if let Some(reason) = non_empty(choice.get("finish_reason")) {
                self.finish_reason = Some(reason.to_owned());
            }
        }
        Ok(())
    }

    async fn delta(&mut self, delta: &Value) -> Result<(), AgentError> {
        // DeepSeek, vLLM and llama.cpp say `reasoning_content`; OpenRouter, Ollama and newer
        // vLLM say `reasoning`. A server that sends both sends the same text twice.
        let reasoning =
            non_empty(delta.get("reasoning_content")).or_else(|| non_empty(delta.get("reasoning")));
        if let Some(r) = reasoning {
            self.reason(r).await?;
        }
        match delta.get("content") {
            Some(Value::String(s)) if !s.is_empty() => self.say(s).await?,
            // Content parts (some servers): text parts are text, thinking parts reasoning.
            Some(Value::Array(parts)) => {
                for p in parts {
                    match p.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            if let Some(t) = non_empty(p.get("text")) {
                                self.say(t).await?;
                            }
                        }
                        Some("thinking" | "reasoning") => {
                            let t = thinking_text(p);
                            if !t.is_empty() {
                                self.reason(&t).await?;
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        if let Some(refusal) = non_empty(delta.get("refusal")) {
            self.say(refusal).await?;
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for (position, call) in calls.iter().enumerate() {
                self.tool_call(call, position).await?;
            }
        }
        Ok(())
    }

    /// Appends answer text; a reasoning message still open ends first.
    async fn say(&mut self, text: &str) -> Result<(), AgentError> {
        self.end_reasoning().await?;
        if self.text.is_none() {
            let m = self
                .ctx
                .text_message()
                .id(self.message_id.clone())
                .start()
                .await?;
            self.text = Some(m);
        }
        if let Some(m) = &self.text {
            m.delta(text).await?;
        }
        self.content.push_str(text);
        Ok(())
    }

    /// Appends reasoning text, opening a reasoning span and message if needed.
    async fn reason(&mut self, text: &str) -> Result<(), AgentError> {
        if self.reasoning.is_none() {
            let span = self.ctx.reasoning().await?;
            let message = span.message().await?;
            self.reasoning = Some((span, message));
        }
        if let Some((_, m)) = &self.reasoning {
            m.delta(text).await?;
        }
        Ok(())
    }

    async fn end_reasoning(&mut self) -> Result<(), AgentError> {
        if let Some((span, message)) = self.reasoning.take() {
            message.end().await?;
            span.end().await?;
        }
        Ok(())
    }

    /// Finds the slot a `tool_calls` delta continues, or makes a new one.
    fn slot(&mut self, index: Option<u64>, id: Option<&str>, position: usize) -> usize {
        // Servers that omit `index` send one call per entry, whole or continued by id.
        let index = index.or_else(|| {
            if id.is_none() && self.calls.is_empty() {
                Some(position as u64)
            } else {
                None
            }
        });
        let found = match (index, id) {
            (Some(i), _) => self
                .calls
                .iter()
                .rposition(|c| c.index == Some(i))
                // Some servers give every call index 0: a different id is a new call.
                .filter(|&p| match (id, &self.calls[p].server_id) {
                    (Some(new), Some(old)) => new == old,
                    _ => true,
                }),
            (None, Some(id)) => self
                .calls
                .iter()
                .position(|c| c.server_id.as_deref() == Some(id)),
            (None, None) => self.calls.len().checked_sub(1),
        };
        found.unwrap_or_else(|| {
            self.calls.push(Slot {
                index,
                server_id: id.map(str::to_owned),
                name: String::new(),
                arguments: String::new(),
                handle: None,
            });
            self.calls.len() - 1
        })
    }

    async fn tool_call(&mut self, call: &Value, position: usize) -> Result<(), AgentError> {
        let index = call.get("index").and_then(Value::as_u64);
        let id = non_empty(call.get("id"));
        let at = self.slot(index, id, position);
        let function = call.get("function");
        let piece = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(s)) => s.clone(),
            None | Some(Value::Null) => String::new(),
            // Some servers send the arguments as a JSON object rather than its text.
            Some(other) => other.to_string(),
        };
        let slot = &mut self.calls[at];
        if slot.server_id.is_none() {
            slot.server_id = id.map(str::to_owned);
        }
        if slot.name.is_empty()
            && let Some(name) = non_empty(function.and_then(|f| f.get("name")))
        {
            slot.name = name.to_owned();
        }
        slot.arguments.push_str(&piece);
        match &slot.handle {
            Some(handle) if !piece.is_empty() => handle.args(piece).await?,
            Some(_) => {}
            None if !slot.name.is_empty() => {
                let id = match &slot.server_id {
                    Some(id) if !self.taken.contains(id) => id.clone(),
                    _ => self.ctx.new_id("call"),
                };
                self.taken.insert(id.clone());
                let handle = self
                    .ctx
                    .tool_call(slot.name.clone())
                    .id(id)
                    .parent_message(self.message_id.clone())
                    .start()
                    .await?;
                if !slot.arguments.is_empty() {
                    handle.args(slot.arguments.clone()).await?;
                }
                slot.handle = Some(handle);
            }
            None => {}
        }
        Ok(())
    }

    /// Ends what is open (reasoning, text, tool-call arguments) and returns the turn.
    pub(crate) async fn finish(&mut self) -> Result<TurnOutput, AgentError> {
        self.end_reasoning().await?;
        if let Some(m) = self.text.take() {
            m.end().await?;
        }
        let mut calls = Vec::with_capacity(self.calls.len());
        for (n, slot) in std::mem::take(&mut self.calls).into_iter().enumerate() {
            let Some(mut handle) = slot.handle else {
                return Err(error(
                    codes::MALFORMED,
                    format!(
                        "the model server streamed a tool call (index {}) without a function name",
                        slot.index.unwrap_or(n as u64)
                    ),
                ));
            };
            handle.end().await?;
            calls.push(Call {
                id: handle.id().to_owned(),
                name: slot.name,
                arguments: slot.arguments,
                handle,
            });
        }
        let content = Some(std::mem::take(&mut self.content)).filter(|c| !c.is_empty());
        Ok(TurnOutput { content, calls })
    }
}

/// The text of a `thinking` content part (a string, or text parts).
fn thinking_text(part: &Value) -> String {
    let inner = part.get("thinking").or_else(|| part.get("text"));
    match inner {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// A whole `chat.completion` (a server that ignored `stream: true`) as one chunk: each
/// choice's `message` becomes its `delta`, tool calls get their `index`.
pub(crate) fn completion_as_chunk(completion: &Value) -> Value {
    let mut chunk = completion.clone();
    if let Some(choices) = chunk.get_mut("choices").and_then(Value::as_array_mut) {
        for choice in choices {
            let Some(o) = choice.as_object_mut() else {
                continue;
            };
            if let Some(mut message) = o.remove("message") {
                if let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) {
                    for (i, call) in calls.iter_mut().enumerate() {
                        if let Some(c) = call.as_object_mut() {
                            c.entry("index").or_insert(i.into());
                        }
                    }
                }
                o.insert("delta".into(), message);
            }
        }
    }
    chunk
}

/// An OpenAI `usage` object as AG-UI token usage.
pub(crate) fn token_usage(usage: &Value, provider: &str, model: &str) -> TokenUsage {
    let count = |v: Option<&Value>| v.and_then(Value::as_u64);
    TokenUsage {
        provider: Some(provider.to_owned()),
        model: Some(model.to_owned()),
        input_tokens: count(usage.get("prompt_tokens")),
        output_tokens: count(usage.get("completion_tokens")),
        total_tokens: count(usage.get("total_tokens")),
        reasoning_tokens: count(
            usage
                .get("completion_tokens_details")
                .and_then(|d| d.get("reasoning_tokens")),
        ),
        cached_input_tokens: count(
            usage
                .get("prompt_tokens_details")
                .and_then(|d| d.get("cached_tokens")),
        ),
        cache_write_input_tokens: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn usage_maps_details() {
        let u = token_usage(
            &json!({
                "prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30,
                "prompt_tokens_details": {"cached_tokens": 4},
                "completion_tokens_details": {"reasoning_tokens": 12}
            }),
            "openai",
            "m",
        );
        assert_eq!(
            u,
            TokenUsage {
                provider: Some("openai".into()),
                model: Some("m".into()),
                input_tokens: Some(10),
                output_tokens: Some(20),
                total_tokens: Some(30),
                reasoning_tokens: Some(12),
                cached_input_tokens: Some(4),
                cache_write_input_tokens: None,
            }
        );
        let sparse = token_usage(&json!({"prompt_tokens": 1}), "p", "m");
        assert_eq!(sparse.output_tokens, None);
    }

    #[test]
    fn completion_becomes_a_chunk() {
        let chunk = completion_as_chunk(&json!({
            "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
            }}]
        }));
        assert_eq!(chunk["choices"][0]["delta"]["tool_calls"][0]["index"], 0);
        assert!(chunk["choices"][0].get("message").is_none());
    }

    #[test]
    fn thinking_parts() {
        assert_eq!(
            thinking_text(&json!({"type": "thinking", "thinking": "a"})),
            "a"
        );
        assert_eq!(
            thinking_text(
                &json!({"type": "thinking", "thinking": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})
            ),
            "ab"
        );
    }
}
