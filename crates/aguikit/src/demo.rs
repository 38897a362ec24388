//! The built-in demo agent of `agui serve`: deterministic, no network, no model, and it
//! exercises every part of the protocol, chosen by what the user writes.

use aguikit_core::patch::{JsonPointer, PatchOp};
use aguikit_core::{AgentCapabilities, Interrupt, ResumeStatus, Role, RunAgentInput};
use aguikit_server::{Agent, AgentError, AgentResult, Finish, RunContext};
use serde_json::{Value, json};
use std::time::Duration;

/// What the demo agent does, for `--help` and the console.
pub const BEHAVIOURS: &str = "\
The demo agent at POST /agent reacts to what you write:
  anything else      a streamed reply
  weather in Paris   a tool call (get_weather) with streamed arguments and a result
  plan a trip        an activity (PLAN) that updates step by step
  think about X      streamed reasoning, then an answer
  research X         two subagents working concurrently
  approve            ends the run with an interrupt; the next run resumes it
  count to 5         updates shared state with JSON Patch deltas
  flight status      an A2UI surface (a card) from a streamed render_a2ui tool call
  book a table       an A2UI form with checks; its Book button answers in a new run
  compare plans      an A2UI list of cards built from the data by a template
  fail               ends the run with RUN_ERROR";

/// The demo agent. `delay` paces the streamed pieces so a person can watch them arrive.
#[derive(Debug, Clone)]
pub struct DemoAgent {
    delay: Duration,
}

impl DemoAgent {
    /// A demo agent pausing `delay` between streamed pieces.
    pub fn new(delay: Duration) -> Self {
        DemoAgent { delay }
    }

    async fn pause(&self) {
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
    }

    /// Streams `text` word by word as one assistant message, its id a fresh UUID.
    async fn say(&self, ctx: &RunContext, text: &str) -> Result<String, AgentError> {
        let msg = ctx
            .text_message()
            .id(aguikit_core::id::random_uuid())
            .start()
            .await?;
        let id = msg.id().to_owned();
        for piece in text.split_inclusive(' ') {
            msg.delta(piece).await?;
            self.pause().await;
        }
        msg.end().await?;
        Ok(id)
    }

    async fn reply(&self, ctx: &RunContext, said: &str) -> AgentResult {
        let text = if said.trim().is_empty() {
            "Hello! Try one of the behaviours listed in the console.".to_owned()
        } else {
            format!(
                "You said: \"{}\". Try \"weather in Paris\", \"plan a trip\", \"think about tea\", \"research rust\", \"approve\", \"count to 5\" or \"fail\".",
                said.trim()
            )
        };
        self.say(ctx, &text).await?;
        Ok(Finish::success())
    }

    async fn weather(&self, ctx: &RunContext, said: &str) -> AgentResult {
        let city = city_in(said);
        let msg = self
            .say(ctx, &format!("Let me check the weather in {city}."))
            .await?;
        let call = ctx
            .tool_call("get_weather")
            .parent_message(msg)
            .start()
            .await?;
        let args = json!({"city": city, "unit": "celsius"}).to_string();
        for piece in args.as_bytes().chunks(6) {
            call.args(String::from_utf8_lossy(piece).into_owned())
                .await?;
            self.pause().await;
        }
        let (temp, sky) = fake_weather(&city);
        call.result(json!({"city": city, "temperature": temp, "sky": sky}).to_string())
            .await?;
        self.say(ctx, &format!("It is {temp} °C and {sky} in {city}."))
            .await?;
        Ok(Finish::success())
    }

    async fn plan(&self, ctx: &RunContext) -> AgentResult {
        let steps = ["Pick dates", "Book travel", "Reserve a hotel", "Pack"];
        let content = json!({
            "title": "Trip plan",
            "steps": steps.iter().map(|s| json!({"label": s, "status": "todo"})).collect::<Vec<_>>()
        });
        let mut plan = ctx
            .activity("PLAN", content.as_object().cloned().unwrap_or_default())
            .await?;
        for i in 0..steps.len() {
            self.pause().await;
            plan.update(|c| c["steps"][i]["status"] = json!("in progress"))
                .await?;
            self.pause().await;
            plan.update(|c| c["steps"][i]["status"] = json!("done"))
                .await?;
        }
        self.say(ctx, "The plan is ready: every step is done.")
            .await?;
        Ok(Finish::success())
    }

    async fn think(&self, ctx: &RunContext, said: &str) -> AgentResult {
        let topic = topic_after(said, "think about", "this");
        let reasoning = ctx.reasoning().await?;
        let thought = reasoning.message().await?;
        for piece in [
            format!("The user asks me to think about {topic}. "),
            "First, list what I know. ".to_owned(),
            "Then weigh the options. ".to_owned(),
            "Finally, answer briefly.".to_owned(),
        ] {
            thought.delta(piece).await?;
            self.pause().await;
        }
        thought.end().await?;
        reasoning.end().await?;
        self.say(
            ctx,
            &format!("Having thought about {topic}: it deserves a closer look."),
        )
        .await?;
        Ok(Finish::success())
    }

    async fn research(&self, ctx: &RunContext, said: &str) -> AgentResult {
        let topic = topic_after(said, "research", "the topic");
        self.say(ctx, &format!("Starting two researchers on {topic}."))
            .await?;
        let worker = |name: &'static str, angle: &'static str| {
            let topic = topic.clone();
            let this = self.clone();
            ctx.subagent(name)
                .description(angle)
                .run(move |sub| async move {
                    let step = sub.step("search").await?;
                    for i in 1..=3 {
                        this.say(
                            &sub,
                            &format!("{name}: finding {i} about {topic} ({angle})."),
                        )
                        .await?;
                    }
                    step.finish().await?;
                    Ok(json!({"findings": 3}))
                })
        };
        let (a, b) = futures_util::future::join(
            worker("historian", "history"),
            worker("analyst", "current state"),
        )
        .await;
        a?;
        b?;
        self.say(ctx, "Both researchers are done: six findings in all.")
            .await?;
        Ok(Finish::success())
    }

    async fn approve(&self, ctx: &RunContext) -> AgentResult {
        self.say(ctx, "I need your approval before I go on.")
            .await?;
        let mut ask = Interrupt::new("", "approval").with_message("Approve the demo action?");
        ask.response_schema =
            json!({"type": "object", "properties": {"approved": {"type": "boolean"}}})
                .as_object()
                .cloned();
        ctx.interrupt(ask);
        Ok(Finish::success())
    }

    async fn resumed(&self, ctx: &RunContext, input: &RunAgentInput) -> AgentResult {
        let approved = input.resume().iter().all(|r| {
            r.status == ResumeStatus::Resolved
                && r.payload
                    .as_ref()
                    .and_then(|p| p.get("approved"))
                    .and_then(Value::as_bool)
                    .unwrap_or(true)
        });
        let text = if approved {
            "Approved: the demo action is done."
        } else {
            "Denied: nothing was done."
        };
        self.say(ctx, text).await?;
        Ok(Finish::success().with_result(json!({ "approved": approved })))
    }

    /// Counts with explicit `STATE_DELTA`s (for a state this small the runtime's `set_state`
    /// would judge snapshots cheaper, and the point here is to show deltas).
    async fn count(&self, ctx: &RunContext, input: &RunAgentInput, n: u64) -> AgentResult {
        let count = JsonPointer::parse("/count").map_err(AgentError::from)?;
        if input.state.as_ref().is_some_and(Value::is_object) {
            ctx.state_delta(vec![PatchOp::add(count.clone(), json!(0))])
                .await?;
        } else {
            ctx.state_snapshot(json!({"count": 0})).await?;
        }
        for i in 1..=n {
            self.pause().await;
            ctx.state_delta(vec![PatchOp::replace(count.clone(), json!(i))])
                .await?;
        }
        self.say(ctx, &format!("Counted to {n}.")).await?;
        Ok(Finish::success())
    }
}

impl DemoAgent {
    /// Streams a `render_a2ui` call for `args` (in pieces of about 48 bytes), then its
    /// result. The surfaces are the A2UI middleware's work (`agui serve` puts it in front
    /// of the demo agent): it turns the call into `a2ui-surface` activities as the
    /// arguments arrive.
    async fn surface(&self, ctx: &RunContext, intro: &str, args: Value) -> AgentResult {
        let msg = self.say(ctx, intro).await?;
        let call = ctx
            .tool_call(aguikit_a2ui::emit::RENDER_TOOL)
            .parent_message(msg)
            .start()
            .await?;
        for piece in pieces(&args.to_string(), 48) {
            call.args(piece).await?;
            self.pause().await;
        }
        call.result(json!({"status": "rendered"}).to_string())
            .await?;
        Ok(Finish::success())
    }

    /// A user's action on a surface (`forwardedProps.a2uiAction.userAction`), answered.
    async fn action(&self, ctx: &RunContext, action: &Value) -> AgentResult {
        let name = action.get("name").and_then(Value::as_str).unwrap_or("");
        let context = action.get("context").cloned().unwrap_or(json!({}));
        let text = match name {
            "book" => {
                let who = context.get("name").and_then(Value::as_str).unwrap_or("you");
                let people = context
                    .get("people")
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| "2".into());
                let date = context
                    .get("date")
                    .and_then(Value::as_str)
                    .unwrap_or("tonight");
                format!("Booked a table for {people} under the name {who}, {date}.")
            }
            "choose_plan" => format!(
                "You chose the {} plan.",
                context
                    .get("plan")
                    .and_then(Value::as_str)
                    .unwrap_or("selected")
            ),
            other => format!("You pressed {other:?} on the surface."),
        };
        self.say(ctx, &text).await?;
        Ok(Finish::success())
    }
}

/// `text` cut into pieces of at least `bytes` bytes (the last may be shorter), each ending
/// on a character boundary.
fn pieces(text: &str, bytes: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        let end = i + c.len_utf8();
        if end - start >= bytes {
            out.push(&text[start..end]);
            start = end;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// The `render_a2ui` arguments of the flight-status card.
pub fn flight_surface() -> Value {
    json!({
        "surfaceId": "flight-status",
        "components": [
            {"id": "root", "component": "Card", "child": "body"},
            {"id": "body", "component": "Column", "children": ["title", "route", "divider", "times"]},
            {"id": "title", "component": "Text", "variant": "h3", "text": {"path": "/flight/number"}},
            {"id": "route", "component": "Text", "text": {"path": "/flight/route"}},
            {"id": "divider", "component": "Divider"},
            {"id": "times", "component": "Row", "children": ["departs", "status"], "justify": "spaceBetween"},
            {"id": "departs", "component": "Text", "text": {"path": "/flight/departs"}},
            {"id": "status", "component": "Text", "variant": "h4", "text": {"path": "/flight/status"}}
        ],
        "data": {"flight": {"number": "AF 1234", "route": "Paris CDG → New York JFK", "departs": "Departs 10:35", "status": "On time"}}
    })
}

/// The `render_a2ui` arguments of the table-booking form.
pub fn booking_surface() -> Value {
    json!({
        "surfaceId": "book-table",
        "components": [
            {"id": "root", "component": "Card", "child": "form"},
            {"id": "form", "component": "Column", "children": ["heading", "name", "people", "date", "submit"]},
            {"id": "heading", "component": "Text", "variant": "h3", "text": "Book a table"},
            {"id": "name", "component": "TextField", "label": "Name", "value": {"path": "/booking/name"},
             "checks": [{"condition": {"call": "required", "args": {"value": {"path": "/booking/name"}}, "returnType": "boolean"}, "message": "Please enter a name."}]},
            {"id": "people", "component": "Slider", "label": "People", "min": 1, "max": 12, "value": {"path": "/booking/people"}},
            {"id": "date", "component": "DateTimeInput", "label": "Date", "enableDate": true, "value": {"path": "/booking/date"}},
            {"id": "submit", "component": "Button", "variant": "primary", "child": "submit-label",
             "action": {"event": {"name": "book", "context": {"name": {"path": "/booking/name"}, "people": {"path": "/booking/people"}, "date": {"path": "/booking/date"}}}}},
            {"id": "submit-label", "component": "Text", "text": "Book"}
        ],
        "data": {"booking": {"name": "", "people": 2, "date": "2026-12-24"}}
    })
}

/// The `render_a2ui` arguments of the plan comparison.
pub fn plans_surface() -> Value {
    json!({
        "surfaceId": "compare-plans",
        "components": [
            {"id": "root", "component": "Column", "children": ["title", "plans"]},
            {"id": "title", "component": "Text", "variant": "h3", "text": "Compare plans"},
            {"id": "plans", "component": "List", "children": {"componentId": "plan", "path": "/plans"}},
            {"id": "plan", "component": "Card", "child": "plan-row"},
            {"id": "plan-row", "component": "Row", "children": ["plan-name", "plan-price", "plan-pick"], "justify": "spaceBetween"},
            {"id": "plan-name", "component": "Text", "variant": "h4", "text": {"path": "name"}},
            {"id": "plan-price", "component": "Text", "text": {"path": "price"}},
            {"id": "plan-pick", "component": "Button", "child": "plan-pick-label",
             "action": {"event": {"name": "choose_plan", "context": {"plan": {"path": "name"}}}}},
            {"id": "plan-pick-label", "component": "Text", "text": "Choose"}
        ],
        "data": {"plans": [
            {"name": "Basic", "price": "€5 / month"},
            {"name": "Team", "price": "€15 / month"},
            {"name": "Enterprise", "price": "€40 / month"}
        ]}
    })
}

impl Agent for DemoAgent {
    /// What the demo does, as its behaviours show it: its own tools (the weather, A2UI
    /// surfaces; none from the client), state snapshots and deltas, two subagents,
    /// streamed reasoning, and interrupts answered by the next run.
    async fn capabilities(&self) -> AgentCapabilities {
        demo_capabilities()
    }

    async fn run(&self, input: RunAgentInput, ctx: RunContext) -> AgentResult {
        if !input.resume().is_empty() {
            return self.resumed(&ctx, &input).await;
        }
        if let Some(action) = input
            .forwarded_props
            .as_ref()
            .and_then(|p| p.get("a2uiAction"))
            .and_then(|a| a.get("userAction"))
        {
            return self.action(&ctx, action).await;
        }
        let said = input
            .messages
            .iter()
            .rev()
            .find(|m| m.role() == Role::User)
            .and_then(|m| m.text())
            .unwrap_or("")
            .to_owned();
        let lower = said.to_lowercase();
        if lower.contains("fail") {
            return Err(
                AgentError::new("The demo agent was asked to fail.").with_code("demo_failure")
            );
        }
        if lower.contains("flight") {
            return self
                .surface(&ctx, "Here is your flight.", flight_surface())
                .await;
        }
        if lower.contains("book a table") || lower.contains("table") {
            return self
                .surface(&ctx, "Fill in the booking form.", booking_surface())
                .await;
        }
        if lower.contains("compare") {
            return self
                .surface(&ctx, "Here are the plans side by side.", plans_surface())
                .await;
        }
        if let Some(n) = count_to(&lower) {
            return self.count(&ctx, &input, n).await;
        }
        if lower.contains("approve") {
            return self.approve(&ctx).await;
        }
        if lower.contains("research") {
            return self.research(&ctx, &said).await;
        }
        if lower.contains("think") {
            return self.think(&ctx, &said).await;
        }
        if lower.contains("plan") {
            return self.plan(&ctx).await;
        }
        if lower.contains("weather") || lower.contains("tool") {
            return self.weather(&ctx, &said).await;
        }
        self.reply(&ctx, &said).await
    }
}

/// `count to N` → N (at most 1000).
fn count_to(lower: &str) -> Option<u64> {
    let rest = lower.split_once("count to")?.1.trim_start();
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse::<u64>().ok().map(|n| n.min(1000))
}

/// What follows `keyword` in the message, lower-cased and trimmed; `default` when nothing
/// does.
fn topic_after(said: &str, keyword: &str, default: &str) -> String {
    said.to_lowercase()
        .split_once(keyword)
        .map(|(_, t)| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| default.to_owned())
}

/// The word after "in", capitalised; Paris by default.
fn city_in(said: &str) -> String {
    let words: Vec<&str> = said.split_whitespace().collect();
    words
        .iter()
        .position(|w| w.eq_ignore_ascii_case("in"))
        .and_then(|i| words.get(i + 1))
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + &c.as_str().to_lowercase())
                .unwrap_or_default()
        })
        .unwrap_or_else(|| "Paris".to_owned())
}

/// Deterministic weather from the city's name.
fn fake_weather(city: &str) -> (i64, &'static str) {
    let h = city
        .bytes()
        .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
    let skies = ["clear", "cloudy", "rainy", "windy"];
    ((h % 30) as i64 - 2, skies[(h / 30 % 4) as usize])
}

/// The demo agent's capabilities (`GET /agent/capabilities`, where the server adds its
/// transport).
pub fn demo_capabilities() -> AgentCapabilities {
    let weather = aguikit_core::Tool::new(
        "get_weather",
        "The weather in a city (the demo's own tool: it calls it and gives the result).",
        json!({"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}, "required": ["city"]}),
    );
    let doc = json!({
        "identity": {
            "name": "aguikit demo",
            "type": "aguikit-demo",
            "description": "The demo agent of agui serve: each behaviour shows a part of AG-UI.",
            "version": env!("CARGO_PKG_VERSION"),
            "provider": "aguikit",
        },
        "tools": {
            "supported": true,
            "items": [weather, aguikit_a2ui::emit::render_tool()],
            "parallelCalls": false,
            "clientProvided": false,
        },
        "state": {"snapshots": true, "deltas": true, "memory": false, "persistentState": false},
        "multiAgent": {
            "supported": true,
            "delegation": true,
            "handoffs": false,
            "subagents": [
                {"name": "historian", "description": "history"},
                {"name": "analyst", "description": "current state"},
            ],
        },
        "reasoning": {"supported": true, "streaming": true, "encrypted": false},
        "humanInTheLoop": {
            "supported": true,
            "approvals": true,
            "interrupts": true,
            "approveWithEdits": false,
        },
    });
    serde_json::from_value(doc).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_declares_what_it_does() {
        let c = demo_capabilities();
        let h = c.human_in_the_loop.as_ref().unwrap();
        assert_eq!((h.supported, h.interrupts), (Some(true), Some(true)));
        let t = c.tools.as_ref().unwrap();
        let names: Vec<&str> = t.items.iter().flatten().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["get_weather", "render_a2ui"]);
        assert_eq!(t.client_provided, Some(false));
        let subagents = c.multi_agent.as_ref().unwrap().subagents.as_ref().unwrap();
        assert_eq!(subagents.len(), 2);
        assert_eq!(c.reasoning.as_ref().unwrap().streaming, Some(true));
        let s = c.state.as_ref().unwrap();
        assert_eq!((s.snapshots, s.deltas), (Some(true), Some(true)));
        assert_eq!(
            c.identity.as_ref().unwrap().name.as_deref(),
            Some("aguikit demo")
        );
        // The server's part is the transport.
        assert_eq!(c.transport, None);
    }

    #[test]
    fn parses_counts_and_cities() {
        assert_eq!(count_to("please count to 5!"), Some(5));
        assert_eq!(count_to("count to 99999"), Some(1000));
        assert_eq!(count_to("count to x"), None);
        assert_eq!(city_in("weather in berlin?"), "Berlin");
        assert_eq!(city_in("weather"), "Paris");
        assert_eq!(fake_weather("Paris"), fake_weather("Paris"));
    }

    #[test]
    fn argument_pieces_end_on_character_boundaries() {
        let text = "Paris CDG → New York JFK, €5";
        let parts = pieces(text, 4);
        assert_eq!(parts.concat(), text);
        assert!(parts[..parts.len() - 1].iter().all(|p| p.len() >= 4));
        assert!(parts.iter().any(|p| p.contains('→')));
        assert_eq!(pieces("", 4), Vec::<&str>::new());
    }

    #[test]
    fn the_surfaces_are_valid_a2ui() {
        use aguikit_a2ui::emit::{DEFAULT_CATALOG_ID, RenderStep, RenderToolCall};
        for args in [flight_surface(), booking_surface(), plans_surface()] {
            let mut call = RenderToolCall::new(DEFAULT_CATALOG_ID, aguikit_a2ui::Validator::new());
            let steps = call.push_args(&args.to_string());
            assert!(call.finish().is_empty());
            let surfaces = steps
                .iter()
                .filter(|s| matches!(s, RenderStep::Surface(_)))
                .count();
            assert_eq!(surfaces, 2, "{args}: {steps:?}");
        }
    }
}
