//! Why a patch could not be applied.

use std::fmt;

use super::pointer::*;

/// A patch that could not be applied: which operation failed and why. The document is
/// unchanged.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub struct PatchError {
    /// Index of the failing operation in the patch.
    pub index: usize,
    /// Its name (`"replace"`, ...).
    pub op: &'static str,
    /// Its `path`.
    pub path: JsonPointer,
    /// Its `from`, for `move` and `copy`.
    pub from: Option<JsonPointer>,
    /// Why it failed.
    pub kind: PatchErrorKind,
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn show(p: &JsonPointer) -> &str {
            if p.is_root() { "\"\"" } else { p.as_str() }
        }
        write!(f, "operation {} ({} ", self.index, self.op)?;
        if let Some(from) = &self.from {
            write!(f, "{} -> ", show(from))?;
        }
        write!(f, "{}): {}", show(&self.path), self.kind)
    }
}

/// Why an operation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatchErrorKind {
    /// The target (or, for `add`, `move` and `copy`, its parent) does not exist.
    #[error("path not found")]
    PathNotFound,
    /// The `from` location of `move`/`copy` does not exist.
    #[error("`from` location not found")]
    FromNotFound,
    /// A token addressing an array element is not `-`, `0` or digits without a leading
    /// zero.
    #[error("invalid array index {token:?}")]
    InvalidArrayIndex {
        /// The decoded token.
        token: String,
    },
    /// `add` at an array index greater than the array's length.
    #[error("array index {index} is out of bounds (length {len})")]
    IndexOutOfBounds {
        /// The requested index (saturated at `usize::MAX`).
        index: usize,
        /// The array's length.
        len: usize,
    },
    /// A `test` found a different value (or none).
    #[error("test failed: the value differs")]
    TestFailed,
    /// `move` from a location into one of its own children.
    #[error("cannot move a value into one of its own children")]
    MoveIntoOwnChild,
    /// A `__proto__` token, or `prototype` right after `constructor`.
    #[error("`__proto__` and `constructor/prototype` tokens are not allowed")]
    BannedToken,
    /// A non-root operation on a `null` document.
    #[error("the document is null")]
    NullDocument,
    /// A non-root operation the reference rejects on a scalar document.
    #[error("the document is a scalar")]
    ScalarDocument,
}
