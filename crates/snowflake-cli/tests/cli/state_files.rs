//! State files under `generate`: marks across runs, the lock, planted links
//! and FIFOs, and two processes when the lock file is removed under the
//! first (issue 18, finding 8: the same attack on `serve` shared 495,904
//! IDs).

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use predicates::prelude::*;
use snowflake::{Clock, Layout, MarkStore, SystemClock};
use snowflake_store::FileMarkStore;

use crate::support::{
    Generating, Printed, Scratch, command, path_arg, snowflake, spawn_piped, stdout_of, wait_for,
};

/// 16 IDs a millisecond, so that a busy run prints a few thousand lines a
/// second rather than millions, and writes its mark about twice a second.
const SLOW_LAYOUT: &str = "time:41,node:18,sequence:4";

/// `generate -n count` of [`SLOW_LAYOUT`] on `state`.
fn generate_slowly(state: &Path, count: &str) -> Command {
    let mut cmd = command();
    cmd.args(["generate", "-n", count, "--layout", SLOW_LAYOUT])
        .args(["--epoch", "1288834974657", "--state-file"])
        .arg(state);
    cmd
}

/// Only the state file can make this pass: the mark is raised ahead of the
/// clock between the runs, so a rerun that ignored the file would issue IDs
/// below it, and a mark beyond what a restart waits out stops the rerun.
#[test]
fn generate_with_a_state_file_never_repeats_across_runs() {
    let dir = Scratch::new();
    let path = dir.join("mark");
    let state = path_arg(&path);
    let twitter = Layout::twitter();
    let first = stdout_of(&["generate", "-n", "5000", "--state-file", state]);
    let last_of_first: u64 = first.lines().last().unwrap().parse().unwrap();
    let last = twitter.decode(snowflake::Id::new(last_of_first)).unwrap();
    // A clean end leaves the mark at the last ID issued.
    assert_eq!(
        FileMarkStore::new(&path).load().unwrap(),
        Some(last.timestamp_ms())
    );

    // As if the first run had issued up to 900 ms ahead of the clock.
    let ahead = SystemClock.now_ms() + 900;
    let store = FileMarkStore::new(&path);
    store.open(&twitter).unwrap();
    store.save(ahead).unwrap();
    drop(store);
    let second = stdout_of(&["generate", "-n", "5000", "--state-file", state]);
    let first_of_second: u64 = second.lines().next().unwrap().parse().unwrap();
    let d = twitter.decode(snowflake::Id::new(first_of_second)).unwrap();
    assert!(
        d.timestamp_ms() > ahead,
        "the rerun issued at {}, at or below the mark {ahead}",
        d.timestamp_ms()
    );
    assert!(first_of_second > last_of_first);

    // A mark a minute ahead is more than a restart waits out: refused.
    let store = FileMarkStore::new(&path);
    store.open(&twitter).unwrap();
    store.save(SystemClock.now_ms() + 60_000).unwrap();
    drop(store);
    snowflake()
        .args(["generate", "--state-file", state])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("behind the high-water mark"));

    std::fs::write(state, "garbage").unwrap();
    snowflake()
        .args(["generate", "--state-file", state])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "cannot use {state}: it is not a mark file"
        )));
}

/// Two processes on one state file: the second starts while the first is
/// issuing, and refuses with one line naming the file and the first's PID.
#[test]
fn a_second_generate_on_the_same_state_file_is_refused() {
    let dir = Scratch::new();
    let state = dir.join("mark");
    let state = path_arg(&state);
    let args = [
        "generate",
        "-n",
        "2000000",
        "--machine",
        "7",
        "--state-file",
        state,
    ];
    let mut first = spawn_piped(command().args(args));
    let mut out = BufReader::new(first.stdout.take().unwrap());
    let mut ids = String::new();
    // Its first ID is out, so it holds the lock; it cannot finish before we
    // read the rest, as the pipe fills long before two million IDs.
    out.read_line(&mut ids).unwrap();
    assert!(!ids.is_empty(), "the first run printed nothing");

    let second = snowflake()
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    out.read_to_string(&mut ids).unwrap();
    let mut first_err = String::new();
    first
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut first_err)
        .unwrap();
    let status = first.wait().unwrap();
    assert!(status.success(), "{status:?}: {first_err}");

    let refusal = String::from_utf8(second.stderr).unwrap();
    assert_eq!(second.status.code(), Some(1), "{refusal}");
    assert_eq!(refusal.lines().count(), 1, "{refusal}");
    assert!(
        refusal.contains(&format!(
            "{state} is in use by process {}, which holds the lock on {state}.lock",
            first.id()
        )),
        "{refusal}"
    );
    let second_ids = String::from_utf8(second.stdout).unwrap();
    assert_eq!(second_ids, "");

    let mut seen = HashSet::new();
    let mut count = 0;
    for line in ids.lines().chain(second_ids.lines()) {
        let id: u64 = line.parse().unwrap();
        assert!(seen.insert(id), "{id} was issued twice");
        count += 1;
    }
    assert_eq!(count, 2_000_000);
    // The first run let go: the file is usable again.
    stdout_of(&["generate", "-n", "1", "--state-file", state]);
}

/// Links and pipes planted at the state file's paths are refused with a
/// clear line, and nothing they point at is written.
#[test]
fn a_planted_link_or_fifo_at_the_state_file_is_refused() {
    use std::os::unix::fs::symlink;
    let dir = Scratch::new();
    let target = dir.file("precious", "keep me\n");
    let state = dir.join("mark");
    let lock = dir.join("mark.lock");
    let refused = |what: &str, at: &Path| {
        let stderr = snowflake()
            .args(["generate", "-n", "10", "--state-file"])
            .arg(&state)
            .timeout(Duration::from_secs(20))
            .assert()
            .code(1)
            .stdout("")
            .stderr_text();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(&format!("refusing to use {}: it is {what}", at.display())),
            "{stderr}"
        );
    };

    symlink(&target, &state).unwrap();
    refused("a symbolic link", &state);
    assert!(
        !lock.exists(),
        "a lock file was made for a refused state file"
    );
    std::fs::remove_file(&state).unwrap();

    symlink(&target, &lock).unwrap();
    refused("a symbolic link", &lock);
    std::fs::remove_file(&lock).unwrap();

    let made = Command::new("mkfifo").arg(&state).status();
    assert!(made.is_ok_and(|s| s.success()), "this test needs mkfifo");
    refused("a FIFO (named pipe)", &state);
    std::fs::remove_file(&state).unwrap();

    // A link at the temporary name earlier builds used is left alone.
    symlink(&target, dir.join("mark.tmp")).unwrap();
    stdout_of(&["generate", "-n", "10", "--state-file", path_arg(&state)]);
    assert!(FileMarkStore::new(&state).load().unwrap().is_some());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me\n");
}

/// The first process issues without pause; its lock file is removed; a
/// second starts on the same state file and issues 20,000 IDs. The first
/// stops with an error naming the lock file by the end of the mark it had
/// written; every one of its IDs is below every one of the second's.
#[test]
fn a_removed_lock_file_never_lets_two_processes_issue_from_one_state_file() {
    let dir = Scratch::new();
    let state = dir.join("mark");
    let lock = dir.join("mark.lock");

    // The race the holder's checks leave open is a few system calls wide;
    // should the second start land in it, it refuses to start, which keeps
    // the promise but tests nothing here: then run the scenario again.
    for _ in 0..3 {
        let _ = std::fs::remove_file(&state);
        let _ = std::fs::remove_file(&lock);
        let first = Generating::start(generate_slowly(&state, "1000000000000"));
        wait_for("the first process's IDs", Duration::from_secs(30), || {
            first.issued() >= 1000
        });
        std::fs::remove_file(&lock).unwrap();

        let Output {
            status,
            stdout,
            stderr,
        } = generate_slowly(&state, "20000").output().unwrap();
        let second_err = String::from_utf8(stderr).unwrap();
        let (first_code, first_err, firsts) = first.finish(Duration::from_secs(30));

        if status.code() == Some(1) && second_err.contains("is in use by another process") {
            continue;
        }
        assert!(status.success(), "{second_err}");
        let seconds: Vec<u64> = String::from_utf8(stdout)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        assert_eq!(seconds.len(), 20_000);
        assert!(firsts.len() >= 1000);

        // The promise first: no ID from both.
        let mine: HashSet<u64> = firsts.iter().copied().collect();
        assert_eq!(mine.len(), firsts.len(), "the first repeated an ID");
        let shared = seconds.iter().filter(|id| mine.contains(id)).count();
        assert_eq!(shared, 0, "{shared} IDs issued by both processes");
        let (last_first, first_second) = (firsts.iter().max(), seconds.iter().min());
        assert!(
            last_first < first_second,
            "the first issued {last_first:?} after the second began at {first_second:?}"
        );
        // The first noticed within its mark, said so in one line, and
        // stopped with status 1.
        assert_eq!(first_code, Some(1), "still running 30 s on: {first_err}");
        assert_eq!(first_err.lines().count(), 1, "{first_err}");
        assert!(
            first_err.contains(&format!(
                "{} may be in use by another process: its lock file {}.lock was",
                state.display(),
                state.display()
            )),
            "{first_err}"
        );
        return;
    }
    panic!("the second start refused three times: the race is not narrow");
}
