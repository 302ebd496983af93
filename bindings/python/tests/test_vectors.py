"""The package against the shared vectors: testdata/vectors.json (compose,
errors, presets, readings) and testdata/mask-vectors.json, the cases the
core, the command, the page and the SQL functions are held to. Every answer
in them was computed by scripts/make-*vectors.py from the formula, not by
any of those."""

from __future__ import annotations

import os
import pathlib
from typing import Any

import pytest

import snowflake_toolkit as sf
from conftest import load


def layout_of(case: dict[str, Any], key: str) -> sf.Layout:
    return sf.Layout.parse(case[key], epoch=case.get("epoch_ms"), tick_ms=case.get("tick_ms"))


def test_compose_cases_compose_decode_and_write_every_text_form(vectors: Any) -> None:
    checked = 0
    for case in vectors["compose"]:
        layout = layout_of(case, "layout")
        id = sf.compose(case["timestamp_ms"], layout=layout, **case["fields"])
        assert id == int(case["id"]), case
        for form, text in case["text"].items():
            assert sf.to_text(id, form) == text, (case, form)
            assert sf.from_text(text, form) == id, (case, form)
        decoded = sf.decode(case["id"], layout=layout)
        assert decoded.id == id
        assert decoded.timestamp_ms == case["timestamp_ms"], case
        assert decoded.fields == case["fields"], case
        assert decoded.text == case["text"], case
        assert decoded.to_dict()["id"] == case["id"]
        checked += 1
    assert checked >= 30


def attempt(case: dict[str, Any]) -> object:
    op = case["op"]
    if op == "layout":
        return layout_of(case, "spec")
    layout = layout_of(case, "layout")
    if op == "decode":
        return sf.decode(case["id"], layout=layout)
    assert op == "compose", case
    return sf.compose(case["timestamp_ms"], layout=layout, **case["fields"])


def test_error_cases_raise_invalid_input_naming_the_field_and_the_value(vectors: Any) -> None:
    checked = 0
    for case in vectors["errors"]:
        with pytest.raises(sf.InvalidInput) as caught:
            attempt(case)
        e = caught.value
        assert isinstance(e, ValueError) and isinstance(e, sf.Error)
        assert e.kind == "invalid_input"
        assert e.field == case["field"], (case, str(e))
        assert case["value"] in str(e), (case, str(e))
        # The value is the one the message names, but for a malformed
        # layout spec, whose message names the part at fault in words only.
        if e.value is None:
            assert case["op"] == "layout", case
        else:
            assert e.value == case["value"], (case, e.value)
        checked += 1
    assert checked >= 20


def test_the_presets_are_the_cores_table_in_its_order(vectors: Any) -> None:
    expected = vectors["presets"]
    assert list(sf.PRESETS) == [p["name"] for p in expected]
    layouts = sf.layouts()
    assert [layout.name for layout in layouts] == list(sf.PRESETS)
    for layout, preset in zip(layouts, expected):
        assert layout.spec == preset["spec"]
        assert layout.epoch_ms == preset["epoch_ms"]
        assert layout.tick_ms == preset["tick_ms"]
        assert layout.sequence == preset["sequence"]
        assert layout.platform == preset["platform"]
        assert layout == sf.Layout.parse(preset["name"].upper())


def test_reading_cases_judge_every_preset(vectors: Any) -> None:
    checked = 0
    for case in vectors["readings"]:
        readings = sf.readings(case["id"], now=case["now_ms"])
        assert [r.layout for r in readings] == [e["layout"] for e in case["readings"]]
        for reading, expected in zip(readings, case["readings"]):
            where = (case["note"], expected["layout"])
            assert reading.verdict == expected["verdict"], where
            if expected["timestamp_ms"] is None:
                assert reading.decoded is None, where
            else:
                assert reading.decoded is not None, where
                assert reading.decoded.timestamp_ms == expected["timestamp_ms"], where
            why = {"future": "is in the future", "before": "is before", None: None}[expected["why"]]
            if reading.verdict == "impossible":
                assert reading.reason is not None and "id " in reading.reason, where
            elif why is None:
                assert reading.reason is None, where
            else:
                assert reading.reason is not None and why in reading.reason, where
            assert reading.to_dict()["verdict"] == expected["verdict"]
            checked += 1
    assert checked >= 100


def test_mask_cases_mask_and_unmask(tmp_path: pathlib.Path) -> None:
    cases = load("mask-vectors.json")["cases"]
    maskers: dict[tuple[str, str], sf.Masker] = {}
    for case in cases:
        key = (case["key"], case["layout"])
        if key not in maskers:
            path = tmp_path / f"{len(maskers)}.key"
            path.write_text(case["key"] + "\n")
            os.chmod(path, 0o600)
            maskers[key] = sf.Masker(path, layout=case["layout"])
        masker = maskers[key]
        assert masker.layout.bits == case["bits"], case
        assert masker.mask(int(case["id"])) == int(case["masked"]), case
        assert masker.unmask(case["masked"]) == int(case["id"]), case
    assert len(cases) >= 50
