//! The tables the page's and the package's lists are read from.

use serde::Serialize;
use snowflake::{Layout, Readings, TextForm, UnixMillis};
use snowflake_mask::{MaskKey, Masker};

use crate::registry::PRESETS;
use crate::reply::{self, DONE};

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
pub(super) struct Described<'a> {
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
    pub(super) fn new(layout: &'a Layout) -> Self {
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
