#!/usr/bin/env python3
"""Ids chosen to collide against random ids (issue 36, row 2), on `agui verify`, on
`POST /api/inspect` and on reading a stored thread (`GET /agent/threads/ID`).

    cargo build --release -p aguikit
    python3 scripts/hash-flood.py [--agui target/release/agui] [--ids 20000]

The colliding ids all hash alike under the unkeyed multiply-rotate hash (FxHash's scheme,
eight bytes at a time) the verifier used before `aguikit_core::hash`: 15 two-word blocks,
each with two variants that reach the same state, so 2^15 ids of 240 printable bytes share
one 64-bit hash. The random ids have the same length. Each recording holds RUN_STARTED,
TEXT_MESSAGE_START and TEXT_MESSAGE_END for every id, and RUN_FINISHED; each stored thread
is one run whose input holds one user message per id. Every figure is the best of three
wall-clock times (seconds). Goal: colliding at most 2x random.
"""

import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time

M64 = (1 << 64) - 1
SEED = 0x517CC1B727220A95


def rotl5(h):
    return ((h << 5) | (h >> 59)) & M64


def step(h, w):
    return ((rotl5(h) ^ w) * SEED) & M64


def printable(b):
    return 0x21 <= b < 0x7F and b not in (0x22, 0x5C)


def word(n):
    out = bytearray()
    for _ in range(8):
        out.append(ord("a") + n % 26)
        n //= 26
    return int.from_bytes(out, "little")


def colliding(n):
    state, blocks, counter = 0, [], 0
    while len(blocks) < 15:
        a, a2 = word(counter), word(counter + 1)
        counter += 2
        d = rotl5(step(state, a)) ^ rotl5(step(state, a2))
        picks = []
        for x in d.to_bytes(8, "little"):
            p = next((p for p in range(0x21, 0x7F) if printable(p) and printable(p ^ x)), None)
            if p is None:
                break
            picks.append(p)
        if len(picks) < 8:
            continue
        b = int.from_bytes(bytes(picks), "little")
        b2 = b ^ d
        assert step(step(state, a), b) == step(step(state, a2), b2)
        blocks.append(((a, b), (a2, b2)))
        state = step(step(state, a), b)
    ids = []
    for bits in range(n):
        raw = bytearray()
        for i, pair in enumerate(blocks):
            x, y = pair[(bits >> i) & 1]
            raw += x.to_bytes(8, "little") + y.to_bytes(8, "little")
        ids.append(raw.decode())
    return ids


def random_ids(n, length=240):
    alphabet = [chr(c) for c in range(0x21, 0x7F) if printable(c)]
    rng = random.Random(36)
    return ["".join(rng.choice(alphabet) for _ in range(length)) for _ in range(n)]


def recording(ids):
    lines = [json.dumps({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})]
    for i in ids:
        lines.append(json.dumps({"type": "TEXT_MESSAGE_START", "messageId": i, "role": "assistant"}))
        lines.append(json.dumps({"type": "TEXT_MESSAGE_END", "messageId": i}))
    lines.append(json.dumps({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}))
    return ("\n".join(lines) + "\n").encode()


def best(f, n=3):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def request(addr, method, path, token, body=None):
    host, port = addr.rsplit(":", 1)
    c = http.client.HTTPConnection(host, int(port), timeout=900)
    headers = {"Authorization": f"Bearer {token}"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    data = r.read()
    if r.status != 200:
        sys.exit(f"{method} {path}: HTTP {r.status}: {data[:300]!r}")
    return data


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--agui", default="target/release/agui")
    p.add_argument("--ids", type=int, default=20000)
    a = p.parse_args()
    tmp = tempfile.mkdtemp()
    sets = {"colliding": colliding(a.ids), "random": random_ids(a.ids)}
    token = "hash-flood-token-0123456789abcdef"
    env = dict(os.environ, AGUI_TOKEN=token)
    serve = subprocess.Popen(
        [a.agui, "serve", "--listen", "127.0.0.1:0", "--store", "memory", "--delay-ms", "0",
         "--log-level", "warn"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    addr = serve.stdout.readline().split("http://")[1].strip().rstrip("/")
    results = {}
    try:
        for name, ids in sets.items():
            rec = recording(ids)
            path = os.path.join(tmp, f"{name}.jsonl")
            with open(path, "wb") as f:
                f.write(rec)

            def verify():
                out = subprocess.run([a.agui, "verify", path], capture_output=True)
                if out.returncode != 0:
                    sys.exit(f"agui verify {name}: exit {out.returncode}: {out.stderr[:300]!r}")

            t_verify = best(verify)
            t_inspect = best(lambda: request(addr, "POST", "/api/inspect", token, rec))
            body = json.dumps({
                "threadId": f"flood-{name}", "runId": "r1",
                "messages": [{"id": i, "role": "user", "content": "x"} for i in ids],
                "state": {}, "tools": [], "context": [], "forwardedProps": {},
            }).encode()
            request(addr, "POST", "/agent", token, body)
            t_read = best(lambda: request(addr, "GET", f"/agent/threads/flood-{name}", token))
            results[name] = (len(rec), t_verify, t_inspect, t_read)
    finally:
        serve.terminate()
        serve.wait()
    print(f"{a.ids} ids of 240 bytes; best of 3, seconds")
    print(f"{'ids':<10} {'recording':>10} {'agui verify':>12} {'/api/inspect':>13} {'thread read':>12}")
    for name, (size, v, i, r) in results.items():
        print(f"{name:<10} {size / 1e6:>8.1f}MB {v:>12.3f} {i:>13.3f} {r:>12.3f}")
    c, r = results["colliding"], results["random"]
    print(f"{'ratio':<10} {'':>10} {c[1] / r[1]:>12.2f} {c[2] / r[2]:>13.2f} {c[3] / r[3]:>12.2f}")


if __name__ == "__main__":
    main()
