//! A minimal AG-UI client: sends one user message to an agent and shows the run live.
//!
//! ```text
//! cargo run -p aguikit --example chat -- http://127.0.0.1:8000/agent "Hello"
//! ```
//!
//! Add `--json` to print the run report instead (the shape of the interop TypeScript
//! client's report).

use aguikit::report::{RunOptions, render_run, run_report};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut json = false;
    let mut positional = Vec::new();
    for arg in std::env::args().skip(1) {
        if arg == "--json" {
            json = true;
        } else {
            positional.push(arg);
        }
    }
    let mut positional = positional.into_iter();
    let Some(url) = positional.next() else {
        eprintln!("usage: chat URL [TEXT] [--json]");
        std::process::exit(2);
    };
    let options = RunOptions {
        text: positional.next(),
        ..RunOptions::default()
    };
    let report = if json {
        let report = run_report(&url, &options).await;
        println!("{}", report.to_json_pretty());
        report
    } else {
        // The renderer shows failures too.
        let mut out = std::io::stdout();
        render_run(&url, &options, &mut out).await
    };
    std::process::exit(report.exit_code());
}
