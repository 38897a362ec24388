//! The state document: a tree, a snapshot's tree moved in and not yet patched, the JSON
//! text of a large snapshot until something needs its tree, or the compact document a
//! folder patches.
//!
//! A `serde_json::Value` takes about twelve times the bytes of its JSON text (a 5 MB
//! snapshot of small objects becomes some 60 MB), so a pipeline that folds without handing
//! events back keeps a large snapshot as the text `serde_json` would write of it. Such a
//! folder ([`Applier::push_owned`](super::Applier::push_owned)) patches a [`Doc`], which
//! is smaller and faster to patch than a `Value`. A look at
//! [`Applier::state`](super::Applier::state) builds the tree and keeps it beside the text
//! or the compact document; the next patch then goes to that tree, so a caller that looks
//! after every event pays for one conversion, not one per look.
//!
//! A snapshot given by value ([`Applier::push_owned`](super::Applier::push_owned)) is kept
//! as the tree it came as until a patch comes: a snapshot that the next snapshot replaces,
//! or that ends the stream, is never converted (a conversion costs about what a deep copy
//! of the tree does).

use super::doc::Doc;
use crate::event::value_of_text;
use serde_json::Value;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Debug, Clone)]
pub(super) enum StateDoc {
    Tree(Value),
    /// A snapshot's document moved in by a folder that does not hand events back, not yet
    /// patched: the next patch goes to its compact form ([`StateDoc::target`]), or to the
    /// tree itself when something `looked` at it ([`StateDoc::get`]).
    Given {
        tree: Value,
        looked: Looked,
    },
    /// `json` is exactly what `serde_json::to_vec` writes of the document; `tree` is the
    /// document, once something has asked for it.
    Text {
        json: Box<[u8]>,
        tree: OnceLock<Value>,
    },
    /// The document, compact; `tree` as for `Text`.
    Compact {
        doc: Doc,
        tree: OnceLock<Value>,
    },
}

/// Whether something looked at a [`StateDoc::Given`] tree. (An atomic, not a `Cell`, so
/// that the applier stays `Sync`; relaxed: it only chooses which form the next patch goes
/// to, never what it does.)
#[derive(Debug, Default)]
pub(super) struct Looked(AtomicBool);

impl Clone for Looked {
    fn clone(&self) -> Self {
        Looked(AtomicBool::new(self.0.load(Ordering::Relaxed)))
    }
}

/// The document a patch goes to.
pub(super) enum Target<'a> {
    Tree(&'a mut Value),
    Compact(&'a mut Doc),
}

impl StateDoc {
    /// A compact document.
    pub(super) fn compact(doc: Doc) -> Self {
        StateDoc::Compact {
            doc,
            tree: OnceLock::new(),
        }
    }

    /// A snapshot's document, moved in.
    pub(super) fn given(tree: Value) -> Self {
        StateDoc::Given {
            tree,
            looked: Looked::default(),
        }
    }

    /// The document as a tree.
    pub(super) fn get(&self) -> &Value {
        match self {
            StateDoc::Tree(v) => v,
            StateDoc::Given { tree, looked } => {
                looked.0.store(true, Ordering::Relaxed);
                tree
            }
            StateDoc::Text { json, tree } => tree.get_or_init(|| value_of_text(json)),
            StateDoc::Compact { doc, tree } => tree.get_or_init(|| doc.to_value()),
        }
    }

    /// The document as a tree to change: the text or compact document, if any, is dropped.
    pub(super) fn get_mut(&mut self) -> &mut Value {
        if !matches!(self, StateDoc::Tree(_)) {
            let value = std::mem::replace(self, StateDoc::Tree(Value::Null)).into_value();
            *self = StateDoc::Tree(value);
        }
        match self {
            StateDoc::Tree(v) => v,
            _ => unreachable!("the document was just made a tree"),
        }
    }

    /// The document to patch for a folder that does not hand events back: the compact
    /// document, unless a tree is already there (kept, or built or given and then looked
    /// at), which is then the one kept current.
    pub(super) fn target(&mut self) -> Target<'_> {
        match self {
            StateDoc::Given { looked, .. } => {
                let looked = looked.0.load(Ordering::Relaxed);
                let StateDoc::Given { tree, .. } =
                    std::mem::replace(self, StateDoc::Tree(Value::Null))
                else {
                    unreachable!("matched above")
                };
                *self = if looked {
                    StateDoc::Tree(tree)
                } else {
                    StateDoc::compact(Doc::from(tree))
                };
            }
            StateDoc::Text { json, tree } if tree.get().is_none() => {
                *self = StateDoc::compact(Doc::of_text(json));
            }
            StateDoc::Text { tree, .. } | StateDoc::Compact { tree, .. }
                if tree.get().is_some() =>
            {
                let value = tree.take().unwrap_or_default();
                *self = StateDoc::Tree(value);
            }
            _ => {}
        }
        match self {
            StateDoc::Tree(v) => Target::Tree(v),
            StateDoc::Compact { doc, .. } => Target::Compact(doc),
            StateDoc::Text { .. } | StateDoc::Given { .. } => {
                unreachable!("text and given trees were just made documents")
            }
        }
    }

    pub(super) fn into_value(self) -> Value {
        match self {
            StateDoc::Tree(v) | StateDoc::Given { tree: v, .. } => v,
            StateDoc::Text { json, mut tree } => {
                tree.take().unwrap_or_else(|| value_of_text(&json))
            }
            StateDoc::Compact { doc, mut tree } => tree.take().unwrap_or_else(|| doc.into_value()),
        }
    }

    /// Appends the document's JSON, as `serde_json` writes it.
    pub(super) fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            StateDoc::Tree(v) | StateDoc::Given { tree: v, .. } => {
                crate::event::write_value(out, v)
            }
            StateDoc::Text { json, .. } => out.extend_from_slice(json),
            StateDoc::Compact { doc, .. } => crate::event::write_value(out, doc),
        }
    }
}
