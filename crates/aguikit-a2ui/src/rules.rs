//! The A2UI rules: every violation this crate reports names one of them by its stable id
//! (`A1` … `A17`), with a one-line explanation, the surface, the component and the path.

use serde::Serialize;
use std::fmt;

/// How bad a violation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The surface cannot be rendered as sent (a renderer rejects the message or the tree).
    Error,
    /// The surface renders, but probably not as the agent meant.
    Warning,
}

impl Severity {
    /// `"error"` or `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One A2UI rule.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Rule {
    /// The stable id (`A1` …).
    pub id: &'static str,
    /// Error or warning.
    pub severity: Severity,
    /// What the rule is about, in a few words.
    pub title: &'static str,
    /// Why a message breaks it, in one line.
    pub explanation: &'static str,
    /// Where the A2UI v0.9 specification states it.
    pub section: &'static str,
}

const fn error(
    id: &'static str,
    title: &'static str,
    explanation: &'static str,
    section: &'static str,
) -> Rule {
    Rule {
        id,
        severity: Severity::Error,
        title,
        explanation,
        section,
    }
}

/// Every A2UI rule, in id order.
pub const RULES: &[Rule] = &[
    error(
        "A1",
        "Malformed A2UI message",
        "The message does not match the v0.9 message schema: no or another `version`, not exactly one of createSurface/updateComponents/updateDataModel/deleteSurface, a required field missing or of the wrong type, an unknown field.",
        "server_to_client.json",
    ),
    error(
        "A2",
        "Unknown component",
        "A component's `component` names a type the surface's catalog does not define.",
        "a2ui_protocol.md, Catalogs",
    ),
    error(
        "A3",
        "Missing required property",
        "A component (or an object inside it) lacks a property its catalog schema requires.",
        "catalog.json (required)",
    ),
    error(
        "A4",
        "Mistyped property",
        "A property's value does not match its catalog schema (type, constant, enum, pattern, range, or none of the allowed shapes).",
        "catalog.json (properties)",
    ),
    error(
        "A5",
        "Unknown property",
        "A component carries a property its catalog schema does not allow.",
        "catalog.json (unevaluatedProperties)",
    ),
    error(
        "A6",
        "Missing root component",
        "A surface's component tree has no component with id `root`.",
        "a2ui_protocol.md, updateComponents",
    ),
    error(
        "A7",
        "Dangling reference",
        "A component refers (child, children, template, trigger, content, tab) to a component id the surface does not have.",
        "a2ui_protocol.md, The adjacency list model",
    ),
    error(
        "A8",
        "Self-reference",
        "A component lists itself as its own child.",
        "a2ui_protocol.md, The adjacency list model",
    ),
    error(
        "A9",
        "Circular reference",
        "Following child references from a component leads back to it: the tree is not a tree.",
        "a2ui_protocol.md, The adjacency list model",
    ),
    error(
        "A10",
        "Unreachable component",
        "A component of a complete surface cannot be reached from `root`: it is never rendered.",
        "renderer_guide.md",
    ),
    error(
        "A11",
        "Duplicate component id",
        "One updateComponents message defines the same component id twice.",
        "a2ui_protocol.md, updateComponents",
    ),
    error(
        "A12",
        "Invalid data path",
        "A data-binding, template or updateDataModel path is not a valid JSON Pointer (an escape other than ~0 or ~1).",
        "a2ui_protocol.md, Data binding",
    ),
    Rule {
        id: "A13",
        severity: Severity::Warning,
        title: "Unresolved data binding",
        explanation: "An absolute data-binding path points at nothing in the surface's data model: the bound value shows empty.",
        section: "a2ui_protocol.md, Data binding",
    },
    error(
        "A14",
        "Too deep",
        "The component tree or the data model nests deeper than the limit (50 levels).",
        "renderer_guide.md",
    ),
    error(
        "A15",
        "Function calls nested too deep",
        "Function calls nest deeper than the limit (5 levels).",
        "a2ui_custom_functions.md",
    ),
    error(
        "A16",
        "Surface lifecycle",
        "A message for a surface that was not created (or was deleted), or a createSurface for a surface that exists.",
        "a2ui_protocol.md, createSurface",
    ),
    error(
        "A17",
        "Unparsable A2UI content",
        "A2UI content is not JSON, exceeds a size or depth limit, or (on AG-UI) an a2ui-surface activity's content has no readable a2ui_operations list.",
        "README of the AG-UI A2UI convention",
    ),
];

/// The rule with this id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// One violation: the rule it breaks, what exactly, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Violation {
    /// The rule's id (`A1` …).
    pub rule: &'static str,
    /// What is wrong, in one line (names the offending value).
    pub message: String,
    /// The surface concerned, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub surface_id: Option<String>,
    /// The component concerned, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component_id: Option<String>,
    /// A JSON Pointer to the offending value: into the component when `component_id` is
    /// set, else into the message.
    pub path: String,
}

impl Violation {
    /// A violation of `rule` with this message, at the root of the message.
    pub fn new(rule: &'static str, message: impl Into<String>) -> Self {
        Violation {
            rule,
            message: message.into(),
            surface_id: None,
            component_id: None,
            path: String::new(),
        }
    }

    /// Names the surface.
    pub fn surface(mut self, id: impl Into<String>) -> Self {
        self.surface_id = Some(id.into());
        self
    }

    /// Names the component.
    pub fn component(mut self, id: impl Into<String>) -> Self {
        self.component_id = Some(id.into());
        self
    }

    /// Sets the path.
    pub fn at(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// The severity of the violation's rule.
    pub fn severity(&self) -> Severity {
        rule(self.rule).map_or(Severity::Error, |r| r.severity)
    }

    /// Whether the violation is an error (not a warning).
    pub fn is_error(&self) -> bool {
        self.severity() == Severity::Error
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.rule, self.message)?;
        if let Some(s) = &self.surface_id {
            write!(f, " (surface {s:?}")?;
            if let Some(c) = &self.component_id {
                write!(f, ", component {c:?}")?;
            }
            if !self.path.is_empty() {
                write!(f, ", at {}", self.path)?;
            }
            write!(f, ")")?;
        } else if !self.path.is_empty() {
            write!(f, " (at {})", self.path)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_sequential() {
        for (i, r) in RULES.iter().enumerate() {
            assert_eq!(r.id, format!("A{}", i + 1));
            assert!(!r.explanation.contains('\n'));
        }
        assert!(rule("A13").is_some_and(|r| r.severity == Severity::Warning));
        assert!(rule("A99").is_none());
    }

    #[test]
    fn display_names_where() {
        let v = Violation::new("A7", "x")
            .surface("s")
            .component("root")
            .at("/child");
        assert_eq!(
            v.to_string(),
            "A7: x (surface \"s\", component \"root\", at /child)"
        );
    }
}
