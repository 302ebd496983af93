use alloc::borrow::Cow;
use alloc::string::ToString;
use alloc::vec::Vec;
use core::fmt;

use crate::error::{Error, Repr};
use crate::id::Id;

/// The largest value a field of `bits` bits holds (`bits` is 0 to 63 here).
const fn max_of(bits: u8) -> u64 {
    (1u64 << bits) - 1
}

/// One field below the time field: a name and a width.
///
/// ```
/// let layout = snowflake::Layout::twitter();
/// let machine = layout.field("machine").unwrap();
/// assert_eq!((machine.bits(), machine.shift(), machine.max()), (5, 12, 31));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    name: Cow<'static, str>,
    bits: u8,
    shift: u8,
}

impl Field {
    /// The field's name, e.g. `machine`.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::twitter().fields()[0].name(), "datacenter");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The field's width in bits.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::twitter().fields()[2].bits(), 12);
    /// ```
    pub const fn bits(&self) -> u8 {
        self.bits
    }

    /// How far the field is shifted left in the ID.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::twitter().fields()[0].shift(), 17);
    /// ```
    pub const fn shift(&self) -> u8 {
        self.shift
    }

    /// The largest value the field holds, `2^bits - 1`.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::twitter().fields()[2].max(), 4095);
    /// ```
    pub const fn max(&self) -> u64 {
        max_of(self.bits)
    }

    /// The field's value in the 64 bits of an ID.
    ///
    /// ```
    /// let twitter = snowflake::Layout::twitter();
    /// assert_eq!(twitter.fields()[2].extract(4194439168 + 7), 7);
    /// ```
    pub const fn extract(&self, raw: u64) -> u64 {
        (raw >> self.shift) & self.max()
    }

    fn out_of_range(&self, value: impl ToString) -> Error {
        Error::new(Repr::OutOfRange {
            field: self.name.to_string(),
            value: value.to_string(),
            max: self.max(),
            bits: self.bits,
        })
    }

    /// Checks `value` against the field's width.
    #[inline]
    pub(crate) fn check(&self, value: u64) -> Result<u64, Error> {
        if value > self.max() {
            return Err(self.out_of_range(value));
        }
        Ok(value)
    }
}

/// How the 64 bits of an ID are shared out: an epoch, a tick, the time field
/// and the fields below it, most significant first.
///
/// When the widths add up to 63 the top bit is a reserved zero sign bit, so
/// IDs stay positive as an `i64`; when they add up to 64 there is none. They
/// may add up to fewer: the bits above are then unused and always zero, so
/// that, say, a 53-bit layout's IDs fit in a JavaScript number.
///
/// ```
/// use snowflake::Layout;
///
/// let twitter = Layout::twitter();
/// assert_eq!(twitter.epoch_ms(), 1288834974657);
/// assert!(twitter.has_sign_bit());
/// let custom: Layout = "time:29,worker:21,sequence:13".parse()?;
/// assert_eq!(custom.sequence().unwrap().bits(), 13);
/// # Ok::<(), snowflake::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    name: Option<Cow<'static, str>>,
    epoch_ms: i64,
    tick_ms: u64,
    time_bits: u8,
    time_shift: u8,
    fields: Vec<Field>,
    sequence: Option<usize>,
}

/// Builds a custom [`Layout`]; see [`Layout::builder`].
#[derive(Clone, Debug)]
pub struct LayoutBuilder {
    name: Option<Cow<'static, str>>,
    epoch_ms: i64,
    tick_ms: u64,
    time_bits: u8,
    fields: Vec<(Cow<'static, str>, u8)>,
    sequence: Option<usize>,
}

impl LayoutBuilder {
    /// The epoch in Unix milliseconds (default 0).
    pub fn epoch_ms(mut self, epoch_ms: i64) -> Self {
        self.epoch_ms = epoch_ms;
        self
    }

    /// Milliseconds per time unit (default 1).
    pub fn tick_ms(mut self, tick_ms: u64) -> Self {
        self.tick_ms = tick_ms;
        self
    }

    /// The width of the time field.
    pub fn time_bits(mut self, bits: u8) -> Self {
        self.time_bits = bits;
        self
    }

    /// Appends a field below the ones added so far.
    pub fn field(mut self, name: impl Into<Cow<'static, str>>, bits: u8) -> Self {
        self.fields.push((name.into(), bits));
        self
    }

    /// Appends the sequence field: the counter a generator increments.
    pub fn sequence(mut self, name: impl Into<Cow<'static, str>>, bits: u8) -> Self {
        self.sequence = Some(self.fields.len());
        self.field(name, bits)
    }

    /// Gives the layout a name of its own; only presets have one, so that
    /// a custom layout is always shown by its spec.
    pub(crate) fn named(mut self, name: &'static str) -> Self {
        self.name = Some(Cow::Borrowed(name));
        self
    }

    /// Validates widths, the total, names and the time range.
    ///
    /// ```
    /// use snowflake::Layout;
    ///
    /// let err = Layout::builder().time_bits(41).field("a", 5).field("a", 17).build().unwrap_err();
    /// assert_eq!(err.to_string(), "invalid layout: field \"a\" appears twice");
    /// ```
    pub fn build(self) -> Result<Layout, Error> {
        // 63 bits of time units would end past i64 milliseconds.
        if !(1..=62).contains(&self.time_bits) {
            return Err(Error::invalid_layout(alloc::format!(
                "the time field has {} bits; it needs 1 to 62",
                self.time_bits
            )));
        }
        let mut total = u32::from(self.time_bits);
        for (i, (name, bits)) in self.fields.iter().enumerate() {
            validate_name(name)?;
            if *bits == 0 {
                return Err(Error::invalid_layout(alloc::format!(
                    "field {name:?} needs at least 1 bit"
                )));
            }
            if self.fields[..i].iter().any(|(other, _)| other == name) {
                return Err(Error::invalid_layout(alloc::format!(
                    "field {name:?} appears twice"
                )));
            }
            total += u32::from(*bits);
        }
        if total > 64 {
            return Err(Error::invalid_layout(alloc::format!(
                "the widths add up to {total} bits; an ID holds at most 64 (63 keep a zero \
                 sign bit, fewer leave the top bits zero)"
            )));
        }
        let mut shift = total as u8;
        let time_shift = shift - self.time_bits;
        shift = time_shift;
        let fields = self
            .fields
            .into_iter()
            .map(|(name, bits)| {
                shift -= bits;
                Field { name, bits, shift }
            })
            .collect();
        let layout = Layout {
            name: self.name,
            epoch_ms: self.epoch_ms,
            tick_ms: 1,
            time_bits: self.time_bits,
            time_shift,
            fields,
            sequence: self.sequence,
        };
        layout
            .with_epoch_ms(self.epoch_ms)?
            .with_tick_ms(self.tick_ms)
    }
}

fn validate_name(name: &str) -> Result<(), Error> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        return Err(Error::invalid_layout(alloc::format!(
            "field name {name:?} must be 1 to 32 characters of a-z, 0-9 and _, starting with a letter"
        )));
    }
    if [
        Layout::TIME_FIELD,
        "time",
        Layout::SIGN_FIELD,
        Layout::UNUSED_FIELD,
    ]
    .contains(&name)
    {
        return Err(Error::invalid_layout(alloc::format!(
            "field name {name:?} is reserved; the time field comes first, and the sign bit and \
             unused top bits are implied"
        )));
    }
    Ok(())
}

impl Layout {
    /// The name the time field goes by in breakdowns and custom layouts.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::TIME_FIELD, "timestamp");
    /// ```
    pub const TIME_FIELD: &str = "timestamp";

    /// The name of the reserved top bit in breakdowns.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::SIGN_FIELD, "sign");
    /// ```
    pub const SIGN_FIELD: &str = "sign";

    /// The name of the unused top bits of a layout narrower than 63 bits,
    /// in breakdowns.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::UNUSED_FIELD, "unused");
    /// ```
    pub const UNUSED_FIELD: &str = "unused";

    /// The largest integer a JavaScript number holds exactly, 2^53 − 1
    /// (`Number.MAX_SAFE_INTEGER`).
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::JS_MAX_SAFE, 9007199254740991);
    /// ```
    pub const JS_MAX_SAFE: u64 = (1 << 53) - 1;

    /// The field name that marks the sequence in a custom layout.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::SEQUENCE_FIELD, "sequence");
    /// ```
    pub const SEQUENCE_FIELD: &str = "sequence";

    /// Starts a custom layout.
    ///
    /// ```
    /// use snowflake::Layout;
    ///
    /// // Baidu uid-generator's test layout: seconds since 2016-09-20.
    /// let baidu = Layout::builder()
    ///     .epoch_ms(1474300800000)
    ///     .tick_ms(1000)
    ///     .time_bits(29)
    ///     .field("worker", 21)
    ///     .sequence("sequence", 13)
    ///     .build()?;
    /// assert_eq!(baidu.to_string(), "time:29,worker:21,sequence:13");
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn builder() -> LayoutBuilder {
        LayoutBuilder {
            name: None,
            epoch_ms: 0,
            tick_ms: 1,
            time_bits: 0,
            fields: Vec::new(),
            sequence: None,
        }
    }

    /// This layout with another epoch.
    ///
    /// ```
    /// let l = snowflake::Layout::twitter().with_epoch_ms(0)?;
    /// assert_eq!(l.compose(1000, &[])?.get(), 1000 << 22);
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn with_epoch_ms(mut self, epoch_ms: i64) -> Result<Layout, Error> {
        self.epoch_ms = epoch_ms;
        self.check_time_range("epoch", epoch_ms)?;
        Ok(self)
    }

    /// This layout with another tick (milliseconds per time unit, at least 1).
    ///
    /// ```
    /// let l = snowflake::Layout::twitter().with_tick_ms(1000)?;
    /// assert_eq!(l.tick_ms(), 1000);
    /// assert!(snowflake::Layout::twitter().with_tick_ms(0).is_err());
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn with_tick_ms(mut self, tick_ms: u64) -> Result<Layout, Error> {
        if tick_ms == 0 {
            return Err(Error::new(Repr::InvalidSetting {
                field: "tick_ms",
                value: "0".into(),
                allowed: "a tick is at least 1 ms",
            }));
        }
        self.tick_ms = tick_ms;
        self.check_time_range("tick_ms", tick_ms)?;
        Ok(self)
    }

    fn check_time_range(&self, field: &'static str, value: impl ToString) -> Result<(), Error> {
        let end = i128::from(self.epoch_ms)
            + (i128::from(self.max_time_units()) + 1) * i128::from(self.tick_ms);
        if end > i128::from(i64::MAX) {
            return Err(Error::new(Repr::InvalidSetting {
                field,
                value: value.to_string(),
                allowed: "the layout's last time would not fit in i64 milliseconds",
            }));
        }
        Ok(())
    }

    /// The preset's name, or the custom layout written out.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::twitter().name(), "twitter");
    /// ```
    pub fn name(&self) -> Cow<'_, str> {
        match &self.name {
            Some(name) => Cow::Borrowed(name),
            None => Cow::Owned(self.spec()),
        }
    }

    /// The epoch, Unix milliseconds.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::discord().epoch_ms(), 1420070400000);
    /// ```
    pub const fn epoch_ms(&self) -> i64 {
        self.epoch_ms
    }

    /// Milliseconds per time unit.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::twitter().tick_ms(), 1);
    /// ```
    pub const fn tick_ms(&self) -> u64 {
        self.tick_ms
    }

    /// The width of the time field.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::twitter().time_bits(), 41);
    /// ```
    pub const fn time_bits(&self) -> u8 {
        self.time_bits
    }

    /// How far the time field is shifted left.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::twitter().time_shift(), 22);
    /// ```
    pub const fn time_shift(&self) -> u8 {
        self.time_shift
    }

    /// The largest number of time units the time field holds.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::twitter().max_time_units(), (1 << 41) - 1);
    /// ```
    pub const fn max_time_units(&self) -> u64 {
        max_of(self.time_bits)
    }

    /// Whether the top bit is a reserved zero sign bit (the widths add up to 63).
    ///
    /// ```
    /// assert!(!snowflake::Layout::discord().has_sign_bit());
    /// ```
    pub const fn has_sign_bit(&self) -> bool {
        self.bits() == 63
    }

    /// How many bits the widths add up to, 64 at most; the bits above are
    /// zero in every ID.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::twitter().bits(), 63);
    /// assert_eq!(snowflake::Layout::js53().bits(), 53);
    /// ```
    pub const fn bits(&self) -> u8 {
        self.time_shift + self.time_bits
    }

    /// Whether every ID of the layout is at most 2^53 − 1, so that
    /// JavaScript can hold it as a number without losing precision.
    ///
    /// ```
    /// assert!(snowflake::Layout::js53().is_js_safe());
    /// assert!(!snowflake::Layout::twitter().is_js_safe());
    /// ```
    pub const fn is_js_safe(&self) -> bool {
        self.max_id().get() <= Layout::JS_MAX_SAFE
    }

    /// The fields below the time field, most significant first.
    ///
    /// ```
    /// let names: Vec<_> = snowflake::Layout::twitter().fields().iter().map(|f| f.name().to_string()).collect();
    /// assert_eq!(names, ["datacenter", "machine", "sequence"]);
    /// ```
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// A field by name.
    ///
    /// ```
    /// assert!(snowflake::Layout::twitter().field("worker").is_none());
    /// ```
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The sequence field, if the layout has one.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::discord().sequence().unwrap().name(), "increment");
    /// ```
    pub fn sequence(&self) -> Option<&Field> {
        self.sequence.map(|i| &self.fields[i])
    }

    /// The node fields: every field but the sequence.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::twitter().node_fields().count(), 2);
    /// ```
    pub fn node_fields(&self) -> impl Iterator<Item = &Field> {
        self.fields
            .iter()
            .enumerate()
            .filter(move |(i, _)| Some(*i) != self.sequence)
            .map(|(_, f)| f)
    }

    /// How many distinct nodes the node fields address (1,024 for twitter).
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::twitter().node_count(), 1024);
    /// ```
    pub fn node_count(&self) -> u128 {
        self.node_fields().map(|f| 1u128 << f.bits).product()
    }

    /// IDs one node can issue per time unit (4,096 for twitter).
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::twitter().ids_per_tick(), Some(4096));
    /// ```
    pub fn ids_per_tick(&self) -> Option<u64> {
        self.sequence().map(|s| s.max() + 1)
    }

    /// IDs one node can issue per millisecond (25.6 for sonyflake's 10 ms tick).
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::sonyflake().ids_per_ms(), Some(25.6));
    /// ```
    pub fn ids_per_ms(&self) -> Option<f64> {
        self.ids_per_tick().map(|n| n as f64 / self.tick_ms as f64)
    }

    /// The last Unix millisecond the time field can encode.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::twitter().last_timestamp_ms(), 3487858230208);
    /// ```
    pub fn last_timestamp_ms(&self) -> i64 {
        self.ms_after_epoch(self.max_time_units(), self.tick_ms - 1)
    }

    /// The Unix millisecond `units` time units and `extra_ms` after the
    /// epoch, for `units` up to the layout's last and `extra_ms` within its
    /// tick. Construction checked that the end of the time field fits in
    /// i64, so the sum taken modulo 2^64 is the sum itself: no 128-bit
    /// arithmetic, which compose and decode would pay for on every call
    /// where it is a library call (WebAssembly).
    #[inline]
    fn ms_after_epoch(&self, units: u64, extra_ms: u64) -> i64 {
        (self.epoch_ms as u64)
            .wrapping_add(units.wrapping_mul(self.tick_ms))
            .wrapping_add(extra_ms) as i64
    }

    /// The largest ID the layout can hold: every one of its [`bits`](Layout::bits)
    /// set, so `i64::MAX` with a sign bit and `u64::MAX` with all 64.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::twitter().max_id().get(), i64::MAX as u64);
    /// assert_eq!(snowflake::Layout::discord().max_id().get(), u64::MAX);
    /// assert_eq!(snowflake::Layout::js53().max_id().get(), (1 << 53) - 1);
    /// ```
    pub const fn max_id(&self) -> Id {
        Id::new(u64::MAX >> (64 - self.bits()))
    }

    /// Time units since the epoch for a Unix-millisecond timestamp, floored to
    /// the tick; an error past either end of the time field.
    ///
    /// ```
    /// let sony = snowflake::Layout::sonyflake();
    /// assert_eq!(sony.time_units(1409529600019)?, 1);
    /// assert!(sony.time_units(1409529599999).is_err());
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    #[inline]
    pub fn time_units(&self, timestamp_ms: i64) -> Result<u64, Error> {
        if timestamp_ms < self.epoch_ms {
            return Err(Error::new(Repr::BeforeEpoch {
                timestamp: timestamp_ms,
                epoch: self.epoch_ms,
            }));
        }
        let last = self.last_timestamp_ms();
        if timestamp_ms > last {
            return Err(Error::new(Repr::AfterEnd {
                timestamp: timestamp_ms,
                last,
            }));
        }
        // Both are i64 and timestamp >= epoch, so the difference fits in u64.
        Ok(timestamp_ms.abs_diff(self.epoch_ms) / self.tick_ms)
    }

    /// The Unix millisecond at which a number of time units begins.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::twitter().timestamp_ms(1000), 1288834975657);
    /// ```
    pub fn timestamp_ms(&self, units: u64) -> i64 {
        self.ms_after_epoch(units.min(self.max_time_units()), 0)
    }

    /// Checks a field name against the layout, listing the fields it has.
    pub(crate) fn field_index(&self, name: &str) -> Result<usize, Error> {
        self.fields
            .iter()
            .position(|f| f.name == name)
            .ok_or_else(|| {
                Error::new(Repr::UnknownField {
                    field: name.to_string(),
                    known: self.fields.iter().map(|f| f.name.to_string()).collect(),
                })
            })
    }

    /// The one field-value parser: a whole number within the field's width,
    /// with an error that names the field, the value and the range.
    ///
    /// ```
    /// let twitter = snowflake::Layout::twitter();
    /// assert_eq!(twitter.parse_value("machine", "31")?, 31);
    /// let err = twitter.parse_value("machine", "-1").unwrap_err();
    /// assert_eq!(err.to_string(), "machine -1 is out of range: 0 to 31 (5 bits)");
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn parse_value(&self, field: &str, text: &str) -> Result<u64, Error> {
        let field = &self.fields[self.field_index(field)?];
        let digits = text.strip_prefix('-').unwrap_or(text);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Error::new(Repr::NotANumber {
                field: field.name.to_string(),
                value: text.to_string(),
                max: field.max(),
                bits: field.bits,
            }));
        }
        match text.parse::<u64>() {
            Ok(value) => field.check(value),
            // Negative, or too many digits for u64: out of range either way.
            Err(_) => Err(field.out_of_range(text)),
        }
    }

    /// Composes an ID from a Unix-millisecond timestamp and field values by
    /// name; fields left out are 0. Everything is checked, nothing is masked.
    ///
    /// ```
    /// use snowflake::Layout;
    ///
    /// let discord = Layout::discord();
    /// let id = discord.compose(1462015105796, &[("worker", 1), ("increment", 7)])?;
    /// assert_eq!(id.get(), 175928847299117063);
    /// let err = discord.compose(1462015105796, &[("machine", 1)]).unwrap_err();
    /// assert_eq!(err.to_string(), "the layout has no field \"machine\"; its fields are worker, process, increment");
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn compose(&self, timestamp_ms: i64, values: &[(&str, u64)]) -> Result<Id, Error> {
        let mut raw = self.time_units(timestamp_ms)? << self.time_shift;
        for (i, (name, value)) in values.iter().enumerate() {
            let index = self.field_index(name)?;
            if values[..i].iter().any(|(other, _)| other == name) {
                return Err(Error::new(Repr::DuplicateField {
                    field: name.to_string(),
                }));
            }
            let field = &self.fields[index];
            raw |= field.check(*value)? << field.shift;
        }
        Ok(Id::new(raw))
    }

    /// [`compose`](Layout::compose) with each field given by its place in
    /// [`fields`](Layout::fields) rather than by name: the same checks, in
    /// the order given, and the same errors, for a caller that looked the
    /// names up once (the WebAssembly module does, per layout, so that no
    /// call compares names). A place past the last field is refused.
    ///
    /// ```
    /// use snowflake::Layout;
    ///
    /// let discord = Layout::discord();
    /// let id = discord.compose_placed(1462015105796, &[(0, 1), (2, 7)])?;
    /// assert_eq!(id, discord.compose(1462015105796, &[("worker", 1), ("increment", 7)])?);
    /// let err = discord.compose_placed(1462015105796, &[(0, 32)]).unwrap_err();
    /// assert_eq!(err.to_string(), "worker 32 is out of range: 0 to 31 (5 bits)");
    /// assert!(discord.compose_placed(1462015105796, &[(3, 0)]).is_err());
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    #[inline]
    pub fn compose_placed(&self, timestamp_ms: i64, values: &[(usize, u64)]) -> Result<Id, Error> {
        let mut raw = self.time_units(timestamp_ms)? << self.time_shift;
        for (i, &(place, value)) in values.iter().enumerate() {
            let Some(field) = self.fields.get(place) else {
                return Err(Error::new(Repr::InvalidSetting {
                    field: "field",
                    value: place.to_string(),
                    allowed: "a field's place is below the layout's number of fields",
                }));
            };
            if values[..i].iter().any(|&(other, _)| other == place) {
                return Err(Error::new(Repr::DuplicateField {
                    field: field.name.to_string(),
                }));
            }
            raw |= field.check(value)? << field.shift;
        }
        Ok(Id::new(raw))
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::Layout;
    use crate::time::UnixMillis;
    use alloc::string::ToString;
    use serde::ser::{Serialize, SerializeSeq, SerializeStruct, Serializer};

    struct Fields<'a>(&'a Layout);

    impl Serialize for Fields<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut seq = serializer.serialize_seq(Some(self.0.fields().len()))?;
            for f in self.0.fields() {
                seq.serialize_element(&(f.name(), f.bits()))?;
            }
            seq.end()
        }
    }

    /// The one JSON description of a layout, shared by `snowflake layouts
    /// --json` and `GET /api/v1/layouts`. Fields are `[name, bits]` pairs,
    /// most significant first.
    impl Serialize for Layout {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut s = serializer.serialize_struct("Layout", 16)?;
            s.serialize_field("name", &*self.name())?;
            s.serialize_field("spec", &self.spec())?;
            s.serialize_field("epoch_ms", &self.epoch_ms)?;
            s.serialize_field("epoch", &UnixMillis(self.epoch_ms).to_string())?;
            s.serialize_field("tick_ms", &self.tick_ms)?;
            s.serialize_field("sign_bit", &self.has_sign_bit())?;
            s.serialize_field("bits", &self.bits())?;
            s.serialize_field("max_id", &self.max_id())?;
            s.serialize_field("js_safe", &self.is_js_safe())?;
            s.serialize_field("time_bits", &self.time_bits)?;
            s.serialize_field("fields", &Fields(self))?;
            s.serialize_field("sequence", &self.sequence().map(|f| f.name()))?;
            s.serialize_field("last_ms", &self.last_timestamp_ms())?;
            s.serialize_field("last", &UnixMillis(self.last_timestamp_ms()).to_string())?;
            s.serialize_field("ids_per_ms", &self.ids_per_ms())?;
            s.serialize_field("nodes", &self.node_count())?;
            s.end()
        }
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composing_by_place_is_composing_by_name() {
        for layout in Layout::presets() {
            let t = layout.epoch_ms() + 12_345;
            let named: Vec<(&str, u64)> = layout
                .fields()
                .iter()
                .map(|f| (f.name(), f.max()))
                .collect();
            let placed: Vec<(usize, u64)> = (0..named.len()).map(|i| (i, named[i].1)).collect();
            assert_eq!(layout.compose_placed(t, &placed), layout.compose(t, &named));
            // Out of range, duplicated, the time: the same error, in the same order.
            let last = named.len() - 1;
            let over = [(last, u64::MAX), (0, u64::MAX)];
            let over_named = [(named[last].0, u64::MAX), (named[0].0, u64::MAX)];
            assert_eq!(
                layout.compose_placed(t, &over),
                layout.compose(t, &over_named)
            );
            let twice = [(0, 0), (0, 0)];
            let twice_named = [(named[0].0, 0), (named[0].0, 0)];
            assert_eq!(
                layout.compose_placed(t, &twice),
                layout.compose(t, &twice_named)
            );
            assert_eq!(
                layout.compose_placed(i64::MIN, &[]),
                layout.compose(i64::MIN, &[])
            );
            let past = layout.compose_placed(t, &[(named.len(), 0)]).unwrap_err();
            assert_eq!(past.field(), Some("field"));
        }
    }

    #[test]
    fn huge_epoch_is_rejected() {
        assert!(Layout::twitter().with_epoch_ms(i64::MAX - 10).is_err());
        assert!(Layout::mastodon().with_tick_ms(1 << 20).is_err());
    }
}
