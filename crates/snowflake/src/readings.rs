//! One ID read under several layouts at once, each reading judged: a pasted
//! ID means different dates under Discord's and Twitter's layouts, and only
//! some of them can be right.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::decoded::Decoded;
use crate::error::Error;
use crate::id::Id;
use crate::layout::Layout;
use crate::time::UnixMillis;

/// How believable an ID's reading under one layout is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The layout cannot decode the ID at all: a bit set that it keeps 0.
    Impossible,
    /// It decodes, to a time in the future or before the platform existed.
    Implausible,
    /// It decodes to a time between the platform's start and now.
    Possible,
}

impl Verdict {
    /// `impossible`, `implausible` or `possible`.
    ///
    /// ```
    /// assert_eq!(snowflake::Verdict::Implausible.name(), "implausible");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Verdict::Impossible => "impossible",
            Verdict::Implausible => "implausible",
            Verdict::Possible => "possible",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One ID read under one layout, with a verdict and the reason for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading<'a> {
    layout: &'a Layout,
    decoded: Result<Decoded<'a>, Error>,
    verdict: Verdict,
    reason: Option<String>,
}

impl<'a> Reading<'a> {
    /// The layout the ID was read under.
    pub fn layout(&self) -> &'a Layout {
        self.layout
    }

    /// The breakdown, unless the reading is impossible.
    pub fn decoded(&self) -> Option<&Decoded<'a>> {
        self.decoded.as_ref().ok()
    }

    /// The verdict.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// Why the reading is impossible or implausible, in words; `None` when
    /// it is possible.
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }
}

/// One ID under every layout given; see [`Readings::new`].
///
/// With the `serde` feature it serialises as
/// `{"id","now_ms","now","readings":[{"layout","platform","launched","verdict","reason","decoded"}]}`,
/// `decoded` being the usual breakdown or `null`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Readings<'a> {
    id: Id,
    now_ms: i64,
    readings: Vec<Reading<'a>>,
}

impl<'a> Readings<'a> {
    /// How far past `now` an ID's time may be and still be possible: clocks
    /// of the machines that made and that read an ID disagree a little.
    pub const FUTURE_SLACK_MS: i64 = 60_000;

    /// Reads `id` under each of `layouts`. `now_ms` is the reader's time
    /// (the caller reads its clock, so that tests can fix it). A reading is
    /// impossible when the layout cannot decode the ID, implausible when the
    /// time is more than [`Readings::FUTURE_SLACK_MS`] past `now_ms` or before
    /// the layout's [`Platform`](crate::Platform) began, and possible otherwise.
    ///
    /// ```
    /// use snowflake::{Id, Layout, Readings, Verdict};
    ///
    /// let layouts = [Layout::twitter(), Layout::discord(), Layout::js53()];
    /// // A tweet of 2022-06-28, read on 2024-01-01.
    /// let all = Readings::new(&layouts, Id::new(1541815603606036480), 1704067200000);
    /// let verdicts: Vec<Verdict> = all.readings().iter().map(|r| r.verdict()).collect();
    /// use Verdict::*;
    /// // Discord's epoch puts it in 2026, the future; 61 bits do not fit in js53's 53.
    /// assert_eq!(verdicts, [Possible, Implausible, Impossible]);
    /// assert_eq!(all.readings()[1].reason(), Some(
    ///     "its time, 2026-08-25T14:24:45.448Z, is in the future (now is 2024-01-01T00:00:00.000Z)"
    /// ));
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn new(layouts: &'a [Layout], id: Id, now_ms: i64) -> Readings<'a> {
        let readings = layouts
            .iter()
            .map(|layout| Readings::read(layout, id, now_ms))
            .collect();
        Readings {
            id,
            now_ms,
            readings,
        }
    }

    fn read(layout: &'a Layout, id: Id, now_ms: i64) -> Reading<'a> {
        let decoded = layout.decode(id);
        let (verdict, reason) = match &decoded {
            Err(err) => (Verdict::Impossible, Some(err.to_string())),
            Ok(d) => {
                let time = d.timestamp_ms();
                let platform = layout.platform();
                if time > now_ms.saturating_add(Readings::FUTURE_SLACK_MS) {
                    let reason = alloc::format!(
                        "its time, {}, is in the future (now is {})",
                        UnixMillis(time),
                        UnixMillis(now_ms)
                    );
                    (Verdict::Implausible, Some(reason))
                } else if let Some(p) = platform.filter(|p| time < p.launched_ms()) {
                    let reason = alloc::format!(
                        "its time, {}, is before {} began ({})",
                        UnixMillis(time),
                        p.name(),
                        &UnixMillis(p.launched_ms()).to_string()[..10]
                    );
                    (Verdict::Implausible, Some(reason))
                } else {
                    (Verdict::Possible, None)
                }
            }
        };
        Reading {
            layout,
            decoded,
            verdict,
            reason,
        }
    }

    /// The ID that was read.
    pub fn id(&self) -> Id {
        self.id
    }

    /// The time the readings were judged against, Unix milliseconds.
    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    /// One reading per layout, in the order the layouts were given.
    pub fn readings(&self) -> &[Reading<'a>] {
        &self.readings
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::{Reading, Readings};
    use crate::time::UnixMillis;
    use alloc::string::ToString;
    use serde::ser::{Serialize, SerializeStruct, Serializer};

    impl Serialize for Reading<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let platform = self.layout.platform();
            let mut s = serializer.serialize_struct("Reading", 6)?;
            s.serialize_field("layout", &*self.layout.name())?;
            s.serialize_field("platform", &platform.map(|p| p.name()))?;
            s.serialize_field(
                "launched",
                &platform.map(|p| UnixMillis(p.launched_ms()).to_string()),
            )?;
            s.serialize_field("verdict", self.verdict.name())?;
            s.serialize_field("reason", &self.reason)?;
            s.serialize_field("decoded", &self.decoded())?;
            s.end()
        }
    }

    impl Serialize for Readings<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut s = serializer.serialize_struct("Readings", 4)?;
            s.serialize_field("id", &self.id)?;
            s.serialize_field("now_ms", &self.now_ms)?;
            s.serialize_field("now", &UnixMillis(self.now_ms).to_string())?;
            s.serialize_field("readings", &self.readings)?;
            s.end()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JAN_2025: i64 = 1735689600000;

    fn presets(names: &[&str]) -> Vec<Layout> {
        names.iter().map(|n| Layout::preset(n).unwrap()).collect()
    }

    /// The verdict and reason of each named preset's reading.
    fn verdicts(names: &[&str], id: u64, now_ms: i64) -> Vec<(Verdict, Option<String>)> {
        let layouts = presets(names);
        Readings::new(&layouts, Id::new(id), now_ms)
            .readings()
            .iter()
            .map(|r| (r.verdict(), r.reason().map(str::to_string)))
            .collect()
    }

    #[test]
    fn a_discord_id_is_possible_only_where_it_makes_sense() {
        // Discord's own documentation example: 2016-04-30T11:18:25.796Z.
        let names = [
            "twitter",
            "discord",
            "instagram",
            "sonyflake",
            "mastodon",
            "js53",
        ];
        let v = verdicts(&names, 175928847299117063, JAN_2025);
        let by: Vec<Verdict> = v.iter().map(|(v, _)| *v).collect();
        assert_eq!(
            by,
            [
                // 2012-03-03: after Twitter began.
                Verdict::Possible,
                Verdict::Possible,
                // 2012-04-23 under Instagram's epoch.
                Verdict::Possible,
                // 2017-12-27 in 10 ms ticks.
                Verdict::Possible,
                // Mastodon's milliseconds put it in 2055.
                Verdict::Implausible,
                // 58 bits: too wide for 53.
                Verdict::Impossible,
            ]
        );
        assert_eq!(
            v[4].1.as_deref(),
            Some(
                "its time, 2055-01-25T03:39:30.946Z, is in the future (now is 2025-01-01T00:00:00.000Z)"
            )
        );
        assert!(
            v[5].1
                .as_deref()
                .unwrap()
                .starts_with("id 175928847299117063 has bits set above its lowest 53")
        );
        // A small ID under Mastodon's Unix epoch is from 1970.
        let v = verdicts(&["mastodon"], 4194439168, JAN_2025);
        assert_eq!(
            v[0].1.as_deref(),
            Some("its time, 1970-01-01T00:01:04.002Z, is before Mastodon began (2016-03-16)")
        );
    }

    #[test]
    fn the_future_allows_a_minute_of_slack_and_no_more() {
        let twitter = Layout::twitter();
        let now = 1700000000000;
        for (ahead, expected) in [
            (0, Verdict::Possible),
            (Readings::FUTURE_SLACK_MS, Verdict::Possible),
            (Readings::FUTURE_SLACK_MS + 1, Verdict::Implausible),
        ] {
            let id = twitter.compose(now + ahead, &[]).unwrap();
            let all = Readings::new(core::slice::from_ref(&twitter), id, now);
            assert_eq!(all.readings()[0].verdict(), expected, "{ahead}");
            assert_eq!(
                all.readings()[0].reason().is_none(),
                expected == Verdict::Possible
            );
        }
    }

    /// Each preset's first possible time is its platform's day or its epoch,
    /// whichever is later; a millisecond before it is implausible where the
    /// layout can say it at all.
    #[test]
    fn before_the_platform_began_is_implausible() {
        for layout in Layout::presets() {
            let launched = layout.platform().unwrap().launched_ms();
            let first = launched.max(layout.epoch_ms());
            let at = layout.compose(first, &[]).unwrap();
            let all = Readings::new(core::slice::from_ref(&layout), at, JAN_2025);
            assert_eq!(all.readings()[0].verdict(), Verdict::Possible, "{layout}");
            if launched > layout.epoch_ms() {
                let before = layout.compose(launched - 1, &[]).unwrap();
                let all = Readings::new(core::slice::from_ref(&layout), before, JAN_2025);
                assert_eq!(
                    all.readings()[0].verdict(),
                    Verdict::Implausible,
                    "{layout}"
                );
                let reason = all.readings()[0].reason().unwrap();
                assert!(reason.contains("is before"), "{reason}");
            }
        }
    }

    #[test]
    fn custom_layouts_and_moved_presets_have_no_platform() {
        let custom = Layout::parse("time:41,node:22").unwrap();
        let moved = Layout::mastodon().with_epoch_ms(1).unwrap();
        let layouts = [custom, moved];
        // 1970 under both: with no platform, only the future is implausible.
        let all = Readings::new(&layouts, Id::new(1 << 22), JAN_2025);
        for r in all.readings() {
            assert_eq!(r.verdict(), Verdict::Possible, "{}", r.layout());
        }
        let v = verdicts(
            &["twitter", "sonyflake", "js53", "discord"],
            1 << 63,
            JAN_2025,
        );
        let impossible: Vec<bool> = v.iter().map(|(v, _)| *v == Verdict::Impossible).collect();
        assert_eq!(impossible, [true, true, true, false]);
    }

    #[cfg(feature = "serde")]
    #[test]
    fn json_names_each_reading() {
        let layouts = presets(&["twitter", "mastodon", "js53"]);
        let all = Readings::new(&layouts, Id::new(4194439168), JAN_2025);
        let json = serde_json::to_value(&all).unwrap();
        assert_eq!(json["id"], "4194439168");
        assert_eq!(json["now"], "2025-01-01T00:00:00.000Z");
        let first = &json["readings"][0];
        assert_eq!(first["layout"], "twitter");
        assert_eq!(first["platform"], "Twitter");
        assert_eq!(first["launched"], "2010-11-04T00:00:00.000Z");
        assert_eq!(first["verdict"], "possible");
        assert_eq!(first["reason"], serde_json::Value::Null);
        assert_eq!(first["decoded"]["time"], "2010-11-04T01:42:55.657Z");
        let mastodon = &json["readings"][1];
        assert_eq!(mastodon["verdict"], "implausible");
        assert!(mastodon["decoded"].is_object());
        let js53 = &json["readings"][2];
        assert_eq!(js53["verdict"], "possible");
        let impossible =
            serde_json::to_value(Readings::new(&layouts, Id::new(u64::MAX), JAN_2025)).unwrap();
        assert_eq!(
            impossible["readings"][0]["decoded"],
            serde_json::Value::Null
        );
        assert_eq!(impossible["readings"][0]["verdict"], "impossible");
        let custom = [Layout::parse("time:41,node:22").unwrap()];
        let json = serde_json::to_value(Readings::new(&custom, Id::new(1), JAN_2025)).unwrap();
        assert_eq!(json["readings"][0]["platform"], serde_json::Value::Null);
        assert_eq!(json["readings"][0]["launched"], serde_json::Value::Null);
    }
}
