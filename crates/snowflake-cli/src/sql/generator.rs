//! What `<prefix>_next_id()` computes, in numbers and names, independent of
//! the dialect that spells it.
//!
//! # Design
//!
//! A generator in SQL has the same duties as the Rust one: never an ID
//! twice, each caller's IDs increasing, an ID's time the clock's. Its state
//! is the tick and sequence number of the last ID issued, kept where a
//! rollback cannot take it back (a rolled-back caller may already have seen
//! its ID: the ID is burnt, never issued again) and where a restart keeps it:
//! a sequence in PostgreSQL (`nextval` and `setval` are not transactional),
//! a MyISAM table in MySQL/MariaDB (MyISAM has no transactions). A caller
//! holds the generator's lock from reading the state until it has written
//! the next one, and reads the database clock under it, once, so that its
//! reading is never older than the last ID's. When the sequence is used up
//! in a tick, or the clock reads up to [`Generator::DEFAULT_TOLERANCE_MS`]
//! earlier than the last ID's tick, the caller waits under the lock for the
//! clock to get there: an ID's time is never ahead of the database clock.
//! Further back than that, the call fails and says by how much, and the
//! state is left as it was.

use snowflake::{Error, Generator, Layout};

use super::plan::Plan;

/// The bits a PostgreSQL sequence holds: `bigint`, and its values are not
/// negative here.
const STATE_BITS: u8 = 63;

/// The table that lists the generators of a database (or schema), one row
/// each.
pub const REGISTRY: &str = "snowflake_generators";

/// The registry's column for the layout holds this many characters (a
/// unique key in MySQL has a limit of bytes).
const MAX_LAYOUT_KEY: usize = 255;

/// Node fields a generator cannot have: `{prefix}_next_id(id)` would clash
/// with the generator itself in MySQL, which has no overloading.
const CLASHING_FIELDS: [&str; 1] = ["next_id"];

/// The generator of one prefix: what the state holds and how an ID is
/// put together.
#[derive(Debug)]
pub struct NextId {
    /// `{prefix}_next_id`.
    pub function: String,
    /// `{prefix}_next_id_state`: where the last ID's tick and sequence
    /// number are kept.
    pub state: String,
    /// The node fields and their values, most significant first, as
    /// `datacenter=1, machine=7`.
    pub node_text: String,
    /// The node fields' values in their places: what every ID carries.
    pub node_bits: u64,
    /// The layout's identity for the registry of generators: its fields and
    /// widths, epoch and tick. Two generators of the same identity and node
    /// would issue the same IDs.
    pub layout_key: String,
    pub seq_bits: u8,
    pub seq_shift: u8,
    pub seq_max: u64,
    /// The last tick the generator can issue in: the time field's last, or
    /// less where the packed state (tick and sequence number in one `bigint`)
    /// runs out first (mastodon: in the year 6429).
    pub last_tick: u64,
    pub tolerance_ms: u64,
}

impl NextId {
    /// The generator of `layout` with these node values; every node field
    /// needs one, and the layout a sequence field.
    pub fn new(layout: &Layout, plan: &Plan, node: &[(&str, u64)]) -> Result<NextId, Error> {
        // The core's rules for a generator: a sequence field, no value given
        // for it, node values in range, no field twice.
        Generator::builder(layout.clone()).node(node).build()?;
        let sequence = layout
            .sequence()
            .expect("the builder refuses a layout without a sequence");
        let missing: Vec<&str> = layout
            .node_fields()
            .map(|f| f.name())
            .filter(|name| !node.iter().any(|(given, _)| given == name))
            .collect();
        if !missing.is_empty() {
            return Err(Error::invalid_value(
                "generator",
                &format!("with no value for {}", missing.join(", ")),
                "give every node field a value with -f NAME=VALUE, as compose takes them; \
                 snowflake layouts lists the fields",
            ));
        }
        if let Some(f) = layout
            .fields()
            .iter()
            .find(|f| CLASHING_FIELDS.contains(&f.name()))
        {
            return Err(Error::invalid_value(
                "field",
                &format!("{:?}", f.name()),
                "with --generator it would clash with the generator's function; rename the field",
            ));
        }
        let node_text = layout
            .node_fields()
            .map(|f| {
                let value = node.iter().find(|(name, _)| *name == f.name());
                format!("{}={}", f.name(), value.map_or(0, |(_, v)| *v))
            })
            .collect::<Vec<_>>()
            .join(", ");
        let node_bits = layout.compose(layout.epoch_ms(), node)?.get();
        let layout_key = format!(
            "{} epoch {} tick {} ms",
            layout.spec(),
            layout.epoch_ms(),
            layout.tick_ms()
        );
        if layout_key.len() > MAX_LAYOUT_KEY {
            return Err(Error::invalid_value(
                "layout",
                &layout.spec(),
                "with --generator the layout's fields, epoch and tick are written in 255 \
                 characters at most (in snowflake_generators); shorten the field names",
            ));
        }
        let packed_last = (1u64 << (STATE_BITS - sequence.bits())) - 1;
        Ok(NextId {
            function: plan.name("next_id"),
            state: plan.name("next_id_state"),
            node_text,
            node_bits,
            layout_key,
            seq_bits: sequence.bits(),
            seq_shift: sequence.shift(),
            seq_max: sequence.max(),
            last_tick: layout.max_time_units().min(packed_last),
            tolerance_ms: Generator::DEFAULT_TOLERANCE_MS,
        })
    }

    /// The Unix millisecond at which the generator's time runs out: the
    /// end of its last tick.
    pub fn last_ms(&self, plan: &Plan) -> i64 {
        let ticks = i128::from(self.last_tick) + 1;
        let end = i128::from(plan.epoch_ms) + ticks * i128::from(plan.tick_ms) - 1;
        // Within the layout's range, which fits in i64.
        end as i64
    }

    /// The comment before the generator, the same in both dialects but for
    /// `state` (where the state is kept) and `default` (how a column gets
    /// its IDs).
    pub fn comment(&self, plan: &Plan, state: &[String], default: &[String]) -> String {
        let mut lines = vec![
            "The generator (--generator), installed after the functions:".into(),
            format!(
                "  {}() -> bigint   a new ID with {}",
                self.function, self.node_text
            ),
            "Its IDs are unique and increasing, and each one's time is the database".into(),
            "clock's when it was made. As a column's default:".into(),
        ];
        lines.extend(default.iter().map(|line| format!("  {line}")));
        lines.push(String::new());
        lines.extend(state.iter().cloned());
        lines.extend([
            String::new(),
            format!(
                "- Up to {} IDs a tick of {} ms: one generator's ceiling. When a tick's are used",
                self.seq_max + 1,
                plan.tick_ms
            ),
            "  up, the call waits for the next tick; the sequence never wraps.".into(),
            "- The clock is read once a call, under the lock. If it reads earlier than the last"
                .into(),
            format!(
                "  ID's tick by up to {} ms, the call waits for it; further back, the call fails,",
                self.tolerance_ms
            ),
            "  says by how much, and no ID is issued until the clock has caught up. No ID".into(),
            "  carries a time later than the clock's.".into(),
            "- A rolled-back transaction burns its IDs: they are never issued again. The".into(),
            "  state survives a restart. Never lower it: IDs would repeat.".into(),
            format!(
                "- IDs run out at {} (the generator's last tick).",
                snowflake::UnixMillis(self.last_ms(plan))
            ),
            format!(
                "- Several generators in one database: one per prefix, each with node values of"
            ),
            format!(
                "  its own. The table {} lists them and refuses a second with the",
                REGISTRY
            ),
            "  same layout and node, which would issue the same IDs. More than one generator's"
                .into(),
            "  rate takes more node values: one generator's rate is the layout's ceiling.".into(),
        ]);
        lines
            .into_iter()
            .map(|line| match line.is_empty() {
                true => "--\n".to_owned(),
                false => format!("-- {line}\n"),
            })
            .collect()
    }
}
