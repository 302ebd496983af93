//! What etcd and this process did over a window: etcd's own counters (read
//! from each member's `/metrics`) and the CPU time of the etcd members and
//! of this process (from `/proc/PID/stat`), before and after.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::etcd::Etcd;

/// etcd's counters that say what the cluster wrote and served; summed
/// over the members where each member counts its own (reads, renewals),
/// the leader's where every member counts the same entries (writes).
pub const COUNTERS: [(&str, &str); 4] = [
    (
        "etcd_server_proposals_committed_total",
        "raft entries committed",
    ),
    ("etcd_mvcc_put_total", "puts applied"),
    ("etcd_mvcc_range_total", "reads (ranges)"),
    ("etcd_debugging_lease_renewed_total", "lease renewals"),
];

/// One reading of the counters and CPU times.
pub struct Reading {
    at: Instant,
    /// Per counter, per member.
    counters: Vec<Vec<f64>>,
    /// CPU seconds (user + system) of each member, then of this process.
    cpu_s: Vec<f64>,
}

impl Reading {
    pub fn take(etcd: &Etcd) -> Reading {
        let members = 3;
        let pages: Vec<String> = (0..members)
            .map(|i| metrics(etcd.member(i).trim_start_matches("http://")))
            .collect();
        let counters = COUNTERS
            .iter()
            .map(|(name, _)| pages.iter().map(|page| counter(page, name)).collect())
            .collect();
        let mut cpu_s: Vec<f64> = (0..members).map(|i| cpu_seconds(etcd.pid(i))).collect();
        cpu_s.push(cpu_seconds(std::process::id()));
        Reading {
            at: Instant::now(),
            counters,
            cpu_s,
        }
    }

    /// What happened between `self` and the later reading `end`, per second.
    pub fn rates(&self, end: &Reading, leader: usize) -> Rates {
        let secs = end.at.duration_since(self.at).as_secs_f64();
        let counters = COUNTERS
            .iter()
            .enumerate()
            .map(|(c, (name, _))| {
                let delta = |m: usize| end.counters[c][m] - self.counters[c][m];
                let per_cluster = if name.contains("proposals") || name.contains("put") {
                    delta(leader)
                } else {
                    (0..3).map(delta).sum()
                };
                per_cluster / secs
            })
            .collect();
        let cpu = |i: usize| (end.cpu_s[i] - self.cpu_s[i]) / secs;
        Rates {
            window: end.at.duration_since(self.at),
            counters,
            member_cpu: (0..3).map(cpu).collect(),
            leader,
            process_cpu: cpu(3),
        }
    }
}

/// Per-second figures over a window.
pub struct Rates {
    pub window: Duration,
    /// In the order of [`COUNTERS`].
    pub counters: Vec<f64>,
    /// Cores used by each etcd member.
    pub member_cpu: Vec<f64>,
    pub leader: usize,
    /// Cores used by this process (every node, and the test driving them).
    pub process_cpu: f64,
}

impl std::fmt::Display for Rates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "over {:.1} s:", self.window.as_secs_f64())?;
        for ((name, what), rate) in COUNTERS.iter().zip(&self.counters) {
            writeln!(f, "  {what:<24} {rate:>10.1}/s  ({name})")?;
        }
        for (i, cpu) in self.member_cpu.iter().enumerate() {
            let role = if i == self.leader { " (leader)" } else { "" };
            writeln!(
                f,
                "  etcd member m{i} CPU      {:>9.1} %{role}",
                cpu * 100.0
            )?;
        }
        write!(
            f,
            "  nodes' process CPU      {:>9.1} %",
            self.process_cpu * 100.0
        )
    }
}

/// A member's `/metrics` page; HTTP/1.0 so that it comes unchunked.
fn metrics(addr: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    write!(stream, "GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut page = String::new();
    stream.read_to_string(&mut page).unwrap();
    page
}

/// The sum of every series of counter `name` on a metrics page; NaN when
/// the page has none (another etcd version).
fn counter(page: &str, name: &str) -> f64 {
    let values: Vec<f64> = page
        .lines()
        .filter(|line| {
            line.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with(' ') || rest.starts_with('{'))
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse().ok())
        .collect();
    if values.is_empty() {
        f64::NAN
    } else {
        values.iter().sum()
    }
}

/// User plus system CPU seconds of process `pid`, from `/proc/PID/stat`.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The command name, in parentheses, may hold spaces: count after it.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / clock_ticks_per_second()
}

fn clock_ticks_per_second() -> f64 {
    let out = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output();
    out.ok()
        .and_then(|o| String::from_utf8(o.stdout).ok()?.trim().parse().ok())
        .unwrap_or(100.0)
}
