"""The read functions: the shared vectors, a server's own layout, usage
errors, and arguments of every type read as the server passes them."""

import json
import os

from common import expect, expect_in, make_table
from support import ROOT


def test_vectors(run):
    """The shared vectors through the read functions."""
    server = run.main()
    with open(os.path.join(ROOT, "testdata", "vectors.json")) as f:
        vectors = json.load(f)
    checked = 0
    for case in vectors["compose"]:
        layout, ms, fields, id_ = case["layout"], case["timestamp_ms"], case["fields"], case["id"]
        # Past the largest BIGINT; an epoch or tick of its own: the layout
        # argument names a preset or spec, the server's options set those
        # (test_configured_layout).
        if int(id_) > 2**63 - 1 or "epoch_ms" in case or "tick_ms" in case:
            continue
        text = ",".join(f"{k}={v}" for k, v in fields.items())
        row = server.sql(
            f"SELECT snowflake_compose({ms}, '{text}', '{layout}'), "
            f"snowflake_timestamp_ms({id_}, '{layout}'), snowflake_decode({id_}, '{layout}')")[0]
        expect(row[0] == id_, f"compose {case}: {row[0]}")
        expect(int(row[1]) == ms, f"timestamp of {case}: {row[1]}")
        decoded = json.loads(row[2])
        expect(decoded["id"] == id_ and decoded["timestamp_ms"] == ms
               and decoded["fields"] == fields and decoded["layout"] == layout,
               f"decode of {case}: {decoded}")
        for name, value in fields.items():
            got = server.value(f"SELECT snowflake_field({id_}, '{name}', '{layout}')")
            expect(int(got) == value, f"{name} of {case}: {got}")
        for form, encoded in case["text"].items():
            row = server.sql(f"SELECT snowflake_to_text({id_}, '{form}'), "
                             f"snowflake_from_text('{encoded}', '{form}')")[0]
            expect(row == [encoded, id_], f"{form} of {case}: {row}")
        checked += 1
    expect(checked >= 5, f"only {checked} vectors checked")
    for case in vectors["errors"]:
        if case.get("op") != "compose":
            continue
        text = ",".join(f"{k}={v}" for k, v in case["fields"].items())
        message = server.error(f"SELECT snowflake_compose({case['timestamp_ms']}, '{text}', "
                               f"'{case['layout']}')")
        expect_in(f"snowflake_compose: {case['field']} ", message)
        expect_in(case["value"], message)
    # The default layout is the server's; DATETIME in and out, in UTC.
    row = server.sql("SELECT snowflake_time(4194439168), "
                     "snowflake_compose('2010-11-04 01:42:55.657', 'datacenter=1,machine=1,sequence=0'), "
                     "snowflake_min_id('2010-11-04 01:42:55.657'), "
                     "snowflake_max_id('2010-11-04 01:42:55.657'), snowflake_field(NULL, 'machine')")[0]
    expect(row == ["2010-11-04 01:42:55.657", "4194439168", str(1000 << 22),
                   str((1000 << 22) | ((1 << 22) - 1)), "NULL"], f"{row}")
    # min_id and max_id of a constant are computed once, so an index range
    # scan can use them.
    make_table(server, "bounds")
    plan = server.sql("EXPLAIN SELECT * FROM bounds.t WHERE id BETWEEN "
                      "snowflake_min_id('2025-01-01') AND snowflake_max_id('2025-01-02')")
    expect(plan[0][3] == "range", f"no range scan: {plan}")
    print(f"  {checked} compose vectors, every text form, the compose errors")


def test_usage_errors(run):
    """Wrong argument counts and bad layouts are SQL errors that say what is allowed."""
    server = run.main()
    expect_in("snowflake_field(id, field [, layout])",
              server.error("SELECT snowflake_field(1)"))
    expect_in("takes no arguments", server.error("SELECT snowflake_next_id(1)"))
    expect_in("snowflake_decode: ", server.error("SELECT snowflake_decode(1, 'nope')"))
    expect_in("snowflake_to_text: ", server.error("SELECT snowflake_to_text(1, 'base64')"))


def test_configured_layout(run):
    """The vectors whose layout has an epoch and a tick of its own, through
    a server whose options set them: its read functions' default and its
    generator's layout."""
    with open(os.path.join(ROOT, "testdata", "vectors.json")) as f:
        cases = [c for c in json.load(f)["compose"] if "epoch_ms" in c and "tick_ms" in c]
    expect(cases, "no vector with an epoch and a tick of its own")
    first = cases[0]
    cases = [c for c in cases if (c["layout"], c["epoch_ms"], c["tick_ms"])
             == (first["layout"], first["epoch_ms"], first["tick_ms"])]
    node = ",".join(f"{f.split(':')[0]}=3" for f in first["layout"].split(",")[1:]
                    if f.split(":")[0] != "sequence")
    server = run.server("custom", options=[
        f"snowflake-layout={first['layout']}", f"snowflake-epoch={first['epoch_ms']}",
        f"snowflake-tick-ms={first['tick_ms']}", f"snowflake-fields={node}"]).start()
    server.install_functions()
    for case in cases:
        text = ",".join(f"{k}={v}" for k, v in case["fields"].items())
        row = server.sql(f"SELECT snowflake_compose({case['timestamp_ms']}, '{text}'), "
                         f"snowflake_timestamp_ms({case['id']})")[0]
        expect(row == [case["id"], str(case["timestamp_ms"])], f"{case}: {row}")
    decoded = json.loads(server.value("SELECT snowflake_decode(snowflake_next_id())"))
    expect(decoded["layout"] == first["layout"], f"{decoded}")
    expect(all(v == 3 for k, v in decoded["fields"].items() if k != "sequence"), f"{decoded}")
    server.stop()
    print(f"  {len(cases)} vectors of {first['layout']}, epoch {first['epoch_ms']}, "
          f"tick {first['tick_ms']} ms")


def test_constant_numbers_where_text_is_due(run):
    """A number given where text is due (a layout, a field name, a time) is
    read as the text the server writes it as, never as the bytes of its
    binary form: the error names what the caller sent and holds no other
    byte. A text constant where an ID is due is read as the ID."""
    server = run.main()
    server.sql("CREATE DATABASE numbers; CREATE TABLE numbers.t (id BIGINT); "
               "INSERT INTO numbers.t VALUES (4194439168)")
    for call, sent in [
        ("snowflake_decode(1, 65)", "65"),
        ("snowflake_decode(id, 4702111234474983745) FROM numbers.t", "4702111234474983745"),
        ("snowflake_field(id, 'machine', 2314885530818453536) FROM numbers.t",
         "2314885530818453536"),
        ("snowflake_field(1, 'machine', -4702111234474983745)", "-4702111234474983745"),
        ("snowflake_timestamp_ms(1, 1.5e0)", "1.5"),
        ("snowflake_min_id(0, 8317708086298832244)", "8317708086298832244"),
    ]:
        message = server.error(f"SELECT {call}")
        expect_in(f'unknown layout "{sent}"', message)
        expect(all(ch >= " " or ch in "\n\t" for ch in message), f"{call}: {message!r}")
    expect_in('no field "7"', server.error("SELECT snowflake_field(1, 7)"))
    row = server.sql("SELECT snowflake_timestamp_ms('4194439168'), snowflake_field('4194439168', "
                     "'machine'), snowflake_min_id(1288834975657) >> 22")[0]
    expect(row == ["1288834975657", "1", "1000"], f"{row}")
