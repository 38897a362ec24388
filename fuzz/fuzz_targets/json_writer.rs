//! The events' own JSON writer against `serde_json::to_vec` for whatever decodes from arbitrary bytes (`aguikit_core::differential::json_writer`).
//! Seeds: `fuzz/seeds/json_writer` (replayed on stable by `cargo test -p aguikit-core`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| aguikit_core::differential::json_writer(input));
