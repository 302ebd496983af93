"""What the rooms share: the repository's files, the snowflake command, a
private etcd.

The tests run against the installed package (scripts/python-test builds the
wheel and installs it into a fresh virtualenv), never against the source
tree. What they need from outside is given by the script and required, not
skipped without it: SNOWFLAKE_BIN, the snowflake command built from the same
checkout, and etcd on the PATH.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from typing import Any, Iterator

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]


def run_in_child(script: str, *args: str, timeout: float, hang: str) -> None:
    """Runs `script` in a child Python with `args`, so that a hang (a
    deadlock that holds the GIL for good) fails the test after `timeout`
    seconds, saying `hang`, instead of hanging the run; the child's own
    assertions fail it too."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{hang} ({timeout:g} s)")
    assert done.returncode == 0, done.stderr


# For a script `run_in_child` runs: `issuing(source, batch)` starts four
# threads that issue from `source` (a Generator or a ClusterNode) until it
# refuses, half one ID a call and half `batch` at a time; each adds the
# highest ID it got to `got` and the refusal's kind to `ended`.
ISSUING = """
import threading
import snowflake_toolkit as sf

def issuing(source, batch):
    got, ended = [], []

    def work(batches):
        mine = 0
        try:
            while True:
                mine = max(mine, max(source.next_ids(batch)) if batches else source.next_id())
        except sf.Unavailable as refused:
            ended.append(refused.kind)
        got.append(mine)

    threads = [threading.Thread(target=work, args=(i % 2 == 0,)) for i in range(4)]
    for t in threads:
        t.start()
    return threads, got, ended
"""


def load(name: str) -> Any:
    """A file of testdata/, as JSON."""
    return json.loads((REPO / "testdata" / name).read_text())


@pytest.fixture(scope="session")
def vectors() -> Any:
    return load("vectors.json")


@pytest.fixture(scope="session")
def snowflake_bin() -> str:
    """The snowflake command of this checkout (SNOWFLAKE_BIN)."""
    path = os.environ.get("SNOWFLAKE_BIN")
    assert path and os.access(path, os.X_OK), (
        "set SNOWFLAKE_BIN to the snowflake command of this checkout "
        "(scripts/python-test does: target/debug/snowflake)"
    )
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Etcd:
    """One etcd member on loopback in a temporary directory."""

    def __init__(self) -> None:
        assert shutil.which("etcd"), "etcd is not installed: apt-get install etcd-server"
        self.dir = tempfile.mkdtemp(prefix="snowflake-py-etcd-")
        for _ in range(3):
            client, peer = free_port(), free_port()
            self.endpoint = f"http://127.0.0.1:{client}"
            log = open(os.path.join(self.dir, "etcd.log"), "wb")
            self.process = subprocess.Popen(
                [
                    "etcd",
                    f"--data-dir={self.dir}/data",
                    f"--listen-client-urls={self.endpoint}",
                    f"--advertise-client-urls={self.endpoint}",
                    f"--listen-peer-urls=http://127.0.0.1:{peer}",
                    f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                    f"--initial-cluster=default=http://127.0.0.1:{peer}",
                    "--log-level=error",
                ],
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
            if self._healthy():
                return
            self.process.kill()
            self.process.wait()
        raise AssertionError(f"etcd did not start: {self.log()}")

    def _healthy(self) -> bool:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                with urllib.request.urlopen(self.endpoint + "/health", timeout=1) as r:
                    if b"true" in r.read():
                        return True
            except OSError:
                pass
            time.sleep(0.1)
        return False

    def log(self) -> str:
        return pathlib.Path(self.dir, "etcd.log").read_text(errors="replace")

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def etcd() -> Iterator[Etcd]:
    server = Etcd()
    try:
        yield server
    finally:
        server.stop()
