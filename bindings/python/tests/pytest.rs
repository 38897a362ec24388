//! The Python package's test suite (`tests/python`, pytest), run by `cargo test`.
//!
//! Builds nothing itself: the extension module is the `cdylib` cargo built for this test
//! (`target/<profile>/deps/lib_aguikit.so`; the library is also an `rlib` so that cargo
//! builds it for its tests). It is installed, with the package's Python sources,
//! into a virtual environment under `target/python-venv` (created once, with the pinned
//! packages of `tests/requirements.txt` and of the interop peers' Python server, from PyPI),
//! and pytest runs there. The suite also uses the interop peers (`target/interop`, set up by
//! `aguikit-peers`) and the `agui` binary of the same build (`cargo test --workspace` builds
//! it; with `-p aguikit-python` alone, build it first with `cargo build -p aguikit`).
//!
//! Needs Python 3.9+ with `venv` and pip. `AGUI_SKIP_PYTHON=1` skips the whole suite (it is
//! then reported as ignored, never as passed); `AGUI_SKIP_INTEROP=1` skips the tests that
//! need the official peers (pytest reports them as skipped). Extra arguments for pytest go
//! in `AGUI_PYTEST_ARGS` (for example `-k encoder -x`).

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn main() {
    let args = Arguments::from_args();
    let skip = std::env::var("AGUI_SKIP_PYTHON").is_ok_and(|v| v == "1");
    if skip {
        eprintln!(
            "\n*** AGUI_SKIP_PYTHON=1: the Python package's test suite is SKIPPED (reported as ignored, not passed) ***\n"
        );
    }
    let trial = Trial::test("python_suite", run_suite).with_ignored_flag(skip);
    libtest_mimic::run(&args, vec![trial]).exit();
}

/// `target/<profile>`: where cargo put this test's binary (`deps/`) and the cdylib.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(cmd: &mut Command, what: &str) -> Result<String, Failed> {
    let out = cmd
        .output()
        .map_err(|e| format!("{what}: could not start {cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A digest of the files that decide what the environment holds.
fn stamp(files: &[PathBuf]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in files {
        for b in std::fs::read(f).unwrap_or_default() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// `target/python-venv` with the suite's packages, created or updated when needed.
fn venv(target: &Path, requirements: &[PathBuf]) -> Result<PathBuf, Failed> {
    let dir = target.join("python-venv");
    let python = dir.join("bin").join("python");
    if !python.exists() {
        run(
            Command::new("python3").args(["-m", "venv"]).arg(&dir),
            "creating the virtual environment (needs python3 with venv)",
        )?;
    }
    let want = stamp(requirements);
    let stamp_file = dir.join(".aguikit-requirements");
    if std::fs::read_to_string(&stamp_file).ok().as_deref() != Some(want.as_str()) {
        let mut pip = Command::new(&python);
        pip.args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ]);
        for r in requirements {
            pip.arg("-r").arg(r);
        }
        run(&mut pip, "pip install (needs PyPI)")?;
        std::fs::write(&stamp_file, want).map_err(|e| e.to_string())?;
    }
    Ok(python)
}

/// Installs the package (Python sources and the extension module) into the environment.
fn install(python: &Path, module: &Path) -> Result<(), Failed> {
    let site = run(
        Command::new(python).args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ]),
        "finding site-packages",
    )?;
    let pkg = PathBuf::from(site.trim()).join("aguikit");
    let _ = std::fs::remove_dir_all(&pkg);
    std::fs::create_dir_all(&pkg).map_err(|e| e.to_string())?;
    let src = crate_dir().join("python").join("aguikit");
    for entry in std::fs::read_dir(&src).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        if entry.file_type().map_err(|e| e.to_string())?.is_file() {
            std::fs::copy(entry.path(), pkg.join(entry.file_name())).map_err(|e| e.to_string())?;
        }
    }
    std::fs::copy(module, pkg.join("_aguikit.abi3.so"))
        .map_err(|e| format!("copying {}: {e}", module.display()))?;
    Ok(())
}

/// The extension module cargo built with this test: `cargo test` leaves it in `deps/`,
/// `cargo build` also copies it up to `target/<profile>`; the newer of the two is this build's.
fn extension_module(profile: &Path) -> Result<PathBuf, Failed> {
    let candidates = [
        profile.join("deps").join("lib_aguikit.so"),
        profile.join("lib_aguikit.so"),
    ];
    candidates
        .iter()
        .filter_map(|p| Some((std::fs::metadata(p).ok()?.modified().ok()?, p)))
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, p)| p.clone())
        .ok_or_else(|| {
            format!(
                "the extension module was not built (looked for {} and {})",
                candidates[0].display(),
                candidates[1].display()
            )
            .into()
        })
}

fn run_suite() -> Result<(), Failed> {
    let profile = profile_dir();
    let target = profile.parent().expect("target/").to_path_buf();
    let module = extension_module(&profile)?;
    let shared = aguikit_peers::shared_dir();
    let skip_interop = aguikit_peers::skip_requested();
    let interop = if skip_interop {
        eprintln!(
            "*** AGUI_SKIP_INTEROP=1: the Python tests that need the official peers are SKIPPED ***"
        );
        None
    } else {
        Some(aguikit_peers::setup().map_err(|e| format!("interop peers: {e}"))?)
    };
    let requirements = vec![
        crate_dir().join("tests").join("requirements.txt"),
        shared.join("interop/py-server/requirements.txt"),
    ];
    let python = venv(&target, &requirements)?;
    install(&python, &module)?;
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"])
        .arg(crate_dir().join("tests").join("python"))
        .current_dir(crate_dir())
        .env("AGUI_SHARED_DIR", &shared)
        .env("AGUI_BIN", profile.join("agui"))
        .env("PYTHONDONTWRITEBYTECODE", "1");
    if let Some(dir) = interop {
        cmd.env("AGUI_INTEROP_DIR", dir);
    } else {
        cmd.env("AGUI_SKIP_INTEROP", "1");
    }
    if let Ok(extra) = std::env::var("AGUI_PYTEST_ARGS") {
        cmd.args(extra.split_whitespace());
    }
    let mut child = cmd.spawn().map_err(|e| format!("starting pytest: {e}"))?;
    // The suite takes well under a minute; ten is a hang.
    let deadline = std::time::Instant::now() + Duration::from_secs(600);
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return if status.success() {
                Ok(())
            } else {
                Err(format!("pytest failed ({status}); its report is above").into())
            };
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            return Err("pytest did not finish within 10 minutes".into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
