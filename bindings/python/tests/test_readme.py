"""The README's examples run as written and pass mypy --strict against the
package's stubs. The cluster example is given the test's etcd in place of
the README's endpoint."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

from conftest import Etcd

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
ENDPOINT = "http://127.0.0.1:2379"


def examples() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 7, "the README's examples were not found"
    return blocks


def test_every_example_runs(tmp_path: pathlib.Path, etcd: Etcd) -> None:
    for i, block in enumerate(examples()):
        here = tmp_path / f"example{i}"
        here.mkdir()
        (here / "example.py").write_text(block.replace(ENDPOINT, etcd.endpoint))
        run = subprocess.run(
            [sys.executable, "example.py"], cwd=here, capture_output=True, text=True, timeout=120
        )
        assert run.returncode == 0, f"example {i}:\n{block}\n{run.stderr}"


def test_every_example_passes_mypy_strict(tmp_path: pathlib.Path) -> None:
    files = []
    for i, block in enumerate(examples()):
        path = tmp_path / f"example{i}.py"
        path.write_text(block)
        files.append(str(path))
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *files],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
