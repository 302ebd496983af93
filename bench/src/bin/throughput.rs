//! Sustained throughput, CPU use, duplicates and time accuracy of every
//! generator, printed as markdown tables.
//!
//! ```text
//! cargo run --release --bin throughput [--repeat N] [NAME ...]
//! ```
//!
//! With `--repeat N`, each saturated run is made N times; the table shows
//! the run with the median rate, and the range of all N.
//!
//! Each measurement runs in a child process of its own (this binary again,
//! with `--child`), so that one generator's background threads (our cached
//! clock's refresher, ferroid's ticker) never run, or count as CPU time,
//! while another generator is measured.
//!
//! Before each run it waits (up to 30 s) for a second in which the rest
//! of the machine was idle, and the tables say how busy it was meanwhile.
//!
//! * saturated: 1 and 4 threads share one generator and call it as fast as
//!   they can for 2 s, starting on a time-unit boundary. Every ID is kept;
//!   afterwards all are sorted to count duplicates. CPU time is that of the
//!   whole process (schedstat of every task, so background clock threads
//!   count) less the main thread, which only sleeps. The window runs from
//!   the boundary to the stop signal; the call each thread has in flight at
//!   the stop is counted, so a run can show a little over 100 %: up to one
//!   batch (4,096 IDs, 0.05 %) per thread for `next_ids`, one 10 ms unit
//!   (0.5 %) for sonyflake.
//! * paced: 1 thread, one call then a 50 µs sleep, for 1 s: how far an ID's
//!   time strays from the wall clock when the generator is not saturated.
//!
//! An ID's time is the start of its time unit, decoded with that generator's
//! epoch and unit. The wall clock is read right before (`before`) and right
//! after (`after`) a sampled call; `behind` is `before - time` (below one unit
//! for a generator that reads the real clock at the call: the ID's unit was
//! still current when the call began) and `ahead` is `time - after` (at most 0
//! for such a generator). Reading `before` rather than `after` keeps a
//! preemption after the call from counting against the generator.

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use snowflake_bench::{
    Ferroid, IdGenerator, OursBatch, OursCached, OursSystem, OursTsc, RsSnowflake, SPECS,
    Snowflaked, Sonyflake, Spec, Subject, wall_ns,
};

const WINDOW: Duration = Duration::from_secs(2);
const PACED_WINDOW: Duration = Duration::from_secs(1);
const PACE: Duration = Duration::from_micros(50);
const THREAD_COUNTS: [usize; 2] = [1, 4];
/// How long to wait for the rest of the machine to go idle before each run.
const QUIET_WAIT: Duration = Duration::from_secs(30);
/// Every this many IDs of a saturated run, the wall clock is read around
/// the call that issues the next one (two clock reads: about 1 ns per ID
/// amortised). A batch call is always sampled, at its first and last ID.
const SAMPLE_EVERY: u64 = 64;

macro_rules! with_subject {
    ($name:expr, $f:ident ( $($arg:expr),* )) => {
        match $name {
            "ours-system" => $f::<OursSystem>($($arg),*),
            "ours-cached" => $f::<OursCached>($($arg),*),
            "ours-tsc" => $f::<OursTsc>($($arg),*),
            "ours-batch" => $f::<OursBatch>($($arg),*),
            "snowflaked" => $f::<Snowflaked>($($arg),*),
            "rs-snowflake" => $f::<RsSnowflake>($($arg),*),
            "ferroid" => $f::<Ferroid>($($arg),*),
            "sonyflake" => $f::<Sonyflake>($($arg),*),
            "idgenerator" => $f::<IdGenerator>($($arg),*),
            other => panic!("unknown generator {other:?}"),
        }
    };
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        let name = args[1].as_str();
        let outcome = match args[2].as_str() {
            "saturate" => {
                let threads = args[3].parse().expect("a thread count");
                with_subject!(name, saturate(threads))
            }
            "paced" => with_subject!(name, paced()),
            other => panic!("unknown mode {other:?}"),
        };
        println!("RESULT\t{}", outcome.to_line());
        return;
    }
    let mut repeat = 1;
    let mut names = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--repeat" {
            repeat = rest
                .next()
                .and_then(|n| n.parse().ok())
                .filter(|&n| n > 0)
                .expect("--repeat takes a count above 0");
        } else {
            names.push(arg.as_str());
        }
    }
    let wanted: Vec<&Spec> = SPECS
        .iter()
        .filter(|s| names.is_empty() || names.contains(&s.name))
        .collect();
    orchestrate(&wanted, repeat);
}

/// How far IDs' times strayed from the wall clock.
#[derive(Clone, Copy, Debug, Default)]
struct Accuracy {
    samples: u64,
    behind_max_ns: i64,
    ahead_max_ns: i64,
    /// IDs whose whole time unit had passed before the call began.
    stale: u64,
    /// IDs whose time unit had not begun when the call returned.
    early: u64,
}

impl Accuracy {
    #[inline]
    fn note(&mut self, spec: &Spec, id: u64, before: i64, after: i64) {
        let unit_ns = spec.unit_ms * 1_000_000;
        let start = spec.time_ms(id) * 1_000_000;
        let behind = before - start;
        let ahead = start - after;
        self.samples += 1;
        self.behind_max_ns = self.behind_max_ns.max(behind);
        self.ahead_max_ns = self.ahead_max_ns.max(ahead);
        self.stale += u64::from(behind >= unit_ns);
        self.early += u64::from(ahead > 0);
    }

    fn merge(&mut self, other: &Accuracy) {
        self.samples += other.samples;
        self.behind_max_ns = self.behind_max_ns.max(other.behind_max_ns);
        self.ahead_max_ns = self.ahead_max_ns.max(other.ahead_max_ns);
        self.stale += other.stale;
        self.early += other.early;
    }
}

/// The calls that failed: how many, and the first one's words.
#[derive(Debug, Default)]
struct Errors {
    count: u64,
    first: String,
}

impl Errors {
    fn note(&mut self, error: String) {
        self.count += 1;
        if self.first.is_empty() {
            self.first = error;
        }
    }

    fn merge(&mut self, other: Errors) {
        self.count += other.count;
        if self.first.is_empty() {
            self.first = other.first;
        }
    }
}

/// How many IDs came no later than the one before them, in the order issued.
fn disorder(ids: &[u64]) -> u64 {
    ids.windows(2).filter(|w| w[1] <= w[0]).count() as u64
}

/// How many IDs repeat one before them; sorts `ids` to count them.
fn duplicates(ids: &mut [u64]) -> u64 {
    ids.sort_unstable();
    ids.windows(2).filter(|w| w[0] == w[1]).count() as u64
}

/// One child's measurement.
#[derive(Debug, Default)]
struct Outcome {
    ids: u64,
    secs: f64,
    cpu_ns: u64,
    gen_cpu_ns: u64,
    /// CPU time used by everything else on the machine meanwhile.
    others_ns: u64,
    duplicates: u64,
    disorder: u64,
    errors: Errors,
    accuracy: Accuracy,
    report: String,
}

impl Outcome {
    fn to_line(&self) -> String {
        let a = &self.accuracy;
        format!(
            "ids={}\tsecs={}\tcpu_ns={}\tgen_cpu_ns={}\tothers_ns={}\tduplicates={}\tdisorder={}\terrors={}\t\
             samples={}\tbehind_max_ns={}\tahead_max_ns={}\tstale={}\tearly={}\t\
             first_error={}\treport={}",
            self.ids,
            self.secs,
            self.cpu_ns,
            self.gen_cpu_ns,
            self.others_ns,
            self.duplicates,
            self.disorder,
            self.errors.count,
            a.samples,
            a.behind_max_ns,
            a.ahead_max_ns,
            a.stale,
            a.early,
            self.errors.first.replace(['\t', '\n'], " "),
            self.report.replace(['\t', '\n'], " "),
        )
    }
}

/// CPU time of the calling thread, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    schedstat("/proc/thread-self/schedstat")
}

/// CPU time of every thread of this process, in nanoseconds.
fn process_cpu_ns() -> u64 {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task is readable")
        .filter_map(Result::ok)
        .map(|task| schedstat(task.path().join("schedstat")))
        .sum()
}

/// The first field of a schedstat file: time spent on a CPU, in nanoseconds.
/// A task that exited between listing and reading counts as 0.
fn schedstat(path: impl AsRef<std::path::Path>) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Busy time of the whole machine, all CPUs, in nanoseconds (from the
/// clock ticks in `/proc/stat`): what else ran beside the measurement.
fn machine_busy_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(line) = stat.lines().find(|l| l.starts_with("cpu ")) else {
        return 0;
    };
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal: all but idle and iowait.
    let busy: u64 = ticks
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 3 && *i != 4 && *i < 8)
        .map(|(_, t)| t)
        .sum();
    // USER_HZ is 100 on Linux.
    busy * 10_000_000
}

/// Sleeps, then spins, until the wall clock reaches `target_ns`.
fn wait_for_wall(target_ns: i64) {
    let left = Duration::from_nanos(target_ns.saturating_sub(wall_ns()).max(0) as u64);
    sleep_then_spin(left, || wall_ns() >= target_ns);
}

/// Sleeps, then spins, until `deadline`.
fn wait_until(deadline: Instant) {
    let left = deadline.saturating_duration_since(Instant::now());
    sleep_then_spin(left, || Instant::now() >= deadline);
}

/// Sleeps through all but the last 300 µs of `left`, if more than 500 µs
/// are left, then spins until `reached`: the spin, not the sleep, ends the
/// wait.
fn sleep_then_spin(left: Duration, reached: impl Fn() -> bool) {
    if left > Duration::from_micros(500) {
        std::thread::sleep(left - Duration::from_micros(300));
    }
    while !reached() {
        std::hint::spin_loop();
    }
}

struct ThreadRun {
    ids: Vec<u64>,
    cpu_ns: u64,
    accuracy: Accuracy,
    errors: Errors,
}

fn saturate<S: Subject>(threads: usize) -> Outcome {
    let spec = S::SPEC;
    let generator = Arc::new(S::build());
    // Room for twice the ceiling: a generator that borrows from the future
    // (idgenerator) can run past it for a while.
    let room = (spec.ceiling_per_s() * WINDOW.as_secs_f64() * 2.2) as usize + 8192;
    let ready = Arc::new(Barrier::new(threads + 1));
    let go = Arc::new(Barrier::new(threads + 1));
    let done = Arc::new(Barrier::new(threads + 1));
    // Holds the threads alive until their CPU time has been read.
    let release = Arc::new(Barrier::new(threads + 1));
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (generator, ready, go, done, release, stop) = (
                generator.clone(),
                ready.clone(),
                go.clone(),
                done.clone(),
                release.clone(),
                stop.clone(),
            );
            std::thread::spawn(move || {
                // Touch every page now, not while measuring.
                let mut ids: Vec<u64> = vec![1; room];
                ids.clear();
                let mut accuracy = Accuracy::default();
                let mut errors = Errors::default();
                ready.wait();
                go.wait();
                let cpu0 = thread_cpu_ns();
                // Sampled by IDs, not calls, so that a batch call is always sampled.
                let mut sample_at = 0;
                while !stop.load(Ordering::Relaxed) {
                    let from = ids.len();
                    let sampled = from >= sample_at;
                    let before = if sampled { wall_ns() } else { 0 };
                    if let Err(e) = generator.issue(&mut ids) {
                        errors.note(e);
                        continue;
                    }
                    if sampled {
                        let after = wall_ns();
                        sample_at = ids.len() + SAMPLE_EVERY as usize;
                        accuracy.note(&spec, ids[from], before, after);
                        if ids.len() - from > 1 {
                            accuracy.note(&spec, ids[ids.len() - 1], before, after);
                        }
                    }
                }
                let cpu_ns = thread_cpu_ns() - cpu0;
                done.wait();
                release.wait();
                ThreadRun {
                    ids,
                    cpu_ns,
                    accuracy,
                    errors,
                }
            })
        })
        .collect();
    ready.wait();
    // Start on a unit boundary, so that the window holds whole units.
    let unit_ns = spec.unit_ms * 1_000_000;
    wait_for_wall((wall_ns() / unit_ns + 1) * unit_ns);
    let (process0, main0, machine0) = (process_cpu_ns(), thread_cpu_ns(), machine_busy_ns());
    let start = Instant::now();
    go.wait();
    wait_until(start + WINDOW);
    stop.store(true, Ordering::Relaxed);
    // The window is the parent's: from the unit boundary to the stop, so
    // that a thread's last call, waiting into the next unit, does not
    // lengthen it. That call's one ID per thread is counted.
    let secs = start.elapsed().as_secs_f64();
    done.wait();
    let (process1, main1, machine1) = (process_cpu_ns(), thread_cpu_ns(), machine_busy_ns());
    release.wait();
    let runs: Vec<ThreadRun> = handles
        .into_iter()
        .map(|h| h.join().expect("a generator thread panicked"))
        .collect();

    let mut outcome = Outcome {
        cpu_ns: (process1 - process0).saturating_sub(main1 - main0),
        others_ns: (machine1 - machine0).saturating_sub(process1 - process0),
        report: generator.report(),
        ..Outcome::default()
    };
    outcome.secs = secs;
    let mut all = Vec::with_capacity(runs.iter().map(|r| r.ids.len()).sum());
    for run in runs {
        outcome.gen_cpu_ns += run.cpu_ns;
        outcome.errors.merge(run.errors);
        outcome.accuracy.merge(&run.accuracy);
        outcome.disorder += disorder(&run.ids);
        all.extend_from_slice(&run.ids);
    }
    outcome.ids = all.len() as u64;
    outcome.duplicates = duplicates(&mut all);
    outcome
}

fn paced<S: Subject>() -> Outcome {
    let spec = S::SPEC;
    let generator = S::build();
    let mut ids = Vec::with_capacity(1 << 16);
    let mut outcome = Outcome::default();
    let start = Instant::now();
    while start.elapsed() < PACED_WINDOW {
        let from = ids.len();
        let before = wall_ns();
        if let Err(e) = generator.issue(&mut ids) {
            outcome.errors.note(e);
            continue;
        }
        let after = wall_ns();
        for &id in &ids[from..] {
            outcome.accuracy.note(&spec, id, before, after);
        }
        std::thread::sleep(PACE);
    }
    outcome.secs = start.elapsed().as_secs_f64();
    outcome.ids = ids.len() as u64;
    outcome.disorder = disorder(&ids);
    outcome.duplicates = duplicates(&mut ids);
    outcome.report = generator.report();
    outcome
}

type Fields = BTreeMap<String, String>;

/// Waits, up to `QUIET_WAIT`, for a second in which the rest of the machine
/// used less than a tenth of a core: on a shared machine, a build running
/// beside a measurement takes the cores a sleeping generator wakes up on.
fn wait_for_quiet() {
    let give_up = Instant::now() + QUIET_WAIT;
    loop {
        let busy0 = machine_busy_ns();
        let start = Instant::now();
        std::thread::sleep(Duration::from_secs(1));
        let busy = (machine_busy_ns() - busy0) as f64 / start.elapsed().as_nanos() as f64;
        if busy < 0.1 {
            return;
        }
        if Instant::now() > give_up {
            eprintln!("the machine did not get quiet ({busy:.2} cores busy); measuring anyway");
            return;
        }
    }
}

fn run_child(name: &str, mode: &[&str]) -> Fields {
    wait_for_quiet();
    let exe = std::env::current_exe().expect("the path of this binary");
    let output = Command::new(exe)
        .arg("--child")
        .arg(name)
        .args(mode)
        .output()
        .expect("the child runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let Some(line) = stdout.lines().find_map(|l| l.strip_prefix("RESULT\t")) else {
        eprintln!(
            "{name} {mode:?} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        return Fields::new();
    };
    line.split('\t')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn num(fields: &Fields, key: &str) -> f64 {
    fields
        .get(key)
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

fn thousands(n: f64) -> String {
    if !n.is_finite() {
        return "—".into();
    }
    let digits = format!("{:.0}", n);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 && c != '-' {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn micros(ns: f64) -> String {
    if !ns.is_finite() {
        return "—".into();
    }
    format!("{:.1}", ns / 1000.0)
}

/// Of a saturated run made several times: the run with the median rate,
/// and the lowest and highest rate of all of them.
type Repeated = (Fields, f64, f64);

fn rate_of(f: &Fields) -> f64 {
    num(f, "ids") / num(f, "secs")
}

fn orchestrate(specs: &[&Spec], repeat: usize) {
    let mut saturated: Vec<(&Spec, Vec<Repeated>)> = Vec::new();
    let mut paced_runs: Vec<(&Spec, Fields)> = Vec::new();
    for spec in specs {
        let runs = THREAD_COUNTS
            .iter()
            .map(|t| {
                let mut runs: Vec<Fields> = (1..=repeat)
                    .map(|i| {
                        eprintln!("{} saturated, {t} thread(s), run {i}/{repeat}", spec.name);
                        run_child(spec.name, &["saturate", &t.to_string()])
                    })
                    .collect();
                runs.sort_by(|a, b| rate_of(a).total_cmp(&rate_of(b)));
                let (low, high) = (rate_of(&runs[0]), rate_of(&runs[runs.len() - 1]));
                (runs.swap_remove(runs.len() / 2), low, high)
            })
            .collect();
        saturated.push((spec, runs));
        // One batch call uses up a millisecond: pacing it means nothing.
        if spec.name != OursBatch::SPEC.name {
            eprintln!("{} paced", spec.name);
            paced_runs.push((spec, run_child(spec.name, &["paced"])));
        }
    }

    println!("### Layouts and ceilings\n");
    println!("| generator | set up as | layout | ceiling (IDs/s) |");
    println!("| --- | --- | --- | ---: |");
    for spec in specs {
        println!(
            "| {} | {} | {} | {} |",
            spec.name,
            spec.setup,
            spec.layout,
            thousands(spec.ceiling_per_s())
        );
    }

    println!(
        "\n### Saturated: {} s, threads sharing one generator\n",
        WINDOW.as_secs()
    );
    println!(
        "| generator | threads | IDs/s | % of own ceiling | CPU, process (% of one core) | \
         CPU, generating threads | duplicates | out of order (per thread) | errors | \
         max behind (µs) | max ahead (µs) | stale / early IDs (of sampled) | other load (cores) |{}",
        if repeat > 1 {
            format!(" % of ceiling, range of {repeat} runs |")
        } else {
            String::new()
        }
    );
    println!(
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |{}",
        if repeat > 1 { " ---: |" } else { "" }
    );
    for (spec, runs) in &saturated {
        for (threads, (f, low, high)) in THREAD_COUNTS.iter().zip(runs) {
            let range = if repeat > 1 {
                let pct = |r: f64| 100.0 * r / spec.ceiling_per_s();
                format!(" {:.2}–{:.2} % |", pct(*low), pct(*high))
            } else {
                String::new()
            };
            let secs = num(f, "secs");
            let rate = num(f, "ids") / secs;
            println!(
                "| {} | {} | {} | {:.2} % | {:.1} % | {:.1} % | {} | {} | {} | {} | {} | {} / {} (of {}) | {:.2} |{}",
                spec.name,
                threads,
                thousands(rate),
                100.0 * rate / spec.ceiling_per_s(),
                100.0 * num(f, "cpu_ns") / (secs * 1e9),
                100.0 * num(f, "gen_cpu_ns") / (secs * 1e9),
                thousands(num(f, "duplicates")),
                thousands(num(f, "disorder")),
                thousands(num(f, "errors")),
                micros(num(f, "behind_max_ns")),
                micros(num(f, "ahead_max_ns")),
                thousands(num(f, "stale")),
                thousands(num(f, "early")),
                thousands(num(f, "samples")),
                num(f, "others_ns") / (secs * 1e9),
                range,
            );
        }
    }

    println!(
        "\n### Paced: 1 thread, one call then a {} µs sleep, for {} s\n",
        PACE.as_micros(),
        PACED_WINDOW.as_secs()
    );
    println!(
        "| generator | IDs | max behind (µs) | max ahead (µs) | stale IDs | early IDs | duplicates | errors |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (spec, f) in &paced_runs {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            spec.name,
            thousands(num(f, "ids")),
            micros(num(f, "behind_max_ns")),
            micros(num(f, "ahead_max_ns")),
            thousands(num(f, "stale")),
            thousands(num(f, "early")),
            thousands(num(f, "duplicates")),
            thousands(num(f, "errors")),
        );
    }

    println!("\nNotes from the generators (our `stats()` after each run):\n");
    for (spec, runs) in &saturated {
        for (threads, (f, _, _)) in THREAD_COUNTS.iter().zip(runs) {
            note(spec, &format!("saturated, {threads} thread(s)"), f);
        }
    }
    for (spec, f) in &paced_runs {
        note(spec, "paced", f);
    }
}

fn note(spec: &Spec, what: &str, f: &Fields) {
    let report = f.get("report").map(String::as_str).unwrap_or("");
    let error = f.get("first_error").map(String::as_str).unwrap_or("");
    if !report.is_empty() || !error.is_empty() {
        let error = if error.is_empty() {
            String::new()
        } else {
            format!(" first error: {error}")
        };
        println!("- {} ({what}): {report}{error}", spec.name);
    }
}
