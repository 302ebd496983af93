"""The Generator: many threads, batches, clocks stepping back, the layout
running out, the GIL let go while it waits, close, and its state file:
restarts above every earlier ID, and the file shared with the snowflake
command (same format, same lock, refused both ways)."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import pytest

import snowflake_toolkit as sf
from conftest import ISSUING, run_in_child

T0 = 1_700_000_000_000


def test_eight_threads_of_100_000_ids_each_are_distinct_and_increasing_per_thread() -> None:
    gen = sf.Generator(machine=3, datacenter=1)
    per_thread = 100_000
    seen: list[list[int]] = [[] for _ in range(8)]

    def work(mine: list[int], batches: bool) -> None:
        if batches:
            while len(mine) < per_thread:
                mine.extend(gen.next_ids(min(4096, per_thread - len(mine))))
        else:
            for _ in range(per_thread):
                mine.append(gen.next_id())

    threads = [threading.Thread(target=work, args=(s, i % 2 == 1)) for i, s in enumerate(seen)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    everything: set[int] = set()
    for ids in seen:
        assert len(ids) == per_thread
        assert all(a < b for a, b in zip(ids, ids[1:])), "not increasing within a thread"
        everything.update(ids)
    assert len(everything) == 8 * per_thread, "a duplicate across threads"
    fields = {(d.fields["datacenter"], d.fields["machine"]) for d in map(sf.decode, seen[0][:100])}
    assert fields == {(1, 3)}


def test_batches_are_as_long_as_asked_and_increasing() -> None:
    gen = sf.Generator(layout="sonyflake", machine=9, clock=sf.ManualClock(T0))
    ids = gen.next_ids(1000)  # 256 a tick: four ticks
    assert len(ids) == 1000 and all(a < b for a, b in zip(ids, ids[1:]))
    assert gen.next_ids(0) == []
    assert gen.next_id() > ids[-1]
    ticks = {sf.decode(i, layout="sonyflake").timestamp_ms for i in ids}
    assert len(ticks) == 4


def test_a_clock_set_back_is_waited_out_within_5_ms_and_refused_beyond() -> None:
    clock = sf.ManualClock(T0)
    gen = sf.Generator(machine=1, clock=clock)
    first = gen.next_id()
    clock.advance(-3)
    assert gen.next_id() > first  # waited out
    clock.set(T0 - 60_000)
    with pytest.raises(sf.ClockBackwards) as caught:
        gen.next_id()
    e = caught.value
    assert e.kind == "clock_backwards" and e.needs_operator is False and e.field is None
    assert str(e).startswith("the clock went backwards by 60000 ms, more than the 5 ms tolerated")
    clock.set(T0 + 1)
    assert gen.next_id() > first


def test_the_layout_running_out_raises_time_exhausted() -> None:
    layout = sf.Layout.parse("time:8,machine:1,sequence:2", epoch=T0)
    gen = sf.Generator(layout=layout, machine=1, clock=sf.ManualClock(layout.last_ms))
    assert len(gen.next_ids(4)) == 4  # the last tick's four IDs
    with pytest.raises(sf.TimeExhausted) as caught:
        gen.next_id()
    assert caught.value.kind == "time_exhausted"


def test_another_thread_runs_while_a_generator_waits_for_the_next_tick() -> None:
    # Two IDs a second: a third call waits for the next second.
    layout = sf.Layout.parse("time:41,machine:1,sequence:1", tick_ms=1000)
    gen = sf.Generator(layout=layout, machine=1)
    progress = [0]
    done = threading.Event()

    def count() -> None:
        while not done.is_set():
            progress[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        # How fast the other thread counts while this one holds no GIL.
        start, before = time.monotonic(), progress[0]
        time.sleep(0.2)
        rate = (progress[0] - before) / (time.monotonic() - start)
        def two_ids() -> None:
            gen.next_id()
            gen.next_id()

        # Each takes the second's other ID, then waits for the next second.
        for call in (lambda: gen.next_ids(2), two_ids):
            # Issue until a call waits: it is then the start of a second,
            # and its first ID is taken.
            while True:
                start = time.monotonic()
                gen.next_id()
                if time.monotonic() - start > 0.05:
                    break
            start, before = time.monotonic(), progress[0]
            call()
            waited = time.monotonic() - start
            counted = progress[0] - before
            assert waited > 0.5, "it did not wait: the test shows nothing"
            # Held through the wait, the GIL would give the other thread a
            # switch interval or two (5 ms each) of the wait at most; let go,
            # the thread counts through the wait (half a second or more) at
            # whatever share of a busy machine's cores it gets: 50 ms worth
            # at its free rate is five times what a held GIL would allow.
            assert counted > rate * 0.05, (
                f"the other thread counted {counted} in {waited:.2f} s, "
                f"{rate * waited:.0f} when free: the GIL was held"
            )
    finally:
        done.set()
        counter.join()


def test_close_lets_the_generator_go_and_later_calls_are_refused(tmp_path: pathlib.Path) -> None:
    with sf.Generator(machine=1, state_file=tmp_path / "ids.state") as gen:
        gen.next_id()
        assert not gen.closed
    assert gen.closed
    for call in (gen.next_id, lambda: gen.next_ids(2)):
        with pytest.raises(sf.Unavailable) as caught:
            call()
        assert caught.value.kind == "closed"
    gen.close()  # twice is nothing
    assert "closed" in repr(gen)
    # The file was let go: another generator takes it.
    sf.Generator(machine=1, state_file=tmp_path / "ids.state").close()


# Threads issuing on a state file never deadlock, and close leaves every ID
# below the next start. Four threads at the layout's ceiling: at any moment
# some wait for the next millisecond without the GIL, one writes the mark
# without it, and others wait for that write, which must not hold the GIL
# the writer needs back. close must wait for the threads inside and lower
# the mark only to IDs really issued.
CLOSE_WHILE_ISSUING = ISSUING + """
import sys, time

state = sys.argv[1]
for _ in range(5):
    gen = sf.Generator(machine=2, state_file=state)
    threads, got, ended = issuing(gen, 4096)
    time.sleep(0.2)
    gen.close()
    for t in threads:
        t.join()
    assert ended == ["closed"] * 4, ended
    with sf.Generator(machine=2, state_file=state) as again:
        first = again.next_id()
        assert first > max(got), (first, max(got))
"""


# Two threads closing at once both return once the file is let go: two
# closes while two threads issue; the second waits until the first has
# lowered the mark and let the file go, so a start right after either
# succeeds.
TWO_CLOSERS = """
import sys, threading
import snowflake_toolkit as sf

state = sys.argv[1]
for _ in range(50):
    gen = sf.Generator(machine=4, state_file=state)
    got, restarted = [], []
    issuing = threading.Barrier(3)

    def work():
        mine = max(gen.next_ids(4096))
        issuing.wait()
        try:
            while True:
                mine = max(mine, max(gen.next_ids(4096)))
        except sf.Unavailable:
            got.append(mine)

    def close_and_restart():
        gen.close()
        # Whichever close returns, the file is let go and the mark lowered.
        with sf.Generator(machine=4, state_file=state) as again:
            restarted.append(again.next_id())

    issuers = [threading.Thread(target=work) for _ in range(2)]
    for t in issuers:
        t.start()
    issuing.wait()
    closers = [threading.Thread(target=close_and_restart), threading.Thread(target=gen.close)]
    for t in closers:
        t.start()
    for t in issuers + closers:
        t.join()
    assert len(got) == 2 and len(restarted) == 1, (got, restarted)
    assert restarted[0] > max(got), (restarted, got)
"""


# A signal handler that closes mid-batch stops every thread, and the next
# start is above all: a batch of a million checks for signals between time
# units; the handler issues (every other round) and closes while two more
# threads issue.
CLOSE_FROM_A_SIGNAL_HANDLER = """
import signal, sys, threading
import snowflake_toolkit as sf

state = sys.argv[1]
for round in range(10):
    gen = sf.Generator(machine=3, state_file=state)
    others, reentrant = [], []

    def work():
        mine = 0
        try:
            while True:
                mine = max(mine, max(gen.next_ids(5000)))
        except sf.Unavailable:
            others.append(mine)

    def handler(signum, frame):
        # Runs between two time units of the batch below, as Ctrl-C would.
        if round % 2:
            reentrant.append(max(gen.next_ids(3)))
        gen.close()

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    mine = 0
    try:
        while True:
            mine = max(mine, max(gen.next_ids(1_000_000)))
    except sf.Unavailable as refused:
        assert refused.kind == "closed", refused.kind
    for t in threads:
        t.join()
    with sf.Generator(machine=3, state_file=state) as again:
        first = again.next_id()
        assert first > max([mine] + others + reentrant), (first, mine, others, reentrant)
"""


@pytest.mark.parametrize(
    "script, hang",
    [
        pytest.param(CLOSE_WHILE_ISSUING, "threads issuing on a state file deadlocked", id="close_while_issuing"),
        pytest.param(TWO_CLOSERS, "two threads closing at once hung", id="two_closers"),
        pytest.param(CLOSE_FROM_A_SIGNAL_HANDLER, "closing from a signal handler hung", id="from_a_signal_handler"),
    ],
)
def test_threads_closing_a_generator_on_a_state_file_in_a_child(
    script: str, hang: str, tmp_path: pathlib.Path
) -> None:
    # In a child process, so that a deadlock (the GIL held forever) fails
    # the test instead of hanging it.
    run_in_child(script, str(tmp_path / "ids.state"), timeout=60, hang=hang)


def test_a_restart_on_the_state_file_starts_above_every_earlier_id(tmp_path: pathlib.Path) -> None:
    state = tmp_path / "ids.state"
    clock = sf.ManualClock(T0)
    gen = sf.Generator(machine=1, state_file=state, clock=clock)
    issued = gen.next_ids(10_000)
    gen.close()
    # Started again with the clock set back half a second: it waits the
    # clock past the mark, then issues above everything.
    again = sf.Generator(machine=1, state_file=str(state), clock=sf.ManualClock(T0 - 500))
    assert again.next_id() > max(issued)
    again.close()
    # Set back ten minutes: far more than a restart waits out.
    with pytest.raises(sf.StoreError) as caught:
        sf.Generator(machine=1, state_file=state, clock=sf.ManualClock(T0 - 600_000))
    assert caught.value.kind == "store" and "behind the high-water mark" in str(caught.value)


def test_a_process_killed_while_issuing_is_restarted_above_its_ids(tmp_path: pathlib.Path) -> None:
    state = tmp_path / "ids.state"
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, snowflake_toolkit as sf\n"
            f"gen = sf.Generator(machine=4, state_file={str(state)!r})\n"
            "while True:\n"
            "    print(max(gen.next_ids(1000)), flush=True)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    printed = [int(child.stdout.readline()) for _ in range(200)]
    child.send_signal(signal.SIGKILL)
    child.wait()
    gen = sf.Generator(machine=4, state_file=state)
    assert gen.next_id() > max(printed)


def generate(snowflake_bin: str, state: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [snowflake_bin, "generate", "--state-file", str(state), "--machine", "4", *args],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("SNOWFLAKE_")},
    )


def test_the_state_file_is_the_commands_both_ways(snowflake_bin: str, tmp_path: pathlib.Path) -> None:
    state = tmp_path / "ids.state"
    run = generate(snowflake_bin, state, "-n", "5000")
    assert run.returncode == 0, run.stderr
    by_command = [int(line) for line in run.stdout.split()]
    with sf.Generator(machine=4, state_file=state) as gen:
        by_python = gen.next_ids(5000)
    assert min(by_python) > max(by_command)
    run = generate(snowflake_bin, state, "-n", "5")
    assert run.returncode == 0, run.stderr
    assert min(int(line) for line in run.stdout.split()) > max(by_python)


def test_a_state_file_in_use_by_python_is_refused_to_the_command(
    snowflake_bin: str, tmp_path: pathlib.Path
) -> None:
    state = tmp_path / "ids.state"
    with sf.Generator(machine=4, state_file=state) as gen:
        gen.next_id()
        run = generate(snowflake_bin, state, "-n", "1")
        assert run.returncode != 0 and run.stdout == ""
        assert f"is in use by process {os.getpid()}" in run.stderr, run.stderr


def test_a_state_file_in_use_by_the_command_is_refused_to_python(
    snowflake_bin: str, tmp_path: pathlib.Path
) -> None:
    state = tmp_path / "ids.state"
    # A run that never ends while its output is not read: it holds the file.
    command = subprocess.Popen(
        [snowflake_bin, "generate", "--state-file", str(state), "--machine", "4", "-n", "100000000000"],
        stdout=subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if not k.startswith("SNOWFLAKE_")},
    )
    try:
        assert command.stdout is not None
        command.stdout.readline()  # it has started issuing
        with pytest.raises(sf.StoreInUse) as caught:
            sf.Generator(machine=4, state_file=state)
        e = caught.value
        assert isinstance(e, sf.StoreError) and e.kind == "store_in_use" and e.needs_operator
        assert f"is in use by process {command.pid}" in str(e), str(e)
        # In this process too: one file, one generator.
        command.kill()
        command.wait()
        first = sf.Generator(machine=4, state_file=state)
        with pytest.raises(sf.StoreInUse):
            sf.Generator(machine=4, state_file=state)
        first.close()
    finally:
        command.kill()
        command.wait()


def test_a_generator_with_a_manual_clock_reads_it() -> None:
    clock = sf.ManualClock("2024-01-01T00:00:00Z")
    gen = sf.Generator(machine=2, clock=clock)
    assert sf.decode(gen.next_id()).time.isoformat() == "2024-01-01T00:00:00+00:00"
    clock.advance(1234)
    assert sf.decode(gen.next_id()).timestamp_ms == clock.now_ms
    assert repr(gen).startswith("<Generator layout='twitter', clock=ManualClock(")
    assert gen.node == {"machine": 2} and gen.layout.name == "twitter" and gen.state_file is None
    time.sleep(0)
