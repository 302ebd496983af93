//! The functions the module exports. Each takes integers, reads text from
//! the input buffer where it needs some, calls the core or the masking
//! crate, and leaves its answer in the output buffer or the table of numbers
//! (see the crate's `# Design`). IDs cross as `i64` and are the same 64 bits
//! as the core's `u64`.
//!
//! `#[unsafe(no_mangle)]` is the only unsafe attribute here: it keeps each
//! function's name for the glue, and each name is unique to this crate.
#![allow(unsafe_code)]

use serde::Serialize;
use snowflake::{Generator, Id, Layout, Readings, TextForm, UnixMillis};
use snowflake_mask::{MaskKey, Masker};

use crate::clock::JsClock;
use crate::registry::{GENERATORS, LAYOUTS, MASKERS, PRESETS};
use crate::reply::{self, DONE};

/// The separator between the parts of a text input (a spec, its epoch and
/// tick; a field's name and its value), which no part can hold usefully.
const SEP: char = '\0';

/// Bit 0 of `sf_layout_new`'s `given`: an epoch follows the spec.
const EPOCH_GIVEN: i32 = 1;
/// Bit 1: a tick follows.
const TICK_GIVEN: i32 = 2;

/// Makes the input buffer `len` bytes long and returns its address, where
/// the glue writes the text of the next call.
#[unsafe(no_mangle)]
pub extern "C" fn sf_input(len: usize) -> usize {
    reply::input_buffer(len)
}

/// Where the output of the last call starts.
#[unsafe(no_mangle)]
pub extern "C" fn sf_out_ptr() -> usize {
    reply::output_ptr()
}

/// How many bytes of output the last call left.
#[unsafe(no_mangle)]
pub extern "C" fn sf_out_len() -> usize {
    reply::output_len()
}

/// Where the table of numbers starts: `reply::NUMS` slots of 64 bits.
#[unsafe(no_mangle)]
pub extern "C" fn sf_nums_ptr() -> usize {
    reply::numbers_ptr()
}

/// Where the table of doubles starts, beside the numbers: the same values
/// where a call says so, for JavaScript to read without a `BigInt`.
#[unsafe(no_mangle)]
pub extern "C" fn sf_doubles_ptr() -> usize {
    reply::doubles_ptr()
}

/// The tables the page and the package read their lists from, as JSON:
/// the presets (the core's JSON of each layout, with its platform), the
/// text forms, the slack readings allow, the narrowest layout masking
/// takes, a key's length, and the names of the segments that are no field.
#[unsafe(no_mangle)]
pub extern "C" fn sf_tables() -> i32 {
    #[derive(Serialize)]
    struct Form {
        name: &'static str,
        width: Option<usize>,
        allowed: &'static str,
    }
    #[derive(Serialize)]
    struct Tables<'a> {
        presets: Vec<Described<'a>>,
        text_forms: Vec<Form>,
        /// The forms a breakdown lists under `text`, beside its decimal `id`.
        breakdown_forms: Vec<&'static str>,
        future_slack_ms: i64,
        mask_min_bits: u8,
        key_hex_len: usize,
        key_bits: usize,
        segments: Segments,
    }
    /// The names a breakdown's segments have besides the fields'.
    #[derive(Serialize)]
    struct Segments {
        time: &'static str,
        sign: &'static str,
        unused: &'static str,
    }
    PRESETS.with(|presets| {
        reply::json(&Tables {
            presets: presets.iter().map(Described::new).collect(),
            text_forms: TextForm::ALL
                .iter()
                .map(|&form| Form {
                    name: form.name(),
                    width: form.fixed_width(),
                    allowed: form.allowed(),
                })
                .collect(),
            breakdown_forms: TextForm::ENCODED.iter().map(|form| form.name()).collect(),
            future_slack_ms: Readings::FUTURE_SLACK_MS,
            mask_min_bits: Masker::MIN_BITS,
            key_hex_len: MaskKey::HEX_LEN,
            key_bits: MaskKey::BITS,
            segments: Segments {
                time: Layout::TIME_FIELD,
                sign: Layout::SIGN_FIELD,
                unused: Layout::UNUSED_FIELD,
            },
        })
    });
    DONE
}

/// A layout as the glue reads it: the core's JSON of it (as `GET
/// /api/v1/layouts` writes it) and its platform, for a preset read as it is.
#[derive(Serialize)]
struct Described<'a> {
    #[serde(flatten)]
    layout: &'a Layout,
    platform: Option<Platform>,
}

#[derive(Serialize)]
struct Platform {
    name: &'static str,
    launched_ms: i64,
    launched: String,
}

impl<'a> Described<'a> {
    fn new(layout: &'a Layout) -> Self {
        Described {
            layout,
            platform: layout.platform().map(|p| Platform {
                name: p.name(),
                launched_ms: p.launched_ms(),
                launched: UnixMillis(p.launched_ms()).to_string(),
            }),
        }
    }
}

/// A layout from the input, `spec` or `spec\0epoch\0tick` as `given` says
/// (bit 0 an epoch, bit 1 a tick), read as the command reads `--layout`,
/// `--epoch` (Unix milliseconds) and `--tick-ms`. Returns its handle and
/// leaves its JSON in the output, and in the numbers, exactly, its epoch,
/// tick, last millisecond and largest ID, then each field's largest value
/// and shift, most significant first.
#[unsafe(no_mangle)]
pub extern "C" fn sf_layout_new(given: i32) -> i32 {
    let parsed = reply::with_input(|input| {
        let mut parts = input.split(SEP);
        let spec = parts.next().unwrap_or_default();
        let epoch = (given & EPOCH_GIVEN != 0).then(|| parts.next().unwrap_or_default());
        let tick = (given & TICK_GIVEN != 0).then(|| parts.next().unwrap_or_default());
        resolve_layout(spec, epoch, tick)
    });
    let layout = match parsed {
        Ok(layout) => layout,
        Err(err) => return reply::core_error(&err),
    };
    reply::json(&Described::new(&layout));
    let head = [
        layout.epoch_ms() as u64,
        layout.tick_ms(),
        layout.last_timestamp_ms() as u64,
        layout.max_id().get(),
    ];
    let fields = layout
        .fields()
        .iter()
        .flat_map(|f| [f.max(), u64::from(f.shift())]);
    reply::numbers(head.into_iter().chain(fields));
    keep_layout(layout)
}

/// As `snowflake_io::resolve_layout`, which the command and the API call,
/// but for an epoch in Unix milliseconds only: that crate reads dates with
/// `jiff`, whose time zone database would outweigh this module, and the
/// glue turns a `Date` into milliseconds itself. The words of each error
/// are the same.
fn resolve_layout(
    spec: &str,
    epoch: Option<&str>,
    tick: Option<&str>,
) -> Result<Layout, snowflake::Error> {
    let mut layout = Layout::parse(spec)?;
    if let Some(epoch) = epoch {
        let ms = epoch
            .trim()
            .parse::<i64>()
            .map_err(|_| snowflake::Error::invalid_time("epoch", epoch.trim()))?;
        layout = layout.with_epoch_ms(ms)?;
    }
    if let Some(tick) = tick {
        let ms = tick.trim().parse::<u64>().map_err(|_| {
            snowflake::Error::invalid_value(
                "tick_ms",
                tick,
                "a tick is a whole number of milliseconds, at least 1",
            )
        })?;
        layout = layout.with_tick_ms(ms)?;
    }
    Ok(layout)
}

fn keep_layout(layout: Layout) -> i32 {
    LAYOUTS
        .with(|layouts| layouts.borrow_mut().insert(layout))
        .unwrap_or_else(|| reply::stale("layout"))
}

/// Frees a layout.
#[unsafe(no_mangle)]
pub extern "C" fn sf_layout_free(layout: i32) {
    LAYOUTS.with(|layouts| layouts.borrow_mut().remove(layout));
}

/// Runs `f` on the layout `handle` names.
fn with_layout(handle: i32, f: impl FnOnce(&Layout) -> i32) -> i32 {
    LAYOUTS.with(|layouts| match layouts.borrow().get(handle) {
        Some(layout) => f(layout),
        None => reply::stale("layout"),
    })
}

/// Decodes `id`: the numbers are its Unix milliseconds (as `i64` bits), its
/// time units, then each field's value, most significant first; the doubles
/// hold the same.
#[unsafe(no_mangle)]
pub extern "C" fn sf_decode(layout: i32, id: i64) -> i32 {
    with_layout(layout, |layout| match layout.decode(Id::new(id as u64)) {
        Ok(decoded) => {
            let ms = decoded.timestamp_ms();
            let units = decoded.time_units();
            let head = [(ms as u64, ms as f64), (units, units as f64)];
            let fields = decoded.fields().map(|(_, v)| (v, v as f64));
            reply::numbers_and_doubles(head.into_iter().chain(fields));
            DONE
        }
        Err(err) => reply::core_error(&err),
    })
}

/// Decodes `id` into the output as the core's JSON breakdown, the API's
/// shape: `{"id","layout","timestamp_ms","time","fields","binary",
/// "segments","text"}`.
#[unsafe(no_mangle)]
pub extern "C" fn sf_breakdown(layout: i32, id: i64) -> i32 {
    with_layout(layout, |layout| match layout.decode(Id::new(id as u64)) {
        Ok(decoded) => {
            reply::json(&decoded);
            DONE
        }
        Err(err) => reply::core_error(&err),
    })
}

/// Composes an ID from `timestamp_ms` and the fields in the input, written
/// `name\0value\0name\0value…` (empty for none), each value read and checked
/// as the command reads `--field name=value`. The ID is the first number.
#[unsafe(no_mangle)]
pub extern "C" fn sf_compose(layout: i32, timestamp_ms: i64) -> i32 {
    with_layout(layout, |layout| {
        let composed = reply::with_input(|input| {
            let values = field_values(layout, input)?;
            let pairs: Vec<(&str, u64)> = values.iter().map(|(n, v)| (*n, *v)).collect();
            layout.compose(timestamp_ms, &pairs)
        });
        match composed {
            Ok(id) => {
                reply::numbers([id.get()]);
                DONE
            }
            Err(err) => reply::core_error(&err),
        }
    })
}

/// Composes an ID from `timestamp_ms` and `count` fields given by their
/// place in the layout: the numbers hold `place, value` pairs in the order
/// the caller gave them, which is the order the core checks them in. The
/// ID is the first number. The glue comes here for values it holds as whole
/// numbers, and to `sf_compose` for text, which the core reads.
#[unsafe(no_mangle)]
pub extern "C" fn sf_compose_values(layout: i32, timestamp_ms: i64, count: usize) -> i32 {
    let pairs =
        reply::read_numbers(|nums| Pairs::gather(count, |i| (nums[2 * i], nums[2 * i + 1])));
    compose_placed(layout, timestamp_ms, pairs)
}

/// As `sf_compose_values`, for a time and values that JavaScript holds as
/// Numbers: the pairs are in the doubles, and every one is a whole number
/// below 2^53, which the glue checked, so each converts exactly.
#[unsafe(no_mangle)]
pub extern "C" fn sf_compose_doubles(layout: i32, timestamp_ms: f64, count: usize) -> i32 {
    let pairs = reply::read_doubles(|doubles| {
        Pairs::gather(count, |i| {
            (doubles[2 * i] as u64, doubles[2 * i + 1] as u64)
        })
    });
    compose_placed(layout, timestamp_ms as i64, pairs)
}

/// The (place, value) pairs of one compose, copied out of the tables before
/// the core runs (the answer goes back into them): a few, the usual case,
/// on the stack.
enum Pairs {
    Few([(usize, u64); 8], usize),
    Many(Vec<(usize, u64)>),
}

impl Pairs {
    /// The first `count` pairs `pair` gives, or `None` for more than the
    /// tables hold. A place past any layout's fields stays one, for the core
    /// to refuse.
    fn gather(count: usize, pair: impl Fn(usize) -> (u64, u64)) -> Option<Pairs> {
        if count > reply::NUMS / 2 {
            return None;
        }
        let placed = |i| {
            let (place, value) = pair(i);
            (usize::try_from(place).unwrap_or(usize::MAX), value)
        };
        let mut few = [(0, 0); 8];
        if count > few.len() {
            return Some(Pairs::Many((0..count).map(placed).collect()));
        }
        for (i, slot) in few.iter_mut().enumerate().take(count) {
            *slot = placed(i);
        }
        Some(Pairs::Few(few, count))
    }

    fn as_slice(&self) -> &[(usize, u64)] {
        match self {
            Pairs::Few(few, count) => &few[..*count],
            Pairs::Many(many) => many,
        }
    }
}

/// Composes with the fields given by place, in the order given, through
/// the core's checked compose by place.
fn compose_placed(layout: i32, timestamp_ms: i64, pairs: Option<Pairs>) -> i32 {
    let Some(pairs) = pairs else {
        return reply::stale("field");
    };
    with_layout(layout, |layout| {
        match layout.compose_placed(timestamp_ms, pairs.as_slice()) {
            Ok(id) => {
                reply::numbers([id.get()]);
                DONE
            }
            Err(err) => reply::core_error(&err),
        }
    })
}

/// `name\0value…` read as `snowflake_io::parse_fields` reads the command's
/// fields: each value by the layout's one field-value parser.
fn field_values<'a>(
    layout: &Layout,
    input: &'a str,
) -> Result<Vec<(&'a str, u64)>, snowflake::Error> {
    if input.is_empty() {
        return Ok(Vec::new());
    }
    let mut parts = input.split(SEP);
    let mut values = Vec::new();
    while let Some(name) = parts.next() {
        let text = parts.next().unwrap_or_default();
        values.push((name, layout.parse_value(name, text)?));
    }
    Ok(values)
}

/// The ID read under every preset, judged against `now_ms`, into the output
/// as the core's JSON (the API's `?layout=all`).
#[unsafe(no_mangle)]
pub extern "C" fn sf_readings(id: i64, now_ms: i64) -> i32 {
    PRESETS.with(|presets| reply::json(&Readings::new(presets, Id::new(id as u64), now_ms)));
    DONE
}

/// The first and last ID of the window from `from_ms` to `to_ms`, both
/// inclusive: the first two numbers, and the core's JSON in the output.
#[unsafe(no_mangle)]
pub extern "C" fn sf_bounds(layout: i32, from_ms: i64, to_ms: i64) -> i32 {
    with_layout(layout, |layout| match layout.bounds(from_ms, to_ms) {
        Ok(bounds) => {
            reply::json(&bounds);
            reply::numbers([bounds.first().get(), bounds.last().get()]);
            DONE
        }
        Err(err) => reply::core_error(&err),
    })
}

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
    match parsed {
        Ok(id) => {
            reply::numbers([id.get()]);
            DONE
        }
        Err(err) => reply::core_error(&err),
    }
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

/// The value of the field the input names, `name\0text`, read by the
/// layout's one field-value parser: the first number.
#[unsafe(no_mangle)]
pub extern "C" fn sf_parse_value(layout: i32) -> i32 {
    with_layout(layout, |layout| {
        let parsed = reply::with_input(|input| {
            let (name, text) = input.split_once(SEP).unwrap_or((input, ""));
            layout.parse_value(name, text)
        });
        match parsed {
            Ok(value) => {
                reply::numbers([value]);
                DONE
            }
            Err(err) => reply::core_error(&err),
        }
    })
}

/// The layout's time units at `timestamp_ms`, the first number; or the
/// core's error for a time before its epoch or past its last.
#[unsafe(no_mangle)]
pub extern "C" fn sf_time_units(layout: i32, timestamp_ms: i64) -> i32 {
    with_layout(layout, |layout| match layout.time_units(timestamp_ms) {
        Ok(units) => {
            reply::numbers([units]);
            DONE
        }
        Err(err) => reply::core_error(&err),
    })
}

/// `ms` as the core writes a time: RFC 3339 in UTC with milliseconds, and
/// ISO 8601's expanded year outside 0 to 9999; into the output.
#[unsafe(no_mangle)]
pub extern "C" fn sf_time(ms: i64) -> i32 {
    let mut buf = [0u8; UnixMillis::MAX_LEN];
    reply::text(UnixMillis(ms).to_rfc3339(&mut buf));
    DONE
}

/// The core's error for a time that could not be read: the input is
/// `field\0text`. Always fails, leaving the error in the output.
#[unsafe(no_mangle)]
pub extern "C" fn sf_not_a_time() -> i32 {
    let err = reply::with_input(|input| {
        let (field, text) = input.split_once(SEP).unwrap_or(("timestamp", input));
        snowflake::Error::invalid_time(time_field(field), text)
    });
    reply::core_error(&err)
}

/// The core's errors name a time's field with a `&'static str`.
fn time_field(field: &str) -> &'static str {
    ["timestamp", "epoch", "from", "to", "now"]
        .into_iter()
        .find(|known| *known == field)
        .unwrap_or("timestamp")
}

/// A masker for the layout under the key whose text is the input (64
/// hexadecimal characters, as a key file holds it). Returns its handle.
#[unsafe(no_mangle)]
pub extern "C" fn sf_masker_new(layout: i32) -> i32 {
    let key = reply::with_input(MaskKey::from_hex);
    let key = match key {
        Ok(key) => key,
        Err(err) => return reply::mask_error(&err, "key"),
    };
    with_layout(layout, |layout| match Masker::new(layout, &key) {
        Ok(masker) => MASKERS
            .with(|maskers| maskers.borrow_mut().insert(masker))
            .unwrap_or_else(|| reply::stale("masker")),
        Err(err) => reply::mask_error(&err, "layout"),
    })
}

/// Whether the layout can be masked at all (FF1 needs 20 bits), checked by
/// the masking crate itself, so that a page can say so beside the layout
/// while it says what is wrong with the key beside the key.
#[unsafe(no_mangle)]
pub extern "C" fn sf_masker_check(layout: i32) -> i32 {
    with_layout(layout, |layout| {
        match Masker::new(layout, &MaskKey::from_bytes([0; MaskKey::BYTES])) {
            Ok(_) => DONE,
            Err(err) => reply::mask_error(&err, "layout"),
        }
    })
}

/// Frees a masker, and with it the key's schedule, which the masking crate
/// wipes.
#[unsafe(no_mangle)]
pub extern "C" fn sf_masker_free(masker: i32) {
    MASKERS.with(|maskers| maskers.borrow_mut().remove(masker));
}

fn with_masker(
    handle: i32,
    id: i64,
    f: impl FnOnce(&Masker, Id) -> Result<Id, snowflake::Error>,
) -> i32 {
    MASKERS.with(|maskers| match maskers.borrow().get(handle) {
        Some(masker) => match f(masker, Id::new(id as u64)) {
            Ok(out) => {
                reply::numbers([out.get()]);
                DONE
            }
            Err(err) => reply::core_error(&err),
        },
        None => reply::stale("masker"),
    })
}

/// The masked form of `id`: the first number.
#[unsafe(no_mangle)]
pub extern "C" fn sf_mask(masker: i32, id: i64) -> i32 {
    with_masker(masker, id, |masker, id| masker.mask(id))
}

/// The ID `masked` hides: the first number.
#[unsafe(no_mangle)]
pub extern "C" fn sf_unmask(masker: i32, masked: i64) -> i32 {
    with_masker(masker, masked, |masker, id| masker.unmask(id))
}

/// The core's generator for the layout, on the JavaScript clock `clock`
/// (0 `Date.now()`, 1 `performance`), for the node whose fields the input
/// holds as `name\0value…` (fields left out are 0). `tolerance_ms` below 0
/// keeps the core's default. Returns its handle.
#[unsafe(no_mangle)]
pub extern "C" fn sf_generator_new(layout: i32, clock: u32, tolerance_ms: i64) -> i32 {
    let Some(clock) = JsClock::new(clock) else {
        return reply::stale("clock");
    };
    with_layout(layout, |layout| {
        let built = reply::with_input(|input| {
            let node = field_values(layout, input)?;
            let mut builder = Generator::builder(layout.clone()).node(&node).clock(clock);
            if let Ok(tolerance) = u64::try_from(tolerance_ms) {
                builder = builder.tolerance_ms(tolerance);
            }
            builder.build()
        });
        match built {
            Ok(generator) => GENERATORS
                .with(|generators| generators.borrow_mut().insert(generator))
                .unwrap_or_else(|| reply::stale("generator")),
            Err(err) => reply::core_error(&err),
        }
    })
}

/// Frees a generator.
#[unsafe(no_mangle)]
pub extern "C" fn sf_generator_free(generator: i32) {
    GENERATORS.with(|generators| generators.borrow_mut().remove(generator));
}

/// The generator's next ID, the first number; or the core's refusal: a
/// clock behind by more than the tolerance, a time field used up.
#[unsafe(no_mangle)]
pub extern "C" fn sf_generator_next(generator: i32) -> i32 {
    GENERATORS.with(|generators| match generators.borrow().get(generator) {
        Some(generator) => match generator.next_id() {
            Ok(id) => {
                reply::numbers([id.get()]);
                DONE
            }
            Err(err) => reply::core_error(&err),
        },
        None => reply::stale("generator"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::FAILED;

    fn output() -> String {
        crate::reply::output_text()
    }

    fn write_input(text: &str) {
        crate::reply::fill_input(text);
    }

    fn number(at: usize) -> u64 {
        crate::reply::number(at)
    }

    #[test]
    fn a_layout_with_epoch_and_tick_as_the_command_reads_them() {
        write_input("time:29,worker:21,sequence:13\u{0}1474300800000\u{0}1000");
        let handle = sf_layout_new(EPOCH_GIVEN | TICK_GIVEN);
        assert!(handle >= 0, "{}", output());
        let json: serde_json::Value = serde_json::from_str(&output()).unwrap();
        assert_eq!(json["tick_ms"], 1000);
        assert_eq!(json["epoch_ms"], 1474300800000_i64);

        write_input("twitter\0x");
        assert_eq!(sf_layout_new(TICK_GIVEN), FAILED);
        let err: serde_json::Value = serde_json::from_str(&output()).unwrap();
        assert_eq!(err["kind"], "InvalidInput");
        assert_eq!(err["field"], "tick_ms");
        assert_eq!(
            err["message"],
            "tick_ms x is not allowed; a tick is a whole number of milliseconds, at least 1"
        );
        sf_layout_free(handle);
    }

    #[test]
    fn compose_checks_each_field_and_decode_gives_them_back() {
        write_input("twitter");
        let twitter = sf_layout_new(0);
        write_input("datacenter\x001\0machine\x001\0sequence\x000");
        assert_eq!(sf_compose(twitter, 1288834975657), DONE);
        assert_eq!(number(0), 4194439168);

        assert_eq!(sf_decode(twitter, 4194439168), DONE);
        assert_eq!(
            (0..5).map(number).collect::<Vec<_>>(),
            [1288834975657, 1000, 1, 1, 0]
        );

        write_input("machine\x0032");
        assert_eq!(sf_compose(twitter, 1288834975657), FAILED);
        let err: serde_json::Value = serde_json::from_str(&output()).unwrap();
        assert_eq!(err["field"], "machine");
        assert_eq!(
            err["message"],
            "machine 32 is out of range: 0 to 31 (5 bits)"
        );
        sf_layout_free(twitter);
        assert_eq!(sf_decode(twitter, 1), FAILED);
    }

    #[test]
    fn compose_by_place_from_either_table_is_the_core_s_compose() {
        write_input("discord");
        let discord = sf_layout_new(0);
        let want = 175928847299117063;
        // worker (place 0) = 1, increment (place 2) = 7.
        crate::reply::fill_numbers(&[0, 1, 2, 7]);
        assert_eq!(
            sf_compose_values(discord, 1462015105796, 2),
            DONE,
            "{}",
            output()
        );
        assert_eq!(number(0), want);
        crate::reply::fill_doubles(&[0.0, 1.0, 2.0, 7.0]);
        assert_eq!(
            sf_compose_doubles(discord, 1462015105796.0, 2),
            DONE,
            "{}",
            output()
        );
        assert_eq!(number(0), want);
        // Ten fields and more go through the heap: the same checks.
        let many: Vec<u64> = (0..10).flat_map(|_| [0, 1]).collect();
        crate::reply::fill_numbers(&many);
        assert_eq!(sf_compose_values(discord, 1462015105796, 10), FAILED);
        assert!(
            output().contains("worker is given more than once"),
            "{}",
            output()
        );
        crate::reply::fill_numbers(&[0, 32]);
        assert_eq!(sf_compose_values(discord, 1462015105796, 1), FAILED);
        assert!(
            output().contains("worker 32 is out of range"),
            "{}",
            output()
        );
        crate::reply::fill_numbers(&[3, 0]);
        assert_eq!(sf_compose_values(discord, 1462015105796, 1), FAILED);
        assert_eq!(sf_compose_values(discord, 1462015105796, 1000), FAILED);
        sf_layout_free(discord);
    }

    #[test]
    fn text_forms_both_ways_by_their_index_in_the_list() {
        let base62 = TextForm::ALL
            .iter()
            .position(|f| *f == TextForm::Base62)
            .unwrap() as i32;
        sf_to_text(base62, 175928847299117063);
        assert_eq!(output(), "0Czks0tP37X");
        write_input("0Czks0tP37X");
        assert_eq!(sf_from_text(base62), DONE);
        assert_eq!(number(0), 175928847299117063);
        write_input("0x10");
        assert_eq!(sf_from_text(-1), DONE);
        assert_eq!(number(0), 16);
    }

    #[test]
    fn a_key_with_a_bad_character_is_blamed_on_the_key() {
        write_input("twitter");
        let twitter = sf_layout_new(0);
        write_input(&format!("{}zz", "ab".repeat(31)));
        assert_eq!(sf_masker_new(twitter), FAILED);
        let err: serde_json::Value = serde_json::from_str(&output()).unwrap();
        assert_eq!(err["field"], "key");
        assert!(!output().contains("abab"), "the key's text is never shown");
        sf_layout_free(twitter);
    }
}
