//! The layout planner: the fewest bits for time, nodes and sequence that
//! meet [`Requirements`], the spare bits shared out, and when they do not
//! fit, what to give up. Its rules are on [`Proposal`].

use alloc::vec::Vec;
use core::fmt;

use snowflake::{Layout, UnixMillis};

use crate::assessment::Assessment;
use crate::requirements::Requirements;

/// The name of the node field of a proposed layout.
const NODE_FIELD: &str = "node";

/// Ticks a plan tries when the needs do not fit at the tick asked for: the
/// 1-2-5 series from 1 ms to 50 s, then a minute, an hour and a day.
const TICKS: [u64; 18] = [
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 60_000,
    3_600_000, 86_400_000,
];

/// The widths of a planned layout's time, node and sequence fields.
///
/// ```
/// let needs = snowflake_ops::Requirements::new(1000, 16, 10, 1735689600000)?;
/// let least = needs.plan().needed();
/// // 10 years of milliseconds, 16 nodes, 1 ID a millisecond.
/// assert_eq!((least.time, least.node, least.sequence), (39, 4, 1));
/// assert_eq!(least.total(), 44);
/// # Ok::<(), snowflake_ops::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Widths {
    /// Bits of the time field.
    pub time: u8,
    /// Bits of the node field; 0 for a single node.
    pub node: u8,
    /// Bits of the sequence field.
    pub sequence: u8,
}

impl Widths {
    /// The three added up.
    pub const fn total(&self) -> u16 {
        self.time as u16 + self.node as u16 + self.sequence as u16
    }
}

/// What an alternative gives up to fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Concession {
    /// A shorter lifetime: the time field gets what the others leave.
    Lifetime,
    /// A lower peak rate: the sequence gets what the others leave.
    Rate,
    /// Fewer nodes: the node field gets what the others leave.
    Nodes,
    /// A coarser tick: the smallest of the ticks tried that fits.
    Tick,
    /// JavaScript safety: 63 bits instead of 53.
    JsSafety,
}

impl Concession {
    /// A short name, as the JSON form writes it: `lifetime`, `rate`,
    /// `nodes`, `tick`, `js_safe`.
    ///
    /// ```
    /// assert_eq!(snowflake_ops::Concession::Lifetime.kind(), "lifetime");
    /// ```
    pub const fn kind(self) -> &'static str {
        match self {
            Concession::Lifetime => "lifetime",
            Concession::Rate => "rate",
            Concession::Nodes => "nodes",
            Concession::Tick => "tick",
            Concession::JsSafety => "js_safe",
        }
    }
}

impl fmt::Display for Concession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Concession::Lifetime => "a shorter lifetime",
            Concession::Rate => "a lower peak rate",
            Concession::Nodes => "fewer nodes",
            Concession::Tick => "a coarser tick",
            Concession::JsSafety => "JavaScript safety (63 bits instead of 53)",
        })
    }
}

/// One way to fit when the needs do not: what it gives up, and the layout
/// it allows, judged against the requirements as asked (so its gap says by
/// how much), or, for a coarser tick or a wider ID, against requirements at that
/// tick or width.
#[derive(Clone, Debug, PartialEq)]
pub struct Alternative {
    concession: Concession,
    assessment: Assessment,
}

impl Alternative {
    /// What it gives up.
    pub fn concession(&self) -> Concession {
        self.concession
    }

    /// The layout it allows, judged.
    pub fn assessment(&self) -> &Assessment {
        &self.assessment
    }
}

/// A proposed layout for [`Requirements`], or the alternatives when they do not
/// fit; made by [`Requirements::plan`].
///
/// # Rules
/// - The epoch is the start (00:00 UTC) of the lifetime's first day, so it
///   reads as a date.
/// - Each dimension gets the fewest bits that meet its need: the time field
///   holds the lifetime in ticks, the node fields the nodes, the sequence the
///   peak rate's IDs of one tick (at least 1 bit, so a generator can run).
/// - Spare bits up to the width (63, or 53 when JavaScript-safe) are dealt
///   one at a time to whichever of time, nodes and rate has the least
///   headroom (ties in that order), so that no one of them is left tight
///   while another has thousands of times what it needs. Each bit doubles
///   the headroom it goes to.
/// - When the requirements take more bits than the width, there is no proposal:
///   there are alternatives, each giving up one thing (a shorter lifetime,
///   a lower rate, fewer nodes, a coarser tick, or 63 bits instead of 53),
///   each with the layout that it allows.
#[derive(Clone, Debug, PartialEq)]
pub struct Proposal {
    requirements: Requirements,
    needed: Widths,
    proposed: Option<Assessment>,
    alternatives: Vec<Alternative>,
}

impl Proposal {
    /// The requirements planned for.
    pub fn requirements(&self) -> &Requirements {
        &self.requirements
    }

    /// The fewest bits each field needs.
    pub fn needed(&self) -> Widths {
        self.needed
    }

    /// The proposed layout, judged against the requirements (it meets them); `None`
    /// when they take more bits than the width.
    pub fn proposed(&self) -> Option<&Assessment> {
        self.proposed.as_ref()
    }

    /// When there is no proposal, the ways to fit, in the order of
    /// [`Concession`]; empty when there is one. A way that leaves no bit for a
    /// field that must have one is not listed.
    pub fn alternatives(&self) -> &[Alternative] {
        &self.alternatives
    }
}

/// The fewest bits that count `n` things (2^bits ≥ n); 0 for one.
fn bits_for(n: u128) -> u8 {
    if n <= 1 {
        0
    } else {
        (128 - (n - 1).leading_zeros()) as u8
    }
}

/// 2^bits as a float (bits at most 64); `f64::exp2` needs `std`.
fn pow2(bits: u8) -> f64 {
    (1u128 << bits) as f64
}

/// The least widths for the needs at their tick, the epoch being `epoch_ms`.
fn least_widths(needs: &Requirements, epoch_ms: i64) -> Widths {
    let tick = u128::from(needs.tick_ms());
    // The lifetime runs from the epoch (at or before the start) to its end.
    let span = u128::from(needs.until_ms().abs_diff(epoch_ms));
    let per_tick = (u128::from(needs.rate_per_sec()) * tick).div_ceil(1000);
    Widths {
        time: bits_for(span.div_ceil(tick)).max(1),
        node: bits_for(u128::from(needs.nodes())),
        sequence: bits_for(per_tick).max(1),
    }
}

/// The layout of these widths, or `None` when it cannot be built (a time
/// field that would end past i64 milliseconds).
fn layout_of(widths: Widths, epoch_ms: i64, tick_ms: u64) -> Option<Layout> {
    let mut builder = Layout::builder()
        .epoch_ms(epoch_ms)
        .tick_ms(tick_ms)
        .time_bits(widths.time);
    if widths.node > 0 {
        builder = builder.field(NODE_FIELD, widths.node);
    }
    builder
        .sequence(Layout::SEQUENCE_FIELD, widths.sequence)
        .build()
        .ok()
}

impl Requirements {
    /// Proposes a layout for these requirements, or, when they do not fit in
    /// the width, the alternatives, by the rules on [`Proposal`].
    ///
    /// ```
    /// use snowflake::UnixMillis;
    /// use snowflake_ops::Requirements;
    ///
    /// // Twitter's needs from its launch day: 4,096 IDs a millisecond, 1,024
    /// // nodes, 69 years: exactly 63 bits, as Twitter has.
    /// let plan = Requirements::new(4_096_000, 1024, 69, 1288834974657)?.plan();
    /// let fit = plan.proposed().unwrap();
    /// assert_eq!(fit.layout().spec(), "time:41,node:10,sequence:12");
    /// assert_eq!(fit.layout().epoch_ms(), 1288828800000); // 2010-11-04T00:00:00Z
    /// assert_eq!(UnixMillis(fit.layout().runs_out_ms()).to_string(), "2080-07-10T15:47:35.552Z");
    ///
    /// // A 70th year takes a 42nd bit of time: 64 in all, one too many.
    /// let plan = Requirements::new(4_096_000, 1024, 70, 1288834974657)?.plan();
    /// assert!(plan.proposed().is_none());
    /// assert_eq!(plan.needed().total(), 64);
    /// let first = &plan.alternatives()[0];
    /// assert_eq!(first.concession(), snowflake_ops::Concession::Lifetime);
    /// assert_eq!(first.assessment().layout().spec(), "time:41,node:10,sequence:12");
    /// # Ok::<(), snowflake_ops::Error>(())
    /// ```
    pub fn plan(&self) -> Proposal {
        let needs = *self;
        let epoch_ms = UnixMillis(needs.from_ms()).day_start().0;
        let needed = least_widths(&needs, epoch_ms);
        let proposal = propose(&needs, needed, epoch_ms);
        let alternatives = match proposal {
            Some(_) => Vec::new(),
            None => alternatives(&needs, needed, epoch_ms),
        };
        Proposal {
            requirements: needs,
            needed,
            proposed: proposal,
            alternatives,
        }
    }
}

/// The proposal alone, without alternatives: the alternatives try other
/// ticks and widths through it, and must not try alternatives of their own.
fn propose(needs: &Requirements, needed: Widths, epoch_ms: i64) -> Option<Assessment> {
    if needed.total() > u16::from(needs.width()) {
        return None;
    }
    let widths = deal_spare(needs, needed, epoch_ms);
    layout_of(widths, epoch_ms, needs.tick_ms()).map(|layout| needs.check(&layout))
}

/// [`propose`] for other needs at the same epoch.
fn propose_for(needs: &Requirements, epoch_ms: i64) -> Option<Assessment> {
    propose(needs, least_widths(needs, epoch_ms), epoch_ms)
}

/// Fills the width, one bit at a time to the dimension with the least
/// headroom (time, then nodes, then rate on a tie). A time field that would
/// end past i64 milliseconds takes no more.
fn deal_spare(needs: &Requirements, mut widths: Widths, epoch_ms: i64) -> Widths {
    let tick = needs.tick_ms() as f64;
    let asked_ms = needs.until_ms().abs_diff(needs.from_ms()) as f64;
    let lived = |time_bits: u8| {
        // The end of the time field, less the start of the lifetime.
        (epoch_ms as f64 + pow2(time_bits) * tick) - needs.from_ms() as f64
    };
    while widths.total() < u16::from(needs.width()) {
        let time_room = lived(widths.time) / asked_ms;
        let node_room = pow2(widths.node) / needs.nodes() as f64;
        let rate_room = pow2(widths.sequence) * 1000.0 / tick / needs.rate_per_sec() as f64;
        let time_can_grow = layout_of(
            Widths {
                time: widths.time + 1,
                ..widths
            },
            epoch_ms,
            needs.tick_ms(),
        )
        .is_some();
        if time_can_grow && time_room <= node_room && time_room <= rate_room {
            widths.time += 1;
        } else if node_room <= rate_room {
            widths.node += 1;
        } else {
            widths.sequence += 1;
        }
    }
    widths
}

/// The ways to fit needs that take more bits than the width.
fn alternatives(needs: &Requirements, needed: Widths, epoch_ms: i64) -> Vec<Alternative> {
    let width = u16::from(needs.width());
    // What the other two leave for one field, if that is enough for it.
    let left_for = |others: u16, least: u8| {
        width
            .checked_sub(others)
            .and_then(|left| u8::try_from(left).ok())
            .filter(|left| *left >= least)
    };
    let mut found = Vec::new();
    let mut push = |concession, widths: Option<Widths>| {
        if let Some(layout) = widths.and_then(|w| layout_of(w, epoch_ms, needs.tick_ms())) {
            found.push(Alternative {
                concession,
                assessment: needs.check(&layout),
            });
        }
    };
    let (t, n, s) = (
        u16::from(needed.time),
        u16::from(needed.node),
        u16::from(needed.sequence),
    );
    push(
        Concession::Lifetime,
        left_for(n + s, 1).map(|time| Widths { time, ..needed }),
    );
    push(
        Concession::Rate,
        left_for(t + n, 1).map(|sequence| Widths { sequence, ..needed }),
    );
    push(
        Concession::Nodes,
        left_for(t + s, 0).map(|node| Widths { node, ..needed }),
    );
    let coarser = TICKS
        .into_iter()
        .filter(|tick| *tick > needs.tick_ms())
        .filter_map(|tick| needs.with_tick_ms(tick).ok())
        .find_map(|at_tick| propose_for(&at_tick, epoch_ms));
    if let Some(fit) = coarser {
        found.push(Alternative {
            concession: Concession::Tick,
            assessment: fit,
        });
    }
    let wider = needs
        .js_safe()
        .then(|| propose_for(&needs.with_js_safe(false), epoch_ms))
        .flatten();
    if let Some(fit) = wider {
        found.push(Alternative {
            concession: Concession::JsSafety,
            assessment: fit,
        });
    }
    found
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::{Alternative, Proposal, Widths};
    use crate::assessment::serde_impl::entries;
    use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};

    impl Serialize for Widths {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut s = serializer.serialize_struct("Widths", 4)?;
            s.serialize_field("time", &self.time)?;
            s.serialize_field("node", &self.node)?;
            s.serialize_field("sequence", &self.sequence)?;
            s.serialize_field("total", &self.total())?;
            s.end()
        }
    }

    /// `{"give_up","give_up_text", …the assessment's entries}`: the
    /// concession, as a kind and in words.
    impl Serialize for Alternative {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(None)?;
            map.serialize_entry("give_up", self.concession.kind())?;
            map.serialize_entry(
                "give_up_text",
                &alloc::string::ToString::to_string(&self.concession),
            )?;
            entries(&mut map, &self.assessment)?;
            map.end()
        }
    }

    /// The proposal's entries (`layout`, `tick_ms`, `epoch_ms`, `runs_out`,
    /// headroom, …) at the top, or `"layout": null` and `"fits": false`
    /// without one; then `needs` (the requirements), `needed_bits` and
    /// `alternatives`.
    impl Serialize for Proposal {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(None)?;
            match &self.proposed {
                Some(fit) => entries(&mut map, fit)?,
                None => {
                    map.serialize_entry("layout", &())?;
                    map.serialize_entry("tick_ms", &self.requirements.tick_ms())?;
                    map.serialize_entry("epoch_ms", &())?;
                    map.serialize_entry("runs_out", &())?;
                    map.serialize_entry("fits", &false)?;
                }
            }
            map.serialize_entry("needs", &self.requirements)?;
            map.serialize_entry("needed_bits", &self.needed)?;
            map.serialize_entry("alternatives", &self.alternatives)?;
            map.end()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    const JAN_2025: i64 = 1735689600000;

    fn spec(plan: &Proposal) -> alloc::string::String {
        plan.proposed().unwrap().layout().spec()
    }

    #[test]
    fn bits_for_counts_exactly() {
        let cases = [
            (0, 0),
            (1, 0),
            (2, 1),
            (3, 2),
            (4, 2),
            (5, 3),
            (1024, 10),
            (1025, 11),
            (u128::from(u64::MAX), 64),
        ];
        for (n, bits) in cases {
            assert_eq!(bits_for(n), bits, "{n}");
        }
    }

    #[test]
    fn least_widths_by_hand() {
        // 10 years from 2025-01-01 is 3652 days (2028 and 2032 are leap
        // years) = 315,532,800,000 ms: 2^38 = 274,877,906,944 is too few,
        // 2^39 = 549,755,813,888 enough. 16 nodes: 4 bits. 1,000 a second
        // is 1 a millisecond: 0 bits, at least 1.
        let needs = Requirements::new(1000, 16, 10, JAN_2025).unwrap();
        assert_eq!(
            needs.plan().needed(),
            Widths {
                time: 39,
                node: 4,
                sequence: 1
            }
        );
        // 1,001 a second: 2 a millisecond at the peak, still 1 bit; 2,001: 3, 2 bits.
        let at = |rate| {
            Requirements::new(rate, 1, 10, JAN_2025)
                .unwrap()
                .plan()
                .needed()
        };
        assert_eq!(
            (at(1001).sequence, at(2001).sequence, at(2000).sequence),
            (1, 2, 1)
        );
        // Seconds: 3652 days are 315,532,800 s, 2^29 = 536,870,912: 29 bits;
        // 1,000 a second in one tick: 10 bits.
        let secs = needs.with_tick_ms(1000).unwrap().plan().needed();
        assert_eq!((secs.time, secs.sequence), (29, 10));
        // The epoch is the day's start: from 23:00 the lifetime is an hour longer.
        let late = Requirements::new(1, 1, 1, JAN_2025 + 23 * 3_600_000)
            .unwrap()
            .with_tick_ms(86_400_000)
            .unwrap();
        // 365 days and 23 hours from the epoch: 366 ticks of a day: 9 bits.
        assert_eq!(late.plan().needed().time, 9);
        // A partial tick at the end counts: 365 d 23 h is 31,618,800,000
        // ms, and 512 ticks of 61,755,468 ms are 31,618,799,616, 384 ms
        // short: 513 ticks, 10 bits.
        let partial = late.with_tick_ms(61_755_468).unwrap().plan();
        assert_eq!(partial.needed().time, 10);
        assert!(partial.proposed().unwrap().fits());
    }

    #[test]
    fn twitter_needs_fill_63_bits_exactly() {
        // Twitter's launch day to 69 years later, 2079-11-04: 25,185 + 17
        // leap days = 25,202 days = 2,177,452,800,000 ms ≤ 2^41 =
        // 2,199,023,255,552. 1,024 nodes: 10 bits; 4,096 a millisecond: 12.
        let plan = Requirements::new(4_096_000, 1024, 69, 1288834974657)
            .unwrap()
            .plan();
        assert_eq!(spec(&plan), "time:41,node:10,sequence:12");
        let fit = plan.proposed().unwrap();
        assert!(fit.fits());
        assert_eq!(fit.layout().epoch_ms(), 1288828800000);
        // The epoch is 6,174,657 ms before Twitter's: so is the end.
        assert_eq!(
            fit.layout().runs_out_ms(),
            Layout::twitter().runs_out_ms() - 6_174_657
        );
        assert_eq!(fit.rate_headroom(), Some(1.0));
        assert_eq!(fit.node_headroom(), 1.0);
        assert!(plan.alternatives().is_empty());
    }

    #[test]
    fn spare_bits_go_to_the_least_headroom() {
        // 39 + 4 + 1 = 44 of 63: 19 spare. Headroom before: time 1.74
        // (2^39 ms over 3652 days), nodes 1, rate 2.
        let plan = Requirements::new(1000, 16, 10, JAN_2025).unwrap().plan();
        let fit = plan.proposed().unwrap();
        assert_eq!(fit.layout().bits(), 63);
        // Dealt: node (2), time (3.5), node (4), rate (4), time (7), node
        // (8), rate (8), … 19 bits end at time 45 (111x), node 11 (128x),
        // sequence 7 (128x): each within a factor of two of the others.
        let rooms = [
            fit.time_headroom(),
            fit.node_headroom(),
            fit.rate_headroom().unwrap(),
        ];
        let (min, max) = (
            rooms.iter().copied().fold(f64::MAX, f64::min),
            rooms.iter().copied().fold(0.0, f64::max),
        );
        assert!(max / min <= 2.0, "{rooms:?}");
        assert_eq!(spec(&plan), "time:45,node:11,sequence:7");
        // 1,000 nodes: 10 bits, 1.02x; time 1.74x, rate 2x; 13 spare.
        // Dealt: node (2.05), time (3.48), rate (4), node (4.1), time
        // (6.97), rate (8), node (8.2), time (13.9), rate (16), node (16.4),
        // time (27.9), rate (32), node (32.8).
        let plan = Requirements::new(1000, 1000, 10, JAN_2025).unwrap().plan();
        assert_eq!(spec(&plan), "time:43,node:15,sequence:5");
        // A single node still gets a node field once there is room.
        let one = Requirements::new(1000, 1, 10, JAN_2025).unwrap().plan();
        assert!(one.proposed().unwrap().layout().field("node").is_some());
    }

    /// The same needs at ticks of 1, 10 and 1000 ms, dealt by hand: the
    /// tick changes every headroom the dealing weighs, so a planner that
    /// deals as if the tick were 1 ms proposes another layout at 10 and
    /// 1000 ms.
    #[test]
    fn proposals_at_each_tick_are_the_hand_dealt_ones() {
        // 50,000 a second, 300 nodes, 30 years from 2025-03-15T12:00Z: to
        // 2055-03-15 are 30 × 365 + 7 leap days (2028 … 2052) = 10,957
        // days = 946,684,800,000 ms, and from the epoch (that day's
        // midnight) 12 h more, 946,728,000,000 ms. 300 nodes take 9 bits
        // (512, headroom 1.71) at every tick. 8 of 63 bits are spare each
        // time; each deal doubles the headroom it goes to.
        let from = JAN_2025 + (31 + 28 + 14) * 86_400_000 + 12 * 3_600_000;
        let cases = [
            // 1 ms: 2^39 < 946.7e9 ≤ 2^40 ms, 40 bits (headroom 1.16);
            // 50 a tick, 6 bits (64, 1.28). Dealt time, rate, node, time,
            // rate, node, time, rate.
            (1, "time:43,node:11,sequence:9"),
            // 10 ms: 94.67e9 ticks, 2^36 < … ≤ 2^37, 37 bits (1.45); 500 a
            // tick, 9 bits (512, 1.02). Dealt rate, time, node, rate,
            // time, node, rate, time.
            (10, "time:40,node:11,sequence:12"),
            // 1000 ms: 946.7e6 ticks, 2^29 < … ≤ 2^30, 30 bits (1.13);
            // 50,000 a tick, 16 bits (65,536, 1.31). Dealt time, rate,
            // node, time, rate, node, time, rate.
            (1000, "time:33,node:11,sequence:19"),
        ];
        for (tick, expected) in cases {
            let plan = Requirements::new(50_000, 300, 30, from)
                .unwrap()
                .with_tick_ms(tick)
                .unwrap()
                .plan();
            assert_eq!(plan.needed().total(), 55, "{tick} ms");
            let layout = plan.proposed().unwrap().layout();
            assert_eq!((layout.spec(), layout.tick_ms()), (expected.into(), tick));
            assert_eq!(layout.epoch_ms(), JAN_2025 + (31 + 28 + 14) * 86_400_000);
        }
        // Baidu uid-generator's customised layout in seconds: 8,192 a
        // second, 2^21 worker starts, 17 years from 2016-09-20: 17 × 365 +
        // 4 leap days (2020 … 2032) = 6,209 days = 536,457,600 s ≤ 2^29 =
        // 536,870,912: 29 + 21 + 13 = 63 bits, none spare, Baidu's widths.
        let baidu = Requirements::new(8192, 1 << 21, 17, 1474329600000)
            .unwrap()
            .with_tick_ms(1000)
            .unwrap()
            .plan();
        assert_eq!(spec(&baidu), "time:29,node:21,sequence:13");
        assert_eq!(baidu.proposed().unwrap().layout().tick_ms(), 1000);
    }

    #[test]
    fn needs_that_fill_the_width_get_no_node_field_for_one_node() {
        // 53 bits: 10 years of ms (39) + 2^14 a millisecond... 16,384,000 a second.
        let plan = Requirements::new(16_384_000, 1, 10, JAN_2025)
            .unwrap()
            .with_js_safe(true)
            .plan();
        assert_eq!(spec(&plan), "time:39,sequence:14");
        assert!(plan.proposed().unwrap().layout().is_js_safe());
    }

    #[test]
    fn too_much_gets_alternatives_that_each_give_one_thing_up() {
        // 100 years (36,524 days, 2100 is no leap year: 3,155,673,600,000
        // ms) need 42 bits,
        // 100,000 nodes 17, a million a second (1,000 a ms) 10: 69 of 63.
        let needs = Requirements::new(1_000_000, 100_000, 100, JAN_2025).unwrap();
        let plan = needs.plan();
        assert!(plan.proposed().is_none());
        assert_eq!(
            plan.needed(),
            Widths {
                time: 42,
                node: 17,
                sequence: 10
            }
        );
        let alts: Vec<(Concession, alloc::string::String)> = plan
            .alternatives()
            .iter()
            .map(|a| (a.concession(), a.assessment().layout().spec()))
            .collect();
        // No tick helps: each halving of the ticks of the lifetime doubles
        // the IDs of a tick.
        assert_eq!(
            alts,
            [
                (
                    Concession::Lifetime,
                    "time:36,node:17,sequence:10".to_string()
                ),
                (Concession::Rate, "time:42,node:17,sequence:4".to_string()),
                (Concession::Nodes, "time:42,node:11,sequence:10".to_string()),
            ]
        );
        let lifetime = plan.alternatives()[0].assessment();
        // 2^36 ms = 68,719,476,736 ms = 795 days (68,688,000,000 ms) and
        // 31,476,736 ms (8 h 44 min 36.736 s). 795 days from 2025-01-01:
        // 365 to 2026-01-01, 365 more to 2027-01-01, then 65 (31 of
        // January, 28 of February, 6 of March): 2027-03-07.
        assert_eq!(
            UnixMillis(lifetime.layout().runs_out_ms()).to_string(),
            "2027-03-07T08:44:36.736Z"
        );
        assert_eq!(lifetime.gaps().len(), 1);
        assert_eq!(
            lifetime.gaps()[0].to_string(),
            "the time field runs out at 2027-03-07T08:44:36.736Z, 2.2 years into the 100 years \
             asked for (until 2125-01-01T00:00:00.000Z)"
        );
        // 16 a millisecond; 2,048 nodes.
        assert_eq!(
            plan.alternatives()[1].assessment().rate_per_sec(),
            Some(16_000.0)
        );
        assert_eq!(
            plan.alternatives()[2].assessment().layout().node_count(),
            2048
        );
    }

    #[test]
    fn a_coarser_tick_or_a_wider_id_is_offered_when_it_fits() {
        // 1 a second, a million nodes (20 bits), 100 years, JavaScript-safe:
        // in ms 42 + 20 + 1 = 63 > 53. In seconds the lifetime is
        // 3,155,760,000 s, 32 bits; 1 ID a tick, 1 bit: 53. 500 ms ticks
        // need 33 bits of time: 54.
        let needs = Requirements::new(1, 1_000_000, 100, JAN_2025)
            .unwrap()
            .with_js_safe(true);
        let plan = needs.plan();
        assert!(plan.proposed().is_none());
        // Giving up the rate would leave 53 − 42 − 20 bits for the
        // sequence, less than none: not offered.
        let by: Vec<Concession> = plan.alternatives().iter().map(|a| a.concession()).collect();
        assert_eq!(
            by,
            [
                Concession::Lifetime,
                Concession::Nodes,
                Concession::Tick,
                Concession::JsSafety
            ]
        );
        let tick = plan.alternatives()[2].assessment();
        assert_eq!(tick.layout().tick_ms(), 1000);
        assert_eq!(tick.layout().spec(), "time:32,node:20,sequence:1");
        assert!(tick.fits());
        let wide = plan.alternatives()[3].assessment();
        assert_eq!(wide.layout().bits(), 63);
        assert!(wide.fits(), "{:?}", wide.gaps());
    }

    #[test]
    fn every_proposal_meets_its_needs_and_fills_its_width() {
        for rate in [1, 999, 1000, 1001, 4_096_000, 1 << 30] {
            for nodes in [1, 2, 3, 1024, 1025, 1 << 20] {
                for years in [1, 10, 69, 200, 1000] {
                    for tick in [1, 10, 1000] {
                        for js in [false, true] {
                            let needs = Requirements::new(rate, nodes, years, JAN_2025)
                                .unwrap()
                                .with_tick_ms(tick)
                                .unwrap()
                                .with_js_safe(js);
                            let plan = needs.plan();
                            match plan.proposed() {
                                Some(fit) => {
                                    assert!(fit.fits(), "{needs:?}: {:?}", fit.gaps());
                                    assert_eq!(fit.layout().bits(), needs.width(), "{needs:?}");
                                    assert!(plan.alternatives().is_empty());
                                }
                                None => {
                                    assert!(plan.needed().total() > u16::from(needs.width()));
                                    for alt in plan.alternatives() {
                                        let fit = alt.assessment();
                                        assert!(fit.layout().bits() <= 63);
                                        match alt.concession() {
                                            Concession::Tick | Concession::JsSafety => {
                                                assert!(fit.fits())
                                            }
                                            _ => assert_eq!(fit.gaps().len(), 1),
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
