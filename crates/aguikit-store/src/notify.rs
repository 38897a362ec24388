//! In-process wake-ups for live tails: one `watch` channel per thread with subscribers.

use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::watch;

/// Per-thread wake-ups. Entries live while someone subscribes.
#[derive(Default)]
pub(crate) struct Notifier {
    threads: Mutex<HashMap<String, watch::Sender<u64>>>,
}

impl Notifier {
    pub(crate) fn subscribe(&self, thread: &str) -> watch::Receiver<u64> {
        let mut map = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        map.retain(|_, tx| tx.receiver_count() > 0);
        map.entry(thread.to_owned())
            .or_insert_with(|| watch::channel(0).0)
            .subscribe()
    }

    /// Wakes the subscribers of `thread` (the new last sequence as value).
    pub(crate) fn notify(&self, thread: &str, last_seq: u64) {
        let mut map = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = map.get(thread) {
            if tx.receiver_count() == 0 {
                map.remove(thread);
            } else {
                tx.send_replace(last_seq);
            }
        }
    }

    /// Closes the channel of `thread` (deleted): its subscribers' `changed()` fails, which
    /// ends their tails; later subscribers get a new channel.
    pub(crate) fn close(&self, thread: &str) {
        let mut map = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        map.remove(thread);
    }

    /// Wakes every subscriber (a notification whose thread is unknown).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn notify_all(&self) {
        let map = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        for tx in map.values() {
            tx.send_modify(|v| *v = v.wrapping_add(1));
        }
    }
}
