//! What the SQL functions compute, in numbers and names, independent of the
//! dialect that spells them.

use snowflake::{Error, Layout, UnixMillis};

/// PostgreSQL truncates longer identifiers silently, which could make two
/// functions one; MariaDB allows 64.
const MAX_NAME: usize = 63;

/// Names a field may not have, because its function or parameter would be
/// taken: `{prefix}_compose` and the rest, and compose's time parameter `ts`.
/// (`time` is reserved by the core already.)
const CLASHING_FIELDS: [&str; 4] = ["compose", "min_id", "max_id", "ts"];

/// One field below the time field.
#[derive(Debug)]
pub struct FieldPlan {
    pub name: String,
    pub bits: u8,
    pub shift: u8,
    pub max: u64,
    /// `{prefix}_{name}`.
    pub function: String,
}

/// Everything the functions need to know about the layout.
#[derive(Debug)]
pub struct Plan {
    pub prefix: String,
    /// The preset's name or the spec, for comments.
    pub layout: String,
    pub spec: String,
    pub epoch_ms: i64,
    pub tick_ms: u64,
    pub last_ms: i64,
    /// How many of the 64 bits the layout uses (63 with a sign bit).
    pub width: u8,
    pub time_shift: u8,
    pub time_max: u64,
    pub fields: Vec<FieldPlan>,
}

impl Plan {
    pub fn new(layout: &Layout, prefix: String) -> Result<Plan, Error> {
        for field in layout.fields() {
            if CLASHING_FIELDS.contains(&field.name()) {
                return Err(Error::invalid_value(
                    "field",
                    &format!("{:?}", field.name()),
                    "in SQL it would clash with the functions' own names \
                     (compose, min_id, max_id and the parameter ts); rename the field",
                ));
            }
            let name = format!("{prefix}_{}", field.name());
            if name.len() > MAX_NAME {
                return Err(Error::invalid_value(
                    "prefix",
                    &format!(
                        "{prefix:?} (its function {name} has {} characters)",
                        name.len()
                    ),
                    "function names are at most 63 characters in PostgreSQL; choose a shorter prefix",
                ));
            }
        }
        let fields = layout
            .fields()
            .iter()
            .map(|f| FieldPlan {
                name: f.name().to_owned(),
                bits: f.bits(),
                shift: f.shift(),
                max: f.max(),
                function: format!("{prefix}_{}", f.name()),
            })
            .collect();
        Ok(Plan {
            layout: layout.name().into_owned(),
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

    /// The comment at the top of the script: the layout, the formula and, for
    /// 64-bit layouts, how IDs map onto signed bigint. `time_type` is the
    /// dialect's type for a time, `purity` says how pure functions are marked
    /// there and what that allows; `examples` end it.
    pub fn header(&self, time_type: &str, purity: &[&str], examples: &[String]) -> String {
        let mut lines = vec![
            format!(
                "SQL functions for Snowflake IDs of layout {} ({}), made by `snowflake sql`.",
                self.layout, self.spec
            ),
            format!(
                "Epoch {} ({}); one tick is {} ms; the last time an ID can hold is {} ({}).",
                self.epoch_ms,
                UnixMillis(self.epoch_ms),
                self.tick_ms,
                self.last_ms,
                UnixMillis(self.last_ms)
            ),
            String::new(),
            format!("  id = {}", self.formula()),
            format!(
                "  time units = {}{}",
                self.units_of("Unix ms", "/"),
                if self.tick_ms == 1 {
                    ""
                } else {
                    ", rounded down"
                }
            ),
            String::new(),
        ];
        match (self.id_max(), self.first_negative_ms()) {
            (Some(max), _) if max == i64::MAX => lines.extend([
                "The top bit is a sign bit that stays 0, so every ID is a positive bigint;".into(),
                "these functions refuse a negative one.".into(),
            ]),
            (Some(max), _) => lines.push(format!(
                "The layout uses {} bits: IDs are 0 to {max}; these functions refuse others.",
                self.width
            )),
            (None, Some(first)) => lines.extend([
                "IDs of this layout use all 64 bits, but bigint is signed: an ID of 2^63 or".into(),
                "more is stored as its two's complement, id - 2^64, a negative bigint (what".into(),
                "reinterpreting the unsigned 64 bits as signed gives). These functions read".into(),
                "and write that form. The first such ID is from".into(),
                format!(
                    "{}; IDs before then are positive. Negative IDs sort",
                    UnixMillis(first)
                ),
                "below positive ones, so for WHERE id BETWEEN min_id(a) AND max_id(b), keep".into(),
                "a and b on the same side of that time (or split the range in two).".into(),
            ]),
            (None, None) => {}
        }
        lines.push(String::new());
        lines.extend(purity.iter().map(|line| line.to_string()));
        lines.extend([
            "NULL in gives NULL out; values out of range raise an error that names them.".into(),
            format!(
                "  {}(id) -> {time_type}   the time of an ID",
                self.name("time")
            ),
        ]);
        for f in &self.fields {
            lines.push(format!(
                "  {}(id) -> bigint   its {} field, 0 to {}",
                f.function, f.name, f.max
            ));
        }
        lines.extend([
            format!(
                "  {}(ts, {}) -> bigint   the ID of a time and field values",
                self.name("compose"),
                self.field_names().join(", ")
            ),
            format!(
                "  {}(ts) -> bigint, {}(ts) -> bigint   the smallest and largest ID of ts's tick",
                self.name("min_id"),
                self.name("max_id")
            ),
            String::new(),
            "For example:".into(),
        ]);
        lines.extend(examples.iter().map(|e| format!("  {e}")));
        let mut out = String::new();
        for line in lines {
            out.push_str(if line.is_empty() { "--" } else { "-- " });
            out.push_str(&line);
            out.push('\n');
        }
        out.push('\n');
        out
    }

    pub fn field_names(&self) -> Vec<&str> {
        self.fields.iter().map(|f| f.name.as_str()).collect()
    }

    fn formula(&self) -> String {
        let mut parts = vec![shifted("time units", self.time_shift)];
        parts.extend(self.fields.iter().map(|f| shifted(&f.name, f.shift)));
        parts.join(" | ")
    }
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
