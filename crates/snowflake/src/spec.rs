//! The one layout parser, and its inverse: a preset name or a custom layout
//! written most significant first, as `time:41,datacenter:5,machine:5,sequence:12`;
//! and the one reader of field values written as text, `datacenter=1,machine=7`.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::str::FromStr;

use crate::error::{Error, Repr};
use crate::layout::Layout;

impl Layout {
    /// The one layout parser: a preset name, or a custom layout written
    /// most significant first as `time:41,datacenter:5,machine:5,sequence:12`.
    /// In a custom layout the field named `sequence` is the sequence.
    ///
    /// ```
    /// use snowflake::Layout;
    ///
    /// assert_eq!(Layout::parse("discord")?, Layout::discord());
    /// // Narrower than 63 bits: the top 13 bits stay zero.
    /// assert_eq!(Layout::parse("time:41,machine:10")?.bits(), 51);
    /// let err = Layout::parse("time:41,machine:30").unwrap_err();
    /// assert!(err.to_string().contains("add up to 71 bits; an ID holds at most 64"));
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn parse(input: &str) -> Result<Layout, Error> {
        if let Some(preset) = Layout::preset(input) {
            return Ok(preset);
        }
        if !input.contains(':') {
            return Err(Error::new(Repr::UnknownLayout {
                name: input.to_string(),
                presets: &Layout::PRESETS,
            }));
        }
        let mut builder = Layout::builder();
        for (i, part) in input.split(',').enumerate() {
            let part = part.trim();
            let (name, bits) = part.split_once(':').ok_or_else(|| {
                Error::invalid_layout(alloc::format!("{part:?} is not name:bits, as in machine:5"))
            })?;
            let (name, bits) = (name.trim(), bits.trim());
            let bits: u8 = bits
                .parse()
                .ok()
                .filter(|b| (1..=64).contains(b))
                .ok_or_else(|| {
                    Error::invalid_layout(alloc::format!(
                        "the width of {name:?}, {bits:?}, is not a number of bits from 1 to 64"
                    ))
                })?;
            let is_time = name == "time" || name == Layout::TIME_FIELD;
            match (i, is_time) {
                (0, true) => builder = builder.time_bits(bits),
                (0, false) => {
                    return Err(Error::invalid_layout(alloc::format!(
                        "the first field must be time (most significant first), not {name:?}"
                    )));
                }
                (_, true) => return Err(Error::invalid_layout("time appears twice")),
                (_, false) if name == Layout::SEQUENCE_FIELD => {
                    builder = builder.sequence(String::from(name), bits);
                }
                (_, false) => builder = builder.field(String::from(name), bits),
            }
        }
        builder.build()
    }

    /// Field values written as one text, `NAME=VALUE` pairs separated by
    /// commas (`datacenter=1,machine=7`), split into pairs for
    /// [`Layout::parse_value`] to check: the one reader of this form, for
    /// the command's `-f`, the service, and the database extensions'
    /// settings and `compose()`. Blanks around names and values are dropped;
    /// a pair without `=` keeps an empty value, which the value parser then
    /// refuses naming the field. Empty text is no pairs.
    ///
    /// ```
    /// use snowflake::Layout;
    ///
    /// let pairs = Layout::split_fields("datacenter = 1, machine=7 ");
    /// assert_eq!(pairs, [("datacenter", "1"), ("machine", "7")]);
    /// assert_eq!(Layout::twitter().parse_value(pairs[1].0, pairs[1].1)?, 7);
    /// assert!(Layout::split_fields(" , ").is_empty());
    /// let [(name, value)] = Layout::split_fields("machine")[..] else { panic!() };
    /// assert_eq!((name, value), ("machine", ""));
    /// let err = Layout::twitter().parse_value(name, value).unwrap_err();
    /// assert_eq!(err.field(), Some("machine"));
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn split_fields(text: &str) -> Vec<(&str, &str)> {
        text.split(',')
            .map(str::trim)
            .filter(|pair| !pair.is_empty())
            .map(|pair| match pair.split_once('=') {
                Some((name, value)) => (name.trim(), value.trim()),
                // Reported by the value parser as a missing value for that name.
                None => (pair, ""),
            })
            .collect()
    }

    /// The widths written out, most significant first, as [`Layout::parse`] reads them.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::sonyflake().spec(), "time:39,sequence:8,machine:16");
    /// ```
    pub fn spec(&self) -> String {
        let mut out = alloc::format!("time:{}", self.time_bits());
        for f in self.fields() {
            out.push_str(&alloc::format!(",{}:{}", f.name(), f.bits()));
        }
        out
    }
}

impl FromStr for Layout {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Layout::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::Id;

    #[test]
    fn custom_layout_errors_name_the_problem() {
        let cases = [
            ("", "unknown layout"),
            ("flickr", "unknown layout \"flickr\"; use a preset ("),
            ("machine:5,time:58", "the first field must be time"),
            ("time:41,machine", "\"machine\" is not name:bits"),
            ("time:41,machine:x", "\"x\", is not a number of bits"),
            (
                "time:41,machine:0,sequence:22",
                "is not a number of bits from 1 to 64",
            ),
            ("time:41,machine:11,machine:11", "appears twice"),
            ("time:41,Machine:22", "must be 1 to 32 characters"),
            ("time:41,sign:22", "is reserved"),
            ("time:41,unused:2", "is reserved"),
            ("time:41,time:22", "time appears twice"),
            (
                "time:41,machine:30",
                "add up to 71 bits; an ID holds at most 64",
            ),
            ("time:62,machine:3", "add up to 65 bits"),
            ("time:64", "it needs 1 to 62"),
            ("time:63", "it needs 1 to 62"),
        ];
        for (input, expected) in cases {
            match Layout::parse(input) {
                Ok(layout) => panic!("{input} parsed as {layout}"),
                Err(err) => assert!(err.to_string().contains(expected), "{input}: {err}"),
            }
        }
    }

    #[test]
    fn an_unknown_name_is_offered_every_preset_from_the_table() {
        let err = Layout::parse("flickr").unwrap_err();
        assert_eq!(err.field(), Some("layout"));
        assert_eq!(
            err.to_string(),
            alloc::format!(
                "unknown layout \"flickr\"; use a preset ({}) or fields most significant first, \
                 like time:41,datacenter:5,machine:5,sequence:12",
                Layout::PRESETS.join(", ")
            )
        );
        assert!(err.to_string().contains("(twitter, discord, "), "{err}");
    }

    #[test]
    fn narrow_layouts_keep_the_top_bits_zero() {
        let layout = Layout::parse("time:20,worker:3,sequence:4").unwrap();
        assert_eq!(layout.bits(), 27);
        assert!(!layout.has_sign_bit());
        assert!(layout.is_js_safe());
        assert_eq!(layout.max_id().get(), (1 << 27) - 1);
        assert_eq!(layout.time_shift(), 7);
        let id = layout
            .compose(3, &[("worker", 7), ("sequence", 15)])
            .unwrap();
        assert_eq!(id.get(), (3 << 7) | (7 << 4) | 15);
        let d = layout.decode(id).unwrap();
        let segments: Vec<(&str, u8, u64)> = d
            .segments()
            .iter()
            .map(|s| (s.name(), s.bits(), s.value()))
            .collect();
        assert_eq!(
            segments,
            [
                ("unused", 37, 0),
                ("timestamp", 20, 3),
                ("worker", 3, 7),
                ("sequence", 4, 15)
            ]
        );
        let last = layout
            .bounds(layout.last_timestamp_ms(), layout.last_timestamp_ms())
            .unwrap();
        assert_eq!(last.last(), layout.max_id());
        for too_wide in [1u64 << 27, u64::MAX, 1 << 63] {
            let err = layout.decode(Id::new(too_wide)).unwrap_err();
            assert_eq!(err.field(), Some("id"));
            assert_eq!(
                err.to_string(),
                alloc::format!(
                    "id {too_wide} has bits set above its lowest 27, but layout \
                     time:20,worker:3,sequence:4 uses only 27 bits and keeps the rest 0; its IDs \
                     are 0 to 134217727"
                )
            );
        }
        // The edges: 63 bits is a sign bit, 64 none, 62 one unused bit.
        assert!(Layout::parse("time:41,node:22").unwrap().has_sign_bit());
        assert_eq!(
            Layout::parse("time:41,node:23").unwrap().max_id().get(),
            u64::MAX
        );
        let d = Layout::parse("time:41,node:21").unwrap();
        assert_eq!(d.decode(Id::new(1)).unwrap().segments()[0].name(), "unused");
        assert!(d.decode(Id::new(1 << 62)).is_err());
        assert!(!d.is_js_safe());
    }

    #[test]
    fn custom_layout_without_sequence_composes() {
        let layout = Layout::parse("time:41,node:22").unwrap();
        assert!(layout.sequence().is_none());
        assert_eq!(
            layout.compose(5, &[("node", 3)]).unwrap().get(),
            (5 << 22) | 3
        );
    }
}
