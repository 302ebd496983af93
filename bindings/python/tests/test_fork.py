"""fork() after first use never yields a parent's ID in a child: the copied
generator refuses (os.fork and multiprocessing's fork start method), a
child makes its own, and a copy's close() leaves the parent's state file
alone and returns at once, whatever the parent's threads were doing."""

from __future__ import annotations

import json
import multiprocessing
import os
import pathlib
from typing import Any

import pytest

import snowflake_toolkit as sf
from conftest import run_in_child

PARENT = sf.Generator(machine=1)


def in_child(work: Any) -> Any:
    """Runs work() in a child of os.fork() and returns what it returned (as
    JSON), or the exception it raised as (class, kind, message)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            try:
                result: Any = {"ok": work()}
            except sf.Error as e:
                result = {"raised": [type(e).__name__, e.kind, str(e)]}
            os.write(write, json.dumps(result).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as r:
        text = r.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return json.loads(text)


def test_a_generator_used_before_fork_refuses_in_the_child() -> None:
    issued = PARENT.next_ids(100)
    for work in (PARENT.next_id, lambda: PARENT.next_ids(10)):
        result = in_child(work)
        assert "ok" not in result, f"the child issued {result['ok']}"
        name, kind, message = result["raised"]
        assert (name, kind) == ("Unavailable", "forked")
        assert f"was made in process {os.getpid()} and copied into process" in message
        assert "Make the generator in each process after it starts" in message
    # The parent goes on, above what it issued.
    assert PARENT.next_id() > max(issued)


def test_a_generator_made_before_fork_and_never_used_refuses_too() -> None:
    unused = sf.Generator(machine=5)
    assert in_child(unused.next_id)["raised"][1] == "forked"
    assert unused.next_id() > 0


def test_a_child_makes_its_own_generator_and_issues() -> None:
    PARENT.next_id()
    result = in_child(lambda: sf.Generator(machine=2).next_ids(3))
    assert len(result["ok"]) == 3
    assert {sf.decode(i).fields["machine"] for i in result["ok"]} == {2}


def test_a_copy_closed_in_the_child_leaves_the_parents_state_file(tmp_path: pathlib.Path) -> None:
    state = tmp_path / "ids.state"
    gen = sf.Generator(machine=3, state_file=state)
    gen.next_ids(5000)
    before = state.read_text()

    def child() -> str:
        gen.close()
        # The parent still holds the file.
        try:
            sf.Generator(machine=3, state_file=state)
        except sf.StoreInUse as e:
            return e.kind
        return "taken"

    assert in_child(child) == {"ok": "store_in_use"}
    assert state.read_text() == before
    assert not gen.closed
    gen.next_id()
    gen.close()


FORK_WHILE_WAITING = """
import os, sys, threading, time
import snowflake_toolkit as sf

gen = sf.Generator(machine=4, state_file=sys.argv[1])
stop = threading.Event()

def work():
    # A batch this long waits for the next millisecond, without the GIL,
    # most of the time.
    while not stop.is_set():
        gen.next_ids(1_000_000)

worker = threading.Thread(target=work)
worker.start()
time.sleep(0.1)
hung = 0
for _ in range(10):
    pid = os.fork()
    if pid == 0:
        gen.close()
        os._exit(0 if gen.closed else 1)
    deadline = time.monotonic() + 5
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            hung += 1
            break
        time.sleep(0.01)
stop.set()
worker.join()
gen.close()
assert hung == 0, f"close() hung in {hung} of 10 children"
"""


def test_a_copy_closes_at_once_though_a_thread_of_the_parent_was_waiting_inside_it(
    tmp_path: pathlib.Path,
) -> None:
    # The parent's thread was waiting for the next millisecond, without the
    # GIL, when the process forked: the child has no such thread, and its
    # close() must not wait for it. In a child process, so that a hang fails
    # the test instead of hanging it.
    run_in_child(
        FORK_WHILE_WAITING,
        str(tmp_path / "ids.state"),
        timeout=120,
        hang="fork() while a thread waited inside the generator hung",
    )


def try_to_issue(_: int) -> str:
    """In a pool worker: the parent's generator, copied by fork."""
    try:
        return f"issued {PARENT.next_id()}"
    except sf.Unavailable as e:
        return e.kind


def issue_own(_: int) -> int:
    return sf.Generator(machine=6).next_id()


def test_multiprocessing_fork_workers_refuse_the_parents_generator() -> None:
    PARENT.next_id()
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        results = pool.map(try_to_issue, range(8))
        own = pool.map(issue_own, range(4))
    assert results == ["forked"] * 8
    assert all(sf.decode(i).fields["machine"] == 6 for i in own)
