#!/usr/bin/env python3
"""Times commands in turn, round after round, and prints each one's median, minimum and
first quartile in milliseconds (wall time, output discarded).

On a shared machine whose speed drifts from minute to minute, running two builds in turn
compares them under the same conditions; running each many times in a row does not.

    scripts/alternate.py 25 "old/agui apply w2_state.sse" "target/release/agui apply w2_state.sse"
"""
import statistics
import subprocess
import sys
import time


def main() -> None:
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        sys.exit(f"usage: {sys.argv[0]} ROUNDS COMMAND...")
    rounds = int(sys.argv[1])
    commands = sys.argv[2:]
    times = [[] for _ in commands]
    for _ in range(rounds):
        for i, command in enumerate(commands):
            start = time.perf_counter()
            subprocess.run(command.split(), stdout=subprocess.DEVNULL, check=False)
            times[i].append(time.perf_counter() - start)
    for command, t in zip(commands, times):
        t.sort()
        print(
            f"{statistics.median(t) * 1e3:8.1f} median {t[0] * 1e3:8.1f} min "
            f"{t[len(t) // 4] * 1e3:8.1f} p25  {command}"
        )


if __name__ == "__main__":
    main()
