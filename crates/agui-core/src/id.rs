//! Random ids: thread, run and message ids, and run nonces, all from random (v4) UUIDs
//! drawn from the operating system's generator.
//!
//! ```
//! let (a, b) = (agui_core::id::random_uuid(), agui_core::id::random_uuid());
//! assert_ne!(a, b);
//! assert_eq!(a.len(), 36);
//! assert_eq!(agui_core::id::random_hex(16).len(), 16);
//! ```

/// A random UUID v4 in its hyphenated form (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`).
pub fn random_uuid() -> String {
    uuid::Uuid::new_v4().hyphenated().to_string()
}

/// `len` (at most 32) random lowercase hex digits, for nonces inside other ids: the start
/// of a v4 UUID without its hyphens.
pub fn random_hex(len: usize) -> String {
    let mut hex = uuid::Uuid::new_v4().simple().to_string();
    hex.truncate(len);
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_v4_and_distinct() {
        let (a, b) = (random_uuid(), random_uuid());
        assert_ne!(a, b);
        for id in [&a, &b] {
            let parsed = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(parsed.get_version_num(), 4);
            assert_eq!(id.len(), 36);
        }
    }

    #[test]
    fn hex_nonces() {
        let n = random_hex(16);
        assert_eq!(n.len(), 16);
        assert!(
            n.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_ne!(random_hex(16), random_hex(16));
        assert_eq!(random_hex(64).len(), 32);
    }
}
