#!/usr/bin/env python3
"""Two JSON Lines streams that edit long arrays in the state, for `agui apply`:

  edits.jsonl    a snapshot of an array of 200,000 numbers, then 2,000 deltas that each
                 remove one element and insert one in the array's first half;
  build.jsonl    20,000 deltas alone (no snapshot) that build an array of about 13,000
                 objects, inserting all through it and removing every third time;
  replace.jsonl  a snapshot of an array of 1,000,000 numbers, then 20,000 deltas that each
                 replace one element anywhere in it (reaching an element, no moving).

    python3 scripts/long-array-streams.py OUT_DIR
    target/release/agui apply OUT_DIR/edits.jsonl > /dev/null

Deterministic (no randomness): positions come from multiplying by primes.
"""
import json
import os
import sys


def run(events):
    yield {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
    yield from events
    yield {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def edits(n=200_000, deltas=2_000):
    yield {"type": "STATE_SNAPSHOT", "snapshot": {"l": list(range(n))}}
    for i in range(deltas):
        yield {"type": "STATE_DELTA", "delta": [
            {"op": "remove", "path": f"/l/{i * 37 % (n // 2)}"},
            {"op": "add", "path": f"/l/{i * 53 % (n // 2)}", "value": i},
        ]}


def build(deltas=20_000):
    yield {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/l", "value": []}]}
    n = 0
    for i in range(deltas):
        ops = [{"op": "add", "path": f"/l/{i * 7919 % (n + 1)}",
                "value": {"id": i, "name": f"item {i}", "tags": ["a", "b"]}}]
        n += 1
        if i % 3 == 2:
            ops.append({"op": "remove", "path": f"/l/{i * 104729 % n}"})
            n -= 1
        yield {"type": "STATE_DELTA", "delta": ops}


def replace(n=1_000_000, deltas=20_000):
    yield {"type": "STATE_SNAPSHOT", "snapshot": {"l": list(range(n))}}
    for i in range(deltas):
        yield {"type": "STATE_DELTA", "delta": [
            {"op": "replace", "path": f"/l/{i * 104729 % n}", "value": -i},
        ]}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "target/long-arrays"
    os.makedirs(out, exist_ok=True)
    for name, events in (("edits", edits()), ("build", build()), ("replace", replace())):
        with open(os.path.join(out, f"{name}.jsonl"), "w", encoding="utf-8") as f:
            for event in run(events):
                f.write(json.dumps(event, separators=(",", ":")) + "\n")
        print(os.path.join(out, f"{name}.jsonl"))


if __name__ == "__main__":
    main()
