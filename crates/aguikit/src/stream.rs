//! The stream commands `verify`, `apply`, `expand`, `compact`, `encode` and `decode`.
//!
//! Each reads its input incrementally ([`EventReader`]: JSON Lines, SSE and JSON arrays in
//! 64 KiB chunks, a case file whole; nothing over `--max-frame-bytes` is held), decodes every
//! event straight into its type, and writes its output as it goes through one buffered
//! writer: memory follows what is being folded (the conversation for `apply`, open streams
//! for `compact`), not the size of the input.
//!
//! Exit codes follow the command-line contract: 0 valid, 1 invalid, 2 unreadable input,
//! usage or I/O errors. "Invalid" is what each command checks: `verify` and `apply` every
//! rule; `expand`, `compact`, `encode` and `decode`, which transform what they are given
//! (fragments and streams broken on purpose included), each event's form (and `expand` the
//! chunk rules), not the sequence rules. When a stream stops being readable or valid
//! part-way, what was written before stays written: `expand` and `compact` then close their
//! JSON array (a valid array of the output so far), `decode` keeps the events before the bad
//! frame, and the error names the event or frame.

use crate::input::{EventReader, Item, ReadError, Source, Undecodable};
use aguikit_core::Event;
pub use aguikit_core::codec::media::WireFormat;
use aguikit_core::codec::{proto, sse};
use aguikit_core::engine::compact::Compactor;
use aguikit_core::engine::expand::Expander;
use aguikit_core::engine::pipeline::{Decoded, Pipeline, PipelineError};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use serde::Serialize;
use serde_json::{Value, json};
use std::io::Write;
use std::ops::ControlFlow;
use std::process::ExitCode;

/// The parser of a `--format`-like option: the wire format named `sse` or `proto`, each
/// value with its help text, listed in the order given.
pub fn wire_format_parser(
    values: [(WireFormat, &'static str); 2],
) -> impl TypedValueParser<Value = WireFormat> {
    let name = |f: WireFormat| match f {
        WireFormat::Sse => "sse",
        _ => "proto",
    };
    PossibleValuesParser::new(values.map(|(f, help)| PossibleValue::new(name(f)).help(help))).map(
        |text| match text.as_str() {
            "proto" => WireFormat::Proto,
            _ => WireFormat::Sse,
        },
    )
}

/// The `--format` of `encode` and `decode`.
pub fn format_parser() -> impl TypedValueParser<Value = WireFormat> {
    wire_format_parser([
        (WireFormat::Sse, "Server-Sent Events carrying JSON"),
        (
            WireFormat::Proto,
            "Length-prefixed protobuf envelopes (`application/vnd.ag-ui.event+proto`)",
        ),
    ])
}

/// Options every stream command takes.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct StreamOptions {
    /// The largest frame read or written, in bytes: an SSE `data:` line, a JSON line, a
    /// protobuf body. `encode` refuses an event over it, since `decode` (and any reader with
    /// the same limit) would refuse its frame.
    #[arg(long, value_name = "BYTES", default_value_t = crate::input::DEFAULT_MAX_FRAME_BYTES, value_parser = parse_bytes)]
    pub max_frame_bytes: usize,
}

/// A positive number of bytes.
fn parse_bytes(text: &str) -> Result<usize, String> {
    text.trim()
        .parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("{text:?} is not a positive number of bytes"))
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            max_frame_bytes: crate::input::DEFAULT_MAX_FRAME_BYTES,
        }
    }
}

/// Standard output, buffered (a closed pipe ends the command quietly: [`crate::out`]).
type Out = crate::out::Stdout;

use crate::out::stdout;

/// Why a command stopped before its normal end.
enum Stop {
    /// Writing the output failed.
    Write(std::io::Error),
    /// The input became unreadable (exit 2); the message says where.
    Unreadable(String),
    /// An event cannot be written (exit 1); the message names it.
    Invalid(String),
}

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Stop {
        Stop::Write(e)
    }
}

impl From<serde_json::Error> for Stop {
    fn from(e: serde_json::Error) -> Stop {
        Stop::Write(e.into())
    }
}

impl From<ReadError> for Stop {
    fn from(e: ReadError) -> Stop {
        Stop::Unreadable(e.to_string())
    }
}

/// Flushes the output and turns how the command ended into its exit code. (A closed pipe,
/// `agui decode big.sse | head`, has ended the command quietly already: [`crate::out`].)
fn conclude(mut out: Out, result: Result<ExitCode, Stop>) -> Result<ExitCode, String> {
    let flushed = out.flush();
    match (result, flushed) {
        (Err(Stop::Write(e)), _) | (Ok(_), Err(e)) => Err(format!("writing the output: {e}")),
        (Err(Stop::Unreadable(m)), _) => Err(m),
        (Err(Stop::Invalid(m)), _) => {
            eprintln!("agui: {m}");
            Ok(ExitCode::from(1))
        }
        (Ok(code), Ok(())) => Ok(code),
    }
}

/// Writes `event` as one line of JSON (its own writer: the bytes serde_json writes).
fn event_line(out: &mut Out, event: &Event) -> Result<(), Stop> {
    let mut json = event.to_json_vec();
    json.push(b'\n');
    out.write_all(&json)?;
    Ok(())
}

/// Writes `v` as one line of JSON.
fn json_line(out: &mut Out, v: &impl Serialize) -> Result<(), Stop> {
    serde_json::to_writer(&mut *out, v)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// Runs the client pipeline over the input, stopping at the first error; `apply`: folding
/// the conversation too (`verify` does not need it, and then takes constant memory).
///
/// `verify` reads, decodes and verifies on one thread: decoding is nearly all of its work,
/// and a second thread only adds the hand-over. `apply` folds on another thread than it
/// decodes ([`fold_beside_decoding`]).
fn run_pipeline(file: &str, opts: StreamOptions, apply: bool) -> Result<Pipeline, String> {
    let mut reader = EventReader::open(file, opts.max_frame_bytes)?;
    let mut p = Pipeline::new().with_apply(apply).with_emitted(false);
    if apply {
        fold_beside_decoding(reader, &mut p)?;
    } else {
        reader.for_each_item(|item| {
            let pushed = match item {
                Item::Event(json) => p.push_json(json).map(|_| ()),
                Item::Undecodable(u) => push_undecodable(&mut p, u),
                Item::Reading => Ok(()),
            };
            match pushed {
                Ok(()) => ControlFlow::Continue(()),
                Err(_) => ControlFlow::Break(()),
            }
        })?;
    }
    if p.error().is_none() {
        let _ = p.finish();
    }
    Ok(p)
}

/// Feeds `p` every event of `reader` until one fails, reading and decoding on a thread of
/// their own, a batch of events ahead of verification and folding: on two cores a stream
/// with much to fold takes about the time of the slower half. Batches wait in a queue of
/// [`BATCHES_AHEAD`], so memory stays bounded. A batch ends at [`BATCH_EVENTS`] events, at
/// [`BATCH_BYTES`] of frames, and, unless the input is a regular file, whenever the reader
/// is about to wait for input (a live input's events are folded as they come). A frame of
/// [`BATCH_BYTES`] or more is decoded only once every batch before it has been folded, so
/// that, as without the thread, one large event at most is held beside the conversation.
///
/// A read error after the last event handed over is the error; an event that fails ends
/// the feeding at once, without waiting for the rest of the input.
fn fold_beside_decoding(mut reader: EventReader, p: &mut Pipeline) -> Result<(), String> {
    let live = !reader.is_regular_file();
    let (batches, received) = std::sync::mpsc::sync_channel(BATCHES_AHEAD);
    let (fold, folded) = std::sync::mpsc::channel();
    let decoder = std::thread::Builder::new()
        .name("agui-decode".into())
        .spawn(move || {
            let mut h = Handover {
                batches,
                folded,
                unfolded: 0,
                batch: Vec::with_capacity(BATCH_EVENTS),
                bytes: 0,
            };
            let read = reader.for_each_item(|item| {
                match item {
                    Item::Event(json) => {
                        if json.len() >= BATCH_BYTES && !(h.send() && h.wait_folded()) {
                            return ControlFlow::Break(());
                        }
                        h.batch.push(Ready::Decoded(Decoded::from_json(json)));
                        h.bytes += json.len();
                        if h.batch.len() < BATCH_EVENTS && h.bytes < BATCH_BYTES {
                            return ControlFlow::Continue(());
                        }
                    }
                    // The last item: sent with the batch.
                    Item::Undecodable(u) => h.batch.push(Ready::Undecodable(Box::new(u.clone()))),
                    Item::Reading if !live => return ControlFlow::Continue(()),
                    Item::Reading => {}
                }
                if h.send() {
                    ControlFlow::Continue(())
                } else {
                    ControlFlow::Break(())
                }
            });
            // The events before the end of the input, or before a read error.
            h.send();
            read
        })
        .map_err(|e| format!("starting the decoding thread: {e}"))?;
    'fold: for mut batch in &received {
        for ready in batch.drain(..) {
            let pushed = match ready {
                Ready::Decoded(decoded) => p.push_ready(decoded).map(|_| ()),
                Ready::Undecodable(u) => push_undecodable(p, &u),
            };
            if pushed.is_err() {
                break 'fold;
            }
        }
        // Back for reuse: a batch's buffer is large, and a fresh one costs page faults.
        let _ = fold.send(batch);
    }
    if p.error().is_some() {
        // The verdict is known: the decoding thread is left behind (it may be waiting for
        // more of a live input), and ends with the process.
        return Ok(());
    }
    // Every batch was folded: the thread has ended, with the input read whole or a read
    // error after the last event it handed over.
    decoder
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
    Ok(())
}

/// One event of a batch handed over in [`fold_beside_decoding`].
// Nearly every item is `Decoded`: boxing it would cost an allocation per event.
#[allow(clippy::large_enum_variant)]
enum Ready {
    Decoded(Decoded),
    /// A protobuf event that breaks the schema.
    Undecodable(Box<Undecodable>),
}

/// Feeds `p` an event read from protobuf that breaks the schema: it fails there, as its
/// JSON would.
pub(crate) fn push_undecodable(p: &mut Pipeline, u: &Undecodable) -> Result<(), PipelineError> {
    p.push_decoded(Err(u.error.clone()), u.event_type.clone())
        .map(|_| ())
}

/// The decoding thread's end of the hand-over in [`fold_beside_decoding`].
struct Handover {
    batches: std::sync::mpsc::SyncSender<Vec<Ready>>,
    /// Batches folded, handed back empty.
    folded: std::sync::mpsc::Receiver<Vec<Ready>>,
    /// Batches handed over and not yet handed back.
    unfolded: usize,
    /// The batch being filled, and the bytes of its frames.
    batch: Vec<Ready>,
    bytes: usize,
}

impl Handover {
    /// Hands the batch over, if it has any event, and starts the next in a buffer handed
    /// back if there is one. `false` when the pipeline has hung up (it stops at an invalid
    /// event).
    fn send(&mut self) -> bool {
        if self.batch.is_empty() {
            return true;
        }
        let next = match self.folded.try_recv() {
            Ok(empty) => {
                self.unfolded -= 1;
                empty
            }
            Err(_) => Vec::with_capacity(BATCH_EVENTS),
        };
        self.bytes = 0;
        let full = std::mem::replace(&mut self.batch, next);
        if self.batches.send(full).is_err() {
            return false;
        }
        self.unfolded += 1;
        true
    }

    /// Waits until every batch handed over has been folded; `false` when the pipeline has
    /// hung up.
    fn wait_folded(&mut self) -> bool {
        while self.unfolded > 0 {
            if self.folded.recv().is_err() {
                return false;
            }
            self.unfolded -= 1;
        }
        true
    }
}

/// The most events the decoding thread of [`fold_beside_decoding`] hands over at once.
const BATCH_EVENTS: usize = 256;

/// A batch is handed over once its frames reach this many bytes (a larger frame goes
/// alone).
const BATCH_BYTES: usize = 256 * 1024;

/// How many batches the decoding thread of [`fold_beside_decoding`] may have waiting: with
/// room to queue, neither side waits for the other at every batch.
const BATCHES_AHEAD: usize = 4;

/// The verdict of a failed pipeline, as `verify` prints it.
pub(crate) fn failure(e: &PipelineError) -> Value {
    json!({"ok": false, "at": e.index, "rule": e.rule(), "error": e.to_string()})
}

/// `agui verify`: `{"ok":true}`, or `{"ok":false,"at":K,"rule":...,"error":...}` and exit 1.
/// `strict`: what the reference only warns about or drops fails too, as rule `strict`.
pub fn verify(file: &str, opts: StreamOptions, strict: bool) -> Result<ExitCode, String> {
    if strict {
        return verify_strict(file, opts);
    }
    let p = run_pipeline(file, opts, false)?;
    let mut out = stdout();
    let result = match p.error() {
        None => json_line(&mut out, &json!({"ok": true})).map(|()| ExitCode::SUCCESS),
        Some(e) => json_line(&mut out, &failure(e)).map(|()| ExitCode::from(1)),
    };
    let code = conclude(out, result);
    // As in `apply`: the process ends, the OS takes the memory back at once.
    std::mem::forget(p);
    code
}

/// `agui verify --strict`: the pipeline's verdict, else the first event the pipeline warns
/// about (an unknown type dropped, a retired type translated, a legacy `null`, something
/// removed leniently) or that has a field its type does not declare (the decoder drops
/// those silently), as rule `strict`.
fn verify_strict(file: &str, opts: StreamOptions) -> Result<ExitCode, String> {
    let mut reader = EventReader::open(file, opts.max_frame_bytes)?;
    let mut p = Pipeline::new()
        .with_apply(false)
        .with_emitted(false)
        .with_warnings(true);
    let mut strict: Option<Value> = None;
    reader.for_each_item(|item| {
        let index = p.events_seen();
        let warned = p.warnings().len();
        let pushed = match item {
            Item::Event(json) => p.push_json(json).map(|_| ()),
            Item::Undecodable(u) => push_undecodable(&mut p, u),
            Item::Reading => return ControlFlow::Continue(()),
        };
        if pushed.is_err() {
            return ControlFlow::Break(());
        }
        let Item::Event(json) = item else {
            return ControlFlow::Continue(());
        };
        let problem = match p.warnings()[warned..].first() {
            Some((_, w)) => Some(w.clone()),
            None => undeclared_field(json).map(|path| {
                format!("`{path}` is not a field of this event type (decoding drops it)")
            }),
        };
        match problem {
            None => ControlFlow::Continue(()),
            Some(message) => {
                let ty = serde_json::from_slice::<Value>(json)
                    .ok()
                    .and_then(|v| v.get("type")?.as_str().map(str::to_owned))
                    .map(|t| format!(" ({t})"))
                    .unwrap_or_default();
                strict = Some(json!({
                    "ok": false,
                    "at": index,
                    "rule": "strict",
                    "error": format!("event {index}{ty}: strict: {message}"),
                }));
                ControlFlow::Break(())
            }
        }
    })?;
    if p.error().is_none() && strict.is_none() {
        let _ = p.finish();
    }
    let mut out = stdout();
    let result = match (p.error(), strict) {
        (Some(e), _) => json_line(&mut out, &failure(e)).map(|()| ExitCode::from(1)),
        (None, Some(v)) => json_line(&mut out, &v).map(|()| ExitCode::from(1)),
        (None, None) => json_line(&mut out, &json!({"ok": true})).map(|()| ExitCode::SUCCESS),
    };
    conclude(out, result)
}

/// The path of the first member of the event `json` that its decoded form does not keep (a
/// field its type does not declare), if any; members that are `null` are left to the
/// decoder (a legacy `null` is a warning, a `null` where none is allowed an error).
fn undeclared_field(json: &[u8]) -> Option<String> {
    let given: Value = serde_json::from_slice(json).ok()?;
    let kept: Value =
        serde_json::from_slice(&Event::from_json_slice(json).ok()?.to_json_vec()).ok()?;
    first_dropped(&given, &kept, "")
}

/// The first member of `given` (recursively) that `kept` lacks, as a path from `at`.
fn first_dropped(given: &Value, kept: &Value, at: &str) -> Option<String> {
    match (given, kept) {
        (Value::Object(given), Value::Object(kept)) => given.iter().find_map(|(k, v)| {
            let path = if at.is_empty() {
                k.clone()
            } else {
                format!("{at}.{k}")
            };
            match kept.get(k) {
                _ if v.is_null() => None,
                None => Some(path),
                Some(w) => first_dropped(v, w, &path),
            }
        }),
        (Value::Array(given), Value::Array(kept)) => given
            .iter()
            .zip(kept)
            .enumerate()
            .find_map(|(i, (v, w))| first_dropped(v, w, &format!("{at}[{i}]"))),
        _ => None,
    }
}

/// `agui apply`: `{"messages":[...],"state":...,"pendingInterrupts":[...]}`; an invalid
/// stream prints the verdict instead and exits 1.
/// `a2ui`: also `"a2ui"`, the `a2ui-surface` activities folded into surfaces (see
/// `agui apply --a2ui`).
pub fn apply(file: &str, opts: StreamOptions, a2ui: bool) -> Result<ExitCode, String> {
    let p = run_pipeline(file, opts, true)?;
    let mut out = stdout();
    if let Some(e) = p.error() {
        let result = json_line(&mut out, &failure(e)).map(|()| ExitCode::from(1));
        let code = conclude(out, result)?;
        eprintln!("agui: the stream is invalid: {e}");
        return Ok(code);
    }
    let a = p.applier();
    let result = (|| -> Result<ExitCode, Stop> {
        out.write_all(br#"{"messages":"#)?;
        serde_json::to_writer(&mut out, &a.messages())?;
        // Written as the applier keeps it: a large snapshot is kept as its JSON text.
        out.write_all(br#","state":"#)?;
        let mut state = Vec::new();
        a.write_state_json(&mut state);
        out.write_all(&state)?;
        drop(state);
        out.write_all(br#","pendingInterrupts":"#)?;
        serde_json::to_writer(&mut out, a.pending_interrupts())?;
        if a2ui {
            out.write_all(br#","a2ui":"#)?;
            serde_json::to_writer(&mut out, &crate::a2ui::surfaces_json(a.messages()))?;
        }
        out.write_all(b"}\n")?;
        Ok(ExitCode::SUCCESS)
    })();
    let code = conclude(out, result);
    // The process ends here: freeing a large conversation piece by piece only costs time.
    std::mem::forget(p);
    code
}

/// A JSON array written element by element.
struct ArrayWriter {
    first: bool,
    /// One event's JSON, reused from event to event.
    json: Vec<u8>,
}

impl ArrayWriter {
    fn open(out: &mut Out) -> Result<ArrayWriter, Stop> {
        out.write_all(b"[")?;
        Ok(ArrayWriter {
            first: true,
            json: Vec::new(),
        })
    }

    fn push(&mut self, out: &mut Out, event: &Event) -> Result<(), Stop> {
        if !self.first {
            out.write_all(b",")?;
        }
        self.first = false;
        self.json.clear();
        event.write_json(&mut self.json);
        out.write_all(&self.json)?;
        Ok(())
    }

    fn close(self, out: &mut Out) -> Result<(), Stop> {
        out.write_all(b"]\n")?;
        Ok(())
    }
}

/// A stage that turns input events into output events: expansion or compaction.
trait Stage {
    /// Feeds one event; appends what became final to `out`.
    fn push(&mut self, event: Event, out: &mut Vec<Event>) -> Result<(), String>;
    /// Ends the stream; appends the rest to `out`.
    fn finish(self, out: &mut Vec<Event>);
}

impl Stage for Expander {
    fn push(&mut self, event: Event, out: &mut Vec<Event>) -> Result<(), String> {
        Expander::push(self, event, out).map_err(|v| v.to_string())
    }
    // As before streaming: chunk streams left open are not closed at the end.
    fn finish(self, _: &mut Vec<Event>) {}
}

impl Stage for Compactor {
    fn push(&mut self, event: Event, out: &mut Vec<Event>) -> Result<(), String> {
        Compactor::push(self, event, out);
        Ok(())
    }
    fn finish(self, out: &mut Vec<Event>) {
        let _ = Compactor::finish(self, out);
    }
}

/// Decodes each input event, feeds it to `stage`, and writes what comes out as one JSON
/// array, as it comes. The first event that does not decode or that the stage refuses ends
/// the array and the command (exit 1), naming the event.
fn transform(file: &str, opts: StreamOptions, mut stage: impl Stage) -> Result<ExitCode, String> {
    let mut reader = EventReader::open(file, opts.max_frame_bytes)?;
    let mut out = stdout();
    let mut produced = Vec::new();
    let mut invalid: Option<(usize, String)> = None;
    let result = (|| -> Result<ExitCode, Stop> {
        let mut array = ArrayWriter::open(&mut out)?;
        let mut index = 0usize;
        let mut write_error = None;
        let read = reader.for_each_item(|item| {
            let json = match item {
                Item::Event(json) => json,
                Item::Undecodable(u) => {
                    invalid = Some((index, u.error.to_string()));
                    return ControlFlow::Break(());
                }
                Item::Reading => {
                    // Keep up with a live input: what is done goes out before waiting.
                    if let Err(e) = out.flush() {
                        write_error = Some(e.into());
                        return ControlFlow::Break(());
                    }
                    return ControlFlow::Continue(());
                }
            };
            let r = Event::from_json_slice(json)
                .map_err(|e| e.to_string())
                .and_then(|e| stage.push(e, &mut produced));
            if let Err(e) = r {
                invalid = Some((index, e));
                return ControlFlow::Break(());
            }
            index += 1;
            for e in produced.drain(..) {
                if let Err(e) = array.push(&mut out, &e) {
                    write_error = Some(e);
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        });
        if let Some(e) = write_error {
            return Err(e);
        }
        if read.is_ok() && invalid.is_none() {
            stage.finish(&mut produced);
            for e in produced.drain(..) {
                array.push(&mut out, &e)?;
            }
        }
        array.close(&mut out)?;
        read?;
        Ok(if invalid.is_some() {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    })();
    let code = conclude(out, result)?;
    if let Some((i, e)) = invalid {
        eprintln!("agui: event {i}: {e}");
    }
    Ok(code)
}

/// `agui expand`: the events after chunk expansion, as one JSON array.
pub fn expand(file: &str, opts: StreamOptions) -> Result<ExitCode, String> {
    transform(file, opts, Expander::new())
}

/// `agui compact`: the compacted events, as one JSON array.
pub fn compact(file: &str, opts: StreamOptions) -> Result<ExitCode, String> {
    transform(file, opts, Compactor::new())
}

/// `agui encode`: the stream as SSE frames or length-prefixed protobuf.
///
/// An event over `--max-frame-bytes` once encoded is refused (exit 2) with the frames before
/// it written: `decode` and every reader with the same limit would refuse it. A malformed
/// event makes the exit code 1: SSE writes it as given (the reference SSE encoder does not
/// validate either) and goes on; protobuf, which has no form for it, stops there, as it does
/// at text that is not JSON at all. The sequence rules are not checked (`agui verify`
/// checks them): fragments and streams broken on purpose are encoded as given.
pub fn encode(format: WireFormat, file: &str, opts: StreamOptions) -> Result<ExitCode, String> {
    let mut reader = EventReader::open(file, opts.max_frame_bytes)?;
    let mut out = stdout();
    let mut encoder = Encoder {
        format,
        max: opts.max_frame_bytes,
        json: Vec::new(),
        frame: Vec::new(),
        malformed: 0,
    };
    let mut index = 0usize;
    let mut stop: Option<Stop> = None;
    let read = reader.for_each_item(|item| {
        let result = match item {
            // Keep up with a live input: what is done goes out before waiting.
            Item::Reading => out.flush().map_err(Stop::from),
            Item::Undecodable(u) => Err(Stop::Invalid(format!("event {index}: {}", u.error))),
            Item::Event(text) => {
                index += 1;
                encoder.write(&mut out, text, index - 1)
            }
        };
        match result {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                stop = Some(e);
                ControlFlow::Break(())
            }
        }
    });
    let result = match (stop, read) {
        (Some(stop), _) => Err(stop),
        (None, Err(e)) => Err(e.into()),
        (None, Ok(())) if encoder.malformed > 0 => Ok(ExitCode::from(1)),
        (None, Ok(())) => Ok(ExitCode::SUCCESS),
    };
    conclude(out, result)
}

/// Writes events in one wire format, refusing frames over the limit.
struct Encoder {
    format: WireFormat,
    max: usize,
    /// Reused buffers: an event's JSON, a whole frame.
    json: Vec<u8>,
    frame: Vec<u8>,
    /// Malformed events written as given (SSE).
    malformed: usize,
}

impl Encoder {
    /// Writes the frame of the event whose JSON is `text`, the `index`-th of the input.
    fn write(&mut self, out: &mut Out, text: &[u8], index: usize) -> Result<(), Stop> {
        let event = Event::from_json_slice(text);
        match self.format {
            WireFormat::Sse => {
                self.json.clear();
                match &event {
                    Ok(e) => e.write_json(&mut self.json),
                    Err(err) => {
                        // A malformed event is written as given (the reference SSE encoder
                        // does not validate either); only text that is not JSON stops.
                        let v: Value = serde_json::from_slice(text).map_err(|e| {
                            Stop::Invalid(format!("event {index}: invalid JSON: {e}"))
                        })?;
                        eprintln!(
                            "agui: event {index} is malformed and is written as given: {err}"
                        );
                        self.malformed += 1;
                        serde_json::to_writer(&mut self.json, &v)?;
                    }
                }
                let line = b"data: ".len() + self.json.len();
                if line > self.max {
                    let ty = match &event {
                        Ok(e) => e.type_str().to_owned(),
                        Err(_) => serde_json::from_slice::<Value>(text)
                            .ok()
                            .and_then(|v| v.get("type")?.as_str().map(str::to_owned))
                            .unwrap_or_default(),
                    };
                    return Err(too_large(index, &ty, "SSE frame", line, self.max));
                }
                self.frame.clear();
                sse::write_frame(&mut self.frame, &self.json);
                out.write_all(&self.frame)?;
            }
            // Protobuf (`WireFormat` is non-exhaustive: its other variant is feature-gated).
            _ => {
                let event = event.map_err(|e| {
                    Stop::Invalid(format!(
                        "event {index}: {e} (a malformed event has no protobuf form)"
                    ))
                })?;
                self.frame.clear();
                match proto::write_frame(&mut self.frame, &event) {
                    Ok(()) => {}
                    Err(proto::ProtoError::NoProtobufForm { .. }) => {
                        eprintln!(
                            "agui: event {index} ({}) has no protobuf form and is skipped",
                            event.type_str()
                        );
                        return Ok(());
                    }
                    Err(e) => return Err(Stop::Unreadable(format!("event {index}: {e}"))),
                }
                let body = self.frame.len() - 4;
                if body > self.max {
                    return Err(too_large(
                        index,
                        event.type_str(),
                        "protobuf body",
                        body,
                        self.max,
                    ));
                }
                out.write_all(&self.frame)?;
            }
        }
        Ok(())
    }
}

fn too_large(index: usize, ty: &str, what: &str, len: usize, max: usize) -> Stop {
    let ty = if ty.is_empty() {
        String::new()
    } else {
        format!(" ({ty})")
    };
    Stop::Unreadable(format!(
        "event {index}{ty}: its {what} would be {len} bytes, over the limit of {max} bytes \
         that `agui decode` and other readers enforce (raise --max-frame-bytes on both)"
    ))
}

/// `agui decode`: a wire stream back into JSON Lines of events, written as they are read.
///
/// A frame that does not decode to an event ends the command with exit 1, naming the frame
/// (0-based); a stream that cannot be split into frames (SSE that is not UTF-8, a frame over
/// `--max-frame-bytes`, a truncated protobuf frame, input that is not SSE at all) with exit 2.
/// The events before are written either way.
pub fn decode(format: WireFormat, file: &str, opts: StreamOptions) -> Result<ExitCode, String> {
    let mut source = Source::open(file)?;
    let mut out = stdout();
    let result = match format {
        WireFormat::Sse => decode_sse(&mut source, &mut out, opts),
        _ => decode_proto(&mut source, &mut out, opts),
    };
    conclude(out, result)
}

/// Flushes what was written (so that output follows a live input), then reads the next
/// chunk into `chunk` (cleared first); false at the end.
fn next_chunk(source: &mut Source, out: &mut Out, chunk: &mut Vec<u8>) -> Result<bool, Stop> {
    out.flush()?;
    chunk.clear();
    Ok(source.read_chunk(chunk).map_err(Stop::from)? > 0)
}

fn decode_sse(source: &mut Source, out: &mut Out, opts: StreamOptions) -> Result<ExitCode, Stop> {
    // The index of the next frame.
    let mut frame = 0usize;
    let mut d = sse::SseDecoder::with_max_frame_size(opts.max_frame_bytes);
    let mut chunk = Vec::new();
    // The start of the stream, until it is known to be SSE: its first bytes after a BOM and
    // blank lines must be a field or a comment.
    let mut head = Vec::new();
    let mut bom_checked = false;
    let mut eof;
    loop {
        eof = !next_chunk(source, out, &mut chunk)?;
        head.extend_from_slice(&chunk);
        if !bom_checked && (head.len() >= 3 || eof) {
            if head.starts_with(b"\xEF\xBB\xBF") {
                head.drain(..3);
            }
            bom_checked = true;
        }
        if !bom_checked {
            continue;
        }
        match head.iter().position(|b| !b.is_ascii_whitespace()) {
            None if eof => break,
            None => head.clear(),
            Some(i) if eof || head.len() - i >= 6 => {
                if !crate::input::looks_like_sse(&head[i..]) {
                    let start =
                        String::from_utf8_lossy(&head[i..head.len().min(i + 24)]).into_owned();
                    return Err(Stop::Unreadable(format!(
                        "the input is not an SSE stream: it starts with {start:?}, not with a \
                         `data:`, `id:`, `event:` or `retry:` field or a `:` comment"
                    )));
                }
                d.push(&head[i..]);
                break;
            }
            Some(_) => {}
        }
    }
    drop(head);
    let bad_frame = |i: usize, e: &dyn std::fmt::Display| {
        eprintln!("agui: frame {i}: {e}");
        Ok(ExitCode::from(1))
    };
    let framing = |i: usize, e: sse::SseError| {
        Stop::Unreadable(format!(
            "frame {i}: {}",
            crate::input::sse_error_message(&e)
        ))
    };
    loop {
        loop {
            let next = if eof {
                d.finish_ref()
            } else {
                d.next_frame_ref()
            };
            match next {
                Ok(Some(f)) => match Event::from_json_str(f.data) {
                    Ok(e) => {
                        event_line(out, &e)?;
                        frame += 1;
                    }
                    Err(e) => return bad_frame(frame, &e),
                },
                Ok(None) => break,
                Err(e) => return Err(framing(frame, e)),
            }
        }
        if eof {
            return Ok(ExitCode::SUCCESS);
        }
        eof = !next_chunk(source, out, &mut chunk)?;
        d.push(&chunk);
    }
}

fn decode_proto(source: &mut Source, out: &mut Out, opts: StreamOptions) -> Result<ExitCode, Stop> {
    // The index of the next frame.
    let mut frame = 0usize;
    let mut d = proto::ProtoFrameDecoder::with_max_frame_size(opts.max_frame_bytes);
    let mut chunk = Vec::new();
    let unreadable = |i: usize, e: proto::ProtoError| {
        let hint = match e {
            proto::ProtoError::FrameTooLarge { .. } if i == 0 => {
                " (is the input a length-prefixed protobuf stream? if so, raise --max-frame-bytes)"
            }
            proto::ProtoError::FrameTooLarge { .. } => " (raise it with --max-frame-bytes)",
            _ => "",
        };
        Stop::Unreadable(format!("frame {i}: {e}{hint}"))
    };
    loop {
        let more = next_chunk(source, out, &mut chunk)?;
        d.push(&chunk);
        loop {
            match d.next_frame() {
                Ok(Some(body)) => {
                    match proto::decode_event(&body) {
                        Ok(Some(e)) => event_line(out, &e)?,
                        // An event of a later protocol version: skipped, as the reference does.
                        Ok(None) => {}
                        Err(e) => {
                            eprintln!("agui: frame {}: {e}", frame);
                            return Ok(ExitCode::from(1));
                        }
                    }
                    frame += 1;
                }
                Ok(None) => break,
                Err(e) => return Err(unreadable(frame, e)),
            }
        }
        if !more {
            return match d.finish() {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(e) => Err(unreadable(frame, e)),
            };
        }
    }
}
