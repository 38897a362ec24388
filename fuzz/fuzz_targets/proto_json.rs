//! The protobuf form against the JSON form for whatever decodes from arbitrary bytes (`aguikit_core::differential::proto_json`).
//! Seeds: `fuzz/seeds/proto_json` (replayed on stable by `cargo test -p aguikit-core`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| aguikit_core::differential::proto_json(input));
