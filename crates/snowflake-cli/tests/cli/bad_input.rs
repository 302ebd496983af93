//! Bad input of every kind: status 2, one clear line on stderr, nothing on
//! stdout.

use crate::support::stderr_of;

/// Every kind of bad input: one line on stderr, status 2, nothing on stdout.
#[test]
fn bad_input_exits_2_with_one_clear_line() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["compose", "--machine", "32"],
            "machine 32 is out of range: 0 to 31 (5 bits)",
        ),
        (
            &["compose", "--machine", "-1"],
            "machine -1 is out of range: 0 to 31 (5 bits)",
        ),
        (
            &["compose", "--datacenter", "abc"],
            "datacenter \"abc\" is not a whole number",
        ),
        (
            &["compose", "--sequence", "4096"],
            "sequence 4096 is out of range: 0 to 4095 (12 bits)",
        ),
        (
            &["compose", "-f", "worker=1"],
            "no field \"worker\"; its fields are datacenter, machine, sequence",
        ),
        (
            &["compose", "-t", "1288834974656"],
            "is before the layout's epoch",
        ),
        (
            &["compose", "-t", "3487858230209"],
            "after the last time the layout can encode, 3487858230208 (2080-07-10T17:30:30.208Z)",
        ),
        (
            &["compose", "-t", "yesterday"],
            "timestamp \"yesterday\" is not a time",
        ),
        (
            &["compose", "--layout", "flickr"],
            "unknown layout \"flickr\"",
        ),
        (
            &["compose", "--layout", "time:41,machine:25"],
            "add up to 66 bits; an ID holds at most 64",
        ),
        (&["compose", "--tick-ms", "0"], "tick_ms 0 is not allowed"),
        (
            &["decode", "18446744073709551616"],
            "does not fit in 64 bits",
        ),
        (
            &["decode", "12ab"],
            "id \"12ab\" is not decimal: 'a' is not allowed",
        ),
        (
            &["decode", "--format", "base64", "1"],
            "format base64 is not allowed; a text form is decimal, hex, base32, base62 or base58",
        ),
        (
            &["decode", "--format", "base62", "000000000000"],
            "id \"000000000000\" is not base62: it is 12 characters long",
        ),
        (
            &["decode", "-", "1"],
            "- reads IDs from stdin and comes alone",
        ),
        (&["decode", "-5"], "id \"-5\" is negative"),
        (
            &["decode", "1", "9223372036854775808"],
            "has the sign bit set",
        ),
        (
            &[
                "bounds",
                "--from",
                "2024-01-02T00:00:00Z",
                "--to",
                "2024-01-01T00:00:00Z",
            ],
            "is after to",
        ),
        (
            &["generate", "-n", "many"],
            "invalid value 'many' for '--count <COUNT>': a count is a whole number, 0 or more",
        ),
        // Echoed input cannot drive the terminal: control characters are
        // shown escaped.
        (
            &["generate", "-n", "\u{1b}[31mRED"],
            "for '--count <COUNT>'",
        ),
        (
            &["compose", "-f", "machine=\u{1b}[31m7"],
            "is not a whole number",
        ),
        (
            &["generate", "--machine", "99"],
            "machine 99 is out of range",
        ),
        (
            &["generate", "--layout", "time:41,node:22"],
            "has no sequence field",
        ),
    ];
    for (args, message) in cases {
        let stderr = stderr_of(args, 2);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            !stderr.contains('\u{1b}'),
            "{args:?}: a raw escape in {stderr:?}"
        );
    }
    // clap's own usage errors are status 2 as well, and one line too.
    for args in [
        &["compose", "--bogus"][..],
        &["decode", "--json", "--csv", "1"][..],
        &["bounds", "--from", "1"][..],
        &["serve", "--log-format", "xml"][..],
    ] {
        let stderr = stderr_of(args, 2);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
    let stderr = stderr_of(&["serve", "--log-format", "xml"], 2);
    assert!(stderr.contains("text, json"), "{stderr}");
}
