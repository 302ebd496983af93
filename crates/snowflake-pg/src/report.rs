//! The core's errors as SQL errors: the message is the core's, the
//! SQLSTATE says what kind of failure it is.

use pgrx::PgSqlErrorCode;
use snowflake::{Error, ErrorKind};

/// Raises `err` as an SQL error; never returns.
pub(crate) fn fail(err: &Error) -> ! {
    let code = match err.kind() {
        ErrorKind::InvalidInput => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        ErrorKind::TimeExhausted => PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
        ErrorKind::ClockBackwards | ErrorKind::Store | ErrorKind::StoreInUse => {
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE
        }
        _ => PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
    };
    fail_with(code, &err.to_string())
}

/// Raises `message` as an SQL error with `code`; never returns.
pub(crate) fn fail_with(code: PgSqlErrorCode, message: &str) -> ! {
    pgrx::ereport!(ERROR, code, message.to_owned());
}

/// The value, or the error raised.
pub(crate) trait OrFail<T> {
    fn or_fail(self) -> T;
}

impl<T> OrFail<T> for Result<T, Error> {
    fn or_fail(self) -> T {
        self.unwrap_or_else(|err| fail(&err))
    }
}
