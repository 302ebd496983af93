//! Text: an ID's text forms both ways, times as the core writes them, and
//! the core's words for a time that could not be read.

use snowflake::{Id, TextForm, UnixMillis};

use super::SEP;
use crate::reply::{self, DONE};

/// The text form at `form` in the core's list of forms (see `sf_tables`).
fn text_form(form: i32) -> Option<TextForm> {
    TextForm::ALL.get(usize::try_from(form).ok()?).copied()
}

/// `id` written in the form at index `form` of the list, into the output.
/// An index past the list writes the decimal form.
#[unsafe(no_mangle)]
pub extern "C" fn sf_to_text(form: i32, id: i64) -> i32 {
    let form = text_form(form).unwrap_or(TextForm::Decimal);
    let mut buf = [0u8; TextForm::MAX_LEN];
    reply::text(form.encode(Id::new(id as u64), &mut buf));
    DONE
}

/// The ID the input holds in the form at index `form`, or, for −1, in
/// decimal or `0x` hexadecimal as the core's one ID parser reads it. The ID
/// is the first number.
#[unsafe(no_mangle)]
pub extern "C" fn sf_from_text(form: i32) -> i32 {
    let parsed = reply::with_input(|input| Id::parse_as(input, text_form(form)));
    reply::number_or_error(parsed.map(Id::get))
}

/// The place of the text form the input names in the core's list, ASCII
/// case ignored; or the core's error naming the forms there are.
#[unsafe(no_mangle)]
pub extern "C" fn sf_text_form(_unused: i32) -> i32 {
    match reply::with_input(|input| input.parse::<TextForm>()) {
        Ok(form) => TextForm::ALL
            .iter()
            .position(|f| *f == form)
            .and_then(|at| i32::try_from(at).ok())
            .unwrap_or(reply::FAILED),
        Err(err) => reply::core_error(&err),
    }
}

/// `ms` as the core writes a time: RFC 3339 in UTC with milliseconds, and
/// ISO 8601's expanded year outside 0 to 9999; into the output.
#[unsafe(no_mangle)]
pub extern "C" fn sf_time(ms: i64) -> i32 {
    let mut buf = [0u8; UnixMillis::MAX_LEN];
    reply::text(UnixMillis(ms).to_rfc3339(&mut buf));
    DONE
}

/// A time from its text, `field\0text`: Unix milliseconds, or an RFC 3339
/// date, as [`UnixMillis::parse`] reads them for every front end, into the
/// first number; else the core's error naming the field. The glue reads
/// the number back as signed.
#[unsafe(no_mangle)]
pub extern "C" fn sf_read_time() -> i32 {
    let read = reply::with_input(|input| {
        let (field, text) = named_time(input);
        UnixMillis::parse(field, text)
    });
    reply::number_or_error(read.map(|ms| ms.0 as u64))
}

/// The core's error for a value that is no time and no text to read one
/// from (a Number past 2^53, an invalid `Date`): the input is `field\0what
/// it shows as`. Always fails, leaving the error in the output.
#[unsafe(no_mangle)]
pub extern "C" fn sf_not_a_time() -> i32 {
    let err = reply::with_input(|input| {
        let (field, text) = named_time(input);
        snowflake::Error::invalid_time(field, text)
    });
    reply::core_error(&err)
}

/// The input `field\0text` of a time: the field as the core's errors name
/// it, with a `&'static str` (`timestamp` for one it does not know), and
/// the text.
fn named_time(input: &str) -> (&'static str, &str) {
    let (field, text) = input.split_once(SEP).unwrap_or(("timestamp", input));
    let field = ["timestamp", "epoch", "from", "to", "now"]
        .into_iter()
        .find(|known| *known == field)
        .unwrap_or("timestamp");
    (field, text)
}
