#!/usr/bin/env python3
"""Writes testdata/vectors.json: the shared test vectors (see testdata/README.md).

Every ID here comes from the formula with Python's integers, independently of
the Rust core and the page's engine, which the tests check against this file:

    id = ((t - epoch) // tick) << time_shift | field << field_shift | ...

Run it again after adding a case: python3 scripts/make-vectors.py
"""
import datetime
import json
import os

# The core's table of presets (crates/snowflake/src/presets.rs, Preset::ALL),
# typed again here on purpose: the tests check the core against what this
# script computes from it. name: (epoch_ms, tick_ms, widths, sequence,
# platform, the day its IDs began).
PRESETS = {
    "twitter": (1288834974657, 1, [("time", 41), ("datacenter", 5), ("machine", 5), ("sequence", 12)], "sequence", "Twitter", "2010-11-04"),
    "discord": (1420070400000, 1, [("time", 42), ("worker", 5), ("process", 5), ("increment", 12)], "increment", "Discord", "2015-01-01"),
    "instagram": (1314220021721, 1, [("time", 41), ("shard", 13), ("sequence", 10)], "sequence", "Instagram", "2011-08-24"),
    "sonyflake": (1409529600000, 10, [("time", 39), ("sequence", 8), ("machine", 16)], "sequence", "Sonyflake", "2014-09-01"),
    "mastodon": (0, 1, [("time", 48), ("sequence", 16)], "sequence", "Mastodon", "2016-03-16"),
    "js53": (1704067200000, 1, [("time", 41), ("worker", 6), ("sequence", 6)], "sequence", "JavaScript-safe IDs", "2024-01-01"),
}

# How far past "now" an ID's time may be and still be possible (the core's
# Readings::FUTURE_SLACK_MS): clocks disagree a little.
FUTURE_SLACK_MS = 60_000
# The "now" the verdict cases are judged against: 2025-01-01T00:00:00Z.
NOW_MS = 1735689600000


def day_ms(day):
    """Unix milliseconds at 00:00 UTC of a YYYY-MM-DD day."""
    d = datetime.date.fromisoformat(day)
    return (d - datetime.date(1970, 1, 1)).days * 86_400_000


B32 = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def digits(n, alphabet, width=None):
    base = len(alphabet)
    out = ""
    while n:
        n, r = divmod(n, base)
        out = alphabet[r] + out
    out = out or alphabet[0]
    if width:
        out = alphabet[0] * (width - len(out)) + out
    return out


def text(n):
    return {
        "hex": "0x" + format(n, "x"),
        "base32": digits(n, B32, 13),
        "base62": digits(n, B62, 11),
        "base58": digits(n, B58),
    }


def parse_spec(spec):
    return [(name, int(bits)) for name, bits in (p.split(":") for p in spec.split(","))]


def shape(layout, epoch=None, tick=None):
    if layout in PRESETS:
        e, t, widths = PRESETS[layout][:3]
    else:
        e, t, widths = 0, 1, parse_spec(layout)
    return (e if epoch is None else epoch), (t if tick is None else tick), widths


def compose(layout, ts, fields, epoch=None, tick=None):
    e, t, widths = shape(layout, epoch, tick)
    assert (ts - e) % t == 0 and ts >= e
    total = sum(b for _, b in widths)
    shift = total
    out = 0
    for name, bits in widths:
        shift -= bits
        value = (ts - e) // t if name == "time" else fields[name]
        assert 0 <= value < (1 << bits), (layout, name, value)
        out |= value << shift
    return out


def case(layout, ts, fields, epoch=None, tick=None):
    c = {"layout": layout}
    if epoch is not None:
        c["epoch_ms"] = epoch
    if tick is not None:
        c["tick_ms"] = tick
    c["timestamp_ms"] = ts
    c["fields"] = fields
    n = compose(layout, ts, fields, epoch, tick)
    c["id"] = str(n)
    c["text"] = text(n)
    return c


def limits(layout, epoch=None, tick=None):
    """All-zero fields at the epoch; every field at its maximum in the last tick."""
    e, t, widths = shape(layout, epoch, tick)
    zero = {n: 0 for n, _ in widths[1:]}
    top = {n: (1 << b) - 1 for n, b in widths[1:]}
    last = e + ((1 << widths[0][1]) - 1) * t
    return [case(layout, e, zero, epoch, tick), case(layout, last, top, epoch, tick)]


cases = []
for name in PRESETS:
    cases += limits(name)
cases += [
    # The README's worked example, and IDs seen in the wild.
    case("twitter", 1288834975657, {"datacenter": 1, "machine": 1, "sequence": 0}),
    case("twitter", 1656432460105, {"datacenter": 11, "machine": 26, "sequence": 0}),
    case("discord", 1462015105796, {"worker": 1, "process": 0, "increment": 7}),
    case("instagram", 1700000000000, {"shard": 42, "sequence": 3}),
    case("sonyflake", 1700000000000, {"sequence": 5, "machine": 513}),
    case("mastodon", 1700000000000, {"sequence": 65535}),
    case("js53", 1735689600000, {"worker": 33, "sequence": 1}),
    # Custom layouts, with and without epoch and tick overrides.
    *limits("time:29,worker:21,sequence:13", epoch=1474300800000, tick=1000),
    case("time:29,worker:21,sequence:13", 1700000000000, {"worker": 12345, "sequence": 8000}, epoch=1474300800000, tick=1000),
    *limits("time:44,node:8,sequence:12", epoch=1600000000000),
    *limits("time:41,node:22"),
    case("twitter", 1700000000000, {"datacenter": 31, "machine": 0, "sequence": 1}, epoch=0, tick=1000),
    # Narrower than 63 bits: the top bits stay zero.
    *limits("time:31,shard:8,sequence:8", epoch=1700000000000, tick=10),
    # The 64th bit set, for the SQL functions' mapping onto signed bigint.
    case("discord", 3619093655552, {"worker": 0, "process": 0, "increment": 0}),
    case("instagram", 2413731649497, {"shard": 0, "sequence": 0}),
    case("mastodon", 140737488355328, {"sequence": 0}),
    case("instagram", 1700000000000, {"shard": 5001, "sequence": 513}),
    case("sonyflake", 1700000000010, {"sequence": 3, "machine": 258}),
    case("mastodon", 1700000000123, {"sequence": 4242}),
    # A 4 ms tick, not a divisor of a second.
    case("time:40,node:10,sequence:13", 1600000000000, {"node": 0, "sequence": 0}, epoch=1600000000000, tick=4),
    case("time:40,node:10,sequence:13", 1700000000008, {"node": 1000, "sequence": 7}, epoch=1600000000000, tick=4),
    case("time:40,node:10,sequence:13", 5998046511100, {"node": 1023, "sequence": 8191}, epoch=1600000000000, tick=4),
]

MAX64 = (1 << 64) - 1


def err(layout, op, field, value, **rest):
    e = {"layout": layout, "op": op}
    e.update(rest)
    e.update({"field": field, "value": value})
    return e


errors = [
    err("twitter", "compose", "machine", "32",
        timestamp_ms=1288834975657, fields={"datacenter": 1, "machine": 32, "sequence": 0}),
    err("twitter", "compose", "sequence", "4096",
        timestamp_ms=1288834975657, fields={"sequence": 4096}),
    err("discord", "compose", "worker", "-1",
        timestamp_ms=1462015105796, fields={"worker": "-1"}),
    err("instagram", "compose", "shard", "4x",
        timestamp_ms=1700000000000, fields={"shard": "4x"}),
    err("twitter", "compose", "timestamp", "1288834974656",
        timestamp_ms=1288834974656, fields={}),
    err("twitter", "compose", "timestamp", "3487858230209",
        timestamp_ms=3487858230209, fields={}),
    err("js53", "compose", "worker", "64",
        timestamp_ms=1735689600000, fields={"worker": 64}),
    err("twitter", "decode", "id", "not-an-id",
        id="not-an-id"),
    err("twitter", "decode", "id", "0x1g",
        id="0x1g"),
    err("twitter", "decode", "id", "18446744073709551616",
        id="18446744073709551616"),
    err("twitter", "decode", "id", "-1",
        id="-1"),
    err("twitter", "decode", "id", str(1 << 63),
        id=str(1 << 63)),
    err("js53", "decode", "id", str(1 << 53),
        id=str(1 << 53)),
    err("flickr", "layout", "layout", "flickr",
        spec="flickr"),
    err("time:41,machine:30", "layout", "layout", "71",
        spec="time:41,machine:30"),
    err("machine:5,time:58", "layout", "layout", "machine",
        spec="machine:5,time:58"),
    err("time:41,machine", "layout", "layout", "machine",
        spec="time:41,machine"),
    err("time:41,machine:x", "layout", "layout", "x",
        spec="time:41,machine:x"),
    err("time:41,machine:11,machine:11", "layout", "layout", "machine",
        spec="time:41,machine:11,machine:11"),
    err("time:41,Machine:22", "layout", "layout", "Machine",
        spec="time:41,Machine:22"),
    err("time:41,sign:22", "layout", "layout", "sign",
        spec="time:41,sign:22"),
    err("time:41,time:22", "layout", "layout", "time",
        spec="time:41,time:22"),
    err("time:64", "layout", "layout", "64",
        spec="time:64"),
    err("twitter", "layout", "tick_ms", "0",
        spec="twitter", tick_ms=0),
    err("mastodon", "layout", "tick_ms", str(1 << 20),
        spec="mastodon", tick_ms=1 << 20),
    # 2^63 - 2^40: exact as a double, so JSON readers in JavaScript see it too.
    err("twitter", "layout", "epoch", str((1 << 63) - (1 << 40)),
        spec="twitter", epoch_ms=(1 << 63) - (1 << 40)),
]


def spec(widths):
    return ",".join(f"{name}:{bits}" for name, bits in widths)


presets = [
    {
        "name": name,
        "spec": spec(widths),
        "epoch_ms": e,
        "tick_ms": t,
        "sequence": seq,
        "platform": platform,
        "launched_ms": day_ms(day),
        "launched": day,
    }
    for name, (e, t, widths, seq, platform, day) in PRESETS.items()
]


def reading(name, n, now):
    """One ID under one preset: impossible when a bit above the layout's
    width is set; implausible when its time is past now and the slack, or
    before the platform's day; possible otherwise."""
    e, t, widths, _, _, day = PRESETS[name]
    total = sum(b for _, b in widths)
    if n >> total:
        return {"layout": name, "verdict": "impossible", "timestamp_ms": None, "why": None}
    ts = e + (n >> (total - widths[0][1])) * t
    if ts > now + FUTURE_SLACK_MS:
        verdict, why = "implausible", "future"
    elif ts < day_ms(day):
        verdict, why = "implausible", "before"
    else:
        verdict, why = "possible", None
    return {"layout": name, "verdict": verdict, "timestamp_ms": ts, "why": why}


def verdicts(note, n, now=NOW_MS):
    return {"note": note, "id": str(n), "now_ms": now, "readings": [reading(p, n, now) for p in PRESETS]}


def at_tick(name, ts, up):
    """The ID of `name` with every field 0 at the first tick at or after
    `ts` (up) or the last tick at or before it."""
    e, t = PRESETS[name][:2]
    units = -((e - ts) // t) if up else (ts - e) // t
    return compose(name, e + units * t, {n: 0 for n, _ in PRESETS[name][2][1:]})


readings = []
for name, (e, t, _, _, platform, day) in PRESETS.items():
    start = max(e, day_ms(day))
    # Where the epoch is the day, this is ID 0, the case "zero" below.
    if start > e:
        readings.append(verdicts(f"{name}: the first time its IDs are possible", at_tick(name, start, True)))
    if day_ms(day) > e:
        readings.append(verdicts(f"{name}: the last time before {platform} began", at_tick(name, day_ms(day) - 1, False)))
    edge = NOW_MS + FUTURE_SLACK_MS
    readings.append(verdicts(f"{name}: the last time within the minute past now", at_tick(name, edge, False)))
    readings.append(verdicts(f"{name}: the first time past the minute after now", at_tick(name, edge + 1, True)))
readings += [
    verdicts("zero: every layout's epoch, where each platform's IDs began but Mastodon's", 0),
    verdicts("Discord's API reference: its example guild, 2015-04-26, before Discord's public launch", 41771983423143937),
    verdicts("Discord's API reference: the snowflake example, 2016-04-30", 175928847299117063),
    verdicts("Wikipedia's example tweet, 2022-06-28", 1541815603606036480),
    verdicts("a Mastodon status ID of 2022-11-19", 109372843387334656),
    verdicts("the sign bit set: impossible where a layout keeps it 0", 1 << 63),
    verdicts("2^53: one past what js53 holds", 1 << 53),
    verdicts("the largest 64-bit ID", MAX64),
]

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata")
os.makedirs(root, exist_ok=True)
with open(os.path.join(root, "vectors.json"), "w", encoding="utf-8") as f:
    json.dump({"presets": presets, "compose": cases, "errors": errors, "readings": readings}, f, ensure_ascii=False, indent=1)
    f.write("\n")
print(f"{len(presets)} presets, {len(cases)} compose cases, {len(errors)} error cases, {len(readings)} verdict cases")
