//! Host an agent over HTTP (aguikit-server): the agent echoes the last user message,
//! streamed in two deltas.
//!
//! ```sh
//! cargo run -p aguikit-examples --bin host_agent                    # one run of its own, then exits
//! cargo run -p aguikit-examples --bin host_agent -- 127.0.0.1:8000  # serves until Ctrl-C
//! ```
//!
//! With an address it serves until Ctrl-C or `SIGTERM`; `agui run
//! http://127.0.0.1:8000/agent --text hi` (or any AG-UI client) talks to it. Without one it
//! listens on a free loopback port, runs once against itself with `aguikit-client`, prints
//! the events it got, and shuts down gracefully.

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
    let address = std::env::args().nth(1);
    let listener =
        tokio::net::TcpListener::bind(address.as_deref().unwrap_or("127.0.0.1:0")).await?;
    let url = format!("http://{}/agent", listener.local_addr()?);
    println!("listening on {url}");
    let server = AgentServer::new(agent).path("/agent");
    match address {
        Some(_) => {
            server
                .serve(listener, aguikit_server::shutdown_signal())
                .await
        }
        None => server.serve(listener, run_once(url)).await,
    }
}

/// A client of our own: one run, each event printed as it arrives. The server shuts down
/// when this returns.
async fn run_once(url: String) {
    use aguikit_core::{Message, RunAgentInput};
    use futures_util::StreamExt;
    let agent = aguikit_client::HttpAgent::new(&url).expect("a valid URL");
    let input = RunAgentInput::new("thread-1", "run-1").with_message(Message::user("u1", "hello"));
    let mut events = agent.run(input);
    while let Some(event) = events.next().await {
        match event {
            Ok(event) => println!("{}", event.to_json_string()),
            Err(e) => println!("error: {e}"),
        }
    }
}
