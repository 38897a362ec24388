//! The shared behavioural suite against every backend.

mod common;

use agui_store::{EventStore, MemoryStore, SqliteStore};
use common::Open;
use libtest_mimic::{Arguments, Trial};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "{prefix}_{}_{}_{}",
        std::process::id(),
        nanos % 1_000_000_000_000,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn memory() -> Open {
    let store = MemoryStore::new();
    Arc::new(move || {
        let s: Arc<dyn EventStore> = Arc::new(store.clone());
        Box::pin(async move { s })
    })
}

fn sqlite() -> Open {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("agui-store-tests");
    let path = dir.join(format!("{}.db", unique("suite")));
    Arc::new(move || {
        let path = path.clone();
        Box::pin(async move {
            let s: Arc<dyn EventStore> = Arc::new(SqliteStore::open(&path).await.unwrap());
            s
        })
    })
}

#[cfg(feature = "postgres")]
fn postgres(url: &str, schema: &str) -> Open {
    let (url, schema) = (url.to_owned(), schema.to_owned());
    Arc::new(move || {
        let (url, schema) = (url.clone(), schema.clone());
        Box::pin(async move {
            let s: Arc<dyn EventStore> = Arc::new(
                agui_store::PostgresStore::connect(&url, &schema)
                    .await
                    .unwrap(),
            );
            s
        })
    })
}

fn trial(
    backend: &'static str,
    name: &'static str,
    case: common::Case,
    make: fn() -> Open,
) -> Trial {
    Trial::test(format!("{backend}::{name}"), move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(case(make()));
        Ok(())
    })
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let pg_url = std::env::var("AGUI_TEST_POSTGRES_URL")
        .ok()
        .filter(|u| !u.is_empty());
    if pg_url.is_none() || cfg!(not(feature = "postgres")) {
        println!(
            "postgres: skipped ({}): reported as ignored, not passed",
            if cfg!(feature = "postgres") {
                "AGUI_TEST_POSTGRES_URL is not set"
            } else {
                "built without the `postgres` feature"
            }
        );
    }
    for (name, case) in common::cases() {
        trials.push(trial("memory", name, case, memory));
        trials.push(trial("sqlite", name, case, sqlite));
        #[cfg(feature = "postgres")]
        if let Some(url) = pg_url.clone() {
            trials.push(Trial::test(format!("postgres::{name}"), move || {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .unwrap();
                // A fresh schema per trial; dropped afterwards, even when the case failed.
                let schema = unique("agui_test");
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    rt.block_on(case(postgres(&url, &schema)))
                }));
                rt.block_on(async {
                    let s = agui_store::PostgresStore::connect(&url, &schema)
                        .await
                        .unwrap();
                    s.drop_schema().await.unwrap();
                });
                if let Err(panic) = outcome {
                    std::panic::resume_unwind(panic);
                }
                Ok(())
            }));
            continue;
        }
        trials.push(Trial::test(format!("postgres::{name}"), || Ok(())).with_ignored_flag(true));
    }
    libtest_mimic::run(&args, trials).exit();
}
