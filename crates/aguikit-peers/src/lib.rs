//! # aguikit-peers
//!
//! The test harness for the peers we did not write, shared by the interop tests of every
//! crate (a dev-dependency only): the official TypeScript client (`@ag-ui/client`,
//! `ts-client/client.mjs`) and the official Python SDK server (`py-server/server.py`),
//! from the `interop` folder of the shared test data.
//!
//! [`interop_dir`] copies that folder to `<workspace>/target/interop` (the shared data is
//! read-only; the installs stay between runs, the sources are refreshed) and runs its
//! `setup.sh --no-browser` (npm and pip, from the registries) once per test process. Node,
//! npm and python3 are needed: without them, or when the setup fails, the tests fail, unless
//! `AGUI_SKIP_INTEROP=1`, which skips them with a printed notice. `AGUI_SHARED_DIR` says
//! where the shared data is (default: `shared/` beside the workspace).
//!
//! [`scripted`] is a loopback HTTP server that answers each request with the bytes a test
//! scripts (framing, chunking, pauses, abrupt closes), for the client crates' tests.
#![warn(missing_debug_implementations, missing_docs)]

pub mod scripted;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The shared test data: `AGUI_SHARED_DIR`, else `shared/` beside the workspace.
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("AGUI_SHARED_DIR") {
        Some(d) => PathBuf::from(d),
        None => workspace().join("../shared"),
    }
}

/// The workspace root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Whether `AGUI_SKIP_INTEROP=1` asks to skip the interop tests.
pub fn skip_requested() -> bool {
    std::env::var("AGUI_SKIP_INTEROP").is_ok_and(|v| v == "1")
}

/// The Python server's well-formed scenarios (all but `slow`, which takes 2 s a run).
pub const WELL_FORMED: [&str; 24] = [
    "chat",
    "steps",
    "tools",
    "frontend_tool",
    "state",
    "echo",
    "messages_snapshot",
    "rich_snapshot",
    "activity",
    "reasoning",
    "custom_raw",
    "subagents",
    "chunks",
    "interrupt",
    "cancelled",
    "run_error",
    "two_runs",
    "unicode",
    "fragmented",
    "sse_variants",
    "large",
    "unknown_event",
    "all",
    "connect",
];

/// Copies `from` into `to`, leaving out install and run products (`node_modules`, `.venv`,
/// `out`, `dist`); the copies are writable (the shared data is read-only).
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if matches!(
            name.to_str(),
            Some("node_modules" | ".venv" | "out" | "dist")
        ) {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
            let mut perms = std::fs::metadata(&target)?.permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            std::fs::set_permissions(&target, perms)?;
        }
    }
    Ok(())
}

/// `<workspace>/target/interop`, copied and set up once per test process (with an `out/`
/// folder for port files and logs), or why it cannot be.
pub fn setup() -> Result<&'static Path, String> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        for tool in ["node", "npm", "python3"] {
            let found = Command::new(tool)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !found {
                return Err(format!(
                    "{tool} is not installed (the peers need Node 20+ and Python 3.10+)"
                ));
            }
        }
        let source = shared_dir().join("interop");
        if !source.join("ts-client/client.mjs").exists() {
            return Err(format!(
                "no interop folder at {} (set AGUI_SHARED_DIR)",
                source.display()
            ));
        }
        let target = workspace().join("target/interop");
        // Copied when absent; the sources are refreshed otherwise, the installs kept.
        copy_tree(&source, &target).map_err(|e| format!("copying interop: {e}"))?;
        let out = Command::new("bash")
            .args(["setup.sh", "--no-browser"])
            .current_dir(&target)
            .output()
            .map_err(|e| format!("running setup.sh: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "setup.sh --no-browser failed:\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        std::fs::create_dir_all(target.join("out")).map_err(|e| e.to_string())?;
        Ok(target)
    })
    .as_ref()
    .map(PathBuf::as_path)
    .map_err(Clone::clone)
}

/// The set-up interop folder; `None`, with a printed notice, when `AGUI_SKIP_INTEROP=1`.
///
/// # Panics
///
/// When the peers cannot be set up (see [`setup`]) and skipping was not asked for.
pub fn interop_dir() -> Option<&'static Path> {
    if skip_requested() {
        eprintln!("SKIPPED interop test (AGUI_SKIP_INTEROP=1)");
        return None;
    }
    match setup() {
        Ok(dir) => Some(dir),
        Err(why) => panic!("interop test cannot run: {why} (set AGUI_SKIP_INTEROP=1 to skip)"),
    }
}

/// A file in `dir/out` named after `tag`, unique to this process and call (tests in one
/// process run in parallel: each peer needs its own port file), removed if left over.
pub fn port_file(dir: &Path, tag: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = dir
        .join("out")
        .join(format!("{tag}-{}-{n}.port", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// Reads the port a peer writes to `port_file` once it listens, waiting up to `limit`;
/// `None` when it does not within the limit.
pub fn read_port(port_file: &Path, limit: Duration) -> Option<u16> {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if let Ok(text) = std::fs::read_to_string(port_file)
            && let Ok(port) = text.trim().parse()
        {
            return Some(port);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// The official Python SDK server (`py-server/server.py`) on a free port, killed when
/// dropped.
#[derive(Debug)]
pub struct PyServer {
    child: Child,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
}

impl PyServer {
    /// Starts the server in the set-up interop folder `dir` and waits (up to 30 s) for its
    /// port; `tag` names its port file.
    ///
    /// # Panics
    ///
    /// When it cannot be started, exits, or writes no port in time.
    pub fn start(dir: &Path, tag: &str) -> PyServer {
        let port_file = port_file(dir, tag);
        let child = Command::new(dir.join(".venv/bin/python"))
            .arg("py-server/server.py")
            .args(["--port", "0", "--port-file"])
            .arg(&port_file)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("py-server starts");
        let mut server = PyServer { child, port: 0 };
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(30) {
            if let Some(port) = read_port(&port_file, Duration::from_millis(100)) {
                server.port = port;
                return server;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("py-server exited: {status}");
            }
        }
        panic!("py-server wrote no port file");
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The agent endpoint, `http://127.0.0.1:PORT/agent`.
    pub fn url(&self) -> String {
        format!("{}/agent", self.base())
    }
}

impl Drop for PyServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `node ts-client/client.mjs URL ARGS` in the interop folder `dir`: the official client,
/// to be run (it prints one JSON report; see [`report`]).
pub fn ts_client(dir: &Path, url: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new("node");
    cmd.arg("ts-client/client.mjs")
        .arg(url)
        .args(args)
        .current_dir(dir);
    cmd
}

/// The fields of a client's run report (`client.mjs`, `agui run --json`) that say what a
/// user sees of a run: how it ended, its result or error, and the thread afterwards
/// (messages, state, pending interrupts); not how it got there (event types, timings).
pub const USER_VISIBLE: [&str; 10] = [
    "ok",
    "terminal",
    "outcome",
    "interrupts",
    "pendingToolCallIds",
    "runError",
    "result",
    "messages",
    "state",
    "pendingInterrupts",
];

/// The JSON report a peer printed on its standard output.
///
/// # Panics
///
/// When there is none, with what it printed on both outputs.
pub fn report(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "client.mjs printed no report ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_tree_leaves_out_installs_and_makes_copies_writable() {
        let root = std::env::temp_dir().join(format!("aguikit-peers-{}", std::process::id()));
        let (from, to) = (root.join("from"), root.join("to"));
        std::fs::create_dir_all(from.join("node_modules/x")).unwrap();
        std::fs::create_dir_all(from.join("sub")).unwrap();
        std::fs::write(from.join("sub/a.txt"), "a").unwrap();
        std::fs::write(from.join("node_modules/x/b.txt"), "b").unwrap();
        let mut perms = std::fs::metadata(from.join("sub/a.txt"))
            .unwrap()
            .permissions();
        perms.set_readonly(true);
        std::fs::set_permissions(from.join("sub/a.txt"), perms).unwrap();
        copy_tree(&from, &to).unwrap();
        assert_eq!(std::fs::read_to_string(to.join("sub/a.txt")).unwrap(), "a");
        assert!(!to.join("node_modules").exists());
        assert!(
            !std::fs::metadata(to.join("sub/a.txt"))
                .unwrap()
                .permissions()
                .readonly()
        );
        // Again over the copy: the sources are refreshed.
        copy_tree(&from, &to).unwrap();
        let mut perms = std::fs::metadata(from.join("sub/a.txt"))
            .unwrap()
            .permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(from.join("sub/a.txt"), perms).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn port_files_are_unique_and_ports_are_read() {
        let root = std::env::temp_dir().join(format!("aguikit-peers-port-{}", std::process::id()));
        std::fs::create_dir_all(root.join("out")).unwrap();
        let (a, b) = (port_file(&root, "t"), port_file(&root, "t"));
        assert_ne!(a, b);
        assert_eq!(read_port(&a, Duration::from_millis(60)), None);
        std::fs::write(&a, "4242\n").unwrap();
        assert_eq!(read_port(&a, Duration::from_secs(1)), Some(4242));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
