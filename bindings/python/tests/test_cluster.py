"""ClusterNode on a real etcd: processes take distinct slots, a killed
holder's slot is taken over above its IDs, a clean stop (also at exit) hands
the slot over at once, a full cluster and a fork are refused."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import uuid
from typing import Iterator

import pytest

import snowflake_toolkit as sf
from conftest import ISSUING, Etcd, run_in_child

WORKER = str(pathlib.Path(__file__).with_name("cluster_worker.py"))
TWO_SLOTS = "time:41,machine:1,sequence:12"
ONE_SLOT = "time:41,sequence:22"


def name() -> str:
    """A cluster of its own for each test: they share nothing on etcd."""
    return "py-" + uuid.uuid4().hex[:12]


class Worker:
    def __init__(self, etcd: Etcd, cluster: str, spec: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, WORKER, etcd.endpoint, cluster, spec],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.out = self.process.stdout
        self.slot = json.loads(self.out.readline())
        self.issued: list[int] = []

    def read(self, batches: int) -> None:
        for _ in range(batches):
            first, last = map(int, self.out.readline().split())
            assert first < last
            self.issued += [first, last]

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for worker in started:
        worker.kill()


def test_two_processes_hold_distinct_slots_and_a_killed_ones_slot_is_taken_over_above_its_ids(
    etcd: Etcd, workers: list[Worker]
) -> None:
    cluster = name()
    a, b = Worker(etcd, cluster, TWO_SLOTS), Worker(etcd, cluster, TWO_SLOTS)
    workers += [a, b]
    assert {a.slot["machine"], b.slot["machine"]} == {0, 1}
    a.read(50)
    b.read(50)
    assert not set(a.issued) & set(b.issued)
    a.kill()
    # A third process waits for the dead one's lease to run out, then for
    # its clock to pass the slot's mark, and issues above every ID the
    # dead one did.
    c = Worker(etcd, cluster, TWO_SLOTS)
    workers.append(c)
    assert c.slot == a.slot
    c.read(20)
    assert min(c.issued) > max(a.issued)
    b.read(20)
    assert all(sf.decode(i, layout=TWO_SLOTS).fields["machine"] == b.slot["machine"] for i in b.issued)


def test_a_clean_stop_hands_the_slot_over_at_once(etcd: Etcd) -> None:
    cluster = name()
    with sf.ClusterNode(etcd.endpoint, cluster=cluster, layout=ONE_SLOT, lease_ttl=60) as first:
        assert first.slot == {}
        issued = first.next_ids(10_000)
        assert len(issued) == 10_000 and issued == sorted(issued)
        assert first.status()["slot"] == ""
    assert first.stopped
    with pytest.raises(sf.Unavailable) as caught:
        first.next_id()
    assert caught.value.kind == "closed"
    # Its lease was revoked and its mark lowered: the next node is ready
    # long before the 60 s lease would have run out.
    second = sf.ClusterNode(etcd.endpoint, cluster=cluster, layout=ONE_SLOT, lease_ttl=60, timeout=10)
    assert second.next_id() > max(issued)
    second.stop()
    second.stop()


STOP_WHILE_ISSUING = ISSUING + """
import sys, time

endpoint, cluster, spec = sys.argv[1:]
node = sf.ClusterNode(endpoint, cluster=cluster, layout=spec, lease_ttl=2, timeout=30)
threads, got, ended = issuing(node, 64)
# Past a few renewals of the 2 s lease, each with a write of the mark.
time.sleep(3)
node.stop()
for t in threads:
    t.join()
assert len(ended) == 4 and set(ended) <= {"closed", "not_ready"}, ended
with sf.ClusterNode(endpoint, cluster=cluster, layout=spec, timeout=10) as again:
    first = again.next_id()
    assert first > max(got), (first, max(got))
"""


def test_threads_issuing_from_one_node_never_deadlock_and_stop_under_them_hands_over_above_their_ids(
    etcd: Etcd,
) -> None:
    # Four threads at the layout's ceiling (16 IDs a millisecond): they wait
    # for the next millisecond without the GIL, and the node writes its mark
    # on etcd meanwhile; stop() comes while they issue. In a child process,
    # so that a deadlock (the GIL held forever) fails the test instead of
    # hanging it.
    run_in_child(
        STOP_WHILE_ISSUING,
        etcd.endpoint,
        name(),
        "time:41,machine:1,sequence:4",
        timeout=60,
        hang="threads issuing from one ClusterNode deadlocked",
    )


def test_a_node_still_running_at_exit_is_stopped_and_its_slot_freed(etcd: Etcd) -> None:
    cluster = name()
    script = (
        "import snowflake_toolkit as sf\n"
        f"node = sf.ClusterNode({etcd.endpoint!r}, cluster={cluster!r}, layout={ONE_SLOT!r}, lease_ttl=60)\n"
        "print(node.next_id())\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    node = sf.ClusterNode(etcd.endpoint, cluster=cluster, layout=ONE_SLOT, lease_ttl=60, timeout=10)
    assert node.next_id() > int(run.stdout)
    node.stop()


def test_a_node_without_a_free_slot_is_not_ready_and_says_why(etcd: Etcd) -> None:
    cluster = name()
    holder = sf.ClusterNode(etcd.endpoint, cluster=cluster, layout=ONE_SLOT)
    try:
        with pytest.raises(sf.Unavailable) as caught:
            sf.ClusterNode(etcd.endpoint, cluster=cluster, layout=ONE_SLOT, timeout=1)
        e = caught.value
        assert e.kind == "not_ready" and not e.needs_operator
        assert "all 1 slots are taken" in str(e), str(e)
        waiting = sf.ClusterNode(etcd.endpoint, cluster=cluster, layout=ONE_SLOT, timeout=None)
        assert waiting.slot is None and "no slot" in repr(waiting)
        with pytest.raises(sf.Unavailable):
            waiting.next_id()
        waiting.stop()
    finally:
        holder.stop()


def test_fixed_fields_narrow_the_slots(etcd: Etcd) -> None:
    with sf.ClusterNode(etcd.endpoint, cluster=name(), datacenter=3) as node:
        assert node.slot is not None and node.slot["datacenter"] == 3
        assert sf.decode(node.next_id()).fields["datacenter"] == 3


def test_a_node_copied_by_fork_refuses_in_the_child(etcd: Etcd) -> None:
    node = sf.ClusterNode(etcd.endpoint, cluster=name(), layout=TWO_SLOTS)
    try:
        node.next_id()
        pid = os.fork()
        if pid == 0:
            try:
                node.next_id()
                code = 1
            except sf.Unavailable as e:
                code = 0 if e.kind == "forked" else 2
            node.stop()  # the parent's slot: nothing happens
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert node.next_id() > 0 and not node.stopped
    finally:
        node.stop()


@pytest.mark.parametrize(
    "call,field",
    [
        (lambda e: sf.ClusterNode(5, cluster=name()), "endpoints"),
        (lambda e: sf.ClusterNode("", cluster=name()), "endpoints"),
        (lambda e: sf.ClusterNode(e, cluster=name(), lease_ttl=1), "lease_ttl"),
        (lambda e: sf.ClusterNode(e, cluster=name(), lease_ttl=601), "lease_ttl"),
        (lambda e: sf.ClusterNode(e, cluster=name(), sequence=1), "sequence"),
        (lambda e: sf.ClusterNode(e, cluster=name(), machine=32), "machine"),
    ],
)
def test_bad_settings_name_their_field(etcd: Etcd, call: object, field: str) -> None:
    with pytest.raises(sf.InvalidInput) as caught:
        call(etcd.endpoint)  # type: ignore[operator]
    assert caught.value.field == field, str(caught.value)
