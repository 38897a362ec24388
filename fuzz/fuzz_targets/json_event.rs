//! `Event::from_json_slice` on arbitrary bytes; whatever decodes must re-encode with
//! `to_json_vec` and decode again to an equal event.
#![no_main]

use aguikit_core::Event;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Ok(event) = Event::from_json_slice(input) else {
        return;
    };
    let json = event.to_json_vec();
    let again = match Event::from_json_slice(&json) {
        Ok(e) => e,
        Err(err) => panic!(
            "re-encoded event does not decode: {err}\njson: {}",
            String::from_utf8_lossy(&json)
        ),
    };
    assert_eq!(event, again, "json: {}", String::from_utf8_lossy(&json));
    // And the encoding is a fixed point.
    assert_eq!(json, again.to_json_vec());
});
