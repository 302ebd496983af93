//! Waiting for something to happen: polled, with a deadline, never a fixed
//! sleep that a slow machine outlasts.

use std::time::{Duration, Instant};

/// Polls `done` until it holds; fails, naming `what`, after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}
