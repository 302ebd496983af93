//! The IDs a layout can produce in a time window, for range queries.

use alloc::string::String;
use core::ops::RangeInclusive;

use crate::error::{Error, Repr};
use crate::id::Id;
use crate::layout::Layout;

impl Layout {
    /// The smallest and largest ID the layout can produce between two
    /// Unix-millisecond times, both inclusive, for `WHERE id BETWEEN a AND b`.
    /// Both ends are floored to the tick, so the range covers every ID whose
    /// time unit overlaps the window.
    ///
    /// ```
    /// let twitter = snowflake::Layout::twitter();
    /// let bounds = twitter.bounds(1288834975657, 1288834975657)?;
    /// assert_eq!(bounds.first().get(), 1000 << 22);
    /// assert_eq!(bounds.last().get(), (1000 << 22) | ((1 << 22) - 1));
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn bounds(&self, from_ms: i64, to_ms: i64) -> Result<Bounds, Error> {
        if from_ms > to_ms {
            return Err(Error::new(Repr::InvalidWindow {
                from: from_ms,
                to: to_ms,
            }));
        }
        let shift = self.time_shift();
        let first = self.time_units(from_ms)? << shift;
        // Every bit below the time field set: the last ID of the last unit.
        let last = (self.time_units(to_ms)? << shift) | ((1u64 << shift) - 1);
        Ok(Bounds {
            layout: self.name().into_owned(),
            from_ms,
            to_ms,
            first: Id::new(first),
            last: Id::new(last),
        })
    }
}

/// The IDs a layout can produce in a time window; see [`Layout::bounds`].
///
/// With the `serde` feature it serialises as
/// `{"layout","from_ms","from","to_ms","to","first","last"}`, IDs as strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bounds {
    layout: String,
    from_ms: i64,
    to_ms: i64,
    first: Id,
    last: Id,
}

impl Bounds {
    /// The smallest ID of the window.
    pub fn first(&self) -> Id {
        self.first
    }

    /// The largest ID of the window.
    pub fn last(&self) -> Id {
        self.last
    }

    /// The window's start, Unix milliseconds.
    pub fn from_ms(&self) -> i64 {
        self.from_ms
    }

    /// The window's end, Unix milliseconds.
    pub fn to_ms(&self) -> i64 {
        self.to_ms
    }

    /// `first..=last`.
    pub fn range(&self) -> RangeInclusive<Id> {
        self.first..=self.last
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::Bounds;
    use crate::time::UnixMillis;
    use alloc::string::ToString;
    use serde::ser::{Serialize, SerializeStruct, Serializer};

    impl Serialize for Bounds {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut s = serializer.serialize_struct("Bounds", 7)?;
            s.serialize_field("layout", &self.layout)?;
            s.serialize_field("from_ms", &self.from_ms)?;
            s.serialize_field("from", &UnixMillis(self.from_ms).to_string())?;
            s.serialize_field("to_ms", &self.to_ms)?;
            s.serialize_field("to", &UnixMillis(self.to_ms).to_string())?;
            s.serialize_field("first", &self.first)?;
            s.serialize_field("last", &self.last)?;
            s.end()
        }
    }
}
