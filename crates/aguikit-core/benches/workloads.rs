//! Loading the benchmark workloads written by `shared/bench/gen_workloads.py`.
//!
//! The workloads live in `target/workloads` (override with `AGUI_WORKLOADS`). When they are
//! missing they are generated once with the shared generator (needs `python3`).
#![allow(dead_code)]

use aguikit_core::Event;
use std::path::PathBuf;
use std::process::Command;

/// The workload folder, generated on first use.
pub fn dir() -> PathBuf {
    let dir = std::env::var("AGUI_WORKLOADS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/workloads")
        });
    // The scaling workloads too: a folder made by scripts/cli-stream-bench.sh has the
    // manifest but only the largest of them.
    if !dir.join("manifest.json").exists() || !dir.join("w1_s10000.jsonl").exists() {
        let shared = std::env::var("AGUI_SHARED_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
        let status = Command::new("python3")
            .arg(shared.join("bench/gen_workloads.py"))
            .arg("--out")
            .arg(&dir)
            .args(["--w1-scaling", "10000,100000,1000000"])
            .status()
            .expect("running python3 gen_workloads.py");
        assert!(status.success(), "gen_workloads.py failed");
    }
    dir
}

/// The raw bytes of `name` (e.g. `w1_chat.sse`).
pub fn bytes(name: &str) -> Vec<u8> {
    let p = dir().join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

/// The events of a JSON Lines workload, decoded.
pub fn events(name: &str) -> Vec<Event> {
    bytes(&format!("{name}.jsonl"))
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| Event::from_json_slice(l).expect("workload events are valid"))
        .collect()
}
