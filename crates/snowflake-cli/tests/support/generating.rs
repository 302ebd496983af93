//! A `snowflake generate` that runs while the test acts, its IDs read as
//! they come.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::support::spawn_piped;

/// A running `generate` and the IDs it has printed so far. Its stdout is
/// read without pause, so it is never held back by a full pipe. Dropped
/// without [`Generating::finish`] (a test that failed first), it is killed.
pub struct Generating {
    child: Child,
    ids: Arc<Mutex<Vec<u64>>>,
    reader: Option<JoinHandle<()>>,
}

impl Generating {
    /// Starts `command`, a `snowflake generate` printing decimal IDs.
    pub fn start(mut command: Command) -> Generating {
        let mut child = spawn_piped(&mut command);
        let ids = Arc::new(Mutex::new(Vec::new()));
        let out = BufReader::new(child.stdout.take().unwrap());
        let sink = Arc::clone(&ids);
        let reader = std::thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { return };
                sink.lock().unwrap().push(line.parse().unwrap());
            }
        });
        Generating {
            child,
            ids,
            reader: Some(reader),
        }
    }

    /// How many IDs it has printed so far.
    pub fn issued(&self) -> usize {
        self.ids.lock().unwrap().len()
    }

    /// Its exit status (`None` if it was still running after `limit` and
    /// had to be killed), stderr and IDs.
    pub fn finish(mut self, limit: Duration) -> (Option<i32>, String, Vec<u64>) {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status.code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        self.reader.take().unwrap().join().unwrap();
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let ids = std::mem::take(&mut *self.ids.lock().unwrap());
        (status, stderr, ids)
    }
}

impl Drop for Generating {
    fn drop(&mut self) {
        // After finish() the child is reaped and std sends no signal.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
