//! The client pipeline: compatibility → (drop unknown) → chunk expansion → verification →
//! application, one input event at a time, exactly in the reference client's order.
//!
//! ```
//! use aguikit_core::{Event, engine::pipeline::Pipeline};
//! let mut p = Pipeline::new();
//! for line in [
//!     r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
//!     r#"{"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"Hi"}"#,
//!     r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r"}"#,
//! ] {
//!     p.push_json(line.as_bytes()).unwrap();
//! }
//! p.finish().unwrap();
//! assert_eq!(p.applier().messages()[0].text(), Some("Hi"));
//! ```

use super::Violation;
use super::apply::{Applier, Changes};
use super::compat::CompatBoundary;
use super::expand::Expander;
use super::verify::Verifier;
use crate::event::{DecodeError, StateSnapshot};
use crate::{Event, EventType};
use serde_json::Value;

/// Why the pipeline stopped: which input event (0-based index and type) broke which rule.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("event {index} ({event_type}): {kind}")]
pub struct PipelineError {
    /// Index of the input event whose arrival failed; equal to the number of input events
    /// when the failure came at the end of the stream.
    pub index: usize,
    /// The wire type of that event (`"end of stream"` at the end).
    pub event_type: String,
    /// What went wrong.
    pub kind: PipelineErrorKind,
}

/// The two ways an input event can fail.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineErrorKind {
    /// The event is malformed (schema enforcement).
    #[error("{0}")]
    Decode(#[from] DecodeError),
    /// The event breaks an expansion or verification rule.
    #[error("{0}")]
    Rule(#[from] Violation),
}

impl PipelineError {
    /// The rule label (`V16`, `CH8`, ...) or `"schema"` for malformed events.
    pub fn rule(&self) -> &str {
        match &self.kind {
            PipelineErrorKind::Decode(_) => "schema",
            PipelineErrorKind::Rule(v) => v.rule,
        }
    }
}

/// The composed client pipeline, fed one input event at a time.
///
/// After an error the pipeline is stopped: every event before the failing one stays applied
/// (and the failing event's own expansion up to the failing expanded event), and later
/// pushes return the same error.
///
/// Typed events go in with [`push`](Self::push); each push returns what it emitted (a
/// chunk expands into the events it stands for):
///
/// ```
/// use aguikit_core::Pipeline;
/// use aguikit_core::event::{RunFinished, RunStarted, TextMessageChunk, TextMessageContent};
///
/// let mut pipeline = Pipeline::new();
/// pipeline.push(RunStarted::new("t", "r").into())?;
/// let emitted = pipeline.push(TextMessageChunk::new().with_message_id("m").with_delta("Hi").into())?;
/// let types: Vec<&str> = emitted.iter().map(|e| e.type_str()).collect();
/// assert_eq!(types, ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]);
///
/// // The end of the run closes the message the chunk opened.
/// let emitted = pipeline.push(RunFinished::new("t", "r").into())?;
/// let types: Vec<&str> = emitted.iter().map(|e| e.type_str()).collect();
/// assert_eq!(types, ["TEXT_MESSAGE_END", "RUN_FINISHED"]);
/// pipeline.finish()?;
///
/// // Content for a message that was never started: the error names the event and the rule.
/// let mut pipeline = Pipeline::new();
/// pipeline.push(RunStarted::new("t", "r").into())?;
/// let error = pipeline.push(TextMessageContent::new("x", "?").into()).unwrap_err();
/// assert_eq!((error.index, error.event_type.as_str()), (1, "TEXT_MESSAGE_CONTENT"));
/// assert!(error.rule().starts_with('V'), "{error}");
/// # Ok::<(), aguikit_core::engine::pipeline::PipelineError>(())
/// ```
#[derive(Debug)]
pub struct Pipeline {
    compat: CompatBoundary,
    expander: Expander,
    verifier: Verifier,
    applier: Applier,
    index: usize,
    expanded: Vec<Event>,
    emitted: Vec<Event>,
    failed: Option<PipelineError>,
    warnings: Vec<(usize, String)>,
    collect_warnings: bool,
    /// Whether verified events are folded into the applier.
    apply: bool,
    /// Whether `push` hands back the events it emitted (else they are folded by value and
    /// dropped).
    emit: bool,
    /// The document of the `STATE_SNAPSHOT` being pushed, as text ([`Decoded`] of a large
    /// snapshot), for the applier.
    snapshot_text: Option<Box<[u8]>>,
}

impl Default for Pipeline {
    fn default() -> Self {
        Pipeline::new()
    }
}

impl Pipeline {
    /// A pipeline starting with no messages and state `{}`.
    pub fn new() -> Self {
        Pipeline::with_applier(Applier::new())
    }

    /// A pipeline that folds into an existing conversation.
    pub fn with_applier(applier: Applier) -> Self {
        Pipeline {
            compat: CompatBoundary::new(),
            expander: Expander::new(),
            verifier: Verifier::new(),
            applier,
            index: 0,
            expanded: Vec::new(),
            emitted: Vec::new(),
            failed: None,
            warnings: Vec::new(),
            collect_warnings: false,
            apply: true,
            emit: true,
            snapshot_text: None,
        }
    }

    /// Replaces the id minter of the `THINKING_*` translation (for deterministic output).
    pub fn with_compat(mut self, compat: CompatBoundary) -> Self {
        self.compat = compat;
        self
    }

    /// Records the warnings of every stage (dropped unknown events, stripped material,
    /// translations), readable with [`Pipeline::warnings`]. Off by default: it costs a
    /// little per event.
    pub fn with_warnings(mut self, on: bool) -> Self {
        self.collect_warnings = on;
        self
    }

    /// Folds the verified events into the conversation (the default), or not: a pipeline that
    /// only expands and verifies gives the same verdict for every stream, in memory that does
    /// not grow with the conversation (its [`applier`](Self::applier) stays as it started).
    ///
    /// ```
    /// use aguikit_core::engine::pipeline::Pipeline;
    /// let mut p = Pipeline::new().with_apply(false);
    /// p.push_json(br#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#).unwrap();
    /// p.push_json(br#"{"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"Hi"}"#).unwrap();
    /// let err = p.push_json(br#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"x","delta":"?"}"#);
    /// assert_eq!(err.unwrap_err().index, 2);
    /// assert!(p.applier().messages().is_empty());
    /// ```
    pub fn with_apply(mut self, on: bool) -> Self {
        self.apply = on;
        self
    }

    /// Hands back the emitted events from every push (the default), or not: a folder that
    /// only wants the verdict and the folded conversation (`agui apply`) then gets an empty
    /// slice from every push, and each event is moved into the applier instead of copied, so
    /// a large `STATE_SNAPSHOT` is held once.
    ///
    /// ```
    /// use aguikit_core::engine::pipeline::Pipeline;
    /// let mut p = Pipeline::new().with_emitted(false);
    /// p.push_json(br#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#).unwrap();
    /// let out = p.push_json(br#"{"type":"STATE_SNAPSHOT","snapshot":{"n":1}}"#).unwrap();
    /// assert!(out.is_empty());
    /// assert_eq!(p.applier().state()["n"], 1);
    /// ```
    pub fn with_emitted(mut self, on: bool) -> Self {
        self.emit = on;
        self
    }

    /// Decodes and feeds one event given as JSON bytes: the same as
    /// [`push_ready`](Self::push_ready) of [`Decoded::from_json`], with the decode's
    /// warnings recorded when the pipeline records warnings.
    pub fn push_json(&mut self, bytes: &[u8]) -> Result<&[Event], PipelineError> {
        // A pipeline that hands events back needs their documents as trees.
        let text = !self.emit && bytes.len() >= SNAPSHOT_TEXT_BYTES;
        if self.collect_warnings {
            return self.push_ready(Decoded::decode_collecting(bytes, text));
        }
        if text {
            return self.push_ready(Decoded::decode(bytes, true));
        }
        // Most events: straight to the pipeline, not moved through a `Decoded` (an event is
        // a few hundred bytes).
        match Event::from_json_slice(bytes) {
            Ok(e) => self.push(e),
            Err(error) => self.push_ready(Decoded::failed(error, bytes)),
        }
    }

    /// Feeds one event decoded apart from the pipeline, by [`Decoded::from_json`] or
    /// [`Decoded::collecting`] (on another thread, say): the same outcome as
    /// [`push_json`](Self::push_json) of its bytes. The decode's warnings are recorded
    /// when both the pipeline records warnings and the event was decoded by
    /// [`Decoded::collecting`].
    ///
    /// ```
    /// use aguikit_core::engine::pipeline::{Decoded, Pipeline};
    /// let lines: [&[u8]; 2] = [
    ///     br#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#,
    ///     br#"{"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"Hi"}"#,
    /// ];
    /// let decoded: Vec<Decoded> = std::thread::spawn(move || {
    ///     lines.iter().map(|l| Decoded::from_json(l)).collect()
    /// })
    /// .join()
    /// .unwrap();
    /// let mut p = Pipeline::new();
    /// for d in decoded {
    ///     p.push_ready(d).unwrap();
    /// }
    /// assert_eq!(p.applier().messages()[0].text(), Some("Hi"));
    /// ```
    pub fn push_ready(&mut self, decoded: Decoded) -> Result<&[Event], PipelineError> {
        // An event of unknown type gets the pipeline's own warning (it is dropped), which
        // the decode's note of its type would only repeat.
        if self.collect_warnings && !matches!(decoded.outcome, Outcome::Event(Event::Unknown(_))) {
            let index = self.index;
            self.warnings
                .extend(decoded.warnings.into_iter().map(|m| (index, m)));
        }
        match decoded.outcome {
            Outcome::Event(e) => self.push(e),
            Outcome::SnapshotText(mut e, json) => {
                if self.emit {
                    // The caller gets the event, with its document.
                    e.snapshot = crate::event::value_of_text(&json);
                    return self.push(Event::StateSnapshot(e));
                }
                self.snapshot_text = Some(json.into_boxed_slice());
                let result = self.push(Event::StateSnapshot(e)).map(drop);
                // Left over when the event failed.
                self.snapshot_text = None;
                result.map(|()| &self.emitted[..])
            }
            Outcome::NotAnObject => self.drop_non_object(),
            Outcome::Invalid { error, event_type } => self.push_decoded(Err(error), event_type),
        }
    }

    /// The reference drops a non-object event (a string, a number, an array) like an event
    /// of unknown type, but fails on `null`.
    fn drop_non_object(&mut self) -> Result<&[Event], PipelineError> {
        self.check_running()?;
        if self.collect_warnings {
            self.warnings.push((
                self.index,
                "an event that is not a JSON object was dropped".into(),
            ));
        }
        self.index += 1;
        self.emitted.clear();
        Ok(&self.emitted)
    }

    /// Decodes and feeds one event given as a parsed JSON value.
    pub fn push_value(&mut self, value: Value) -> Result<&[Event], PipelineError> {
        if !value.is_object() && !value.is_null() {
            return self.drop_non_object();
        }
        let ty = value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let decoded = self.observe(|| Event::from_value(value));
        self.push_decoded(decoded, ty)
    }

    /// Feeds the result of decoding one input event (a decode error fails the pipeline at
    /// this index).
    pub fn push_decoded(
        &mut self,
        decoded: Result<Event, DecodeError>,
        type_hint: String,
    ) -> Result<&[Event], PipelineError> {
        match decoded {
            Ok(e) => self.push(e),
            Err(e) => {
                self.check_running()?;
                let err = PipelineError {
                    index: self.index,
                    event_type: type_hint,
                    kind: e.into(),
                };
                self.index += 1;
                self.failed = Some(err.clone());
                Err(err)
            }
        }
    }

    /// Feeds one decoded input event. Returns the events it became after expansion, each
    /// verified and applied (empty for a dropped unknown event or a chunk that emits nothing).
    pub fn push(&mut self, event: Event) -> Result<&[Event], PipelineError> {
        self.check_running()?;
        let index = self.index;
        self.index += 1;
        self.emitted.clear();
        // Known types name themselves without allocating; the string is built on errors only.
        let known_type = event.event_type();
        let fail = |kind: PipelineErrorKind| PipelineError {
            index,
            event_type: known_type
                .map(EventType::as_str)
                .unwrap_or_default()
                .to_owned(),
            kind,
        };
        let event = if known_type.is_some() {
            event
        } else {
            let raw_type = event.type_str().to_owned();
            match self.compat.translate(event) {
                Ok(e) => e,
                Err(e) => {
                    return Err(self.fail_with(PipelineError {
                        index,
                        event_type: raw_type,
                        kind: e.into(),
                    }));
                }
            }
        };
        if let Event::Unknown(u) = &event {
            if self.collect_warnings {
                self.warnings.push((
                    index,
                    format!("unknown event type {:?} dropped", u.type_str()),
                ));
            }
            return Ok(&self.emitted);
        }
        // Most events pass the expander unchanged: they skip its buffer, so each (a few
        // hundred bytes) is moved once fewer times on the way to the applier.
        if !self.expander.has_pending() && !event.is_chunk() {
            self.pass(event)
                .map_err(|v| self.fail_with(fail(v.into())))?;
            return Ok(&self.emitted);
        }
        let mut expanded = std::mem::take(&mut self.expanded);
        expanded.clear();
        let result = match self.expander.push(event, &mut expanded) {
            Err(v) => Err(fail(v.into())),
            Ok(()) => expanded
                .drain(..)
                .try_for_each(|e| self.pass(e))
                .map_err(|v| fail(v.into())),
        };
        self.expanded = expanded;
        result.map_err(|err| self.fail_with(err))?;
        Ok(&self.emitted)
    }

    /// Verifies one expanded event, then applies it and keeps it for the caller (or, when
    /// nothing is emitted, moves it into the applier).
    #[inline]
    fn pass(&mut self, e: Event) -> Result<(), Violation> {
        self.verifier.push(&e)?;
        if !self.emit {
            if !self.apply {
                return Ok(());
            }
            if let Event::StateSnapshot(_) = &e
                && let Some(json) = self.snapshot_text.take()
            {
                self.applier.snapshot_text(json);
            } else {
                let _: Changes = self.applier.push_owned(e);
            }
            return Ok(());
        }
        if self.apply {
            let _: Changes = self.applier.push(&e);
        }
        self.emitted.push(e);
        Ok(())
    }

    /// Records `err` as the pipeline's failure and returns it.
    fn fail_with(&mut self, err: PipelineError) -> PipelineError {
        self.failed = Some(err.clone());
        err
    }

    /// Ends the stream: runs the end-of-stream checks.
    pub fn finish(&mut self) -> Result<(), PipelineError> {
        self.check_running()?;
        if let Err(v) = self.verifier.finish() {
            let err = PipelineError {
                index: self.index,
                event_type: "end of stream".into(),
                kind: v.into(),
            };
            self.failed = Some(err.clone());
            return Err(err);
        }
        Ok(())
    }

    /// The error that stopped the pipeline, if any.
    pub fn error(&self) -> Option<&PipelineError> {
        self.failed.as_ref()
    }

    /// How many input events were fed.
    pub fn events_seen(&self) -> usize {
        self.index
    }

    /// The folded conversation.
    pub fn applier(&self) -> &Applier {
        &self.applier
    }

    /// Takes the folded conversation out.
    pub fn into_applier(self) -> Applier {
        self.applier
    }

    /// Warnings recorded so far as (input index, message), when enabled.
    pub fn warnings(&self) -> &[(usize, String)] {
        &self.warnings
    }

    fn check_running(&self) -> Result<(), PipelineError> {
        match &self.failed {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn observe<T>(&mut self, f: impl FnOnce() -> T) -> T {
        if !self.collect_warnings {
            return f();
        }
        let (out, w) = crate::warning::collect(f);
        let index = self.index;
        self.warnings.extend(w.into_iter().map(|m| (index, m)));
        out
    }
}

/// The size from which a `STATE_SNAPSHOT` event's document is kept as text by
/// [`Decoded::from_json`] (and so by [`Pipeline::push_json`]).
pub const SNAPSHOT_TEXT_BYTES: usize = 1 << 20;

/// One input event decoded apart from a [`Pipeline`], ready for
/// [`Pipeline::push_ready`]: decoding (the larger part of the work for most streams) can
/// then run on another thread than verification and folding.
#[derive(Debug)]
pub struct Decoded {
    outcome: Outcome,
    /// What the decode stripped, when decoded by [`Decoded::collecting`].
    warnings: Vec<String>,
}

// The event is nearly every outcome: boxing it would cost an allocation per event.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Outcome {
    Event(Event),
    /// A large `STATE_SNAPSHOT`, its document as the JSON text serde_json writes of it (the
    /// event's own `snapshot` is `null`).
    SnapshotText(StateSnapshot, Vec<u8>),
    /// A JSON value other than an object or `null`: dropped like an unknown event.
    NotAnObject,
    /// Malformed; `event_type` names it in the pipeline's error.
    Invalid {
        error: DecodeError,
        event_type: String,
    },
}

impl Decoded {
    /// Decodes one event given as JSON bytes, as [`Pipeline::push_json`] does.
    ///
    /// A `STATE_SNAPSHOT` of [`SNAPSHOT_TEXT_BYTES`] or more keeps its document as the JSON
    /// text `serde_json` writes of it, a fraction of the memory of the tree: a pipeline
    /// that does not hand events back keeps the state that way until a patch needs the
    /// tree ([`Applier::write_state_json`]). Any other pipeline builds the tree when the
    /// event is pushed.
    pub fn from_json(bytes: &[u8]) -> Decoded {
        Decoded::decode(bytes, true)
    }

    /// [`from_json`](Self::from_json), keeping large snapshots' documents as text or not.
    fn decode(bytes: &[u8], text: bool) -> Decoded {
        if text
            && bytes.len() >= SNAPSHOT_TEXT_BYTES
            && let Ok(text) = std::str::from_utf8(bytes)
            && let Some((event, json)) = crate::event::state_snapshot_text(text)
        {
            return Decoded {
                outcome: Outcome::SnapshotText(event, json),
                warnings: Vec::new(),
            };
        }
        match Event::from_json_slice(bytes) {
            Ok(e) => Decoded {
                outcome: Outcome::Event(e),
                warnings: Vec::new(),
            },
            Err(error) => Decoded::failed(error, bytes),
        }
    }

    /// What `bytes`, which failed to decode with `error`, become.
    fn failed(error: DecodeError, bytes: &[u8]) -> Decoded {
        let outcome = match error {
            DecodeError::NotAnObject { .. } if bytes.trim_ascii() != b"null" => {
                Outcome::NotAnObject
            }
            // The type is only needed to name a failing event: parse for it on errors only.
            error => Outcome::Invalid {
                error,
                event_type: bytes_type(bytes),
            },
        };
        Decoded {
            outcome,
            warnings: Vec::new(),
        }
    }

    /// As [`from_json`](Self::from_json), also keeping the decode's warnings (what it
    /// stripped) for a pipeline that records them.
    pub fn collecting(bytes: &[u8]) -> Decoded {
        Decoded::decode_collecting(bytes, true)
    }

    /// [`decode`](Self::decode), keeping the decode's warnings.
    fn decode_collecting(bytes: &[u8], text: bool) -> Decoded {
        let (mut decoded, warnings) = crate::warning::collect(|| Decoded::decode(bytes, text));
        decoded.warnings = warnings;
        decoded
    }
}

fn bytes_type(bytes: &[u8]) -> String {
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `lines` through `push_json` on one pipeline and, decoded on another thread,
    /// through `push_ready` on another, and returns both pipelines.
    fn both_ways(lines: &[&str], warnings: bool) -> (Pipeline, Pipeline) {
        let mut direct = Pipeline::new().with_warnings(warnings);
        for line in lines {
            if direct.push_json(line.as_bytes()).is_err() {
                break;
            }
        }
        let owned: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
        let decoded: Vec<Decoded> = std::thread::spawn(move || {
            owned
                .iter()
                .map(|l| {
                    if warnings {
                        Decoded::collecting(l.as_bytes())
                    } else {
                        Decoded::from_json(l.as_bytes())
                    }
                })
                .collect()
        })
        .join()
        .unwrap();
        let mut ready = Pipeline::new().with_warnings(warnings);
        for d in decoded {
            if ready.push_ready(d).is_err() {
                break;
            }
        }
        (direct, ready)
    }

    const START: &str = r#"{"type":"RUN_STARTED","threadId":"t","runId":"r"}"#;

    #[test]
    fn events_decoded_apart_fold_as_pushed_json() {
        let lines = [
            START,
            r#"{"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"Hi"}"#,
            "[1, 2]",
            r#"{"type":"STATE_SNAPSHOT","snapshot":{"n":1}}"#,
            r#"{"type":"STATE_DELTA","delta":[{"op":"add","path":"/k","value":true}]}"#,
            // An outcome of unknown type is stripped with a warning.
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"odd"}}"#,
        ];
        for warnings in [false, true] {
            let (direct, ready) = both_ways(&lines, warnings);
            assert_eq!(direct.error(), None);
            assert_eq!(ready.error(), None);
            assert_eq!(ready.events_seen(), direct.events_seen());
            assert_eq!(ready.applier().state(), direct.applier().state());
            assert_eq!(ready.applier().messages()[0].text(), Some("Hi"));
            assert_eq!(ready.warnings(), direct.warnings());
            // The array and the outcome are reported when warnings are recorded.
            assert_eq!(ready.warnings().len(), if warnings { 2 } else { 0 });
        }
    }

    /// A `STATE_SNAPSHOT` event of over [`SNAPSHOT_TEXT_BYTES`]: many rows of strings
    /// with escapes, floats, large integers and nesting; `extra` goes in as a last member.
    fn large_snapshot(extra: &str) -> String {
        let row = |i: usize| {
            format!(
                r#"{{"id":{i},"name":"r\u00e9 \"{i}\" \ud83d\ude00","v":[1.5,-0,1e300,18446744073709551615,-{i}],"ok":true,"pos":{{"x":-0.25,"y":null}}}}"#
            )
        };
        let rows: Vec<String> = (0..12_000).map(row).collect();
        let text = format!(
            r#"{{"type":"STATE_SNAPSHOT","snapshot":{{"rows":[{}]{extra}}}}}"#,
            rows.join(",")
        );
        assert!(text.len() >= SNAPSHOT_TEXT_BYTES);
        text
    }

    /// Folds `lines` with events handed back (every document a tree) and without.
    fn folded(lines: &[&str]) -> (Pipeline, Pipeline) {
        let run = |emit: bool| {
            let mut p = Pipeline::new().with_emitted(emit);
            for line in lines {
                if p.push_json(line.as_bytes()).is_err() {
                    break;
                }
            }
            p
        };
        (run(true), run(false))
    }

    /// The state's JSON as the applier writes it.
    fn state_json(p: &Pipeline) -> Vec<u8> {
        let mut json = Vec::new();
        p.applier().write_state_json(&mut json);
        json
    }

    #[test]
    fn large_snapshots_fold_as_their_trees() {
        let big = large_snapshot(r#","n":1"#);
        let delta = r#"{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/n","value":2},{"op":"remove","path":"/rows/0"}]}"#;
        for lines in [
            vec![START, big.as_str()],
            vec![START, big.as_str(), delta],
            vec![START, big.as_str(), big.as_str(), delta, big.as_str()],
            // A failed patch leaves the document as it was.
            vec![
                START,
                big.as_str(),
                r#"{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/nothing"}]}"#,
            ],
        ] {
            let (trees, texts) = folded(&lines);
            // Kept as text while no patch came after the last snapshot.
            let last = lines.last().unwrap();
            assert_eq!(
                texts.applier().state_is_text(),
                last.contains("STATE_SNAPSHOT")
            );
            assert!(!trees.applier().state_is_text());
            assert_eq!(texts.error(), None);
            assert_eq!(trees.error(), None);
            let want = serde_json::to_vec(trees.applier().state()).unwrap();
            assert_eq!(state_json(&trees), want);
            // Written from the text it keeps, then from the tree a look at it builds.
            assert_eq!(state_json(&texts), want);
            assert_eq!(texts.applier().state(), trees.applier().state());
            assert_eq!(state_json(&texts), want);
            assert_eq!(
                texts.applier().clone().into_parts().1,
                *trees.applier().state()
            );
        }
        let (trees, _) = folded(&[START, &big, delta]);
        assert_eq!(trees.applier().state()["n"], 2);
        assert_eq!(trees.applier().state()["rows"][0]["id"], 1);
    }

    #[test]
    fn large_snapshots_that_repeat_a_key_or_fail_fold_as_their_trees() {
        // The tree keeps one member of a repeated key: the text is not kept.
        let repeated = large_snapshot(r#","rows":[],"n":1"#);
        let (trees, texts) = folded(&[START, &repeated]);
        assert!(!texts.applier().state_is_text());
        assert_eq!(
            trees.applier().state(),
            &serde_json::json!({"rows": [], "n": 1})
        );
        assert_eq!(state_json(&texts), br#"{"rows":[],"n":1}"#);
        // A snapshot before the run starts is refused: the state stays as it was.
        let big = large_snapshot("");
        let (trees, texts) = folded(&[&big]);
        assert_eq!(trees.error().map(|e| e.index), Some(0));
        assert_eq!(texts.error(), trees.error());
        assert_eq!(state_json(&texts), b"{}");
        // A verifying pipeline gives the same verdicts.
        let mut verify = Pipeline::new().with_apply(false).with_emitted(false);
        verify.push_json(START.as_bytes()).unwrap();
        verify.push_json(big.as_bytes()).unwrap();
        assert_eq!(state_json(&verify), b"{}");
    }

    #[test]
    fn events_decoded_apart_fail_as_pushed_json() {
        for bad in [
            "null",
            r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":7}"#,
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r2"}"#,
            "{not json",
        ] {
            let (direct, ready) = both_ways(&[START, bad, START], false);
            let want = direct.error().expect("the second event fails");
            assert_eq!(want.index, 1, "{bad}");
            assert_eq!(ready.error(), Some(want), "{bad}");
        }
    }
}
