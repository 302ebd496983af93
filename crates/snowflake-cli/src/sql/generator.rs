//! `<prefix>_next_id()`: what it computes, in numbers and names, and the
//! order of its install's steps, whatever the dialect that spells them.
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
//!
//! The state is its owner's alone: the function runs with its owner's
//! rights, callers need only the right to call it, and the lock they take
//! turns under is one that no other role can take, so no caller can rewind,
//! advance or hold the generator.
//!
//! Two generators whose IDs could be equal must not both exist: each ID
//! carries the bits its node fields fix, and two generators can only meet
//! where those agree. The function's comment records them, so that every
//! install sees every other generator of the database (PostgreSQL), or of
//! the databases its installer can see (MySQL), with nothing to keep in step
//! when one is dropped; the view `snowflake_generators` reads them.

use snowflake::{Generator, Layout};

use super::database::{Database, GeneratorNotes};
use super::functions::routines;
use super::layout::{SqlLayout, comment, shifted};
use crate::failure::Failure;
use crate::usage::UsageError;

/// The bits a PostgreSQL sequence holds: `bigint`, and its values are not
/// negative here.
const STATE_BITS: u8 = 63;

/// The view that lists the generators an installer can see, one row each,
/// from their functions' comments; installed beside each generator.
pub const REGISTRY: &str = "snowflake_generators";

/// The layout's identity is at most this many characters: it is written
/// into comments, and MySQL keeps a table's comment to 2,048 bytes.
const MAX_LAYOUT_KEY: usize = 255;

/// The words in every generator's comment (the previous version's too), by
/// which an install finds the others; this version's record of the bits
/// follows them.
pub const MADE_BY: &str = "Made by snowflake sql --generator";

/// The words before the node bits and before their mask in a generator's
/// comment: the previous version wrote neither.
pub const BITS_WORDS: &str = "; its IDs carry the node bits ";
pub const MASK_WORDS: &str = " of the mask ";

/// The words before the layout's identity in the state's comment, which
/// holds what the state means.
pub const STATE_LAYOUT_WORDS: &str = " for IDs of layout ";

/// Node fields a generator cannot have: `{prefix}_next_id(id)` would clash
/// with the generator itself in MySQL, which has no overloading.
const CLASHING_FIELDS: [&str; 1] = ["next_id"];

/// The generator of one prefix: what the state holds and how an ID is
/// put together.
#[derive(Debug)]
pub struct SqlGenerator {
    /// `{prefix}_next_id`.
    pub function: String,
    /// `{prefix}_next_id_state`: where the last ID's tick and sequence
    /// number are kept.
    pub state: String,
    /// `{prefix}_next_id_lock`: what callers lock to take turns, where the
    /// dialect needs one.
    pub lock: String,
    /// The node fields and their values, most significant first, as
    /// `datacenter=1, machine=7`.
    pub node_text: String,
    /// The node fields' values in their places: what every ID carries.
    pub node_bits: u64,
    /// The bits of the node fields: those that `node_bits` fixes. Zero for
    /// a layout without node fields, which fixes none.
    pub node_mask: u64,
    /// The layout's identity: its fields and widths, epoch and tick. A
    /// state means something only to generators of its layout.
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

/// What comes before the read functions (the comment, the start of the
/// install, its checks and the view of generators) and after them (the
/// state, the function and the end of the install).
pub fn render(db: &dyn Database, layout: &SqlLayout, generator: &SqlGenerator) -> (String, String) {
    let mut before = generator.comment(layout, &db.notes(generator));
    before.push_str(db.install_start());
    before.push_str(&db.install_check(layout, generator));
    before.push_str(&db.registry_view());
    let mut after = db.state(generator);
    after.push_str(&routines(db, db.next_id(layout, generator)));
    after.push_str(&db.install_end(generator));
    (before, after)
}

impl SqlGenerator {
    /// The generator of `layout` with these node values; every node field
    /// needs one, and the layout a sequence field.
    pub fn new(
        layout: &Layout,
        names: &SqlLayout,
        node: &[(&str, u64)],
    ) -> Result<SqlGenerator, Failure> {
        // The core's rules for a generator: a sequence field, no value given
        // for it, node values in range, no field twice.
        Generator::builder(layout.clone()).node(node).build()?;
        let sequence = layout
            .sequence()
            .expect("the builder refuses a layout without a sequence");
        check_node(layout, node)?;
        let packed_last = (1u64 << (STATE_BITS - sequence.bits())) - 1;
        let node_mask = layout
            .node_fields()
            .fold(0, |mask, f| mask | (f.max() << f.shift()));
        Ok(SqlGenerator {
            function: names.name("next_id"),
            state: names.name("next_id_state"),
            lock: names.name("next_id_lock"),
            node_text: node_text(layout, node),
            node_bits: layout.compose(layout.epoch_ms(), node)?.get(),
            node_mask,
            layout_key: layout_key(layout)?,
            seq_bits: sequence.bits(),
            seq_shift: sequence.shift(),
            seq_max: sequence.max(),
            last_tick: layout.max_time_units().min(packed_last),
            tolerance_ms: Generator::DEFAULT_TOLERANCE_MS,
        })
    }

    /// The Unix millisecond at which the generator's time runs out: the
    /// end of its last tick.
    pub fn last_ms(&self, layout: &SqlLayout) -> i64 {
        let ticks = i128::from(self.last_tick) + 1;
        let end = i128::from(layout.epoch_ms) + ticks * i128::from(layout.tick_ms) - 1;
        // Within the layout's range, which fits in i64.
        end as i64
    }

    /// The new ID from `_tick`, the node bits and `sequence`, before the
    /// database makes it signed. The node bits lie below the time field, so
    /// they are under 2^63: the same constant to signed and unsigned bit
    /// operators.
    pub fn id(&self, layout: &SqlLayout, sequence: &str) -> String {
        let mut terms = vec![shifted("_tick", layout.time_shift)];
        if self.node_bits != 0 {
            terms.push(self.node_bits.to_string());
        }
        terms.push(shifted(sequence, self.seq_shift));
        terms.join(" | ")
    }

    /// The function's comment, the same in both dialects: what a reader is
    /// told, and the record the installs of others read (after
    /// [`MADE_BY`]).
    pub fn function_comment(&self, layout: &SqlLayout) -> String {
        format!(
            "A new Snowflake ID of layout {} with {}: unique and increasing. \
             {MADE_BY}{BITS_WORDS}{}{MASK_WORDS}{}.",
            layout.name, self.node_text, self.node_bits, self.node_mask
        )
    }

    /// The state's comment, which says which layout the state is of; `what`
    /// says what it holds.
    pub fn state_comment(&self, what: &str) -> String {
        format!(
            "The state of {}(){STATE_LAYOUT_WORDS}{}: {what}. Never lower it: IDs would repeat.",
            self.function, self.layout_key
        )
    }

    /// The comment before the generator: what it gives, the dialect's
    /// `notes` on it, and what every generator promises.
    pub fn comment(&self, layout: &SqlLayout, notes: &GeneratorNotes) -> String {
        let mut lines = vec![
            "The generator (--generator), installed after the functions:".into(),
            format!(
                "  {}() -> bigint   a new ID with {}",
                self.function, self.node_text
            ),
            "Its IDs are unique and increasing, and each one's time is the database".into(),
            "clock's when it was made. As a column's default:".into(),
        ];
        lines.extend(notes.default.iter().map(|line| format!("  {line}")));
        lines.push(String::new());
        lines.extend(notes.state.iter().cloned());
        lines.push(String::new());
        lines.extend(self.promises(layout));
        lines.extend(notes.seen.iter().map(|line| line.to_string()));
        lines.extend([
            format!("  The view {REGISTRY} lists them. One generator's rate is at most"),
            "  the layout's ceiling: more takes more generators, with other node values.".into(),
        ]);
        comment(&lines)
    }

    /// What every generator promises, as the comment says it.
    fn promises(&self, layout: &SqlLayout) -> Vec<String> {
        vec![
            format!(
                "- Up to {} IDs a tick of {} ms: one generator's ceiling. When a tick's are used",
                self.seq_max + 1,
                layout.tick_ms
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
                snowflake::UnixMillis(self.last_ms(layout))
            ),
            "- One node, one generator: the script refuses a generator whose IDs could".into(),
            "  equal another's, comparing the bits their node fields fix, whatever their".into(),
            "  prefixes and layouts.".into(),
        ]
    }
}

/// Every node field has a value, and none clashes with the generator.
fn check_node(layout: &Layout, node: &[(&str, u64)]) -> Result<(), UsageError> {
    let missing: Vec<&str> = layout
        .node_fields()
        .map(|f| f.name())
        .filter(|name| !node.iter().any(|(given, _)| given == name))
        .collect();
    if !missing.is_empty() {
        return Err(UsageError::new(
            "generator",
            &format!("with no value for {}", missing.join(", ")),
            "give every node field a value with -f NAME=VALUE, as compose takes them; \
             snowflake layouts lists the fields",
        ));
    }
    match layout
        .fields()
        .iter()
        .find(|f| CLASHING_FIELDS.contains(&f.name()))
    {
        Some(f) => Err(UsageError::new(
            "field",
            &format!("{:?}", f.name()),
            "with --generator it would clash with the generator's function; rename the field",
        )),
        None => Ok(()),
    }
}

/// The node fields and their values, as `datacenter=1, machine=7`.
fn node_text(layout: &Layout, node: &[(&str, u64)]) -> String {
    layout
        .node_fields()
        .map(|f| {
            let value = node.iter().find(|(name, _)| *name == f.name());
            format!("{}={}", f.name(), value.map_or(0, |(_, v)| *v))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The layout's fields, epoch and tick, short enough for the comments.
fn layout_key(layout: &Layout) -> Result<String, UsageError> {
    let key = format!(
        "{} epoch {} tick {} ms",
        layout.spec(),
        layout.epoch_ms(),
        layout.tick_ms()
    );
    if key.len() > MAX_LAYOUT_KEY {
        return Err(UsageError::new(
            "layout",
            &layout.spec(),
            "with --generator the layout's fields, epoch and tick are written in 255 \
             characters at most (in the state's comment); shorten the field names",
        ));
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{Dialect, functions};

    fn next_id(layout: &Layout, node: &[(&str, u64)]) -> Result<SqlGenerator, Failure> {
        let names = SqlLayout::new(layout, Some("p"))?;
        SqlGenerator::new(layout, &names, node)
    }

    /// The refusal of the command's own, or the core's, as its field and
    /// its words.
    fn refusal(err: Failure) -> (Option<String>, String) {
        match err {
            Failure::Argument(err) => (Some(err.field().to_owned()), err.to_string()),
            Failure::Usage(err) => (err.field().map(str::to_owned), err.to_string()),
            other => panic!("not a refusal: {other:?}"),
        }
    }

    #[test]
    fn numbers_come_from_the_layout() {
        // sonyflake: the machine below the sequence.
        let sony = next_id(&Layout::sonyflake(), &[("machine", 65535)]).unwrap();
        assert_eq!(sony.node_bits, 65535);
        assert_eq!((sony.seq_shift, sony.seq_bits, sony.seq_max), (16, 8, 255));
        assert_eq!(sony.node_mask, 65535);
        let discord = next_id(&Layout::discord(), &[("worker", 5), ("process", 9)]).unwrap();
        assert_eq!(discord.node_bits, (5 << 17) | (9 << 12));
        assert_eq!(discord.node_mask, 1023 << 12);
        assert_eq!(discord.node_text, "worker=5, process=9");
        assert_eq!(discord.tolerance_ms, Generator::DEFAULT_TOLERANCE_MS);
        assert_eq!(
            (discord.function.as_str(), discord.state.as_str()),
            ("p_next_id", "p_next_id_state")
        );
    }

    /// What the install checks compute in SQL: two generators can issue
    /// one ID where the bits both fix agree.
    fn meet(a: &SqlGenerator, b: &SqlGenerator) -> bool {
        (a.node_bits ^ b.node_bits) & a.node_mask & b.node_mask == 0
    }

    #[test]
    fn generators_meet_where_their_node_bits_agree() {
        let twitter = next_id(&Layout::twitter(), &[("datacenter", 1), ("machine", 7)]).unwrap();
        // Another layout whose node field holds the same bits: issue 25's
        // finding 4.
        let ten = Layout::parse("time:41,node:10,sequence:12").unwrap();
        let same = next_id(&ten, &[("node", 39)]).unwrap();
        assert!(meet(&twitter, &same));
        let other = next_id(&ten, &[("node", 40)]).unwrap();
        assert!(!meet(&twitter, &other));
        // Sonyflake's machine (bits 0 to 15) overlaps twitter's machine in
        // bits 12 to 15 only: they meet where those agree.
        let sony = next_id(&Layout::sonyflake(), &[("machine", 7 << 12)]).unwrap();
        assert!(meet(&twitter, &sony));
        let sony = next_id(&Layout::sonyflake(), &[("machine", 8 << 12)]).unwrap();
        assert!(!meet(&twitter, &sony));
        // No node field: it fixes nothing, and meets every generator.
        let solo = next_id(&Layout::parse("time:50,sequence:13").unwrap(), &[]).unwrap();
        assert_eq!(solo.node_mask, 0);
        assert!(meet(&twitter, &solo));
        assert!(meet(&solo, &twitter));
    }

    #[test]
    fn the_packed_state_can_end_a_layout_early() {
        // Mastodon's 16-bit sequence leaves 47 bits of a bigint for ticks:
        // its generator ends in the year 6429, its time field in 10889.
        let mastodon = Layout::mastodon();
        let names = SqlLayout::new(&mastodon, Some("m")).unwrap();
        let next = SqlGenerator::new(&mastodon, &names, &[]).unwrap();
        assert_eq!(next.last_tick, (1 << 47) - 1);
        assert!(
            snowflake::UnixMillis(next.last_ms(&names))
                .to_string()
                .starts_with("6429-")
        );
        let twitter = next_id(&Layout::twitter(), &[("datacenter", 0), ("machine", 0)]).unwrap();
        assert_eq!(twitter.last_tick, Layout::twitter().max_time_units());
    }

    #[test]
    fn every_node_field_needs_a_value_and_the_layout_a_sequence() {
        let (field, message) = refusal(next_id(&Layout::discord(), &[("process", 1)]).unwrap_err());
        assert_eq!(field.as_deref(), Some("generator"));
        assert!(
            message.starts_with("generator with no value for worker is not allowed"),
            "{message}"
        );
        let time_only = Layout::parse("time:62,node:1").unwrap();
        let (_, message) = refusal(next_id(&time_only, &[("node", 1)]).unwrap_err());
        assert!(message.contains("has no sequence field"), "{message}");
        let node = [("datacenter", 1), ("machine", 99)];
        let (_, message) = refusal(next_id(&Layout::twitter(), &node).unwrap_err());
        assert!(message.contains("machine 99 is out of range"), "{message}");
    }

    #[test]
    fn a_layout_too_long_for_the_comments_is_refused() {
        // Eight fields of 32 characters: 280 characters of spec.
        let names: Vec<String> = ('a'..='h')
            .map(|c| format!("{c}{}", "x".repeat(31)))
            .collect();
        let spec = format!(
            "time:41,{},sequence:12",
            names
                .iter()
                .map(|n| format!("{n}:1"))
                .collect::<Vec<_>>()
                .join(",")
        );
        let layout = Layout::parse(&spec).unwrap();
        let node: Vec<(&str, u64)> = names.iter().map(|n| (n.as_str(), 1)).collect();
        let (field, message) = refusal(next_id(&layout, &node).unwrap_err());
        assert_eq!(field.as_deref(), Some("layout"));
        assert!(message.contains("255 characters"), "{message}");
    }

    #[test]
    fn the_checks_come_before_anything_is_created() {
        let node = [("datacenter", 1), ("machine", 7)];
        let pg = functions(&Layout::twitter(), Dialect::Postgres, None, Some(&node)).unwrap();
        let first_function = pg.find("CREATE OR REPLACE FUNCTION").unwrap();
        let begin = pg.find("\nBEGIN;\n").unwrap();
        let checks = pg.find("DO $$").unwrap();
        assert!(begin < checks && checks < first_function);
        assert!(pg.ends_with("COMMIT;\n"));
        assert!(pg.contains("RETURN (_tick << 22) | 159744 | (_state & 4095);"));
        let my = functions(&Layout::twitter(), Dialect::Mysql, None, Some(&node)).unwrap();
        let call = my.find("CALL twitter_next_id_install_check();").unwrap();
        assert!(call < my.find("CREATE FUNCTION").unwrap());
        assert!(my.contains("RETURN CAST((_tick << 22) | 159744 | _seq AS SIGNED);"));
        assert!(my.contains(") ENGINE=MyISAM COMMENT"));
    }
}
