//! What the mark is written under: the layout (its fields, epoch and tick)
//! and the node.
//!
//! The mark is Unix milliseconds, which mean the same under any settings,
//! but the IDs above it do not: under another layout they can sort below
//! those issued before (twitter, then sonyflake), and under another node
//! they are another node's. So the settings are recorded beside the mark,
//! and a server started under others issues nothing until the extension's
//! owner adopts them (`snowflake.adopt_settings()`).
//!
//! The record is in two places. The sequence `snowflake_internal.settings`
//! holds a fingerprint of the settings, written with `setval` and flushed
//! as the mark is, so that, like the mark, it is kept whatever becomes of
//! the transaction that wrote it: a first transaction that rolls back
//! cannot leave a mark with no record. The table
//! `snowflake_internal.settings_text` holds the settings in words, for
//! messages; a transaction that rolls back loses its row, and the message
//! then says the words were not kept. Both are extension configuration
//! objects, so `pg_dump` keeps them with the mark.

use pgrx::{PgSqlErrorCode, Spi, pg_extern};
use snowflake::{Error, Layout, UnixMillis};

use crate::admit::{admit, in_the_marks_database};
use crate::mark::{self, Sequence};
use crate::report::{OrFail, fail_with};
use crate::settings;

/// Settings as recorded: their fingerprint and their words.
#[derive(Debug)]
pub(crate) struct Written {
    fingerprint: i64,
    text: String,
}

impl Written {
    /// The record of a layout and a node (every node field named).
    pub(crate) fn of(layout: &Layout, node: &[(String, u64)]) -> Written {
        let node: Vec<String> = layout
            .node_fields()
            .map(|field| {
                let value = node
                    .iter()
                    .find(|(name, _)| name == field.name())
                    .map_or(0, |(_, value)| *value);
                format!("{}={value}", field.name())
            })
            .collect();
        let node = node.join(",");
        let spec = layout.spec();
        let (epoch_ms, tick_ms) = (layout.epoch_ms(), layout.tick_ms());
        // What decides an ID, and nothing else: a preset and its spec
        // written out are the same settings.
        let fingerprint = fnv1a(format!("{spec}|{epoch_ms}|{tick_ms}|{node}").as_bytes()) as i64;
        let name = layout.name();
        let fields = if name == spec {
            String::new()
        } else {
            format!(" ({spec})")
        };
        let text = format!(
            "layout {name}{fields}, epoch {}, tick {tick_ms} ms, node {node}",
            UnixMillis(epoch_ms)
        );
        Written { fingerprint, text }
    }
}

/// FNV-1a, 64 bits: a fingerprint that no two of an operator's settings
/// share by chance, with nothing to configure.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Checks that the mark is written under `now`, recording `now` when
/// nothing is recorded yet (a new extension); refused, naming both
/// settings and the way on, when another record is there.
pub(crate) fn check_or_record(now: &Written) -> Result<(), Error> {
    match mark::value(Sequence::Settings)? {
        None => record(now),
        Some(recorded) if recorded == now.fingerprint => {
            if text(recorded)?.is_none() {
                keep_text(now)?;
            }
            Ok(())
        }
        Some(recorded) => {
            let then = text(recorded)?.unwrap_or_else(|| {
                "settings whose words were not kept (the transaction that recorded them rolled \
                 back, or they were deleted)"
                    .to_owned()
            });
            Err(Error::store_failure(format!(
                "the high-water mark snowflake_internal.mark was written under {then}, and this \
                 server runs under {}: IDs under other settings can sort below those issued \
                 before or be another node's, so snowflake.next_id() issues none. Set the \
                 earlier settings back and restart the server, or, to move on deliberately, \
                 run SELECT snowflake.adopt_settings() as the extension's owner",
                now.text
            )))
        }
    }
}

/// Records `now` as the settings the mark is written under.
fn record(now: &Written) -> Result<(), Error> {
    mark::set_durably(Sequence::Settings, now.fingerprint)?;
    keep_text(now)
}

/// The words of a recorded fingerprint, if they were kept.
fn text(fingerprint: i64) -> Result<Option<String>, Error> {
    mark::as_bootstrap_superuser(|| {
        Spi::get_one_with_args::<String>(
            "SELECT settings FROM snowflake_internal.settings_text WHERE fingerprint = $1",
            &[fingerprint.into()],
        )
    })
    .or_else(|err| match err {
        pgrx::spi::SpiError::InvalidPosition => Ok(None),
        err => Err(err),
    })
    .map_err(|err| Error::store_failure(format!("snowflake_internal.settings_text: {err}")))
}

fn keep_text(now: &Written) -> Result<(), Error> {
    mark::as_bootstrap_superuser(|| {
        Spi::run_with_args(
            "INSERT INTO snowflake_internal.settings_text (fingerprint, settings) \
             VALUES ($1, $2) ON CONFLICT (fingerprint) DO UPDATE SET settings = excluded.settings",
            &[now.fingerprint.into(), now.text.as_str().into()],
        )
    })
    .map_err(|err| Error::store_failure(format!("snowflake_internal.settings_text: {err}")))
}

/// Records this server's settings as those the mark is written under,
/// after a deliberate change of `snowflake.layout` or `snowflake.fields`:
/// IDs issued from then on may sort below those issued before, or repeat
/// another node's. For the extension's owner only; returns the settings
/// recorded.
#[pg_extern(volatile, parallel_unsafe)]
fn adopt_settings() -> String {
    const FUNCTION: &std::ffi::CStr = c"snowflake.adopt_settings()";
    admit(FUNCTION);
    let (layout, node) = match in_the_marks_database(FUNCTION).and_then(|()| settings::read()) {
        Ok(settings) => settings,
        Err(message) => fail_with(PgSqlErrorCode::ERRCODE_CONFIG_FILE_ERROR, &message),
    };
    let now = Written::of(&layout, &node);
    record(&now).or_fail();
    now.text
}
