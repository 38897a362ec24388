//! The interrupt contract's checks of a run's `resume` against the interrupts left open
//! (interrupts.md §4–§7), and interrupt expiry: one definition for the client's gate and
//! the server's check.
//!
//! Public through [`crate::interrupt`].

use crate::input::{ResumeEntry, ResumeStatus};
use crate::interrupt::Interrupt;
use std::time::SystemTime;

/// Whether `interrupt` has expired at `now_ms` (Unix milliseconds); see
/// [`Interrupt::is_expired`].
pub(crate) fn is_expired(interrupt: &Interrupt, now_ms: i64) -> bool {
    interrupt.expires_at_ms().is_some_and(|at| at <= now_ms)
}

/// The answer `resume` gives the interrupt `id`: the last entry naming it.
///
/// ```
/// use aguikit_core::ResumeEntry;
/// use aguikit_core::interrupt::answer_for;
/// use serde_json::json;
/// let resume = [ResumeEntry::resolved("a", json!(1)), ResumeEntry::cancelled("a")];
/// assert_eq!(answer_for(&resume, "a"), Some(&resume[1]));
/// assert_eq!(answer_for(&resume, "b"), None);
/// ```
pub fn answer_for<'a>(resume: &'a [ResumeEntry], id: &str) -> Option<&'a ResumeEntry> {
    resume.iter().rev().find(|e| e.interrupt_id == id)
}

/// What a `resume` gets wrong against the open interrupts, each list in order: the check
/// the client makes before it sends a resume and the server makes when it receives one.
///
/// ```
/// use aguikit_core::interrupt::ResumeCheck;
/// use aguikit_core::{Interrupt, ResumeEntry};
/// use serde_json::json;
/// use std::time::SystemTime;
///
/// let mut late = Interrupt::new("late", "confirmation");
/// late.expires_at = Some("2000-01-01T00:00:00Z".into());
/// let open = [Interrupt::new("a", "confirmation"), late];
/// let resume = [ResumeEntry::resolved("late", json!(true)), ResumeEntry::cancelled("zz")];
/// let check = ResumeCheck::new(&open, &resume, SystemTime::now());
/// assert_eq!(check.missing, ["a"]);
/// assert_eq!(check.unknown, ["zz"]);
/// assert_eq!(check.expired, ["late"]);
/// assert!(!check.is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResumeCheck {
    /// Open interrupts the resume does not answer.
    pub missing: Vec<String>,
    /// Resume entries naming no open interrupt (in entry order).
    pub unknown: Vec<String>,
    /// Expired open interrupts whose answer ([`answer_for`]) is anything but `cancelled`.
    pub expired: Vec<String>,
}

impl ResumeCheck {
    /// Checks `resume` against `open` at `now`.
    pub fn new(open: &[Interrupt], resume: &[ResumeEntry], now: SystemTime) -> ResumeCheck {
        let now_ms = crate::time::unix_ms(now);
        let missing = open
            .iter()
            .filter(|i| answer_for(resume, &i.id).is_none())
            .map(|i| i.id.clone())
            .collect();
        let unknown = resume
            .iter()
            .filter(|e| !open.iter().any(|i| i.id == e.interrupt_id))
            .map(|e| e.interrupt_id.clone())
            .collect();
        let expired = open
            .iter()
            .filter(|i| {
                is_expired(i, now_ms)
                    && answer_for(resume, &i.id)
                        .is_some_and(|e| e.status != ResumeStatus::Cancelled)
            })
            .map(|i| i.id.clone())
            .collect();
        ResumeCheck {
            missing,
            unknown,
            expired,
        }
    }

    /// Whether the resume answers every open interrupt, names no other, and only cancels
    /// the expired ones.
    pub fn is_ok(&self) -> bool {
        self.missing.is_empty() && self.unknown.is_empty() && self.expired.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::{Duration, UNIX_EPOCH};

    fn at(ms: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(ms)
    }

    fn expiring(id: &str, at: &str) -> Interrupt {
        let mut i = Interrupt::new(id, "r");
        i.expires_at = Some(at.into());
        i
    }

    #[test]
    fn expiry() {
        let mut i = Interrupt::new("i", "r");
        assert!(!is_expired(&i, i64::MAX));
        i.expires_at = Some("not a date".into());
        assert!(!is_expired(&i, i64::MAX));
        i.expires_at = Some("1970-01-01T00:00:01Z".into());
        assert!(!is_expired(&i, 999));
        assert!(is_expired(&i, 1000));
        // Offsets the server's reader did not know still expire.
        let i = expiring("j", "1970-01-01T01:00:01+0100");
        assert!(is_expired(&i, 1000));
        assert!(!is_expired(&i, 999));
    }

    #[test]
    fn the_last_answer_counts() {
        let open = [expiring("a", "1970-01-01")];
        let twice = [
            ResumeEntry::resolved("a", json!(1)),
            ResumeEntry::cancelled("a"),
        ];
        assert!(ResumeCheck::new(&open, &twice, at(10)).is_ok());
        assert_eq!(answer_for(&twice, "a"), Some(&twice[1]));
        let check = ResumeCheck::new(&open, &[ResumeEntry::resolved("a", json!(1))], at(10));
        assert_eq!(check.expired, ["a"]);
        assert!(check.missing.is_empty() && check.unknown.is_empty());
    }

    #[test]
    fn nothing_open() {
        assert!(ResumeCheck::new(&[], &[], at(0)).is_ok());
        let check = ResumeCheck::new(&[], &[ResumeEntry::cancelled("x")], at(0));
        assert_eq!(check.unknown, ["x"]);
        assert_eq!(
            check,
            ResumeCheck {
                unknown: vec!["x".into()],
                ..ResumeCheck::default()
            }
        );
    }
}
