//! The fast JSON reader against the serde path on arbitrary bytes (`aguikit_core::differential::json_reader`).
//! Seeds: `fuzz/seeds/json_reader` (replayed on stable by `cargo test -p aguikit-core`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    aguikit_core::differential::json_reader(input);
});
