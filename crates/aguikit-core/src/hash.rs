//! The hasher of every map keyed by strings someone else chooses: message, tool-call, run
//! and thread ids from a client, an agent or an upstream.
//!
//! An unkeyed hash lets whoever picks the keys pick colliding ones: 40,000 such ids turned
//! a 0.13 s `/api/inspect` into 23 s (every insert probing every earlier key). [`RandomState`]
//! is keyed with a seed drawn at random once per process (and varied per map), so colliding
//! keys cannot be computed in advance, and it stays about as fast as an unkeyed
//! multiply-rotate hash on short ids (it is foldhash's `fast` variant; the standard
//! library's SipHash costs about 40% more per verified event).
//!
//! ```
//! use aguikit_core::hash::{HashMap, new_map};
//! let mut seen: HashMap<String, u64> = new_map();
//! seen.insert("msg-1".into(), 1);
//! assert_eq!(seen.get("msg-1"), Some(&1));
//! ```

/// A keyed [`BuildHasher`](std::hash::BuildHasher) with a random per-process seed.
pub type RandomState = foldhash::fast::RandomState;

/// A `HashMap` with the keyed [`RandomState`].
pub type HashMap<K, V> = std::collections::HashMap<K, V, RandomState>;

/// A `HashSet` with the keyed [`RandomState`].
pub type HashSet<K> = std::collections::HashSet<K, RandomState>;

/// An empty [`HashMap`] (`HashMap::new` is only for the standard hasher).
pub fn new_map<K, V>() -> HashMap<K, V> {
    HashMap::with_hasher(RandomState::default())
}

/// An empty [`HashSet`].
pub fn new_set<K>() -> HashSet<K> {
    HashSet::with_hasher(RandomState::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    /// The multiply-rotate hash the verifier keyed its ids with before (FxHash-style, fed
    /// eight bytes at a time, no key): here to build keys that collide under it.
    fn unkeyed(bytes: &[u8]) -> u64 {
        const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let add = |h: u64, w: u64| (h.rotate_left(5) ^ w).wrapping_mul(SEED);
        let mut h = 0;
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            h = add(h, u64::from_le_bytes(w));
        }
        add(h, 0xff)
    }

    /// 2^k printable ids of 16·k bytes that all hash alike under [`unkeyed`]: k two-word
    /// blocks, each with two variants leading to the same state (a multi-collision).
    fn colliding(k: usize) -> Vec<String> {
        const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let f = |h: u64, w: u64| (h.rotate_left(5) ^ w).wrapping_mul(SEED);
        let word = |n: u64| {
            // Eight printable bytes from a counter.
            let mut b = [0u8; 8];
            let mut n = n;
            for x in &mut b {
                *x = b'A' + (n % 26) as u8;
                n /= 26;
            }
            u64::from_le_bytes(b)
        };
        let mut state = 0u64;
        let mut blocks = Vec::new();
        let mut n = 0u64;
        for _ in 0..k {
            let a = word(n);
            n += 1;
            let xa = f(state, a).rotate_left(5);
            loop {
                let a2 = word(n);
                n += 1;
                let d = xa ^ f(state, a2).rotate_left(5);
                if d.to_le_bytes().iter().all(|&x| x < 0x80) {
                    // Per byte, a printable b whose b ^ d is printable too.
                    let pick = |x: u8| {
                        (0x21u8..0x7f)
                            .find(|p| (0x21..0x7f).contains(&(p ^ x)))
                            .unwrap()
                    };
                    let b = u64::from_le_bytes(d.to_le_bytes().map(pick));
                    let b2 = b ^ d;
                    assert_eq!(f(f(state, a), b), f(f(state, a2), b2));
                    blocks.push([(a, b), (a2, b2)]);
                    state = f(f(state, a), b);
                    break;
                }
            }
        }
        (0..1u32 << k)
            .map(|bits| {
                let mut id = Vec::new();
                for (i, pair) in blocks.iter().enumerate() {
                    let (x, y) = pair[(bits >> i) as usize & 1];
                    id.extend_from_slice(&x.to_le_bytes());
                    id.extend_from_slice(&y.to_le_bytes());
                }
                String::from_utf8(id).unwrap()
            })
            .collect()
    }

    #[test]
    fn keys_built_to_collide_under_an_unkeyed_hash_do_not_collide_here() {
        let ids = colliding(10);
        assert_eq!(ids.len(), 1024);
        let unkeyed: std::collections::HashSet<u64> =
            ids.iter().map(|id| unkeyed(id.as_bytes())).collect();
        assert_eq!(unkeyed.len(), 1, "the ids collide under the unkeyed hash");
        let state = RandomState::default();
        let keyed: std::collections::HashSet<u64> =
            ids.iter().map(|id| state.hash_one(id)).collect();
        assert!(keyed.len() > 1000, "{} distinct", keyed.len());
    }

    #[test]
    fn the_hash_is_keyed() {
        // Two maps hash a key differently: their seeds differ.
        let (a, b) = (RandomState::default(), RandomState::default());
        let differ =
            (0..16).any(|i| a.hash_one(format!("id-{i}")) != b.hash_one(format!("id-{i}")));
        assert!(differ);
        let mut m = new_map();
        m.insert("k", 1);
        assert_eq!(m["k"], 1);
        let mut s = new_set();
        assert!(s.insert("k"));
    }
}
