"""compose and decode give each other back under every preset, with every
field at any value its width allows and any time the layout can hold, and
every text form reads back what it wrote."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import snowflake_toolkit as sf

PRESETS = sf.layouts()


@st.composite
def ids(draw: st.DrawFn) -> tuple[sf.Layout, int, dict[str, int]]:
    layout = draw(st.sampled_from(PRESETS))
    timestamp = draw(st.integers(layout.epoch_ms, layout.last_ms))
    fields = {name: draw(st.integers(0, 2**bits - 1)) for name, bits in layout.fields}
    return layout, timestamp, fields


@settings(max_examples=3000, deadline=None)
@given(ids())
def test_compose_and_decode_are_inverse_under_every_preset(
    case: tuple[sf.Layout, int, dict[str, int]],
) -> None:
    layout, timestamp, fields = case
    id = sf.compose(timestamp, layout=layout, **fields)
    assert 0 <= id <= layout.max_id
    decoded = sf.decode(id, layout=layout.name)
    tick = layout.tick_ms
    assert decoded.timestamp_ms == layout.epoch_ms + (timestamp - layout.epoch_ms) // tick * tick
    assert decoded.fields == fields
    assert sf.compose(decoded.timestamp_ms, layout=layout, **decoded.fields) == id
    for form in sf.TEXT_FORMS:
        assert sf.from_text(sf.to_text(id, form), form) == id
    assert decoded.to_dict()["id"] == str(id)


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(PRESETS), st.integers(0, 2**64 - 1))
def test_any_64_bit_value_decodes_or_is_refused_as_too_wide(layout: sf.Layout, id: int) -> None:
    if id <= layout.max_id:
        decoded = sf.decode(id, layout=layout)
        assert sf.compose(decoded.timestamp_ms, layout=layout, **decoded.fields) == id
    else:
        try:
            sf.decode(id, layout=layout)
        except sf.InvalidInput as e:
            assert e.field == "id" and e.value == str(id)
        else:
            raise AssertionError(f"{id} decoded under {layout.name}")
