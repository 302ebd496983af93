"""Bad input of every kind raises InvalidInput (a ValueError too) naming the
field at fault, with the core's message; keys never appear in an error or a
repr."""

from __future__ import annotations

import os
import pathlib
from datetime import datetime, timezone
from typing import Any, Callable

import pytest

import snowflake_toolkit as sf

NAIVE = datetime(2024, 1, 1)


def refused(call: Callable[[], object], field: str, value: str | None = None) -> sf.InvalidInput:
    with pytest.raises(sf.InvalidInput) as caught:
        call()
    e = caught.value
    assert isinstance(e, ValueError) and isinstance(e, sf.Error)
    assert e.kind == "invalid_input"
    assert e.field == field, str(e)
    if value is not None:
        assert e.value == value, str(e)
        assert value in str(e), str(e)
    return e


CASES: list[tuple[str, Callable[[], object], str, str | None]] = [
    # IDs: text, ints out of range, other types.
    ("negative id", lambda: sf.decode(-1), "id", "-1"),
    ("id past 64 bits", lambda: sf.decode(2**64), "id", str(2**64)),
    ("id text", lambda: sf.decode("12ab"), "id", "12ab"),
    ("hex id", lambda: sf.decode("0x1g"), "id", "0x1g"),
    ("float id", lambda: sf.decode(1.5), "id", "1.5"),
    ("None id", lambda: sf.decode(None), "id", "None"),  # type: ignore[arg-type]
    ("id with the sign bit", lambda: sf.decode(2**63), "id", str(2**63)),
    ("id too wide for js53", lambda: sf.decode(2**53, layout="js53"), "id", str(2**53)),
    ("base62 text", lambda: sf.from_text("!!", "base62"), "id", "!!"),
    ("text form", lambda: sf.to_text(1, "base36"), "format", "base36"),
    ("masked id", lambda: sf.readings("x"), "id", "x"),
    # Times.
    ("before the epoch", lambda: sf.compose(0), "timestamp", "0"),
    ("after the end", lambda: sf.compose(2**62), "timestamp", str(2**62)),
    ("time text", lambda: sf.compose("yesterday"), "timestamp", "yesterday"),
    ("naive datetime", lambda: sf.compose(NAIVE), "timestamp", NAIVE.isoformat()),
    ("float time", lambda: sf.compose(1.5), "timestamp", "1.5"),
    ("bounds start", lambda: sf.bounds("soon", 0), "start", "soon"),
    ("bounds end", lambda: sf.bounds(1700000000000, NAIVE), "end", None),
    ("window backwards", lambda: sf.bounds(1700000000001, 1700000000000), "from", "1700000000001"),
    ("readings now", lambda: sf.readings(1, now="later"), "now", "later"),
    ("manual clock", lambda: sf.ManualClock("noon"), "now", "noon"),
    ("time left now", lambda: sf.Layout.parse("twitter").time_left(now=NAIVE), "now", None),
    # Fields.
    ("field out of range", lambda: sf.compose(1700000000000, machine=32), "machine", "32"),
    ("negative field", lambda: sf.compose(1700000000000, machine=-1), "machine", "-1"),
    ("field past 64 bits", lambda: sf.compose(1700000000000, machine=2**70), "machine", str(2**70)),
    ("field text", lambda: sf.compose(1700000000000, layout="instagram", shard="4x"), "shard", "4x"),
    ("float field", lambda: sf.compose(1700000000000, machine=1.5), "machine", "1.5"),  # type: ignore[arg-type]
    ("unknown field", lambda: sf.compose(1700000000000, worker=1), "worker", "worker"),
    ("unknown field as text", lambda: sf.compose(1700000000000, worker="1"), "worker", "worker"),
    # Layouts.
    ("unknown layout", lambda: sf.decode(1, layout="flickr"), "layout", "flickr"),
    ("layout of another type", lambda: sf.decode(1, layout=5), "layout", "5"),  # type: ignore[arg-type]
    ("malformed spec", lambda: sf.Layout.parse("time:41,machine"), "layout", None),
    ("too many bits", lambda: sf.Layout.parse("time:41,machine:30"), "layout", None),
    ("epoch", lambda: sf.Layout.parse("twitter", epoch="then"), "epoch", "then"),
    ("naive epoch", lambda: sf.Layout.parse("twitter", epoch=NAIVE), "epoch", None),
    ("tick 0", lambda: sf.Layout.parse("twitter", tick_ms=0), "tick_ms", "0"),
    ("tick text", lambda: sf.Layout.parse("twitter", tick_ms="fast"), "tick_ms", "fast"),
    ("tick too long", lambda: sf.Layout.parse("mastodon", tick_ms=2**20), "tick_ms", str(2**20)),
    ("time past 9999", lambda: sf.Layout.parse("mastodon").last, "last", None),
    # Generators.
    ("no node", lambda: sf.Generator(), "node", None),
    ("sequence as a node field", lambda: sf.Generator(machine=1, sequence=1), "sequence", "1"),
    ("node field out of range", lambda: sf.Generator(machine=32), "machine", "32"),
    ("no sequence field", lambda: sf.Generator(layout="time:41,node:22", node=1), "layout", None),
    ("clock", lambda: sf.Generator(machine=1, clock="atomic"), "clock", "'atomic'"),  # type: ignore[arg-type]
    ("state file", lambda: sf.Generator(machine=1, state_file=5), "state_file", "5"),  # type: ignore[arg-type]
    ("negative count", lambda: sf.Generator(machine=1).next_ids(-1), "n", "-1"),
    ("count too large", lambda: sf.Generator(machine=1).next_ids(10**6 + 1), "n", "1000001"),
    ("count of another type", lambda: sf.Generator(machine=1).next_ids("9"), "n", "'9'"),  # type: ignore[arg-type]
    # Masking.
    ("missing key file", lambda: sf.Masker("/nonexistent/mask.key"), "key_file", None),
    ("key file of another type", lambda: sf.Masker(7), "key_file", None),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("name,call,field,value", CASES, ids=[c[0] for c in CASES])
def test_bad_input_names_its_field(
    name: str, call: Callable[[], object], field: str, value: str | None
) -> None:
    refused(call, field, value)


def test_every_field_of_every_preset_is_named_when_out_of_range() -> None:
    for layout in sf.layouts():
        for name, bits in layout.fields:
            e = refused(lambda: sf.compose(layout.epoch_ms, layout=layout, **{name: 2**bits}), name)
            assert e.value == str(2**bits)
            assert str(e) == f"{name} {2**bits} is out of range: 0 to {2**bits - 1} ({bits} bits)"


def test_a_layout_too_narrow_to_mask_names_the_layout(tmp_path: pathlib.Path) -> None:
    key = tmp_path / "mask.key"
    sf.new_key_file(key)
    e = refused(lambda: sf.Masker(key, layout="time:15,sequence:4"), "layout", "time:15,sequence:4")
    assert "at least 20 bits" in str(e)
    refused(lambda: sf.Masker(key).mask(2**63), "id", str(2**63))
    # A key file is never written over.
    refused(lambda: sf.new_key_file(key), "path")


def test_no_error_or_repr_holds_the_key(tmp_path: pathlib.Path) -> None:
    secret = "6c0f9d6b0c2b8f6a3f8e4d2a1b0c9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d"
    # One character short, one wrong: a key with a typo.
    for text in (secret[:-1], secret[:10] + "z" + secret[11:]):
        path = tmp_path / "typo.key"
        path.write_text(text)
        os.chmod(path, 0o600)
        e = refused(lambda: sf.Masker(path), "key_file")
        assert e.value is None
        for shown in (str(e), repr(e), repr(e.args)):
            assert secret[:16] not in shown and secret[-16:] not in shown, shown
    # The key pasted where the path goes.
    e = refused(lambda: sf.Masker(secret), "key_file")
    assert secret[:16] not in str(e) and e.value is None
    good = tmp_path / "good.key"
    good.write_text(secret)
    os.chmod(good, 0o600)
    masker = sf.Masker(good)
    assert secret[:8] not in repr(masker) and "good.key" in repr(masker)


def test_a_key_file_others_can_read_warns(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "open.key"
    sf.new_key_file(path)
    os.chmod(path, 0o644)
    with pytest.warns(UserWarning, match="can be read or changed by users other than its owner"):
        sf.Masker(path)


def test_errors_carry_kind_field_value_and_whether_an_operator_must_act() -> None:
    e = refused(lambda: sf.compose(1288834975657, machine=32), "machine", "32")
    assert e.needs_operator is True
    assert e.args == ("machine 32 is out of range: 0 to 31 (5 bits)",)
    assert sf.ERROR_KINDS[0] == "invalid_input"
    for cls in (sf.InvalidInput, sf.ClockBackwards, sf.TimeExhausted, sf.StoreError, sf.Unavailable):
        assert issubclass(cls, sf.Error) and cls.__module__ == "snowflake_toolkit"
    assert issubclass(sf.StoreInUse, sf.StoreError)
    assert not issubclass(sf.ClockBackwards, ValueError)


def test_an_aware_datetime_in_any_zone_is_the_same_moment() -> None:
    from datetime import timedelta

    utc = datetime(2024, 1, 31, 12, 0, 0, 123456, tzinfo=timezone.utc)
    tokyo = utc.astimezone(timezone(timedelta(hours=9)))
    assert sf.compose(utc, machine=1) == sf.compose(tokyo, machine=1) == sf.compose(1706702400123, machine=1)
    assert sf.decode(sf.compose(utc, machine=1)).time == utc.replace(microsecond=123000)
    before_1970 = datetime(1969, 12, 31, 23, 59, 59, 999500, tzinfo=timezone.utc)
    assert sf.compose(before_1970, layout=sf.Layout.parse("twitter", epoch=-10_000)) == sf.compose(
        -1, layout=sf.Layout.parse("twitter", epoch=-10_000)
    )


def test_values_given_as_text_are_read_as_the_command_reads_them(vectors: Any) -> None:
    assert sf.compose("2010-11-04T01:42:55.657Z", datacenter="1", machine="1") == 4194439168
    assert sf.decode("0xfa021000").id == 4194439168
    assert sf.Layout.parse("twitter", epoch="1288834974657", tick_ms="1") == sf.Layout.parse("twitter")
