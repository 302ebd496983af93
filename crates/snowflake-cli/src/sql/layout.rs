//! The layout as the SQL is written from it: the functions' names (a
//! prefix and the field names) and the numbers they compute with (shifts,
//! masks, epoch and tick), whatever the dialect that spells them.

use snowflake::Layout;

use crate::usage::UsageError;

/// The longest prefix accepted. Each function's whole name is checked too:
/// PostgreSQL allows 63 characters.
pub const MAX_PREFIX: usize = 40;

/// PostgreSQL truncates longer identifiers silently, which could make two
/// functions one; MariaDB allows 64.
pub const MAX_NAME: usize = 63;

/// Names a field may not have, because its function or parameter would be
/// taken: `{prefix}_compose` and the rest, and compose's time parameter `ts`.
/// (`time` is reserved by the core already.)
const CLASHING_FIELDS: [&str; 4] = ["compose", "min_id", "max_id", "ts"];

/// One field below the time field, and the name of its function.
#[derive(Debug)]
pub struct SqlField {
    pub name: String,
    pub bits: u8,
    pub shift: u8,
    pub max: u64,
    /// `{prefix}_{name}`.
    pub function: String,
}

/// Everything the functions need to know about the layout.
#[derive(Debug)]
pub struct SqlLayout {
    pub prefix: String,
    /// The preset's name or the spec, for comments.
    pub name: String,
    pub spec: String,
    pub epoch_ms: i64,
    pub tick_ms: u64,
    pub last_ms: i64,
    /// How many of the 64 bits the layout uses (63 with a sign bit).
    pub width: u8,
    pub time_shift: u8,
    pub time_max: u64,
    pub fields: Vec<SqlField>,
}

impl SqlLayout {
    /// The names and numbers of `layout`'s functions, under `prefix` (by
    /// default the preset's name, or `snowflake`).
    pub fn new(layout: &Layout, prefix: Option<&str>) -> Result<SqlLayout, UsageError> {
        let prefix = match prefix {
            Some(prefix) => {
                check_prefix(prefix)?;
                prefix.to_owned()
            }
            None => default_prefix(layout),
        };
        check_field_names(layout, &prefix)?;
        let fields = layout
            .fields()
            .iter()
            .map(|f| SqlField {
                name: f.name().to_owned(),
                bits: f.bits(),
                shift: f.shift(),
                max: f.max(),
                function: format!("{prefix}_{}", f.name()),
            })
            .collect();
        Ok(SqlLayout {
            name: layout.name().into_owned(),
            spec: layout.spec(),
            epoch_ms: layout.epoch_ms(),
            tick_ms: layout.tick_ms(),
            last_ms: layout.last_timestamp_ms(),
            width: layout.time_shift() + layout.time_bits(),
            time_shift: layout.time_shift(),
            time_max: layout.max_time_units(),
            fields,
            prefix,
        })
    }

    /// `{prefix}_{what}`.
    pub fn name(&self, what: &str) -> String {
        format!("{}_{what}", self.prefix)
    }

    /// The largest valid ID when the layout leaves the top bits zero; `None`
    /// when every bigint is some ID (all 64 bits used).
    pub fn id_max(&self) -> Option<i64> {
        (self.width < 64).then(|| ((1u64 << self.width) - 1) as i64)
    }

    /// The mask of the bits below the time field: `max_id = min_id | low_mask`.
    pub fn low_mask(&self) -> u64 {
        (1u64 << self.time_shift) - 1
    }

    /// The time of the first ID that needs the 64th bit, for 64-bit layouts.
    pub fn first_negative_ms(&self) -> Option<i64> {
        if self.width < 64 {
            return None;
        }
        let units = 1u64 << (63 - self.time_shift);
        let ms = i128::from(self.epoch_ms) + i128::from(units) * i128::from(self.tick_ms);
        // Within the layout's range, which fits in i64.
        Some(ms as i64)
    }

    /// The time units of the Unix milliseconds `ms` (at or after the epoch),
    /// with the dialect's integer division `div`; a negative epoch reads right.
    pub fn units_of(&self, ms: &str, div: &str) -> String {
        let since = match self.epoch_ms {
            0 => ms.to_owned(),
            e if e < 0 => format!("({ms} + {})", e.unsigned_abs()),
            e => format!("({ms} - {e})"),
        };
        match self.tick_ms {
            1 => since,
            tick => format!("({since} {div} {tick})"),
        }
    }

    /// The Unix millisecond at which `units` time units begin.
    pub fn unix_ms_of(&self, units: &str) -> String {
        let mut out = units.to_owned();
        if self.tick_ms != 1 {
            out = format!("{out} * {}", self.tick_ms);
        }
        match self.epoch_ms {
            0 => out,
            e if e < 0 => format!("{out} - {}", e.unsigned_abs()),
            e => format!("{out} + {e}"),
        }
    }

    /// The time units of `_ms`, shifted to their place in an ID.
    pub fn units_shifted(&self, div: &str) -> String {
        shifted(&self.units_of("_ms", div), self.time_shift)
    }

    pub fn field_names(&self) -> Vec<&str> {
        self.fields.iter().map(|f| f.name.as_str()).collect()
    }

    /// `id = (time units << 22) | (datacenter << 17) | ...`'s right side.
    pub fn formula(&self) -> String {
        let mut parts = vec![shifted("time units", self.time_shift)];
        parts.extend(self.fields.iter().map(|f| shifted(&f.name, f.shift)));
        parts.join(" | ")
    }
}

/// The prefix of every function name when none is given: a preset's name,
/// or `snowflake` for a custom layout (a preset with another epoch or tick
/// is a custom layout too: its functions must not pass for the preset's).
pub fn default_prefix(layout: &Layout) -> String {
    match Layout::preset(&layout.name()) {
        Some(preset) if &preset == layout => preset.name().into_owned(),
        _ => String::from("snowflake"),
    }
}

/// Checks a prefix: it is written into SQL unquoted, so only letters, digits
/// and `_`, starting with a letter.
pub fn check_prefix(prefix: &str) -> Result<(), UsageError> {
    let ok = (1..=MAX_PREFIX).contains(&prefix.len())
        && prefix.starts_with(|c: char| c.is_ascii_alphabetic())
        && prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        return Ok(());
    }
    Err(UsageError::new(
        "prefix",
        &format!("{prefix:?}"),
        "a prefix is 1 to 40 characters of letters, digits and _, starting with a letter",
    ))
}

/// Every field's function name must be free and short enough.
fn check_field_names(layout: &Layout, prefix: &str) -> Result<(), UsageError> {
    for field in layout.fields() {
        if CLASHING_FIELDS.contains(&field.name()) {
            return Err(UsageError::new(
                "field",
                &format!("{:?}", field.name()),
                "in SQL it would clash with the functions' own names \
                 (compose, min_id, max_id and the parameter ts); rename the field",
            ));
        }
        let name = format!("{prefix}_{}", field.name());
        if name.len() > MAX_NAME {
            return Err(UsageError::new(
                "prefix",
                &format!(
                    "{prefix:?} (its function {name} has {} characters)",
                    name.len()
                ),
                "function names are at most 63 characters in PostgreSQL; choose a shorter prefix",
            ));
        }
    }
    Ok(())
}

/// `text` inside an SQL string literal.
pub fn quoted(text: &str) -> String {
    text.replace('\'', "''")
}

/// `lines` as an SQL comment, an empty line as a bare `--`.
pub fn comment(lines: &[String]) -> String {
    lines
        .iter()
        .map(|line| match line.is_empty() {
            true => "--\n".to_owned(),
            false => format!("-- {line}\n"),
        })
        .collect()
}

/// `expr` shifted left, in parentheses, as `<<` binds loosely in both
/// dialects.
pub fn shifted(expr: &str, shift: u8) -> String {
    match shift {
        0 => expr.to_owned(),
        _ => format!("({expr} << {shift})"),
    }
}

/// The bits of `id` from `shift` up, masked to `max`.
pub fn bits_of(id: &str, shift: u8, max: u64) -> String {
    match shift {
        0 => format!("{id} & {max}"),
        _ => format!("({id} >> {shift}) & {max}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(layout: &str, prefix: Option<&str>) -> UsageError {
        let layout = Layout::parse(layout).unwrap();
        match SqlLayout::new(&layout, prefix) {
            Ok(_) => panic!("{layout} with prefix {prefix:?} was accepted"),
            Err(err) => err,
        }
    }

    /// `err` refuses `field` in words that hold each of `words`.
    fn assert_says(err: &UsageError, field: &str, words: &[&str]) {
        assert_eq!(err.field(), field, "{err}");
        for word in words {
            assert!(err.to_string().contains(word), "{word} in {err}");
        }
    }

    #[test]
    fn prefixes_are_safe_identifiers() {
        for good in ["a", "twitter", "Posts_2", "x_", &"p".repeat(40)] {
            assert!(check_prefix(good).is_ok(), "{good}");
        }
        let too_long = "p".repeat(41);
        // Each, and why it is refused.
        let bad = [
            ("", "empty"),
            ("1abc", "a digit first"),
            ("_abc", "_ first"),
            ("a-b", "not a letter, digit or _"),
            ("a b", "a space"),
            ("a;DROP TABLE x", "SQL"),
            ("ä", "not ASCII"),
            ("a\"b", "a quote"),
            (&too_long, "41 characters"),
        ];
        for (prefix, why) in bad {
            let err = check_prefix(prefix).expect_err(why);
            assert_says(
                &err,
                "prefix",
                &[&format!("{prefix:?}"), "letters, digits and _"],
            );
        }
    }

    #[test]
    fn a_bad_prefix_is_refused_before_any_sql() {
        let err = refusal("twitter", Some("9lives"));
        assert!(
            err.to_string()
                .starts_with("prefix \"9lives\" is not allowed")
        );
    }

    #[test]
    fn default_prefix_is_the_preset_or_snowflake() {
        assert_eq!(default_prefix(&Layout::twitter()), "twitter");
        assert_eq!(default_prefix(&Layout::sonyflake()), "sonyflake");
        let moved = Layout::twitter().with_epoch_ms(0).unwrap();
        assert_eq!(default_prefix(&moved), "snowflake");
        let custom = Layout::parse("time:41,node:10,sequence:12").unwrap();
        assert_eq!(default_prefix(&custom), "snowflake");
        let layout = SqlLayout::new(&custom, None).unwrap();
        assert_eq!(layout.fields[0].function, "snowflake_node");
    }

    #[test]
    fn field_names_that_clash_with_the_functions_are_refused() {
        for field in CLASHING_FIELDS {
            let err = refusal(&format!("time:41,{field}:10,sequence:12"), None);
            assert_says(&err, "field", &[&format!("\"{field}\""), "rename"]);
        }
    }

    #[test]
    fn function_names_longer_than_postgres_allows_are_refused() {
        let long_field = "a".repeat(32);
        let spec = format!("time:41,{long_field}:10,sequence:12");
        let prefix = "p".repeat(40);
        let err = refusal(&spec, Some(&prefix));
        let message = err.to_string();
        assert_eq!(err.field(), "prefix");
        assert!(
            message.contains(&format!("{prefix}_{long_field}")),
            "{message}"
        );
        assert!(message.contains("63"), "{message}");
        // 40 + 1 + 22 is 63, which fits; 64 does not.
        let fits = Layout::parse(&format!("time:41,{}:10,sequence:12", &long_field[..22])).unwrap();
        assert!(SqlLayout::new(&fits, Some(&prefix)).is_ok());
        let over = Layout::parse(&format!("time:41,{}:10,sequence:12", &long_field[..23])).unwrap();
        assert!(SqlLayout::new(&over, Some(&prefix)).is_err());
    }

    #[test]
    fn numbers_come_from_the_layout() {
        let sony = SqlLayout::new(&Layout::sonyflake(), None).unwrap();
        // machine: 16 bits at shift 0; sequence: 8 bits at shift 16; 10 ms ticks.
        assert_eq!(
            (sony.time_shift, sony.width, sony.low_mask()),
            (24, 63, (1 << 24) - 1)
        );
        assert_eq!(sony.units_of("_ms", "/"), "((_ms - 1409529600000) / 10)");
        assert_eq!(sony.unix_ms_of("u"), "u * 10 + 1409529600000");
        assert_eq!(
            sony.formula(),
            "(time units << 24) | (sequence << 16) | machine"
        );
        let before_1970 = Layout::twitter().with_epoch_ms(-5).unwrap();
        let layout = SqlLayout::new(&before_1970, None).unwrap();
        assert_eq!(layout.units_of("_ms", "DIV"), "(_ms + 5)");
        assert_eq!(layout.unix_ms_of("u"), "u - 5");
        assert_eq!(layout.id_max(), Some(i64::MAX));
        let discord = SqlLayout::new(&Layout::discord(), None).unwrap();
        assert_eq!(discord.id_max(), None);
        assert!(discord.first_negative_ms().is_some());
    }
}
