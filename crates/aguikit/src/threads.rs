//! `agui threads list|show|delete|export URL`: the stored threads of an agent served by a
//! server that keeps them (such as `agui serve`), through its thread routes
//! (`GET URL/threads`, `GET URL/threads/ID`, `DELETE URL/threads/ID`,
//! `GET URL/threads/ID/connect`).

use crate::net::RequestArgs;
use aguikit_core::codec::decoder::{FrameDecoder, FrameRef};
use aguikit_core::codec::media::WireFormat;
use aguikit_core::fmt::with_causes;
use serde_json::Value;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

/// The most bytes of an error body kept for the message.
const EXCERPT_BYTES: usize = 2048;

/// `agui threads`' commands.
#[derive(clap::Subcommand)]
pub enum ThreadsCommand {
    /// List the threads (yours; an admin's token lists everyone's), newest activity first,
    /// a page at a time.
    List {
        /// The agent's endpoint (e.g. http://127.0.0.1:8000/agent).
        url: String,
        /// Threads per page (1 to 1000).
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Start at this page (the `nextCursor` of the page before).
        #[arg(long)]
        cursor: Option<String>,
        /// Follow the pages to the end (each of --limit threads) and list every thread.
        #[arg(long)]
        all: bool,
        /// Include the threads of `agui load` runs (left out by default), marked `load`.
        #[arg(long)]
        load: bool,
        /// Print the page as JSON: `{"threads":[...],"nextCursor":...}`.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        request: RequestArgs,
    },
    /// Show a thread: its runs, messages, state and the interrupts it waits on.
    Show {
        /// The agent's endpoint.
        url: String,
        /// The thread's id.
        id: String,
        /// Print the server's JSON (`messages`, `state`, `pendingInterrupts`, `runs`).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        request: RequestArgs,
    },
    /// Delete threads and their events.
    Delete {
        /// The agent's endpoint.
        url: String,
        /// The threads' ids.
        #[arg(required = true)]
        ids: Vec<String>,
        #[command(flatten)]
        request: RequestArgs,
    },
    /// Write a thread's stored events as JSON Lines (what `agui verify`, `apply` and
    /// `inspect` read); a run going on is followed to its end.
    Export {
        /// The agent's endpoint.
        url: String,
        /// The thread's id.
        id: String,
        /// Write to this file instead of standard output.
        #[arg(short, long)]
        output: Option<std::path::PathBuf>,
        /// The events compacted as the reference `compactEvents` does.
        #[arg(long)]
        compacted: bool,
        #[command(flatten)]
        request: RequestArgs,
    },
}

/// Why a command failed: the message, and the exit code (1: the server refused what was
/// asked, a thread it does not know or one with a run going on; 2: no answer, or another
/// status).
pub(crate) struct Failed(pub(crate) u8, pub(crate) String);

impl From<String> for Failed {
    fn from(m: String) -> Self {
        Failed(crate::net::UNREACHABLE, m)
    }
}

/// What the commands share: the client, the agent's URL, the headers and the time limit.
pub(crate) struct Api {
    client: reqwest::Client,
    agent: reqwest::Url,
    headers: Vec<(String, String)>,
    timeout: Duration,
}

impl Api {
    pub(crate) fn new(url: &str, request: &RequestArgs) -> Result<Api, String> {
        let (headers, timeout) = request.resolve()?;
        Ok(Api {
            client: crate::wire::client()?,
            agent: crate::net::check_url(url)?,
            headers,
            timeout,
        })
    }

    /// `{agent}/threads` followed by `segments`.
    pub(crate) fn url(&self, segments: &[&str]) -> reqwest::Url {
        let mut url = self.agent.clone();
        url.set_query(None);
        url.set_fragment(None);
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().push("threads").extend(segments);
        }
        url
    }

    /// Sends the request; the response when its status is 2xx, else why not.
    async fn send(
        &self,
        method: reqwest::Method,
        url: reqwest::Url,
        what: &str,
    ) -> Result<reqwest::Response, Failed> {
        let mut builder = self
            .client
            .request(method, url.clone())
            .timeout(self.timeout)
            .header(reqwest::header::ACCEPT, WireFormat::Sse.accept_header());
        for (name, value) in &self.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let response = builder
            .send()
            .await
            .map_err(|e| format!("{url}: {}", with_causes(&e)))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let body = response.bytes().await.unwrap_or_default();
        let excerpt = String::from_utf8_lossy(&body[..body.len().min(EXCERPT_BYTES)]);
        let said = serde_json::from_str::<Value>(&excerpt)
            .ok()
            .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_else(|| excerpt.trim().to_owned());
        let code = match status.as_u16() {
            404 | 409 => crate::net::FAILED,
            _ => crate::net::UNREACHABLE,
        };
        let hint = match status.as_u16() {
            401 => " (set AGUI_TOKEN to the server's token)",
            404 if what == "threads" => {
                " (does the server keep threads? `agui serve` does, at URL/threads)"
            }
            _ => "",
        };
        Err(Failed(
            code,
            format!(
                "{what}: {url} answered HTTP {}{hint}: {said}",
                status.as_u16()
            ),
        ))
    }

    pub(crate) async fn json(&self, url: reqwest::Url, what: &str) -> Result<Value, Failed> {
        let response = self.send(reqwest::Method::GET, url.clone(), what).await?;
        let body = response
            .bytes()
            .await
            .map_err(|e| format!("{url}: {}", with_causes(&e)))?;
        serde_json::from_slice(&body)
            .map_err(|e| Failed::from(format!("{url} answered no JSON ({e})")))
    }
}

/// Runs `agui threads …`: 0 on success, 1 when the server refused (a thread it does not
/// know, or one with a run going on, for `delete`), 2 for usage and connection problems and
/// other statuses.
pub async fn run(command: ThreadsCommand) -> Result<ExitCode, String> {
    let outcome = match command {
        ThreadsCommand::List {
            url,
            limit,
            cursor,
            all,
            load,
            json,
            request,
        } => {
            if !(1..=1000).contains(&limit) {
                return Err("--limit must be from 1 to 1000".into());
            }
            let api = Api::new(&url, &request)?;
            list(
                &api,
                Page {
                    limit,
                    cursor,
                    all,
                    load,
                },
                json,
            )
            .await
        }
        ThreadsCommand::Show {
            url,
            id,
            json,
            request,
        } => show(&Api::new(&url, &request)?, &id, json).await,
        ThreadsCommand::Delete { url, ids, request } => {
            delete(&Api::new(&url, &request)?, &ids).await
        }
        ThreadsCommand::Export {
            url,
            id,
            output,
            compacted,
            request,
        } => {
            export(
                &Api::new(&url, &request)?,
                &id,
                output.as_deref(),
                compacted,
            )
            .await
        }
    };
    match outcome {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(Failed(code, message)) => {
            eprintln!("agui: {message}");
            Ok(ExitCode::from(code))
        }
    }
}

/// Which threads `list` asks for.
struct Page {
    limit: usize,
    cursor: Option<String>,
    all: bool,
    load: bool,
}

async fn list(api: &Api, page: Page, json: bool) -> Result<(), Failed> {
    let Page {
        limit,
        mut cursor,
        all,
        load,
    } = page;
    let mut threads: Vec<Value> = Vec::new();
    let next = loop {
        let mut url = api.url(&[]);
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("limit", &limit.to_string());
            if let Some(c) = &cursor {
                q.append_pair("cursor", c);
            }
            if load {
                q.append_pair("load", "true");
            }
        }
        let page = api.json(url, "threads").await?;
        let Some(listed) = page.get("threads").and_then(Value::as_array) else {
            return Err(Failed::from(format!("the list has no `threads`: {page}")));
        };
        threads.extend(listed.iter().cloned());
        let next = page
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_owned);
        match next {
            // A cursor that does not move would loop for ever.
            Some(n) if all && cursor.as_deref() != Some(n.as_str()) => cursor = Some(n),
            next => break if all { None } else { next },
        }
    };
    if json {
        let page = serde_json::json!({"threads": threads, "nextCursor": next});
        crate::out::outln!(
            "{}",
            serde_json::to_string_pretty(&page).unwrap_or_default()
        );
        return Ok(());
    }
    if threads.is_empty() {
        crate::out::outln!("no threads");
    }
    let str_of = |t: &Value, k: &str| t.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let width = threads
        .iter()
        .map(|t| str_of(t, "threadId").chars().count())
        .max()
        .unwrap_or(0);
    // Owners are named when the list has several (an admin's).
    let owners: std::collections::BTreeSet<String> =
        threads.iter().map(|t| str_of(t, "owner")).collect();
    for t in &threads {
        let s = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or("");
        let updated = t.get("updatedMs").and_then(Value::as_u64).unwrap_or(0);
        let title = match s("title") {
            "" => "(untitled)",
            title => title,
        };
        crate::out::outln!(
            "{:<width$}  {:>3} runs  {:<11}  {}  {}{}{}",
            s("threadId"),
            t.get("runCount").and_then(Value::as_u64).unwrap_or(0),
            t.get("lastStatus").and_then(Value::as_str).unwrap_or("-"),
            time(updated),
            title,
            match s("owner") {
                owner if owners.len() > 1 && !owner.is_empty() => format!("  (owner {owner})"),
                _ => String::new(),
            },
            if t.get("load") == Some(&Value::Bool(true)) {
                "  [load]"
            } else {
                ""
            }
        );
    }
    if let Some(n) = next {
        crate::out::outln!("more: --cursor {n} (or --all)");
    }
    Ok(())
}

/// Unix milliseconds as `YYYY-MM-DDTHH:MM:SSZ`; `-` for 0 (unknown).
fn time(ms: u64) -> String {
    if ms == 0 {
        return "-".into();
    }
    let at = std::time::UNIX_EPOCH + Duration::from_millis(ms);
    let mut buf = [0u8; 27];
    let full = crate::logline::rfc3339_micros(at, &mut buf);
    format!("{}Z", &full[..19])
}

async fn show(api: &Api, id: &str, json: bool) -> Result<(), Failed> {
    let thread = api.json(api.url(&[id]), "thread").await?;
    if json {
        crate::out::outln!(
            "{}",
            serde_json::to_string_pretty(&thread).unwrap_or_default()
        );
        return Ok(());
    }
    crate::out::outln!("thread {id}");
    if let Some(owner) = thread.get("owner").and_then(Value::as_str) {
        crate::out::outln!("  owner    {owner}");
    }
    let runs = thread.get("runs").and_then(Value::as_array);
    crate::out::outln!("  runs     {}", runs.map_or(0, Vec::len));
    for r in runs.into_iter().flatten() {
        crate::out::outln!(
            "    {}  {}",
            r.get("runId").and_then(Value::as_str).unwrap_or("?"),
            r.get("status").and_then(Value::as_str).unwrap_or("?")
        );
    }
    let messages = thread.get("messages").and_then(Value::as_array);
    crate::out::outln!("  messages {}", messages.map_or(0, Vec::len));
    for m in messages.into_iter().flatten() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("?");
        let content = match m.get("content") {
            Some(Value::String(text)) => text.clone(),
            None | Some(Value::Null) => match m.get("toolCalls").and_then(Value::as_array) {
                Some(calls) => format!("({} tool calls)", calls.len()),
                None => String::new(),
            },
            Some(other) => other.to_string(),
        };
        crate::out::outln!("    {role:<9} {content}");
    }
    if let Some(state) = thread.get("state") {
        crate::out::outln!("  state    {state}");
    }
    if let Some(pending) = thread.get("pendingInterrupts").and_then(Value::as_array)
        && !pending.is_empty()
    {
        crate::out::outln!("  waits on {}", Value::Array(pending.clone()));
    }
    Ok(())
}

async fn delete(api: &Api, ids: &[String]) -> Result<(), Failed> {
    let mut first_failure: Option<Failed> = None;
    for id in ids {
        match api
            .send(reqwest::Method::DELETE, api.url(&[id]), "delete")
            .await
        {
            Ok(_) => crate::out::outln!("deleted {id}"),
            Err(Failed(code, message)) => {
                eprintln!("agui: {message}");
                // The worst code wins; every id is tried.
                if first_failure.as_ref().is_none_or(|f| f.0 < code) {
                    first_failure = Some(Failed(code, format!("{id} was not deleted")));
                }
            }
        }
    }
    first_failure.map_or(Ok(()), Err)
}

async fn export(
    api: &Api,
    id: &str,
    output: Option<&std::path::Path>,
    compacted: bool,
) -> Result<(), Failed> {
    let mut out: Box<dyn Write> = match output {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path).map_err(|e| format!("creating {}: {e}", path.display()))?,
        )),
        None => Box::new(crate::out::stdout()),
    };
    let events = each_event(api, id, compacted, |line| {
        writeln!(out, "{line}").map_err(|e| Failed::from(format!("writing: {e}")))
    })
    .await?;
    out.flush()
        .map_err(|e| Failed::from(format!("writing: {e}")))?;
    if let Some(path) = output {
        eprintln!("{events} events written to {}", path.display());
    }
    Ok(())
}

/// Every stored event of thread `id`, as JSON.
pub(crate) async fn thread_events(api: &Api, id: &str) -> Result<Vec<Value>, Failed> {
    let mut events = Vec::new();
    each_event(api, id, false, |line| {
        let v = serde_json::from_str(&line).map_err(|e| {
            Failed::from(format!(
                "thread {id}: stored event {} is not JSON: {e}",
                events.len()
            ))
        })?;
        events.push(v);
        Ok(())
    })
    .await?;
    Ok(events)
}

/// Hands the JSON of every stored event of thread `id` (from its `connect` route,
/// `compacted` or not) to `f`, in order; a run going on is followed to its end. Returns how
/// many there were.
async fn each_event(
    api: &Api,
    id: &str,
    compacted: bool,
    mut f: impl FnMut(String) -> Result<(), Failed>,
) -> Result<usize, Failed> {
    let mut url = api.url(&[id, "connect"]);
    url.query_pairs_mut().append_pair("after", "0");
    if compacted {
        url.query_pairs_mut().append_pair("compacted", "true");
    }
    let mut response = api
        .send(reqwest::Method::GET, url.clone(), "export")
        .await?;
    let mut decoder = FrameDecoder::new(WireFormat::Sse);
    let mut events = 0usize;
    let mut write = |frame: FrameRef<'_>, events: &mut usize| -> Result<(), Failed> {
        let line = match frame {
            FrameRef::Json { data, .. } => data.to_owned(),
            FrameRef::Event(event) => event.to_json_string(),
        };
        *events += 1;
        f(line)
    };
    loop {
        let chunk = response
            .chunk()
            .await
            .map_err(|e| format!("{url}: after {events} events: {}", with_causes(&e)))?;
        let Some(chunk) = chunk else { break };
        decoder.push(&chunk);
        while let Some(frame) = decoder
            .next_frame_ref()
            .map_err(|e| format!("{url}: event {events}: {e}"))?
        {
            write(frame, &mut events)?;
        }
    }
    while let Some(frame) = decoder
        .finish_ref()
        .map_err(|e| format!("{url}: event {events}: {e}"))?
    {
        write(frame, &mut events)?;
    }
    Ok(events)
}
