#![doc = include_str!("../README.md")]
//!
//! # Building events
//!
//! Events are plain values: build them with `new` and the setters, convert them into
//! [`Event`], and serialize them with `serde` or with [`Event::to_json_vec`] (the crate's own
//! writer of the same compact wire JSON).
//!
//! ```
//! use aguikit_core::{Event, event::{RunStarted, TextMessageStart, TextMessageContent}};
//! let events: Vec<Event> = vec![
//!     RunStarted::new("thread-1", "run-1").into(),
//!     TextMessageStart::new("m1").into(),
//!     TextMessageContent::new("m1", "Hello").into(),
//! ];
//! let json = serde_json::to_string(&events).unwrap();
//! let back: Vec<Event> = serde_json::from_str(&json).unwrap();
//! assert_eq!(back, events);
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_debug_implementations, missing_docs)]

pub mod capabilities;
pub mod codec;
pub mod content;
pub mod diff;
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod differential;
pub mod engine;
pub mod event;
pub mod fmt;
pub mod hash;
pub mod id;
pub mod input;
pub mod interrupt;
mod lenient;
pub mod message;
pub mod metadata;
pub mod patch;
mod resume;
mod serde_util;
mod time;
pub mod usage;
pub mod warning;

pub use capabilities::AgentCapabilities;
pub use codec::media::WireFormat;
pub use content::{Content, ContentPart, MediaPart, PartSource, TextPart};
pub use engine::pipeline::Pipeline;
pub use event::{Event, EventType};
pub use input::{Context, ResumeEntry, ResumeStatus, RunAgentInput, Tool};
pub use interrupt::{Interrupt, RunOutcome, SubagentOutcome};
pub use message::{Message, Role, ToolCall};
pub use metadata::Metadata;
pub use usage::TokenUsage;

/// The AG-UI protocol version this crate speaks.
pub const PROTOCOL_VERSION: &str = "1.0";
