#!/usr/bin/env python3
"""Writes seed corpora for the fuzz targets from the shared conformance cases.

Usage: python3 fuzz/scripts/seed_corpus.py [CASES_DIR]   (run from the repository root)

CASES_DIR defaults to ../shared/conformance/cases. Output goes to fuzz/corpus/<target>/,
which is git-ignored.
"""
import base64
import hashlib
import json
import pathlib
import struct
import sys

cases = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/conformance/cases")
out = pathlib.Path(__file__).resolve().parent.parent / "corpus"


def put(target, data):
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


n = 0
for path in sorted(cases.glob("*.json")):
    case = json.loads(path.read_text())
    expect = case.get("expect", {})
    for i, event in enumerate(case.get("events", [])):
        if isinstance(event, dict):
            put("json_event", json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode())
        else:
            put("json_event", json.dumps(event).encode())
    sse = expect.get("sse")
    if isinstance(sse, str):
        body = sse.encode()
        # sse_decoder header: count of chunk sizes, sizes, limit selector.
        put("sse_decoder", b"\x00\x00" + body)
        put("sse_decoder", b"\x03\x01\x07\x40\x00" + body.replace(b"\n", b"\r\n"))
        put("sse_decoder", b"\x02\x05\x00\x01" + b"\xef\xbb\xbf" + body.replace(b"\n", b"\r"))
    proto = expect.get("proto")
    if isinstance(proto, list):
        stream = b""
        for b64 in proto:
            if not isinstance(b64, str):
                continue
            body = base64.b64decode(b64)
            put("proto_decode", body)
            stream += struct.pack(">I", len(body)) + body
        # proto_decode reads byte 0 as the chunk size for the framed stream.
        put("proto_decode", b"\x03" + stream)
    n += 1
print(f"seeded from {n} cases into {out}")
