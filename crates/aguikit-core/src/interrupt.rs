//! Interrupts and the outcomes of runs and subagents, and the interrupt contract's check of a
//! run's `resume` against the interrupts left open ([`ResumeCheck`]).

use crate::metadata::Metadata;
use crate::serde_util::{nn, nn_object, wire_struct};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::SystemTime;

pub use crate::resume::{ResumeCheck, answer_for};

wire_struct! {
    /// Something a run needs from outside before it can continue (approval, missing value).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Interrupt {
        /// Id, answered by `ResumeEntry.interruptId`.
        pub id: String,
        /// Open vocabulary (e.g. `"tool_approval"`).
        pub reason: String,
        /// Prompt for whoever answers.
        pub message: Option<String> ["nn"],
        /// Set when it is a tool approval.
        pub tool_call_id: Option<String> ["nn"],
        /// JSON Schema of the expected answer (an object).
        pub response_schema: Option<serde_json::Map<String, Value>> ["nn_object"],
        /// Expiry, conventionally ISO 8601.
        pub expires_at: Option<String> ["nn"],
        /// Metadata.
        pub metadata: Option<Metadata> ["nn_object"],
        /// The subagent that raised it.
        pub subagent_run_id: Option<String> ["nn"],
    }
}

impl Interrupt {
    /// An interrupt with an id and a reason.
    pub fn new(id: impl Into<String>, reason: impl Into<String>) -> Self {
        Interrupt {
            id: id.into(),
            reason: reason.into(),
            message: None,
            tool_call_id: None,
            response_schema: None,
            expires_at: None,
            metadata: None,
            subagent_run_id: None,
        }
    }

    /// Sets the prompt.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// When the interrupt expires, in milliseconds since the Unix epoch: `expiresAt` read as
    /// an ISO 8601 date or date-time, or `None` when it is absent or cannot be read. The
    /// client and the server read it alike.
    ///
    /// Accepted (the forms JavaScript's `Date.parse` is specified to read):
    ///
    /// - a date: `YYYY`, `YYYY-MM` or `YYYY-MM-DD`, read as UTC midnight;
    /// - a date-time: the full date, `T` (or `t` or a space), `HH:MM`, optionally `:SS` and
    ///   a fraction of any length (milliseconds are kept), then `Z`, an offset `±HH:MM`,
    ///   `±HHMM` or `±HH`, or nothing. A date-time without an offset is read as UTC
    ///   (JavaScript reads it as local time).
    ///
    /// Values are checked: the month, the day against the days of that month (leap years
    /// included), hours up to 24 (`24:00:00` only), minutes and seconds up to 59, offsets up
    /// to `23:59`.
    ///
    /// ```
    /// use aguikit_core::Interrupt;
    /// let mut i = Interrupt::new("i1", "confirmation");
    /// assert_eq!(i.expires_at_ms(), None);
    /// i.expires_at = Some("1970-01-01T01:00:01+01:00".into());
    /// assert_eq!(i.expires_at_ms(), Some(1000));
    /// i.expires_at = Some("1970-01-02".into());
    /// assert_eq!(i.expires_at_ms(), Some(86_400_000));
    /// i.expires_at = Some("2023-02-29".into());
    /// assert_eq!(i.expires_at_ms(), None);
    /// ```
    pub fn expires_at_ms(&self) -> Option<i64> {
        self.expires_at
            .as_deref()
            .and_then(crate::time::parse_iso8601_ms)
    }

    /// Whether the interrupt has expired at `now`: never when it has no `expiresAt`, nor
    /// when `expiresAt` cannot be read (as in the reference, an unreadable value never
    /// expires; see [`expires_at_ms`](Self::expires_at_ms) for the forms read); otherwise
    /// once the time has come.
    ///
    /// ```
    /// use aguikit_core::Interrupt;
    /// use std::time::{Duration, UNIX_EPOCH};
    /// let mut i = Interrupt::new("i1", "confirmation");
    /// i.expires_at = Some("2030-01-01T00:00:00Z".into());
    /// assert!(!i.is_expired(UNIX_EPOCH + Duration::from_secs(1_800_000_000)));
    /// assert!(i.is_expired(UNIX_EPOCH + Duration::from_secs(1_900_000_000)));
    /// ```
    pub fn is_expired(&self, now: SystemTime) -> bool {
        crate::resume::is_expired(self, crate::time::unix_ms(now))
    }
}

/// Why a run ended (`RUN_FINISHED.outcome`; absent = success).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum RunOutcome {
    /// Completed.
    Success {
        /// Tool calls started and left unanswered, in call order.
        #[serde(rename = "pendingToolCallIds", skip_serializing_if = "Option::is_none")]
        pending_tool_call_ids: Option<Vec<String>>,
    },
    /// Paused, waiting for answers (at least one interrupt).
    Interrupt {
        /// The open interrupts.
        interrupts: Vec<Interrupt>,
    },
    /// Stopped by whoever ran it; not a failure.
    Cancelled,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum RunOutcomeWire {
    Success {
        #[serde(rename = "pendingToolCallIds", default, deserialize_with = "nn")]
        pending_tool_call_ids: Option<Vec<String>>,
    },
    Interrupt {
        interrupts: Vec<Interrupt>,
    },
    Cancelled,
}

impl<'de> Deserialize<'de> for RunOutcome {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match RunOutcomeWire::deserialize(d)? {
            RunOutcomeWire::Success {
                pending_tool_call_ids,
            } => RunOutcome::Success {
                pending_tool_call_ids,
            },
            RunOutcomeWire::Interrupt { interrupts } => {
                if interrupts.is_empty() {
                    return Err(de::Error::custom(
                        "interrupts: an interrupt outcome needs at least one interrupt",
                    ));
                }
                RunOutcome::Interrupt { interrupts }
            }
            RunOutcomeWire::Cancelled => RunOutcome::Cancelled,
        })
    }
}

/// How a subagent ended (`SUBAGENT_FINISHED.outcome`; absent = success).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum SubagentOutcome {
    /// Completed.
    Success,
    /// Waiting on run-level interrupts it raised.
    Suspended {
        /// Ids of the interrupts it raised.
        #[serde(
            rename = "interruptIds",
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "nn"
        )]
        interrupt_ids: Option<Vec<String>>,
    },
}

/// Reads an optional outcome: a `null` (legacy) or an unknown `type` reads as absent.
pub(crate) fn lenient_outcome<'de, D, T>(d: D, known: &[&str]) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    match &v {
        Value::Null => {
            crate::warning::report("legacy `outcome: null` read as absent");
            return Ok(None);
        }
        Value::Object(_) => {}
        _ => return Err(de::Error::custom("expected an outcome object")),
    }
    if let Err(why) = crate::lenient::check_tag(&v, "type", known) {
        crate::warning::report(format!("outcome removed: {why}"));
        return Ok(None);
    }
    T::deserialize(v).map(Some).map_err(de::Error::custom)
}

pub(crate) fn run_outcome<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RunOutcome>, D::Error> {
    lenient_outcome(d, &["success", "interrupt", "cancelled"])
}

pub(crate) fn subagent_outcome<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<SubagentOutcome>, D::Error> {
    // SUBAGENT_FINISHED.outcome: null is not in the legacy list; it is fatal.
    let v = Value::deserialize(d)?;
    if v.is_null() {
        return Err(de::Error::custom("null is not allowed here"));
    }
    if !v.is_object() {
        return Err(de::Error::custom("expected an outcome object"));
    }
    if let Err(why) = crate::lenient::check_tag(&v, "type", &["success", "suspended"]) {
        crate::warning::report(format!("outcome removed: {why}"));
        return Ok(None);
    }
    SubagentOutcome::deserialize(v)
        .map(Some)
        .map_err(de::Error::custom)
}
