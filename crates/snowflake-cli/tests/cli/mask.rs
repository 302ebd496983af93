//! `snowflake mask`, `unmask` and `mask-key new` end to end: output, exit
//! codes, streams, the shared vectors, and the key never shown.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use snowflake::{Id, Layout};
use snowflake_mask::{MaskKey, Masker};

use crate::support::{Scratch, http, path_arg, snowflake};

/// A key the tests write to files, and look for in every output.
const KEY_HEX: &str = "6c0f9d6b0c2b8f6a3f8e4d2a1b0c9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d";
const OTHER_HEX: &str = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a";
const TWEET: &str = "1541815603606036480";

/// A directory with key files in it, removed when dropped.
struct Keys {
    dir: Scratch,
}

impl Keys {
    fn new() -> Keys {
        Keys {
            dir: Scratch::new(),
        }
    }

    /// A private key file holding `hex`.
    fn file(&self, name: &str, hex: &str) -> PathBuf {
        let path = self.dir.file(name, &format!("{hex}\n"));
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        path
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// What a command wrote and how it ended.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl From<std::process::Output> for Run {
    fn from(out: std::process::Output) -> Run {
        Run {
            code: out.status.code().unwrap(),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }
}

fn run(args: &[&str], stdin: Option<&str>) -> Run {
    let mut cmd = snowflake();
    cmd.args(args);
    if let Some(input) = stdin {
        cmd.write_stdin(input.to_string());
    }
    cmd.output().unwrap().into()
}

/// Every 8-character piece of `secret`, in either case, that `text` holds.
fn pieces_of(secret: &str, text: &str) -> Vec<String> {
    let text = text.to_lowercase();
    let chars: Vec<char> = secret.to_lowercase().chars().collect();
    chars
        .windows(8)
        .map(|w| w.iter().collect::<String>())
        .filter(|piece| text.contains(piece.as_str()))
        .collect()
}

fn library_masker(layout: &Layout, hex: &str) -> Masker {
    Masker::new(layout, &MaskKey::from_hex(hex).unwrap()).unwrap()
}

#[test]
fn mask_key_new_writes_a_private_key_once() {
    let keys = Keys::new();
    let path = keys.path("mask.key");
    let first = run(&["mask-key", "new", path_arg(&path)], None);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(
        first
            .stdout
            .starts_with("wrote a new 256-bit masking key to ")
    );
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let key = fs::read_to_string(&path).unwrap();
    assert!(pieces_of(key.trim(), &format!("{}{}", first.stdout, first.stderr)).is_empty());
    // Usable at once, with no warning.
    let masked = run(&["mask", "--key-file", path_arg(&path), TWEET], None);
    assert_eq!((masked.code, masked.stderr.as_str()), (0, ""));
    // Never overwritten: status 2, the file as it was.
    let again = run(&["mask-key", "new", path_arg(&path)], None);
    assert_eq!(again.code, 2);
    assert_eq!(
        again.stderr,
        format!(
            "error: cannot create key file {}: it exists already, and a key file is never \
             overwritten; remove it first or choose another path\n",
            path.display()
        )
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), key);
    assert!(pieces_of(key.trim(), &again.stderr).is_empty());
}

#[test]
fn ids_given_as_arguments_mask_and_unmask_back_as_the_library_does() {
    let keys = Keys::new();
    let key = keys.file("k", KEY_HEX);
    let ids = [TWEET, "1541815603606036481", "0", "9223372036854775807"];
    let mut args = vec!["mask", "--key-file", path_arg(&key)];
    args.extend(ids);
    let masked = run(&args, None);
    assert_eq!(masked.code, 0, "{}", masked.stderr);
    let lines: Vec<&str> = masked.stdout.lines().collect();
    let library = library_masker(&Layout::twitter(), KEY_HEX);
    for (id, line) in ids.iter().zip(&lines) {
        let expected = library.mask(id.parse().unwrap()).unwrap();
        assert_eq!(*line, expected.to_string());
        assert!(
            line.parse::<i64>().is_ok(),
            "{line} is not a non-negative i64"
        );
    }
    let mut args = vec!["unmask", "--key-file", path_arg(&key)];
    args.extend(&lines);
    let unmasked = run(&args, None);
    assert_eq!(unmasked.code, 0, "{}", unmasked.stderr);
    assert_eq!(unmasked.stdout.lines().collect::<Vec<_>>(), ids);
}

/// The CLI gives the shared vectors' answers for every key and layout,
/// through a stream on stdin.
#[test]
fn the_shared_vectors_through_the_command() {
    let text = fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/mask-vectors.json"
    ))
    .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut groups: BTreeMap<(String, String), Vec<(String, String)>> = BTreeMap::new();
    for case in doc["cases"].as_array().unwrap() {
        let field = |name: &str| case[name].as_str().unwrap().to_string();
        groups
            .entry((field("key"), field("layout")))
            .or_default()
            .push((field("id"), field("masked")));
    }
    let keys = Keys::new();
    for (i, ((hex, layout), cases)) in groups.iter().enumerate() {
        let key = keys.file(&format!("k{i}"), hex);
        let ids: String = cases.iter().map(|(id, _)| format!("{id}\n")).collect();
        let masked = run(
            &["mask", "--key-file", path_arg(&key), "--layout", layout],
            Some(&ids),
        );
        assert_eq!(masked.code, 0, "{layout}: {}", masked.stderr);
        let expected: Vec<&str> = cases.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(
            masked.stdout.lines().collect::<Vec<_>>(),
            expected,
            "{layout}"
        );
        let unmasked = run(
            &[
                "unmask",
                "--key-file",
                path_arg(&key),
                "--layout",
                layout,
                "-",
            ],
            Some(&masked.stdout),
        );
        let plain: Vec<&str> = cases.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(
            unmasked.stdout.lines().collect::<Vec<_>>(),
            plain,
            "{layout}"
        );
    }
}

/// A stream goes on past bad lines, names each on stderr with its line, and
/// exits 2 at the end; arguments are all or nothing.
#[test]
fn bad_ids_are_reported_by_line_and_the_rest_goes_on() {
    let keys = Keys::new();
    let key = keys.file("k", KEY_HEX);
    let library = library_masker(&Layout::twitter(), KEY_HEX);
    let input = format!("{TWEET}\nnope 7\n\n9223372036854775808\n0x10\n");
    let out = run(&["mask", "--key-file", path_arg(&key)], Some(&input));
    assert_eq!(out.code, 2);
    let expected: Vec<String> = [TWEET, "7", "16"]
        .iter()
        .map(|id| library.mask(id.parse().unwrap()).unwrap().to_string())
        .collect();
    assert_eq!(out.stdout.lines().collect::<Vec<_>>(), expected);
    let stderr: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(stderr.len(), 3, "{}", out.stderr);
    assert!(
        stderr[0].starts_with("line 2: id \"nope\" is not decimal"),
        "{}",
        stderr[0]
    );
    assert_eq!(
        stderr[1],
        "line 4: id 9223372036854775808 has the sign bit set, but layout twitter keeps it 0; \
         its IDs are 0 to 9223372036854775807"
    );
    assert_eq!(
        stderr[2],
        "error: 2 of the IDs read could not be masked; see the lines above"
    );
    // As arguments, the first bad ID is the error and nothing is printed.
    let out = run(
        &["unmask", "--key-file", path_arg(&key), TWEET, "nope"],
        None,
    );
    assert_eq!(out.code, 2);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.starts_with("error: id \"nope\" is not decimal"),
        "{}",
        out.stderr
    );
}

/// `unmask --json` prints exactly what `decode --json` prints for the ID,
/// and error records that name the line.
#[test]
fn unmask_json_is_the_decode_breakdown() {
    let keys = Keys::new();
    let key = keys.file("k", KEY_HEX);
    let library = library_masker(&Layout::discord(), KEY_HEX);
    let discord_id = "175928847299117063";
    let masked = library
        .mask(discord_id.parse().unwrap())
        .unwrap()
        .to_string();
    let decode = run(&["decode", "--json", "-l", "discord", discord_id], None);
    let unmask = [
        "unmask",
        "--json",
        "-l",
        "discord",
        "--key-file",
        path_arg(&key),
    ];
    let args = run(&[&unmask[..], &[&masked]].concat(), None);
    assert_eq!(args.code, 0, "{}", args.stderr);
    assert_eq!(args.stdout, decode.stdout);
    let stream = run(&unmask, Some(&format!("{masked}\n-5\n")));
    assert_eq!(stream.code, 2);
    let lines: Vec<&str> = stream.stdout.lines().collect();
    assert_eq!(format!("{}\n", lines[0]), decode.stdout);
    let bad: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(bad["line"], 2);
    assert_eq!(bad["input"], "-5");
    assert_eq!(bad["field"], "id");
    assert_eq!(
        stream.stderr,
        "error: 1 of the IDs read could not be unmasked; see their error records\n"
    );
}

#[test]
fn a_text_form_is_read_and_written() {
    let keys = Keys::new();
    let key = keys.file("k", KEY_HEX);
    let js53 = Layout::js53();
    let id = Id::new(1234567890123);
    let library = library_masker(&js53, KEY_HEX);
    let expected = library.mask(id).unwrap();
    assert!(expected.get() <= Layout::JS_MAX_SAFE);
    let given = id.to_text(snowflake::TextForm::Base62);
    let out = run(
        &[
            "mask",
            "--key-file",
            path_arg(&key),
            "-l",
            "js53",
            "--format",
            "base62",
            &given,
        ],
        None,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout.trim(),
        expected.to_text(snowflake::TextForm::Base62)
    );
}

/// The key file may be named by SNOWFLAKE_MASK_KEY_FILE instead; its value
/// (a path) is not shown in the help either way.
#[test]
fn the_key_file_can_come_from_the_environment() {
    let keys = Keys::new();
    let key = keys.file("k", KEY_HEX);
    let out = snowflake()
        .env("SNOWFLAKE_MASK_KEY_FILE", &key)
        .args(["mask", TWEET])
        .output()
        .unwrap();
    assert!(out.status.success());
    let expected = library_masker(&Layout::twitter(), KEY_HEX)
        .mask(TWEET.parse().unwrap())
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        expected.to_string()
    );
    let help = snowflake()
        .env("SNOWFLAKE_MASK_KEY_FILE", &key)
        .args(["mask", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("[env: SNOWFLAKE_MASK_KEY_FILE]"), "{help}");
    assert!(!help.contains(path_arg(&key)));
}

/// A key rotated out still unmasks what it masked; the new key does not.
#[test]
fn after_a_rotation_each_key_unmasks_its_own() {
    let keys = Keys::new();
    let old = keys.file("old", KEY_HEX);
    let new = keys.file("new", OTHER_HEX);
    let masked = run(&["mask", "--key-file", path_arg(&old), TWEET], None).stdout;
    let under_new = run(
        &["unmask", "--key-file", path_arg(&new), masked.trim()],
        None,
    );
    assert_eq!(under_new.code, 0);
    assert_ne!(under_new.stdout.trim(), TWEET);
    let under_old = run(
        &["unmask", "--key-file", path_arg(&old), masked.trim()],
        None,
    );
    assert_eq!(under_old.stdout.trim(), TWEET);
}

#[test]
fn a_key_file_open_to_others_is_used_with_a_warning() {
    let keys = Keys::new();
    let key = keys.file("k", KEY_HEX);
    fs::set_permissions(&key, fs::Permissions::from_mode(0o644)).unwrap();
    let out = run(&["mask", "--key-file", path_arg(&key), TWEET], None);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout.lines().count(), 1);
    assert_eq!(
        out.stderr,
        format!(
            "warning: key file {p} can be read or changed by users other than its owner \
             (mode 644); anyone who reads it can unmask every ID masked with it; make it \
             private: chmod 600 {p}\n",
            p = key.display()
        )
    );
}

/// Every way a masking command can fail or warn, and what each prints: the
/// key (and a near-miss of it) is in none of it.
#[test]
fn the_key_is_in_no_output_of_any_error_path() {
    let keys = Keys::new();
    let key = keys.file("good", KEY_HEX);
    let near = keys.file("typo", &format!("{}x{}", &KEY_HEX[..40], &KEY_HEX[41..]));
    let short = keys.file("short", &KEY_HEX[..60]);
    let open = keys.file("open", KEY_HEX);
    fs::set_permissions(&open, fs::Permissions::from_mode(0o604)).unwrap();
    let k = path_arg(&key);
    let cases: Vec<(Vec<&str>, Option<&str>, i32)> = vec![
        (vec!["mask", "--key-file", k, "nope"], None, 2),
        (
            vec!["mask", "--key-file", k, "9223372036854775808"],
            None,
            2,
        ),
        (vec!["unmask", "--key-file", k, "--json", "-1"], None, 2),
        (
            vec!["mask", "--key-file", k],
            Some("1\nx\n18446744073709551615\n"),
            2,
        ),
        (
            vec!["unmask", "--key-file", k, "--json"],
            Some("2\nzz\n"),
            2,
        ),
        (
            vec!["mask", "--key-file", k, "-l", "time:12,sequence:4", "1"],
            None,
            2,
        ),
        (
            vec!["mask", "--key-file", k, "-l", "nonsense", "1"],
            None,
            2,
        ),
        (
            vec!["mask", "--key-file", k, "--format", "base64", "1"],
            None,
            2,
        ),
        (vec!["mask", "--key-file", k, "1", "-"], None, 2),
        (vec!["mask", "--key-file", path_arg(&near), "1"], None, 2),
        (vec!["unmask", "--key-file", path_arg(&short), "1"], None, 2),
        (vec!["mask", "--key-file", path_arg(&open), "1"], None, 0),
        (vec!["mask", "--key-file", "/nonexistent/key", "1"], None, 2),
        (vec!["mask", "--key-file", KEY_HEX, "1"], None, 2),
        (vec!["mask", "--key-file", k, "--bogus", "1"], None, 2),
        (vec!["mask-key", "new", k], None, 2),
        (vec!["mask", "--key-file", k, "--help"], None, 0),
    ];
    for (args, stdin, code) in cases {
        let out = run(&args, stdin);
        assert_eq!(out.code, code, "{args:?}: {}", out.stderr);
        let all = format!("{}{}", out.stdout, out.stderr);
        assert!(!all.trim().is_empty(), "{args:?} said nothing");
        assert!(
            pieces_of(KEY_HEX, &all).is_empty(),
            "{args:?} showed the key:\n{all}"
        );
    }
}

/// The key pasted where its file's name goes, as the hostile review tried
/// it (the key itself, `0x<key>`, `./<key>`, `some/dir/<key>`,
/// `key=<key>`, a character short, a character long) and more: each holds
/// 32 or more of its hexadecimal digits.
fn near_keys() -> Vec<String> {
    vec![
        KEY_HEX.to_string(),
        format!("0x{KEY_HEX}"),
        format!("./{KEY_HEX}"),
        format!("some/dir/{KEY_HEX}"),
        format!("key={KEY_HEX}"),
        KEY_HEX[..63].to_string(),
        format!("{KEY_HEX}0"),
        KEY_HEX.to_uppercase(),
        format!("{}-{}", &KEY_HEX[..32], &KEY_HEX[32..]),
        format!("{}g{}", &KEY_HEX[..40], &KEY_HEX[41..]),
        format!("{KEY_HEX}.key"),
    ]
}

/// What a run in `dir` printed, with its exit status; `serve` is stopped
/// by its refusal, before it listens.
fn run_in(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    snowflake()
        .current_dir(dir)
        .args(args)
        .envs(env.iter().copied())
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap()
        .into()
}

/// A key file argument that may hold the key is never echoed, by any
/// command that takes one (`mask`, `unmask`, `mask-key new`, `serve`, as
/// an argument or from SNOWFLAKE_MASK_KEY_FILE), on stdout or stderr; and
/// each message still says what went wrong.
#[test]
fn a_key_file_argument_that_may_hold_the_key_is_never_shown() {
    const HIDDEN: &str = "(name not shown: it holds 32 or more hexadecimal digits";
    // Nothing is in `dir`, so every path names nothing; new keys go to `made`.
    let dir = Scratch::new();
    let made = Scratch::new();
    let check = |what: &str, out: &Run, code: i32, reason: &str| {
        let all = format!("{}{}", out.stdout, out.stderr);
        assert_eq!(out.code, code, "{what}: {all}");
        assert!(
            pieces_of(KEY_HEX, &all).is_empty(),
            "{what} showed the key:\n{all}"
        );
        assert!(all.contains(HIDDEN), "{what}: {all}");
        assert!(all.contains(reason), "{what}: {all}");
    };
    for near in near_keys() {
        for command in [&["mask"][..], &["unmask", "--json"]] {
            let mut args = command.to_vec();
            args.extend(["--key-file", &near, TWEET]);
            let out = run_in(dir.path(), &args, &[]);
            check(&format!("{args:?}"), &out, 2, "there is no such file");
            assert!(
                out.stderr.contains("never the key itself"),
                "{}",
                out.stderr
            );
            let out = run_in(
                dir.path(),
                &[command, &[TWEET]].concat(),
                &[("SNOWFLAKE_MASK_KEY_FILE", &near)],
            );
            check(
                &format!("{command:?} from the environment"),
                &out,
                2,
                "there is no such file",
            );
        }
        let out = run_in(
            dir.path(),
            &["serve", "--listen", "127.0.0.1:0", "--mask-key-file", &near],
            &[],
        );
        check(
            &format!("serve --mask-key-file {near}"),
            &out,
            2,
            "there is no such file",
        );
        let out = run_in(
            dir.path(),
            &["serve", "--listen", "127.0.0.1:0"],
            &[("SNOWFLAKE_MASK_KEY_FILE", &near)],
        );
        check(
            "serve from the environment",
            &out,
            2,
            "there is no such file",
        );
        // A new key where there is no directory for it, then where there is
        // (the file is made, and named no more than the errors name it),
        // then again (never overwritten).
        let nowhere = format!("no/such/{near}");
        let out = run_in(made.path(), &["mask-key", "new", &nowhere], &[]);
        check(
            "mask-key new, no directory",
            &out,
            2,
            "its directory does not exist",
        );
        let here = near.replace('/', "_");
        let out = run_in(made.path(), &["mask-key", "new", &here], &[]);
        check(
            "mask-key new",
            &out,
            0,
            "wrote a new 256-bit masking key to",
        );
        let new_key = fs::read_to_string(made.join(&here)).unwrap();
        assert!(
            pieces_of(new_key.trim(), &out.stdout).is_empty(),
            "{}",
            out.stdout
        );
        let out = run_in(made.path(), &["mask-key", "new", &here], &[]);
        check("mask-key new again", &out, 2, "it exists already");
    }
}

/// A key file that is there, named by a path that may hold the key, and
/// open to others: `mask` warns and `serve` logs the warning, without the
/// path; a file there that is no key says so, without it too.
#[test]
fn warnings_and_bad_files_named_by_the_key_do_not_show_it() {
    let keys = Keys::new();
    let open = keys.file(&format!("0x{KEY_HEX}"), OTHER_HEX);
    fs::set_permissions(&open, fs::Permissions::from_mode(0o644)).unwrap();
    let bad = keys.file(&format!("key={KEY_HEX}"), "c0ffee");
    let warned = "can be read or changed by users other than its owner (mode 644); anyone who \
                  reads it can unmask every ID masked with it; make it private: chmod 600 it";
    let warning = run(&["mask", "--key-file", path_arg(&open), TWEET], None);
    assert_eq!(warning.code, 0, "{}", warning.stderr);
    assert!(warning.stderr.contains(warned), "{}", warning.stderr);
    let refusal = run(&["unmask", "--key-file", path_arg(&bad), TWEET], None);
    assert_eq!(refusal.code, 2, "{}", refusal.stderr);
    assert!(
        refusal.stderr.contains("holds 6 characters"),
        "{}",
        refusal.stderr
    );
    let mut command = crate::support::Served::command();
    command.args(["--mask-key-file", path_arg(&open)]);
    let served = crate::support::Served::start(command);
    // Answering, so that SIGTERM finds its handler in place.
    assert_eq!(http(&served.addr, "GET", "/healthz", "").unwrap().0, 200);
    let logs = served.terminate();
    assert!(logs.contains(warned), "{logs}");
    for text in [warning.stderr, refusal.stderr, logs] {
        assert!(pieces_of(KEY_HEX, &text).is_empty(), "{text}");
        assert!(text.contains("key file (name not shown"), "{text}");
    }
    assert!(pieces_of(KEY_HEX, &warning.stdout).is_empty());
}
