//! The A2UI middleware of `aguikit-a2ui` in front of any agent (feature `a2ui`).
//!
//! [`A2uiAgent`] wraps any [`Agent`]: the run's input goes through
//! [`A2uiMiddleware::prepare`] (a user's action becomes a `log_a2ui_event` call and result),
//! every event the agent emits through [`A2uiMiddleware::push`] (a `render_a2ui` call
//! becomes `a2ui-surface` activities as its arguments stream in), and before the run ends
//! its unanswered `render_a2ui` calls get their `{"status":"rendered"}` results. Wrap an
//! `aguikit_gateway::Upstream` to put it in front of an agent on another server.
//!
//! With this feature a stored thread's read (`GET P/threads/ID`, feature `store`) also
//! has `surfaces` when its messages hold `a2ui-surface` activities: one object per
//! activity (`messageId`, `status` when it has one, `surfaces` with each surface's
//! `surfaceId`, `catalogId`, `components` and `dataModel`, and `violations`), as
//! `agui apply --a2ui` prints them.

//!
//! ```
//! use aguikit_server::{AgentServer, Finish, a2ui::A2uiAgent, agent_fn};
//! use serde_json::json;
//!
//! let agent = agent_fn(|_input, ctx| async move {
//!     let mut call = ctx.tool_call("render_a2ui").start().await?;
//!     call.args(json!({"surfaceId": "hello", "components": [
//!         {"id": "root", "component": "Text", "text": "Hello"}
//!     ]}).to_string()).await?;
//!     call.end().await?;
//!     Ok(Finish::success())
//! });
//! let server = AgentServer::new(A2uiAgent::new(agent));
//! # use aguikit_server::axum::{body::{Body, to_bytes}, http::Request};
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! # let input = r#"{"threadId":"t","runId":"r","state":{},"messages":[],"tools":[],"context":[],"forwardedProps":{}}"#;
//! # let request = Request::post("/").header("content-type", "application/json").body(Body::from(input)).unwrap();
//! # let sse = String::from_utf8(to_bytes(server.handle(request).await.into_body(), usize::MAX).await.unwrap().to_vec()).unwrap();
//! # assert!(sse.contains(r#""a2ui_operations""#) && sse.contains(r#"{\"status\":\"rendered\"}"#), "{sse}");
//! # });
//! ```

use crate::agent::{Agent, AgentResult};
use crate::context::RunContext;
use aguikit_a2ui::middleware::{A2uiMiddleware, MiddlewareConfig};
use aguikit_core::{AgentCapabilities, RunAgentInput};
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

/// An agent with the A2UI middleware in front of it.
#[derive(Debug, Clone)]
pub struct A2uiAgent<A> {
    agent: A,
    config: MiddlewareConfig,
}

impl<A: Agent> A2uiAgent<A> {
    /// `agent` behind the middleware with its default configuration (`render_a2ui` calls
    /// become surfaces; the tool is not offered).
    pub fn new(agent: A) -> Self {
        A2uiAgent::with_config(agent, MiddlewareConfig::default())
    }

    /// `agent` behind the middleware configured by `config`.
    pub fn with_config(agent: A, config: MiddlewareConfig) -> Self {
        A2uiAgent { agent, config }
    }

    /// The agent behind the middleware.
    pub fn inner(&self) -> &A {
        &self.agent
    }
}

impl<A: Agent> Agent for A2uiAgent<A> {
    async fn run(&self, mut input: RunAgentInput, ctx: RunContext) -> AgentResult {
        let mut middleware = A2uiMiddleware::new(self.config.clone());
        middleware.prepare(&mut input);
        let middleware = Arc::new(Mutex::new(middleware));
        let shared = Arc::clone(&middleware);
        let view = ctx.map_events(move |event| {
            shared
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(event)
        });
        let result = self.agent.run(input, view).await;
        if result.is_ok() {
            let results = middleware
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .unanswered();
            for event in results {
                ctx.emit(event).await?;
            }
        }
        result
    }

    /// The agent's own: the middleware declares nothing of its own.
    fn capabilities(&self) -> impl Future<Output = AgentCapabilities> + Send {
        self.agent.capabilities()
    }
}

/// The `a2ui-surface` activities among a thread's messages, as JSON (one object per
/// activity: `messageId`, `status`, `surfaces`, `violations`); `None` when there are none.
#[cfg(feature = "store")]
pub(crate) fn thread_surfaces<'a>(
    messages: impl IntoIterator<Item = &'a aguikit_core::Message>,
) -> Option<serde_json::Value> {
    let activities =
        aguikit_a2ui::agui::surfaces_from_messages(messages, &aguikit_a2ui::Validator::new());
    (!activities.is_empty())
        .then(|| serde_json::Value::Array(activities.iter().map(|a| a.to_value()).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Finish;
    use aguikit_core::capabilities::IdentityCapabilities;

    struct Named;

    impl Agent for Named {
        async fn run(&self, _: RunAgentInput, _: RunContext) -> AgentResult {
            Ok(Finish::success())
        }

        async fn capabilities(&self) -> AgentCapabilities {
            AgentCapabilities {
                identity: Some(IdentityCapabilities {
                    name: Some("named".into()),
                    ..Default::default()
                }),
                ..Default::default()
            }
        }
    }

    #[test]
    fn the_capabilities_are_the_agents() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let caps = rt.block_on(A2uiAgent::new(Named).capabilities());
        assert_eq!(caps.identity.and_then(|i| i.name).as_deref(), Some("named"));
    }
}
