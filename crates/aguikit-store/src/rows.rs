//! Several events in one row: how the SQL backends lay out an append.
//!
//! A row `(seq, n, body)` of the `events` table holds the `n` events `seq..seq + n` of one
//! run, its body their wire JSON joined by newlines (JSON Lines without the last newline).
//! An append's events go into as few rows as they fit: with one row per event (a B-tree
//! insert each, the run id written again in each), the SQLite writer took about 40% more
//! CPU per run under `agui load` (89–102 µs against 62–70).
//!
//! Compact JSON holds no raw newline (a string's newline is written `\n`), so the events'
//! own writers never need more; an event whose JSON does hold one (JSON given by a caller of
//! [`EventStore::append_json`](crate::EventStore::append_json)) gets a row of its own with
//! `n = 1`, whose body is the JSON as it is, never split. Rows written by earlier versions,
//! one per event, are such rows. A row's body stops growing at [`ROW_BYTES`] (an event
//! larger than that is a row alone), so that reading from an event in the middle of a row
//! skips little.

use crate::{RawEvent, StoreError, StoredEvent};
use aguikit_core::Event;

/// The size past which a row takes no further event.
pub(crate) const ROW_BYTES: usize = 64 * 1024;

/// One row of an append: events `first..first + count` of the batch.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Packed {
    /// The index in the batch of the row's first event.
    pub first: usize,
    /// How many events the row holds (at least one).
    pub count: usize,
    /// Their JSON, joined by newlines.
    pub body: Vec<u8>,
}

/// An append's rows as its events' JSON is added, in order: each event joins the last row
/// unless that row holds an event with a newline, or would grow past [`ROW_BYTES`].
#[derive(Debug, Default)]
pub(crate) struct Rows {
    /// The rows so far.
    pub rows: Vec<Packed>,
    /// Events added.
    pub count: usize,
    /// Whether the last row may take the next event.
    open: bool,
}

impl Rows {
    /// Adds an event whose JSON `write` appends to the buffer it is given (written straight
    /// into the row that takes it).
    pub(crate) fn push_with(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        let index = self.count;
        self.count += 1;
        if let Some(last) = self.rows.last_mut().filter(|_| self.open) {
            let start = last.body.len();
            last.body.push(b'\n');
            write(&mut last.body);
            let json = &last.body[start + 1..];
            if memchr::memchr(b'\n', json).is_none() && last.body.len() <= ROW_BYTES {
                last.count += 1;
                return;
            }
            // Rare: the event goes in a row of its own (its JSON moved there).
            let json = last.body[start + 1..].to_vec();
            last.body.truncate(start);
            return self.start_row(index, json);
        }
        let mut body = Vec::new();
        write(&mut body);
        self.start_row(index, body);
    }

    /// Adds an event's JSON.
    pub(crate) fn push(&mut self, json: &[u8]) {
        self.push_with(|out| out.extend_from_slice(json));
    }

    fn start_row(&mut self, first: usize, body: Vec<u8>) {
        self.open = memchr::memchr(b'\n', &body).is_none();
        self.rows.push(Packed {
            first,
            count: 1,
            body,
        });
    }
}

/// The events of a stored row: its body split into its `n` events' JSON, the row's first
/// event at `seq`; [`StoreError::Corrupt`] (at `seq`) when the body does not hold `n` of
/// them.
pub(crate) fn split<'a>(
    thread: &str,
    seq: u64,
    n: i64,
    body: &'a [u8],
) -> Result<Split<'a>, StoreError> {
    if n == 1 {
        return Ok(Split::One(Some(body)));
    }
    let found = memchr::memchr_iter(b'\n', body).count() + 1;
    if n < 1 || found as i64 != n {
        return Err(StoreError::Corrupt {
            thread: thread.to_owned(),
            seq,
            message: format!(
                "the stored row of events from {seq} should hold {n} events, and its body \
                 holds {found} lines"
            ),
        });
    }
    Ok(Split::Lines(body.split(is_newline as fn(&u8) -> bool)))
}

fn is_newline(b: &u8) -> bool {
    *b == b'\n'
}

/// Adds the events of a stored row (its first event `first`, `n` events, `body`: `None`
/// when not text or a blob) from `from_seq` on to `out`, up to `limit` events in all; false
/// when the page ends there (`limit` reached, or a damaged row). A damaged row (see
/// [`split`]) reads as one event of empty JSON, which fails to decode as that event
/// ([`RawEvent::decode`]), not as the whole page.
pub(crate) fn raw_events(
    out: &mut Vec<RawEvent>,
    limit: usize,
    from_seq: u64,
    first: u64,
    n: i64,
    run_id: &str,
    body: Option<&[u8]>,
) -> bool {
    if out.len() >= limit {
        return false;
    }
    let lines = body.and_then(|b| split("", first, n, b).ok());
    let Some(lines) = lines else {
        out.push(RawEvent {
            seq: first.max(from_seq),
            run_id: run_id.to_owned(),
            json: Vec::new(),
        });
        return false;
    };
    for (seq, json) in (first..).zip(lines) {
        if seq < from_seq {
            continue;
        }
        if out.len() >= limit {
            return false;
        }
        out.push(RawEvent {
            seq,
            run_id: run_id.to_owned(),
            json: json.to_vec(),
        });
    }
    out.len() < limit
}

/// Decodes stored rows into events, from a sequence on, up to the first event that cannot
/// be decoded (then [`Decoded::row`] answers its error).
pub(crate) struct Decoded<'t> {
    thread: &'t str,
    from_seq: u64,
    /// The events decoded.
    pub events: Vec<StoredEvent>,
    /// The run id of the last row (one string per run, not per event).
    run_id: String,
}

impl<'t> Decoded<'t> {
    /// Decoding `thread` from `from_seq` on, with room for `expected` events.
    pub(crate) fn new(thread: &'t str, from_seq: u64, expected: usize) -> Decoded<'t> {
        Decoded {
            thread,
            from_seq,
            events: Vec::with_capacity(expected.min(1 << 24)),
            run_id: String::new(),
        }
    }

    /// Decodes the events of one row (as [`raw_events`] takes it) from the sequence on;
    /// the error of the first that cannot be decoded.
    pub(crate) fn row(
        &mut self,
        first: u64,
        n: i64,
        run_id: &[u8],
        body: Option<&[u8]>,
    ) -> Option<StoreError> {
        if run_id != self.run_id.as_bytes() {
            self.run_id = String::from_utf8_lossy(run_id).into_owned();
        }
        let at = first.max(self.from_seq);
        let Some(body) = body else {
            return Some(self.corrupt(at, "the stored body is not text".into()));
        };
        let lines = match split(self.thread, at, n, body) {
            Ok(lines) => lines,
            Err(e) => return Some(e),
        };
        for (seq, json) in (first..).zip(lines) {
            if seq < self.from_seq {
                continue;
            }
            match Event::from_json_slice(json) {
                Ok(event) => self.events.push(StoredEvent {
                    seq,
                    run_id: self.run_id.clone(),
                    event,
                }),
                Err(e) => return Some(self.corrupt(seq, e.to_string())),
            }
        }
        None
    }

    fn corrupt(&self, seq: u64, message: String) -> StoreError {
        StoreError::Corrupt {
            thread: self.thread.to_owned(),
            seq,
            message,
        }
    }
}

/// The events' JSON of one row, in order (see [`split`]).
pub(crate) enum Split<'a> {
    /// A row of one event: its body as it is.
    One(Option<&'a [u8]>),
    /// A row of several: its body's lines.
    Lines(std::slice::Split<'a, u8, fn(&u8) -> bool>),
}

impl<'a> Iterator for Split<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        match self {
            Split::One(body) => body.take(),
            Split::Lines(lines) => lines.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pack(parts: &[&str]) -> Vec<Packed> {
        let mut rows = Rows::default();
        for (i, p) in parts.iter().enumerate() {
            // Both ways of adding an event lay rows out alike.
            if i % 2 == 0 {
                rows.push(p.as_bytes());
            } else {
                rows.push_with(|out| out.extend_from_slice(p.as_bytes()));
            }
        }
        assert_eq!(rows.count, parts.len());
        rows.rows
    }

    #[test]
    fn a_batch_is_one_row_and_splits_back() {
        let rows = pack(&["{\"a\":1}", "{\"b\":2}", "{}"]);
        assert_eq!(
            rows,
            [Packed {
                first: 0,
                count: 3,
                body: b"{\"a\":1}\n{\"b\":2}\n{}".to_vec()
            }]
        );
        let back: Vec<&[u8]> = split("t", 5, 3, &rows[0].body).unwrap().collect();
        assert_eq!(back, [&b"{\"a\":1}"[..], b"{\"b\":2}", b"{}"]);
    }

    #[test]
    fn a_body_with_a_newline_is_a_row_alone_and_never_split() {
        let rows = pack(&["1", "2", "{\n}", "3", "4"]);
        let layout: Vec<(usize, usize)> = rows.iter().map(|r| (r.first, r.count)).collect();
        assert_eq!(layout, [(0, 2), (2, 1), (3, 2)]);
        let alone: Vec<&[u8]> = split("t", 3, 1, &rows[1].body).unwrap().collect();
        assert_eq!(alone, [&b"{\n}"[..]]);
    }

    #[test]
    fn rows_stop_growing_at_their_size_limit() {
        let big = "x".repeat(ROW_BYTES / 2);
        let huge = "y".repeat(ROW_BYTES + 1);
        let rows = pack(&[&big, &big, "1", &huge, "2"]);
        let layout: Vec<(usize, usize)> = rows.iter().map(|r| (r.first, r.count)).collect();
        // Two halves and their newline exceed the limit by one byte.
        assert_eq!(layout, [(0, 1), (1, 2), (3, 1), (4, 1)]);
        assert!(
            rows.iter()
                .all(|r| r.body.len() <= ROW_BYTES || r.count == 1)
        );
        assert!(pack(&[]).is_empty());
    }

    #[test]
    fn a_row_whose_lines_do_not_match_its_count_is_corrupt() {
        for (n, body) in [(3, &b"1\n2"[..]), (2, b"1\n2\n3"), (0, b"1"), (-1, b"1")] {
            match split("t", 7, n, body) {
                Err(StoreError::Corrupt {
                    thread,
                    seq,
                    message,
                }) => {
                    assert_eq!((thread.as_str(), seq), ("t", 7));
                    assert!(
                        message.contains(&format!("should hold {n} events")),
                        "{message}"
                    );
                }
                Err(e) => panic!("{n}: {e}"),
                Ok(_) => panic!("{n}: split"),
            }
        }
    }
}
