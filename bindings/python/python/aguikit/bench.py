"""Benchmark: aguikit against the official Python SDK on the chat workload.

    python3 ../shared/bench/gen_workloads.py --out target/workloads --only w1
    python -m aguikit.bench target/workloads [--events 20000] [--rounds 5]

Needs ``ag-ui-protocol`` (the official SDK) installed. Measured in one process, the
contenders alternating within each round, so that a noisy machine disturbs both alike;
prints each round's figures and the median of each ratio over the rounds:

- encode dicts: ``aguikit.EventEncoder().encode(dict)`` against the official
  ``EventEncoder().encode(model)`` (models built beforehand, not timed);
- encode models: ``aguikit.EventEncoder().encode(model)`` against the same;
- decode SSE: ``aguikit.decode(sse_bytes)`` (a list of event dicts) against what a
  Python consumer of the official SDK does: split the frames, ``json.loads`` each one's
  data and validate it with the SDK's pydantic models (``TypeAdapter(Event)``); measured
  twice, with Python's garbage collector on (the default) and off (``gc.disable()``: the
  collector's passes over the objects built weigh more on the official side), each
  contender starting from a collected heap; in wall-clock time and in the process's CPU
  time (the same on an idle machine; on a busy one the CPU time is the steadier figure);
- verify + apply: ``aguikit.apply(sse_bytes)`` (decode, expand, verify, fold: the
  whole workload), in events per second.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Tuple


def timed(f: Callable[[], object]) -> float:
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def timed_gc(f: Callable[[], object], collector: bool) -> Tuple[float, float]:
    """`f`'s wall-clock and CPU time from a collected heap, the garbage collector on or off."""
    gc.collect()
    if not collector:
        gc.disable()
    try:
        w, c = time.perf_counter(), time.process_time()
        f()
        return time.perf_counter() - w, time.process_time() - c
    finally:
        gc.enable()


def main(argv: List[str] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workloads", type=Path, help="the folder gen_workloads.py wrote")
    p.add_argument("--events", type=int, default=20000, help="events of the chat workload to encode/decode (default 20000)")
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args(argv)

    try:
        from ag_ui.core import Event
        from ag_ui.encoder import EventEncoder as Official
        from pydantic import TypeAdapter
    except ImportError:
        print("the benchmark compares with the official SDK: pip install ag-ui-protocol", file=sys.stderr)
        return 2
    import aguikit

    lines = (a.workloads / "w1_chat.jsonl").read_bytes().splitlines()
    full_sse = (a.workloads / "w1_chat.sse").read_bytes()
    dicts = [json.loads(l) for l in lines[: a.events]]
    adapter = TypeAdapter(Event)
    models = [adapter.validate_python(d) for d in dicts]
    official, ours = Official(), aguikit.EventEncoder()
    sse = "".join(official.encode(m) for m in models)
    sse_bytes = sse.encode()
    assert "".join(ours.encode(d) for d in dicts) == sse, "not byte-identical"
    n = len(dicts)
    total = len(lines)

    def official_decode():
        return [adapter.validate_python(json.loads(f[6:])) for f in sse.split("\n\n") if f]

    def ours_decode():
        return aguikit.decode(sse_bytes)

    assert len(ours_decode()) == len(official_decode()) == n

    rows: Dict[str, List[float]] = {
        k: []
        for k in ("enc_dict", "enc_model", "decode", "decode_nogc", "decode_cpu", "decode_cpu_nogc", "apply", "verify")
    }
    print(
        f"chat workload: {n} events encoded/decoded per round, {total} folded; {a.rounds} rounds; "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs; times are wall-clock (decode also in CPU time)"
    )
    for r in range(a.rounds):
        t_off = timed(lambda: [official.encode(m) for m in models])
        t_dict = timed(lambda: [ours.encode(d) for d in dicts])
        t_model = timed(lambda: [ours.encode(m) for m in models])
        (t_offdec, c_offdec), (t_dec, c_dec) = timed_gc(official_decode, True), timed_gc(ours_decode, True)
        (t_offdec_nogc, c_offdec_nogc), (t_dec_nogc, c_dec_nogc) = (
            timed_gc(official_decode, False),
            timed_gc(ours_decode, False),
        )
        t_apply = timed(lambda: aguikit.apply(full_sse))
        t_verify = timed(lambda: aguikit.verify(full_sse))
        rows["enc_dict"].append(t_off / t_dict)
        rows["enc_model"].append(t_off / t_model)
        rows["decode"].append(t_offdec / t_dec)
        rows["decode_nogc"].append(t_offdec_nogc / t_dec_nogc)
        rows["decode_cpu"].append(c_offdec / c_dec)
        rows["decode_cpu_nogc"].append(c_offdec_nogc / c_dec_nogc)
        rows["apply"].append(total / t_apply)
        rows["verify"].append(total / t_verify)
        print(
            f"round {r + 1}: official encode {t_off / n * 1e6:.2f} us/event; "
            f"dicts {t_dict / n * 1e6:.2f} us ({t_off / t_dict:.1f}x), models {t_model / n * 1e6:.2f} us ({t_off / t_model:.1f}x); "
            f"decode: json.loads+pydantic {t_offdec / n * 1e6:.2f} us/event, aguikit {t_dec / n * 1e6:.3f} us ({t_offdec / t_dec:.1f}x), "
            f"gc off {t_offdec_nogc / n * 1e6:.2f} / {t_dec_nogc / n * 1e6:.3f} us ({t_offdec_nogc / t_dec_nogc:.1f}x); "
            f"in CPU time {c_offdec / c_dec:.1f}x, gc off {c_offdec_nogc / c_dec_nogc:.1f}x; "
            f"apply {total / t_apply / 1e6:.2f} M events/s, verify {total / t_verify / 1e6:.2f} M events/s",
            flush=True,
        )
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(
        f"median: encode dicts {med['enc_dict']:.1f}x, encode models {med['enc_model']:.1f}x the official encoder; "
        f"decode SSE to dicts {med['decode']:.1f}x (gc off {med['decode_nogc']:.1f}x; in CPU time {med['decode_cpu']:.1f}x, "
        f"gc off {med['decode_cpu_nogc']:.1f}x) json.loads + the SDK's pydantic validation; "
        f"verify+apply {med['apply'] / 1e6:.2f} M events/s (verify alone {med['verify'] / 1e6:.2f} M events/s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
