//! The read functions, in every dialect: `<prefix>_time(id)`, one function
//! a field, `<prefix>_compose(ts, ...)`, `<prefix>_min_id(ts)` and
//! `<prefix>_max_id(ts)`, pure, each refusing what is out of range; and the
//! comment that opens the script. Which functions there are and what each
//! checks is said here once; the dialect spells them.

use snowflake::UnixMillis;

use super::database::{Database, Function, Locals, Refusal};
use super::layout::{SqlField, SqlLayout, bits_of, comment, shifted};

/// The comment that opens the script, and the functions.
pub fn render(db: &dyn Database, layout: &SqlLayout) -> (String, String) {
    let mut out = time(db, layout);
    for field in &layout.fields {
        out.push_str(&field_of_id(db, layout, field));
    }
    out.push_str(&compose(db, layout));
    out.push_str(&bound(db, layout, "min_id", None));
    out.push_str(&bound(db, layout, "max_id", Some(layout.low_mask())));
    (header(db, layout), routines(db, out))
}

/// `body`, between the lines that switch the client's delimiter where the
/// database needs them.
pub fn routines(db: &dyn Database, body: String) -> String {
    match db.capabilities().routine_delimiter {
        Some(delimiter) => format!("DELIMITER {delimiter}\n\n{body}DELIMITER ;\n"),
        None => body,
    }
}

/// The comment at the top of the script: the layout, the formula and, for
/// 64-bit layouts, how IDs map onto signed bigint; how the functions are
/// marked pure, what each gives, and examples.
fn header(db: &dyn Database, layout: &SqlLayout) -> String {
    let mut lines = layout_lines(layout);
    lines.extend(bigint_lines(layout));
    lines.push(String::new());
    lines.extend(db.words().purity.iter().map(|line| line.to_string()));
    lines.extend(function_lines(db, layout));
    lines.push(String::new());
    lines.push("For example:".into());
    lines.extend(examples(db, layout).iter().map(|e| format!("  {e}")));
    comment(&lines) + "\n"
}

/// The layout, its epoch, tick and end, and the formula of an ID.
fn layout_lines(layout: &SqlLayout) -> Vec<String> {
    let rounded = match layout.tick_ms {
        1 => "",
        _ => ", rounded down",
    };
    vec![
        format!(
            "SQL functions for Snowflake IDs of layout {} ({}), made by `snowflake sql`.",
            layout.name, layout.spec
        ),
        format!(
            "Epoch {} ({}); one tick is {} ms; the last time an ID can hold is {} ({}).",
            layout.epoch_ms,
            UnixMillis(layout.epoch_ms),
            layout.tick_ms,
            layout.last_ms,
            UnixMillis(layout.last_ms)
        ),
        String::new(),
        format!("  id = {}", layout.formula()),
        format!(
            "  time units = {}{rounded}",
            layout.units_of("Unix ms", "/")
        ),
        String::new(),
    ]
}

/// Which bigints are IDs: a sign bit kept 0, fewer bits than 63, or all 64
/// in two's complement.
fn bigint_lines(layout: &SqlLayout) -> Vec<String> {
    match (layout.id_max(), layout.first_negative_ms()) {
        (Some(i64::MAX), _) => vec![
            "The top bit is a sign bit that stays 0, so every ID is a positive bigint;".into(),
            "these functions refuse a negative one.".into(),
        ],
        (Some(max), _) => vec![format!(
            "The layout uses {} bits: IDs are 0 to {max}; these functions refuse others.",
            layout.width
        )],
        (None, Some(first)) => vec![
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
        ],
        (None, None) => Vec::new(),
    }
}

/// What each function gives.
fn function_lines(db: &dyn Database, layout: &SqlLayout) -> Vec<String> {
    let mut lines = vec![
        "NULL in gives NULL out; values out of range raise an error that names them.".into(),
        format!(
            "  {}(id) -> {}   the time of an ID",
            layout.name("time"),
            db.words().time
        ),
    ];
    for f in &layout.fields {
        lines.push(format!(
            "  {}(id) -> bigint   its {} field, 0 to {}",
            f.function, f.name, f.max
        ));
    }
    lines.extend([
        format!(
            "  {}(ts, {}) -> bigint   the ID of a time and field values",
            layout.name("compose"),
            layout.field_names().join(", ")
        ),
        format!(
            "  {}(ts) -> bigint, {}(ts) -> bigint   the smallest and largest ID of ts's tick",
            layout.name("min_id"),
            layout.name("max_id")
        ),
    ]);
    lines
}

fn examples(db: &dyn Database, layout: &SqlLayout) -> [String; 3] {
    let zeros = vec!["0"; layout.fields.len()].join(", ");
    let now = db.words().now;
    [
        format!("SELECT id, {}(id) FROM posts;", layout.name("time")),
        format!(
            "SELECT * FROM posts WHERE id BETWEEN {}({}) AND {}({now});",
            layout.name("min_id"),
            db.words().a_day_ago,
            layout.name("max_id")
        ),
        format!("SELECT {}({now}, {zeros});", layout.name("compose")),
    ]
}

/// Refuses IDs with bits set that the layout keeps 0; nothing to check when
/// every bigint is an ID.
fn id_check(db: &dyn Database, layout: &SqlLayout) -> String {
    match layout.id_max() {
        None => String::new(),
        Some(i64::MAX) => db.raise("id < 0", Refusal::NegativeId),
        Some(max) => db.raise(
            &format!("id < 0 OR id > {max}"),
            Refusal::IdOutOfRange {
                max,
                width: layout.width,
            },
        ),
    }
}

/// `_ms` from `ts`, refused outside the layout's times; a limit past what
/// the time type holds needs no check.
fn time_check(db: &dyn Database, layout: &SqlLayout) -> String {
    let holds = &db.capabilities().time_range_ms;
    let mut out = String::new();
    if layout.epoch_ms > *holds.start() {
        let epoch_ms = layout.epoch_ms;
        let refusal = Refusal::BeforeEpoch { epoch_ms };
        out.push_str(&db.raise(&format!("_ms < {epoch_ms}"), refusal));
    }
    if layout.last_ms < *holds.end() {
        let last_ms = layout.last_ms;
        let refusal = Refusal::AfterLast { last_ms };
        out.push_str(&db.raise(&format!("_ms > {last_ms}"), refusal));
    }
    out
}

/// `<prefix>_time(id)`: the start of the ID's tick.
fn time(db: &dyn Database, layout: &SqlLayout) -> String {
    let holds = &db.capabilities().time_range_ms;
    let mut body = id_check(db, layout);
    body.push_str(&db.ms_of_id(layout));
    // Only layouts whose times reach past the time type need the check.
    if layout.epoch_ms < *holds.start() || layout.last_ms > *holds.end() {
        let condition = format!("_ms < {} OR _ms > {}", holds.start(), holds.end());
        body.push_str(&db.raise(&condition, Refusal::TimeOutsideType));
    }
    body.push_str(&db.time_of_ms());
    let doc = match db.capabilities().zoned_time {
        true => "The time of an ID: the start of its tick.",
        false => "The time of an ID, in UTC: the start of its tick.",
    };
    let returns = db.words().time;
    of_id(
        db,
        &layout.name("time"),
        doc,
        returns,
        Locals::TimeOfId,
        &body,
    )
}

/// `<prefix>_<field>(id)`.
fn field_of_id(db: &dyn Database, layout: &SqlLayout, field: &SqlField) -> String {
    let doc = format!("The {} field of an ID, 0 to {}.", field.name, field.max);
    let value = bits_of("id", field.shift, field.max);
    let body = format!("{}  RETURN {value};\n", id_check(db, layout));
    of_id(
        db,
        &field.function,
        &doc,
        db.words().int,
        Locals::None,
        &body,
    )
}

/// `<prefix>_compose(ts, <fields>)`: the ID of a time and field values.
fn compose(db: &dyn Database, layout: &SqlLayout) -> String {
    let words = db.words();
    let mut params = vec![format!("ts {}", words.time)];
    let mut body = time_check(db, layout);
    let mut terms = vec![layout.units_shifted(words.div)];
    for field in &layout.fields {
        let param = db.param(&field.name);
        params.push(format!("{param} {}", words.int));
        let refusal = Refusal::FieldOutOfRange {
            field,
            param: &param,
        };
        let condition = format!("{param} < 0 OR {param} > {}", field.max);
        body.push_str(&db.raise(&condition, refusal));
        terms.push(shifted(&param, field.shift));
    }
    body.push_str(&format!("  RETURN {};\n", db.signed(&terms.join(" | "))));
    let doc = match db.capabilities().zoned_time {
        true => "The ID of a time (floored to the tick) and field values.",
        false => "The ID of a time in UTC (floored to the tick) and field values.",
    };
    of_time(db, &layout.name("compose"), doc, &params.join(", "), &body)
}

/// `<prefix>_min_id(ts)` or `<prefix>_max_id(ts)`: the first ID of ts's
/// tick, with the bits below the time field set for the last.
fn bound(db: &dyn Database, layout: &SqlLayout, what: &str, low_mask: Option<u64>) -> String {
    let mut id = layout.units_shifted(db.words().div);
    if let Some(mask) = low_mask {
        id = format!("{id} | {mask}");
    }
    let body = format!("{}  RETURN {};\n", time_check(db, layout), db.signed(&id));
    let doc = match low_mask {
        None => "The smallest ID of ts's tick.",
        Some(_) => "The largest ID of ts's tick.",
    };
    let params = format!("ts {}", db.words().time);
    of_time(db, &layout.name(what), doc, &params, &body)
}

/// A function of an ID.
fn of_id(
    db: &dyn Database,
    name: &str,
    doc: &str,
    returns: &str,
    locals: Locals,
    body: &str,
) -> String {
    let params = format!("id {}", db.words().int);
    db.function(&Function {
        doc,
        name,
        params: &params,
        returns,
        locals,
        body,
    })
}

/// A function of a time (and field values) that gives an ID.
fn of_time(db: &dyn Database, name: &str, doc: &str, params: &str, body: &str) -> String {
    let returns = db.words().int;
    let locals = Locals::MsOfTs;
    db.function(&Function {
        doc,
        name,
        params,
        returns,
        locals,
        body,
    })
}
