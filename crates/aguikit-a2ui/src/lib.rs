#![doc = include_str!("../README.md")]
#![warn(missing_debug_implementations, missing_docs)]

pub mod agui;
pub mod catalog;
pub mod emit;
pub mod message;
pub mod middleware;
pub mod pointer;
pub mod rules;
pub mod schema;
pub mod stream;
pub mod surface;
pub mod text;
pub mod validate;

pub use catalog::Catalog;
pub use message::{ClientMessage, Component, ServerMessage};
pub use rules::{RULES, Rule, Severity, Violation};
pub use surface::{Surface, Surfaces};
pub use validate::{Finding, Limits, Validator};
