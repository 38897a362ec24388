//! `SseStream`: the `futures_core::Stream` adapter over byte chunks (feature `stream`),
//! driven by a minimal hand-written executor.
#![cfg(feature = "stream")]

use std::collections::VecDeque;
use std::marker::PhantomPinned;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use aguikit_core::codec::sse::{SseDecoder, SseError, SseFrame, SseStream, SseStreamError};
use futures_core::{FusedStream, Stream};

/// Counts wake-ups, so the executor can check that `Pending` always comes with a wake-up.
#[derive(Default)]
struct WakeCounter(AtomicUsize);

impl Wake for WakeCounter {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Polls `stream` to completion, or until `limit` items, asserting that every `Pending`
/// was preceded by a wake-up (so a real executor would poll again).
fn collect<S: Stream>(stream: S, limit: usize) -> Vec<S::Item> {
    let counter = Arc::new(WakeCounter::default());
    let waker = Waker::from(counter.clone());
    let mut cx = Context::from_waker(&waker);
    let mut stream = pin!(stream);
    let mut items = Vec::new();
    let mut polls = 0;
    while items.len() < limit {
        let wakes_before = counter.0.load(Ordering::SeqCst);
        match stream.as_mut().poll_next(&mut cx) {
            Poll::Ready(Some(item)) => items.push(item),
            Poll::Ready(None) => break,
            Poll::Pending => {
                assert!(
                    counter.0.load(Ordering::SeqCst) > wakes_before,
                    "Pending without a wake-up"
                );
            }
        }
        polls += 1;
        assert!(polls < 10_000, "stream does not make progress");
    }
    items
}

enum Step {
    Chunk(Vec<u8>),
    Fail(&'static str),
    /// Return `Pending` once (after waking the task).
    Wait,
}

pin_project_lite::pin_project! {
    /// A scripted byte stream that is deliberately `!Unpin`.
    struct Script {
        steps: VecDeque<Step>,
        #[pin]
        _pinned: PhantomPinned,
    }
}

fn script(steps: impl IntoIterator<Item = Step>) -> Script {
    Script {
        steps: steps.into_iter().collect(),
        _pinned: PhantomPinned,
    }
}

fn chunks(parts: &[&str]) -> Script {
    script(parts.iter().map(|p| Step::Chunk(p.as_bytes().to_vec())))
}

impl Stream for Script {
    type Item = Result<Vec<u8>, &'static str>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.project().steps.pop_front() {
            None => Poll::Ready(None),
            Some(Step::Chunk(bytes)) => Poll::Ready(Some(Ok(bytes))),
            Some(Step::Fail(message)) => Poll::Ready(Some(Err(message))),
            Some(Step::Wait) => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }
}

fn frames(items: Vec<Result<SseFrame, SseStreamError<&'static str>>>) -> Vec<String> {
    items.into_iter().map(|item| item.unwrap().data).collect()
}

#[test]
fn frames_split_across_chunks() {
    let stream = SseStream::new(chunks(&[
        "da",
        "ta: {\"a\"",
        ":1}\n",
        "\ndata: 2\r",
        "\n\r\n",
    ]));
    assert_eq!(frames(collect(stream, usize::MAX)), ["{\"a\":1}", "2"]);
}

#[test]
fn several_frames_in_one_chunk() {
    let stream = SseStream::new(chunks(&["data: 1\n\ndata: 2\n\n: ping\n\ndata: 3\n\n"]));
    assert_eq!(frames(collect(stream, usize::MAX)), ["1", "2", "3"]);
}

#[test]
fn last_frame_without_blank_line_is_yielded_at_the_end() {
    let stream = SseStream::new(chunks(&["data: 1\n\n", "data: 2"]));
    assert_eq!(frames(collect(stream, usize::MAX)), ["1", "2"]);
}

#[test]
fn empty_stream_yields_nothing() {
    assert!(collect(SseStream::new(chunks(&[])), usize::MAX).is_empty());
    assert!(
        collect(
            SseStream::new(chunks(&["", ": only a comment\n\n"])),
            usize::MAX
        )
        .is_empty()
    );
}

#[test]
fn pending_inner_stream_is_passed_on() {
    let stream = SseStream::new(script([
        Step::Wait,
        Step::Chunk(b"data: a".to_vec()),
        Step::Wait,
        Step::Wait,
        Step::Chunk(b"\n\n".to_vec()),
        Step::Wait,
    ]));
    assert_eq!(frames(collect(stream, usize::MAX)), ["a"]);
}

#[test]
fn inner_errors_are_yielded_and_reading_goes_on() {
    let stream = SseStream::new(script([
        Step::Chunk(b"data: a\n".to_vec()),
        Step::Fail("connection reset"),
        Step::Chunk(b"\n".to_vec()),
    ]));
    let items = collect(stream, usize::MAX);
    assert_eq!(items.len(), 2);
    assert!(matches!(
        items[0],
        Err(SseStreamError::Source("connection reset"))
    ));
    assert_eq!(items[1].as_ref().unwrap().data, "a");
}

#[test]
fn a_decoding_error_ends_the_stream() {
    let mut stream = pin!(SseStream::new(script([
        Step::Chunk(b"data: ok\n\n".to_vec()),
        Step::Chunk(b"data: \xFF\n\n".to_vec()),
        Step::Chunk(b"data: never\n\n".to_vec()),
    ])));
    let items = collect(stream.as_mut(), usize::MAX);
    assert_eq!(items.len(), 2);
    assert_eq!(items[0].as_ref().unwrap().data, "ok");
    assert!(matches!(
        items[1],
        Err(SseStreamError::Sse(SseError::InvalidUtf8 { offset: 16 }))
    ));
    assert!(stream.is_terminated());
    assert!(collect(stream, usize::MAX).is_empty());
}

#[test]
fn is_terminated_only_after_the_end() {
    let mut stream = pin!(SseStream::new(chunks(&["data: 1"])));
    assert!(!stream.is_terminated());
    assert_eq!(frames(collect(stream.as_mut(), 1)), ["1"]);
    assert!(!stream.is_terminated());
    assert!(collect(stream.as_mut(), usize::MAX).is_empty());
    assert!(stream.is_terminated());
}

#[test]
fn custom_decoder_limit_applies() {
    let long = format!("data: {}\n\n", "x".repeat(100));
    let stream = SseStream::with_decoder(
        chunks(&["data: ok\n\n", &long]),
        SseDecoder::with_max_frame_size(50),
    );
    let items = collect(stream, usize::MAX);
    assert_eq!(items.len(), 2);
    assert!(matches!(
        items[1],
        Err(SseStreamError::Sse(SseError::FrameTooLarge {
            limit: 50,
            offset: 10
        }))
    ));
}

#[test]
fn decoder_state_is_visible() {
    let mut stream = pin!(SseStream::new(chunks(&["id: 7\nretry: 250\ndata: a\n\n"])));
    assert_eq!(collect(stream.as_mut(), usize::MAX).len(), 1);
    assert_eq!(stream.decoder().last_event_id(), Some("7"));
    assert_eq!(stream.decoder().retry(), Some(250));
    assert!(stream.get_ref().steps.is_empty());
}

#[test]
fn any_chunk_type_that_is_bytes_works() {
    struct Slices(Vec<&'static [u8]>);
    impl Stream for Slices {
        type Item = Result<&'static [u8], std::convert::Infallible>;
        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            Poll::Ready((!self.0.is_empty()).then(|| Ok(self.0.remove(0))))
        }
    }
    let mut stream = SseStream::new(Slices(vec![b"data: x\n\n"]));
    assert_eq!(stream.get_mut().0.len(), 1);
    let items = collect(stream, usize::MAX);
    assert_eq!(
        items
            .into_iter()
            .map(|i| i.unwrap().data)
            .collect::<Vec<_>>(),
        ["x"]
    );
    // Unpin inner streams can be unwrapped again.
    assert!(SseStream::new(Slices(vec![])).into_inner().0.is_empty());
}

#[test]
fn error_messages_and_sources() {
    use std::error::Error as _;
    let source: SseStreamError<std::io::Error> =
        SseStreamError::Source(std::io::Error::other("reset"));
    assert_eq!(source.to_string(), "reading the SSE stream failed");
    assert_eq!(source.source().unwrap().to_string(), "reset");
    let sse: SseStreamError<std::io::Error> = SseError::InvalidUtf8 { offset: 3 }.into();
    assert_eq!(sse.to_string(), "invalid UTF-8 in the SSE stream at byte 3");
}
