//! Group commit: the store's writes that must be durable (thread claims and appends) go to
//! a few writer tasks. A writer takes every write waiting when it is free and sends them in
//! one round trip as one transaction (`BEGIN`, the writes, `COMMIT`), so that one WAL flush
//! and one transaction's overhead serve the whole group instead of each write paying its
//! own. While one writer waits for its commit, the next gathers the writes that arrive
//! meanwhile. The threads appended to are announced to the other instances' tails
//! (`pg_notify`, one notification per thread) by a task of their own, at most one
//! statement per [`WAKEUP_PACE`], for every group committed since the last.
//!
//! A write that fails inside a group (a deadlock with another process, say) aborts the
//! group's transaction; the group is then written again one write at a time, so that each
//! caller gets its own answer and no write is lost for another's error. A lost connection
//! answers every write of the group with the error: whether its commit happened is unknown,
//! as for a single write.

use super::{Pool, Sql, payload, pg};
use crate::{Result, StoreError};
use futures_util::future::{join_all, join3};
use std::collections::BTreeSet;
use std::sync::{Arc, PoisonError};
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Row, Statement};

/// The most writes one transaction takes.
const MAX_GROUP: usize = 64;

/// One query parameter, owned by its [`Job`].
pub(super) type Param = Box<dyn ToSql + Sync + Send>;

/// What a [`Job`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// [`Sql::claim`] with the job's parameters.
    Claim,
    /// [`Sql::append`] with the job's parameters; wakes the thread's tails once committed.
    Append,
    /// [`Sql::append_if_new`] with the job's parameters; wakes the tails as `Append`.
    AppendIfNew,
}

/// One durable write and where its rows go.
pub(super) struct Job {
    pub kind: Kind,
    /// The thread written (the group's writes are ordered by thread, so that two writers
    /// lock threads in the same order and cannot deadlock each other).
    pub thread: String,
    pub params: Vec<Param>,
    pub reply: oneshot::Sender<Result<Vec<Row>>>,
}

/// The sending side of the writers' queue.
pub(super) type Writes = mpsc::Sender<Job>;

/// Starts `writers` writer tasks (at least one) on the current runtime; they end once the
/// returned sender and every clone of it are dropped and the queue is empty.
pub(super) fn spawn(pool: Arc<Pool>, sql: Arc<Sql>, schema: String, writers: usize) -> Writes {
    let (tx, rx) = mpsc::channel(4 * MAX_GROUP);
    let rx = Arc::new(Mutex::new(rx));
    let writers = writers.max(1);
    let wakeups = Arc::new(Wakeups::new(writers));
    for _ in 0..writers {
        let (pool, sql, rx) = (pool.clone(), sql.clone(), rx.clone());
        let wakeups = wakeups.clone();
        tokio::spawn(async move {
            while let Some(jobs) = gather(&rx).await {
                commit(&pool, &sql, &wakeups, jobs).await;
            }
            wakeups.writer_ended();
        });
    }
    tokio::spawn(send_wakeups(pool, sql, schema, wakeups));
    tx
}

/// The threads whose tails in other instances are to be woken (their appends committed),
/// gathered between two NOTIFYs, and how many writers still run.
struct Wakeups {
    pending: std::sync::Mutex<(BTreeSet<String>, usize)>,
    signal: tokio::sync::Notify,
}

impl Wakeups {
    fn new(writers: usize) -> Wakeups {
        Wakeups {
            pending: std::sync::Mutex::new((BTreeSet::new(), writers)),
            signal: tokio::sync::Notify::new(),
        }
    }

    /// `threads` were appended to (committed).
    fn add<'a>(&self, threads: impl IntoIterator<Item = &'a str>) {
        let mut p = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let before = p.0.len();
        p.0.extend(threads.into_iter().map(str::to_owned));
        if p.0.len() > before {
            drop(p);
            self.signal.notify_one();
        }
    }

    /// A writer ended: the last one ends the wake-ups, once those pending are sent.
    fn writer_ended(&self) {
        let mut p = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        p.1 = p.1.saturating_sub(1);
        drop(p);
        self.signal.notify_one();
    }

    /// The threads pending, and whether every writer ended.
    fn take(&self) -> (Vec<String>, bool) {
        let mut p = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        (std::mem::take(&mut p.0).into_iter().collect(), p.1 == 0)
    }
}

/// How long wake-ups gather after a NOTIFY before the next is sent: the tails of other
/// instances learn of an append at most this much later (they also poll once a second).
/// Under load a thread's appends then share one notification, and one statement carries
/// the wake-ups of many groups (a NOTIFY per group cost the database about 10% of its time
/// per run).
const WAKEUP_PACE: std::time::Duration = std::time::Duration::from_millis(5);

/// Sends the pending wake-ups (one `pg_notify` per thread, in one statement), at most one
/// statement per [`WAKEUP_PACE`]; ends once every writer has ended and nothing is pending
/// (so that the pool's connections close with the store).
async fn send_wakeups(pool: Arc<Pool>, sql: Arc<Sql>, schema: String, wakeups: Arc<Wakeups>) {
    loop {
        let (threads, ended) = wakeups.take();
        if threads.is_empty() {
            if ended {
                return;
            }
            // A signal sent since `take` is kept by `Notify` and ends this wait at once.
            wakeups.signal.notified().await;
            continue;
        }
        let wake: Vec<&str> = threads.iter().map(|t| payload(t)).collect();
        // A wake-up that cannot be sent is made up by the tails' once-a-second poll.
        if let Ok(c) = pool.get().await {
            let _ = c.client.execute(&sql.notify, &[&schema, &wake]).await;
        }
        tokio::time::sleep(WAKEUP_PACE).await;
    }
}

/// Sends `job`'s write to the writers and waits for its rows.
pub(super) async fn run(
    writes: &Writes,
    kind: Kind,
    thread: &str,
    params: Vec<Param>,
) -> Result<Vec<Row>> {
    let (reply, rows) = oneshot::channel();
    let job = Job {
        kind,
        thread: thread.to_owned(),
        params,
        reply,
    };
    let stopped = || StoreError::Backend("postgres: the store's writers have stopped".into());
    writes.send(job).await.map_err(|_| stopped())?;
    rows.await.map_err(|_| stopped())?
}

/// The next group: the first write to come and every one waiting behind it. `None` once
/// the queue is closed and empty.
async fn gather(rx: &Mutex<mpsc::Receiver<Job>>) -> Option<Vec<Job>> {
    let mut rx = rx.lock().await;
    let first = rx.recv().await?;
    let mut jobs = vec![first];
    while jobs.len() < MAX_GROUP {
        match rx.try_recv() {
            Ok(job) => jobs.push(job),
            Err(_) => break,
        }
    }
    Some(jobs)
}

/// The parameters of `job` as the client takes them.
fn refs(job: &Job) -> Vec<&(dyn ToSql + Sync)> {
    job.params
        .iter()
        .map(|p| &**p as &(dyn ToSql + Sync))
        .collect()
}

/// The statements a group uses, prepared on one connection.
struct Prepared {
    claim: Statement,
    append: Statement,
    append_if_new: Statement,
}

impl Prepared {
    fn of(&self, kind: Kind) -> &Statement {
        match kind {
            Kind::Claim => &self.claim,
            Kind::Append => &self.append,
            Kind::AppendIfNew => &self.append_if_new,
        }
    }
}

/// Writes `jobs`, answers each, and has the tails of the threads appended to woken.
async fn commit(pool: &Pool, sql: &Sql, wakeups: &Wakeups, mut jobs: Vec<Job>) {
    // Stable: the writes to one thread keep their order.
    jobs.sort_by(|a, b| a.thread.cmp(&b.thread));
    let answers = match write(pool, sql, &jobs).await {
        Ok(answers) => answers,
        Err(e) => {
            let message = e.to_string();
            jobs.iter()
                .map(|_| Err(StoreError::Backend(message.clone())))
                .collect()
        }
    };
    wakeups.add(
        jobs.iter()
            .zip(&answers)
            .filter(|(j, a)| j.kind != Kind::Claim && a.is_ok())
            .map(|(j, _)| j.thread.as_str()),
    );
    for (job, answer) in jobs.into_iter().zip(answers) {
        let _ = job.reply.send(answer);
    }
}

/// Each job's answer, or the error that answers them all (when no connection could be had).
async fn write(pool: &Pool, sql: &Sql, jobs: &[Job]) -> Result<Vec<Result<Vec<Row>>>> {
    let mut c = pool.get().await?;
    let statements = Prepared {
        claim: c.statement(&sql.claim).await?,
        append: c.statement(&sql.append).await?,
        append_if_new: c.statement(&sql.append_if_new).await?,
    };
    let mut answers: Vec<Option<Result<Vec<Row>>>> = jobs.iter().map(|_| None).collect();
    // The jobs not answered yet, by index; each round answers at least one.
    let mut left: Vec<usize> = (0..jobs.len()).collect();
    while !left.is_empty() {
        if let [i] = left[..] {
            answers[i] = Some(alone(&c.client, &statements, &jobs[i]).await);
            break;
        }
        let group: Vec<&Job> = left.iter().map(|&i| &jobs[i]).collect();
        let outcome = match grouped(&c.client, &statements, &group).await {
            Ok(outcome) => outcome,
            // The writes answered in earlier rounds keep their answers.
            Err(e) => {
                let message = e.to_string();
                for &i in &left {
                    answers[i] = Some(Err(StoreError::Backend(message.clone())));
                }
                break;
            }
        };
        match outcome {
            Outcome::Committed(rows) => {
                for (&i, rows) in left.iter().zip(rows) {
                    answers[i] = Some(Ok(rows));
                }
                break;
            }
            // The write the server refused, alone (for its own error); the rest again.
            Outcome::Refused(Some(k)) => {
                let i = left.remove(k);
                answers[i] = Some(alone(&c.client, &statements, &jobs[i]).await);
            }
            Outcome::Refused(None) => {
                for &i in &left {
                    answers[i] = Some(alone(&c.client, &statements, &jobs[i]).await);
                }
                break;
            }
        }
    }
    Ok(answers
        .into_iter()
        .map(|a| a.unwrap_or_else(|| Err(StoreError::Backend("postgres: write not run".into()))))
        .collect())
}

/// One write in its own transaction.
async fn alone(client: &Client, statements: &Prepared, job: &Job) -> Result<Vec<Row>> {
    let params = refs(job);
    client
        .query(statements.of(job.kind), &params)
        .await
        .map_err(pg)
}

/// How a group's transaction ended (the connection still works).
enum Outcome {
    /// Committed: each write's rows, in order.
    Committed(Vec<Vec<Row>>),
    /// Rolled back because the server refused a write: the first refused (the ones after
    /// it fail only because the transaction was aborted), if any.
    Refused(Option<usize>),
}

/// Writes `jobs` in one transaction.
async fn grouped(client: &Client, statements: &Prepared, jobs: &[&Job]) -> Result<Outcome> {
    let params: Vec<_> = jobs.iter().map(|j| refs(j)).collect();
    // The client sends each request when its future is first polled, and `join3` and
    // `join_all` first poll in order: one round trip, in this order.
    let (begin, rows, commit) = join3(
        client.batch_execute("BEGIN"),
        join_all(
            jobs.iter()
                .zip(&params)
                .map(|(job, p)| client.query(statements.of(job.kind), p)),
        ),
        client.batch_execute("COMMIT"),
    )
    .await;
    begin.map_err(pg)?;
    let mut refused = None;
    let mut out = Vec::with_capacity(rows.len());
    for (i, r) in rows.into_iter().enumerate() {
        match r {
            Ok(rows) => out.push(rows),
            // An error from the server aborts the transaction: its COMMIT rolls back.
            Err(e) if e.as_db_error().is_some() => refused = refused.or(Some(i)),
            Err(e) => return Err(pg(e)),
        }
    }
    match commit {
        Ok(()) if refused.is_none() => Ok(Outcome::Committed(out)),
        Ok(()) => Ok(Outcome::Refused(refused)),
        Err(e) if e.as_db_error().is_some() => Ok(Outcome::Refused(refused)),
        Err(e) => Err(pg(e)),
    }
}
