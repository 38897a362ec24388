//! RFC 6902 JSON Patch operations and their application.
//!
//! AG-UI carries JSON Patches in `STATE_DELTA.delta` and `ACTIVITY_DELTA.patch`. This
//! module holds the typed operations ([`PatchOp`]), the RFC 6901 pointers they address
//! ([`JsonPointer`]) and an applier ([`apply_patch`]) that reproduces the observable
//! behaviour of the reference client's patcher (fast-json-patch 3.1.1 called with
//! validation on, as `@ag-ui/client` 1.0 does).
//!
//! # Parsing
//!
//! Operations are *open*: members an operation does not define (for example `value` on
//! `remove`) are kept in its `extra` map and written back out. A missing `path`, a missing
//! `from` on `move`/`copy`, a missing `value` on `add`/`replace`/`test` (`"value": null`
//! counts as present) or a `path`/`from` that is not a JSON Pointer is an error. An unknown
//! `op` is an error for [`PatchOp`]'s `Deserialize`; [`LenientPatch`] (and
//! [`parse_patch_lenient`]) instead drops such operations and reports their indexes, which
//! is what the reference client does.
//!
//! # Application semantics
//!
//! [`apply_patch`] works in place and is atomic: if any operation fails, every operation
//! already applied is undone and the document is left exactly as it was, object key order
//! included. Nothing is cloned except the values an operation inserts. The rules:
//!
//! - `replace`, `remove` and `test` need the target to exist; `move` and `copy` need
//!   `from` to exist; `add` needs the target's parent to exist, and replaces an existing
//!   object member.
//! - Array index tokens are `0` or digits without a leading zero; anything else (`01`,
//!   `1e0`, `x`, the empty token) fails. `-` means "past the end": `add` appends there,
//!   every other use fails. `add` at index = length appends, beyond it fails.
//! - `test` compares by JSON value: numbers by value (`1` equals `1.0`), objects without
//!   regard to key order.
//! - `move` checks its target against the document as it is, removes the value at `from`,
//!   then inserts it at `path` as that resolves *after* the removal, like the reference:
//!   moving into its own child therefore fails, but an array index shift can make a path
//!   under `from` valid again (`move /0 → /0/1` on `[[], [1]]` gives `[[1, []]]`). A
//!   `move`/`copy` target index beyond the array's length appends, as in the reference
//!   (only `add` checks that bound there).
//! - The path `""` is the whole document: `add`/`replace` swap it, `test` compares it,
//!   `move`/`copy` make the value at `from` the document, and `remove` leaves `null`
//!   (as the reference does).
//! - A `path` or `from` holding a `__proto__` token, or a `prototype` token right after a
//!   `constructor` token, fails (the reference bans these for security).
//!
//! Quirks of the reference on a document that is not an object or array, reproduced
//! because they decide whether a patch "succeeds" (nothing is ever changed):
//!
//! - a `null` document fails every operation whose `path` is not `""`;
//! - on a scalar document (boolean, number, string) an operation whose path has two or
//!   more tokens fails; with one token, `add` succeeds; `replace` and `remove` succeed only
//!   on a *falsy* scalar (`false`, `0`, `""`); `test` fails; `move`/`copy` succeed when
//!   `from` is `""`, or has one token and the scalar is falsy, and fail otherwise.
//!
//! Deliberate differences from fast-json-patch, where it does something a user would call
//! a bug (these follow RFC 6902 and the AG-UI spec text instead):
//!
//! - leading-zero and empty array index tokens fail everywhere (the reference accepts
//!   them in `test`, in an `add` target and in a `move`/`copy` target);
//! - members inherited from JavaScript's `Object.prototype` or a string's own properties
//!   (`/toString`, `/constructor`, `/length`, `/0` of a string) do not exist here;
//! - `move`/`copy` to `""` from a missing location fails (the reference makes the
//!   document `undefined`), and `move` from `""` into a child fails (the reference builds
//!   a cyclic document);
//! - a `move` whose target, once `from` is removed, is no place to insert (a scalar, or a
//!   non-index token on an array) fails; the reference reports success and loses the
//!   value.
//!
//! # Layout
//!
//! [`JsonPointer`] and its tokens are in `pointer.rs`; the operation model ([`PatchOp`]) in
//! `ops.rs`; reading one operation strictly in `parse.rs` and a whole patch leniently in
//! `lenient.rs`; [`PatchError`] in `error.rs`; the applier with its undo log in `apply.rs`,
//! written once over the documents of `node.rs` (a `serde_json::Value`, or the engine's
//! compact state document); the reference's scalar-document quirks in `quirks.rs`;
//! [`json_equal`] in `equal.rs`; and the JSON Schemas in `schema.rs`. Beside them, [`diff`]
//! goes the other way: from two documents to the operations between them (what a server's
//! `STATE_DELTA` carries).

mod apply;
pub mod diff;
mod equal;
mod error;
mod lenient;
mod node;
mod ops;
mod parse;
mod pointer;
mod quirks;
#[cfg(feature = "schema")]
mod schema;
#[cfg(test)]
mod tests;

pub(crate) use apply::apply_owned_to;
pub use apply::{apply_patch, apply_patch_owned, apply_patch_to};
pub use equal::json_equal;
pub use error::{PatchError, PatchErrorKind};
pub(crate) use lenient::lenient_patch;
pub use lenient::{DroppedOp, LenientPatch, PatchParseError, parse_patch, parse_patch_lenient};
pub(crate) use node::{Children, Items, Members, Node, SCAN_MEMBERS, View};
pub use ops::{Extra, JsonPatch, PatchOp};
pub use pointer::{JsonPointer, PointerError, PointerErrorKind, Tokens};
