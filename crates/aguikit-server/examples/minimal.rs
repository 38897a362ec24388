//! The smallest useful agent: echoes the last user message, streamed in two deltas.
//!
//!     cargo run -p aguikit-server --example minimal        # then POST to http://127.0.0.1:8000/agent

use aguikit_server::{AgentServer, Finish, agent_fn};

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let agent = agent_fn(|input, ctx| async move {
        let said = input
            .messages
            .last()
            .and_then(|m| m.text())
            .unwrap_or("nothing");
        let reply = ctx.text_message().start().await?;
        reply.delta("You said: ").await?;
        reply.delta(said.to_owned()).await?;
        reply.end().await?;
        Ok(Finish::success())
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
    println!("listening on http://{}/agent", listener.local_addr()?);
    AgentServer::new(agent)
        .path("/agent")
        .serve(listener, aguikit_server::shutdown_signal())
        .await
}
