//! What the read functions compute, as plain Rust over the core and
//! `snowflake-io`: each takes the values the server passed and returns the
//! result or the message of the SQL error to raise. Nothing here knows the
//! C interface, so the tests call it directly.

use snowflake::{Id, Layout, TextForm, UnixMillis};
use snowflake_io::{parse_fields, parse_time, split_fields};

use crate::abi::Value;

/// What a function answered: an integer, or text.
#[derive(Debug, PartialEq)]
pub enum Answer {
    Int(i64),
    Text(String),
}

/// The read functions, each with the arguments it takes before the layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    TimestampMs,
    Time,
    Field,
    Decode,
    Compose,
    MinId,
    MaxId,
    ToText,
    FromText,
}

/// How the server should pass an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An ID: as a 64-bit integer (a BIGINT UNSIGNED above 2^63 keeps its bits).
    Id,
    /// A time, a name, fields, a form, text: as a string.
    Text,
}

impl Read {
    /// The SQL name.
    pub const fn name(self) -> &'static str {
        match self {
            Read::TimestampMs => "snowflake_timestamp_ms",
            Read::Time => "snowflake_time",
            Read::Field => "snowflake_field",
            Read::Decode => "snowflake_decode",
            Read::Compose => "snowflake_compose",
            Read::MinId => "snowflake_min_id",
            Read::MaxId => "snowflake_max_id",
            Read::ToText => "snowflake_to_text",
            Read::FromText => "snowflake_from_text",
        }
    }

    /// The arguments before the optional layout, as the usage shows them.
    const fn params(self) -> &'static [(&'static str, Kind)] {
        match self {
            Read::TimestampMs | Read::Time | Read::Decode => &[("id", Kind::Id)],
            Read::Field => &[("id", Kind::Id), ("field", Kind::Text)],
            Read::Compose => &[("time", Kind::Text), ("fields", Kind::Text)],
            Read::MinId | Read::MaxId => &[("time", Kind::Text)],
            Read::ToText => &[("id", Kind::Id), ("form", Kind::Text)],
            Read::FromText => &[("text", Kind::Text), ("form", Kind::Text)],
        }
    }

    /// Whether the function reads IDs under a layout, given last or
    /// defaulting to `snowflake_layout`.
    const fn takes_layout(self) -> bool {
        !matches!(self, Read::ToText | Read::FromText)
    }

    /// `snowflake_field(id, field [, layout])`.
    pub fn usage(self) -> String {
        let params: Vec<&str> = self.params().iter().map(|(name, _)| *name).collect();
        let layout = if self.takes_layout() {
            " [, layout]"
        } else {
            ""
        };
        format!("{}({}{layout})", self.name(), params.join(", "))
    }

    /// How each of `count` arguments is to be passed, or why that many is wrong.
    pub fn kinds(self, count: usize) -> Result<Vec<Kind>, String> {
        let fixed = self.params().len();
        let most = fixed + usize::from(self.takes_layout());
        if count < fixed || count > most {
            return Err(format!(
                "{} takes {}; it was given {count} argument{}",
                self.name(),
                self.usage(),
                if count == 1 { "" } else { "s" }
            ));
        }
        let mut kinds: Vec<Kind> = self.params().iter().map(|(_, kind)| *kind).collect();
        kinds.resize(count, Kind::Text);
        Ok(kinds)
    }

    /// Whether the result is a string.
    pub const fn returns_text(self) -> bool {
        matches!(self, Read::Time | Read::Decode | Read::ToText)
    }

    /// The answer for these arguments (all present: NULL in gives NULL out,
    /// before this is called) under `layout`.
    pub fn answer(self, args: &[Value<'_>], layout: &Layout) -> Result<Answer, String> {
        self.compute(args, layout)
            .map_err(|Why(err)| format!("{}: {err}", self.name()))
    }

    fn compute(self, args: &[Value<'_>], layout: &Layout) -> Result<Answer, Why> {
        let arg = |i: usize| args[i];
        Ok(match self {
            Read::TimestampMs => Answer::Int(layout.decode(id(arg(0)))?.timestamp_ms()),
            Read::Time => Answer::Text(datetime(layout.decode(id(arg(0)))?.time())),
            Read::Field => {
                let name = text(arg(1), "field")?;
                let decoded = layout.decode(id(arg(0)))?;
                let value = decoded.field(name).ok_or_else(|| {
                    let known: Vec<&str> = layout.fields().iter().map(|f| f.name()).collect();
                    format!(
                        "layout {} has no field {name:?}; its fields are {}",
                        layout.name(),
                        known.join(", ")
                    )
                })?;
                Answer::Int(value as i64)
            }
            Read::Decode => Answer::Text(
                serde_json::to_string(&layout.decode(id(arg(0)))?)
                    .map_err(|err| err.to_string())?,
            ),
            Read::Compose => {
                let ms = time(arg(0))?;
                let fields = text(arg(1), "fields")?;
                let values = parse_fields(layout, &split_fields(fields))?;
                signed(layout.compose(ms, &values)?)?
            }
            Read::MinId => signed(layout.bounds(time(arg(0))?, time(arg(0))?)?.first())?,
            Read::MaxId => signed(layout.bounds(time(arg(0))?, time(arg(0))?)?.last())?,
            Read::ToText => Answer::Text(id(arg(0)).to_text(form(arg(1))?)),
            Read::FromText => signed(form(arg(1))?.parse(text(arg(0), "text")?)?)?,
        })
    }
}

/// Why a function failed: the core's message, or one of this crate's.
struct Why(String);

impl From<snowflake::Error> for Why {
    fn from(err: snowflake::Error) -> Self {
        Why(err.to_string())
    }
}

impl From<String> for Why {
    fn from(text: String) -> Self {
        Why(text)
    }
}

/// Where the layout is among `count` arguments, when it was given.
pub fn layout_index(read: Read, count: usize) -> Option<usize> {
    (read.takes_layout() && count > read.params().len()).then_some(read.params().len())
}

/// The layout argument's value as a layout.
pub fn layout(read: Read, given: Value<'_>) -> Result<Layout, String> {
    text(given, "layout")
        .and_then(|name| Layout::parse(name).map_err(|err| err.to_string()))
        .map_err(|err| format!("{}: {err}", read.name()))
}

/// The ID an integer argument holds: its 64 bits as they are.
fn id(value: Value<'_>) -> Id {
    match value {
        Value::Int(n) => Id::new(n as u64),
        // Coerced to integers in init; anything else here cannot happen,
        // and maps to an ID no layout accepts rather than to a guess.
        Value::Real | Value::Bytes(_) => Id::new(u64::MAX),
    }
}

fn text<'a>(value: Value<'a>, what: &str) -> Result<&'a str, String> {
    match value {
        Value::Bytes(bytes) => {
            std::str::from_utf8(bytes).map_err(|_| format!("{what} is not UTF-8 text"))
        }
        Value::Int(_) | Value::Real => Err(format!("{what} must be text")),
    }
}

/// An integer MariaDB takes: IDs past 2^63 are refused, not wrapped.
fn signed(id: Id) -> Result<Answer, String> {
    i64::try_from(id.get()).map(Answer::Int).map_err(|_| {
        format!(
            "ID {} is past the largest BIGINT, 9223372036854775807",
            id.get()
        )
    })
}

fn form(value: Value<'_>) -> Result<TextForm, String> {
    let name = text(value, "form")?;
    name.parse::<TextForm>().map_err(|err| err.to_string())
}

/// A time as these functions take it: Unix milliseconds, RFC 3339 with a
/// zone, or MariaDB's DATETIME text (`2025-01-01 12:00:00.000`, a date
/// alone too), read as UTC like the plain-SQL functions' DATETIME.
pub fn time(value: Value<'_>) -> Result<i64, String> {
    let text = text(value, "time")?.trim();
    if let Ok(ms) = parse_time("time", text) {
        return Ok(ms);
    }
    let utc = match text.as_bytes().get(10) {
        None if text.len() == 10 => format!("{text}T00:00:00Z"),
        Some(b' ') => format!("{}T{}Z", &text[..10], &text[11..]),
        _ => text.to_string(),
    };
    parse_time("time", &utc).map_err(|err| {
        format!("{err}; a time is Unix milliseconds, RFC 3339 or a DATETIME (read as UTC)")
    })
}

/// A time as DATETIME text in UTC, to the millisecond, which MariaDB turns
/// into a DATETIME(3) where one is wanted.
pub fn datetime(time: UnixMillis) -> String {
    let mut buf = [0u8; UnixMillis::MAX_LEN];
    let rfc3339 = time.to_rfc3339(&mut buf);
    rfc3339.trim_end_matches('Z').replacen('T', " ", 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(n: i64) -> Value<'static> {
        Value::Int(n)
    }

    fn txt(s: &'static str) -> Value<'static> {
        Value::Bytes(s.as_bytes())
    }

    #[test]
    fn arguments_are_counted_against_the_usage() {
        assert_eq!(Read::Field.kinds(2).unwrap(), [Kind::Id, Kind::Text]);
        assert_eq!(Read::Field.kinds(3).unwrap().len(), 3);
        assert_eq!(
            Read::Field.kinds(1).unwrap_err(),
            "snowflake_field takes snowflake_field(id, field [, layout]); it was given 1 argument"
        );
        assert!(Read::ToText.kinds(3).is_err());
    }

    #[test]
    fn times_are_read_in_every_form_the_server_passes() {
        let ms = 1_735_689_600_123;
        for given in [
            "1735689600123",
            "2025-01-01T00:00:00.123Z",
            "2025-01-01 00:00:00.123",
            "2025-01-01T01:00:00.123+01:00",
        ] {
            assert_eq!(time(Value::Bytes(given.as_bytes())), Ok(ms), "{given}");
        }
        assert_eq!(time(txt("2025-01-01")), Ok(1_735_689_600_000));
        let err = time(txt("yesterday")).unwrap_err();
        assert!(err.contains("yesterday"), "{err}");
    }

    #[test]
    fn datetimes_are_written_as_mariadb_reads_them() {
        assert_eq!(
            datetime(UnixMillis(1288834975657)),
            "2010-11-04 01:42:55.657"
        );
    }

    #[test]
    fn ids_past_the_largest_bigint_are_refused_not_wrapped() {
        let err = Read::FromText
            .answer(&[txt("ffffffffffffffff"), txt("hex")], &Layout::twitter())
            .unwrap_err();
        assert!(err.contains("past the largest BIGINT"), "{err}");
    }

    #[test]
    fn errors_name_the_function_and_the_field() {
        let err = Read::Compose
            .answer(
                &[int(0), txt("datacenter=1,machine=32")],
                &Layout::twitter(),
            )
            .unwrap_err();
        assert!(err.starts_with("snowflake_compose: "), "{err}");
        let err = Read::Compose
            .answer(
                &[txt("1288834975657"), txt("machine=32")],
                &Layout::twitter(),
            )
            .unwrap_err();
        assert_eq!(
            err,
            "snowflake_compose: machine 32 is out of range: 0 to 31 (5 bits)"
        );
        let err = Read::Field
            .answer(&[int(0), txt("worker")], &Layout::twitter())
            .unwrap_err();
        assert!(err.contains("no field \"worker\""), "{err}");
    }
}
