//! Reading `Interrupt.expiresAt`: the ISO 8601 forms JavaScript's `Date.parse` reads.

/// Milliseconds since the Unix epoch of an ISO 8601 date or date-time, or `None` when the
/// text is not one. Accepted: `YYYY-MM-DD` (UTC), `YYYY-MM-DDTHH:MM[:SS[.fff]]` followed by
/// `Z` or `±HH:MM` (a date-time without an offset is read as UTC here; JavaScript would use
/// local time). As in the reference, an unreadable value never expires.
pub(crate) fn parse_iso8601_ms(s: &str) -> Option<i64> {
    let b = s.trim().as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let digits = b.get(r)?;
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(digits).ok()?.parse().ok()
    };
    let year = num(0..4)?;
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let month = num(5..7)?;
    let day = num(8..10)?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    if b.len() == 10 {
        return Some(days * 86_400_000);
    }
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) || b.get(13) != Some(&b':') {
        return None;
    }
    let hour = num(11..13)?;
    let minute = num(14..16)?;
    let mut i = 16;
    let mut second = 0;
    let mut millis = 0;
    if b.get(i) == Some(&b':') {
        second = num(i + 1..i + 3)?;
        i += 3;
        if b.get(i) == Some(&b'.') {
            let start = i + 1;
            let mut end = start;
            while b.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
            if end == start {
                return None;
            }
            let frac = &s.trim()[start..end.min(start + 3)];
            millis = frac.parse::<i64>().ok()? * 10_i64.pow(3 - frac.len() as u32);
            i = end;
        }
    }
    if hour > 24 || minute > 59 || second > 59 {
        return None;
    }
    let offset_min = match b.get(i) {
        None => 0,
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if b.len() == i + 6 && b[i + 3] == b':' => {
            let m = num(i + 1..i + 3)? * 60 + num(i + 4..i + 6)?;
            if *sign == b'+' { m } else { -m }
        }
        _ => return None,
    };
    Some(
        days * 86_400_000
            + hour * 3_600_000
            + (minute - offset_min) * 60_000
            + second * 1000
            + millis,
    )
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
    use super::parse_iso8601_ms;

    #[test]
    fn reads_the_common_forms() {
        assert_eq!(parse_iso8601_ms("1970-01-01"), Some(0));
        assert_eq!(parse_iso8601_ms("1970-01-01T00:00:01Z"), Some(1000));
        assert_eq!(
            parse_iso8601_ms("2026-10-01T12:00:00Z"),
            Some(1_790_856_000_000)
        );
        assert_eq!(
            parse_iso8601_ms("2026-10-01T12:00:00.5Z"),
            Some(1_790_856_000_500)
        );
        assert_eq!(
            parse_iso8601_ms("2026-10-01T14:00:00+02:00"),
            Some(1_790_856_000_000)
        );
        assert_eq!(
            parse_iso8601_ms("2026-10-01T12:00Z"),
            Some(1_790_856_000_000)
        );
        assert_eq!(
            parse_iso8601_ms("2000-02-29T00:00:00.123456Z"),
            Some(951_782_400_123)
        );
    }

    #[test]
    fn rejects_what_is_not_a_date() {
        for s in [
            "",
            "soon",
            "2026-13-01",
            "2026-10-01T25:00:00Z",
            "2026-10-01T12:00:00Zjunk",
            "20261001",
        ] {
            assert_eq!(parse_iso8601_ms(s), None, "{s}");
        }
    }
}
