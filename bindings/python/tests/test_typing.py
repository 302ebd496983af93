"""The stubs are the module as it is (mypy's stubtest compares every name,
signature and class in snowflake_toolkit.pyi with the built module), they
are in the wheel with py.typed, and every public name has a docstring."""

from __future__ import annotations

import inspect
import pathlib
import subprocess
import sys

import snowflake_toolkit as sf

ALLOWLIST = pathlib.Path(__file__).with_name("stubtest-allowlist.txt")


def test_stubtest_finds_the_stubs_and_the_module_alike() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "snowflake_toolkit", "--allowlist", str(ALLOWLIST)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_stubs_and_py_typed_are_installed() -> None:
    package = pathlib.Path(sf.__file__).parent
    assert (package / "py.typed").exists()
    assert "class Generator" in (package / "__init__.pyi").read_text()


def test_every_public_name_has_a_docstring() -> None:
    assert sf.__doc__ and "decode" in sf.__doc__
    missing = []
    for name in dir(sf):
        if name.startswith("_"):
            continue
        value = getattr(sf, name)
        if isinstance(value, tuple):
            continue  # PRESETS, TEXT_FORMS, ERROR_KINDS: the module's docstring names them
        if not (inspect.getdoc(value) or "").strip():
            missing.append(name)
        if inspect.isclass(value) and not issubclass(value, BaseException):
            for member, attribute in vars(value).items():
                if member.startswith("_"):
                    continue
                if not (getattr(attribute, "__doc__", None) or "").strip():
                    missing.append(f"{name}.{member}")
    assert missing == []
    assert "PRESETS" in sf.__doc__ and "ERROR_KINDS" in sf.__doc__
