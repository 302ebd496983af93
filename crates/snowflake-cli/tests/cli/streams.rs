//! `decode` of IDs streamed on stdin: text, NDJSON and CSV, error records
//! for bad lines, formulas defused.

use crate::support::{Printed, snowflake};

#[test]
fn a_stream_goes_on_past_bad_lines_and_ends_with_status_2() {
    let input = "1541815603606036480 12ab\n\n0xfa021000\n9223372036854775808\n";
    // `decode` of the input with these arguments: it must end with status 2.
    let decoding = |args: &[&str]| snowflake().args(args).write_stdin(input).assert().code(2);
    let assert = decoding(&["decode", "--csv", "-"]);
    let out = assert.stdout_text();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "line,id,timestamp_ms,time,datacenter,machine,sequence,error"
    );
    assert_eq!(
        lines[1],
        "1,1541815603606036480,1656432460105,2022-06-28T16:07:40.105Z,11,26,0,"
    );
    assert!(
        lines[2].starts_with("1,12ab,,,,,,\"id \"\"12ab\"\" is not decimal"),
        "{out}"
    );
    assert_eq!(
        lines[3],
        "3,4194439168,1288834975657,2010-11-04T01:42:55.657Z,1,1,0,"
    );
    assert!(
        lines[4].starts_with(
            "4,9223372036854775808,,,,,,\"id 9223372036854775808 has the sign bit set"
        ),
        "{out}"
    );
    assert_eq!(lines.len(), 5);
    let stderr = assert.stderr_text();
    assert_eq!(
        stderr,
        "error: 2 of the IDs read could not be decoded; see their error records\n"
    );

    // NDJSON: one record per ID, the bad ones as error records.
    let assert = decoding(&["decode", "--json", "-"]);
    let out = assert.stdout_text();
    let records: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 4);
    assert_eq!(records[0]["fields"]["machine"], 26);
    assert_eq!(records[1]["line"], 1);
    assert_eq!(records[1]["input"], "12ab");
    assert_eq!(records[1]["field"], "id");
    assert_eq!(records[3]["line"], 4);

    // Text: breakdowns on stdout, one stderr line per bad line, numbered.
    let assert = decoding(&["decode"]);
    let out = assert.stdout_text();
    assert!(out.starts_with("1541815603606036480\n"), "{out}");
    assert!(out.contains("\n\n4194439168\n"), "{out}");
    let stderr = assert.stderr_text();
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines[0].starts_with("line 1: id \"12ab\" is not decimal"),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with("line 4: id 9223372036854775808 has the sign bit set"),
        "{stderr}"
    );
    assert_eq!(
        lines[2],
        "error: 2 of the IDs read could not be decoded; see the lines above"
    );
}

#[test]
fn a_clean_stream_exits_0_and_reads_the_named_form() {
    let ids: Vec<String> = (0..1000u64)
        .map(|i| snowflake::Id::new(4194439168 + (i << 22)).to_text(snowflake::TextForm::Base58))
        .collect();
    let input = ids.join(" ");
    let assert = snowflake()
        .args(["decode", "--csv", "--format", "base58"])
        .write_stdin(input)
        .assert()
        .success()
        .stderr("");
    let out = assert.stdout_text();
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(rows.len(), 1000);
    for (i, (row, id)) in rows.iter().zip(&ids).enumerate() {
        let expected = format!("1,{id},{},", 1288834975657 + i as i64);
        assert!(row.starts_with(&expected), "{row} vs {expected}");
    }
    // Empty input: a header and nothing else.
    snowflake()
        .args(["decode", "--csv", "-"])
        .write_stdin("")
        .assert()
        .success()
        .stdout("line,id,timestamp_ms,time,datacenter,machine,sequence,error\n");
}

/// Bad input that a spreadsheet would evaluate comes out of `decode --csv`
/// as text, and still makes the exit status 2.
#[test]
fn csv_output_neutralises_formulas() {
    let text = snowflake()
        .args(["decode", "--csv", "-"])
        .write_stdin("=1+1 @SUM(A1) +2 -3 4194439168\n")
        .assert()
        .code(2)
        .stdout_text();
    let ids: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|row| row.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "\"'=1+1\"",
            "\"'@SUM(A1)\"",
            "\"'+2\"",
            "\"'-3\"",
            "4194439168"
        ],
        "{text}"
    );
}
