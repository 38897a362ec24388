//! Open interrupts per thread, and the check of a run's `resume` against them.

use crate::RunErrorCode;
use aguikit_core::interrupt::{ResumeCheck, answer_for};
use aguikit_core::{Interrupt, ResumeEntry};
use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

/// An open interrupt of the thread and the answer this run's `resume` gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Resumed {
    /// The interrupt, as the run that raised it sent it.
    pub interrupt: Interrupt,
    /// The answer.
    pub entry: ResumeEntry,
}

/// Why a `resume` was refused: the run ends with `RUN_ERROR` carrying [`ResumeError::code`]
/// (interrupts.md §6, C2–C8).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ResumeError {
    /// For people.
    pub message: String,
    /// Open interrupts the resume does not answer.
    pub missing: Vec<String>,
    /// Resume entries naming no open interrupt.
    pub unknown: Vec<String>,
    /// Expired interrupts answered with anything but `cancelled`.
    pub expired: Vec<String>,
    /// The stable `RUN_ERROR` code: `resume_missing` (interrupts are open and the input has
    /// no resume, C4), `resume_unknown_interrupt` (an entry names no open interrupt, C2),
    /// `resume_incomplete` (an open interrupt is not answered, C3), `resume_expired` (an
    /// expired interrupt answered with anything but `cancelled`, C7); the first that
    /// applies in that order.
    pub kind: &'static str,
}

impl ResumeError {
    /// The stable `RUN_ERROR` code (see [`ResumeError::kind`]).
    pub fn code(&self) -> &'static str {
        self.kind
    }
}

/// Remembers the open interrupts of the most recent `max_threads` threads.
pub(crate) struct InterruptStore {
    inner: Mutex<Store>,
    max_threads: usize,
}

#[derive(Default)]
struct Store {
    open: HashMap<String, Vec<Interrupt>>,
    order: VecDeque<String>,
}

/// The key of a thread in the open-interrupt map: the thread id within its caller's
/// namespace, as the store names threads (principals never see each other's interrupts,
/// store or none).
pub(crate) fn key(principal: &crate::Principal, thread_id: &str) -> String {
    if principal.is_anonymous() {
        thread_id.to_owned()
    } else {
        // A unit separator cannot be in a principal's name (a tokens-file word).
        format!("{}\u{1f}{thread_id}", principal.name())
    }
}

impl InterruptStore {
    pub(crate) fn new(max_threads: usize) -> Self {
        InterruptStore {
            inner: Mutex::new(Store::default()),
            max_threads,
        }
    }

    /// The open interrupts of a thread.
    #[cfg(test)]
    pub(crate) fn open(&self, thread_id: &str) -> Vec<Interrupt> {
        let g = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        g.open.get(thread_id).cloned().unwrap_or_default()
    }

    /// Records what the thread's latest `RUN_FINISHED` left open (empty: nothing); `key`:
    /// see [`key`].
    pub(crate) fn set(&self, key: &str, interrupts: Vec<Interrupt>) {
        let mut g = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if interrupts.is_empty() {
            if g.open.remove(key).is_some() {
                g.order.retain(|t| t != key);
            }
            return;
        }
        if g.open.insert(key.to_owned(), interrupts).is_none() {
            g.order.push_back(key.to_owned());
        }
        while g.open.len() > self.max_threads {
            let Some(oldest) = g.order.pop_front() else {
                break;
            };
            g.open.remove(&oldest);
        }
    }

    /// Checks `resume` against the thread's open interrupts (the reference client's gate,
    /// done on the server): every open interrupt must be answered, no entry may name
    /// another id, and an expired interrupt may only be cancelled. With nothing open the
    /// resume passes unchecked (the agent sees it in the input).
    pub(crate) fn check(
        &self,
        key: &str,
        thread_id: &str,
        resume: &[ResumeEntry],
        now: std::time::SystemTime,
    ) -> Result<Vec<Resumed>, ResumeError> {
        let open = {
            let g = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
            match g.open.get(key) {
                Some(open) => open.clone(),
                None if resume.is_empty() => return Ok(Vec::new()),
                // Nothing is open: every entry names an unknown interrupt (C2).
                None => Vec::new(),
            }
        };
        let ResumeCheck {
            missing,
            unknown,
            expired,
        } = ResumeCheck::new(&open, resume, now);
        if missing.is_empty() && unknown.is_empty() && expired.is_empty() {
            return Ok(open
                .into_iter()
                .filter_map(|i| {
                    let entry = answer_for(resume, &i.id)?.clone();
                    Some(Resumed {
                        interrupt: i,
                        entry,
                    })
                })
                .collect());
        }
        let mut parts = Vec::new();
        if !missing.is_empty() {
            parts.push(format!(
                "Thread {thread_id} has {} pending interrupt(s) not addressed by resume: {}",
                missing.len(),
                missing.join(", ")
            ));
        }
        if !unknown.is_empty() {
            parts.push(format!(
                "resume names interrupt(s) that are not open on thread {thread_id}: {}",
                unknown.join(", ")
            ));
        }
        if !expired.is_empty() {
            parts.push(format!(
                "interrupt(s) expired and can only be cancelled: {}",
                expired.join(", ")
            ));
        }
        let kind = if resume.is_empty() {
            parts = vec![format!(
                "Thread {thread_id} has {} pending interrupt(s) and this run sends no resume: {}",
                missing.len(),
                missing.join(", ")
            )];
            RunErrorCode::ResumeMissing.as_str()
        } else if !unknown.is_empty() {
            RunErrorCode::ResumeUnknownInterrupt.as_str()
        } else if !missing.is_empty() {
            RunErrorCode::ResumeIncomplete.as_str()
        } else {
            RunErrorCode::ResumeExpired.as_str()
        };
        Err(ResumeError {
            kind,
            message: parts.join("; "),
            missing,
            unknown,
            expired,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> std::time::SystemTime {
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms)
    }
    use serde_json::json;

    fn store_with(ids: &[&str]) -> InterruptStore {
        let s = InterruptStore::new(10);
        s.set(
            "t",
            ids.iter()
                .map(|id| Interrupt::new(*id, "confirmation"))
                .collect(),
        );
        s
    }

    #[test]
    fn every_open_interrupt_must_be_answered() {
        let s = store_with(&["a", "b"]);
        let err = s
            .check("t", "t", &[ResumeEntry::resolved("a", json!(true))], at(0))
            .unwrap_err();
        assert_eq!(err.missing, ["b"]);
        assert!(
            err.message
                .contains("1 pending interrupt(s) not addressed by resume: b")
        );
        let ok = s
            .check(
                "t",
                "t",
                &[
                    ResumeEntry::cancelled("b"),
                    ResumeEntry::resolved("a", json!(1)),
                ],
                at(0),
            )
            .unwrap();
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[0].interrupt.id, "a");
        assert_eq!(ok[0].entry.payload, Some(json!(1)));
    }

    #[test]
    fn unknown_ids_are_refused_when_something_is_open() {
        let s = store_with(&["a"]);
        let err = s
            .check(
                "t",
                "t",
                &[
                    ResumeEntry::resolved("a", json!(1)),
                    ResumeEntry::cancelled("zzz"),
                ],
                at(0),
            )
            .unwrap_err();
        assert_eq!(err.unknown, ["zzz"]);
    }

    #[test]
    fn nothing_open_means_a_resume_names_unknown_interrupts() {
        let s = InterruptStore::new(10);
        // interrupts.md C2/C8: a resume must refer to an open interrupt.
        let err = s
            .check("t", "t", &[ResumeEntry::cancelled("x")], at(0))
            .unwrap_err();
        assert_eq!(err.unknown, ["x"]);
        assert_eq!(err.code(), "resume_unknown_interrupt");
        assert!(s.check("t", "t", &[], at(0)).unwrap().is_empty());
    }

    #[test]
    fn no_resume_at_all_is_refused() {
        let s = store_with(&["a"]);
        let err = s.check("t", "t", &[], at(0)).unwrap_err();
        assert_eq!(err.missing, ["a"]);
        assert_eq!(err.code(), "resume_missing");
        let err = store_with(&["a", "b"])
            .check("t", "t", &[ResumeEntry::cancelled("a")], at(0))
            .unwrap_err();
        assert_eq!(err.code(), "resume_incomplete");
    }

    #[test]
    fn expired_interrupts_may_only_be_cancelled() {
        let s = InterruptStore::new(10);
        let mut i = Interrupt::new("a", "confirmation");
        i.expires_at = Some("1970-01-01T00:00:01Z".into());
        s.set("t", vec![i]);
        let err = s
            .check("t", "t", &[ResumeEntry::resolved("a", json!(1))], at(5000))
            .unwrap_err();
        assert_eq!(err.expired, ["a"]);
        assert_eq!(err.code(), "resume_expired");
        assert!(
            s.check("t", "t", &[ResumeEntry::cancelled("a")], at(5000))
                .is_ok()
        );
        assert!(
            s.check("t", "t", &[ResumeEntry::resolved("a", json!(1))], at(10))
                .is_ok()
        );
    }

    #[test]
    fn bounded_oldest_thread_forgotten() {
        let s = InterruptStore::new(2);
        for t in ["t1", "t2", "t3"] {
            s.set(t, vec![Interrupt::new("i", "r")]);
        }
        assert!(s.open("t1").is_empty());
        assert_eq!(s.open("t3").len(), 1);
        s.set("t3", vec![]);
        assert!(s.open("t3").is_empty());
    }
}
