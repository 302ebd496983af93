use std::path::PathBuf;
use std::time::Duration;

use crate::support::{NODE, Server, assert_node};

const FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

/// A server whose clock is the machine's moved by the offset in a file
/// (libfaketime, read at every clock reading), so that a test can set it
/// back while the server runs: the extension reads the clock the core's
/// way, through the C library, as a stepped system clock would be read.
struct Skewed {
    server: Server,
    offset: PathBuf,
}

impl Skewed {
    fn new() -> Skewed {
        assert!(
            std::path::Path::new(FAKETIME).exists(),
            "{FAKETIME} is missing: scripts/pg-extension test installs libfaketime"
        );
        let offset = std::env::temp_dir().join(format!(
            "snowflake-pg-clock-{}",
            crate::support::free_port()
        ));
        std::fs::write(&offset, "+0\n").unwrap();
        let file = offset.display().to_string();
        let server = Server::with_env(
            &[NODE],
            &[
                ("LD_PRELOAD", FAKETIME),
                ("FAKETIME_TIMESTAMP_FILE", &file),
                ("FAKETIME_NO_CACHE", "1"),
            ],
        );
        Skewed { server, offset }
    }

    /// Sets the server's clock `seconds` from the machine's.
    fn set(&self, seconds: &str) {
        std::fs::write(&self.offset, format!("{seconds}\n")).unwrap();
    }
}

impl Drop for Skewed {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.offset);
    }
}

/// Set back by less than the tolerance (5 ms), the clock is waited out;
/// by two seconds, next_id() fails and says by how much; once the clock is
/// back, it issues again, above everything before.
#[test]
fn a_clock_set_back_is_waited_out_or_refused_with_its_size() {
    let skewed = Skewed::new();
    let server = &skewed.server;
    let mut last = 0;
    for _ in 0..5 {
        let id = server.next_id();
        assert!(id > last);
        last = id;
    }
    skewed.set("-0.003");
    for _ in 0..5 {
        let id = server.next_id();
        assert!(id > last, "{id} after {last}, the clock 3 ms back");
        last = id;
    }
    skewed.set("-2");
    let err = server.sql_err("SELECT snowflake.next_id()");
    let by_ms: u64 = err
        .split("went backwards by ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no size in: {err}"));
    // Two seconds back, less the time since the last ID.
    assert!((1_000..=2_000).contains(&by_ms), "{err}");
    skewed.set("+0");
    let id = server.next_id();
    assert_node(id);
    assert!(
        id > last,
        "{id} after the clock came back, at or below {last}"
    );
}

/// The clock set back three seconds across a crash, further than the
/// mark's window: the restarted server refuses to issue, naming how far
/// behind its mark the clock is, rather than issue below what it handed
/// out; once the clock is back, it issues above. Without the mark in WAL
/// it would have issued at once, three seconds in the past.
#[test]
fn a_clock_set_back_across_a_crash_is_refused_until_it_passes_the_mark() {
    let skewed = Skewed::new();
    let server = &skewed.server;
    let highest = (0..100).map(|_| server.next_id()).max().unwrap();
    server.kill9();
    skewed.set("-3");
    server.start().unwrap();
    let err = server.sql_err("SELECT snowflake.next_id()");
    assert!(err.contains("behind the high-water mark"), "{err}");
    let behind_ms: u64 = err
        .split(" ms behind")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no size in: {err}"));
    assert!((2_000..=4_500).contains(&behind_ms), "{err}");
    skewed.set("+0");
    std::thread::sleep(Duration::from_millis(10));
    let id = server.next_id();
    assert!(id > highest, "{id} after the crash, at or below {highest}");
}
