//! The fuzz smoke: every seed of the `request_path` fuzz target (`fuzz/seeds/request_path`,
//! in the repository) through the same check the fuzzer runs, on stable, in `cargo test`.
//! The seeds hold what once broke the request path, so each is also a regression test.
#![allow(missing_docs)]

#[path = "../../../fuzz/common/request_path.rs"]
mod request_path;

#[test]
fn every_seed_of_the_request_path_passes() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/request_path");
    let mut seeds: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    seeds.sort();
    assert!(
        seeds.len() >= 10,
        "the seed corpus is missing: {}",
        dir.display()
    );
    for seed in &seeds {
        let data = std::fs::read(seed).unwrap();
        let name = seed.file_name().unwrap().to_string_lossy().into_owned();
        if let Err(panic) = std::panic::catch_unwind(|| request_path::check(&data)) {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            panic!("seed {name}: {what}");
        }
    }
}
