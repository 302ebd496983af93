//! The built-in layouts of the ID families people meet in the wild.

use crate::layout::{Layout, LayoutBuilder};

/// Builds a preset, whose widths are constants the tests check.
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

impl Layout {
    /// The names of the built-in presets, in the order [`Layout::presets`] lists them.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::PRESETS[0], "twitter");
    /// ```
    pub const PRESETS: [&str; 6] = [
        "twitter",
        "discord",
        "instagram",
        "sonyflake",
        "mastodon",
        "js53",
    ];

    fn preset_builder(name: &'static str, epoch_ms: i64, time_bits: u8) -> LayoutBuilder {
        Layout::builder()
            .epoch_ms(epoch_ms)
            .time_bits(time_bits)
            .named(name)
    }

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
        build(
            Layout::preset_builder("twitter", 1288834974657, 41)
                .field("datacenter", 5)
                .field("machine", 5)
                .sequence("sequence", 12),
        )
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
        build(
            Layout::preset_builder("discord", 1420070400000, 42)
                .field("worker", 5)
                .field("process", 5)
                .sequence("increment", 12),
        )
    }

    /// Instagram's layout: epoch 1314220021721; time 41 | shard 13 | sequence 10.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::instagram().field("shard").unwrap().bits(), 13);
    /// ```
    pub fn instagram() -> Layout {
        build(
            Layout::preset_builder("instagram", 1314220021721, 41)
                .field("shard", 13)
                .sequence("sequence", 10),
        )
    }

    /// Sony's sonyflake: epoch 2014-09-01, 10 ms ticks;
    /// sign 1 | time 39 | sequence 8 | machine 16.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::sonyflake().tick_ms(), 10);
    /// ```
    pub fn sonyflake() -> Layout {
        build(
            Layout::preset_builder("sonyflake", 1409529600000, 39)
                .tick_ms(10)
                .sequence("sequence", 8)
                .field("machine", 16),
        )
    }

    /// Mastodon's layout: Unix epoch; time 48 | sequence 16.
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::mastodon().epoch_ms(), 0);
    /// ```
    pub fn mastodon() -> Layout {
        build(Layout::preset_builder("mastodon", 0, 48).sequence("sequence", 16))
    }

    /// IDs that JavaScript holds exactly as numbers: 53 bits, milliseconds
    /// since 2024-01-01T00:00:00Z (1704067200000);
    /// unused 11 | time 41 | worker 6 | sequence 6. 64 workers, 64 IDs a
    /// millisecond each, until 2093-09-06. The page computes the same layout
    /// in JavaScript with these numbers.
    ///
    /// ```
    /// let js53 = snowflake::Layout::js53();
    /// let id = js53.compose(1704067200001, &[("worker", 1), ("sequence", 2)])?;
    /// assert_eq!(id.get(), (1 << 12) | (1 << 6) | 2);
    /// assert!(js53.max_id().get() <= snowflake::Layout::JS_MAX_SAFE);
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn js53() -> Layout {
        build(
            Layout::preset_builder("js53", 1704067200000, 41)
                .field("worker", 6)
                .sequence("sequence", 6),
        )
    }

    /// Every preset, in the order of [`Layout::PRESETS`].
    ///
    /// ```
    /// assert_eq!(snowflake::Layout::presets()[1].name(), "discord");
    /// ```
    pub fn presets() -> [Layout; 6] {
        [
            Layout::twitter(),
            Layout::discord(),
            Layout::instagram(),
            Layout::sonyflake(),
            Layout::mastodon(),
            Layout::js53(),
        ]
    }

    /// A preset by name (ASCII case ignored).
    ///
    /// ```
    /// assert!(snowflake::Layout::preset("Twitter").is_some());
    /// assert!(snowflake::Layout::preset("flickr").is_none());
    /// ```
    pub fn preset(name: &str) -> Option<Layout> {
        Layout::presets()
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(name))
    }
}

#[cfg(test)]
mod tests {
    use crate::layout::Layout;
    use alloc::vec::Vec;

    #[test]
    fn presets_have_the_documented_shape() {
        let specs = [
            "time:41,datacenter:5,machine:5,sequence:12",
            "time:42,worker:5,process:5,increment:12",
            "time:41,shard:13,sequence:10",
            "time:39,sequence:8,machine:16",
            "time:48,sequence:16",
            "time:41,worker:6,sequence:6",
        ];
        for ((layout, spec), name) in Layout::presets().iter().zip(specs).zip(Layout::PRESETS) {
            assert_eq!(layout.spec(), spec);
            assert_eq!(layout.name(), name);
            assert!(layout.sequence().is_some());
        }
        let signs: Vec<bool> = Layout::presets().iter().map(|l| l.has_sign_bit()).collect();
        assert_eq!(signs, [true, false, false, true, false, false]);
        let bits: Vec<u8> = Layout::presets().iter().map(|l| l.bits()).collect();
        assert_eq!(bits, [63, 64, 64, 63, 64, 53]);
        let js_safe: Vec<bool> = Layout::presets().iter().map(|l| l.is_js_safe()).collect();
        assert_eq!(js_safe, [false, false, false, false, false, true]);
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
            alloc::string::ToString::to_string(&crate::time::UnixMillis(js53.last_timestamp_ms())),
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
}
