//! The CI forms of `agui check`'s report: JUnit XML and SARIF 2.1.0.
//!
//! JUnit: one `<testsuite>` for the endpoint, one `<testcase>` per run (input), a `<failure>`
//! for a run with violations (its `type` the first rule id; the body lists every violation
//! with its event index, rule, explanation and link), the notes as `<system-out>`.
//!
//! SARIF: one run of the tool `agui check` whose driver lists every rule (the engine's
//! table and the transport checks) with its description and help link, and one result per
//! violation: `ruleId`, the message, a logical location `INPUT/event N` and the properties
//! `input`, `eventIndex`, `eventType`.

use crate::check::{CheckReport, RunCheck, Violation};
use crate::rules::{TRANSPORT_CHECKS, describe, html_escape};
use aguikit_core::engine::rules::RULES;
use serde_json::{Value, json};
use std::fmt::Write as _;

/// Where a violation happened, for people: `event 3 TEXT_MESSAGE_START` (or nothing).
fn place(v: &Violation) -> String {
    match (v.index, &v.event_type) {
        (Some(i), Some(t)) => format!("event {i} {t}"),
        (Some(i), None) => format!("event {i}"),
        _ => String::new(),
    }
}

fn link(rules_url: &str, rule: &str) -> String {
    format!("{rules_url}#{rule}")
}

fn seconds(ms: u64) -> String {
    format!("{:.3}", ms as f64 / 1000.0)
}

/// The report as JUnit XML.
pub fn junit(report: &CheckReport, rules_url: &str) -> String {
    // The capabilities document, as a test case of its own when there is something to say
    // of it (its contradictions with the runs are failures of those runs).
    let capabilities = report
        .capabilities
        .as_ref()
        .filter(|c| !c.violations.is_empty() || !c.notes.is_empty())
        .map(|c| RunCheck {
            name: "capabilities".into(),
            description: format!("GET {}", c.url),
            proto: false,
            http_status: c.http_status,
            content_type: None,
            events: 0,
            terminal: None,
            outcome: None,
            duration_ms: 0,
            violations: c.violations.clone(),
            notes: c.notes.clone(),
        });
    let runs: Vec<&RunCheck> = capabilities.iter().chain(&report.runs).collect();
    let failures = runs.iter().filter(|r| !r.violations.is_empty()).count();
    let total_ms: u64 = runs.iter().map(|r| r.duration_ms).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"agui check\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" time=\"{}\">",
        runs.len(),
        seconds(total_ms)
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"agui check {}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\" time=\"{}\">",
        html_escape(&report.url),
        runs.len(),
        seconds(total_ms)
    );
    for run in runs {
        testcase(&mut out, run, rules_url);
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

fn testcase(out: &mut String, run: &RunCheck, rules_url: &str) {
    let _ = write!(
        out,
        "    <testcase classname=\"agui.check\" name=\"{}\" time=\"{}\"",
        html_escape(&run.name),
        seconds(run.duration_ms)
    );
    if run.violations.is_empty() && run.notes.is_empty() {
        out.push_str("/>\n");
        return;
    }
    out.push_str(">\n");
    if let Some(first) = run.violations.first() {
        let mut body = String::new();
        for v in &run.violations {
            let p = place(v);
            let _ = writeln!(
                body,
                "{}{}: {}",
                if p.is_empty() {
                    String::new()
                } else {
                    format!("{p}: ")
                },
                v.rule,
                v.message
            );
            if let Some((title, explanation, reference)) = describe(&v.rule) {
                let _ = writeln!(
                    body,
                    "  {title}: {explanation}\n  Reference client: {reference}"
                );
            }
            let _ = writeln!(body, "  Help: {}", link(rules_url, &v.rule));
        }
        let p = place(first);
        let _ = writeln!(
            out,
            "      <failure type=\"{}\" message=\"{}\">{}</failure>",
            html_escape(&first.rule),
            html_escape(&format!(
                "{}{}{}: {} ({} violation{})",
                p,
                if p.is_empty() { "" } else { ": " },
                first.rule,
                first.message,
                run.violations.len(),
                if run.violations.len() == 1 { "" } else { "s" }
            )),
            html_escape(&body)
        );
    }
    if !run.notes.is_empty() {
        let _ = writeln!(
            out,
            "      <system-out>{}</system-out>",
            html_escape(&run.notes.join("\n"))
        );
    }
    out.push_str("    </testcase>\n");
}

/// Every rule SARIF's driver lists: the engine's, the transport checks, then the A2UI rules.
fn rule_ids() -> Vec<&'static str> {
    RULES
        .iter()
        .map(|r| r.id)
        .chain(TRANSPORT_CHECKS.iter().map(|c| c.id))
        .chain(aguikit_a2ui::RULES.iter().map(|r| r.id))
        .collect()
}

/// The report as a SARIF 2.1.0 log.
pub fn sarif(report: &CheckReport, rules_url: &str) -> Value {
    let ids = rule_ids();
    let rules: Vec<Value> = ids
        .iter()
        .map(|id| {
            let (title, explanation, reference) = describe(id).unwrap_or(("", "", ""));
            let a2ui = aguikit_a2ui::rules::rule(id);
            let stage = aguikit_core::engine::rules::rule(id)
                .map(|r| json!(r.stage))
                .unwrap_or(json!(if a2ui.is_some() { "a2ui" } else { "transport" }));
            let level = match a2ui.map(|r| r.severity) {
                Some(aguikit_a2ui::Severity::Warning) => "warning",
                _ => "error",
            };
            json!({
                "id": id,
                "name": title,
                "shortDescription": {"text": title},
                "fullDescription": {"text": explanation},
                "help": {"text": format!("{explanation} Reference client: {reference}")},
                "helpUri": link(rules_url, id),
                "defaultConfiguration": {"level": level},
                "properties": {"stage": stage},
            })
        })
        .collect();
    let results: Vec<Value> = report
        .violations
        .iter()
        .map(|v| {
            let mut name = v.input.clone();
            if let Some(i) = v.index {
                let _ = write!(name, "/event {i}");
            }
            let mut result = json!({
                "ruleId": v.rule,
                "level": "error",
                "message": {"text": format!("{}{}", if place(v).is_empty() { String::new() } else { format!("{}: ", place(v)) }, v.message)},
                "locations": [{
                    "logicalLocations": [{"name": name, "fullyQualifiedName": format!("{}{}", report.url, if v.index.is_some() { format!("#{name}") } else { String::new() }), "kind": "element"}],
                }],
                "properties": {"input": v.input, "eventIndex": v.index, "eventType": v.event_type},
            });
            if let Some(k) = ids.iter().position(|id| *id == v.rule) {
                result["ruleIndex"] = json!(k);
            }
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "agui check",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": rules_url,
                "rules": rules,
            }},
            "invocations": [{"executionSuccessful": true, "commandLine": format!("agui check {}", report.url)}],
            "properties": {"url": report.url, "runs": report.runs.len()},
            "results": results,
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> CheckReport {
        let v = Violation {
            input: "plain".into(),
            index: Some(3),
            event_type: Some("TEXT_MESSAGE_START".into()),
            rule: "V13".into(),
            message: "A text message with ID 'm' is already in progress <&>".into(),
        };
        let run = |name: &str, violations: Vec<Violation>| RunCheck {
            name: name.into(),
            description: String::new(),
            proto: false,
            http_status: Some(200),
            content_type: Some("text/event-stream".into()),
            events: 5,
            terminal: Some("RUN_FINISHED".into()),
            outcome: None,
            duration_ms: 1500,
            violations,
            notes: vec![],
        };
        CheckReport {
            url: "http://h/agent".into(),
            ok: false,
            runs: vec![run("plain", vec![v.clone()]), run("state", vec![])],
            violations: vec![v],
            capabilities: None,
        }
    }

    #[test]
    fn junit_names_each_run_and_the_failing_rule() {
        let x = junit(&report(), "https://r/RULES.md");
        assert!(x.starts_with("<?xml"));
        assert!(x.contains("tests=\"2\" failures=\"1\""), "{x}");
        assert!(
            x.contains("<testcase classname=\"agui.check\" name=\"state\" time=\"1.500\"/>"),
            "{x}"
        );
        assert!(x.contains("<failure type=\"V13\" message=\"event 3 TEXT_MESSAGE_START: V13: A text message with ID &#39;m&#39; is already in progress &lt;&amp;&gt; (1 violation)\">"), "{x}");
        assert!(x.contains("Help: https://r/RULES.md#V13"), "{x}");
        assert_eq!(x.matches("<testcase").count(), 2);
    }

    #[test]
    fn sarif_has_rules_with_links_and_a_result_per_violation() {
        let s = sarif(&report(), "https://r/RULES.md");
        assert_eq!(s["version"], "2.1.0");
        let run = &s["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        assert_eq!(
            rules.len(),
            RULES.len() + TRANSPORT_CHECKS.len() + aguikit_a2ui::RULES.len()
        );
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 1);
        let r = &results[0];
        assert_eq!(r["ruleId"], "V13");
        let k = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[k]["id"], "V13");
        assert_eq!(rules[k]["helpUri"], "https://r/RULES.md#V13");
        assert_eq!(r["properties"]["eventIndex"], 3);
        assert_eq!(
            r["locations"][0]["logicalLocations"][0]["name"],
            "plain/event 3"
        );
    }

    #[test]
    fn a2ui_violations_link_to_their_rules() {
        let mut r = report();
        let v = Violation {
            input: "plain".into(),
            index: Some(2),
            event_type: Some("ACTIVITY_SNAPSHOT".into()),
            rule: "A7".into(),
            message: "Component 'root' references non-existent component 'x'".into(),
        };
        r.runs[0].violations = vec![v.clone()];
        r.violations = vec![v];
        let s = sarif(&r, "https://r/RULES.md");
        let run = &s["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        let k = run["results"][0]["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[k]["id"], "A7");
        assert_eq!(rules[k]["name"], "Dangling reference");
        assert_eq!(rules[k]["properties"]["stage"], "a2ui");
        let a13 = rules.iter().find(|r| r["id"] == "A13").unwrap();
        assert_eq!(a13["defaultConfiguration"]["level"], "warning");
        let x = junit(&r, "https://r/RULES.md");
        assert!(x.contains("<failure type=\"A7\""), "{x}");
        assert!(x.contains("Help: https://r/RULES.md#A7"), "{x}");
        assert!(x.contains("Dangling reference"), "{x}");
    }
}
