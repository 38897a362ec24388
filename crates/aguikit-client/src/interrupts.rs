//! The interrupt contract on the client side (interrupts.md §4–§6): the gate before a run on
//! a thread with pending interrupts and building the `resume` array. Expiry is
//! [`Interrupt::is_expired`] (aguikit-core's, shared with the server).
//!
//! ```
//! use aguikit_client::interrupts::{build_resume, check_gate};
//! use aguikit_core::{Interrupt, ResumeEntry};
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
use aguikit_core::interrupt::ResumeCheck;
use aguikit_core::{Interrupt, ResumeEntry, ResumeStatus};
use std::collections::HashSet;
use std::time::SystemTime;

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
    let check = ResumeCheck::new(pending, resume, now);
    if !check.missing.is_empty() {
        return Err(ClientError::UnansweredInterrupts { ids: check.missing });
    }
    match check.expired.first() {
        Some(id) => Err(ClientError::InterruptExpired {
            id: id.clone(),
            expires_at: pending
                .iter()
                .find(|i| i.id == *id)
                .and_then(|i| i.expires_at.clone())
                .unwrap_or_default(),
        }),
        None => Ok(()),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn expiry() {
        let mut i = Interrupt::new("i", "r");
        let now = SystemTime::now();
        assert!(!i.is_expired(now));
        i.expires_at = Some("not a date".into());
        assert!(!i.is_expired(now));
        i.expires_at = Some("2000-01-01T00:00:00Z".into());
        assert!(i.is_expired(now));
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
