//! Host AG-UI agents over HTTP: the `Agent` trait, `RunContext` emitters and an axum router.
