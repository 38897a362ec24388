//! `HttpAgent::capabilities()` against `aguikit-server`'s `GET {path}/capabilities`: what the
//! agent declares with the server's transport, behind the same token as the agent; a route
//! that does not exist, and a document that is not `AgentCapabilities`, are errors.
#![allow(missing_docs)]

use aguikit_client::{ClientError, HttpAgent};
use aguikit_core::AgentCapabilities;
use aguikit_core::capabilities::{
    HumanInTheLoopCapabilities, IdentityCapabilities, TransportCapabilities,
};
use aguikit_server::{Access, Agent, AgentResult, AgentServer, Finish, RunContext, Tokens};
use tokio::net::TcpListener;

const TOKEN: &str = "capabilities-test-token-0123456789";

struct Declaring;

impl Agent for Declaring {
    async fn run(&self, _: aguikit_core::RunAgentInput, _: RunContext) -> AgentResult {
        Ok(Finish::success())
    }

    async fn capabilities(&self) -> AgentCapabilities {
        AgentCapabilities {
            identity: Some(IdentityCapabilities {
                name: Some("declaring".into()),
                ..Default::default()
            }),
            human_in_the_loop: Some(HumanInTheLoopCapabilities {
                interrupts: Some(true),
                ..Default::default()
            }),
            // The server's transport replaces whatever the agent says of it.
            transport: Some(TransportCapabilities {
                websocket: Some(true),
                streaming: Some(false),
                ..Default::default()
            }),
            ..Default::default()
        }
    }
}

async fn serve(app: axum::Router) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

#[tokio::test]
async fn capabilities_are_read_with_the_agents_token() {
    let server = AgentServer::new(Declaring)
        .path("/agent")
        .access(Access::default().auth(Tokens::single(TOKEN)));
    let base = serve(server.router()).await;
    let agent = HttpAgent::builder(&format!("{base}/agent?tenant=a"))
        .bearer_token(TOKEN)
        .build()
        .unwrap();
    let c = agent.capabilities().await.unwrap();
    assert_eq!(c.identity.unwrap().name.as_deref(), Some("declaring"));
    assert_eq!(c.human_in_the_loop.unwrap().interrupts, Some(true));
    let t = c.transport.unwrap();
    assert_eq!(
        (t.streaming, t.websocket, t.resumable),
        (Some(true), None, Some(false))
    );
    // The same route refuses a caller without the token.
    let anonymous = HttpAgent::new(&format!("{base}/agent")).unwrap();
    match anonymous.capabilities().await {
        Err(ClientError::Http { status: 401, .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_agent_that_declares_nothing_still_has_its_transport() {
    let base = serve(
        AgentServer::new(aguikit_server::agent_fn(|_, _| async {
            Ok(Finish::success())
        }))
        .router(),
    )
    .await;
    // Mounted at `/`: the route is `/capabilities`.
    let c = HttpAgent::new(&format!("{base}/"))
        .unwrap()
        .capabilities()
        .await
        .unwrap();
    assert_eq!(c.identity, None);
    assert_eq!(c.transport.unwrap().streaming, Some(true));
}

#[tokio::test]
async fn no_route_and_a_wrong_document_are_errors() {
    let server = AgentServer::new(Declaring);
    // Only the run route: no capabilities.
    let bare = axum::Router::new().route("/agent", server.method_router());
    let wrong = axum::routing::get(|| async {
        (
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            r#"{"transport":{"streaming":"yes"}}"#,
        )
    });
    let app = bare.route("/wrong/capabilities", wrong);
    let base = serve(app).await;
    match HttpAgent::new(&format!("{base}/agent"))
        .unwrap()
        .capabilities()
        .await
    {
        Err(ClientError::Http { status: 404, .. }) => {}
        other => panic!("{other:?}"),
    }
    match HttpAgent::new(&format!("{base}/wrong"))
        .unwrap()
        .capabilities()
        .await
    {
        Err(ClientError::Capabilities(m)) => {
            assert!(m.contains("/wrong/capabilities"), "{m}");
            assert!(m.contains("not an AgentCapabilities object"), "{m}");
        }
        other => panic!("{other:?}"),
    }
}
