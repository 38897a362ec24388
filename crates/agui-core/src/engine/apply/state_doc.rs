//! The state document: a tree, or the JSON text of a large snapshot until something needs
//! its tree.
//!
//! A `serde_json::Value` takes about twelve times the bytes of its JSON text (a 5 MB
//! snapshot of small objects becomes some 60 MB), so a pipeline that folds without handing
//! events back keeps a large snapshot as the text `serde_json` would write of it. The
//! first patch turns it into a tree; so does a look at [`Applier::state`](super::Applier::state),
//! which keeps the text beside the tree it built.

use crate::event::value_of_text;
use serde_json::Value;
use std::sync::OnceLock;

#[derive(Debug, Clone)]
pub(super) enum StateDoc {
    Tree(Value),
    /// `json` is exactly what `serde_json::to_vec` writes of the document; `tree` is the
    /// document, once something has asked for it.
    Text {
        json: Box<[u8]>,
        tree: OnceLock<Value>,
    },
}

impl StateDoc {
    /// The document as a tree.
    pub(super) fn get(&self) -> &Value {
        match self {
            StateDoc::Tree(v) => v,
            StateDoc::Text { json, tree } => tree.get_or_init(|| value_of_text(json)),
        }
    }

    /// The document as a tree to change: the text, if any, is dropped.
    pub(super) fn get_mut(&mut self) -> &mut Value {
        if let StateDoc::Text { json, tree } = self {
            let value = tree.take().unwrap_or_else(|| value_of_text(json));
            *self = StateDoc::Tree(value);
        }
        match self {
            StateDoc::Tree(v) => v,
            StateDoc::Text { .. } => unreachable!("the text was just replaced by its tree"),
        }
    }

    pub(super) fn into_value(self) -> Value {
        match self {
            StateDoc::Tree(v) => v,
            StateDoc::Text { json, mut tree } => {
                tree.take().unwrap_or_else(|| value_of_text(&json))
            }
        }
    }

    /// Appends the document's JSON, as `serde_json` writes it.
    pub(super) fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            StateDoc::Tree(v) => crate::event::write_value(out, v),
            StateDoc::Text { json, .. } => out.extend_from_slice(json),
        }
    }
}
