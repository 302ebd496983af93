//! `snowflake generate`: IDs streamed through a buffered writer in batches,
//! in constant memory for any count.

use std::io::{self, IsTerminal, Write};

use indicatif::{ProgressBar, ProgressStyle};
use snowflake::{Generator, SystemClock, TextForm};
use snowflake_store::FileMarkStore;

use crate::args::GenerateArgs;
use crate::failure::Failure;
use snowflake_io::parse_fields;

/// Below this many IDs a run is over too soon for a progress bar to help.
const PROGRESS_FROM: u64 = 1_000_000;

pub fn run(args: &GenerateArgs) -> Result<(), Failure> {
    tighten_timer_slack();
    let layout = args.layout.resolve()?;
    let count = args.count;
    let form = args.form.or_decimal();
    let node = parse_fields(&layout, &args.node.pairs())?;
    let builder = Generator::builder(layout.clone())
        .node(&node)
        .clock(SystemClock);
    let generator = match &args.state_file {
        Some(path) => builder.store(FileMarkStore::new(path)).build()?,
        None => builder.build()?,
    };
    let progress = (count >= PROGRESS_FROM && io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new(count);
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:40} {human_pos}/{human_len} IDs, {per_sec}, {eta} left",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    });
    let stdout = io::stdout().lock();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout);
    let result = write_ids(
        &generator,
        &layout,
        count,
        args.json,
        form,
        &mut out,
        progress.as_ref(),
    )
    .and_then(|()| out.flush().map_err(Failure::from));
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    // A clean end shrinks the stored mark to the last ID issued, so that the
    // next run starts without waiting out the reserved window.
    generator.close()?;
    result
}

fn write_ids(
    generator: &Generator<SystemClock>,
    layout: &snowflake::Layout,
    count: u64,
    json: bool,
    form: TextForm,
    out: &mut impl Write,
    progress: Option<&ProgressBar>,
) -> Result<(), Failure> {
    let mut left = count;
    let mut buf = [0u8; TextForm::MAX_LEN];
    while left > 0 {
        let batch = generator.next_ids(left)?;
        let got = batch.len() as u64;
        for id in batch {
            if json {
                serde_json::to_writer(&mut *out, &layout.decode(id)?).map_err(io::Error::from)?;
                out.write_all(b"\n")?;
            } else {
                out.write_all(form.encode(id, &mut buf).as_bytes())?;
                out.write_all(b"\n")?;
            }
        }
        left -= got;
        if let Some(bar) = progress {
            bar.inc(got);
        }
    }
    Ok(())
}

/// Asks Linux to wake this thread from a sleep within 1 ns of its deadline
/// instead of the default 50 µs: the generator naps until just before the
/// next millisecond, and a late wake-up is time the generator could have
/// issued in (`bench/src/bin/wakeup.rs` measures the overshoot with and
/// without; BENCHMARKS.md has the figures). A process may set its own
/// slack; where it cannot (another OS, a locked-down /proc), nothing changes.
fn tighten_timer_slack() {
    let _ = std::fs::write("/proc/self/timerslack_ns", "1");
}
