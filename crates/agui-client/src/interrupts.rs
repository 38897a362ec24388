//! The interrupt contract on the client side (interrupts.md §4–§6): the gate before a run on
//! a thread with pending interrupts, expiry, and building the `resume` array.
//!
//! ```
//! use agui_client::interrupts::{build_resume, check_gate};
//! use agui_core::{Interrupt, ResumeEntry};
//! use serde_json::json;
//! let pending = vec![Interrupt::new("i1", "tool_call"), Interrupt::new("i2", "confirmation")];
//! // Answers in any order come back in interrupt order.
//! let resume = build_resume(
//!     &pending,
//!     vec![ResumeEntry::cancelled("i2"), ResumeEntry::resolved("i1", json!({"approved": true}))],
//! )
//! .unwrap();
//! assert_eq!(resume[0].interrupt_id, "i1");
//! assert!(check_gate(&pending, &resume, std::time::SystemTime::now()).is_ok());
//! // Leaving one out is refused before anything is sent.
//! assert!(build_resume(&pending, vec![ResumeEntry::cancelled("i2")]).is_err());
//! ```

use crate::error::ClientError;
use agui_core::{Interrupt, ResumeEntry, ResumeStatus};
use std::collections::HashSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Whether an interrupt has expired at `now` (I7): never when it has no `expiresAt`, nor when
/// `expiresAt` cannot be read as an ISO 8601 date or date-time; otherwise when the time has
/// come.
///
/// A date-time without an offset is read as UTC (JavaScript reads it as local time).
///
/// ```
/// use agui_client::interrupts::is_expired;
/// use agui_core::Interrupt;
/// use std::time::{Duration, UNIX_EPOCH};
/// let mut i = Interrupt::new("i1", "confirmation");
/// i.expires_at = Some("2030-01-01T00:00:00Z".into());
/// assert!(!is_expired(&i, UNIX_EPOCH + Duration::from_secs(1_800_000_000)));
/// assert!(is_expired(&i, UNIX_EPOCH + Duration::from_secs(1_900_000_000)));
/// ```
pub fn is_expired(interrupt: &Interrupt, now: SystemTime) -> bool {
    interrupt
        .expires_at
        .as_deref()
        .and_then(parse_iso8601)
        .is_some_and(|at| at <= now)
}

/// The gate before a run (I4): with interrupts pending, `resume` must answer every one of
/// them, and an expired one only with `cancelled`. Nothing is checked when none is pending.
pub fn check_gate(
    pending: &[Interrupt],
    resume: &[ResumeEntry],
    now: SystemTime,
) -> Result<(), ClientError> {
    if pending.is_empty() {
        return Ok(());
    }
    let missing: Vec<String> = pending
        .iter()
        .filter(|i| !resume.iter().any(|r| r.interrupt_id == i.id))
        .map(|i| i.id.clone())
        .collect();
    if !missing.is_empty() {
        return Err(ClientError::UnansweredInterrupts { ids: missing });
    }
    for i in pending.iter().filter(|i| is_expired(i, now)) {
        let cancelled = resume
            .iter()
            .filter(|r| r.interrupt_id == i.id)
            .all(|r| r.status == ResumeStatus::Cancelled);
        if !cancelled {
            return Err(ClientError::InterruptExpired {
                id: i.id.clone(),
                expires_at: i.expires_at.clone().unwrap_or_default(),
            });
        }
    }
    Ok(())
}

/// Builds the `resume` array answering `interrupts` (the reference's `buildResumeArray`,
/// stricter): every interrupt needs exactly one answer, answers must name known interrupts,
/// the result is in interrupt order, and a `cancelled` answer carries no payload.
pub fn build_resume(
    interrupts: &[Interrupt],
    answers: Vec<ResumeEntry>,
) -> Result<Vec<ResumeEntry>, ClientError> {
    let known: HashSet<&str> = interrupts.iter().map(|i| i.id.as_str()).collect();
    let mut seen = HashSet::new();
    let mut unknown = Vec::new();
    for a in &answers {
        if !known.contains(a.interrupt_id.as_str()) {
            unknown.push(a.interrupt_id.clone());
        } else if !seen.insert(a.interrupt_id.as_str()) {
            return Err(ClientError::DuplicateAnswer {
                id: a.interrupt_id.clone(),
            });
        }
    }
    let missing: Vec<String> = interrupts
        .iter()
        .filter(|i| !seen.contains(i.id.as_str()))
        .map(|i| i.id.clone())
        .collect();
    if !missing.is_empty() {
        return Err(ClientError::UnansweredInterrupts { ids: missing });
    }
    if !unknown.is_empty() {
        return Err(ClientError::UnknownInterrupts { ids: unknown });
    }
    let mut answers: Vec<Option<ResumeEntry>> = answers.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(interrupts.len());
    for i in interrupts {
        let slot = answers
            .iter_mut()
            .find(|a| a.as_ref().is_some_and(|a| a.interrupt_id == i.id))
            .and_then(Option::take);
        if let Some(mut entry) = slot {
            if entry.status == ResumeStatus::Cancelled {
                entry.payload = None;
            }
            out.push(entry);
        }
    }
    Ok(out)
}

/// Reads an ISO 8601 date (`2030-01-31`, UTC) or date-time (`2030-01-31T12:00`,
/// `…:30`, `…:30.250`, then `Z`, `±hh:mm` or nothing for UTC), the forms `Date.parse`
/// is specified to accept.
pub fn parse_iso8601(s: &str) -> Option<SystemTime> {
    let s = s.trim();
    let (date, time) = match s.find(['T', 't', ' ']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mut parts = date.split('-');
    let year: i64 = digits(parts.next()?, 4)?;
    let month: i64 = parts.next().map(|m| digits(m, 2)).unwrap_or(Some(1))?;
    let day: i64 = parts.next().map(|d| digits(d, 2)).unwrap_or(Some(1))?;
    if parts.next().is_some() || !(1..=12).contains(&month) || day < 1 || day > days_in(year, month)
    {
        return None;
    }
    let mut seconds = days_from_civil(year, month, day) * 86_400;
    let mut millis = 0i64;
    if let Some(time) = time {
        let (clock, offset_secs) = split_offset(time)?;
        let mut fields = clock.split(':');
        let h: i64 = digits(fields.next()?, 2)?;
        let m: i64 = digits(fields.next()?, 2)?;
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
    let total_ms = seconds.checked_mul(1000)?.checked_add(millis)?;
    if total_ms >= 0 {
        UNIX_EPOCH.checked_add(Duration::from_millis(total_ms as u64))
    } else {
        UNIX_EPOCH.checked_sub(Duration::from_millis(total_ms.unsigned_abs()))
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

/// Days since 1970-01-01 of a proleptic Gregorian date.
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
    use serde_json::json;

    fn secs(s: &str) -> Option<i64> {
        parse_iso8601(s).map(|t| match t.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_millis() as i64,
            Err(e) => -(e.duration().as_millis() as i64),
        })
    }

    #[test]
    fn iso_dates() {
        assert_eq!(secs("1970-01-01"), Some(0));
        assert_eq!(secs("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(secs("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(secs("1969-12-31T23:00:00-01:00"), Some(0));
        assert_eq!(secs("2000-02-29T12:30:15.5Z"), Some(951_827_415_500));
        assert_eq!(secs("2024-03-01T00:00"), Some(1_709_251_200_000));
        assert_eq!(secs("2024"), Some(1_704_067_200_000));
        assert_eq!(secs("1969-12-31T23:59:59.999Z"), Some(-1));
        for bad in [
            "",
            "soon",
            "2023-02-29",
            "2024-13-01",
            "2024-01-01T25:00Z",
            "2024-1-1",
        ] {
            assert_eq!(secs(bad), None, "{bad}");
        }
    }

    #[test]
    fn expiry() {
        let mut i = Interrupt::new("i", "r");
        let now = SystemTime::now();
        assert!(!is_expired(&i, now));
        i.expires_at = Some("not a date".into());
        assert!(!is_expired(&i, now));
        i.expires_at = Some("2000-01-01T00:00:00Z".into());
        assert!(is_expired(&i, now));
    }

    #[test]
    fn gate_checks_coverage_then_expiry() {
        let mut old = Interrupt::new("old", "r");
        old.expires_at = Some("2000-01-01".into());
        let pending = vec![Interrupt::new("a", "r"), old];
        let now = SystemTime::now();
        assert!(matches!(
            check_gate(&pending, &[ResumeEntry::resolved("a", json!(1))], now),
            Err(ClientError::UnansweredInterrupts { ids }) if ids == ["old"]
        ));
        assert!(matches!(
            check_gate(
                &pending,
                &[ResumeEntry::resolved("a", json!(1)), ResumeEntry::resolved("old", json!(1))],
                now
            ),
            Err(ClientError::InterruptExpired { id, .. }) if id == "old"
        ));
        assert!(
            check_gate(
                &pending,
                &[
                    ResumeEntry::resolved("a", json!(1)),
                    ResumeEntry::cancelled("old")
                ],
                now
            )
            .is_ok()
        );
        assert!(check_gate(&[], &[], now).is_ok());
    }

    #[test]
    fn build_resume_orders_and_checks() {
        let pending = vec![Interrupt::new("a", "r"), Interrupt::new("b", "r")];
        let mut cancelled_with_payload = ResumeEntry::cancelled("a");
        cancelled_with_payload.payload = Some(json!("dropped"));
        let out = build_resume(
            &pending,
            vec![ResumeEntry::resolved("b", json!(2)), cancelled_with_payload],
        )
        .unwrap();
        assert_eq!(out[0].interrupt_id, "a");
        assert_eq!(out[0].payload, None);
        assert_eq!(out[1].payload, Some(json!(2)));
        assert!(matches!(
            build_resume(
                &pending,
                vec![
                    ResumeEntry::cancelled("a"),
                    ResumeEntry::cancelled("b"),
                    ResumeEntry::cancelled("zz")
                ]
            ),
            Err(ClientError::UnknownInterrupts { ids }) if ids == ["zz"]
        ));
        assert!(matches!(
            build_resume(
                &pending,
                vec![ResumeEntry::cancelled("a"), ResumeEntry::cancelled("a")]
            ),
            Err(ClientError::DuplicateAnswer { .. })
        ));
    }
}
