//! Dumps of IDs with faults planted at known counts, for `audit`.

use snowflake::Layout;

/// 2025-01-01T00:00:00Z: the "now" of the audits.
pub const NOW: i64 = 1735689600000;

/// A dump of Twitter IDs with faults planted at counts the tests know. It
/// is built as an incident would leave it: in the order the IDs were
/// stored, one per line.
#[derive(Debug)]
pub struct Dump {
    pub lines: Vec<String>,
}

/// What the planted dump holds, counted by hand from [`planted`].
#[derive(Debug)]
pub struct Planted {
    pub ids: u64,
    pub distinct: u64,
    pub duplicated_values: u64,
    pub not_increasing: u64,
    pub future: u64,
    pub saturated_units: u64,
    /// The line numbers of the two tokens that are not IDs.
    pub bad_lines: [u64; 2],
    /// (datacenter, machine, ids, not increasing, saturated units), by node.
    pub nodes: [(u64, u64, u64, u64, u64); 4],
}

fn twitter(ms: i64, datacenter: u64, machine: u64, sequence: u64) -> String {
    Layout::twitter()
        .compose(
            ms,
            &[
                ("datacenter", datacenter),
                ("machine", machine),
                ("sequence", sequence),
            ],
        )
        .unwrap()
        .to_string()
}

/// Four nodes an hour before [`NOW`]:
/// - A (1/1): 200 IDs a millisecond apart, clean; then a millisecond in
///   which it issued all 4,096 sequence numbers (1 saturated unit); at the
///   very end, 3 of its first IDs copied again (3 duplicated values; only
///   the first copy is below A's previous ID: 1 not increasing).
/// - B (1/2): 100 IDs, then its clock set back 60 ms and 50 more from there
///   (sequence 1, so no copies): 1 not increasing.
/// - C (2/3): two processes as one node, the second's clock 5 ms behind,
///   their 20 IDs each stored alternately: each of the second's is below
///   the first's before it (20 not increasing), and 15 of them equal one
///   of the first's (t+5..t+19 with sequence 0): 15 duplicated values.
/// - D (3/4): one ID 30 s ahead (within the minute's slack) and two a day
///   and two days ahead (2 from the future).
///
/// Two tokens that are not IDs sit between D and A's copies.
pub fn planted() -> (Dump, Planted) {
    let t = NOW - 3_600_000;
    let mut lines = Vec::new();
    for i in 0..200 {
        lines.push(twitter(t + i, 1, 1, 0));
    }
    for i in 0..100 {
        lines.push(twitter(t + i, 1, 2, 0));
    }
    for j in 0..50 {
        lines.push(twitter(t + 99 - 60 + j, 1, 2, 1));
    }
    for i in 0..20 {
        lines.push(twitter(t + i, 2, 3, 0));
        lines.push(twitter(t + i - 5, 2, 3, 0));
    }
    for seq in 0..4096 {
        lines.push(twitter(t + 500, 1, 1, seq));
    }
    lines.push(twitter(NOW + 30_000, 3, 4, 0));
    lines.push(twitter(NOW + 86_400_000, 3, 4, 0));
    lines.push(twitter(NOW + 2 * 86_400_000, 3, 4, 0));
    lines.push("garbage".to_string());
    lines.push("9223372036854775808".to_string()); // the sign bit set
    for i in [10, 20, 30] {
        lines.push(twitter(t + i, 1, 1, 0));
    }
    let ids = 200 + 150 + 40 + 4096 + 3 + 3;
    let planted = Planted {
        ids,
        distinct: ids - 3 - 15,
        duplicated_values: 18,
        not_increasing: 1 + 1 + 20,
        future: 2,
        saturated_units: 1,
        bad_lines: [4490, 4491],
        nodes: [
            (1, 1, 200 + 4096 + 3, 1, 1),
            (1, 2, 150, 1, 0),
            (2, 3, 40, 20, 0),
            (3, 4, 3, 0, 0),
        ],
    };
    (Dump { lines }, planted)
}

impl Dump {
    /// The dump as a file's text, one ID a line.
    pub fn text(&self) -> String {
        let mut text = self.lines.join("\n");
        text.push('\n');
        text
    }
}
