//! A layout judged against [`Requirements`]: how much headroom it leaves on time,
//! nodes and rate, and every way it falls short, in words.

use alloc::vec::Vec;
use core::fmt;

use snowflake::{Layout, TimeLeft, UnixMillis};

use crate::requirements::Requirements;

/// One way a layout falls short of [`Requirements`]. Each displays as a sentence
/// that says what happens and when.
///
/// ```
/// use snowflake::Layout;
/// use snowflake_ops::{Gap, Requirements};
///
/// let needs = Requirements::new(1000, 2048, 10, 1735689600000)?;
/// let fit = needs.check(&Layout::twitter());
/// assert!(matches!(fit.gaps(), [Gap::Nodes { capacity: 1024, needed: 2048 }]));
/// assert_eq!(fit.gaps()[0].to_string(), "it addresses 1024 nodes, fewer than the 2048 asked for");
/// # Ok::<(), snowflake_ops::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Gap {
    /// The time field runs out before the lifetime ends.
    Lifetime {
        /// The first millisecond the time field cannot hold.
        runs_out_ms: i64,
        /// The start of the lifetime.
        from_ms: i64,
        /// The end of the lifetime.
        until_ms: i64,
        /// The lifetime asked for.
        years: u32,
    },
    /// The epoch is after the start of the lifetime.
    StartsBeforeEpoch {
        /// The layout's epoch.
        epoch_ms: i64,
        /// The start of the lifetime.
        from_ms: i64,
    },
    /// The node fields address fewer nodes than asked for.
    Nodes {
        /// How many nodes the layout addresses.
        capacity: u128,
        /// How many were asked for.
        needed: u64,
    },
    /// One node cannot issue the peak rate.
    Rate {
        /// IDs per time unit per node.
        per_tick: u64,
        /// Milliseconds per time unit.
        tick_ms: u64,
        /// The peak rate asked for, a second per node.
        needed_per_sec: u64,
    },
    /// There is no sequence field, so no generator can run on the layout.
    NoSequence,
    /// The IDs take more bits than a JavaScript number holds exactly.
    NotJsSafe {
        /// The layout's width.
        bits: u8,
    },
    /// The layout uses all 64 bits, and its IDs pass 2^63 (negative as
    /// signed integers) before the lifetime ends.
    TurnsNegative {
        /// The first millisecond whose IDs are negative as `i64`.
        at_ms: i64,
    },
}

impl Gap {
    /// A short name for the kind, as the JSON form writes it: `lifetime`,
    /// `epoch`, `nodes`, `rate`, `no_sequence`, `js_safe`, `negative`.
    ///
    /// ```
    /// assert_eq!(snowflake_ops::Gap::NoSequence.kind(), "no_sequence");
    /// ```
    pub const fn kind(&self) -> &'static str {
        match self {
            Gap::Lifetime { .. } => "lifetime",
            Gap::StartsBeforeEpoch { .. } => "epoch",
            Gap::Nodes { .. } => "nodes",
            Gap::Rate { .. } => "rate",
            Gap::NoSequence => "no_sequence",
            Gap::NotJsSafe { .. } => "js_safe",
            Gap::TurnsNegative { .. } => "negative",
        }
    }
}

/// A whole number of IDs a second from IDs per tick, rounded down.
fn per_sec_floor(per_tick: u64, tick_ms: u64) -> u128 {
    u128::from(per_tick) * 1000 / u128::from(tick_ms)
}

impl fmt::Display for Gap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Gap::Lifetime {
                runs_out_ms,
                from_ms,
                until_ms,
                years,
            } => {
                write!(
                    f,
                    "the time field runs out at {}, ",
                    UnixMillis(runs_out_ms)
                )?;
                if runs_out_ms <= from_ms {
                    write!(f, "before the lifetime starts ({})", UnixMillis(from_ms))
                } else {
                    // How long it lasts from the start, in the words of the
                    // time a layout has left.
                    write!(
                        f,
                        "{} into the {years} years asked for (until {})",
                        TimeLeft::new(from_ms, runs_out_ms),
                        UnixMillis(until_ms)
                    )
                }
            }
            Gap::StartsBeforeEpoch { epoch_ms, from_ms } => write!(
                f,
                "its epoch, {}, is after the start of the lifetime, {}; it cannot issue IDs \
                 dated before its epoch",
                UnixMillis(epoch_ms),
                UnixMillis(from_ms)
            ),
            Gap::Nodes { capacity, needed } => write!(
                f,
                "it addresses {capacity} node{}, fewer than the {needed} asked for",
                if capacity == 1 { "" } else { "s" }
            ),
            Gap::Rate {
                per_tick,
                tick_ms,
                needed_per_sec,
            } => write!(
                f,
                "a node issues at most {per_tick} IDs per {tick_ms} ms tick, {} a second, fewer \
                 than the {needed_per_sec} asked for",
                per_sec_floor(per_tick, tick_ms)
            ),
            Gap::NoSequence => f.write_str(
                "it has no sequence field, so no generator can issue its IDs (name one field \
                 \"sequence\")",
            ),
            Gap::NotJsSafe { bits } => write!(
                f,
                "its IDs take {bits} bits, more than the 53 a JavaScript number holds exactly"
            ),
            Gap::TurnsNegative { at_ms } => write!(
                f,
                "its IDs use all 64 bits and turn negative as signed 64-bit integers (a Java \
                 long, an SQL bigint) from {}, within the lifetime asked for",
                UnixMillis(at_ms)
            ),
        }
    }
}

/// A layout judged against [`Requirements`]: its headroom on each and its
/// [`Gap`]s. Made by [`Requirements::check`], and by [`Requirements::plan`] for the
/// layout it proposes.
///
/// Headroom is capacity over need: 2.0 means twice what was asked for,
/// below 1.0 means short.
///
/// ```
/// use snowflake::Layout;
/// use snowflake_ops::Requirements;
///
/// // Twitter's layout for 1,000 IDs a second on 16 nodes for 50 years from 2025.
/// let fit = Requirements::new(1000, 16, 50, 1735689600000)?.check(&Layout::twitter());
/// assert!(fit.fits());
/// assert_eq!(fit.node_headroom(), 64.0);
/// assert_eq!(fit.rate_per_sec(), Some(4_096_000.0));
/// assert_eq!(fit.rate_headroom(), Some(4096.0));
/// assert_eq!(fit.lifetime().to_string(), "55.5 years");
/// # Ok::<(), snowflake_ops::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Assessment {
    layout: Layout,
    requirements: Requirements,
    gaps: Vec<Gap>,
}

impl Requirements {
    /// Judges an existing layout, with its own epoch and tick, against
    /// these requirements; their tick is not used.
    ///
    /// ```
    /// use snowflake::Layout;
    /// use snowflake_ops::Requirements;
    ///
    /// // Baidu uid-generator's default layout: 28 bits of seconds since 2016-05-20.
    /// let baidu = Layout::parse("time:28,worker:22,sequence:13")?
    ///     .with_tick_ms(1000)?
    ///     .with_epoch_ms(1463702400000)?;
    /// let needs = Requirements::new(8192, 1 << 22, 10, 1463702400000)?;
    /// let fit = needs.check(&baidu);
    /// assert!(!fit.fits());
    /// assert_eq!(fit.gaps()[0].to_string(), "the time field runs out at \
    ///     2024-11-20T21:24:16.000Z, 8.5 years into the 10 years asked for (until 2026-05-20T00:00:00.000Z)");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check(&self, layout: &Layout) -> Assessment {
        let mut gaps = Vec::new();
        let needs = *self;
        if layout.sequence().is_none() {
            gaps.push(Gap::NoSequence);
        }
        let runs_out_ms = layout.runs_out_ms();
        if runs_out_ms < needs.until_ms() {
            gaps.push(Gap::Lifetime {
                runs_out_ms,
                from_ms: needs.from_ms(),
                until_ms: needs.until_ms(),
                years: needs.years(),
            });
        }
        if layout.epoch_ms() > needs.from_ms() {
            gaps.push(Gap::StartsBeforeEpoch {
                epoch_ms: layout.epoch_ms(),
                from_ms: needs.from_ms(),
            });
        }
        let capacity = layout.node_count();
        if capacity < u128::from(needs.nodes()) {
            gaps.push(Gap::Nodes {
                capacity,
                needed: needs.nodes(),
            });
        }
        if let Some(per_tick) = layout.ids_per_tick() {
            // Exact: per_tick IDs in tick_ms against rate IDs in 1000 ms.
            let have = u128::from(per_tick) * 1000;
            let want = u128::from(needs.rate_per_sec()) * u128::from(layout.tick_ms());
            if have < want {
                gaps.push(Gap::Rate {
                    per_tick,
                    tick_ms: layout.tick_ms(),
                    needed_per_sec: needs.rate_per_sec(),
                });
            }
        }
        if needs.js_safe() && !layout.is_js_safe() {
            gaps.push(Gap::NotJsSafe {
                bits: layout.bits(),
            });
        }
        if layout.bits() == 64 {
            // The top bit is the time field's: set from half its range on.
            let at_ms = layout.timestamp_ms(1 << (layout.time_bits() - 1));
            if at_ms < needs.until_ms() {
                gaps.push(Gap::TurnsNegative { at_ms });
            }
        }
        Assessment {
            layout: layout.clone(),
            requirements: needs,
            gaps,
        }
    }
}

impl Assessment {
    /// The layout judged.
    ///
    /// ```
    /// use snowflake::Layout;
    /// use snowflake_ops::Requirements;
    ///
    /// let fit = Requirements::new(1, 1, 1, 1735689600000)?.check(&Layout::discord());
    /// assert_eq!(fit.layout(), &Layout::discord());
    /// # Ok::<(), snowflake_ops::Error>(())
    /// ```
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The requirements it was judged against.
    pub fn requirements(&self) -> &Requirements {
        &self.requirements
    }

    /// Whether it meets every need.
    pub fn fits(&self) -> bool {
        self.gaps.is_empty()
    }

    /// Every way it falls short, most serious first; empty when it fits.
    pub fn gaps(&self) -> &[Gap] {
        &self.gaps
    }

    /// How long the time field lasts from the start of the lifetime.
    pub fn lifetime(&self) -> TimeLeft {
        self.layout.time_left(self.requirements.from_ms())
    }

    /// The lifetime over the one asked for: 2.0 lasts twice as long.
    pub fn time_headroom(&self) -> f64 {
        let asked = self
            .requirements
            .until_ms()
            .abs_diff(self.requirements.from_ms());
        self.lifetime().ms() as f64 / asked as f64
    }

    /// The nodes addressed over the nodes asked for.
    pub fn node_headroom(&self) -> f64 {
        self.layout.node_count() as f64 / self.requirements.nodes() as f64
    }

    /// The most IDs a second one node can issue; `None` without a sequence.
    pub fn rate_per_sec(&self) -> Option<f64> {
        self.layout
            .ids_per_tick()
            .map(|n| n as f64 * 1000.0 / self.layout.tick_ms() as f64)
    }

    /// The rate a node can issue over the peak asked for.
    pub fn rate_headroom(&self) -> Option<f64> {
        self.rate_per_sec()
            .map(|r| r / self.requirements.rate_per_sec() as f64)
    }
}

#[cfg(feature = "serde")]
pub(crate) mod serde_impl {
    use super::{Assessment, Gap};
    use crate::requirements::Requirements;
    use alloc::string::ToString;
    use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};
    use snowflake::UnixMillis;

    /// `{"rate_per_sec","nodes","years","from_ms","from","until_ms","until","tick_ms","width","js_safe"}`.
    impl Serialize for Requirements {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut s = serializer.serialize_struct("Requirements", 10)?;
            s.serialize_field("rate_per_sec", &self.rate_per_sec())?;
            s.serialize_field("nodes", &self.nodes())?;
            s.serialize_field("years", &self.years())?;
            s.serialize_field("from_ms", &self.from_ms())?;
            s.serialize_field("from", &UnixMillis(self.from_ms()).to_string())?;
            s.serialize_field("until_ms", &self.until_ms())?;
            s.serialize_field("until", &UnixMillis(self.until_ms()).to_string())?;
            s.serialize_field("tick_ms", &self.tick_ms())?;
            s.serialize_field("width", &self.width())?;
            s.serialize_field("js_safe", &self.js_safe())?;
            s.end()
        }
    }

    /// `{"kind","message"}`.
    impl Serialize for Gap {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut s = serializer.serialize_struct("Gap", 2)?;
            s.serialize_field("kind", self.kind())?;
            s.serialize_field("message", &self.to_string())?;
            s.end()
        }
    }

    /// Headroom and capacity of one dimension.
    struct Room {
        capacity: f64,
        needed: f64,
        headroom: f64,
    }

    impl Serialize for Room {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut s = serializer.serialize_struct("Room", 3)?;
            s.serialize_field("capacity", &self.capacity)?;
            s.serialize_field("needed", &self.needed)?;
            s.serialize_field("headroom", &self.headroom)?;
            s.end()
        }
    }

    /// Writes an assessment's entries into a map that may hold more (the
    /// proposal's).
    pub(crate) fn entries<M: SerializeMap>(map: &mut M, fit: &Assessment) -> Result<(), M::Error> {
        let layout = fit.layout();
        let lifetime = fit.lifetime();
        map.serialize_entry("layout", &layout.spec())?;
        map.serialize_entry("name", &*layout.name())?;
        map.serialize_entry("tick_ms", &layout.tick_ms())?;
        map.serialize_entry("epoch_ms", &layout.epoch_ms())?;
        map.serialize_entry("epoch", &UnixMillis(layout.epoch_ms()).to_string())?;
        map.serialize_entry("runs_out_ms", &lifetime.runs_out_ms())?;
        map.serialize_entry("runs_out", &UnixMillis(lifetime.runs_out_ms()).to_string())?;
        map.serialize_entry("lifetime", &lifetime)?;
        map.serialize_entry("bits", &layout.bits())?;
        map.serialize_entry("js_safe", &layout.is_js_safe())?;
        map.serialize_entry("fits", &fit.fits())?;
        let years = fit.requirements().years();
        let rate = fit.rate_per_sec().map(|capacity| Room {
            capacity,
            needed: fit.requirements().rate_per_sec() as f64,
            headroom: fit.rate_headroom().unwrap_or(0.0),
        });
        let headroom = [
            (
                "years",
                Some(Room {
                    capacity: lifetime.years(),
                    needed: f64::from(years),
                    headroom: fit.time_headroom(),
                }),
            ),
            (
                "nodes",
                Some(Room {
                    capacity: layout.node_count() as f64,
                    needed: fit.requirements().nodes() as f64,
                    headroom: fit.node_headroom(),
                }),
            ),
            ("rate_per_sec", rate),
        ];
        map.serialize_entry("headroom", &Headroom(headroom))?;
        map.serialize_entry("shortfalls", fit.gaps())
    }

    struct Headroom([(&'static str, Option<Room>); 3]);

    impl Serialize for Headroom {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(Some(3))?;
            for (name, room) in &self.0 {
                map.serialize_entry(name, room)?;
            }
            map.end()
        }
    }

    /// An assessment's entries and `"needs"` (the requirements): what
    /// `snowflake plan --layout` prints.
    impl Serialize for Assessment {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(None)?;
            entries(&mut map, self)?;
            map.serialize_entry("needs", self.requirements())?;
            map.end()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    const JAN_2025: i64 = 1735689600000;

    #[test]
    fn baidu_default_runs_out_in_november_2024() {
        // 2^28 seconds from 2016-05-20T00:00:00Z (1463702400 s) is
        // 1463702400 + 268435456 = 1732137856 s. From 2016-05-20 to
        // 2024-05-20 are 8 × 365 + 2 leap days (2020-02-29, 2024-02-29) =
        // 2922 days; to 2024-11-20, 11 + 30 + 31 + 31 + 30 + 31 + 20 = 184
        // more: 3106 days = 268358400 s. The rest, 268435456 − 268358400 =
        // 77056 s, is 21 h 24 min 16 s: 2024-11-20T21:24:16Z.
        let baidu = Layout::parse("time:28,worker:22,sequence:13")
            .unwrap()
            .with_tick_ms(1000)
            .unwrap()
            .with_epoch_ms(1463702400000)
            .unwrap();
        assert_eq!(baidu.runs_out_ms(), 1732137856000);
        assert_eq!(
            UnixMillis(baidu.runs_out_ms()).to_string(),
            "2024-11-20T21:24:16.000Z"
        );
        // Its own needs: 8,192 IDs a second (13 bits a second), 2^22 workers.
        let needs = Requirements::new(8192, 1 << 22, 10, 1463702400000).unwrap();
        let fit = needs.check(&baidu);
        assert_eq!(fit.gaps().len(), 1, "{:?}", fit.gaps());
        assert_eq!(fit.gaps()[0].kind(), "lifetime");
        assert_eq!(fit.node_headroom(), 1.0);
        assert_eq!(fit.rate_headroom(), Some(1.0));
        // 3106 days + 77056 s of the 3652 days asked for.
        let lived = 3106.0 * 86_400_000.0 + 77_056_000.0;
        assert_eq!(fit.time_headroom(), lived / (3652.0 * 86_400_000.0));
        // Seen today, it has run out.
        assert!(baidu.time_left(JAN_2025).is_exhausted());
        // One more second's worth of rate, and it falls short on that too.
        let fit = Requirements::new(8193, 1, 1, JAN_2025)
            .unwrap()
            .check(&baidu);
        let kinds: Vec<&str> = fit.gaps().iter().map(Gap::kind).collect();
        assert_eq!(kinds, ["lifetime", "rate"]);
        assert_eq!(
            fit.gaps()[0].to_string(),
            "the time field runs out at 2024-11-20T21:24:16.000Z, before the lifetime starts \
             (2025-01-01T00:00:00.000Z)"
        );
        assert_eq!(
            fit.gaps()[1].to_string(),
            "a node issues at most 8192 IDs per 1000 ms tick, 8192 a second, fewer than the 8193 \
             asked for"
        );
    }

    #[test]
    fn a_fitting_layout_has_no_shortfall_and_its_headroom() {
        let needs = Requirements::new(4_096_000, 1024, 55, JAN_2025).unwrap();
        let fit = needs.check(&Layout::twitter());
        assert!(fit.fits(), "{:?}", fit.gaps());
        assert_eq!(fit.rate_headroom(), Some(1.0));
        assert_eq!(fit.node_headroom(), 1.0);
        assert!(fit.time_headroom() > 1.0 && fit.time_headroom() < 1.01);
        // A year more than it has.
        let fit = Requirements::new(1, 1, 56, JAN_2025)
            .unwrap()
            .check(&Layout::twitter());
        assert_eq!(fit.gaps()[0].kind(), "lifetime");
        assert!(fit.time_headroom() < 1.0);
    }

    #[test]
    fn every_other_shortfall_is_found_and_worded() {
        let needs = Requirements::new(1, 2, 10, JAN_2025)
            .unwrap()
            .with_js_safe(true);
        let no_seq = Layout::parse("time:41,node:22")
            .unwrap()
            .with_epoch_ms(JAN_2025 + 1)
            .unwrap();
        let fit = needs.check(&no_seq);
        let kinds: Vec<&str> = fit.gaps().iter().map(Gap::kind).collect();
        assert_eq!(kinds, ["no_sequence", "epoch", "js_safe"]);
        assert_eq!(fit.rate_per_sec(), None);
        assert_eq!(
            fit.gaps()[2].to_string(),
            "its IDs take 63 bits, more than the 53 a JavaScript number holds exactly"
        );
        assert!(fit.gaps()[1].to_string().starts_with(
            "its epoch, 2025-01-01T00:00:00.001Z, is after the start of the lifetime, \
             2025-01-01T00:00:00.000Z"
        ));
        let one_node = Layout::parse("time:48,sequence:15").unwrap();
        let fit = needs.check(&one_node);
        assert_eq!(
            fit.gaps()[0].to_string(),
            "it addresses 1 node, fewer than the 2 asked for"
        );
        // Discord's 64 bits: its IDs pass 2^63 at half the time field,
        // 2^41 ms after 2015-01-01.
        let needs = Requirements::new(1, 1, 60, JAN_2025).unwrap();
        let fit = needs.check(&Layout::discord());
        assert_eq!(fit.gaps().len(), 1);
        let at = 1420070400000 + (1i64 << 41);
        assert_eq!(fit.gaps()[0], Gap::TurnsNegative { at_ms: at });
        assert_eq!(UnixMillis(at).to_string(), "2084-09-06T15:47:35.552Z");
        assert!(
            Requirements::new(1, 1, 59, JAN_2025)
                .unwrap()
                .check(&Layout::discord())
                .fits()
        );
    }
}
