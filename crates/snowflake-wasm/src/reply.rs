//! The buffers values cross in, and the shape an error crosses out in.
//!
//! One input buffer (text in), one output buffer (text out, JSON or an ID in
//! a text form) and one table of 64-bit numbers. Their addresses are what
//! the glue reads and writes; the module is single-threaded, so one of each
//! serves every call.

use std::cell::RefCell;

use serde::Serialize;

/// Slots in the table of numbers: a layout's four times and limits and two
/// numbers for each of its fields, and a layout has at most 63 fields.
pub const NUMS: usize = 4 + 2 * 63;

thread_local! {
    static INPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static OUTPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static NUMBERS: RefCell<[u64; NUMS]> = const { RefCell::new([0; NUMS]) };
    static DOUBLES: RefCell<[f64; NUMS]> = const { RefCell::new([0.0; NUMS]) };
}

/// Makes the input buffer `len` bytes long and returns where it starts.
pub fn input_buffer(len: usize) -> usize {
    INPUT.with(|input| {
        let mut input = input.borrow_mut();
        input.clear();
        input.resize(len, 0);
        input.as_mut_ptr() as usize
    })
}

/// Runs `f` on the text the glue wrote into the input buffer. The glue
/// writes it with `TextEncoder`, which always gives UTF-8; anything else is
/// read with replacement characters, which every parser then refuses.
pub fn with_input<T>(f: impl FnOnce(&str) -> T) -> T {
    INPUT.with(|input| {
        let input = input.borrow();
        f(&String::from_utf8_lossy(&input))
    })
}

pub fn output_ptr() -> usize {
    OUTPUT.with(|out| out.borrow().as_ptr() as usize)
}

pub fn output_len() -> usize {
    OUTPUT.with(|out| out.borrow().len())
}

pub fn numbers_ptr() -> usize {
    NUMBERS.with(|nums| nums.as_ptr() as usize)
}

pub fn doubles_ptr() -> usize {
    DOUBLES.with(|nums| nums.as_ptr() as usize)
}

/// Reads the doubles the glue wrote, from the first slot on.
pub fn read_doubles<T>(f: impl FnOnce(&[f64; NUMS]) -> T) -> T {
    DOUBLES.with(|doubles| f(&doubles.borrow()))
}

/// Reads the numbers the glue wrote, from the first slot on.
pub fn read_numbers<T>(f: impl FnOnce(&[u64; NUMS]) -> T) -> T {
    NUMBERS.with(|nums| f(&nums.borrow()))
}

/// Sets the numbers and, beside them, the same values as doubles, which
/// JavaScript reads without making a `BigInt` of each: exact for values up
/// to 2^53, and a value the glue takes as a double only when it is.
pub fn numbers_and_doubles(values: impl IntoIterator<Item = (u64, f64)>) {
    NUMBERS.with(|nums| {
        DOUBLES.with(|doubles| {
            let mut nums = nums.borrow_mut();
            let mut doubles = doubles.borrow_mut();
            for ((slot, double), (value, as_double)) in
                nums.iter_mut().zip(doubles.iter_mut()).zip(values)
            {
                *slot = value;
                *double = as_double;
            }
        })
    });
}

/// Sets the numbers from the first slot on.
pub fn numbers(values: impl IntoIterator<Item = u64>) {
    NUMBERS.with(|nums| {
        let mut nums = nums.borrow_mut();
        for (slot, value) in nums.iter_mut().zip(values) {
            *slot = value;
        }
    });
}

/// Replaces the output with `text`.
pub fn text(text: &str) {
    OUTPUT.with(|out| {
        let mut out = out.borrow_mut();
        out.clear();
        out.extend_from_slice(text.as_bytes());
    });
}

/// Replaces the output with `value` as JSON.
pub fn json(value: &impl Serialize) {
    OUTPUT.with(|out| {
        let mut out = out.borrow_mut();
        out.clear();
        if let Err(err) = serde_json::to_writer(&mut *out, value) {
            // The core's values serialise to plain JSON with string keys;
            // a failure would be a bug, and the glue shows it as one.
            out.clear();
            out.extend_from_slice(err.to_string().as_bytes());
        }
    });
}

/// An error as the glue reads it: `kind` is the error's class as its crate
/// names it (`InvalidInput`, `ClockBackwards`, `TimeExhausted`, …), `field`
/// the input at fault where there is one, `message` its words.
#[derive(Serialize)]
struct Problem<'a> {
    kind: String,
    field: Option<&'a str>,
    message: String,
}

/// Writes a core error into the output and returns the failure status.
pub fn core_error(err: &snowflake::Error) -> i32 {
    json(&Problem {
        kind: format!("{:?}", err.kind()),
        field: err.field(),
        message: err.to_string(),
    });
    FAILED
}

/// The status of a call that answers one number: the number in the first
/// slot, or the core's error in the output.
pub fn number_or_error(result: Result<u64, snowflake::Error>) -> i32 {
    match result {
        Ok(value) => {
            numbers([value]);
            DONE
        }
        Err(err) => core_error(&err),
    }
}

/// Writes a masking error into the output, blaming `field`: the masking
/// crate's errors name no field, but each call site can fail on one input
/// only (the key's text, or the layout's width).
pub fn mask_error(err: &snowflake_mask::Error, field: &str) -> i32 {
    json(&Problem {
        kind: format!("{:?}", err.kind()),
        field: Some(field),
        message: err.to_string(),
    });
    FAILED
}

/// What a call returns when it fails; the output then holds the error.
pub const FAILED: i32 = -1;

/// What a call that returns no handle returns when it worked.
pub const DONE: i32 = 0;

/// A handle the glue holds that names nothing: a bug in the glue, reported
/// as an error rather than a trap.
pub fn stale(what: &str) -> i32 {
    json(&Problem {
        kind: "InvalidInput".to_string(),
        field: Some(what),
        message: format!("this {what} was freed or never made"),
    });
    FAILED
}

/// What the glue does on the other side, for the tests on the host.
#[cfg(test)]
pub fn fill_input(text: &str) {
    INPUT.with(|input| *input.borrow_mut() = text.as_bytes().to_vec());
}

#[cfg(test)]
pub fn output_text() -> String {
    OUTPUT.with(|out| String::from_utf8(out.borrow().clone()).unwrap())
}

#[cfg(test)]
pub fn number(at: usize) -> u64 {
    NUMBERS.with(|nums| nums.borrow()[at])
}

#[cfg(test)]
pub fn fill_numbers(values: &[u64]) {
    NUMBERS.with(|nums| nums.borrow_mut()[..values.len()].copy_from_slice(values));
}

#[cfg(test)]
pub fn fill_doubles(values: &[f64]) {
    DOUBLES.with(|doubles| doubles.borrow_mut()[..values.len()].copy_from_slice(values));
}
