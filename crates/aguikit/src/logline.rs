//! The text log line without colours: what `tracing_subscriber`'s full format writes when
//! it does not colour (`2026-12-05T05:01:02.123456Z  INFO agui_run{thread_id=t run_id=r}:
//! aguikit_server::body: run ended outcome="finished" events=26`), written directly.
//!
//! The stock formatter paints every field name, `=` and brace through `nu_ansi_term` even
//! when colours are off, and formats the clock through `core::fmt`: with the run's span and
//! its "run ended" line, about 8% of the server's instructions per run of the demo agent
//! (callgrind, `agui serve --store memory` under `agui load`). A terminal keeps the stock
//! coloured formatter.

use std::fmt::{self, Write};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// Formats span and event fields as `name=value`, separated by spaces; the `message` field
/// as its bare text. Strings are quoted and escaped as `{:?}` does, other values as their
/// `Debug` (a `%` value: its `Display`).
#[derive(Debug, Clone, Copy, Default)]
pub struct PlainFields;

impl<'w> FormatFields<'w> for PlainFields {
    fn format_fields<R: RecordFields>(&self, writer: Writer<'w>, fields: R) -> fmt::Result {
        let mut visitor = FieldWriter {
            out: writer,
            first: true,
            result: Ok(()),
        };
        fields.record(&mut visitor);
        visitor.result
    }
}

struct FieldWriter<'w> {
    out: Writer<'w>,
    first: bool,
    result: fmt::Result,
}

impl FieldWriter<'_> {
    /// Starts a field (the space before every one but the first); `None` for a field that
    /// is not written (the `log` crate's metadata).
    fn start(&mut self, field: &Field) -> Option<&'static str> {
        let name = field.name();
        if self.result.is_err() || name.starts_with("log.") {
            return None;
        }
        if !std::mem::take(&mut self.first) {
            self.result = self.out.write_char(' ');
        }
        Some(name.strip_prefix("r#").unwrap_or(name))
    }

    fn named(&mut self, name: &str) {
        if self.result.is_ok() {
            self.result = self
                .out
                .write_str(name)
                .and_then(|()| self.out.write_char('='));
        }
    }
}

impl Visit for FieldWriter<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        let Some(name) = self.start(field) else {
            return;
        };
        if name == "message" {
            self.result = Escaping(&mut self.out).write_str(value);
            return;
        }
        self.named(name);
        if self.result.is_ok() {
            self.result = write_debug_str(&mut self.out, value);
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        let Some(name) = self.start(field) else {
            return;
        };
        self.named(name);
        if self.result.is_ok() {
            self.result = self.out.write_str(itoa::Buffer::new().format(value));
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        let Some(name) = self.start(field) else {
            return;
        };
        self.named(name);
        if self.result.is_ok() {
            self.result = self.out.write_str(itoa::Buffer::new().format(value));
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        let Some(name) = self.start(field) else {
            return;
        };
        self.named(name);
        if self.result.is_ok() {
            self.result = self.out.write_str(if value { "true" } else { "false" });
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let Some(name) = self.start(field) else {
            return;
        };
        if name != "message" {
            self.named(name);
        }
        if self.result.is_ok() {
            // A `%` value (an id a client chose) is written by its `Display`, raw: its
            // control characters are escaped on the way.
            self.result = write!(Escaping(&mut self.out), "{value:?}");
        }
    }
}

/// Writes through to `W`, escaping what could forge or hide a log line: control characters
/// (line breaks, the ESC of terminal sequences, C1 controls), the Unicode line and
/// paragraph separators and the bidirectional overrides, each as `{:?}` escapes it
/// (`\n`, `\u{1b}`). Anything else, and all printable ASCII, is copied as it is.
pub struct Escaping<'a, W: Write>(pub &'a mut W);

/// Whether `c` is escaped in a text log line.
fn forges(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

impl<W: Write> Write for Escaping<'_, W> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // Printable ASCII throughout: as it is, at once.
        if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
            return self.0.write_str(s);
        }
        let mut start = 0;
        for (i, c) in s.char_indices() {
            if forges(c) {
                self.0.write_str(&s[start..i])?;
                for e in c.escape_debug() {
                    self.0.write_char(e)?;
                }
                start = i + c.len_utf8();
            }
        }
        self.0.write_str(&s[start..])
    }
}

/// `value` as `{:?}` writes it: quoted, with quotes, backslashes and control characters
/// escaped. Printable ASCII without either is copied as it is.
fn write_debug_str(out: &mut impl Write, value: &str) -> fmt::Result {
    let plain = value
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\');
    if plain {
        out.write_char('"')?;
        out.write_str(value)?;
        out.write_char('"')
    } else {
        write!(out, "{value:?}")
    }
}

/// The whole line: the time (RFC 3339, UTC, microseconds), the level right-aligned in five
/// columns, the spans from the root (`name{fields}:` each), the target and the fields.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlainLine;

impl<S, N> FormatEvent<S, N> for PlainLine
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut time = [0u8; 27];
        writer.write_str(rfc3339_micros(std::time::SystemTime::now(), &mut time))?;
        let meta = event.metadata();
        writer.write_char(' ')?;
        writer.write_str(match *meta.level() {
            tracing::Level::TRACE => "TRACE",
            tracing::Level::DEBUG => "DEBUG",
            tracing::Level::INFO => " INFO",
            tracing::Level::WARN => " WARN",
            tracing::Level::ERROR => "ERROR",
        })?;
        writer.write_char(' ')?;
        let mut spans = false;
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                spans = true;
                writer.write_str(span.name())?;
                let extensions = span.extensions();
                if let Some(fields) = extensions.get::<FormattedFields<N>>()
                    && !fields.is_empty()
                {
                    writer.write_char('{')?;
                    writer.write_str(fields)?;
                    writer.write_char('}')?;
                }
                writer.write_char(':')?;
            }
        }
        if spans {
            writer.write_char(' ')?;
        }
        writer.write_str(meta.target())?;
        writer.write_str(": ")?;
        ctx.format_fields(writer.by_ref(), event)?;
        writer.write_char('\n')
    }
}

/// `at` as `YYYY-MM-DDTHH:MM:SS.uuuuuuZ` (UTC) in `buf`; a time before 1970 as 1970's first
/// microsecond.
pub(crate) fn rfc3339_micros(at: std::time::SystemTime, buf: &mut [u8; 27]) -> &str {
    let since = at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (year, month, day) = civil_from_days(secs / 86_400);
    let of_day = secs % 86_400;
    let mut put = |at: usize, width: usize, mut value: u64| {
        for i in (at..at + width).rev() {
            buf[i] = b'0' + (value % 10) as u8;
            value /= 10;
        }
    };
    put(0, 4, year);
    put(5, 2, month);
    put(8, 2, day);
    put(11, 2, of_day / 3600);
    put(14, 2, of_day / 60 % 60);
    put(17, 2, of_day % 60);
    put(20, 6, u64::from(since.subsec_micros()));
    for (i, c) in [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'.'),
        (26, b'Z'),
    ] {
        buf[i] = c;
    }
    // Only ASCII digits and separators were written.
    std::str::from_utf8(buf).unwrap_or("")
}

/// The proleptic Gregorian (year, month, day) of `days` since 1970-01-01, by eras of
/// 400 years (146,097 days), each counted from the March 1st that starts it.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468; // days from 0000-03-01 to 1970-01-01
    let era = z / 146_097;
    let doe = z % 146_097; // day of the era, 0..=146_096
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365; // 0..=399
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of the March-based year
    let mp = (5 * doy + 2) / 153; // month counted from March, 0..=11
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = era * 400 + yoe + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn at(secs: u64, micros: u64) -> String {
        let mut buf = [0u8; 27];
        rfc3339_micros(
            UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_micros(micros),
            &mut buf,
        )
        .to_owned()
    }

    #[test]
    fn times_are_rfc3339_with_microseconds() {
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(at(951_782_400, 7), "2000-02-29T00:00:00.000007Z");
        assert_eq!(at(1_709_251_199, 999_999), "2024-02-29T23:59:59.999999Z");
        assert_eq!(at(1_796_448_062, 123_456), "2026-12-05T05:21:02.123456Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000000Z");
        let mut buf = [0u8; 27];
        assert_eq!(
            rfc3339_micros(UNIX_EPOCH - Duration::from_secs(5), &mut buf),
            "1970-01-01T00:00:00.000000Z"
        );
    }

    #[test]
    fn every_day_follows_the_one_before() {
        // Four centuries of days (a whole Gregorian cycle, leap centuries included).
        let mut last = civil_from_days(0);
        assert_eq!(last, (1970, 1, 1));
        for d in 1..146_097 + 365 * 30 {
            let next = civil_from_days(d);
            let (y, m, day) = last;
            let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
            let len = [
                31,
                if leap { 29 } else { 28 },
                31,
                30,
                31,
                30,
                31,
                31,
                30,
                31,
                30,
                31,
            ][m as usize - 1];
            let expected = if day < len {
                (y, m, day + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
            assert_eq!(next, expected, "day {d}");
            last = next;
        }
    }

    #[test]
    fn strings_are_written_as_debug_writes_them() {
        for s in [
            "",
            "plain",
            "a \"quote\"",
            "back\\slash",
            "tab\there",
            "é ü",
            "\u{7f}",
            "nl\n",
        ] {
            let mut out = String::new();
            write_debug_str(&mut out, s).unwrap();
            assert_eq!(out, format!("{s:?}"));
        }
    }

    #[test]
    fn control_characters_are_escaped() {
        let mut out = String::new();
        Escaping(&mut out)
            .write_str("t\n2026-01-01T00:00:00Z  INFO fake\u{1b}[31m\r\u{202e}é\u{85}")
            .unwrap();
        assert_eq!(
            out,
            "t\\n2026-01-01T00:00:00Z  INFO fake\\u{1b}[31m\\r\\u{202e}é\\u{85}"
        );
        assert!(!out.chars().any(forges));
    }

    /// The lines match what the stock formatter writes without colours.
    #[test]
    fn lines_match_the_stock_format() {
        use std::sync::{Arc, Mutex};
        use tracing_subscriber::fmt::MakeWriter;

        #[derive(Clone, Default)]
        struct Buf(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Buf {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        impl<'a> MakeWriter<'a> for Buf {
            type Writer = Buf;
            fn make_writer(&'a self) -> Buf {
                self.clone()
            }
        }
        fn emit() {
            let span =
                tracing::info_span!("agui_run", thread_id = %"t-1", run_id = "r \"1\"", n = 3u64);
            let _g = span.enter();
            let inner = tracing::info_span!("inner");
            let _i = inner.enter();
            tracing::info!(
                outcome = "finished",
                events = 26u64,
                delta = -4i64,
                ok = true,
                ratio = 0.5f64,
                reason = "",
                r#type = "x",
                shown = %"display",
                "run ended"
            );
            tracing::warn!("only a message with {} args", 2);
            tracing::error!(e = ?Some("dbg"), "a message");
        }
        let stock = Buf::default();
        let ours = Buf::default();
        let s = tracing_subscriber::fmt()
            .with_writer(stock.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(s, emit);
        let o = tracing_subscriber::fmt()
            .with_writer(ours.clone())
            .fmt_fields(PlainFields)
            .event_format(PlainLine)
            .finish();
        tracing::subscriber::with_default(o, emit);
        // The times differ: compare after them.
        let strip = |b: &Buf| {
            String::from_utf8(b.0.lock().unwrap().clone())
                .unwrap()
                .lines()
                .map(|l| l[27..].to_owned())
                .collect::<Vec<_>>()
        };
        let (stock, ours) = (strip(&stock), strip(&ours));
        assert_eq!(stock.len(), 3);
        assert_eq!(ours, stock);
    }
}
