//! The adversarial tests of `agui serve`, in one place: what a client, an upstream or a
//! careless user can send, and what must hold whatever they send (no panic, no stall, no
//! corruption, no data handed to the wrong caller, memory that follows the request).
//!
//! One module per concern; each test is named for what it guards. The threat model these
//! tests check is written down in `aguikit_server`'s crate documentation (the section
//! "Threat model").

#[path = "../common/mod.rs"]
mod common;
mod server;

mod hash_flood;
mod inspect;
mod logs;
mod panics;
mod slow_bodies;
mod store_start;
