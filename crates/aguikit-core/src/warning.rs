//! Non-fatal findings made while decoding: unknown material that the reference client strips
//! (unknown properties, unknown union members, legacy `null`s).
//!
//! Decoding never fails for these; it drops what the reference drops. To see what was dropped,
//! run the decode inside [`collect`]:
//!
//! ```
//! use aguikit_core::{Event, warning};
//! let (event, warnings) = warning::collect(|| {
//!     Event::from_json_str(r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"weird"}}"#)
//! });
//! assert!(event.is_ok());
//! assert_eq!(warnings.len(), 1);
//! ```

use std::cell::RefCell;

thread_local! {
    static SINK: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Runs `f` and returns its result with every warning reported during it, in order.
///
/// Nested calls are supported: the inner call gets its own warnings.
pub fn collect<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    let previous = SINK.with(|s| s.borrow_mut().replace(Vec::new()));
    let out = f();
    let warnings = SINK.with(|s| std::mem::replace(&mut *s.borrow_mut(), previous));
    (out, warnings.unwrap_or_default())
}

/// Reports one warning to the innermost active [`collect`], if any; free otherwise.
pub(crate) fn report(message: impl Into<String>) {
    SINK.with(|s| {
        if let Some(list) = s.borrow_mut().as_mut() {
            list.push(message.into());
        }
    });
}
