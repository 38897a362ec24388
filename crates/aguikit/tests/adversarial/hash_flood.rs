//! Row 2: ids chosen to collide in the unkeyed hasher the verifier keyed ids with: 40,000
//! of them made `/api/inspect` of 3.4 MB take 23 s, and a thread stored with them took
//! 20 s to read, folded on a connection thread, freezing `/health`. The hasher is keyed now
//! (`aguikit_core::hash`), and a long thread is folded on a blocking thread.
//! `scripts/hash-flood.py` measures colliding against random ids.

use crate::common::TOKEN;
use crate::server::start;

/// `n` printable ids (n ≤ 2^15) of 240 bytes that all hash alike under the multiply-rotate
/// hash the verifier used before (FxHash's scheme, eight bytes at a time, no key): 15
/// two-word blocks, each with two variants that lead to the same state.
pub fn colliding_ids(n: usize) -> Vec<String> {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let f = |h: u64, w: u64| (h.rotate_left(5) ^ w).wrapping_mul(SEED);
    let word = |mut n: u64| {
        let mut b = [0u8; 8];
        for x in &mut b {
            *x = b'a' + (n % 26) as u8;
            n /= 26;
        }
        u64::from_le_bytes(b)
    };
    let printable = |x: u8| (0x21..0x7f).contains(&x) && x != b'"' && x != b'\\';
    let mut state = 0u64;
    let mut blocks = Vec::new();
    let mut counter = 0u64;
    while blocks.len() < 15 {
        let a = word(counter);
        counter += 1;
        let xa = f(state, a).rotate_left(5);
        let a2 = word(counter);
        counter += 1;
        let d = xa ^ f(state, a2).rotate_left(5);
        let picks: Option<Vec<u8>> = d
            .to_le_bytes()
            .iter()
            .map(|&x| (0x21u8..0x7f).find(|&p| printable(p) && printable(p ^ x)))
            .collect();
        if let Some(b) = picks {
            let b = u64::from_le_bytes(b.try_into().unwrap());
            let b2 = b ^ d;
            blocks.push([(a, b), (a2, b2)]);
            state = f(f(state, a), b);
        }
    }
    (0..n as u32)
        .map(|bits| {
            let mut id = Vec::with_capacity(240);
            for (i, pair) in blocks.iter().enumerate() {
                let (x, y) = pair[(bits >> i) as usize & 1];
                id.extend_from_slice(&x.to_le_bytes());
                id.extend_from_slice(&y.to_le_bytes());
            }
            String::from_utf8(id).unwrap()
        })
        .collect()
}

#[tokio::test]
async fn health_answers_while_colliding_ids_are_read_and_inspected() {
    let server = start(&["--store", "memory"], &[("AGUI_TOKEN", TOKEN)]).await;
    let ids = colliding_ids(20_000);
    let messages: Vec<serde_json::Value> = ids
        .iter()
        .map(|id| serde_json::json!({"id": id, "role": "user", "content": "x"}))
        .collect();
    let body = serde_json::json!({
        "threadId": "flood", "runId": "r1", "messages": messages,
        "state": {}, "tools": [], "context": [], "forwardedProps": {}
    })
    .to_string();
    let (status, _, answer) = server.http("POST", "/agent", Some(TOKEN), &body).await;
    assert_eq!(status, 200, "{}", &answer[..answer.len().min(500)]);
    assert!(answer.contains("RUN_FINISHED"));
    // Two reads of the thread at once, an inspection, and health checks meanwhile: each
    // answers (the exchange gives up after 30 s).
    let mut recording =
        String::from("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n");
    for id in &ids {
        let start =
            serde_json::json!({"type": "TEXT_MESSAGE_START", "messageId": id, "role": "assistant"});
        let end = serde_json::json!({"type": "TEXT_MESSAGE_END", "messageId": id});
        recording.push_str(&format!("{start}\n{end}\n"));
    }
    recording.push_str("{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n");
    let server = std::sync::Arc::new(server);
    // An inspection of a recording of the same ids, meanwhile.
    let inspect = {
        let s = server.clone();
        tokio::spawn(async move {
            s.http("POST", "/api/inspect", Some(TOKEN), &recording)
                .await
        })
    };
    let reads: Vec<_> = (0..2)
        .map(|_| {
            let s = server.clone();
            tokio::spawn(
                async move { s.http("GET", "/agent/threads/flood", Some(TOKEN), "").await },
            )
        })
        .collect();
    for _ in 0..5 {
        let (status, _, body) = server.http("GET", "/health", None, "").await;
        assert_eq!(status, 200, "{body}");
    }
    let (status, _, body) = inspect.await.unwrap();
    assert_eq!(status, 200, "{}", &body[..body.len().min(300)]);
    for r in reads {
        let (status, _, body) = r.await.unwrap();
        assert_eq!(status, 200, "{}", &body[..body.len().min(300)]);
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        // The 20,000 messages and the reply.
        assert!(v["messages"].as_array().unwrap().len() > 20_000);
    }
}
