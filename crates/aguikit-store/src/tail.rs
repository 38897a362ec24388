//! Live tails on any backend: read what is stored, then wait for a wake-up and read again.

use crate::{EventStore, Result, StoreError, StoredEvent};
use futures_util::stream::{self, BoxStream, StreamExt};
use std::collections::VecDeque;

/// How many events a tail reads at once.
const PAGE: usize = 1024;

struct State<S> {
    store: S,
    thread: String,
    next: u64,
    /// What to yield before reading again: decoded events, possibly ended by an error.
    buffer: VecDeque<Result<StoredEvent>>,
    wake: tokio::sync::watch::Receiver<u64>,
    /// An error is in the buffer (or was yielded): read no more, end after the buffer.
    ended: bool,
}

/// The stream behind [`EventStore::tail`] for a store that can be cloned cheaply: stored
/// events of `thread` from `from_seq` on, then live ones. Subscribes before each read, so an
/// append that lands between a read and the wait still wakes it.
///
/// Ends after an error, having first yielded everything before it: a stored event that
/// cannot be decoded comes as [`StoreError::Corrupt`] after every event read before it, and
/// a deleted thread (its wake-up channel closed) as [`StoreError::UnknownThread`].
pub fn tail_stream<S: EventStore + Clone>(
    store: S,
    thread: &str,
    from_seq: u64,
) -> BoxStream<'static, Result<StoredEvent>> {
    let wake = store.subscribe(thread);
    let state = State {
        store,
        thread: thread.to_owned(),
        next: from_seq.max(1),
        buffer: VecDeque::new(),
        wake,
        ended: false,
    };
    stream::unfold(state, |mut st| async move {
        loop {
            if let Some(item) = st.buffer.pop_front() {
                return Some((item, st));
            }
            if st.ended {
                return None;
            }
            if st.wake.has_changed().is_err() {
                // The thread was deleted (see `EventStore::subscribe`), maybe made again.
                st.ended = true;
                return Some((Err(StoreError::UnknownThread(st.thread.clone())), st));
            }
            st.wake.borrow_and_update();
            let page = match st.store.read_raw(&st.thread, st.next, PAGE).await {
                Ok(p) => p,
                Err(e) => {
                    st.ended = true;
                    return Some((Err(e), st));
                }
            };
            if page.is_empty() {
                // A closed channel (deleted thread) is reported at the top of the loop.
                match st.store.poll_interval() {
                    Some(every) => {
                        let _ = tokio::time::timeout(every, st.wake.changed()).await;
                    }
                    None => {
                        let _ = st.wake.changed().await;
                    }
                }
                continue;
            }
            for raw in page {
                st.next = raw.seq + 1;
                match raw.decode(&st.thread) {
                    Ok(e) => st.buffer.push_back(Ok(e)),
                    Err(e) => {
                        st.buffer.push_back(Err(e));
                        st.ended = true;
                        break;
                    }
                }
            }
        }
    })
    .boxed()
}
