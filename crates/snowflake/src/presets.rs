//! The built-in layouts of the ID families people meet in the wild, as one
//! table: [`Preset::ALL`]. Everything else about presets is derived from it:
//! the names in [`Layout::PRESETS`], [`Layout::presets`], [`Layout::preset`],
//! [`Layout::platform`], the layout parser's list of names in its errors, and
//! what front ends show and send (the service gives the page this table as
//! data). Adding a preset is one entry here, which the compiler checks, and its
//! cases in `testdata/vectors.json`.

use crate::layout::{Layout, LayoutBuilder};
use crate::time::midnight_ms;

/// Who uses a preset, and since when: IDs dated before that are implausible.
///
/// ```
/// let discord = snowflake::Layout::discord().platform().unwrap();
/// assert_eq!(discord.name(), "Discord");
/// assert_eq!(discord.launched_ms(), 1420070400000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Platform {
    name: &'static str,
    launched_ms: i64,
}

impl Platform {
    /// The platform's name, e.g. `Discord`.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::mastodon().platform().unwrap().name(), "Mastodon");
    /// ```
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// When its IDs began, Unix milliseconds: 00:00 UTC of that day.
    ///
    /// ```
    /// use snowflake::{Layout, UnixMillis};
    ///
    /// let mastodon = Layout::mastodon().platform().unwrap();
    /// assert_eq!(UnixMillis(mastodon.launched_ms()).to_string(), "2016-03-16T00:00:00.000Z");
    /// ```
    pub const fn launched_ms(&self) -> i64 {
        self.launched_ms
    }
}

/// One built-in layout as the crate's table of presets gives it: its name,
/// epoch, tick, the width of the time field and of each field below it, which
/// field is the sequence, and the [`Platform`] whose IDs it describes.
///
/// [`Preset::ALL`] is the table; [`Preset::layout`] builds the [`Layout`],
/// which gives the epoch, the tick and the widths, so that they are read in
/// one place whether a layout is a preset or not.
///
/// ```
/// use snowflake::Preset;
///
/// let discord = Preset::find("discord").unwrap();
/// assert_eq!(discord.fields(), [("worker", 5), ("process", 5), ("increment", 12)]);
/// assert_eq!(discord.sequence(), "increment");
/// assert_eq!(discord.layout().spec(), "time:42,worker:5,process:5,increment:12");
/// assert_eq!(discord.layout().epoch_ms(), 1420070400000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Preset {
    name: &'static str,
    epoch_ms: i64,
    tick_ms: u64,
    time_bits: u8,
    /// Below the time field, most significant first.
    fields: &'static [(&'static str, u8)],
    sequence: &'static str,
    platform: Platform,
}

/// A platform that began on `year-month-day` (00:00 UTC).
const fn since(name: &'static str, year: i64, month: u32, day: u32) -> Platform {
    Platform {
        name,
        launched_ms: midnight_ms(year, month, day),
    }
}

impl Preset {
    /// Every preset, in the order front ends list them; the first is the
    /// default layout.
    ///
    /// A platform's day is when IDs of its layout began, so that a reading
    /// dated earlier is implausible. Where the epoch is that moment, the day
    /// is the epoch's and no reading is ever earlier; Mastodon's epoch is
    /// Unix time, so its day is the one that decides. The sources, and why
    /// each day was chosen, are beside each entry and in the changelog.
    ///
    /// ```
    /// let names: Vec<&str> = snowflake::Preset::ALL.iter().map(|p| p.name()).collect();
    /// assert_eq!(names, ["twitter", "discord", "instagram", "sonyflake", "mastodon", "js53"]);
    /// ```
    pub const ALL: &'static [Preset] = &[
        Preset {
            name: "twitter",
            // twitter-archive/snowflake: `twepoch = 1288834974657L`.
            epoch_ms: 1288834974657,
            tick_ms: 1,
            time_bits: 41,
            fields: &[("datacenter", 5), ("machine", 5), ("sequence", 12)],
            sequence: "sequence",
            // Tweet IDs became Snowflake IDs on the day of the epoch,
            // 2010-11-04 (01:42:54.657 UTC). Earlier tweets kept their serial
            // IDs, which read as the epoch's first seconds.
            platform: since("Twitter", 2010, 11, 4),
        },
        Preset {
            name: "discord",
            // Discord's API reference, "Snowflakes": `DISCORD_EPOCH =
            // 1420070400000`, the first second of 2015.
            epoch_ms: 1420070400000,
            tick_ms: 1,
            time_bits: 42,
            fields: &[("worker", 5), ("process", 5), ("increment", 12)],
            sequence: "increment",
            // Its epoch, not the public launch of 2015-05-13: IDs were
            // issued before it; the API reference's own example guild,
            // 41771983423143937 ("Discord Developers"), is of 2015-04-26.
            platform: since("Discord", 2015, 1, 1),
        },
        Preset {
            name: "instagram",
            // The epoch that real media IDs decode under (2011-08-24T21:07:01.721Z);
            // the layout is from Instagram Engineering, "Sharding & IDs at
            // Instagram", whose worked example uses an illustrative epoch.
            epoch_ms: 1314220021721,
            tick_ms: 1,
            time_bits: 41,
            fields: &[("shard", 13), ("sequence", 10)],
            sequence: "sequence",
            // The epoch's day: these IDs began with the sharded scheme; the
            // app's earlier photos (it launched 2010-10-06) had serial IDs.
            platform: since("Instagram", 2011, 8, 24),
        },
        Preset {
            name: "sonyflake",
            // sony/sonyflake: the default start time, 2014-09-01 00:00:00 UTC,
            // in units of 10 ms.
            epoch_ms: 1409529600000,
            tick_ms: 10,
            time_bits: 39,
            fields: &[("sequence", 8), ("machine", 16)],
            sequence: "sequence",
            platform: since("Sonyflake", 2014, 9, 1),
        },
        Preset {
            name: "mastodon",
            // mastodon/mastodon, lib/mastodon/snowflake.rb: 48 bits of Unix
            // milliseconds, 16 bits of sequence.
            epoch_ms: 0,
            tick_ms: 1,
            time_bits: 48,
            fields: &[("sequence", 16)],
            sequence: "sequence",
            // Mastodon's first release, 2016-03-16 (before its public
            // announcement of 2016-10-05). Its IDs took this form in v2.0
            // (2017-10), but a server gives a post made earlier the ID of the
            // post's own time (`Mastodon::Snowflake::Callbacks.around_create`),
            // so posts from any Mastodon server since the first carry theirs.
            platform: since("Mastodon", 2016, 3, 16),
        },
        Preset {
            name: "js53",
            // This project's layout for IDs that JavaScript holds exactly as
            // numbers: 53 bits, milliseconds since 2024-01-01T00:00:00Z.
            epoch_ms: 1704067200000,
            tick_ms: 1,
            time_bits: 41,
            fields: &[("worker", 6), ("sequence", 6)],
            sequence: "sequence",
            platform: since("JavaScript-safe IDs", 2024, 1, 1),
        },
    ];

    /// The preset of that name, ASCII case ignored.
    ///
    /// ```
    /// assert_eq!(snowflake::Preset::find("Sonyflake").unwrap().name(), "sonyflake");
    /// assert!(snowflake::Preset::find("flickr").is_none());
    /// ```
    pub fn find(name: &str) -> Option<&'static Preset> {
        Preset::ALL
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }

    /// The preset's name, as layouts are chosen by, e.g. `discord`.
    ///
    /// ```
    /// assert_eq!(snowflake::Preset::ALL[0].name(), "twitter");
    /// ```
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The fields below the time field as `(name, bits)`, most significant
    /// first; one of them is the [`sequence`](Preset::sequence).
    ///
    /// ```
    /// assert_eq!(snowflake::Preset::find("instagram").unwrap().fields(), [("shard", 13), ("sequence", 10)]);
    /// ```
    pub const fn fields(&self) -> &'static [(&'static str, u8)] {
        self.fields
    }

    /// The name of the field a generator counts in.
    ///
    /// ```
    /// assert_eq!(snowflake::Preset::find("discord").unwrap().sequence(), "increment");
    /// ```
    pub const fn sequence(&self) -> &'static str {
        self.sequence
    }

    /// The platform whose IDs the preset reads, and since when.
    ///
    /// ```
    /// assert_eq!(snowflake::Preset::find("twitter").unwrap().platform().name(), "Twitter");
    /// ```
    pub const fn platform(&self) -> Platform {
        self.platform
    }

    /// The layout, named after the preset.
    ///
    /// ```
    /// let twitter = snowflake::Preset::ALL[0].layout();
    /// assert_eq!(twitter, snowflake::Layout::twitter());
    /// assert_eq!(twitter.name(), "twitter");
    /// ```
    pub fn layout(&self) -> Layout {
        let mut builder = Layout::builder()
            .epoch_ms(self.epoch_ms)
            .tick_ms(self.tick_ms)
            .time_bits(self.time_bits)
            .named(self.name);
        for &(name, bits) in self.fields {
            builder = if same(name, self.sequence) {
                builder.sequence(name, bits)
            } else {
                builder.field(name, bits)
            };
        }
        build(builder)
    }

    /// Whether the entry makes a layout with one sequence field, checked
    /// when the crate compiles; the rest (names, epoch, tick) the layout
    /// builder checks, which the tests run for every preset.
    const fn well_formed(&self) -> bool {
        let mut bits = self.time_bits as u32;
        let mut sequences = 0;
        let mut i = 0;
        while i < self.fields.len() {
            let (name, width) = self.fields[i];
            bits += width as u32;
            if same(name, self.sequence) {
                sequences += 1;
            }
            let mut j = 0;
            while j < i {
                if same(self.fields[j].0, name) {
                    return false;
                }
                j += 1;
            }
            i += 1;
        }
        bits <= 64 && sequences == 1 && self.tick_ms > 0 && !self.name.is_empty()
    }
}

// Every entry of the table is well formed and no two share a name: a
// mistake there stops the build instead of a run.
const _: () = {
    let all = Preset::ALL;
    let mut i = 0;
    while i < all.len() {
        assert!(all[i].well_formed(), "a preset in Preset::ALL is malformed");
        let mut j = 0;
        while j < i {
            assert!(
                !same(all[i].name, all[j].name),
                "two presets in Preset::ALL share a name"
            );
            j += 1;
        }
        i += 1;
    }
};

/// String equality in a `const fn`, where `==` on `str` is not available.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Builds a preset's layout: the table is checked as the crate compiles and
/// every entry is built by the tests, so the builder never refuses one.
fn build(builder: LayoutBuilder) -> Layout {
    match builder.build() {
        Ok(layout) => layout,
        Err(err) => unreachable!("preset layout is invalid: {err}"),
    }
}

impl Default for Layout {
    fn default() -> Self {
        Layout::twitter()
    }
}

/// The named constructors, each the table's entry of that name.
fn named(name: &str) -> Layout {
    match Preset::find(name) {
        Some(preset) => preset.layout(),
        None => unreachable!("no preset named {name} in Preset::ALL"),
    }
}

impl Layout {
    /// The names of the built-in presets, in the order of [`Preset::ALL`],
    /// from which they are taken.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::PRESETS[0], "twitter");
    /// assert_eq!(snowflake::Layout::PRESETS.len(), snowflake::Preset::ALL.len());
    /// ```
    pub const PRESETS: [&'static str; Preset::ALL.len()] = {
        let mut names = [""; Preset::ALL.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = Preset::ALL[i].name;
            i += 1;
        }
        names
    };

    /// Twitter's layout, the default: epoch 1288834974657;
    /// sign 1 | time 41 | datacenter 5 | machine 5 | sequence 12.
    ///
    /// ```
    /// let id = snowflake::Layout::twitter()
    ///     .compose(1288834975657, &[("datacenter", 1), ("machine", 1)])?;
    /// assert_eq!(id.get(), 4194439168);
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn twitter() -> Layout {
        named("twitter")
    }

    /// Discord's layout: epoch 1420070400000 (2015);
    /// time 42 | worker 5 | process 5 | increment 12, no sign bit.
    ///
    /// ```
    /// let discord = snowflake::Layout::discord();
    /// let d = discord.decode(175928847299117063.into())?;
    /// assert_eq!(d.timestamp_ms(), 1462015105796);
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn discord() -> Layout {
        named("discord")
    }

    /// Instagram's layout: epoch 1314220021721; time 41 | shard 13 | sequence 10.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::instagram().field("shard").unwrap().bits(), 13);
    /// ```
    pub fn instagram() -> Layout {
        named("instagram")
    }

    /// Sony's sonyflake: epoch 2014-09-01, 10 ms ticks;
    /// sign 1 | time 39 | sequence 8 | machine 16.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::sonyflake().tick_ms(), 10);
    /// ```
    pub fn sonyflake() -> Layout {
        named("sonyflake")
    }

    /// Mastodon's layout: Unix epoch; time 48 | sequence 16.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::mastodon().epoch_ms(), 0);
    /// ```
    pub fn mastodon() -> Layout {
        named("mastodon")
    }

    /// IDs that JavaScript holds exactly as numbers: 53 bits, milliseconds
    /// since 2024-01-01T00:00:00Z (1704067200000);
    /// unused 11 | time 41 | worker 6 | sequence 6. 64 workers, 64 IDs a
    /// millisecond each, until 2093-09-06.
    ///
    /// ```
    /// let js53 = snowflake::Layout::js53();
    /// let id = js53.compose(1704067200001, &[("worker", 1), ("sequence", 2)])?;
    /// assert_eq!(id.get(), (1 << 12) | (1 << 6) | 2);
    /// assert!(js53.max_id().get() <= snowflake::Layout::JS_MAX_SAFE);
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn js53() -> Layout {
        named("js53")
    }

    /// Every preset's layout, in the order of [`Preset::ALL`].
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::presets()[1].name(), "discord");
    /// ```
    pub fn presets() -> [Layout; Preset::ALL.len()] {
        core::array::from_fn(|i| Preset::ALL[i].layout())
    }

    /// A preset's layout by name (ASCII case ignored).
    ///
    /// ```
    /// assert!(snowflake::Layout::preset("Twitter").is_some());
    /// assert!(snowflake::Layout::preset("flickr").is_none());
    /// ```
    pub fn preset(name: &str) -> Option<Layout> {
        Preset::find(name).map(Preset::layout)
    }

    /// The preset this layout is: one of that name with the preset's epoch
    /// and tick. `None` for a custom layout, or a preset given another epoch
    /// or tick (its IDs are then no longer the platform's).
    ///
    /// ```
    /// use snowflake::Layout;
    ///
    /// assert_eq!(Layout::discord().as_preset().unwrap().sequence(), "increment");
    /// assert!(Layout::discord().with_epoch_ms(0)?.as_preset().is_none());
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn as_preset(&self) -> Option<&'static Preset> {
        let preset = Preset::ALL.iter().find(|p| self.name() == p.name)?;
        (preset.epoch_ms == self.epoch_ms() && preset.tick_ms == self.tick_ms()).then_some(preset)
    }

    /// The platform a preset belongs to, for judging readings; `None` for a
    /// custom layout, or a preset given another epoch or tick.
    ///
    /// ```
    /// use snowflake::Layout;
    ///
    /// assert_eq!(Layout::twitter().platform().unwrap().name(), "Twitter");
    /// assert!(Layout::twitter().with_epoch_ms(0)?.platform().is_none());
    /// assert!(Layout::parse("time:41,node:22")?.platform().is_none());
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn platform(&self) -> Option<Platform> {
        self.as_preset().map(Preset::platform)
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::Preset;
    use crate::time::UnixMillis;
    use alloc::string::ToString;
    use serde::ser::{Serialize, SerializeStruct, Serializer};

    /// The table's entry as data for front ends (the page builds its list of
    /// presets from it): `{"name","spec","epoch_ms","tick_ms","time_bits",
    /// "fields":[[name,bits],…],"sequence","platform","launched_ms","launched"}`,
    /// fields most significant first.
    impl Serialize for Preset {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut s = serializer.serialize_struct("Preset", 10)?;
            s.serialize_field("name", self.name)?;
            s.serialize_field("spec", &self.layout().spec())?;
            s.serialize_field("epoch_ms", &self.epoch_ms)?;
            s.serialize_field("tick_ms", &self.tick_ms)?;
            s.serialize_field("time_bits", &self.time_bits)?;
            s.serialize_field("fields", self.fields)?;
            s.serialize_field("sequence", self.sequence)?;
            s.serialize_field("platform", self.platform.name)?;
            s.serialize_field("launched_ms", &self.platform.launched_ms)?;
            s.serialize_field(
                "launched",
                &UnixMillis(self.platform.launched_ms).to_string(),
            )?;
            s.end()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::UnixMillis;
    use alloc::string::ToString;
    use alloc::vec::Vec;

    /// What each preset is (its spec, epoch, tick, platform and day) is
    /// pinned by `testdata/vectors.json` (`tests/vectors.rs`); here, that
    /// everything derived from the table agrees with it.
    #[test]
    fn every_preset_has_a_sequence_and_fits_its_bits() {
        for layout in Layout::presets() {
            assert!(layout.sequence().is_some(), "{layout}");
            let widths: u32 = u32::from(layout.time_bits())
                + layout
                    .fields()
                    .iter()
                    .map(|f| u32::from(f.bits()))
                    .sum::<u32>();
            assert_eq!(u32::from(layout.bits()), widths, "{layout}");
            assert_eq!(layout.has_sign_bit(), widths == 63, "{layout}");
        }
        assert_eq!(Layout::presets().len(), Preset::ALL.len());
        assert_eq!(Layout::PRESETS.len(), Preset::ALL.len());
    }

    #[test]
    fn every_layout_is_its_table_entry() {
        for (preset, layout) in Preset::ALL.iter().zip(Layout::presets()) {
            assert_eq!(layout.name(), preset.name());
            assert_eq!(
                (layout.epoch_ms(), layout.tick_ms(), layout.time_bits()),
                (preset.epoch_ms, preset.tick_ms, preset.time_bits)
            );
            let fields: Vec<(&str, u8)> = layout
                .fields()
                .iter()
                .map(|f| (f.name(), f.bits()))
                .collect();
            assert_eq!(fields, preset.fields());
            assert_eq!(layout.sequence().map(|f| f.name()), Some(preset.sequence()));
            assert_eq!(layout.as_preset(), Some(preset));
            assert_eq!(layout.platform(), Some(preset.platform()));
            assert_eq!(
                Layout::preset(&preset.name().to_uppercase()),
                Some(layout.clone())
            );
            // A day's start.
            assert_eq!(preset.platform().launched_ms() % 86_400_000, 0);
        }
        assert_eq!(Layout::default(), Layout::presets()[0]);
    }

    #[test]
    fn a_changed_epoch_or_tick_is_no_longer_the_preset() {
        let twitter = Layout::twitter();
        assert!(
            twitter
                .clone()
                .with_epoch_ms(0)
                .unwrap()
                .as_preset()
                .is_none()
        );
        assert!(
            twitter
                .clone()
                .with_tick_ms(2)
                .unwrap()
                .as_preset()
                .is_none()
        );
        // The same widths written out are a custom layout.
        let custom = Layout::parse(&twitter.spec()).unwrap();
        assert!(custom.as_preset().is_none());
    }

    #[test]
    fn the_const_checks_catch_a_malformed_entry() {
        let twitter = Preset::ALL[0];
        assert!(twitter.well_formed());
        let no_sequence = Preset {
            sequence: "counter",
            ..twitter
        };
        assert!(!no_sequence.well_formed());
        let too_wide = Preset {
            time_bits: 43,
            ..twitter
        };
        assert!(!too_wide.well_formed());
        let twice = Preset {
            fields: &[("machine", 5), ("machine", 5), ("sequence", 12)],
            ..twitter
        };
        assert!(!twice.well_formed());
        assert!(same("a", "a") && !same("a", "b") && !same("a", "ab"));
    }

    #[test]
    fn js53_keeps_the_numbers_the_page_uses() {
        let js53 = Layout::js53();
        assert_eq!(js53.epoch_ms(), 1704067200000);
        assert_eq!(js53.tick_ms(), 1);
        assert_eq!(js53.max_id().get(), 9007199254740991);
        // 2^41 ms after 2024-01-01: the time field's end.
        assert_eq!(js53.last_timestamp_ms(), 1704067200000 + (1i64 << 41) - 1);
        assert_eq!(
            UnixMillis(js53.last_timestamp_ms()).to_string(),
            "2093-09-06T15:47:35.551Z"
        );
        assert_eq!((js53.node_count(), js53.ids_per_tick()), (64, Some(64)));
        let last = js53
            .compose(
                js53.last_timestamp_ms(),
                &[("worker", 63), ("sequence", 63)],
            )
            .unwrap();
        assert_eq!(last.get(), Layout::JS_MAX_SAFE);
    }

    #[cfg(feature = "serde")]
    #[test]
    fn the_table_as_json_names_everything_the_page_derives() {
        let json = serde_json::to_value(Preset::ALL).unwrap();
        assert_eq!(json.as_array().unwrap().len(), Preset::ALL.len());
        let at = |name: &str| Preset::ALL.iter().position(|p| p.name() == name).unwrap();
        assert_eq!(
            json[at("mastodon")],
            serde_json::json!({
                "name": "mastodon",
                "spec": "time:48,sequence:16",
                "epoch_ms": 0,
                "tick_ms": 1,
                "time_bits": 48,
                "fields": [["sequence", 16]],
                "sequence": "sequence",
                "platform": "Mastodon",
                "launched_ms": 1458086400000i64,
                "launched": "2016-03-16T00:00:00.000Z"
            })
        );
        assert_eq!(json[at("discord")]["sequence"], "increment");
        assert_eq!(json[at("sonyflake")]["tick_ms"], 10);
    }
}
