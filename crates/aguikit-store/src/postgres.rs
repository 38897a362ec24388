//! The PostgreSQL backend: several server instances share threads; live tails follow appends
//! made through any instance (LISTEN/NOTIFY, with a once-a-second poll as a fallback for a
//! missed notification).
//!
//! Every table lives in one schema, named at connection (several stores can share a
//! database). Thread and run ids are stored as `bytea`, so any string, even one with a NUL
//! character that `text` refuses, is kept verbatim; every value goes through a query
//! parameter. An append is one call of a PL/pgSQL function of the schema, which locks the
//! thread's row, checks the run and stores the batch and, for
//! [`EventStore::append_leased`], the run's lease: sequence
//! numbers stay contiguous and a run starts once whichever instance writes. The batch's
//! events are stored several to a row (see `rows`: the events `seq..seq + n`, their JSON
//! joined by newlines); a schema of an earlier release (one event per row) is migrated when
//! connected to, and its append functions stay for the earlier release's processes, whose
//! reads, however, would take a row of several events for a damaged one: upgrade every
//! process sharing a schema.
//!
//! Appends and thread claims are committed in groups (`group`): a writer takes every
//! write waiting and sends them as one transaction in one round trip, so that concurrent
//! runs share a WAL flush; a write the database refuses is refused alone. The wake-up of
//! the other instances' tails (`pg_notify`, one per thread appended to) follows within a
//! few milliseconds, one statement for the groups committed meanwhile. `append` returns
//! after the commit, which PostgreSQL makes durable (with its default
//! `synchronous_commit = on`).
//!
//! Queries run on a small pool of connections ([`PostgresOptions::pool_size`]), each
//! keeping its prepared statements; a connection that broke is replaced at its next use.
//! Schemas made by earlier versions are migrated at connection (missing columns added).
//!
//! **Threads by namespace.** A thread is stored under its [`crate::thread_key`], which
//! names its owner and its id, so two owners' threads of one id are two rows. A schema of
//! an earlier release stored an owned thread under its id: at the first connection of this
//! version, in the same transaction as the rest of the migration (under the schema's
//! advisory lock), every owned thread, and an ownerless one whose id begins with
//! `\u{1}`, is moved to its key, with its leases (runs and events follow the thread's row);
//! the table `meta` records that it was done (`thread_keys`), so it happens once. Upgrade
//! every process sharing the schema at once: an earlier release does not find owned
//! threads under their keys.
//!
//! **Storage format.** The `meta` table's `format` row is the schema's storage format (1
//! for the layout above). A schema of a later format, written by a newer aguikit, is refused
//! at connection with [`StoreError::NewerFormat`], which says so, rather than read wrongly.
//!
//! **One run at a time.** `append_v4` does what `append_v3` does under the same row lock,
//! and refuses a run started with a lease while another run of the thread holds a live
//! lease ([`crate::StoreError::ThreadBusy`]), closing stale runs first; `delete_v2`
//! refuses a delete the same way. Both hold across servers sharing the database.

mod group;

use crate::notify::Notifier;
use crate::prepare::prepare_rows;
use crate::rows::Decoded;
use crate::{
    EventStore, FirstRun, ForkOf, RawEvent, Result, RunInfo, RunStatus, StoreError, StoredEvent,
    ThreadInfo, ThreadPage, ThreadQuery, ThreadUpdate, decode_cursor, keeps_thread, now_ms,
    page_limit, page_of,
};
use aguikit_core::Event;
use futures_util::future::BoxFuture;
use futures_util::stream::{BoxStream, StreamExt};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_postgres::types::ToSql;
use tokio_postgres::{AsyncMessage, Client, NoTls, Row, Statement};

/// The channel that announces deleted threads to every instance (payload
/// `{schema}:{thread}`), so that their live tails end.
const DELETED_CHANNEL: &str = "agui_store_deleted";

/// Options of [`PostgresStore::connect_with`].
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// The most connections the store opens for queries (opened when needed; at least
    /// 1; default 16): reads, and the [`writers`](Self::writers)' groups. Each is a
    /// server process: keep `instances × (pool_size + 1)` under the server's
    /// `max_connections`. A further connection listens for notifications.
    pub pool_size: usize,
    /// How often a live tail re-reads the store when no notification came.
    pub poll_interval: Duration,
    /// How many writers commit the store's appends and thread claims (at least 1; default
    /// 2). Each takes every write waiting when it is free and commits them as one
    /// transaction, in one round trip: one WAL flush for the group. While one waits for its
    /// commit, the next gathers. Each holds one of the pool's connections while it writes.
    pub writers: usize,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            pool_size: 16,
            poll_interval: Duration::from_secs(1),
            writers: 2,
        }
    }
}

/// The store's SQL, with its schema in it, made once.
struct Sql {
    append: String,
    append_if_new: String,
    notify: String,
    delete: String,
    busy_run: String,
    claim: String,
    thread_row: String,
    thread_info: String,
    threads: String,
    list: String,
    events_from: String,
    runs: String,
    lease_put: String,
    lease_get: String,
    update: String,
    /// The search term of [`Sql::list`] (see `ThreadQuery::matches`), `$T` and `$J` standing
    /// for the parameters of the title's and the events' needles.
    search: String,
}

impl Sql {
    fn new(s: &str) -> Sql {
        let info = format!(
            "SELECT t.thread_id, t.last_seq,
                (SELECT count(*) FROM {s}.runs r WHERE r.tid = t.tid),
                t.owner, t.created_ms, t.updated_ms, t.title,
                (SELECT r.status FROM {s}.runs r WHERE r.tid = t.tid
                 ORDER BY r.first_seq DESC LIMIT 1),
                t.fork_thread, t.fork_run
             FROM {s}.threads t"
        );
        Sql {
            append: format!(
                "SELECT {s}.append_v4($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,
                     $14, $15, $16)"
            ),
            append_if_new: format!(
                "SELECT {s}.append_if_new_v2($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
                     $13, $14)"
            ),
            // Its own transaction, after the append's: a NOTIFY takes a database-wide lock
            // from its commit on until the commit is flushed, which would serialise every
            // append's flush; without a flush to wait for (the wake-up need not be durable)
            // the lock is held only for a moment.
            // $2: the payloads (one wake-up each).
            notify: "SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, t)
                     FROM unnest($2::text[]) AS t"
                .to_owned(),
            delete: format!("SELECT {s}.delete_v2($1, $2, $3)"),
            busy_run: format!(
                "SELECT r.run_id FROM {s}.runs r JOIN {s}.threads t ON t.tid = r.tid
                 JOIN {s}.leases l ON l.thread_id = t.thread_id AND l.run_id = r.run_id
                 WHERE t.thread_id = $1 AND r.status = 'running'
                 ORDER BY l.until_ms DESC LIMIT 1"
            ),
            // One statement, one round trip: the thread as inserted, or (when it existed) as
            // stored. The second branch reads the statement's snapshot, which lacks a thread
            // made concurrently after it began: then no row comes back and the caller asks
            // again.
            claim: format!(
                "WITH ins AS (
                     INSERT INTO {s}.threads (thread_id, last_seq, owner, created_ms, updated_ms)
                     VALUES ($1, 0, $2, $3, $3) ON CONFLICT (thread_id) DO NOTHING
                     RETURNING thread_id, last_seq, owner, created_ms, updated_ms, title
                 )
                 SELECT thread_id, last_seq, 0::bigint, owner, created_ms, updated_ms, title,
                     NULL::text, NULL::bytea, NULL::bytea
                 FROM ins
                 UNION ALL
                 ({info} WHERE t.thread_id = $1 AND NOT EXISTS (SELECT 1 FROM ins))"
            ),
            thread_row: format!("SELECT tid, last_seq FROM {s}.threads WHERE thread_id = $1"),
            thread_info: format!("{info} WHERE t.thread_id = $1"),
            threads: format!("{info} ORDER BY t.tid"),
            list: info,
            // The rows from the one holding $2 (see `crate::rows`), at most $4 of them.
            events_from: format!(
                "SELECT seq, n, run_id, body FROM {s}.events
                 WHERE tid = $1 AND seq >= (
                     SELECT coalesce(max(seq), 0) FROM {s}.events WHERE tid = $1 AND seq <= $2)
                 AND seq <= $3 ORDER BY seq LIMIT $4"
            ),
            runs: format!(
                "SELECT run_id, parent_run_id, status, first_seq, last_seq FROM {s}.runs
                 WHERE tid = $1 ORDER BY first_seq"
            ),
            lease_put: format!(
                "INSERT INTO {s}.leases (thread_id, run_id, until_ms)
                 SELECT $1::bytea, $2::bytea, $3::bigint WHERE NOT EXISTS (
                     SELECT 1 FROM {s}.runs r JOIN {s}.threads t ON t.tid = r.tid
                     WHERE t.thread_id = $1 AND r.run_id = $2 AND r.status <> 'running')
                 ON CONFLICT (thread_id, run_id) DO UPDATE SET until_ms = EXCLUDED.until_ms"
            ),
            lease_get: format!(
                "SELECT until_ms FROM {s}.leases WHERE thread_id = $1 AND run_id = $2"
            ),
            update: format!(
                "UPDATE {s}.threads SET title = coalesce($2, title),
                     fork_thread = coalesce($3, fork_thread), fork_run = coalesce($4, fork_run)
                 WHERE thread_id = $1"
            ),
            // lower() under the C collation folds ASCII letters only, as the other
            // backends do.
            search: format!(
                "(position($T in lower(convert_from(t.title, 'UTF8') COLLATE \"C\")) > 0
                  OR EXISTS (SELECT 1 FROM {s}.events e WHERE e.tid = t.tid
                      AND position($J in lower(convert_from(e.body, 'UTF8') COLLATE \"C\")) > 0))"
            ),
        }
    }
}

/// The tables, the migration of older schemas, the indexes and the functions of schema
/// `s` (idempotent).
/// The storage format this version writes and the latest it reads, kept in the schema's
/// `meta` table under `format`: 1 since threads are stored under their [`crate::thread_key`]
/// and events several to a row (see `rows`); a schema without it is of this format or older
/// (migrated at connection). A change to either layout takes the next number; a schema of
/// a later format is refused at connection ([`StoreError::NewerFormat`]).
const FORMAT_VERSION: i64 = 1;

fn ddl(s: &str) -> String {
    format!(
        "CREATE SCHEMA IF NOT EXISTS {s};
         CREATE TABLE IF NOT EXISTS {s}.threads (
             tid BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
             thread_id BYTEA NOT NULL UNIQUE,
             last_seq BIGINT NOT NULL
         );
         ALTER TABLE {s}.threads
             ADD COLUMN IF NOT EXISTS owner BYTEA,
             ADD COLUMN IF NOT EXISTS created_ms BIGINT NOT NULL DEFAULT 0,
             ADD COLUMN IF NOT EXISTS updated_ms BIGINT NOT NULL DEFAULT 0,
             ADD COLUMN IF NOT EXISTS title BYTEA,
             ADD COLUMN IF NOT EXISTS fork_thread BYTEA,
             ADD COLUMN IF NOT EXISTS fork_run BYTEA;
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
         -- n: the events of the row, seq..seq + n - 1, their JSON joined by newlines (one
         -- event per row before it was added).
         ALTER TABLE {s}.events ADD COLUMN IF NOT EXISTS n INT NOT NULL DEFAULT 1;
         -- A row of several events is a few kilobytes: kept in the table as it is up to
         -- 8160 bytes (past the default 2 kB, PostgreSQL compressed each with pglz: about
         -- 6% of its CPU under load), with lz4 (PostgreSQL 14 and later, when built with it)
         -- for larger ones.
         DO $do$
         BEGIN
             IF NOT EXISTS (
                 SELECT 1 FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
                 WHERE ns.nspname = '{s}' AND c.relname = 'events'
                     AND 'toast_tuple_target=8160' = ANY(coalesce(c.reloptions, '{{}}'))
             ) THEN
                 ALTER TABLE {s}.events SET (toast_tuple_target = 8160);
             END IF;
             -- Nested: the column attcompression is new in PostgreSQL 14.
             IF current_setting('server_version_num')::int >= 140000 THEN
                 IF (SELECT attcompression::text FROM pg_attribute
                     WHERE attrelid = '{s}.events'::regclass AND attname = 'body'
                 ) IS DISTINCT FROM 'l' THEN
                     BEGIN
                         EXECUTE 'ALTER TABLE {s}.events ALTER COLUMN body SET COMPRESSION lz4';
                     EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
                         NULL;
                     END;
                 END IF;
             END IF;
         END
         $do$;
         CREATE TABLE IF NOT EXISTS {s}.leases (
             thread_id BYTEA NOT NULL,
             run_id BYTEA NOT NULL,
             until_ms BIGINT NOT NULL,
             PRIMARY KEY (thread_id, run_id)
         );
         CREATE INDEX IF NOT EXISTS threads_by_activity ON {s}.threads (updated_ms DESC, thread_id);
         CREATE INDEX IF NOT EXISTS threads_by_owner ON {s}.threads (owner, updated_ms DESC, thread_id)
             WHERE owner IS NOT NULL;
         CREATE INDEX IF NOT EXISTS runs_by_start ON {s}.runs (tid, first_seq);
         CREATE INDEX IF NOT EXISTS runs_running ON {s}.runs (tid) WHERE status = 'running';

         -- Threads of a schema written before threads had namespaces are moved to their key
         -- (see `thread_key` in lib.rs: an owned thread was stored under its id), once; the
         -- leases follow their threads.
         CREATE TABLE IF NOT EXISTS {s}.meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
         DO $do$
         BEGIN
             IF NOT EXISTS (SELECT 1 FROM {s}.meta WHERE key = 'thread_keys') THEN
                 CREATE TEMP TABLE agui_moved ON COMMIT DROP AS
                     SELECT thread_id AS old, CASE
                         WHEN owner IS NOT NULL THEN '\\x01'::bytea
                             || convert_to(length(owner)::text || ':', 'UTF8') || owner || thread_id
                         ELSE '\\x013a'::bytea || thread_id END AS new
                     FROM {s}.threads
                     WHERE owner IS NOT NULL OR substring(thread_id FROM 1 FOR 1) = '\\x01'::bytea;
                 UPDATE {s}.leases l SET thread_id = m.new FROM agui_moved m
                     WHERE l.thread_id = m.old;
                 UPDATE {s}.threads t SET thread_id = m.new FROM agui_moved m
                     WHERE t.thread_id = m.old;
                 INSERT INTO {s}.meta (key, value) VALUES ('thread_keys', '1');
             END IF;
         END
         $do$;

         -- One append: the first sequence, or -1 (the batch starts a run that exists), -2
         -- (the run ended), -3 (unknown parent run). Nothing is written before a refusal.
         -- With p_lease, the run's lease is recorded too (a server claiming a run). The
         -- p_n events come as rows: p_rows[i] holds p_counts[i] events, the first of them
         -- the batch's p_firsts[i]-th (from 0; see `events.n`). Every statement counts:
         -- each costs the database more than the rows it writes.
         CREATE OR REPLACE FUNCTION {s}.append_v3(
             p_thread BYTEA, p_run BYTEA, p_rows BYTEA[], p_firsts INT[], p_counts INT[],
             p_n BIGINT, p_starts BOOLEAN, p_parent BYTEA, p_status TEXT, p_title BYTEA,
             p_now BIGINT, p_lease BIGINT
         ) RETURNS BIGINT LANGUAGE plpgsql AS $fn$
         DECLARE
             v_tid BIGINT;
             v_last BIGINT;
             v_status TEXT;
             v_n BIGINT := p_n;
         BEGIN
             SELECT tid, last_seq INTO v_tid, v_last
                 FROM {s}.threads WHERE thread_id = p_thread FOR UPDATE;
             IF NOT FOUND THEN
                 IF p_parent IS NOT NULL THEN
                     RETURN -3;
                 END IF;
                 INSERT INTO {s}.threads (thread_id, last_seq, created_ms, updated_ms)
                     VALUES (p_thread, 0, p_now, p_now) ON CONFLICT (thread_id) DO NOTHING;
                 SELECT tid, last_seq INTO v_tid, v_last
                     FROM {s}.threads WHERE thread_id = p_thread FOR UPDATE;
             END IF;
             -- The common append: more of a running run, which the batch does not start
             -- and which names no parent. Its run is updated where it is (one statement;
             -- the upsert below first tries an insert), after the thread's lock, so the
             -- update sees the run as an append that held the lock before left it.
             IF NOT p_starts AND p_parent IS NULL THEN
                 UPDATE {s}.runs SET status = p_status, last_seq = v_last + v_n
                     WHERE tid = v_tid AND run_id = p_run AND status = 'running';
                 IF NOT FOUND THEN
                     -- An ended run (refused), or a run without a RUN_STARTED yet.
                     IF EXISTS (SELECT 1 FROM {s}.runs WHERE tid = v_tid AND run_id = p_run)
                     THEN
                         RETURN -2;
                     END IF;
                     INSERT INTO {s}.runs
                         (tid, run_id, parent_run_id, status, first_seq, last_seq)
                         VALUES (v_tid, p_run, NULL, p_status, v_last + 1, v_last + v_n);
                 END IF;
                 INSERT INTO {s}.events (tid, seq, run_id, n, body)
                     SELECT v_tid, v_last + 1 + u.f, p_run, u.c, u.body
                     FROM unnest(p_rows, p_firsts, p_counts) AS u(body, f, c);
             ELSE
                 -- A statement of its own, after the thread's lock: its snapshot sees the
                 -- run as an append that held the lock before left it (a join in the
                 -- locking statement would not).
                 SELECT status INTO v_status FROM {s}.runs WHERE tid = v_tid AND run_id = p_run;
                 IF FOUND THEN
                     IF p_starts THEN
                         RETURN -1;
                     END IF;
                     IF v_status <> 'running' THEN
                         RETURN -2;
                     END IF;
                 END IF;
                 IF p_parent IS NOT NULL AND NOT EXISTS (
                     SELECT 1 FROM {s}.runs WHERE tid = v_tid AND run_id = p_parent
                 ) THEN
                     RETURN -3;
                 END IF;
                 INSERT INTO {s}.events (tid, seq, run_id, n, body)
                     SELECT v_tid, v_last + 1 + u.f, p_run, u.c, u.body
                     FROM unnest(p_rows, p_firsts, p_counts) AS u(body, f, c);
                 INSERT INTO {s}.runs (tid, run_id, parent_run_id, status, first_seq, last_seq)
                     VALUES (v_tid, p_run, p_parent, p_status, v_last + 1, v_last + v_n)
                     ON CONFLICT (tid, run_id) DO UPDATE SET
                         parent_run_id = coalesce({s}.runs.parent_run_id, EXCLUDED.parent_run_id),
                         status = EXCLUDED.status,
                         last_seq = EXCLUDED.last_seq;
             END IF;
             UPDATE {s}.threads SET last_seq = v_last + v_n,
                     updated_ms = GREATEST(updated_ms, p_now),
                     title = coalesce(title, p_title)
                 WHERE tid = v_tid;
             -- A lease tells a running run's live server from a dead one: an append that
             -- ends the run drops it, so the table holds the runs in progress only.
             IF p_status <> 'running' THEN
                 DELETE FROM {s}.leases WHERE thread_id = p_thread AND run_id = p_run;
             ELSIF p_lease IS NOT NULL THEN
                 INSERT INTO {s}.leases (thread_id, run_id, until_ms)
                     VALUES (p_thread, p_run, p_lease)
                     ON CONFLICT (thread_id, run_id) DO UPDATE SET until_ms = EXCLUDED.until_ms;
             END IF;
             RETURN v_last + 1;
         END
         $fn$;

         -- A run's first append, if the thread holds no events: a missing thread is made,
         -- owned by p_owner. -4 (nothing written) when the thread holds events, or when
         -- another owner has it and not p_any_owner (the rule of keeps_thread in
         -- lib.rs); else as append_v3.
         CREATE OR REPLACE FUNCTION {s}.append_if_new_v2(
             p_thread BYTEA, p_run BYTEA, p_rows BYTEA[], p_firsts INT[], p_counts INT[],
             p_n BIGINT, p_starts BOOLEAN, p_parent BYTEA, p_status TEXT, p_title BYTEA,
             p_now BIGINT, p_lease BIGINT, p_owner BYTEA, p_any_owner BOOLEAN
         ) RETURNS BIGINT LANGUAGE plpgsql AS $fn$
         DECLARE
             v_owner BYTEA;
             v_last BIGINT;
             v_tid BIGINT;
             v_n BIGINT := p_n;
         BEGIN
             -- A new thread (the common case) is made as the append leaves it: one row
             -- written once, not inserted, locked and updated (which rewrote every index
             -- entry of the row).
             IF p_parent IS NULL THEN
                 INSERT INTO {s}.threads (thread_id, last_seq, owner, created_ms, updated_ms, title)
                     VALUES (p_thread, v_n, p_owner, p_now, p_now, p_title)
                     ON CONFLICT (thread_id) DO NOTHING
                     RETURNING tid INTO v_tid;
                 IF FOUND THEN
                     INSERT INTO {s}.events (tid, seq, run_id, n, body)
                         SELECT v_tid, 1 + u.f, p_run, u.c, u.body
                         FROM unnest(p_rows, p_firsts, p_counts) AS u(body, f, c);
                     INSERT INTO {s}.runs (tid, run_id, parent_run_id, status, first_seq, last_seq)
                         VALUES (v_tid, p_run, NULL, p_status, 1, v_n);
                     IF p_lease IS NOT NULL AND p_status = 'running' THEN
                         INSERT INTO {s}.leases (thread_id, run_id, until_ms)
                             VALUES (p_thread, p_run, p_lease)
                             ON CONFLICT (thread_id, run_id) DO UPDATE SET until_ms = EXCLUDED.until_ms;
                     END IF;
                     RETURN 1;
                 END IF;
             END IF;
             INSERT INTO {s}.threads (thread_id, last_seq, owner, created_ms, updated_ms)
                 VALUES (p_thread, 0, p_owner, p_now, p_now) ON CONFLICT (thread_id) DO NOTHING;
             SELECT owner, last_seq INTO v_owner, v_last
                 FROM {s}.threads WHERE thread_id = p_thread FOR UPDATE;
             IF v_last <> 0 OR (NOT p_any_owner AND v_owner IS DISTINCT FROM p_owner) THEN
                 RETURN -4;
             END IF;
             RETURN {s}.append_v3(p_thread, p_run, p_rows, p_firsts, p_counts, p_n, p_starts,
                 p_parent, p_status, p_title, p_now, p_lease);
         END
         $fn$;

         -- append_v3 with the rules of a server's writes, all under the thread's row lock
         -- (so they hold across servers sharing the database). p_mode 1 (a run claimed
         -- on a thread with events): the thread must exist and be p_owner's (or
         -- p_any_owner), else -6. p_mode 2 (more of a stored run): the thread must exist
         -- (else -6) and hold the run (else -7). One run at a time: a batch that starts a
         -- run with a lease (p_starts, p_lease) is refused with -5 while another run of
         -- the thread is running with a live lease; the others still running are closed
         -- first with p_abandon (a RUN_ERROR, code abandoned). Nothing is written before a
         -- refusal.
         CREATE OR REPLACE FUNCTION {s}.append_v4(
             p_thread BYTEA, p_run BYTEA, p_rows BYTEA[], p_firsts INT[], p_counts INT[],
             p_n BIGINT, p_starts BOOLEAN, p_parent BYTEA, p_status TEXT, p_title BYTEA,
             p_now BIGINT, p_lease BIGINT, p_mode INT, p_owner BYTEA, p_any_owner BOOLEAN,
             p_abandon BYTEA
         ) RETURNS BIGINT LANGUAGE plpgsql AS $fn$
         DECLARE
             v_tid BIGINT;
             v_owner BYTEA;
             v_run BYTEA;
             v_done BIGINT;
         BEGIN
             SELECT tid, owner INTO v_tid, v_owner
                 FROM {s}.threads WHERE thread_id = p_thread FOR UPDATE;
             IF p_mode <> 0 THEN
                 IF v_tid IS NULL THEN
                     RETURN -6;
                 END IF;
                 IF p_mode = 1 AND NOT p_any_owner AND v_owner IS DISTINCT FROM p_owner THEN
                     RETURN -6;
                 END IF;
                 IF p_mode = 2 AND NOT EXISTS (
                     SELECT 1 FROM {s}.runs WHERE tid = v_tid AND run_id = p_run
                 ) THEN
                     RETURN -7;
                 END IF;
             END IF;
             IF v_tid IS NOT NULL AND p_starts AND p_lease IS NOT NULL AND p_n > 0 THEN
                 -- The refusals of append_v3 first: nothing may be closed for a batch
                 -- that is refused after.
                 IF EXISTS (SELECT 1 FROM {s}.runs WHERE tid = v_tid AND run_id = p_run) THEN
                     RETURN -1;
                 END IF;
                 IF p_parent IS NOT NULL AND NOT EXISTS (
                     SELECT 1 FROM {s}.runs WHERE tid = v_tid AND run_id = p_parent
                 ) THEN
                     RETURN -3;
                 END IF;
                 IF EXISTS (
                     SELECT 1 FROM {s}.runs r JOIN {s}.leases l
                         ON l.thread_id = p_thread AND l.run_id = r.run_id
                     WHERE r.tid = v_tid AND r.status = 'running' AND r.run_id <> p_run
                         AND l.until_ms >= p_now
                 ) THEN
                     RETURN -5;
                 END IF;
                 FOR v_run IN
                     SELECT run_id FROM {s}.runs
                     WHERE tid = v_tid AND status = 'running' AND run_id <> p_run
                     ORDER BY first_seq
                 LOOP
                     v_done := {s}.append_v3(p_thread, v_run, ARRAY[p_abandon], ARRAY[0],
                         ARRAY[1], 1, false, NULL, 'error', NULL, p_now, NULL);
                 END LOOP;
             END IF;
             RETURN {s}.append_v3(p_thread, p_run, p_rows, p_firsts, p_counts, p_n, p_starts,
                 p_parent, p_status, p_title, p_now, p_lease);
         END
         $fn$;

         -- Deletes a thread, its runs, events and leases, under the thread's row lock
         -- (waiting for appends in progress): 1, or 0 when it does not exist, or -5 (nothing
         -- deleted) while a run of it is running with a live lease (at p_now).
         CREATE OR REPLACE FUNCTION {s}.delete_v2(p_thread BYTEA, p_payload TEXT, p_now BIGINT)
         RETURNS BIGINT LANGUAGE plpgsql AS $fn$
         DECLARE
             v_tid BIGINT;
         BEGIN
             SELECT tid INTO v_tid FROM {s}.threads WHERE thread_id = p_thread FOR UPDATE;
             IF NOT FOUND THEN
                 DELETE FROM {s}.leases WHERE thread_id = p_thread;
                 RETURN 0;
             END IF;
             IF EXISTS (
                 SELECT 1 FROM {s}.runs r JOIN {s}.leases l
                     ON l.thread_id = p_thread AND l.run_id = r.run_id
                 WHERE r.tid = v_tid AND r.status = 'running' AND l.until_ms >= p_now
             ) THEN
                 RETURN -5;
             END IF;
             DELETE FROM {s}.leases WHERE thread_id = p_thread;
             DELETE FROM {s}.events WHERE tid = v_tid;
             DELETE FROM {s}.runs WHERE tid = v_tid;
             DELETE FROM {s}.threads WHERE tid = v_tid;
             IF p_payload = '' THEN
                 PERFORM pg_notify('{s}', '');
             ELSE
                 PERFORM pg_notify('{DELETED_CHANNEL}', '{s}:' || p_payload);
             END IF;
             RETURN 1;
         END
         $fn$;

         -- The earlier versions, for processes of an earlier release sharing the schema
         -- (one event per row).
         CREATE OR REPLACE FUNCTION {s}.append_v2(
             p_thread BYTEA, p_run BYTEA, p_bodies BYTEA[], p_starts BOOLEAN,
             p_parent BYTEA, p_status TEXT, p_title BYTEA, p_now BIGINT, p_lease BIGINT
         ) RETURNS BIGINT LANGUAGE sql AS $fn$
             SELECT {s}.append_v3(p_thread, p_run, p_bodies,
                 ARRAY(SELECT generate_series(0, coalesce(cardinality(p_bodies), 0) - 1)),
                 array_fill(1, ARRAY[coalesce(cardinality(p_bodies), 0)]),
                 coalesce(cardinality(p_bodies), 0), p_starts, p_parent, p_status, p_title, p_now,
                 p_lease)
         $fn$;
         CREATE OR REPLACE FUNCTION {s}.append_if_new_v1(
             p_thread BYTEA, p_run BYTEA, p_bodies BYTEA[], p_starts BOOLEAN,
             p_parent BYTEA, p_status TEXT, p_title BYTEA, p_now BIGINT, p_lease BIGINT,
             p_owner BYTEA, p_any_owner BOOLEAN
         ) RETURNS BIGINT LANGUAGE sql AS $fn$
             SELECT {s}.append_if_new_v2(p_thread, p_run, p_bodies,
                 ARRAY(SELECT generate_series(0, coalesce(cardinality(p_bodies), 0) - 1)),
                 array_fill(1, ARRAY[coalesce(cardinality(p_bodies), 0)]),
                 coalesce(cardinality(p_bodies), 0), p_starts, p_parent, p_status, p_title, p_now,
                 p_lease, p_owner, p_any_owner)
         $fn$;
         CREATE OR REPLACE FUNCTION {s}.append_v1(
             p_thread BYTEA, p_run BYTEA, p_bodies BYTEA[], p_starts BOOLEAN,
             p_parent BYTEA, p_status TEXT, p_title BYTEA, p_now BIGINT
         ) RETURNS BIGINT LANGUAGE sql AS $fn$
             SELECT {s}.append_v2(p_thread, p_run, p_bodies, p_starts, p_parent, p_status,
                 p_title, p_now, NULL)
         $fn$;

         -- Deletes a thread (waiting for appends in progress), its runs, events and leases;
         -- whether it existed.
         CREATE OR REPLACE FUNCTION {s}.delete_v1(p_thread BYTEA, p_payload TEXT)
         RETURNS BOOLEAN LANGUAGE plpgsql AS $fn$
         DECLARE
             v_tid BIGINT;
         BEGIN
             DELETE FROM {s}.leases WHERE thread_id = p_thread;
             SELECT tid INTO v_tid FROM {s}.threads WHERE thread_id = p_thread FOR UPDATE;
             IF NOT FOUND THEN
                 RETURN FALSE;
             END IF;
             DELETE FROM {s}.events WHERE tid = v_tid;
             DELETE FROM {s}.runs WHERE tid = v_tid;
             DELETE FROM {s}.threads WHERE tid = v_tid;
             IF p_payload = '' THEN
                 PERFORM pg_notify('{s}', '');
             ELSE
                 PERFORM pg_notify('{DELETED_CHANNEL}', '{s}:' || p_payload);
             END IF;
             RETURN TRUE;
         END
         $fn$;"
    )
}

/// What [`EventStore::check_integrity`] expects: `(table, columns)`.
const EXPECTED: [(&str, &[&str]); 4] = [
    (
        "threads",
        &[
            "tid",
            "thread_id",
            "last_seq",
            "owner",
            "created_ms",
            "updated_ms",
            "title",
            "fork_thread",
            "fork_run",
        ],
    ),
    (
        "runs",
        &[
            "tid",
            "run_id",
            "parent_run_id",
            "status",
            "first_seq",
            "last_seq",
        ],
    ),
    ("events", &["tid", "seq", "run_id", "body", "n"]),
    ("leases", &["thread_id", "run_id", "until_ms"]),
];

/// One connection of the pool with its prepared statements.
struct Conn {
    client: Client,
    statements: HashMap<String, Statement>,
}

impl Conn {
    /// `sql` prepared on this connection (once).
    async fn statement(&mut self, sql: &str) -> Result<Statement> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql).await.map_err(pg)?;
        self.statements.insert(sql.to_owned(), s.clone());
        Ok(s)
    }

    async fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        let s = self.statement(sql).await?;
        self.client.query(&s, params).await.map_err(pg)
    }

    async fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>> {
        let s = self.statement(sql).await?;
        self.client.query_opt(&s, params).await.map_err(pg)
    }

    async fn query_one(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row> {
        let s = self.statement(sql).await?;
        self.client.query_one(&s, params).await.map_err(pg)
    }

    async fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64> {
        let s = self.statement(sql).await?;
        self.client.execute(&s, params).await.map_err(pg)
    }
}

/// At most `size` connections, opened when needed.
struct Pool {
    url: String,
    free: Mutex<Vec<Conn>>,
    permits: tokio::sync::Semaphore,
}

/// A connection taken from the [`Pool`], given back when dropped (unless broken).
struct Pooled<'a> {
    conn: Option<Conn>,
    pool: &'a Pool,
    _permit: tokio::sync::SemaphorePermit<'a>,
}

impl std::ops::Deref for Pooled<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.conn
            .as_ref()
            .expect("a pooled connection is present until dropped")
    }
}

impl std::ops::DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut Conn {
        self.conn
            .as_mut()
            .expect("a pooled connection is present until dropped")
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.conn.take()
            && !c.client.is_closed()
        {
            self.pool
                .free
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(c);
        }
    }
}

impl Pool {
    async fn get(&self) -> Result<Pooled<'_>> {
        let permit = self
            .permits
            .acquire()
            .await
            .map_err(|e| StoreError::Backend(format!("connection pool: {e}")))?;
        let reused = loop {
            let c = self.free.lock().unwrap_or_else(|p| p.into_inner()).pop();
            match c {
                Some(c) if c.client.is_closed() => continue,
                other => break other,
            }
        };
        let conn = match reused {
            Some(c) => c,
            None => Conn {
                client: client(&self.url).await?,
                statements: HashMap::new(),
            },
        };
        Ok(Pooled {
            conn: Some(conn),
            pool: self,
            _permit: permit,
        })
    }
}

struct Inner {
    schema: String,
    sql: Arc<Sql>,
    pool: Arc<Pool>,
    /// To the writers that commit appends and claims in groups.
    writes: group::Writes,
    options: PostgresOptions,
    /// Kept so that the LISTEN connection stays open.
    _listener: Client,
    notifier: Arc<Notifier>,
}

/// An [`EventStore`] in a PostgreSQL schema. Cheap to clone (shared).
#[derive(Clone)]
pub struct PostgresStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the connection string: it may hold a password.
        f.debug_struct("PostgresStore")
            .field("schema", &self.inner.schema)
            .finish_non_exhaustive()
    }
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
    // A lost connection surfaces as an error on the next query (and the pool replaces it).
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(client)
}

/// A NOTIFY payload naming `thread`: `""` (wake every tail) when it cannot, because of a NUL
/// character or the payload size limit.
fn payload(thread: &str) -> &str {
    if thread.contains('\0') || thread.len() > 7000 {
        ""
    } else {
        thread
    }
}

fn text(b: Vec<u8>) -> String {
    String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn ms(v: i64) -> u64 {
    v.max(0) as u64
}

/// A row of [`Sql::list`].
fn thread_info(r: &Row) -> ThreadInfo {
    ThreadInfo {
        thread_id: text(r.get(0)),
        last_seq: ms(r.get(1)),
        run_count: ms(r.get(2)),
        owner: r.get::<_, Option<Vec<u8>>>(3).map(text),
        created_ms: ms(r.get(4)),
        updated_ms: ms(r.get(5)),
        title: r.get::<_, Option<Vec<u8>>>(6).map(text),
        last_status: r
            .get::<_, Option<&str>>(7)
            .map(|s| RunStatus::parse(s).unwrap_or(RunStatus::Running)),
        fork_of: match (
            r.get::<_, Option<Vec<u8>>>(8),
            r.get::<_, Option<Vec<u8>>>(9),
        ) {
            (Some(thread), Some(run)) => Some(ForkOf {
                thread_id: text(thread),
                run_id: text(run),
            }),
            _ => None,
        },
    }
}

impl PostgresStore {
    /// Connects to `url` and uses (creating or migrating when needed) the tables of
    /// `schema`, with the default options.
    pub async fn connect(url: &str, schema: &str) -> Result<PostgresStore> {
        Self::connect_with(url, schema, PostgresOptions::default()).await
    }

    /// Connects to `url` and uses (creating or migrating when needed) the tables of
    /// `schema`.
    pub async fn connect_with(
        url: &str,
        schema: &str,
        options: PostgresOptions,
    ) -> Result<PostgresStore> {
        if !valid_schema(schema) {
            return Err(StoreError::Invalid(format!(
                "schema name {schema:?}: use lower-case letters, digits and _ (at most 63)"
            )));
        }
        let pool = Pool {
            url: url.to_owned(),
            free: Mutex::new(Vec::new()),
            permits: tokio::sync::Semaphore::new(options.pool_size.max(1)),
        };
        {
            let conn = pool.get().await?;
            // Two instances may create or migrate the schema at once: serialise with an
            // advisory lock. A schema of a later storage format is left as it is.
            conn.client
                .batch_execute(&format!(
                    "BEGIN; SELECT pg_advisory_xact_lock(hashtext('aguikit-store:{schema}'));
                     CREATE SCHEMA IF NOT EXISTS {schema};
                     CREATE TABLE IF NOT EXISTS {schema}.meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                ))
                .await
                .map_err(pg)?;
            let found = conn
                .client
                .query_opt(
                    &format!("SELECT value FROM {schema}.meta WHERE key = 'format'"),
                    &[],
                )
                .await
                .map_err(pg)?
                .map(|row| row.get::<_, String>(0));
            let found = match found.map(|v| v.trim().parse::<i64>().map_err(|_| v)) {
                None => None,
                Some(Ok(n)) => Some(n),
                Some(Err(v)) => {
                    let _ = conn.client.batch_execute("ROLLBACK").await;
                    return Err(StoreError::Damaged(format!(
                        "schema {schema}: its storage format {v:?} (table meta) is not a number"
                    )));
                }
            };
            if let Some(found) = found.filter(|&f| f > FORMAT_VERSION) {
                let _ = conn.client.batch_execute("ROLLBACK").await;
                return Err(StoreError::NewerFormat {
                    place: format!("schema {schema}"),
                    found,
                    supported: FORMAT_VERSION,
                });
            }
            conn.client
                .batch_execute(&format!(
                    "{}
                     INSERT INTO {schema}.meta (key, value) VALUES ('format', '{FORMAT_VERSION}')
                         ON CONFLICT (key) DO NOTHING;
                     COMMIT;",
                    ddl(schema)
                ))
                .await
                .map_err(pg)?;
        }

        let notifier = Arc::new(Notifier::default());
        let (listener, mut conn) = tokio_postgres::connect(url, NoTls).await.map_err(pg)?;
        let n = notifier.clone();
        let own = schema.to_owned();
        tokio::spawn(async move {
            let mut messages = futures_util::stream::poll_fn(move |cx| conn.poll_message(cx));
            while let Some(Ok(message)) = messages.next().await {
                let AsyncMessage::Notification(note) = message else {
                    continue;
                };
                if note.channel() == DELETED_CHANNEL {
                    if let Some((s, thread)) = note.payload().split_once(':')
                        && s == own
                    {
                        n.close(thread);
                    }
                    continue;
                }
                match note.payload() {
                    "" => n.notify_all(),
                    thread => n.notify(thread, 0),
                }
            }
        });
        listener
            .batch_execute(&format!("LISTEN {schema}; LISTEN {DELETED_CHANNEL}"))
            .await
            .map_err(pg)?;
        let (pool, sql) = (Arc::new(pool), Arc::new(Sql::new(schema)));
        let writes = group::spawn(
            pool.clone(),
            sql.clone(),
            schema.to_owned(),
            options.writers,
        );
        Ok(PostgresStore {
            inner: Arc::new(Inner {
                schema: schema.to_owned(),
                sql,
                pool,
                writes,
                options,
                _listener: listener,
                notifier,
            }),
        })
    }

    /// Drops the store's schema and everything in it (for tests and tear-down).
    pub async fn drop_schema(&self) -> Result<()> {
        let conn = self.inner.pool.get().await?;
        conn.client
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {} CASCADE",
                self.inner.schema
            ))
            .await
            .map_err(pg)
    }

    async fn thread_row(&self, c: &mut Conn, thread: &str) -> Result<Option<(i64, u64)>> {
        let row = c
            .query_opt(&self.inner.sql.thread_row, &[&thread.as_bytes()])
            .await?;
        Ok(row.map(|r| (r.get(0), ms(r.get(1)))))
    }
}

impl PostgresStore {
    /// One append (with the run's lease when `lease` is given, in the same transaction;
    /// with `if_new`, `(owner, any_owner)`, only into a thread without events, else `None`):
    /// a single call of the schema's append function, committed by a writer with the other
    /// writes waiting (see `group`), and the tails' wake-up.
    #[allow(clippy::too_many_arguments)]
    async fn append_with(
        &self,
        thread: &str,
        run: &str,
        events: &[Event],
        json: &[Option<&[u8]>],
        lease: Option<i64>,
        if_new: Option<(Option<&str>, bool)>,
        mode: Mode<'_>,
    ) -> Result<Option<Range<u64>>> {
        let prepared = prepare_rows(thread, run, events, json)?;
        if prepared.count == 0 {
            match mode {
                Mode::Plain => {}
                Mode::ClaimRun(owner, any_owner) => {
                    let info = self.thread(thread).await?;
                    if !any_owner && info.owner.as_deref() != owner {
                        return Err(StoreError::unknown_thread(thread));
                    }
                }
                Mode::ToRun => {
                    self.run(thread, run).await?;
                }
            }
            let mut c = self.inner.pool.get().await?;
            let last = self.thread_row(&mut c, thread).await?.map_or(0, |(_, l)| l);
            if let Some(until) = lease {
                c.execute(
                    &self.inner.sql.lease_put,
                    &[&thread.as_bytes(), &run.as_bytes(), &until],
                )
                .await?;
            }
            return Ok(Some(last + 1..last + 1));
        }
        let n = prepared.count as u64;
        // Offsets within one append (an INT holds 2^31 of them).
        let int = |v: usize| i32::try_from(v).unwrap_or(i32::MAX);
        let mut rows = Vec::with_capacity(prepared.rows.len());
        let mut firsts = Vec::with_capacity(prepared.rows.len());
        let mut counts = Vec::with_capacity(prepared.rows.len());
        for r in prepared.rows {
            rows.push(r.body);
            firsts.push(int(r.first));
            counts.push(int(r.count));
        }
        let mut params: Vec<group::Param> = vec![
            Box::new(thread.as_bytes().to_vec()),
            Box::new(run.as_bytes().to_vec()),
            Box::new(rows),
            Box::new(firsts),
            Box::new(counts),
            Box::new(n as i64),
            Box::new(prepared.starts_run),
            Box::new(prepared.parent.as_deref().map(|p| p.as_bytes().to_vec())),
            Box::new(prepared.closes.unwrap_or(RunStatus::Running).as_str()),
            Box::new(prepared.title.map(String::into_bytes)),
            Box::new(now_ms() as i64),
            Box::new(lease),
        ];
        let kind = match if_new {
            Some((owner, any_owner)) => {
                params.push(Box::new(owner.map(|o| o.as_bytes().to_vec())));
                params.push(Box::new(any_owner));
                group::Kind::AppendIfNew
            }
            None => {
                let (code, owner, any_owner) = match mode {
                    Mode::Plain => (0i32, None, false),
                    Mode::ClaimRun(owner, any_owner) => (1, owner, any_owner),
                    Mode::ToRun => (2, None, false),
                };
                params.push(Box::new(code));
                params.push(Box::new(owner.map(|o| o.as_bytes().to_vec())));
                params.push(Box::new(any_owner));
                // The RUN_ERROR that closes a stale run when this one starts.
                let abandon = (prepared.starts_run && lease.is_some())
                    .then(|| crate::abandoned().to_json_vec());
                params.push(Box::new(abandon));
                group::Kind::Append
            }
        };
        let rows = group::run(&self.inner.writes, kind, thread, params).await?;
        let row = rows
            .first()
            .ok_or_else(|| backend("postgres: append returned no row"))?;
        let first: i64 = row.get(0);
        let (thread_id, run_id) = (thread.to_owned(), run.to_owned());
        match first {
            -1 => Err(StoreError::RunExists {
                thread: thread_id,
                run: run_id,
            }),
            -2 => Err(StoreError::RunClosed {
                thread: thread_id,
                run: run_id,
            }),
            -3 => Err(StoreError::UnknownRun {
                thread: thread_id,
                run: prepared.parent.unwrap_or_default(),
            }),
            -4 => Ok(None),
            -5 => Err(StoreError::ThreadBusy {
                run: self.busy_run(thread).await,
                thread: thread_id,
            }),
            -6 => Err(StoreError::UnknownThread(thread_id)),
            -7 => Err(StoreError::UnknownRun {
                thread: thread_id,
                run: run_id,
            }),
            first if first >= 1 => {
                let first = first as u64;
                let end = first + n;
                self.inner.notifier.notify(thread, end - 1);
                Ok(Some(first..end))
            }
            other => Err(StoreError::Backend(format!(
                "postgres: append returned {other}"
            ))),
        }
    }
}

/// What [`PostgresStore::append_with`] checks beyond the rules of every append (the
/// `p_mode` of `append_v4`).
#[derive(Clone, Copy)]
enum Mode<'a> {
    /// Nothing more.
    Plain,
    /// [`EventStore::claim_run_json`]: the thread exists and the owner may write to it.
    ClaimRun(Option<&'a str>, bool),
    /// [`EventStore::append_to_run_json`]: the run is stored.
    ToRun,
}

impl PostgresStore {
    /// The run of `thread` in progress that refused a write (best effort: empty when it
    /// ended meanwhile).
    async fn busy_run(&self, thread: &str) -> String {
        let Ok(mut c) = self.inner.pool.get().await else {
            return String::new();
        };
        match c
            .query_opt(&self.inner.sql.busy_run, &[&thread.as_bytes()])
            .await
        {
            Ok(Some(row)) => text(row.get(0)),
            _ => String::new(),
        }
    }

    /// The rows of `thread` from the one holding `from_seq`, at most `rows_max` of them, up
    /// to the thread's last sequence as read first (the errors of
    /// [`StoreError::check_readable`] for a `from_seq` out of range).
    async fn rows_from(&self, thread: &str, from_seq: u64, rows_max: i64) -> Result<Vec<Row>> {
        let mut c = self.inner.pool.get().await?;
        let (tid, last) = self
            .thread_row(&mut c, thread)
            .await?
            .ok_or_else(|| StoreError::unknown_thread(thread))?;
        StoreError::check_readable(thread, from_seq, last)?;
        c.query(
            &self.inner.sql.events_from,
            &[&tid, &(from_seq as i64), &(last as i64), &rows_max],
        )
        .await
    }

    /// The events of `thread` from `from_seq` on, decoded straight from the rows, up to the
    /// first that cannot be decoded, and that one's error.
    async fn decode_from(
        &self,
        thread: &str,
        from_seq: u64,
    ) -> Result<(Vec<StoredEvent>, Option<StoreError>)> {
        let from_seq = from_seq.max(1);
        let rows = self.rows_from(thread, from_seq, i64::MAX).await?;
        let mut out = Decoded::new(thread, from_seq, rows.len());
        for r in &rows {
            let (first, n): (i64, i32) = (r.get(0), r.get(1));
            if let Some(e) = out.row(ms(first), i64::from(n), r.get(2), Some(r.get(3))) {
                return Ok((out.events, Some(e)));
            }
        }
        Ok((out.events, None))
    }

    /// An append that is not [`EventStore::append_if_new`]'s (so always answered with a
    /// range).
    async fn append_plain(
        &self,
        thread: &str,
        run: &str,
        events: &[Event],
        json: &[Option<&[u8]>],
        lease: Option<i64>,
        mode: Mode<'_>,
    ) -> Result<Range<u64>> {
        self.append_with(thread, run, events, json, lease, None, mode)
            .await?
            .ok_or_else(|| backend("postgres: an append was refused as not new"))
    }
}

impl EventStore for PostgresStore {
    fn append<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        Box::pin(self.append_plain(thread, run, events, &[], None, Mode::Plain))
    }

    fn append_json<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        Box::pin(self.append_plain(thread, run, events, json, None, Mode::Plain))
    }

    fn append_leased_json<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        let until = i64::try_from(until_ms).unwrap_or(i64::MAX);
        Box::pin(self.append_plain(thread, run, events, json, Some(until), Mode::Plain))
    }

    fn claim_run_json<'a>(
        &'a self,
        thread: &'a str,
        owner: Option<&'a str>,
        any_owner: bool,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        let until = i64::try_from(until_ms).unwrap_or(i64::MAX);
        let mode = Mode::ClaimRun(owner, any_owner);
        Box::pin(self.append_plain(thread, run, events, json, Some(until), mode))
    }

    fn append_to_run_json<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
    ) -> BoxFuture<'a, Result<Range<u64>>> {
        Box::pin(self.append_plain(thread, run, events, json, None, Mode::ToRun))
    }

    fn append_if_new_json<'a>(
        &'a self,
        thread: &'a str,
        owner: Option<&'a str>,
        any_owner: bool,
        run: &'a str,
        events: &'a [Event],
        json: &'a [Option<&'a [u8]>],
        until_ms: u64,
    ) -> BoxFuture<'a, Result<FirstRun>> {
        Box::pin(async move {
            if events.is_empty() {
                // Nothing to append: the claim and the owner's check on their own.
                let info = self.claim_thread(thread, owner).await?;
                if keeps_thread(info.last_seq, info.owner.as_deref(), owner, any_owner) {
                    return Ok(FirstRun::Existing(info));
                }
            }
            let until = i64::try_from(until_ms).unwrap_or(i64::MAX);
            let if_new = Some((owner, any_owner));
            match self
                .append_with(thread, run, events, json, Some(until), if_new, Mode::Plain)
                .await?
            {
                Some(range) => Ok(FirstRun::Stored(range)),
                None => Ok(FirstRun::Existing(self.thread(thread).await?)),
            }
        })
    }

    /// Decodes the rows as they come (one `run_id` string per run); [`EventStore::read`]
    /// goes through here.
    fn read_until_corrupt<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
    ) -> BoxFuture<'a, Result<(Vec<StoredEvent>, Option<StoreError>)>> {
        Box::pin(self.decode_from(thread, from_seq))
    }

    fn read_raw<'a>(
        &'a self,
        thread: &'a str,
        from_seq: u64,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<RawEvent>>> {
        Box::pin(async move {
            // One row more than events asked for: the first row may hold events before
            // `from_seq`, and every row holds at least one.
            let rows_max = i64::try_from(limit).unwrap_or(i64::MAX).saturating_add(1);
            let rows = self.rows_from(thread, from_seq, rows_max).await?;
            let mut out = Vec::new();
            for r in rows {
                let (first, n): (i64, i32) = (r.get(0), r.get(1));
                let run_id = text(r.get(2));
                let body: &[u8] = r.get(3);
                if !crate::rows::raw_events(
                    &mut out,
                    limit,
                    from_seq,
                    ms(first),
                    i64::from(n),
                    &run_id,
                    Some(body),
                ) {
                    break;
                }
            }
            Ok(out)
        })
    }

    fn threads(&self) -> BoxFuture<'_, Result<Vec<ThreadInfo>>> {
        Box::pin(async move {
            let mut c = self.inner.pool.get().await?;
            let rows = c.query(&self.inner.sql.threads, &[]).await?;
            Ok(rows.iter().map(thread_info).collect())
        })
    }

    fn claim_thread<'a>(
        &'a self,
        thread: &'a str,
        owner: Option<&'a str>,
    ) -> BoxFuture<'a, Result<ThreadInfo>> {
        Box::pin(async move {
            if thread.is_empty() {
                return Err(StoreError::Invalid("thread id is empty".into()));
            }
            // A thread made or deleted by another transaction while the claim ran is
            // claimed again. The claim is durable (committed by a writer, see `group`)
            // before the run's events, which name the thread's owner, can be.
            for _ in 0..3 {
                let params: Vec<group::Param> = vec![
                    Box::new(thread.as_bytes().to_vec()),
                    Box::new(owner.map(|o| o.as_bytes().to_vec())),
                    Box::new(now_ms() as i64),
                ];
                let rows =
                    group::run(&self.inner.writes, group::Kind::Claim, thread, params).await?;
                if let Some(row) = rows.first() {
                    return Ok(thread_info(row));
                }
            }
            Err(StoreError::unknown_thread(thread))
        })
    }

    fn list_threads<'a>(&'a self, query: &'a ThreadQuery) -> BoxFuture<'a, Result<ThreadPage>> {
        Box::pin(async move {
            let limit = page_limit(query.limit);
            let cursor = query.cursor.as_deref().map(decode_cursor).transpose()?;
            let owner = query.owner.as_deref().map(str::as_bytes);
            let mut sql = format!("{} WHERE true", self.inner.sql.list);
            let mut args: Vec<&(dyn ToSql + Sync)> = Vec::new();
            if let Some(o) = &owner {
                args.push(o);
                sql += &format!(" AND t.owner = ${}", args.len());
            }
            // A scope's threads are the keys that begin with its prefix; the unscoped ones,
            // those that do not begin as scoped keys do (compared as bytes).
            let (prefix, equal) = match &query.scope {
                Some(s) => (crate::scope_prefix(s).into_bytes(), "="),
                None => (crate::SCOPED.as_bytes().to_vec(), "<>"),
            };
            args.push(&prefix);
            sql += &format!(
                " AND substr(t.thread_id, 1, length(${p}::bytea)) {equal} ${p}::bytea",
                p = args.len()
            );
            let needles = query.needles();
            if let Some(n) = &needles {
                args.push(&n.title);
                args.push(&n.json);
                let (t, j) = (args.len() - 1, args.len());
                let term = self.inner.sql.search.replace("$T", &format!("${t}"));
                sql += &format!(" AND {}", term.replace("$J", &format!("${j}")));
            }
            let after = cursor.as_ref().map(|(ms, id)| (*ms as i64, id.as_bytes()));
            if let Some((ms, id)) = &after {
                args.push(ms);
                args.push(id);
                let (m, i) = (args.len() - 1, args.len());
                // The first term bounds the index scan; the second skips the ties already
                // listed.
                sql += &format!(
                    " AND t.updated_ms <= ${m} AND (t.updated_ms < ${m} OR t.thread_id > ${i})"
                );
            }
            let n = limit as i64 + 1;
            args.push(&n);
            sql += &format!(
                " ORDER BY t.updated_ms DESC, t.thread_id LIMIT ${}",
                args.len()
            );
            let mut c = self.inner.pool.get().await?;
            let rows = c.query(&sql, &args).await?;
            Ok(page_of(rows.iter().map(thread_info).collect(), limit))
        })
    }

    fn update_thread<'a>(
        &'a self,
        thread: &'a str,
        update: &'a ThreadUpdate,
    ) -> BoxFuture<'a, Result<ThreadInfo>> {
        Box::pin(async move {
            let mut c = self.inner.pool.get().await?;
            let title = update.title.as_deref().map(str::as_bytes);
            let fork_thread = update.fork_of.as_ref().map(|f| f.thread_id.as_bytes());
            let fork_run = update.fork_of.as_ref().map(|f| f.run_id.as_bytes());
            let changed = c
                .execute(
                    &self.inner.sql.update,
                    &[&thread.as_bytes(), &title, &fork_thread, &fork_run],
                )
                .await?;
            if changed == 0 {
                return Err(StoreError::unknown_thread(thread));
            }
            c.query_opt(&self.inner.sql.thread_info, &[&thread.as_bytes()])
                .await?
                .map(|r| thread_info(&r))
                .ok_or_else(|| StoreError::unknown_thread(thread))
        })
    }

    fn delete_thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            let mut c = self.inner.pool.get().await?;
            let now = now_ms() as i64;
            let row = c
                .query_one(
                    &self.inner.sql.delete,
                    &[&thread.as_bytes(), &payload(thread), &now],
                )
                .await?;
            drop(c);
            let outcome: i64 = row.get(0);
            if outcome == -5 {
                return Err(StoreError::ThreadBusy {
                    thread: thread.to_owned(),
                    run: self.busy_run(thread).await,
                });
            }
            self.inner.notifier.close(thread);
            Ok(outcome == 1)
        })
    }

    fn check_integrity(&self) -> BoxFuture<'_, Result<()>> {
        Box::pin(async move {
            let s = &self.inner.schema;
            let mut c = self.inner.pool.get().await?;
            let rows = c
                .query(
                    "SELECT table_name::text, column_name::text FROM information_schema.columns
                     WHERE table_schema = $1",
                    &[s],
                )
                .await?;
            let have: Vec<(String, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
            let mut missing: Vec<String> = Vec::new();
            for (table, columns) in EXPECTED {
                for col in columns {
                    if !have.iter().any(|(t, c)| t == table && c == col) {
                        missing.push(format!("{table}.{col}"));
                    }
                }
            }
            let functions: Vec<String> = c
                .query(
                    "SELECT p.proname::text FROM pg_proc p
                     JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1",
                    &[s],
                )
                .await?
                .iter()
                .map(|r| r.get(0))
                .collect();
            for f in ["append_v4", "append_v3", "append_if_new_v2", "delete_v2"] {
                if !functions.iter().any(|h| h == f) {
                    missing.push(format!("function {f}"));
                }
            }
            if missing.is_empty() {
                return Ok(());
            }
            Err(StoreError::Damaged(format!(
                "PostgreSQL schema {s} lacks {}. Connecting a store to it again re-creates \
                 what is missing (but not lost data): restore the schema from a backup, or \
                 drop it to start with an empty store",
                missing.join(", ")
            )))
        })
    }

    fn health(&self) -> BoxFuture<'_, Result<()>> {
        Box::pin(async move {
            let mut c = self.inner.pool.get().await?;
            c.query_one("SELECT 1", &[]).await?;
            Ok(())
        })
    }

    fn thread<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<ThreadInfo>> {
        Box::pin(async move {
            let mut c = self.inner.pool.get().await?;
            c.query_opt(&self.inner.sql.thread_info, &[&thread.as_bytes()])
                .await?
                .map(|r| thread_info(&r))
                .ok_or_else(|| StoreError::unknown_thread(thread))
        })
    }

    fn runs<'a>(&'a self, thread: &'a str) -> BoxFuture<'a, Result<Vec<RunInfo>>> {
        Box::pin(async move {
            let mut c = self.inner.pool.get().await?;
            let (tid, _) = self
                .thread_row(&mut c, thread)
                .await?
                .ok_or_else(|| StoreError::unknown_thread(thread))?;
            let rows = c.query(&self.inner.sql.runs, &[&tid]).await?;
            Ok(rows
                .into_iter()
                .map(|r| RunInfo {
                    run_id: text(r.get(0)),
                    parent_run_id: r.get::<_, Option<Vec<u8>>>(1).map(text),
                    status: RunStatus::parse(r.get(2)).unwrap_or(RunStatus::Running),
                    first_seq: ms(r.get(3)),
                    last_seq: ms(r.get(4)),
                })
                .collect())
        })
    }

    fn subscribe(&self, thread: &str) -> tokio::sync::watch::Receiver<u64> {
        self.inner.notifier.subscribe(thread)
    }

    fn poll_interval(&self) -> Option<Duration> {
        Some(self.inner.options.poll_interval)
    }

    fn renew_lease<'a>(
        &'a self,
        thread: &'a str,
        run: &'a str,
        until_ms: u64,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let until = i64::try_from(until_ms).unwrap_or(i64::MAX);
            let mut c = self.inner.pool.get().await?;
            c.execute(
                &self.inner.sql.lease_put,
                &[&thread.as_bytes(), &run.as_bytes(), &until],
            )
            .await?;
            Ok(())
        })
    }

    fn lease<'a>(&'a self, thread: &'a str, run: &'a str) -> BoxFuture<'a, Result<Option<u64>>> {
        Box::pin(async move {
            let mut c = self.inner.pool.get().await?;
            let row = c
                .query_opt(
                    &self.inner.sql.lease_get,
                    &[&thread.as_bytes(), &run.as_bytes()],
                )
                .await?;
            Ok(row.map(|r| ms(r.get(0))))
        })
    }

    fn tail(&self, thread: &str, from_seq: u64) -> BoxStream<'static, Result<StoredEvent>> {
        crate::tail_stream(self.clone(), thread, from_seq)
    }
}
