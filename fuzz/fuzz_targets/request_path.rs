//! The server's request path on arbitrary bytes (see `fuzz/common/request_path.rs`):
//! `cargo +nightly fuzz run request_path fuzz/seeds/request_path`. The seeds are replayed on
//! stable by `cargo test -p aguikit-server --test fuzz_smoke`.
#![no_main]

#[path = "../common/request_path.rs"]
mod request_path;

libfuzzer_sys::fuzz_target!(|data: &[u8]| request_path::check(data));
