//! Fresh ids for what you create: threads, runs, messages, tool calls, interrupts. Every
//! aguikit crate makes its ids here: random (v4) UUIDs drawn from the operating system's
//! generator. Each thread fetches the random bytes of many ids at once (one `getrandom`
//! call for 32 ids rather than one per id, which was several system calls per run on both
//! sides of a connection); no byte is handed out twice.
//!
//! ```
//! use aguikit_core::event::TextMessageStart;
//! use aguikit_core::id::random_uuid;
//!
//! let (a, b) = (random_uuid(), random_uuid());
//! assert_ne!(a, b);
//! assert_eq!(a.len(), 36);
//! let start = TextMessageStart::new(random_uuid());
//! assert_eq!(start.message_id.len(), 36);
//! assert_eq!(aguikit_core::id::random_hex(16).len(), 16);
//! ```

/// Random bytes of this many ids are fetched at once.
const POOL_IDS: usize = 32;

thread_local! {
    /// Random bytes from the operating system, and how many of them are used.
    static POOL: std::cell::RefCell<([u8; 16 * POOL_IDS], usize)> =
        const { std::cell::RefCell::new(([0; 16 * POOL_IDS], 16 * POOL_IDS)) };
}

/// A random v4 UUID: 122 bits from the operating system's generator.
fn new_v4() -> uuid::Uuid {
    let bytes = POOL.with_borrow_mut(|(pool, used)| {
        if *used == pool.len() {
            if getrandom::fill(pool).is_err() {
                return None;
            }
            *used = 0;
        }
        let mut b = [0u8; 16];
        b.copy_from_slice(&pool[*used..*used + 16]);
        // Used bytes are not kept.
        pool[*used..*used + 16].fill(0);
        *used += 16;
        Some(b)
    });
    match bytes {
        Some(b) => uuid::Builder::from_random_bytes(b).into_uuid(),
        // The generator failed: uuid asks it again for this one id (and reports it).
        None => uuid::Uuid::new_v4(),
    }
}

/// A random UUID v4 in its hyphenated form (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`): the
/// id of a new thread, run, message or tool call.
pub fn random_uuid() -> String {
    new_v4().hyphenated().to_string()
}

/// `len` (at most 32) random lowercase hex digits, for nonces inside other ids and for
/// secrets such as API tokens (several calls for more than 32): the start of a v4 UUID
/// without its hyphens.
pub fn random_hex(len: usize) -> String {
    let mut hex = new_v4().simple().to_string();
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
    fn many_ids_are_distinct() {
        // Several refills of the pool, on two threads.
        let other = std::thread::spawn(|| (0..200).map(|_| random_uuid()).collect::<Vec<_>>());
        let mut all: Vec<String> = (0..200).map(|_| random_uuid()).collect();
        all.extend(other.join().unwrap());
        for id in &all {
            assert_eq!(uuid::Uuid::parse_str(id).unwrap().get_version_num(), 4);
        }
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
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
