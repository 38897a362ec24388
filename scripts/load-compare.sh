#!/usr/bin/env bash
# What a user runs, side by side in one run: `agui load` (the real client, over real
# sockets) against `agui serve` on each store and against the official Python SDK server,
# then the ratios against the Python server (issue 13's goals: ≥ 20× on memory, ≥ 10× on
# SQLite, ≥ 5× on PostgreSQL, p50 ≤ 3 ms at concurrency 1).
#
#   scripts/load-compare.sh                 # builds the release binary first
#   RUNS=5000 CONC=32 ROUNDS=3 scripts/load-compare.sh   # the defaults
#
# Needs: the interop peers installed in target/interop (see .ci/run), and for PostgreSQL
# AGUI_TEST_POSTGRES_URL (skipped without it; with psql, the run gets a fresh database on
# that server, dropped at the end). Every server runs with --no-auth on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5000}
CONC=${CONC:-32}
SEQ_RUNS=${SEQ_RUNS:-300}
ROUNDS=${ROUNDS:-3}
cargo build --release -q -p aguikit
agui=target/release/agui
work=$(mktemp -d)
pids=()
cleanup() {
  # Servers started inside $(...) record their pid in $work/*.pid (a subshell cannot add
  # to this shell's array).
  for p in "${pids[@]}" $(cat "$work"/*.pid 2>/dev/null); do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
  if [ -n "${pg_admin:-}" ]; then
    sleep 0.5 # the server's connections close first
    psql "$pg_admin" -qAtc "DROP DATABASE IF EXISTS $pg_db WITH (FORCE)" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

# Starts `agui serve` with a store; prints its agent URL.
serve() {
  local log="$work/serve-$1.log"
  "$agui" serve --listen 127.0.0.1:0 --delay-ms 0 --no-auth --store "$2" >"$log" 2>&1 &
  echo $! >"$work/serve-$1.pid"
  for _ in $(seq 100); do grep -q "Press Ctrl-C" "$log" && break; sleep 0.1; done
  echo "$(sed -n 's/^agui serve: listening on \(http:[^ ]*\)/\1/p' "$log")agent"
}

# `agui load URL --runs N --concurrency C --json` → "runs_per_s p50_ms".
load() {
  "$agui" load "$1" --runs "$2" --concurrency "$3" --json |
    python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["runsPerSec"], r["latencyMs"]["p50"])'
}

declare -A rps p50 med
targets=(memory sqlite)
url_memory=$(serve memory memory)
url_sqlite=$(serve sqlite "sqlite:$work/load.db")
if [ -n "${AGUI_TEST_POSTGRES_URL:-}" ]; then
  pg_url=$AGUI_TEST_POSTGRES_URL
  # A fresh database for this run (dropped at the end) when psql can make one: the threads
  # of earlier runs would otherwise pile up in the store's schema and slow the next ones.
  if command -v psql >/dev/null; then
    pg_db="agui_load_$$"
    if psql "$pg_url" -qAtc "CREATE DATABASE $pg_db" >/dev/null 2>&1; then
      pg_admin=$pg_url
      pg_url=$(python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/" + sys.argv[2])))' "$pg_url" "$pg_db")
    fi
  fi
  url_postgres=$(serve postgres "$pg_url")
  targets+=(postgres)
fi
if [ -x target/interop/.venv/bin/python ]; then
  # exec: the recorded pid is Python's own, so the cleanup stops the server itself.
  (cd target/interop && exec .venv/bin/python py-server/server.py --port 0 --port-file "$work/py.port" >/dev/null 2>&1) &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$work/py.port" ] && break; sleep 0.1; done
  url_python="http://127.0.0.1:$(cat "$work/py.port")/agent"
  targets+=(python)
else
  echo "(target/interop is not installed: no Python server to compare with; see .ci/run)"
fi

# Every target once per round, the rounds one after the other: a shared machine's speed
# changes from minute to minute, and the Python server's figure (bound by its own latency)
# hardly moves with it, so one measurement each can put the ratio anywhere in a wide band.
# The ratios are of the medians over the rounds.
for round in $(seq "$ROUNDS"); do
  for t in "${targets[@]}"; do
    var="url_$t"
    url=${!var}
    load "$url" 50 8 >/dev/null # warm-up
    read -r r _ < <(load "$url" "$RUNS" "$CONC")
    rps[$t]="${rps[$t]:-} $r"
    if [ "$round" = 1 ]; then
      read -r _ p < <(load "$url" "$SEQ_RUNS" 1)
      p50[$t]=$p
    fi
    printf 'round %s  %-9s %10.0f runs/s at concurrency %s\n' "$round" "$t" "$r" "$CONC"
  done
done
median() { python3 -c 'import statistics, sys; print(statistics.median(map(float, sys.argv[1:])))' "$@"; }
for t in "${targets[@]}"; do
  # shellcheck disable=SC2086 # the list of figures is split on purpose
  m=$(median ${rps[$t]})
  med[$t]=$m
  printf '%-9s %10.0f runs/s (median of%s) at concurrency %s   p50 %6.2f ms at concurrency 1\n' \
    "$t" "$m" "$(printf ' %.0f' ${rps[$t]})" "$CONC" "${p50[$t]}"
done
if [ -n "${med[python]:-}" ]; then
  for t in memory sqlite postgres; do
    [ -n "${med[$t]:-}" ] || continue
    python3 -c "print(f'$t vs the Python server: {${med[$t]}/${med[python]}:.1f}x runs/s')"
  done
fi
