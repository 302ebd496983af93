//! Why a command failed, and so which exit status it gets.

use std::io;

use snowflake::{Error, ErrorKind};

use crate::usage::UsageError;

/// Why a command failed: bad input (2), unsupported here (2), refused (2),
/// or the work itself (1).
#[derive(Debug)]
pub enum Failure {
    /// Bad input the core refused (a value out of range, an unknown
    /// layout): exit status 2.
    Usage(Error),
    /// An argument the command itself refuses (how its inputs combine, a
    /// URL it cannot check): exit status 2.
    Argument(UsageError),
    /// Requirements the planner cannot plan for (`plan --rate 0`): exit
    /// status 2.
    Requirements(snowflake_ops::Error),
    /// Something this build does not do (cluster mode without the feature):
    /// exit status 2, with how to get it.
    #[cfg_attr(feature = "cluster", allow(dead_code))]
    Unsupported(String),
    /// Settings that would be unsafe together (a service others can reach
    /// with no node of its own): exit status 2, with what to give instead.
    Refused(String),
    /// The work itself failed (clock, store, I/O): exit status 1.
    Runtime(String),
    /// Whoever read stdout has gone (`| head`): a quiet, successful end.
    PipeClosed,
    /// Some of a stream's input was bad and reported as it went: exit
    /// status 2 after the rest was done.
    BadInput(String),
}

impl From<Error> for Failure {
    fn from(err: Error) -> Self {
        match err.kind() {
            ErrorKind::InvalidInput => Failure::Usage(err),
            _ => Failure::Runtime(err.to_string()),
        }
    }
}

impl From<UsageError> for Failure {
    fn from(err: UsageError) -> Self {
        Failure::Argument(err)
    }
}

impl From<io::Error> for Failure {
    fn from(err: io::Error) -> Self {
        if err.kind() == io::ErrorKind::BrokenPipe {
            return Failure::PipeClosed;
        }
        Failure::Runtime(format!("cannot write the output: {err}"))
    }
}

impl From<snowflake_ops::Error> for Failure {
    fn from(err: snowflake_ops::Error) -> Self {
        // Every refusal of the planner is of a requirement given by flag.
        Failure::Requirements(err)
    }
}

impl From<snowflake_mask::Error> for Failure {
    fn from(err: snowflake_mask::Error) -> Self {
        // Its messages never hold key material, so they can be shown whole.
        match err.kind() {
            snowflake_mask::ErrorKind::InvalidInput => Failure::BadInput(err.to_string()),
            _ => Failure::Runtime(err.to_string()),
        }
    }
}
