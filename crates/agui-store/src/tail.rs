//! Live tails on any backend: read what is stored, then wait for a wake-up and read again.

use crate::{EventStore, Result, StoredEvent};
use futures_util::stream::{self, BoxStream, StreamExt};
use std::collections::VecDeque;

/// How many events a tail reads at once.
const PAGE: usize = 1024;

struct State<S> {
    store: S,
    thread: String,
    next: u64,
    buffer: VecDeque<StoredEvent>,
    wake: tokio::sync::watch::Receiver<u64>,
    failed: bool,
}

/// The stream behind [`EventStore::tail`] for a store that can be cloned cheaply: stored
/// events of `thread` from `from_seq` on, then live ones. Subscribes before each read, so an
/// append that lands between a read and the wait still wakes it. Ends after an error.
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
        failed: false,
    };
    stream::unfold(state, |mut st| async move {
        if st.failed {
            return None;
        }
        loop {
            if let Some(e) = st.buffer.pop_front() {
                return Some((Ok(e), st));
            }
            st.wake.borrow_and_update();
            let page = match st.store.read_raw(&st.thread, st.next, PAGE).await {
                Ok(p) => p,
                Err(e) => {
                    st.failed = true;
                    return Some((Err(e), st));
                }
            };
            if page.is_empty() {
                let changed = st.wake.changed();
                match st.store.poll_interval() {
                    Some(every) => {
                        let _ = tokio::time::timeout(every, changed).await;
                    }
                    None => {
                        if changed.await.is_err() {
                            // The notifier dropped this thread's channel: subscribe again.
                            st.wake = st.store.subscribe(&st.thread);
                        }
                    }
                }
                continue;
            }
            for raw in page {
                st.next = raw.seq + 1;
                match raw.decode(&st.thread) {
                    Ok(e) => st.buffer.push_back(e),
                    Err(e) => {
                        st.failed = true;
                        return Some((Err(e), st));
                    }
                }
            }
        }
    })
    .boxed()
}
