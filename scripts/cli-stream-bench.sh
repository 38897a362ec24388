#!/usr/bin/env bash
# The stream commands as a user runs them, against the floor: `agui verify` and `agui apply`
# (whole processes, release build) beside a bare serde_json `IgnoredAny` pass over the same
# frames read the same way (crates/aguikit-core/examples/ignored_any.rs), and their peak memory.
# Prints each ratio with its goal (issue 13):
#
#   verify, 1M-delta chat (~90 MB SSE): peak RSS <= 48 MB, time ratio >= 0.25
#   apply, chat / state / mixed:        time ratio >= 0.15
#   apply, every workload:              peak RSS <= 3 x its output + 32 MB
#
# time ratio = IgnoredAny's mean time / agui's mean time (1 = as fast as the floor).
#
# Needs python3, hyperfine (Debian/Ubuntu: `apt-get install hyperfine`; else
# `cargo install hyperfine`) and GNU time at /usr/bin/time (package `time`).
#
#   scripts/cli-stream-bench.sh            # all workloads, SSE
#   FORMAT=jsonl scripts/cli-stream-bench.sh
#   RUNS=20 scripts/cli-stream-bench.sh
#
# Workloads come from ../shared/bench/gen_workloads.py (or $AGUI_SHARED_DIR/bench) into
# target/workloads (or $AGUI_WORKLOADS), generated when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in python3 hyperfine /usr/bin/time; do
    if ! command -v "$tool" >/dev/null; then
        echo "cli-stream-bench: $tool is missing (see the top of this script)" >&2
        exit 2
    fi
done

shared=${AGUI_SHARED_DIR:-../shared}
work=${AGUI_WORKLOADS:-target/workloads}
format=${FORMAT:-sse}
runs=${RUNS:-10}

if [ ! -f "$work/manifest.json" ] || [ ! -f "$work/w4_big.sse" ]; then
    python3 "$shared/bench/gen_workloads.py" --out "$work"
fi
if [ ! -f "$work/w1_s1000000.sse" ]; then
    python3 "$shared/bench/gen_workloads.py" --out "$work" --only w1 --w1-scaling 1000000
fi

cargo build --release -q -p aguikit
cargo build --release -q -p aguikit-core --example ignored_any
agui=target/release/agui
floor=target/release/examples/ignored_any
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Mean wall time in seconds of a command, over $runs runs.
mean() {
    hyperfine -N --style none --warmup 2 --runs "$runs" --export-json "$tmp/h.json" \
        --output=null "$@" >/dev/null 2>&1
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["mean"])' "$tmp/h.json"
}

# Peak resident set size in MB of a command (its output discarded).
peak_mb() {
    /usr/bin/time -v "$@" >/dev/null 2>"$tmp/time.txt" || true
    awk -F: '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$tmp/time.txt"
}

verdict() { # value op goal
    python3 -c 'import sys; v, op, g = float(sys.argv[1]), sys.argv[2], float(sys.argv[3]); print("ok" if (v >= g if op == ">=" else v <= g) else "MISSED")' "$@"
}

printf '%-22s %-7s %10s %10s %7s %8s %9s %9s\n' workload command agui_ms floor_ms ratio goal peak_MB mem_goal
check() { # workload command time_goal(or -) rss_goal(MB, "out" for 3x output + 32, or -)
    local w=$1 cmd=$2 tgoal=$3 rgoal=$4 file="$work/$1.$format"
    local t_agui t_floor ratio peak out_mb goal_mb tv rv
    t_agui=$(mean "$agui $cmd $file")
    t_floor=$(mean "$floor $file")
    ratio=$(python3 -c "print(f'{$t_floor / $t_agui:.2f}')")
    peak=$(peak_mb "$agui" "$cmd" "$file")
    goal_mb=-
    if [ "$rgoal" = out ]; then
        "$agui" "$cmd" "$file" >"$tmp/out" || true
        out_mb=$(python3 -c "import os; print(os.path.getsize('$tmp/out') / 2**20)")
        goal_mb=$(python3 -c "print(f'{3 * $out_mb + 32:.1f}')")
    elif [ "$rgoal" != - ]; then
        goal_mb=$rgoal
    fi
    tv=; rv=
    [ "$tgoal" != - ] && tv=" time>=$tgoal:$(verdict "$ratio" '>=' "$tgoal")"
    [ "$goal_mb" != - ] && rv=" mem:$(verdict "$peak" '<=' "$goal_mb")"
    printf '%-22s %-7s %10.1f %10.1f %7s %8s %9s %9s%s%s\n' "$w.$format" "$cmd" \
        "$(python3 -c "print($t_agui * 1e3)")" "$(python3 -c "print($t_floor * 1e3)")" \
        "$ratio" "$tgoal" "$peak" "$goal_mb" "$tv" "$rv"
}

check w1_s1000000 verify 0.25 48
check w1_s1000000 apply - out
check w1_chat verify - -
check w1_chat apply 0.15 out
check w2_state apply 0.15 out
check w3_mixed apply 0.15 out
check w4_big apply - out
