//! How long a backend sleeps while it waits for the mark's writer: first
//! a tenth of a millisecond, since a mark write is one WAL flush, then
//! twice as long each time up to a few milliseconds, so that a writer held
//! up (a lock on the mark, a slow disk) is not met by every waiting caller
//! waking at the first sleep's rate for as long as it lasts.
//!
//! No PostgreSQL in it, so that its test runs without a server (the e2e
//! crate compiles it for its unit tests).

/// The first sleep, in microseconds.
pub(crate) const FIRST_US: u64 = 100;

/// The longest sleep, in microseconds.
pub(crate) const LONGEST_US: u64 = 3_200;

/// The sleeps of one wait.
#[derive(Debug)]
pub(crate) struct Backoff {
    next_us: u64,
}

impl Backoff {
    pub(crate) const fn new() -> Self {
        Backoff { next_us: FIRST_US }
    }

    /// The next sleep, in microseconds.
    pub(crate) fn next_us(&mut self) -> u64 {
        let sleep = self.next_us;
        self.next_us = (sleep * 2).min(LONGEST_US);
        sleep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeps_double_from_the_first_to_the_longest_and_stay() {
        let mut backoff = Backoff::new();
        let sleeps: Vec<u64> = (0..9).map(|_| backoff.next_us()).collect();
        assert_eq!(
            sleeps,
            [100, 200, 400, 800, 1_600, 3_200, 3_200, 3_200, 3_200]
        );
        assert_eq!((sleeps[0], sleeps[8]), (FIRST_US, LONGEST_US));
    }
}
