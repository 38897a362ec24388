//! `agui rules`: the engine's rule table (`aguikit_core::engine::rules`) plus the transport
//! checks of `agui check`, as text, Markdown, JSON or an HTML page (`GET /rules` of
//! `agui serve`). Every violation the tools report names one of these ids.

use aguikit_a2ui::rules::{RULES as A2UI_RULES, Rule as A2uiRule};
use aguikit_core::engine::rules::{RULES, Rule, Stage, Verdict};
use serde::Serialize;
use std::fmt::Write as _;
use std::process::ExitCode;

/// Where the rules are published: the Markdown form of this table, `RULES.md`, in the
/// published crate's sources on docs.rs (this version's). `agui check --format sarif|junit`
/// links each rule to its anchor there unless the checked server serves its own `/rules`.
pub const RULES_URL: &str = concat!(
    "https://docs.rs/crate/aguikit/",
    env!("CARGO_PKG_VERSION"),
    "/source/RULES.md"
);

/// A check of `agui check` that is about the HTTP exchange rather than the events.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TransportCheck {
    /// The id `agui check` reports.
    pub id: &'static str,
    /// What it is about.
    pub title: &'static str,
    /// When it fires.
    pub explanation: &'static str,
    /// What the reference client does.
    pub reference: &'static str,
}

/// The transport checks of `agui check`, beside the engine's rules.
pub const TRANSPORT_CHECKS: &[TransportCheck] = &[
    TransportCheck {
        id: "request",
        title: "No response",
        explanation: "The request could not be sent or no response came (connection refused, DNS, TLS).",
        reference: "runAgent rejects with the fetch error.",
    },
    TransportCheck {
        id: "http-status",
        title: "Status not 2xx",
        explanation: "The agent answered the run request with a status outside 200–299.",
        reference: "HttpAgent raises an HTTP error: the run fails.",
    },
    TransportCheck {
        id: "content-type",
        title: "Wrong content type",
        explanation: "The answer is neither text/event-stream nor application/vnd.ag-ui.event+proto, or protobuf came to a request that accepted only SSE.",
        reference: "The body is not read as an event stream: the run fails.",
    },
    TransportCheck {
        id: "transport",
        title: "Connection broke",
        explanation: "The connection broke before the body ended.",
        reference: "The event stream errors: the run fails.",
    },
    TransportCheck {
        id: "framing",
        title: "Unreadable frame",
        explanation: "The bytes after the last good event are not a valid SSE or protobuf frame.",
        reference: "The parser errors: the run fails.",
    },
    TransportCheck {
        id: "timeout",
        title: "No end in time",
        explanation: "The stream did not end within the check's time limit.",
        reference: "No limit of its own: the run hangs until the caller aborts it.",
    },
    TransportCheck {
        id: "no-terminal",
        title: "No terminal event",
        explanation: "The stream ended without RUN_FINISHED or RUN_ERROR for its run.",
        reference: "runAgent resolves; the open messages stay as they were built (client.md §1.3).",
    },
    TransportCheck {
        id: "empty-stream",
        title: "Empty stream",
        explanation: "The response carried no event at all.",
        reference: "runAgent resolves with no result.",
    },
    TransportCheck {
        id: "capabilities",
        title: "Capabilities contradicted",
        explanation: "The agent's GET PATH/capabilities document is not an AgentCapabilities object, or what it declares contradicts what the runs showed: transport.httpBinary declared and SSE served to a protobuf request (or the reverse), humanInTheLoop.interrupts declared and no interrupt when one was invited (or the reverse), or a feature declared false (reasoning, subagents, state snapshots or deltas, tools) whose events came.",
        reference: "Nothing: 1.0 defines the AgentCapabilities shape but no route for it, and HttpAgent does not implement getCapabilities().",
    },
    TransportCheck {
        id: "not-an-object",
        title: "Event is not an object",
        explanation: "A frame's JSON is not an object (an array, a string, a number).",
        reference: "The official client's transport rejects it: the run fails.",
    },
];

/// Output formats of `agui rules`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RulesFormat {
    /// One rule per line.
    Text,
    /// A Markdown page (RULES.md).
    Md,
    /// `{"rules": [...], "transportChecks": [...]}`.
    Json,
}

fn stage(s: Stage) -> &'static str {
    match s {
        Stage::Decode => "decoding",
        Stage::Expansion => "chunk expansion",
        Stage::Verification => "verification",
    }
}

fn verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Reject => "reject",
        Verdict::Allow => "allow",
    }
}

/// The table as JSON.
pub fn json() -> serde_json::Value {
    serde_json::json!({"rules": RULES, "transportChecks": TRANSPORT_CHECKS, "a2uiRules": A2UI_RULES})
}

/// The table as text, one rule per line.
pub fn text() -> String {
    let mut out = String::new();
    for r in RULES {
        let _ = writeln!(
            out,
            "{:<7} {:<6} {:<15} {}: {}",
            r.id,
            verdict(r.verdict),
            stage(r.stage),
            r.title,
            r.explanation
        );
    }
    for c in TRANSPORT_CHECKS {
        let _ = writeln!(
            out,
            "{:<13} {:<15} {}: {}",
            c.id, "check", c.title, c.explanation
        );
    }
    for r in A2UI_RULES {
        let _ = writeln!(
            out,
            "{:<7} {:<6} {:<15} {}: {}",
            r.id,
            r.severity.as_str(),
            "a2ui",
            r.title,
            r.explanation
        );
    }
    out
}

/// What a renderer does with content that breaks an A2UI rule of this severity.
fn a2ui_reference(r: &A2uiRule) -> &'static str {
    match r.severity {
        aguikit_a2ui::Severity::Error => {
            "A renderer rejects the message or the surface (A2UI renderer guide); `agui verify --a2ui` fails."
        }
        aguikit_a2ui::Severity::Warning => {
            "The surface renders with the value empty; `agui verify --a2ui` reports it and passes."
        }
    }
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The table as a Markdown page (what `RULES.md` holds).
pub fn markdown() -> String {
    let mut out = String::from(
        "# AG-UI verification rules\n\n\
         Generated by `agui rules --format md` from the engine's rule table\n\
         (`aguikit_core::engine::rules`); do not edit by hand. Every violation `agui check`,\n\
         `agui inspect`, `agui verify` and the console report names one of these ids.\n\n\
         ## Engine rules\n\n\
         | id | stage | verdict | rule | why an event breaks it | the reference client | spec |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for r in RULES {
        let cells = [r.title, r.explanation, r.reference, r.section].map(md_cell);
        md_row(&mut out, r.id, [stage(r.stage), verdict(r.verdict)], &cells);
    }
    out.push_str(
        "\n## Transport checks of `agui check`\n\n\
         | id | check | when | the reference client |\n|---|---|---|---|\n",
    );
    for c in TRANSPORT_CHECKS {
        md_row(
            &mut out,
            c.id,
            [],
            &[c.title, c.explanation, c.reference].map(md_cell),
        );
    }
    out.push_str(
        "\n## A2UI rules (`agui verify --a2ui`, `agui inspect`, `agui check`)\n\n\
         A2UI v0.9 surfaces carried by `a2ui-surface` activities (`aguikit_a2ui::rules`).\n\n\
         | id | severity | rule | why a message breaks it | a renderer | spec |\n|---|---|---|---|---|---|\n",
    );
    for r in A2UI_RULES {
        let cells = [r.title, r.explanation, a2ui_reference(r), r.section].map(md_cell);
        md_row(&mut out, r.id, [r.severity.as_str()], &cells);
    }
    out
}

/// One table row: the id with its anchor, the `plain` cells as they are, then the
/// `escaped` ones (already passed through `md_cell`).
fn md_row<const N: usize>(out: &mut String, id: &str, plain: [&str; N], escaped: &[String]) {
    let _ = write!(out, "| <a id=\"{id}\"></a>`{id}` |");
    for cell in plain
        .iter()
        .copied()
        .chain(escaped.iter().map(String::as_str))
    {
        let _ = write!(out, " {cell} |");
    }
    out.push('\n');
}

/// Escapes text for HTML.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn html_row(r: &Rule) -> String {
    format!(
        "<tr id=\"{id}\" class=\"{v}\"><th><a href=\"#{id}\">{id}</a></th><td>{}</td><td>{}</td><td><b>{}</b><br>{}</td><td>{}</td><td>{}</td></tr>\n",
        stage(r.stage),
        verdict(r.verdict),
        html_escape(r.title),
        html_escape(r.explanation),
        html_escape(r.reference),
        html_escape(r.section),
        id = html_escape(r.id),
        v = verdict(r.verdict),
    )
}

/// The rules page `agui serve` shows at `GET /rules` (no script; the console links to
/// `/rules#ID`, and the row with that id is highlighted).
pub fn html() -> String {
    let mut rows = String::new();
    for r in RULES {
        rows.push_str(&html_row(r));
    }
    let mut checks = String::new();
    for c in TRANSPORT_CHECKS {
        let _ = writeln!(
            checks,
            "<tr id=\"{id}\"><th><a href=\"#{id}\">{id}</a></th><td><b>{}</b><br>{}</td><td>{}</td></tr>",
            html_escape(c.title),
            html_escape(c.explanation),
            html_escape(c.reference),
            id = html_escape(c.id),
        );
    }
    let mut a2ui = String::new();
    for r in A2UI_RULES {
        let _ = writeln!(
            a2ui,
            "<tr id=\"{id}\"><th><a href=\"#{id}\">{id}</a></th><td>{}</td><td><b>{}</b><br>{}</td><td>{}</td><td>{}</td></tr>",
            r.severity.as_str(),
            html_escape(r.title),
            html_escape(r.explanation),
            html_escape(a2ui_reference(r)),
            html_escape(r.section),
            id = html_escape(r.id),
        );
    }
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>AG-UI verification rules · agui</title><link rel="icon" href="data:,">
<style>
body {{ font: 14px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 1200px; padding: 16px 24px; }}
table {{ border-collapse: collapse; width: 100%; }}
th, td {{ text-align: left; vertical-align: top; padding: 6px 8px; border-bottom: 1px solid #8884; }}
th a {{ font-family: ui-monospace, monospace; text-decoration: none; }}
tr.allow {{ opacity: 0.75; }}
tr:target {{ background: #ffe58a66; outline: 2px solid #c4332f; }}
code {{ font-family: ui-monospace, monospace; }}
</style></head>
<body data-testid="rules-page">
<h1>AG-UI verification rules</h1>
<p>What the engine checks, stage by stage, and what the reference client (<code>@ag-ui/client</code> 1.0) does when an event breaks a rule. Generated from the engine's rule table; also <a href="rules.json">as JSON</a> and as <code>agui rules</code>.</p>
<h2>Engine rules</h2>
<table><thead><tr><th>id</th><th>stage</th><th>verdict</th><th>rule</th><th>the reference client</th><th>spec</th></tr></thead>
<tbody>
{rows}</tbody></table>
<h2>Transport checks of <code>agui check</code></h2>
<table><thead><tr><th>id</th><th>check</th><th>the reference client</th></tr></thead>
<tbody>
{checks}</tbody></table>
<h2>A2UI rules</h2>
<p>A2UI v0.9 surfaces carried by <code>a2ui-surface</code> activities, checked by <code>agui verify --a2ui</code>, <code>agui inspect</code> and <code>agui check</code>.</p>
<table><thead><tr><th>id</th><th>severity</th><th>rule</th><th>a renderer</th><th>spec</th></tr></thead>
<tbody>
{a2ui}</tbody></table>
</body></html>
"#
    )
}

/// Runs `agui rules`: the whole table, or the rule or check `id` names (exit 2 when none
/// does).
pub fn run(format: RulesFormat, id: Option<&str>) -> Result<ExitCode, String> {
    if let Some(id) = id {
        let entry = find(id).ok_or_else(|| {
            format!("no rule or check {id:?}: `agui rules` lists them all (V1–V55, CH3–CH8, schema, the transport checks, A1–A17)")
        })?;
        crate::out::print(&one(&entry, format)?);
        return Ok(ExitCode::SUCCESS);
    }
    let out = match format {
        RulesFormat::Text => text(),
        RulesFormat::Md => markdown(),
        RulesFormat::Json => {
            serde_json::to_string_pretty(&json()).map_err(|e| e.to_string())? + "\n"
        }
    };
    crate::out::print(&out);
    Ok(ExitCode::SUCCESS)
}

/// One entry of the table: an engine rule or a transport check.
enum Entry {
    Rule(&'static Rule),
    Check(&'static TransportCheck),
    A2ui(&'static A2uiRule),
}

/// The rule or check `id` names, in any case (`v16` is `V16`).
fn find(id: &str) -> Option<Entry> {
    let id = id.trim();
    RULES
        .iter()
        .find(|r| r.id.eq_ignore_ascii_case(id))
        .map(Entry::Rule)
        .or_else(|| {
            TRANSPORT_CHECKS
                .iter()
                .find(|c| c.id.eq_ignore_ascii_case(id))
                .map(Entry::Check)
        })
        .or_else(|| {
            A2UI_RULES
                .iter()
                .find(|r| r.id.eq_ignore_ascii_case(id))
                .map(Entry::A2ui)
        })
}

/// One entry in `format`: a few labelled lines (text), a Markdown section, or its JSON
/// object (as in the whole table's JSON).
fn one(entry: &Entry, format: RulesFormat) -> Result<String, String> {
    let (id, title, facts): (&str, &str, Vec<(&str, &str)>) = match entry {
        Entry::Rule(r) => (
            r.id,
            r.title,
            vec![
                ("stage", stage(r.stage)),
                ("verdict", verdict(r.verdict)),
                ("why an event breaks it", r.explanation),
                ("the reference client", r.reference),
                ("spec", r.section),
            ],
        ),
        Entry::Check(c) => (
            c.id,
            c.title,
            vec![
                ("kind", "transport check of `agui check`"),
                ("when", c.explanation),
                ("the reference client", c.reference),
            ],
        ),
        Entry::A2ui(r) => (
            r.id,
            r.title,
            vec![
                ("kind", "A2UI rule"),
                ("severity", r.severity.as_str()),
                ("why a message breaks it", r.explanation),
                ("a renderer", a2ui_reference(r)),
                ("spec", r.section),
            ],
        ),
    };
    let mut out = String::new();
    match format {
        RulesFormat::Json => {
            let value = match entry {
                Entry::Rule(r) => serde_json::to_value(r),
                Entry::Check(c) => serde_json::to_value(c),
                Entry::A2ui(r) => serde_json::to_value(r),
            };
            out = value
                .and_then(|v| serde_json::to_string_pretty(&v))
                .map_err(|e| e.to_string())?;
            out.push('\n');
        }
        RulesFormat::Text => {
            let _ = writeln!(out, "{id}: {title}");
            for (label, text) in facts {
                let _ = writeln!(out, "  {label}: {text}");
            }
        }
        RulesFormat::Md => {
            let _ = writeln!(out, "### {id}: {}\n", md_cell(title));
            for (label, text) in facts {
                let _ = writeln!(out, "- **{label}**: {text}");
            }
        }
    }
    Ok(out)
}

/// The explanation of a rule or transport check id: (title, explanation, reference).
pub fn describe(id: &str) -> Option<(&'static str, &'static str, &'static str)> {
    if let Some(r) = aguikit_core::engine::rules::rule(id) {
        return Some((r.title, r.explanation, r.reference));
    }
    TRANSPORT_CHECKS
        .iter()
        .find(|c| c.id == id)
        .map(|c| (c.title, c.explanation, c.reference))
        .or_else(|| {
            aguikit_a2ui::rules::rule(id).map(|r| (r.title, r.explanation, a2ui_reference(r)))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_lists_every_rule() {
        let (t, m, h, j) = (text(), markdown(), html(), json());
        for r in RULES {
            assert!(t.contains(r.title), "{}", r.id);
            assert!(m.contains(&format!("<a id=\"{}\"></a>", r.id)), "{}", r.id);
            assert!(h.contains(&format!("<tr id=\"{}\"", r.id)), "{}", r.id);
        }
        assert_eq!(j["rules"].as_array().unwrap().len(), RULES.len());
        assert_eq!(j["rules"][0]["id"], "schema");
        assert!(
            !h.contains("<script"),
            "the rules page needs no script (CSP)"
        );
        for c in TRANSPORT_CHECKS {
            assert!(describe(c.id).is_some());
            assert!(h.contains(&format!("<tr id=\"{}\"", c.id)));
        }
        assert_eq!(html_escape("<a&\"'>"), "&lt;a&amp;&quot;&#39;&gt;");
    }

    #[test]
    fn the_committed_rules_page_is_the_generated_one() {
        let committed = include_str!("../RULES.md");
        assert!(
            committed == markdown(),
            "crates/aguikit/RULES.md is stale: regenerate it with `agui rules --format md > crates/aguikit/RULES.md`"
        );
    }
}
