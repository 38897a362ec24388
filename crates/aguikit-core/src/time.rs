//! ISO 8601 dates and date-times, as `Interrupt.expiresAt` carries them: one reader for the
//! client and the server, so both agree on when an interrupt expires.
//!
//! Accepted (the forms JavaScript's `Date.parse` is specified to read):
//!
//! - a date: `YYYY`, `YYYY-MM` or `YYYY-MM-DD`, read as UTC midnight;
//! - a date-time: the full date, `T` (or `t` or a space), `HH:MM`, optionally `:SS` and a
//!   fraction of any length (milliseconds are kept), then `Z`, an offset `±HH:MM`, `±HHMM`
//!   or `±HH`, or nothing. A date-time without an offset is read as UTC (JavaScript reads
//!   it as local time).
//!
//! Values are checked: the month, the day against the days of that month (leap years
//! included), hours up to 24 (`24:00:00` only), minutes and seconds up to 59, offsets up to
//! `23:59`. Anything else is `None`.
//!
//! Public through [`Interrupt::expires_at_ms`](crate::Interrupt::expires_at_ms) and
//! [`Interrupt::is_expired`](crate::Interrupt::is_expired).

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch of an ISO 8601 date or date-time (see the module
/// documentation for the forms), or `None` when the text is not one.
pub(crate) fn parse_iso8601_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    let (date, time) = match s.find(['T', 't', ' ']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mut parts = date.split('-');
    let year = digits(parts.next()?, 4)?;
    let month = parts.next().map(|m| digits(m, 2)).unwrap_or(Some(1))?;
    let day = parts.next().map(|d| digits(d, 2)).unwrap_or(Some(1))?;
    if parts.next().is_some() || !(1..=12).contains(&month) || day < 1 || day > days_in(year, month)
    {
        return None;
    }
    let mut seconds = days_from_civil(year, month, day) * 86_400;
    let mut millis = 0;
    if let Some(time) = time {
        let (clock, offset_secs) = split_offset(time)?;
        let mut fields = clock.split(':');
        let h = digits(fields.next()?, 2)?;
        let m = digits(fields.next()?, 2)?;
        let (sec, frac) = match fields.next() {
            Some(sec) => match sec.split_once('.') {
                Some((whole, frac)) => (digits(whole, 2)?, Some(frac)),
                None => (digits(sec, 2)?, None),
            },
            None => (0, None),
        };
        if fields.next().is_some()
            || h > 24
            || m > 59
            || sec > 59
            || (h == 24 && (m, sec) != (0, 0))
        {
            return None;
        }
        if let Some(frac) = frac {
            if frac.is_empty() || !frac.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let padded: String = frac.chars().chain("000".chars()).take(3).collect();
            millis = padded.parse().ok()?;
        }
        seconds += h * 3600 + m * 60 + sec - offset_secs;
    }
    seconds.checked_mul(1000)?.checked_add(millis)
}

/// [`parse_iso8601_ms`] as a [`SystemTime`].
#[cfg(test)]
fn parse_iso8601(s: &str) -> Option<SystemTime> {
    use std::time::Duration;
    let ms = parse_iso8601_ms(s)?;
    if ms >= 0 {
        UNIX_EPOCH.checked_add(Duration::from_millis(ms.unsigned_abs()))
    } else {
        UNIX_EPOCH.checked_sub(Duration::from_millis(ms.unsigned_abs()))
    }
}

/// Milliseconds since the Unix epoch of `t` (negative before it, saturating).
pub(crate) fn unix_ms(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
    }
}

/// Splits `12:00:00+02:00` into the clock and the offset in seconds east of UTC.
fn split_offset(time: &str) -> Option<(&str, i64)> {
    if let Some(clock) = time.strip_suffix(['Z', 'z']) {
        return Some((clock, 0));
    }
    match time.rfind(['+', '-']) {
        Some(i) => {
            let sign = if time.as_bytes()[i] == b'-' { -1 } else { 1 };
            let offset = &time[i + 1..];
            let (h, m) = match offset.split_once(':') {
                Some((h, m)) => (digits(h, 2)?, digits(m, 2)?),
                None if offset.len() == 4 => (digits(&offset[..2], 2)?, digits(&offset[2..], 2)?),
                None => (digits(offset, 2)?, 0),
            };
            if h > 23 || m > 59 {
                return None;
            }
            Some((&time[..i], sign * (h * 3600 + m * 60)))
        }
        None => Some((time, 0)),
    }
}

/// `s` as a number when it is exactly `n` ASCII digits.
fn digits(s: &str, n: usize) -> Option<i64> {
    if s.len() == n && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The forms the server's reader accepted (`YYYY-MM-DD`, or a date-time with `Z`,
    /// `±HH:MM` or no offset), with the values it gave.
    #[test]
    fn forms_the_server_read() {
        for (text, want) in [
            ("1970-01-01", Some(0)),
            ("1970-01-01T00:00:01Z", Some(1000)),
            ("2026-10-01T12:00:00Z", Some(1_790_856_000_000)),
            ("2026-10-01T12:00:00.5Z", Some(1_790_856_000_500)),
            ("2026-10-01T14:00:00+02:00", Some(1_790_856_000_000)),
            ("2026-10-01T12:00Z", Some(1_790_856_000_000)),
            ("2000-02-29T00:00:00.123456Z", Some(951_782_400_123)),
            ("2026-10-01t12:00:00z", Some(1_790_856_000_000)),
            ("2026-10-01 12:00:00", Some(1_790_856_000_000)),
            (" 2026-10-01T10:00-02:00 ", Some(1_790_856_000_000)),
        ] {
            assert_eq!(parse_iso8601_ms(text), want, "{text}");
        }
    }

    /// The forms only the client's reader accepted: a year or a month alone, and offsets
    /// `±HHMM` and `±HH`.
    #[test]
    fn forms_the_client_read() {
        for (text, want) in [
            ("1970-01-01T00:00:00Z", Some(0)),
            ("1970-01-01T01:00:00+01:00", Some(0)),
            ("1969-12-31T23:00:00-01:00", Some(0)),
            ("2000-02-29T12:30:15.5Z", Some(951_827_415_500)),
            ("2024-03-01T00:00", Some(1_709_251_200_000)),
            ("2024", Some(1_704_067_200_000)),
            ("2024-03", Some(1_709_251_200_000)),
            ("1969-12-31T23:59:59.999Z", Some(-1)),
            ("2026-10-01T14:00:00+0200", Some(1_790_856_000_000)),
            ("2026-10-01T14:00:00+02", Some(1_790_856_000_000)),
            ("2026-10-01T10:30-0130", Some(1_790_856_000_000)),
        ] {
            assert_eq!(parse_iso8601_ms(text), want, "{text}");
        }
        assert_eq!(
            parse_iso8601_ms("2024-01-02T24:00:00Z"),
            parse_iso8601_ms("2024-01-03")
        );
    }

    #[test]
    fn rejects_what_is_not_a_date() {
        for s in [
            "",
            "soon",
            "not a date",
            "2026-13-01",
            "2024-13-01",
            "2026-10-01T25:00:00Z",
            "2024-01-01T25:00Z",
            "2026-10-01T12:00:00Zjunk",
            "20261001",
            "2024-1-1",
            "2024-01-01T12:00:00.Z",
            "2024-01-01T12:00:00+24:00",
            "2024-01-01T24:30Z",
            "2024-01-01T",
        ] {
            assert_eq!(parse_iso8601_ms(s), None, "{s}");
        }
    }

    /// Days are checked against their month, leap years included (the server's reader let
    /// 31 days through for every month).
    #[test]
    fn days_per_month() {
        for bad in [
            "2023-02-29",
            "2100-02-29",
            "2024-04-31",
            "2024-06-31T00:00Z",
        ] {
            assert_eq!(parse_iso8601_ms(bad), None, "{bad}");
        }
        for good in [
            "2024-02-29",
            "2000-02-29",
            "2024-01-31",
            "2024-12-31T23:59:59Z",
        ] {
            assert!(parse_iso8601_ms(good).is_some(), "{good}");
        }
    }

    #[test]
    fn system_time_and_back() {
        for s in [
            "1970-01-01",
            "1969-12-31T23:59:59.999Z",
            "2030-01-01T00:00:00Z",
        ] {
            let t = parse_iso8601(s).unwrap();
            assert_eq!(Some(unix_ms(t)), parse_iso8601_ms(s), "{s}");
        }
        assert_eq!(
            parse_iso8601("1970-01-01T00:00:01Z"),
            Some(UNIX_EPOCH + Duration::from_secs(1))
        );
    }
}
