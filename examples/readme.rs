//! Checks the root README's Rust snippets: they are this library's doctests
//! (`cargo test -p aguikit-examples --doc`), compiled with warnings (unused imports
//! among them) denied, and run unless marked `no_run`. The library has nothing else.
#![doc(test(attr(deny(warnings))))]

/// The root README, whose ```` ```rust ```` blocks are the doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct Readme;
