//! `agui inspect FILE`: a readable timeline of a recorded stream — one line per event with
//! its index, the time since the first timestamp, the type coloured by family, the subagent
//! it belongs to and a short summary — then the messages the stream built, the final state,
//! and the exact event and rule where verification breaks.

use crate::input::{EventReader, Format, Item, RawEvent, ReadError, Source, Undecodable};
use crate::term::{ColorChoice, Paint, sgr};
use aguikit_core::engine::pipeline::{Pipeline, PipelineError, PipelineErrorKind};
use serde_json::Value;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `agui inspect`.
#[derive(Debug, Clone, Copy, Default)]
pub struct InspectOptions {
    /// When to colour.
    pub color: ColorChoice,
    /// Print summaries whole instead of cutting them to one short line.
    pub full: bool,
    /// The largest SSE frame or JSON line read.
    pub max_frame_bytes: usize,
}

/// Summaries are cut to this many characters unless `--full`.
const SUMMARY_CHARS: usize = 96;

/// Message summaries (text, tool calls) get a little more.
const MESSAGE_CHARS: usize = 160;

/// Runs `agui inspect`: 0 when the stream verifies, 1 when it breaks.
///
/// The stream is read twice, one event at a time: once to verify it and learn what the
/// timeline's header and tags need (count, time span, subagent names, where it breaks), then
/// to print the timeline. Standard input is kept in a temporary file for the second reading.
pub fn run(file: &str, opts: InspectOptions) -> Result<ExitCode, String> {
    let mut stream = Twice::open(file, opts.max_frame_bytes)?;
    let paint = Paint::for_stdout(opts.color);
    let mut out = crate::out::stdout();
    let result = render(&mut stream, paint, opts.full, &mut out).and_then(|v| {
        out.flush()?;
        Ok(v)
    });
    match result {
        Ok(true) => Ok(ExitCode::SUCCESS),
        Ok(false) => Ok(ExitCode::from(1)),
        Err(RenderError::Write(e)) => Err(e.to_string()),
        Err(RenderError::Read(e)) => Err(e),
    }
}

/// Why the inspection stopped.
#[derive(Debug)]
pub enum RenderError {
    /// Writing failed.
    Write(std::io::Error),
    /// The stream could not be read.
    Read(String),
}

impl From<std::io::Error> for RenderError {
    fn from(e: std::io::Error) -> Self {
        RenderError::Write(e)
    }
}

impl From<ReadError> for RenderError {
    fn from(e: ReadError) -> Self {
        RenderError::Read(e.to_string())
    }
}

/// A stream that can be read from its start more than once, event by event.
pub trait Replay {
    /// The stream's format.
    fn format(&self) -> Format;
    /// Hands every event to `f`, from the first.
    fn each(&mut self, f: &mut dyn FnMut(Frame<'_>)) -> Result<(), ReadError>;
}

/// One event of a [`Replay`]: its JSON text, or (read from protobuf) why it has none.
pub type Frame<'a> = Result<&'a [u8], &'a Undecodable>;

/// A file (or standard input, kept in a temporary file) read once per pass.
struct Twice {
    /// What the error messages call the input.
    name: String,
    format: Format,
    first: Option<EventReader>,
    /// Where the second reading comes from.
    again: Again,
    max_frame_bytes: usize,
}

/// Where [`Twice`] reads the stream again.
enum Again {
    /// The regular file at this path.
    Path(String),
    /// The copy made while reading the first time (its handle: it is removed from its
    /// folder when the process ends, however it ends).
    Spooled(Spool),
}

impl Twice {
    fn open(file: &str, max_frame_bytes: usize) -> Result<Twice, String> {
        // Only a regular file can be opened again; standard input, a pipe (`<(...)`) or a
        // device is copied aside while it is read the first time.
        let regular = file != "-" && std::fs::metadata(file).is_ok_and(|m| m.is_file());
        let name = if file == "-" { "standard input" } else { file };
        let (source, again) = if regular {
            (Source::open(file)?, Again::Path(file.to_owned()))
        } else {
            let inner: Box<dyn Read + Send> = if file == "-" {
                Box::new(std::io::stdin())
            } else {
                Box::new(std::fs::File::open(file).map_err(|e| format!("reading {file}: {e}"))?)
            };
            let spool = Spool::create()?;
            let copy = spool
                .file
                .try_clone()
                .map_err(|e| format!("copying {name} aside: {e}"))?;
            (
                Source::from_reader(Box::new(Tee { inner, copy }), name),
                Again::Spooled(spool),
            )
        };
        let first = EventReader::new(source, max_frame_bytes)?;
        Ok(Twice {
            name: name.to_owned(),
            format: first.format(),
            first: Some(first),
            again,
            max_frame_bytes,
        })
    }
}

impl Replay for Twice {
    fn format(&self) -> Format {
        self.format
    }

    fn each(&mut self, f: &mut dyn FnMut(Frame<'_>)) -> Result<(), ReadError> {
        let mut reader = match self.first.take() {
            Some(r) => r,
            None => {
                let io = |e: std::io::Error| ReadError::Io(format!("reading {}: {e}", self.name));
                let file = match &self.again {
                    Again::Path(path) => std::fs::File::open(path).map_err(io)?,
                    Again::Spooled(spool) => {
                        let mut file = spool.file.try_clone().map_err(io)?;
                        std::io::Seek::rewind(&mut file).map_err(io)?;
                        file
                    }
                };
                EventReader::new(
                    Source::from_reader(Box::new(file), &self.name),
                    self.max_frame_bytes,
                )?
            }
        };
        reader.for_each_item(|item| {
            match item {
                Item::Event(json) => f(Ok(json)),
                Item::Undecodable(u) => f(Err(u)),
                Item::Reading => {}
            }
            ControlFlow::Continue(())
        })
    }
}

/// Events already in memory (tests).
impl Replay for (Format, Vec<Vec<u8>>) {
    fn format(&self) -> Format {
        self.0
    }

    fn each(&mut self, f: &mut dyn FnMut(Frame<'_>)) -> Result<(), ReadError> {
        for e in &self.1 {
            f(Ok(e));
        }
        Ok(())
    }
}

/// A temporary file only its owner can read. On Unix it is removed from its folder as soon
/// as it is made (it lives while open, so it is gone when the process ends, even when a
/// closed standard output ends it early); elsewhere when dropped.
struct Spool {
    file: std::fs::File,
    /// The path to remove when dropped (not on Unix: removed already).
    path: Option<PathBuf>,
}

impl Spool {
    /// A new empty file, open for reading and writing.
    fn create() -> Result<Spool, String> {
        let dir = std::env::temp_dir();
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        for n in 0..100 {
            let path = dir.join(format!(
                "agui-inspect-{}-{stamp}-{n}.tmp",
                std::process::id()
            ));
            let mut options = std::fs::OpenOptions::new();
            options.read(true).write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            match options.open(&path) {
                Ok(file) => {
                    if cfg!(unix) && std::fs::remove_file(&path).is_ok() {
                        return Ok(Spool { file, path: None });
                    }
                    return Ok(Spool {
                        file,
                        path: Some(path),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(format!("creating {}: {e}", path.display())),
            }
        }
        Err(format!("no free temporary file name in {}", dir.display()))
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A reader that copies what it reads into a file.
struct Tee<R> {
    inner: R,
    copy: std::fs::File,
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.copy.write_all(&buf[..n])?;
        Ok(n)
    }
}

/// One event's JSON as the timeline shows it: the value, or why the text is not JSON. An
/// event read from protobuf that breaks the schema shows as its type alone.
fn raw_event(frame: Frame<'_>, format: Format) -> RawEvent {
    match frame {
        Ok(json) => serde_json::from_slice(json).map_err(|e| match format {
            Format::Sse => format!("invalid JSON in SSE frame: {e}"),
            _ => format!("invalid JSON line: {e}"),
        }),
        Err(u) => Ok(serde_json::json!({ "type": u.event_type })),
    }
}

/// What the first reading learnt: the engine's verdict and what the timeline needs.
struct Verdict {
    pipeline: Pipeline,
    error: Option<PipelineError>,
    warnings: HashMap<usize, Vec<String>>,
    /// Number of events.
    count: usize,
    /// The first and the last timestamp.
    t0: Option<i64>,
    t_last: Option<i64>,
    /// Events with a timestamp.
    stamped: usize,
    /// `subagentRunId` → name, from every `SUBAGENT_STARTED`.
    names: HashMap<String, String>,
    /// The type label of the event the error names, if it names one.
    failing_label: Option<String>,
    /// The type of the last `RUN_STARTED`, `RUN_FINISHED` or `RUN_ERROR`.
    last_run_event: Option<String>,
    /// The `a2ui-surface` activities, folded and checked (A2UI rules A1–A17).
    a2ui: aguikit_a2ui::agui::ActivityFolder,
    /// What breaks an A2UI rule, by event.
    a2ui_findings: Vec<aguikit_a2ui::agui::EventFinding>,
}

fn verify(stream: &mut dyn Replay) -> Result<Verdict, ReadError> {
    let format = stream.format();
    let mut p = Pipeline::new().with_warnings(true);
    let mut v = Verdict {
        pipeline: Pipeline::new(),
        error: None,
        warnings: HashMap::new(),
        count: 0,
        t0: None,
        t_last: None,
        stamped: 0,
        names: HashMap::new(),
        failing_label: None,
        last_run_event: None,
        a2ui: aguikit_a2ui::agui::ActivityFolder::default(),
        a2ui_findings: Vec::new(),
    };
    let mut applied_warnings = 0;
    stream.each(&mut |frame| {
        let i = v.count;
        v.count += 1;
        let raw = raw_event(frame, format);
        if let Ok(value) = &raw {
            if let Some(t) = timestamp(value) {
                v.t0.get_or_insert(t);
                v.t_last = Some(t);
                v.stamped += 1;
            }
            match event_type(value) {
                Some("SUBAGENT_STARTED") => {
                    if let (Some(id), Some(name)) = (
                        value.get("subagentRunId").and_then(Value::as_str),
                        value.get("name").and_then(Value::as_str),
                    ) {
                        v.names.insert(id.to_owned(), name.to_owned());
                    }
                }
                Some(t @ ("RUN_STARTED" | "RUN_FINISHED" | "RUN_ERROR")) => {
                    v.last_run_event = Some(t.to_owned());
                }
                _ => {}
            }
        }
        if v.error.is_some() {
            return;
        }
        let result = match (frame, &raw) {
            (Err(u), _) => p
                .push_decoded(Err(u.error.clone()), u.event_type.clone())
                .map(|_| ()),
            (Ok(json), Ok(_)) => {
                let pushed = p.push_json(json).map(|_| ());
                if pushed.is_ok()
                    && let Ok(event) = aguikit_core::Event::from_json_slice(json)
                {
                    let found = v.a2ui.push(i, &event);
                    v.a2ui_findings.extend(found);
                }
                pushed
            }
            (Ok(_), Err(e)) => push_not_json(&mut p, e),
        };
        // The reducer's warnings carry no index: they belong to the event just pushed.
        let all = p.applier().warnings();
        for w in &all[applied_warnings..] {
            v.warnings.entry(i).or_default().push(w.to_string());
        }
        applied_warnings = all.len();
        if let Err(e) = result {
            v.failing_label = Some(type_label(&raw));
            v.error = Some(e);
        }
    })?;
    if v.error.is_none()
        && let Err(e) = p.finish()
    {
        v.error = Some(e);
    }
    for (i, w) in p.warnings() {
        v.warnings.entry(*i).or_default().push(w.clone());
    }
    v.pipeline = p;
    Ok(v)
}

/// Feeds `p` a frame that is not JSON, as the decoder's syntax error `message` (with no
/// excerpt: the message names the problem), so that the stream breaks there.
pub fn push_not_json(p: &mut Pipeline, message: &str) -> Result<(), PipelineError> {
    p.push_decoded(
        Err(aguikit_core::event::DecodeError::Syntax {
            message: message.to_owned(),
            excerpt: String::new(),
        }),
        String::new(),
    )
    .map(|_| ())
}

/// The message of a pipeline error, without the index and type (shown apart).
pub fn error_message(e: &PipelineError) -> String {
    match &e.kind {
        PipelineErrorKind::Rule(v) => v.message.clone(),
        // Frames that are not JSON carry the parser's message; there is no excerpt to show.
        PipelineErrorKind::Decode(aguikit_core::event::DecodeError::Syntax { message, .. }) => {
            message.clone()
        }
        PipelineErrorKind::Decode(d) => d.to_string(),
        other => other.to_string(),
    }
}

/// Writes the whole inspection, reading the stream twice; returns whether it verifies.
pub fn render(
    stream: &mut dyn Replay,
    paint: Paint,
    full: bool,
    out: &mut dyn Write,
) -> Result<bool, RenderError> {
    let format = stream.format();
    let verdict = verify(stream)?;
    let names = &verdict.names;
    let count = verdict.count;
    let (t0, t_last) = (verdict.t0, verdict.t_last);
    let cut_to = |s: String, max: usize| if full { s } else { excerpt(&s, max) };
    let cut = |s: String| cut_to(s, SUMMARY_CHARS);

    let format_name = match format {
        Format::JsonArray => "JSON array",
        Format::JsonLines => "JSON Lines",
        Format::Sse => "SSE",
        Format::Case => "case file",
        Format::Protobuf => "protobuf",
    };
    let span = match (t0, t_last) {
        (Some(a), Some(b)) if b > a => format!(", {:.3} s", (b - a) as f64 / 1000.0),
        _ => String::new(),
    };
    // Times come from the events' `timestamp`s: say when there are none, or only some.
    let stamps = match verdict.stamped {
        _ if count == 0 => String::new(),
        0 => ", no timestamps (no times to show: `agui record --stamp` adds them)".to_owned(),
        n if n < count => format!(" ({n} of {count} events timestamped)"),
        _ => String::new(),
    };
    writeln!(
        out,
        "{}",
        paint.paint(
            sgr::BOLD,
            &format!(
                "{count} event{} ({format_name}){span}{stamps}",
                plural(count)
            )
        )
    )?;
    let idx_width = count.saturating_sub(1).to_string().len().max(2);
    let error_at = verdict.error.as_ref().map(|e| e.index);
    let mut i = 0usize;
    let mut written: std::io::Result<()> = Ok(());
    stream.each(&mut |frame| {
        if written.is_err() {
            return;
        }
        let raw = raw_event(frame, format);
        written = timeline_line(
            out,
            TimelineRow {
                i,
                raw: &raw,
                t0,
                names,
                idx_width,
                error_at,
                verdict: &verdict,
            },
            paint,
            &cut,
        );
        i += 1;
    })?;
    written?;
    if let Some(e) = verdict.error.as_ref().filter(|e| e.index >= count) {
        writeln!(
            out,
            "{}{:>idx_width$}  {}{}",
            paint.paint(sgr::BOLD_RED, "✗"),
            e.index,
            time_cell(t0.is_some(), ""),
            paint.paint(
                sgr::BOLD_RED,
                &format!("end of stream: {}: {}", e.rule(), error_message(e))
            ),
        )?;
    }

    let applier = verdict.pipeline.applier();
    let messages = applier.messages();
    writeln!(out)?;
    let upto = if verdict.error.is_some() {
        ", up to the break"
    } else {
        ""
    };
    writeln!(
        out,
        "{}",
        paint.paint(
            sgr::BOLD,
            &format!("{} message{}{upto}", messages.len(), plural(messages.len()))
        )
    )?;
    let id_width = messages
        .iter()
        .map(|m| m.id().chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    // One message at a time as JSON, so that a long conversation is not copied whole.
    for m in messages.iter() {
        let m = &serde_json::to_value(m).unwrap_or(Value::Null);
        let role = m.get("role").and_then(Value::as_str).unwrap_or("?");
        let id = m.get("id").and_then(Value::as_str).unwrap_or("");
        let tag = m
            .get("subagentRunId")
            .and_then(Value::as_str)
            .map(|s| {
                format!(
                    "{} ",
                    paint.paint(
                        sgr::BLUE,
                        &format!("[{}]", names.get(s).cloned().unwrap_or_else(|| short_id(s)))
                    )
                )
            })
            .unwrap_or_default();
        writeln!(
            out,
            "  {} {id:<id_width$}  {tag}{}",
            paint.paint(role_style(role), &format!("{role:<9}")),
            cut_to(message_summary(m), MESSAGE_CHARS)
        )?;
    }
    let state = applier.state();
    if state.as_object().is_none_or(|o| !o.is_empty()) {
        writeln!(
            out,
            "{} {}",
            paint.paint(sgr::BOLD, "state"),
            cut(state.to_string())
        )?;
    }
    let pending = applier.pending_interrupts();
    if !pending.is_empty() {
        let list: Vec<String> = pending
            .iter()
            .map(|i| format!("{} ({})", i.id, i.reason))
            .collect();
        writeln!(
            out,
            "{} {}",
            paint.paint(sgr::BOLD, "pending interrupts"),
            list.join(", ")
        )?;
    }
    let activities = verdict.a2ui.activities().count();
    if activities > 0 {
        let surfaces: usize = verdict.a2ui.activities().map(|a| a.surfaces.len()).sum();
        writeln!(
            out,
            "{} {surfaces} surface{} in {activities} a2ui-surface activit{}, {} A2UI violation{}",
            paint.paint(sgr::BOLD, "a2ui"),
            plural(surfaces),
            if activities == 1 { "y" } else { "ies" },
            verdict.a2ui_findings.len(),
            plural(verdict.a2ui_findings.len()),
        )?;
        for f in &verdict.a2ui_findings {
            let v = &f.violation;
            let mut place = Vec::new();
            if let Some(s) = &v.surface_id {
                place.push(format!("surface {s}"));
            }
            if let Some(c) = &v.component_id {
                place.push(format!("component {c}"));
            }
            if !v.path.is_empty() {
                place.push(v.path.clone());
            }
            let mark = if v.is_error() { "✗" } else { "!" };
            writeln!(
                out,
                "  {} event {} rule {} ({}): {}",
                paint.paint(
                    if v.is_error() {
                        sgr::BOLD_RED
                    } else {
                        sgr::YELLOW
                    },
                    mark
                ),
                f.event,
                v.rule,
                place.join(", "),
                cut(v.message.clone())
            )?;
        }
    }
    writeln!(out)?;
    match &verdict.error {
        None => {
            let ending = match verdict.last_run_event.as_deref() {
                Some("RUN_STARTED") => {
                    " (but the last run has no RUN_FINISHED or RUN_ERROR)".to_owned()
                }
                Some(t) => format!(", ends with {t}"),
                None => String::new(),
            };
            writeln!(
                out,
                "{}",
                paint.paint(sgr::GREEN, &format!("✓ valid{ending}"))
            )?;
            Ok(true)
        }
        Some(e) => {
            let place = if e.index >= count {
                format!(
                    "at the end of the stream (after event {})",
                    e.index.saturating_sub(1)
                )
            } else {
                let ty = match (e.event_type.as_str(), &verdict.failing_label) {
                    ("", Some(label)) => label.clone(),
                    ("", None) => "end of stream".to_owned(),
                    (t, _) => t.to_owned(),
                };
                if ty.starts_with('(') {
                    format!("at event {} {ty}", e.index)
                } else {
                    format!("at event {} ({ty})", e.index)
                }
            };
            writeln!(
                out,
                "{}",
                paint.paint(
                    sgr::BOLD_RED,
                    &format!("✗ breaks {place}: rule {}: {}", e.rule(), error_message(e))
                )
            )?;
            Ok(false)
        }
    }
}

/// One event of the timeline, with what its line needs to know.
struct TimelineRow<'a> {
    i: usize,
    raw: &'a RawEvent,
    t0: Option<i64>,
    names: &'a HashMap<String, String>,
    idx_width: usize,
    error_at: Option<usize>,
    verdict: &'a Verdict,
}

/// Writes one event's line (and its warnings, and the error when it breaks there).
fn timeline_line(
    out: &mut dyn Write,
    row: TimelineRow<'_>,
    paint: Paint,
    cut: &dyn Fn(String) -> String,
) -> std::io::Result<()> {
    let TimelineRow {
        i,
        raw,
        t0,
        names,
        idx_width,
        error_at,
        verdict,
    } = row;
    let ty = type_label(raw);
    let (tag, summary) = match raw {
        Ok(v) => {
            let tag = v
                .get("subagentRunId")
                .and_then(Value::as_str)
                .map(|id| names.get(id).cloned().unwrap_or_else(|| short_id(id)));
            (tag, summary(v))
        }
        Err(e) => (None, e.clone()),
    };
    let time = raw
        .as_ref()
        .ok()
        .and_then(timestamp)
        .zip(t0)
        .map(|(t, t0)| format!("+{:.3}s", (t - t0) as f64 / 1000.0))
        .unwrap_or_default();
    let broken = error_at == Some(i);
    let after = error_at.is_some_and(|at| i > at);
    let mark = if broken { "✗" } else { " " };
    let ty_cell = format!("{ty:<26}");
    let ty_cell = if broken {
        paint.paint(sgr::BOLD_RED, &ty_cell)
    } else if after {
        paint.paint(sgr::GREY, &ty_cell)
    } else {
        paint.paint(family_style(&ty), &ty_cell)
    };
    let tag = tag
        .map(|t| format!("{} ", paint.paint(sgr::BLUE, &format!("[{t}]"))))
        .unwrap_or_default();
    let summary = cut(summary);
    let summary = if after {
        paint.paint(sgr::GREY, &summary)
    } else {
        summary
    };
    writeln!(
        out,
        "{}{i:>idx_width$}  {}{ty_cell} {tag}{summary}",
        paint.paint(sgr::BOLD_RED, mark),
        paint.paint(sgr::DIM, &time_cell(t0.is_some(), &time)),
    )?;
    // Warnings and the error line up under the type.
    let pad = idx_width + 3 + time_cell(t0.is_some(), "").len();
    if let Some(ws) = verdict.warnings.get(&i) {
        for w in ws {
            writeln!(
                out,
                "{:pad$}{}",
                "",
                paint.paint(sgr::YELLOW, &format!("! {}", cut(w.clone()))),
                pad = pad
            )?;
        }
    }
    if broken && let Some(e) = &verdict.error {
        writeln!(
            out,
            "{:pad$}{}",
            "",
            paint.paint(
                sgr::BOLD_RED,
                &format!("^ {}: {}", e.rule(), error_message(e))
            ),
            pad = pad
        )?;
    }
    Ok(())
}

/// The time column's cell: `time` right-aligned and a gap, or nothing when the stream has
/// no timestamps (the header says so).
fn time_cell(timed: bool, time: &str) -> String {
    if timed {
        format!("{time:>9}  ")
    } else {
        String::new()
    }
}

/// The type of the event a pipeline error names: as the error says, else what the event is
/// (`(not JSON)`, `(null)`, ...), else `end of stream`.
pub fn failing_type(e: &PipelineError, events: &[RawEvent]) -> String {
    match (e.event_type.as_str(), events.get(e.index)) {
        ("", Some(raw)) => type_label(raw),
        ("", None) => "end of stream".to_owned(),
        (t, _) => t.to_owned(),
    }
}

/// The type column of an event: its `type`, or what it is instead.
fn type_label(raw: &RawEvent) -> String {
    match raw {
        Ok(v @ Value::Object(_)) => event_type(v).unwrap_or("(no type)").to_owned(),
        Ok(Value::Null) => "(null)".to_owned(),
        Ok(_) => "(not an object)".to_owned(),
        Err(_) => "(not JSON)".to_owned(),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn event_type(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

fn timestamp(v: &Value) -> Option<i64> {
    v.get("timestamp").and_then(Value::as_i64)
}

fn short_id(id: &str) -> String {
    excerpt(id, 10)
}

/// The style of an event type's family.
fn family_style(ty: &str) -> anstyle::Style {
    match ty {
        "RUN_ERROR" | "SUBAGENT_ERROR" => sgr::RED,
        t if t.starts_with("RUN_") || t.starts_with("STEP_") => sgr::BOLD,
        t if t.starts_with("TEXT_MESSAGE_") => sgr::GREEN,
        t if t.starts_with("TOOL_CALL_") => sgr::YELLOW,
        t if t.starts_with("STATE_") || t == "MESSAGES_SNAPSHOT" => sgr::MAGENTA,
        t if t.starts_with("ACTIVITY_") => sgr::CYAN,
        t if t.starts_with("REASONING_") || t.starts_with("THINKING_") => sgr::GREY,
        t if t.starts_with("SUBAGENT_") => sgr::BLUE,
        "RAW" | "CUSTOM" => anstyle::Style::new(),
        _ => sgr::DIM,
    }
}

fn role_style(role: &str) -> anstyle::Style {
    match role {
        "user" => sgr::CYAN,
        "assistant" => sgr::GREEN,
        "tool" => sgr::YELLOW,
        "reasoning" => sgr::GREY,
        "activity" => sgr::CYAN,
        _ => sgr::BOLD,
    }
}

/// `text` cut to `max` characters, with `…` when cut.
pub use aguikit_core::fmt::excerpt;

/// A chunk's line from the parts it has, `FIRST (SECOND) DELTA`: the message id and role
/// of a text chunk, the tool's name and the call id of a tool-call chunk.
fn chunk_line(first: Option<&str>, second: Option<&str>, delta: Option<String>) -> String {
    let mut parts = Vec::new();
    if let Some(f) = first {
        parts.push(f.to_owned());
    }
    if let Some(s) = second {
        parts.push(format!("({s})"));
    }
    parts.extend(delta);
    parts.join(" ")
}

/// A string as a quoted JSON string (escapes visible).
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// Control characters made visible; the rest as is (for argument fragments).
fn visible(s: &str) -> String {
    s.chars()
        .flat_map(|c| match c {
            '\n' => vec!['\\', 'n'],
            '\r' => vec!['\\', 'r'],
            '\t' => vec!['\\', 't'],
            c if c.is_control() => vec!['�'],
            c => vec![c],
        })
        .collect()
}

/// The one-line summary of an event.
pub fn summary(v: &Value) -> String {
    let s = |k: &str| v.get(k).and_then(Value::as_str);
    let json = |k: &str| v.get(k).map(Value::to_string).unwrap_or_default();
    let Some(ty) = event_type(v) else {
        return match v {
            Value::Null => "null: an event must be an object".into(),
            Value::Object(_) => "no type: dropped by clients".into(),
            other => format!("{other}: not an object, dropped by clients"),
        };
    };
    let or = |o: Option<&str>, d: &str| o.unwrap_or(d).to_owned();
    match ty {
        "RUN_STARTED" => {
            let mut out = format!(
                "thread {} · run {}",
                or(s("threadId"), "?"),
                or(s("runId"), "?")
            );
            if let Some(p) = s("parentRunId") {
                out += &format!(" · parent {p}");
            }
            if let Some(input) = v.get("input") {
                let n = input
                    .get("messages")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                out += &format!(" · input with {n} message{}", plural(n));
            }
            out
        }
        "RUN_FINISHED" => {
            let outcome = v.get("outcome");
            let mut out = match outcome.and_then(|o| o.get("type")).and_then(Value::as_str) {
                Some("interrupt") => {
                    let list: Vec<String> = outcome
                        .and_then(|o| o.get("interrupts"))
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .map(|i| {
                                    format!(
                                        "{} ({})",
                                        i.get("id").and_then(Value::as_str).unwrap_or("?"),
                                        i.get("reason").and_then(Value::as_str).unwrap_or("?")
                                    )
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    format!("interrupt: {}", list.join(", "))
                }
                Some("cancelled") => "cancelled".into(),
                _ => {
                    let pending = outcome
                        .and_then(|o| o.get("pendingToolCallIds"))
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .collect::<Vec<_>>()
                                .join(", ")
                        })
                        .filter(|s| !s.is_empty());
                    match pending {
                        Some(p) => format!("success, tool calls pending: {p}"),
                        None => "success".into(),
                    }
                }
            };
            if let Some(r) = v.get("result") {
                out += &format!(" · result {r}");
            }
            out
        }
        "RUN_ERROR" | "SUBAGENT_ERROR" => match s("code") {
            Some(c) => format!("{} ({c})", quoted(&or(s("message"), ""))),
            None => quoted(&or(s("message"), "")),
        },
        "STEP_STARTED" | "STEP_FINISHED" => or(s("stepName"), "?"),
        "TEXT_MESSAGE_START" | "REASONING_MESSAGE_START" => {
            let mut out = format!(
                "{} ({})",
                or(s("messageId"), "?"),
                or(
                    s("role"),
                    if ty == "TEXT_MESSAGE_START" {
                        "assistant"
                    } else {
                        "reasoning"
                    }
                )
            );
            if let Some(n) = s("name") {
                out += &format!(" name {n}");
            }
            out
        }
        "TEXT_MESSAGE_CONTENT" | "REASONING_MESSAGE_CONTENT" => match v.get("delta") {
            Some(Value::String(d)) => quoted(d),
            Some(other) => format!("delta {other}"),
            None => "no delta".into(),
        },
        "TEXT_MESSAGE_CHUNK" | "REASONING_MESSAGE_CHUNK" => {
            chunk_line(s("messageId"), s("role"), s("delta").map(quoted))
        }
        "TEXT_MESSAGE_END" | "REASONING_MESSAGE_END" | "REASONING_START" | "REASONING_END" => {
            or(s("messageId"), "?")
        }
        "TOOL_CALL_START" => {
            let mut out = format!(
                "{} ({})",
                or(s("toolCallName"), "?"),
                or(s("toolCallId"), "?")
            );
            if let Some(p) = s("parentMessageId") {
                out += &format!(" in {p}");
            }
            out
        }
        "TOOL_CALL_ARGS" => format!(
            "{} {}",
            or(s("toolCallId"), "?"),
            visible(&or(s("delta"), ""))
        ),
        "TOOL_CALL_END" => or(s("toolCallId"), "?"),
        "TOOL_CALL_CHUNK" => {
            chunk_line(s("toolCallName"), s("toolCallId"), s("delta").map(visible))
        }
        "TOOL_CALL_RESULT" => {
            let content = match v.get("content") {
                Some(Value::String(c)) => visible(c),
                Some(other) => other.to_string(),
                None => String::new(),
            };
            format!("{} → {content}", or(s("toolCallId"), "?"))
        }
        "STATE_SNAPSHOT" => json("snapshot"),
        "STATE_DELTA" => patch_summary(v.get("delta")),
        "MESSAGES_SNAPSHOT" => {
            let msgs = v.get("messages").and_then(Value::as_array);
            let n = msgs.map_or(0, Vec::len);
            let roles: Vec<&str> = msgs
                .into_iter()
                .flatten()
                .filter_map(|m| m.get("role").and_then(Value::as_str))
                .collect();
            format!("{n} message{}: {}", plural(n), roles.join(", "))
        }
        "ACTIVITY_SNAPSHOT" => {
            let mut out = format!(
                "{} {}: {}",
                or(s("activityType"), "?"),
                or(s("messageId"), "?"),
                json("content")
            );
            if v.get("replace") == Some(&Value::Bool(false)) {
                out += " (merge)";
            }
            out
        }
        "ACTIVITY_DELTA" => format!(
            "{} {}: {}",
            or(s("activityType"), "?"),
            or(s("messageId"), "?"),
            patch_summary(v.get("patch"))
        ),
        "RAW" => match s("source") {
            Some(src) => format!("from {src}: {}", json("event")),
            None => json("event"),
        },
        "CUSTOM" => format!("{} = {}", or(s("name"), "?"), json("value")),
        "REASONING_ENCRYPTED_VALUE" => format!(
            "{} {} ({} chars)",
            or(s("subtype"), "?"),
            or(s("entityId"), "?"),
            s("encryptedValue").map_or(0, |e| e.chars().count())
        ),
        "SUBAGENT_STARTED" => {
            let mut out = format!("{} ({})", or(s("name"), "?"), or(s("subagentRunId"), "?"));
            if let Some(d) = s("description") {
                out += &format!(" · {d}");
            }
            if let Some(p) = s("parentSubagentRunId") {
                out += &format!(" · inside {p}");
            }
            out
        }
        "SUBAGENT_FINISHED" => {
            let mut out = v
                .get("outcome")
                .and_then(|o| o.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("success")
                .to_owned();
            if let Some(r) = v.get("result") {
                out += &format!(" · result {r}");
            }
            out
        }
        t if t.starts_with("THINKING_") => "legacy event, translated to REASONING_*".into(),
        _ => "unknown type: dropped by clients".into(),
    }
}

/// `replace /count = 3; remove /x` for a JSON Patch.
fn patch_summary(patch: Option<&Value>) -> String {
    let Some(ops) = patch.and_then(Value::as_array) else {
        return patch.map(Value::to_string).unwrap_or_default();
    };
    if ops.is_empty() {
        return "(empty patch)".into();
    }
    ops.iter()
        .map(|op| {
            let name = op.get("op").and_then(Value::as_str).unwrap_or("?");
            let path = op.get("path").and_then(Value::as_str).unwrap_or("?");
            match (op.get("value"), op.get("from").and_then(Value::as_str)) {
                (_, Some(from)) if matches!(name, "move" | "copy") => {
                    format!("{name} {from} → {path}")
                }
                (Some(value), _) => format!("{name} {path} = {value}"),
                _ => format!("{name} {path}"),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// One line about a message: length and first words, tool calls, what it answers.
fn message_summary(m: &Value) -> String {
    let mut parts = Vec::new();
    match m.get("content") {
        Some(Value::String(text)) => {
            let n = text.chars().count();
            let first: String = text
                .split_whitespace()
                .take(10)
                .collect::<Vec<_>>()
                .join(" ");
            let more = if first.chars().count() < text.trim().chars().count() {
                "…"
            } else {
                ""
            };
            // A tool's result is usually JSON: shown as it is, not re-quoted.
            let shown = if m.get("role").and_then(Value::as_str) == Some("tool") {
                excerpt(&visible(text), 60)
            } else {
                quoted(&format!("{}{more}", excerpt(&first, 60)))
            };
            parts.push(format!("{n} char{} {shown}", plural(n)));
        }
        Some(Value::Array(items)) => {
            let kinds: Vec<&str> = items
                .iter()
                .filter_map(|p| p.get("type").and_then(Value::as_str))
                .collect();
            parts.push(format!(
                "{} part{}: {}",
                items.len(),
                plural(items.len()),
                kinds.join(", ")
            ));
        }
        Some(Value::Object(_)) => {
            if let Some(t) = m.get("activityType").and_then(Value::as_str) {
                parts.push(t.to_owned());
            }
            parts.push(excerpt(&m["content"].to_string(), 60));
        }
        _ => {}
    }
    if let Some(calls) = m.get("toolCalls").and_then(Value::as_array) {
        let list: Vec<String> = calls
            .iter()
            .map(|c| {
                let f = c.get("function");
                format!(
                    "{}({}) {}",
                    f.and_then(|f| f.get("name"))
                        .and_then(Value::as_str)
                        .unwrap_or("?"),
                    c.get("id").and_then(Value::as_str).unwrap_or("?"),
                    excerpt(
                        f.and_then(|f| f.get("arguments"))
                            .and_then(Value::as_str)
                            .unwrap_or(""),
                        40
                    )
                )
            })
            .collect();
        parts.push(format!(
            "tool call{}: {}",
            plural(list.len()),
            list.join(", ")
        ));
    }
    if let Some(id) = m.get("toolCallId").and_then(Value::as_str) {
        parts.push(format!("answers {id}"));
    }
    if m.get("encryptedValue").is_some() {
        parts.push("(encrypted value)".into());
    }
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stream(events: Vec<Value>) -> (Format, Vec<Vec<u8>>) {
        let events = events.iter().map(|e| e.to_string().into_bytes()).collect();
        (Format::JsonLines, events)
    }

    fn text(events: Vec<Value>) -> (String, bool) {
        let mut out = Vec::new();
        let ok = render(&mut stream(events), Paint::new(false), false, &mut out).unwrap();
        (String::from_utf8(out).unwrap(), ok)
    }

    #[test]
    fn summaries_say_what_matters() {
        assert_eq!(
            summary(&json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "Hi\n"})),
            r#""Hi\n""#
        );
        assert_eq!(
            summary(
                &json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "get_weather", "parentMessageId": "m1"})
            ),
            "get_weather (c1) in m1"
        );
        assert_eq!(
            summary(&json!({"type": "STATE_DELTA", "delta": [
                {"op": "replace", "path": "/count", "value": 3},
                {"op": "move", "from": "/a", "path": "/b"},
                {"op": "remove", "path": "/x"}
            ]})),
            "replace /count = 3; move /a → /b; remove /x"
        );
        assert_eq!(
            summary(
                &json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r",
                "outcome": {"type": "interrupt", "interrupts": [{"id": "i1", "reason": "approval"}]}})
            ),
            "interrupt: i1 (approval)"
        );
        assert_eq!(
            summary(&json!({"type": "RUN_ERROR", "message": "boom", "code": "x"})),
            r#""boom" (x)"#
        );
        assert_eq!(
            summary(&json!({"type": "FROM_THE_FUTURE"})),
            "unknown type: dropped by clients"
        );
        assert_eq!(
            summary(&json!([1])),
            "[1]: not an object, dropped by clients"
        );
    }

    #[test]
    fn timeline_times_tags_and_messages() {
        let (out, ok) = text(vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "timestamp": 1000}),
            json!({"type": "SUBAGENT_STARTED", "subagentRunId": "s1", "name": "historian", "timestamp": 1100}),
            json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "delta": "Hello there", "subagentRunId": "s1", "timestamp": 1250}),
            json!({"type": "SUBAGENT_FINISHED", "subagentRunId": "s1"}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "timestamp": 2000}),
        ]);
        assert!(ok, "{out}");
        assert!(
            out.starts_with("5 events (JSON Lines), 1.000 s (4 of 5 events timestamped)\n"),
            "{out}"
        );
        assert!(out.contains("   +0.250s  TEXT_MESSAGE_CHUNK"), "{out}");
        assert!(out.contains("[historian] m1 \"Hello there\""), "{out}");
        assert!(out.contains("1 message\n"), "{out}");
        assert!(
            out.contains("assistant m1  [historian] 11 chars \"Hello there\""),
            "{out}"
        );
        assert!(
            out.trim_end().ends_with("✓ valid, ends with RUN_FINISHED"),
            "{out}"
        );
        assert!(!out.contains('\x1b'));
    }

    #[test]
    fn the_break_is_marked_with_index_and_rule() {
        let (out, ok) = text(vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "ghost", "delta": "boo"}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
        ]);
        assert!(!ok);
        let broken = out
            .lines()
            .find(|l| l.starts_with('✗'))
            .expect("a marked line");
        assert!(
            broken.contains(" 1 ") && broken.contains("TEXT_MESSAGE_CONTENT"),
            "{out}"
        );
        let last = out.trim_end().lines().last().unwrap();
        assert!(
            last.starts_with("✗ breaks at event 1 (TEXT_MESSAGE_CONTENT): rule V"),
            "{out}"
        );
    }

    #[test]
    fn an_unfinished_stream_breaks_at_its_end() {
        let (out, ok) = text(vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
            json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
        ]);
        assert!(!ok, "{out}");
        assert!(out.contains("breaks at event 2 (RUN_FINISHED)"), "{out}");
    }

    #[test]
    fn colours_follow_the_family() {
        let mut events = stream(vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"}),
        ]);
        let mut out = Vec::new();
        render(&mut events, Paint::new(true), false, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("\x1b[33mTOOL_CALL_START"), "{out:?}");
    }
}
