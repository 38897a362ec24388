//! The PostgreSQL backend: several server instances share threads; live tails follow appends
//! made through any instance (LISTEN/NOTIFY, with a once-a-second poll as a fallback for a
//! missed notification).
//!
//! Every table lives in one schema, named at connection (several stores can share a
//! database). Thread and run ids are stored as `bytea`, so any string, even one with a NUL
//! character that `text` refuses, is kept verbatim; every value goes through a query
//! parameter. An append is one transaction that locks the thread's row, so sequence numbers
//! stay contiguous whichever instance writes; `append` returns after the commit, which
//! PostgreSQL makes durable (with its default `synchronous_commit = on`).

use crate::notify::Notifier;
use crate::prepare::prepare;
use crate::{
    EventStore, RawEvent, Result, RunInfo, RunStatus, StoreError, StoredEvent, ThreadInfo,
};
use agui_core::Event;
use futures_util::future::BoxFuture;
use futures_util::stream::{BoxStream, StreamExt};
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;
use tokio_postgres::{AsyncMessage, Client, NoTls};

struct Inner {
    schema: String,
    writer: tokio::sync::Mutex<Client>,
    reader: Client,
    /// Kept so that the LISTEN connection stays open.
    _listener: Client,
    notifier: Arc<Notifier>,
}

/// An [`EventStore`] in a PostgreSQL schema. Cheap to clone (shared).
#[derive(Clone)]
pub struct PostgresStore {
    inner: Arc<Inner>,
}

fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}

fn pg(e: tokio_postgres::Error) -> StoreError {
    // The server's own message says more than the client's "db error".
    match e.as_db_error() {
        Some(db) => StoreError::Backend(format!("postgres: {}", db.message())),
        None => backend(e),
    }
}

/// A schema name usable unquoted: lower-case ASCII letters, digits and `_`, not starting
/// with a digit, at most 63 bytes. Identifiers cannot be query parameters, hence the check.
fn valid_schema(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

async fn client(url: &str) -> Result<Client> {
    let (client, conn) = tokio_postgres::connect(url, NoTls).await.map_err(pg)?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing_free_log(&e);
        }
    });
    Ok(client)
}

fn tracing_free_log(_e: &tokio_postgres::Error) {
    // A lost connection surfaces as an error on the next query; nothing to do here.
}

impl PostgresStore {
    /// Connects to `url` and uses (creating when absent) the tables of `schema`.
    pub async fn connect(url: &str, schema: &str) -> Result<PostgresStore> {
        if !valid_schema(schema) {
            return Err(StoreError::Invalid(format!(
                "schema name {schema:?}: use lower-case letters, digits and _ (at most 63)"
            )));
        }
        let writer = client(url).await?;
        let reader = client(url).await?;
        let ddl = format!(
            "CREATE SCHEMA IF NOT EXISTS {s};
             CREATE TABLE IF NOT EXISTS {s}.threads (
                 tid BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                 thread_id BYTEA NOT NULL UNIQUE,
                 last_seq BIGINT NOT NULL
             );
             CREATE TABLE IF NOT EXISTS {s}.runs (
                 tid BIGINT NOT NULL,
                 run_id BYTEA NOT NULL,
                 parent_run_id BYTEA,
                 status TEXT NOT NULL,
                 first_seq BIGINT NOT NULL,
                 last_seq BIGINT NOT NULL,
                 PRIMARY KEY (tid, run_id)
             );
             CREATE TABLE IF NOT EXISTS {s}.events (
                 tid BIGINT NOT NULL,
                 seq BIGINT NOT NULL,
                 run_id BYTEA NOT NULL,
                 body BYTEA NOT NULL,
                 PRIMARY KEY (tid, seq)
             );
             CREATE TABLE IF NOT EXISTS {s}.leases (
                 thread_id BYTEA NOT NULL,
                 run_id BYTEA NOT NULL,
                 until_ms BIGINT NOT NULL,
                 PRIMARY KEY (thread_id, run_id)
             );",
            s = schema
        );
        // Two instances may create the schema at once: serialise with an advisory lock.
        writer
            .batch_execute(&format!(
                "BEGIN; SELECT pg_advisory_xact_lock(hashtext('agui-store:{schema}')); {ddl} COMMIT;"
            ))
            .await
            .map_err(pg)?;

        let notifier = Arc::new(Notifier::default());
        let (listener, mut conn) = tokio_postgres::connect(url, NoTls).await.map_err(pg)?;
        let n = notifier.clone();
        tokio::spawn(async move {
            let mut messages = futures_util::stream::poll_fn(move |cx| conn.poll_message(cx));
            while let Some(Ok(message)) = messages.next().await {
                if let AsyncMessage::Notification(note) = message {
                    match note.payload() {
                        "" => n.notify_all(),
                        thread => n.notify(thread, 0),
                    }
                }
            }
        });
        listener
            .batch_execute(&format!("LISTEN {schema}"))
            .await
            .map_err(pg)?;
        Ok(PostgresStore {
            inner: Arc::new(Inner {
                schema: schema.to_owned(),
                writer: tokio::sync::Mutex::new(writer),
                reader,
                _listener: listener,
                notifier,
            }),
        })
    }

    /// Drops the store's schema and everything in it (for tests and tear-down).
    pub async fn drop_schema(&self) -> Result<()> {
        let w = self.inner.writer.lock().await;
        w.batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {} CASCADE",
            self.inner.schema
        ))
        .await
        .map_err(pg)
    }

    async fn thread_row(&self, c: &Client, thread: &str) -> Result<Option<(i64, u64)>> {
        let row = c
            .query_opt(
                &format!(
                    "SELECT tid, last_seq FROM {}.threads WHERE thread_id = $1",
                    self.inner.schema
                ),
                &[&thread.as_bytes()],
            )
            .await
            .map_err(pg)?;
        Ok(row.map(|r| (r.get(0), r.get::<_, i64>(1) as u64)))
    }
}

fn text(b: Vec<u8>) -> String {
    String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

impl EventStore for PostgresStore {
    fn append<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        Box::pin(async move {
            let prepared = prepare(thread, run, events)?;
            let s = &self.inner.schema;
            let mut w = self.inner.writer.lock().await;
            if prepared.bodies.is_empty() {
                drop(w);
                let last = self
                    .thread_row(&self.inner.reader, thread)
                    .await?
                    .map_or(0, |(_, l)| l);
                return Ok(last + 1..last + 1);
            }
            let tx = w.transaction().await.map_err(pg)?;
            tx.execute(
                &format!(
                    "INSERT INTO {s}.threads (thread_id, last_seq) VALUES ($1, 0)
                     ON CONFLICT (thread_id) DO NOTHING"
                ),
                &[&thread.as_bytes()],
            )
            .await
            .map_err(pg)?;
            let row = tx
                .query_one(
                    &format!(
                        "SELECT tid, last_seq FROM {s}.threads WHERE thread_id = $1 FOR UPDATE"
                    ),
                    &[&thread.as_bytes()],
                )
                .await
                .map_err(pg)?;
            let (tid, last): (i64, i64) = (row.get(0), row.get(1));
            let status: Option<String> = tx
                .query_opt(
                    &format!("SELECT status FROM {s}.runs WHERE tid = $1 AND run_id = $2"),
                    &[&tid, &run.as_bytes()],
                )
                .await
                .map_err(pg)?
                .map(|r| r.get(0));
            if status.as_deref().is_some_and(|st| st != "running") {
                return Err(StoreError::RunClosed {
                    thread: thread.to_owned(),
                    run: run.to_owned(),
                });
            }
            if let Some(p) = &prepared.parent {
                let found = tx
                    .query_opt(
                        &format!("SELECT 1 FROM {s}.runs WHERE tid = $1 AND run_id = $2"),
                        &[&tid, &p.as_bytes()],
                    )
                    .await
                    .map_err(pg)?
                    .is_some();
                if !found {
                    return Err(StoreError::UnknownRun {
                        thread: thread.to_owned(),
                        run: p.clone(),
                    });
                }
            }
            let first = last + 1;
            let end = first + prepared.bodies.len() as i64;
            let bodies: Vec<&[u8]> = prepared.bodies.iter().map(Vec::as_slice).collect();
            tx.execute(
                &format!(
                    "INSERT INTO {s}.events (tid, seq, run_id, body)
                     SELECT $1, $2::BIGINT + u.i - 1, $3, u.body
                     FROM unnest($4::BYTEA[]) WITH ORDINALITY AS u(body, i)"
                ),
                &[&tid, &first, &run.as_bytes(), &bodies],
            )
            .await
            .map_err(pg)?;
            let status = prepared.closes.unwrap_or(RunStatus::Running).as_str();
            let parent = prepared.parent.as_deref().map(str::as_bytes);
            tx.execute(
                &format!(
                    "INSERT INTO {s}.runs (tid, run_id, parent_run_id, status, first_seq, last_seq)
                     VALUES ($1, $2, $3, $4, $5, $6)
                     ON CONFLICT (tid, run_id) DO UPDATE SET
                        parent_run_id = coalesce({s}.runs.parent_run_id, excluded.parent_run_id),
                        status = excluded.status,
                        last_seq = excluded.last_seq"
                ),
                &[&tid, &run.as_bytes(), &parent, &status, &first, &(end - 1)],
            )
            .await
            .map_err(pg)?;
            tx.execute(
                &format!("UPDATE {s}.threads SET last_seq = $1 WHERE tid = $2"),
                &[&(end - 1), &tid],
            )
            .await
            .map_err(pg)?;
            // Delivered at commit to every instance's listener. A payload cannot hold NUL
            // and has a size limit: such threads wake every tail instead.
            let payload = if thread.contains('\0') || thread.len() > 7000 {
                ""
            } else {
                thread
            };
            tx.execute("SELECT pg_notify($1, $2)", &[s, &payload])
                .await
                .map_err(pg)?;
            tx.commit().await.map_err(pg)?;
            drop(w);
            self.inner.notifier.notify(thread, (end - 1) as u64);
            Ok(first as u64..end as u64)
        })
    }

    fn read_raw<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<RawEvent>>> {
        Box::pin(async move {
            let c = &self.inner.reader;
            let (tid, last) = self
                .thread_row(c, thread)
                .await?
                .ok_or_else(|| StoreError::UnknownThread(thread.to_owned()))?;
            if from_seq > last + 1 {
                return Err(StoreError::SequenceOutOfRange {
                    thread: thread.to_owned(),
                    seq: from_seq,
                    last,
                });
            }
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let rows = c
                .query(
                    &format!(
                        "SELECT seq, run_id, body FROM {}.events
                         WHERE tid = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq LIMIT $4",
                        self.inner.schema
                    ),
                    &[&tid, &(from_seq as i64), &(last as i64), &limit],
                )
                .await
                .map_err(pg)?;
            Ok(rows
                .into_iter()
                .map(|r| RawEvent {
                    seq: r.get::<_, i64>(0) as u64,
                    run_id: text(r.get(1)),
                    json: r.get(2),
                })
                .collect())
        })
    }

    fn threads(&self) -> BoxFuture<'_, Result<Vec<ThreadInfo>>> {
        Box::pin(async move {
            let s = &self.inner.schema;
            let rows = self
                .inner
                .reader
                .query(
                    &format!(
                        "SELECT t.thread_id, t.last_seq, (SELECT count(*) FROM {s}.runs r WHERE r.tid = t.tid)
                         FROM {s}.threads t ORDER BY t.tid"
                    ),
                    &[],
                )
                .await
                .map_err(pg)?;
            Ok(rows
                .into_iter()
                .map(|r| ThreadInfo {
                    thread_id: text(r.get(0)),
                    last_seq: r.get::<_, i64>(1) as u64,
                    run_count: r.get::<_, i64>(2) as u64,
                })
                .collect())
        })
    }

    fn thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<ThreadInfo>> {
        Box::pin(async move {
            let s = &self.inner.schema;
            let row = self
                .inner
                .reader
                .query_opt(
                    &format!(
                        "SELECT t.last_seq, (SELECT count(*) FROM {s}.runs r WHERE r.tid = t.tid)
                         FROM {s}.threads t WHERE t.thread_id = $1"
                    ),
                    &[&thread.as_bytes()],
                )
                .await
                .map_err(pg)?
                .ok_or_else(|| StoreError::UnknownThread(thread.to_owned()))?;
            Ok(ThreadInfo {
                thread_id: thread.to_owned(),
                last_seq: row.get::<_, i64>(0) as u64,
                run_count: row.get::<_, i64>(1) as u64,
            })
        })
    }

    fn runs<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<RunInfo>>> {
        Box::pin(async move {
            let c = &self.inner.reader;
            let (tid, _) = self
                .thread_row(c, thread)
                .await?
                .ok_or_else(|| StoreError::UnknownThread(thread.to_owned()))?;
            let rows = c
                .query(
                    &format!(
                        "SELECT run_id, parent_run_id, status, first_seq, last_seq FROM {}.runs
                         WHERE tid = $1 ORDER BY first_seq",
                        self.inner.schema
                    ),
                    &[&tid],
                )
                .await
                .map_err(pg)?;
            Ok(rows
                .into_iter()
                .map(|r| RunInfo {
                    run_id: text(r.get(0)),
                    parent_run_id: r.get::<_, Option<Vec<u8>>>(1).map(text),
                    status: RunStatus::parse(r.get(2)).unwrap_or(RunStatus::Running),
                    first_seq: r.get::<_, i64>(3) as u64,
                    last_seq: r.get::<_, i64>(4) as u64,
                })
                .collect())
        })
    }

    fn subscribe(&self, thread: &str) -> tokio::sync::watch::Receiver<u64> {
        self.inner.notifier.subscribe(thread)
    }

    fn poll_interval(&self) -> Option<Duration> {
        Some(Duration::from_secs(1))
    }

    fn renew_lease<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let s = &self.inner.schema;
            let until = i64::try_from(until_ms).unwrap_or(i64::MAX);
            self.inner
                .reader
                .execute(
                    &format!(
                        "INSERT INTO {s}.leases (thread_id, run_id, until_ms) VALUES ($1, $2, $3)
                         ON CONFLICT (thread_id, run_id) DO UPDATE SET until_ms = EXCLUDED.until_ms"
                    ),
                    &[&thread.as_bytes(), &run.as_bytes(), &until],
                )
                .await
                .map_err(pg)?;
            Ok(())
        })
    }

    fn lease<'a>(&'a self, thread: &'a str, run: &'a str) -> BoxFuture<'a, Result<Option<u64>>> {
        Box::pin(async move {
            let s = &self.inner.schema;
            let row = self
                .inner
                .reader
                .query_opt(
                    &format!(
                        "SELECT until_ms FROM {s}.leases WHERE thread_id = $1 AND run_id = $2"
                    ),
                    &[&thread.as_bytes(), &run.as_bytes()],
                )
                .await
                .map_err(pg)?;
            Ok(row.map(|r| r.get::<_, i64>(0).max(0) as u64))
        })
    }

    fn tail(&self, thread: &str, from_seq: u64) -> BoxStream<'static, Result<StoredEvent>> {
        crate::tail_stream(self.clone(), thread, from_seq)
    }
}
