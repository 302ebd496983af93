"""snowflake_toolkit beside the most used pure-Python generators on PyPI,
snowflake-id and sonyflake, in one run of one Python: next_id() one call at
a time, a batch of 4,096, decode and compose, per ID, where no layout's ceiling is
in reach; then IDs a second for a whole second of batches, against each
layout's ceiling.

    python bindings/python/bench/peers.py            # the table in BENCHMARKS.md
    python bindings/python/bench/peers.py --quick    # a smoke run (scripts/python-test)

Every figure is the best of several rounds of many calls, in nanoseconds a
call or an ID. A generator on Twitter's layout cannot issue faster than
4,096 IDs a millisecond (244 ns an ID), so the per-ID rows run ours and
sonyflake on a layout with 41 bits of milliseconds and a 21-bit sequence,
and snowflake-id on its own (Twitter's), whose ceiling it never reaches;
the rows of a second of batches run everything on Twitter's layout
(sonyflake given 1 ms ticks, 12 bits of sequence and 10 of machine) and on
Sonyflake's. snowflake-id's generator returns None once a millisecond's
sequence is used up, instead of waiting: only the IDs it returns are
counted.
"""

from __future__ import annotations

import argparse
import platform
import time
from datetime import datetime, timedelta, timezone
from typing import Callable, Iterator

import snowflake  # snowflake-id
import sonyflake

import snowflake_toolkit as sf

TWITTER = sf.Layout.parse("twitter")
EPOCH = datetime.fromtimestamp(TWITTER.epoch_ms / 1000, tz=timezone.utc)
WHEN_MS = 1_700_000_000_123
WHEN = datetime.fromtimestamp(WHEN_MS / 1000, tz=timezone.utc)


def best_ns(run: Callable[[int], int], calls: int, rounds: int) -> float:
    """Nanoseconds per item, the best of `rounds`; `run(calls)` returns how
    many items it made."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter_ns()
        made = run(calls)
        took = time.perf_counter_ns() - start
        best = min(best, took / max(made, 1))
    return best


def ours_batch(gen: sf.Generator) -> Callable[[int], int]:
    def run(n: int) -> int:
        for _ in range(n):
            gen.next_ids(4096)
        return n * 4096

    return run


def snowflake_id_one(gen: Iterator[int | None]) -> Callable[[int], int]:
    def run(n: int) -> int:
        made = 0
        for _ in range(n):
            if next(gen) is not None:
                made += 1
        return made

    return run


def snowflake_id_batch(gen: Iterator[int | None]) -> Callable[[int], int]:
    def run(n: int) -> int:
        for _ in range(n):
            batch: list[int] = []
            while len(batch) < 4096:
                i = next(gen)
                if i is not None:
                    batch.append(i)
        return n * 4096

    return run


def sonyflake_batch(peer: sonyflake.Sonyflake) -> Callable[[int], int]:
    def run(n: int) -> int:
        for _ in range(n):
            [peer.next_id() for _ in range(4096)]
        return n * 4096

    return run


def repeat(call: Callable[[], object]) -> Callable[[int], int]:
    """`call` made n times: a bound method (`gen.next_id`) or a lambda."""

    def run(n: int) -> int:
        call_ = call  # a local, not a closure's cell, in the loop
        for _ in range(n):
            call_()
        return n

    return run


def sonyflake_in_ms(bits_sequence: int, bits_machine_id: int) -> sonyflake.Sonyflake:
    """sonyflake as machine 1 in 1 ms ticks from Twitter's epoch, with the
    widths given."""
    return sonyflake.Sonyflake(
        start_time=EPOCH,
        machine_id=1,
        bits_sequence=bits_sequence,
        bits_machine_id=bits_machine_id,
        time_unit=timedelta(milliseconds=1),
    )


def per_second(issue: Callable[[], int], seconds: float) -> float:
    """IDs a second, issuing for `seconds`."""
    made = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        made += issue()
    return made / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="a few calls each: a smoke run")
    quick = parser.parse_args().quick
    calls, rounds, batches, seconds = (200, 2, 2, 0.05) if quick else (200_000, 7, 50, 1.0)

    # Per ID, where no layout's ceiling is in reach: ours and sonyflake on
    # a layout with a 21-bit sequence (2,097,152 IDs a millisecond);
    # snowflake-id's own layout, whose 4,096 a millisecond it never reaches.
    wide = sf.Layout.parse("time:41,machine:1,sequence:21", epoch=TWITTER.epoch_ms)
    ours = sf.Generator(layout=wide, machine=1)
    ours_tsc = sf.Generator(layout=wide, machine=1, clock="tsc")
    peer_id = snowflake.SnowflakeGenerator(1, epoch=TWITTER.epoch_ms)
    peer_sony = sonyflake_in_ms(bits_sequence=21, bits_machine_id=1)
    an_id = sf.compose(WHEN_MS, machine=1, sequence=5)
    nan = float("nan")

    rows: list[tuple[str, float, float, float, float]] = [
        (
            "`next_id()`, one call",
            best_ns(repeat(ours.next_id), calls, rounds),
            best_ns(repeat(ours_tsc.next_id), calls, rounds),
            best_ns(snowflake_id_one(peer_id), calls, rounds),
            best_ns(repeat(peer_sony.next_id), calls, rounds),
        ),
        (
            "a batch of 4,096, per ID",
            best_ns(ours_batch(ours), batches, rounds),
            best_ns(ours_batch(ours_tsc), batches, rounds),
            best_ns(snowflake_id_batch(peer_id), batches, rounds),
            best_ns(sonyflake_batch(peer_sony), batches, rounds),
        ),
        (
            "decode",
            best_ns(repeat(lambda: sf.decode(an_id)), calls, rounds),
            nan,
            best_ns(repeat(lambda: snowflake.Snowflake.parse(an_id, TWITTER.epoch_ms)), calls, rounds),
            best_ns(repeat(lambda: peer_sony.decompose(an_id)), calls, rounds),
        ),
        (
            "decode, then read the time and the fields",
            best_ns(repeat(lambda: (d := sf.decode(an_id)).timestamp_ms + len(d.fields)), calls, rounds),
            nan,
            best_ns(
                repeat(lambda: (s := snowflake.Snowflake.parse(an_id, TWITTER.epoch_ms)).milliseconds + s.instance),
                calls,
                rounds,
            ),
            best_ns(repeat(lambda: peer_sony.to_time(an_id).year + peer_sony.decompose(an_id).machine_id), calls, rounds),
        ),
        (
            "compose from Unix milliseconds",
            best_ns(repeat(lambda: sf.compose(WHEN_MS, machine=1, sequence=5)), calls, rounds),
            nan,
            best_ns(
                repeat(lambda: snowflake.Snowflake(WHEN_MS - TWITTER.epoch_ms, 1, TWITTER.epoch_ms, 5).value),
                calls,
                rounds,
            ),
            nan,
        ),
        (
            "compose from a datetime",
            best_ns(repeat(lambda: sf.compose(WHEN, machine=1, sequence=5)), calls, rounds),
            nan,
            nan,
            best_ns(repeat(lambda: peer_sony.compose(WHEN, 5, 1)), calls, rounds),
        ),
    ]

    print(f"Python {platform.python_version()} on {platform.machine()}, snowflake_toolkit {sf.__version__}, "
          f"snowflake-id {snowflake.__version__}, sonyflake {sonyflake.__version__}\n")
    print("| per call or ID (ns) | snowflake_toolkit | its `clock=\"tsc\"` | snowflake-id | sonyflake "
          "| fastest peer ÷ ours |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for what, mine, mine_tsc, by_id, by_sony in rows:
        peers = [p for p in (by_id, by_sony) if p == p]
        ratio = min(peers) / mine
        shown = [f"{v:,.0f}" if v == v else "—" for v in (mine, mine_tsc, by_id, by_sony)]
        print(f"| {what} | {' | '.join(shown)} | {ratio:.1f} × |")

    # A second of batches, against the ceiling of each layout.
    twitter = sf.Generator(machine=1)
    sony_preset = sf.Generator(layout="sonyflake", machine=1)
    peer_id_twitter = snowflake.SnowflakeGenerator(2, epoch=TWITTER.epoch_ms)
    peer_sony_twitter = sonyflake_in_ms(bits_sequence=12, bits_machine_id=10)
    peer_sony_default = sonyflake.Sonyflake(start_time=datetime(2014, 9, 1, tzinfo=timezone.utc), machine_id=1)
    ceilings = [
        ("twitter: `next_ids(4096)`", per_second(lambda: len(twitter.next_ids(4096)), seconds), TWITTER),
        ("twitter: `next_id()`", per_second(lambda: repeat(twitter.next_id)(4096), seconds), TWITTER),
        (
            "twitter: snowflake-id, `next()` until 4,096",
            per_second(lambda: snowflake_id_batch(peer_id_twitter)(1), seconds),
            TWITTER,
        ),
        (
            "twitter: sonyflake with 1 ms ticks, 4,096 `next_id()`",
            per_second(lambda: sonyflake_batch(peer_sony_twitter)(1), seconds),
            TWITTER,
        ),
        ("sonyflake: `next_ids(256)`", per_second(lambda: len(sony_preset.next_ids(256)), seconds), sony_preset.layout),
        (
            "sonyflake: sonyflake's defaults, 256 `next_id()`",
            per_second(lambda: len([peer_sony_default.next_id() for _ in range(256)]), seconds),
            sony_preset.layout,
        ),
    ]
    print("\n| a second of batches | IDs a second | the layout's ceiling | share of the ceiling |")
    print("| --- | ---: | ---: | ---: |")
    for what, rate, layout in ceilings:
        ceiling = (layout.ids_per_ms or 0) * 1000
        print(f"| {what} | {rate:,.0f} | {ceiling:,.0f} | {rate / ceiling:.0%} |")


if __name__ == "__main__":
    main()
