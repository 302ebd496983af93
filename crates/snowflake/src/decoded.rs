use alloc::string::String;
use alloc::vec::Vec;

use crate::error::{Error, Repr};
use crate::id::Id;
use crate::layout::Layout;
use crate::time::UnixMillis;

impl Layout {
    /// Decodes an ID: timestamp, time units and every field. For a layout with
    /// a sign bit, an ID with that bit set is an error, not a negative time;
    /// for a narrower layout, so is an ID with any bit above its width set.
    ///
    /// ```
    /// let twitter = snowflake::Layout::twitter();
    /// let tweet = twitter.decode(1541815603606036480.into())?;
    /// assert_eq!(tweet.time().to_string(), "2022-06-28T16:07:40.105Z");
    /// assert_eq!(tweet.field("datacenter"), Some(11));
    /// assert_eq!(tweet.field("machine"), Some(26));
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn decode(&self, id: Id) -> Result<Decoded<'_>, Error> {
        if id > self.max_id() {
            let layout = self.name().into_owned();
            return Err(Error::new(if self.has_sign_bit() {
                Repr::SignBitSet {
                    id: id.get(),
                    layout,
                }
            } else {
                Repr::TooWide {
                    id: id.get(),
                    layout,
                    bits: self.bits(),
                    max: self.max_id().get(),
                }
            }));
        }
        Ok(Decoded { layout: self, id })
    }
}

/// An ID read through its layout: the time, every field, and the bits.
///
/// With the `serde` feature it serialises to the one JSON shape that the CLI's
/// `--json` and the HTTP API share:
/// `{"id","layout","timestamp_ms","time","fields","binary","segments","text"}`,
/// where `text` holds the ID's other [`TextForm`](crate::TextForm)s:
/// `{"hex","base32","base62","base58"}`.
///
/// ```
/// let twitter = snowflake::Layout::twitter();
/// let d = twitter.decode(4194439168.into())?;
/// assert_eq!(d.timestamp_ms(), 1288834975657);
/// assert_eq!(d.time_units(), 1000);
/// assert_eq!(d.sequence(), Some(0));
/// assert_eq!(
///     d.segments().iter().map(|s| s.binary()).collect::<Vec<_>>().join(" | "),
///     "0 | 00000000000000000000000000000001111101000 | 00001 | 00001 | 000000000000"
/// );
/// # Ok::<(), snowflake::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoded<'a> {
    layout: &'a Layout,
    id: Id,
}

/// One labelled run of bits in an ID's breakdown.
///
/// ```
/// let twitter = snowflake::Layout::twitter();
/// let d = twitter.decode(4194439168.into())?;
/// let machine = &d.segments()[3];
/// assert_eq!((machine.name(), machine.bits(), machine.value()), ("machine", 5, 1));
/// assert_eq!(machine.binary(), "00001");
/// # Ok::<(), snowflake::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment<'a> {
    name: &'a str,
    bits: u8,
    value: u64,
}

impl<'a> Segment<'a> {
    /// `sign`, `unused`, `timestamp`, or a field's name.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The segment's width.
    pub fn bits(&self) -> u8 {
        self.bits
    }

    /// The segment's value; for the timestamp, time units since the epoch.
    pub fn value(&self) -> u64 {
        self.value
    }

    /// The value as a binary string exactly `bits` characters long.
    pub fn binary(&self) -> String {
        alloc::format!("{:0width$b}", self.value, width = usize::from(self.bits))
    }
}

impl<'a> Decoded<'a> {
    /// The ID.
    pub fn id(&self) -> Id {
        self.id
    }

    /// The layout it was read with.
    pub fn layout(&self) -> &'a Layout {
        self.layout
    }

    /// Time units since the layout's epoch.
    pub fn time_units(&self) -> u64 {
        (self.id.get() >> self.layout.time_shift()) & self.layout.max_time_units()
    }

    /// The time the ID was made, Unix milliseconds (floored to the tick).
    pub fn timestamp_ms(&self) -> i64 {
        self.layout.timestamp_ms(self.time_units())
    }

    /// The time as a UTC date.
    pub fn time(&self) -> UnixMillis {
        UnixMillis(self.timestamp_ms())
    }

    /// A field's value by name.
    pub fn field(&self, name: &str) -> Option<u64> {
        self.layout.field(name).map(|f| f.extract(self.id.get()))
    }

    /// Every field but time, most significant first, the sequence included.
    pub fn fields(&self) -> impl Iterator<Item = (&'a str, u64)> + 'a {
        let raw = self.id.get();
        self.layout
            .fields()
            .iter()
            .map(move |f| (f.name(), f.extract(raw)))
    }

    /// The sequence number, if the layout has a sequence.
    pub fn sequence(&self) -> Option<u64> {
        self.layout.sequence().map(|f| f.extract(self.id.get()))
    }

    /// The 64 bits as a string of `0` and `1`, most significant first.
    pub fn binary(&self) -> String {
        alloc::format!("{:064b}", self.id.get())
    }

    /// The breakdown: the sign bit (when the layout has one) or the unused top
    /// bits (of a layout narrower than 63 bits), the timestamp and every
    /// field, most significant first; together they cover all 64 bits.
    pub fn segments(&self) -> Vec<Segment<'a>> {
        let mut out = Vec::with_capacity(self.layout.fields().len() + 2);
        let bits = self.layout.bits();
        if bits < 64 {
            out.push(Segment {
                name: if bits == 63 {
                    Layout::SIGN_FIELD
                } else {
                    Layout::UNUSED_FIELD
                },
                bits: 64 - bits,
                value: self.id.get() >> bits,
            });
        }
        out.push(Segment {
            name: Layout::TIME_FIELD,
            bits: self.layout.time_bits(),
            value: self.time_units(),
        });
        out.extend(
            self.fields()
                .zip(self.layout.fields())
                .map(|((name, value), f)| Segment {
                    name,
                    bits: f.bits(),
                    value,
                }),
        );
        out
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::{Decoded, Segment};
    use crate::id::Id;
    use crate::text::TextForm;
    use alloc::string::ToString;
    use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};

    struct Fields<'a, 'b>(&'b Decoded<'a>);

    impl Serialize for Fields<'_, '_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_map(self.0.fields())
        }
    }

    impl Serialize for Segment<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut s = serializer.serialize_struct("Segment", 4)?;
            s.serialize_field("name", self.name)?;
            s.serialize_field("bits", &self.bits)?;
            s.serialize_field("value", &self.value)?;
            s.serialize_field("binary", &self.binary())?;
            s.end()
        }
    }

    /// Every text form but decimal, which is `id` itself.
    struct Text(Id);

    impl Serialize for Text {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(Some(TextForm::ENCODED.len()))?;
            let mut buf = [0u8; TextForm::MAX_LEN];
            for &form in TextForm::ENCODED {
                map.serialize_entry(form.name(), form.encode(self.0, &mut buf))?;
            }
            map.end()
        }
    }

    impl Serialize for Decoded<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut s = serializer.serialize_struct("Decoded", 8)?;
            s.serialize_field("id", &self.id)?;
            s.serialize_field("layout", &*self.layout.name())?;
            s.serialize_field("timestamp_ms", &self.timestamp_ms())?;
            s.serialize_field("time", &self.time().to_string())?;
            s.serialize_field("fields", &Fields(self))?;
            s.serialize_field("binary", &self.binary())?;
            s.serialize_field("segments", &self.segments())?;
            s.serialize_field("text", &Text(self.id))?;
            s.end()
        }
    }
}
