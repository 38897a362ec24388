#!/usr/bin/env python3
"""Peak memory of `agui serve` reading back a large stored thread (issue 36, row 6).

    cargo build --release -p aguikit
    python3 scripts/memory-thread.py [--agui target/release/agui] [--runs 40] [--kib 1024]

Stores a thread of `--runs` runs of the demo agent, each posted with a user message of
`--kib` KiB (the stored RUN_STARTED echoes it, the reply quotes it), in a SQLite store.
Then starts the server again on that file (no cached fold) and reports its resident memory
(RSS, from /proc): idle, the peak while it answers `GET /agent/threads/ID` (the engine's fold
of the whole thread), and the peak while it streams `GET /agent/threads/ID/connect?after=0`.
The peak of each phase is the kernel's high-water mark (VmHWM), reset between phases through
/proc/PID/clear_refs. Run it with two builds to compare them.
"""

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

from procmem import reset_peak, rss  # scripts/procmem.py


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(agui, db, port):
    p = subprocess.Popen(
        [agui, "serve", "--listen", f"127.0.0.1:{port}", "--store", f"sqlite:{db}",
         "--no-auth", "--delay-ms", "0", "--max-body-bytes", str(64 << 20)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in p.stdout:
        if line.startswith("Press Ctrl-C"):
            break
    return p


def request(port, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    n = 0
    while True:
        chunk = r.read(1 << 16)
        if not chunk:
            break
        n += len(chunk)
    c.close()
    return r.status, n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agui", default="target/release/agui")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--kib", type=int, default=1024)
    a = ap.parse_args()
    mib = 1 << 20
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "x.db")
        port = free_port()
        p = start(a.agui, db, port)
        words = "lorem ipsum dolor sit amet " * (a.kib * 1024 // 27)
        for i in range(a.runs):
            body = json.dumps({"threadId": "big", "runId": f"r{i}",
                               "messages": [{"id": f"u{i}", "role": "user", "content": f"{i} {words}"}],
                               "tools": [], "context": []})
            status, _ = request(port, "POST", "/agent", body)
            if status != 200:
                sys.exit(f"run {i}: HTTP {status}")
        p.terminate()
        p.wait()
        stored = os.path.getsize(db) + (os.path.getsize(db + "-wal") if os.path.exists(db + "-wal") else 0)
        port = free_port()
        p = start(a.agui, db, port)
        time.sleep(1)
        idle = rss(p.pid, "VmRSS")
        out = {"runs": a.runs, "message_kib": a.kib, "store_file_mib": round(stored / mib, 1),
               "idle_rss_mib": round(idle / mib, 1)}
        for name, path in [("thread", "/agent/threads/big"),
                           ("connect", "/agent/threads/big/connect?after=0")]:
            reset_peak(p.pid)
            t0 = time.time()
            status, n = request(port, "GET", path)
            out[name] = {"status": status, "body_mib": round(n / mib, 1),
                         "peak_rss_mib": round(rss(p.pid, "VmHWM") / mib, 1),
                         "seconds": round(time.time() - t0, 2)}
        time.sleep(2)
        out["after_rss_mib"] = round(rss(p.pid, "VmRSS") / mib, 1)
        p.terminate()
        p.wait()
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
