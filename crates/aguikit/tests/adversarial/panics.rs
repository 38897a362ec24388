//! Row 1: a key of 199 ASCII bytes and a two-byte character, nested past the depth limit,
//! panicked the connection while its path was named, and each panic leaked a connection
//! slot until every API route answered `503 too_many_connections`.

use crate::common::TOKEN;
use crate::server::{run_body, start};

#[tokio::test]
async fn a_path_cut_inside_a_character_neither_panics_nor_leaks_connections() {
    let server = start(
        &["--store", "memory", "--max-connections", "3"],
        &[("AGUI_TOKEN", TOKEN)],
    )
    .await;
    let mut deep = serde_json::json!(1);
    for _ in 0..100 {
        deep = serde_json::json!([deep]);
    }
    let mut body = run_body("t", "r", "hi");
    body[format!("{}é", "a".repeat(199))] = deep;
    let body = body.to_string();
    for _ in 0..8 {
        let (status, _, answer) = server.http("POST", "/agent", Some(TOKEN), &body).await;
        assert_eq!(status, 400, "{answer}");
        let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(v["error"], "too_deep");
    }
    let (status, _, answer) = server.http("GET", "/agents", Some(TOKEN), "").await;
    assert_eq!(status, 200, "{answer}");
    let (status, _, answer) = server
        .http(
            "POST",
            "/agent",
            Some(TOKEN),
            &run_body("t", "r2", "hi").to_string(),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("RUN_FINISHED"), "{answer}");
    assert!(!server.log().contains("panicked"), "{}", server.log());
}
