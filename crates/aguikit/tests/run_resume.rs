//! `agui run --thread ID --resume ANSWER` answers the interrupt a stored thread waits on;
//! a run that sends none is told how.

mod common;

use common::{Serve, assert_has};

#[test]
fn a_stored_interrupt_is_answered_from_the_command_line() {
    let s = Serve::start_with(&["--store", "memory"]);
    let url = s.url.as_str();
    // The demo agent ends a run asked to "approve" with an interrupt.
    let first = s.agui(&["run", url, "--thread", "t1", "--text", "approve", "--json"]);
    assert_eq!(first.code, 0, "{first:?}");
    let first = first.json();
    assert_eq!(first["status"], "interrupted");
    let id = first["pendingInterrupts"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // A run without an answer is not sent: it says what the thread waits on and how to
    // answer.
    let plain = s.agui(&["run", url, "--thread", "t1", "--text", "hi"]);
    assert_eq!(plain.code, 2, "{plain:?}");
    assert_has(&plain.stderr, &[&id, "--resume approve", "--resume deny"]);

    // An answer that names no open interrupt is refused before anything is sent.
    let wrong = s.agui(&["run", url, "--thread", "t1", "--resume", "nope=1", "--json"]);
    assert_eq!(wrong.code, 2, "{wrong:?}");
    assert_has(wrong.json()["error"].as_str().unwrap(), &[&id]);

    // `approve`: the thread goes on, the interrupt resolved.
    let approved = s.agui(&[
        "run", url, "--thread", "t1", "--resume", "approve", "--json",
    ]);
    assert_eq!(approved.code, 0, "{approved:?}");
    let approved = approved.json();
    assert_eq!(approved["status"], "finished");
    assert_eq!(approved["result"]["approved"], true, "{approved:#}");
    assert_eq!(approved["pendingInterrupts"], serde_json::json!([]));
    // Nothing is left to answer.
    let again = s.agui(&[
        "run", url, "--thread", "t1", "--resume", "approve", "--json",
    ]);
    assert_eq!(again.code, 2, "{again:?}");
    assert_has(again.json()["error"].as_str().unwrap(), &["no interrupt"]);

    // `deny`, and an answer by id with a JSON payload.
    for (thread, answer, want) in [
        ("t2", "deny".to_owned(), false),
        ("t3", String::new(), true),
    ] {
        let first = s.agui(&[
            "run", url, "--thread", thread, "--text", "approve", "--json",
        ]);
        let id = first.json()["pendingInterrupts"][0]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let answer = if answer.is_empty() {
            format!("{id}={{\"approved\":true}}")
        } else {
            answer
        };
        let out = s.agui(&[
            "run", url, "--thread", thread, "--resume", &answer, "--json",
        ]);
        assert_eq!(out.code, 0, "{thread}: {out:?}");
        assert_eq!(out.json()["result"]["approved"], want, "{thread}");
    }
}
