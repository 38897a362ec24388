#!/usr/bin/env python3
"""Peak memory of `agui serve` while it inspects large recordings (issue 36, row 6).

    cargo build --release -p aguikit
    python3 scripts/memory-inspect.py [--agui target/release/agui] [--mib 64]

Writes a recording of tiny events (`--mib` MiB of JSON Lines: runs of short text
messages), starts `agui serve` with three principals, and reports the server's resident
memory (RSS, from /proc) idle, at its peak during one `POST /api/inspect`, at its peak
during three sent at once (one per principal; the server inspects at most two at once and
answers the third 429), and a while after. The peak of each phase is the kernel's high-water
mark (VmHWM), reset between phases through /proc/PID/clear_refs.
Goals: one request <= 4 x body + 64 MiB; three at once <= 1 GiB; afterwards within 1.5 x idle.
"""

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

from procmem import reset_peak, rss  # scripts/procmem.py


def recording(path, mib):
    target = mib << 20
    size = 0
    run = 0
    with open(path, "w") as f:
        while size < target:
            lines = [json.dumps({"type": "RUN_STARTED", "threadId": "t", "runId": f"r{run}"})]
            for m in range(2000):
                mid = f"m{run}-{m}"
                lines.append(json.dumps({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"}))
                lines.append(json.dumps({"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": "hi"}))
                lines.append(json.dumps({"type": "TEXT_MESSAGE_END", "messageId": mid}))
            lines.append(json.dumps({"type": "RUN_FINISHED", "threadId": "t", "runId": f"r{run}"}))
            text = "\n".join(lines) + "\n"
            f.write(text)
            size += len(text)
            run += 1
    return size


def inspect(addr, token, body, out, i):
    host, port = addr.rsplit(":", 1)
    try:
        c = http.client.HTTPConnection(host, int(port), timeout=600)
        c.request("POST", "/api/inspect", body=body,
                  headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        out[i] = (r.status, len(data))
    except OSError as e:
        # A 429 is answered before the body is read; the server may close while it is sent.
        out[i] = (f"error: {e}", 0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--agui", default="target/release/agui")
    p.add_argument("--mib", type=int, default=64)
    a = p.parse_args()
    tmp = tempfile.mkdtemp()
    rec = os.path.join(tmp, "recording.jsonl")
    # Just under the route's 64 MiB limit.
    size = recording(rec, a.mib - 1)
    body = open(rec, "rb").read()
    tokens = {name: f"{name}-token-0123456789abcdef0123456789" for name in ("alice", "bob", "carol")}
    tf = os.path.join(tmp, "tokens")
    with open(tf, "w") as f:
        for name, tok in tokens.items():
            f.write(f"{name} {tok}\n")
    proc = subprocess.Popen([a.agui, "serve", "--listen", "127.0.0.1:0", "--store", "memory",
                             "--token-file", tf], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    addr = None
    for line in proc.stdout:
        if "listening on http://" in line:
            addr = line.split("http://")[1].strip().rstrip("/")
        if line.startswith("Press Ctrl-C"):
            break
    threading.Thread(target=lambda: proc.stdout.read(), daemon=True).start()
    pid = proc.pid
    try:
        time.sleep(1)
        idle = rss(pid, "VmRSS")
        events = body.count(b"\n")
        print(f"recording: {size / 2**20:.1f} MiB of JSON Lines ({events} events)")
        print(f"idle RSS: {idle / 2**20:.1f} MiB")
        reset_peak(pid)
        out = {}
        t0 = time.time()
        inspect(addr, tokens["alice"], body, out, 0)
        one = rss(pid, "VmHWM")
        limit = 4 * size + (64 << 20)
        print(f"one inspect: status {out[0][0]}, answer {out[0][1] / 2**20:.1f} MiB, {time.time() - t0:.1f} s; "
              f"peak RSS {one / 2**20:.1f} MiB (goal <= {limit / 2**20:.0f} MiB: {'ok' if one <= limit else 'MISSED'})")
        reset_peak(pid)
        threads = [threading.Thread(target=inspect, args=(addr, tokens[n], body, out, i))
                   for i, n in enumerate(tokens)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        three = rss(pid, "VmHWM")
        print(f"three at once: statuses {[out[i][0] for i in range(3)]}; peak RSS {three / 2**20:.1f} MiB "
              f"(goal <= 1024 MiB: {'ok' if three <= 1 << 30 else 'MISSED'})")
        time.sleep(15)
        after = rss(pid, "VmRSS")
        print(f"15 s after: RSS {after / 2**20:.1f} MiB (goal <= 1.5 x idle = {1.5 * idle / 2**20:.1f} MiB: "
              f"{'ok' if after <= 1.5 * idle else 'MISSED'})")
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    sys.exit(main())
