"""Servers the client tests run against: ``agui serve`` (the build's binary), the official
Python SDK server of the interop peers (optionally with aguikit's encoder in it), and a TCP
proxy that cuts a connection mid-stream. Each is started on a free loopback port and
stopped by its process id."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import List, Optional

import pytest

TOKEN = "aguikit-python-tests-token-0123456789"


def interop_dir() -> Path:
    if os.environ.get("AGUI_SKIP_INTEROP") == "1":
        pytest.skip("AGUI_SKIP_INTEROP=1: the official peers are not used")
    d = os.environ.get("AGUI_INTEROP_DIR")
    if not d:
        pytest.fail("AGUI_INTEROP_DIR is not set (run the suite with cargo test, or set it)")
    return Path(d)


class Process:
    """A child process, stopped when the test is done."""

    def __init__(self, args: List[str], env=None, cwd=None) -> None:
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            args, stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=cwd
        )

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


class AguiServe(Process):
    """``agui serve`` with the demo agent and a memory store."""

    def __init__(self, *extra: str) -> None:
        binary = os.environ.get("AGUI_BIN") or shutil.which("agui")
        if not binary or not Path(binary).exists():
            pytest.fail(
                f"the agui binary ({binary}) is missing: cargo test --workspace builds it "
                "(with -p aguikit-python alone, run cargo build -p aguikit first)"
            )
        env = dict(os.environ, AGUI_TOKEN=TOKEN)
        super().__init__(
            [binary, "serve", "--listen", "127.0.0.1:0", "--store", "memory", *extra], env=env
        )
        deadline = time.time() + 30
        while time.time() < deadline:
            m = re.search(r"listening on (http://127\.0\.0\.1:\d+)/", self.output())
            if m and "Press Ctrl-C" in self.output():
                self.base = m.group(1)
                self.url = self.base + "/agent"
                self.port = int(self.base.rsplit(":", 1)[1])
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        pytest.fail("agui serve did not start:\n" + self.output())

    headers = {"Authorization": f"Bearer {TOKEN}"}


class PyServer(Process):
    """The official Python SDK server (py-server/server.py), with the official encoder or,
    with ``aguikit_encoder``, with aguikit's ``EventEncoder`` in its place."""

    def __init__(self, aguikit_encoder: bool = False) -> None:
        d = interop_dir()
        script = d / "py-server" / "server.py"
        self.port_file = Path(tempfile.mkdtemp()) / "port"
        if aguikit_encoder:
            script = swap_encoder(script)
        # The server runs in this environment (the SDK and starlette are pinned here too),
        # so that aguikit can be imported into it.
        super().__init__(
            [sys.executable, str(script), "--port", "0", "--port-file", str(self.port_file)],
            cwd=str(d),
        )
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                self.port = int(self.port_file.read_text().strip())
                self.url = f"http://127.0.0.1:{self.port}/agent"
                return
            except (OSError, ValueError):
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        pytest.fail("the Python SDK server did not start:\n" + self.output())


def swap_encoder(script: Path) -> Path:
    """A copy of the official server with aguikit's encoder imported in place of the SDK's.

    Only the import changes for SSE. The server turns the encoder's text into bytes with
    ``.encode()``, which assumes the SSE-only encoder; with protobuf the encoder's output
    is already bytes, so those two spots use ``encode_bytes`` (which gives the same bytes
    for SSE).
    """
    text = script.read_text()
    swapped = text.replace(
        "from ag_ui.encoder import EventEncoder", "from aguikit import EventEncoder"
    )
    swapped = swapped.replace(
        '"".join(encoder.encode(ev) for ev in item.events).encode()',
        'b"".join(encoder.encode_bytes(ev) for ev in item.events)',
    ).replace("encoder.encode(item).encode()", "encoder.encode_bytes(item)")
    assert swapped.count("aguikit") == 1 and swapped.count("encode_bytes") == 2, (
        "the official server's encoder lines changed; update swap_encoder"
    )
    out = Path(tempfile.mkdtemp()) / "server_aguikit.py"
    out.write_text(swapped)
    return out


class CuttingProxy:
    """A TCP proxy to ``port`` that resets its first connection after ``cut`` response
    bytes (None: never); later connections pass untouched. ``sent`` counts the response
    bytes of each connection."""

    def __init__(self, port: int, cut: Optional[int]) -> None:
        self.upstream = port
        self.cut = cut
        self.sent: List[int] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/agent"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            index = len(self.sent)
            self.sent.append(0)
            limit = self.cut if index == 0 else None
            threading.Thread(target=self._pipe, args=(client, index, limit), daemon=True).start()

    def _pipe(self, client: socket.socket, index: int, limit: Optional[int]) -> None:
        up = socket.create_connection(("127.0.0.1", self.upstream))

        def forward() -> None:
            try:
                while True:
                    data = client.recv(65536)
                    if not data:
                        break
                    up.sendall(data)
            except OSError:
                pass

        threading.Thread(target=forward, daemon=True).start()
        try:
            while limit is None or self.sent[index] < limit:
                data = up.recv(512)
                if not data:
                    break
                if limit is not None:
                    data = data[: limit - self.sent[index]]
                client.sendall(data)
                self.sent[index] += len(data)
        except OSError:
            pass
        # A reset (no lingering): the client sees a broken connection mid-body. Shutting
        # down first wakes the thread reading from the client.
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        for s in (client, up):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self) -> None:
        self.server.close()
