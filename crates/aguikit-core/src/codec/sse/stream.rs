//! Adapting a stream of byte chunks into a stream of SSE frames (feature `stream`).

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_core::{FusedStream, Stream};

use super::{SseDecoder, SseError, SseFrame};

/// What can go wrong in an [`SseStream`]: the underlying stream failed, or its bytes are
/// not a valid SSE stream.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SseStreamError<E> {
    /// The underlying stream yielded an error (for example an I/O error reading the body).
    #[error("reading the SSE stream failed")]
    Source(#[source] E),
    /// The bytes could not be decoded; the [`SseStream`] ends after this.
    #[error(transparent)]
    Sse(#[from] SseError),
}

pin_project_lite::pin_project! {
    /// A [`Stream`] of [`SseFrame`]s decoded from any stream of byte chunks, such as an
    /// HTTP response body.
    ///
    /// The inner stream yields `Result<B, E>` with `B: AsRef<[u8]>` (`Vec<u8>`, `Bytes`,
    /// `&[u8]`, ...); chunks may split the SSE text anywhere. The inner stream need not be
    /// `Unpin`. Decoding is done by an [`SseDecoder`], with its rules and limits; when the
    /// inner stream ends, the decoder is [finished](SseDecoder::finish), so a last frame
    /// without its blank line is still yielded.
    ///
    /// Errors: an inner `Err(e)` is yielded as [`SseStreamError::Source`] and the inner
    /// stream is polled again afterwards (stop polling to give up); a decoding error is
    /// yielded as [`SseStreamError::Sse`] and ends the stream.
    ///
    /// # Example
    ///
    /// ```
    /// use std::pin::pin;
    /// use std::task::{Context, Poll, Waker};
    /// use aguikit_core::codec::sse::SseStream;
    /// use futures_core::Stream;
    ///
    /// // A stream that is always ready: chunks split in the middle of a frame.
    /// struct Chunks(Vec<&'static [u8]>);
    /// impl Stream for Chunks {
    ///     type Item = Result<&'static [u8], std::io::Error>;
    ///     fn poll_next(
    ///         mut self: std::pin::Pin<&mut Self>,
    ///         _: &mut Context<'_>,
    ///     ) -> Poll<Option<Self::Item>> {
    ///         Poll::Ready((!self.0.is_empty()).then(|| Ok(self.0.remove(0))))
    ///     }
    /// }
    ///
    /// let mut frames = pin!(SseStream::new(Chunks(vec![b"data: {\"a\"", b":1}\n\ndata: 2"])));
    /// let mut cx = Context::from_waker(Waker::noop());
    /// let mut data = Vec::new();
    /// while let Poll::Ready(Some(frame)) = frames.as_mut().poll_next(&mut cx) {
    ///     data.push(frame?.data);
    /// }
    /// assert_eq!(data, [r#"{"a":1}"#, "2"]);
    /// # Ok::<(), aguikit_core::codec::sse::SseStreamError<std::io::Error>>(())
    /// ```
    #[must_use = "streams do nothing unless polled"]
    #[derive(Debug)]
    pub struct SseStream<S> {
        #[pin]
        inner: S,
        decoder: SseDecoder,
        state: State,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// The inner stream may yield more chunks.
    Reading,
    /// The inner stream has ended; the decoder's remaining frames are being yielded.
    Finishing,
    /// Nothing more will be yielded.
    Done,
}

impl<S> SseStream<S> {
    /// Decodes `inner` with a default [`SseDecoder`] (16 MiB frame limit).
    pub fn new(inner: S) -> Self {
        SseStream::with_decoder(inner, SseDecoder::new())
    }

    /// Decodes `inner` with the given decoder, for example one made by
    /// [`SseDecoder::with_max_frame_size`].
    pub fn with_decoder(inner: S, decoder: SseDecoder) -> Self {
        SseStream {
            inner,
            decoder,
            state: State::Reading,
        }
    }

    /// The decoder, for [`last_event_id`](SseDecoder::last_event_id) and
    /// [`retry`](SseDecoder::retry).
    pub fn decoder(&self) -> &SseDecoder {
        &self.decoder
    }

    /// The inner stream.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner stream, mutably. Taking chunks from it directly skips them.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner stream, mutably and pinned. Taking chunks from it directly skips them.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut S> {
        self.project().inner
    }

    /// The inner stream; bytes buffered in the decoder are dropped.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, B, E> Stream for SseStream<S>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    type Item = Result<SseFrame, SseStreamError<E>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        loop {
            let decoded = match *this.state {
                State::Done => return Poll::Ready(None),
                State::Reading => this.decoder.next_frame(),
                State::Finishing => this.decoder.finish(),
            };
            match decoded {
                Ok(Some(frame)) => return Poll::Ready(Some(Ok(frame))),
                Ok(None) if *this.state == State::Finishing => {
                    *this.state = State::Done;
                    return Poll::Ready(None);
                }
                Ok(None) => {}
                Err(err) => {
                    *this.state = State::Done;
                    return Poll::Ready(Some(Err(SseStreamError::Sse(err))));
                }
            }
            match ready!(this.inner.as_mut().poll_next(cx)) {
                Some(Ok(chunk)) => this.decoder.push(chunk.as_ref()),
                Some(Err(err)) => return Poll::Ready(Some(Err(SseStreamError::Source(err)))),
                None => *this.state = State::Finishing,
            }
        }
    }
}

impl<S, B, E> FusedStream for SseStream<S>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    fn is_terminated(&self) -> bool {
        self.state == State::Done
    }
}
