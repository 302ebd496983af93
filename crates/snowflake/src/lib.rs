//! Snowflake IDs: 64-bit, time-ordered, unique across machines without coordination.
//!
//! Twitter's layout, the default, from the most significant bit down:
//!
//! | bits | field | range |
//! | --- | --- | --- |
//! | 1 | sign, always 0, so the ID is positive as an `i64` | 0 |
//! | 41 | milliseconds since 1288834974657 (2010-11-04T01:42:54.657Z) | 0 to 2^41-1 |
//! | 5 | datacenter | 0 to 31 |
//! | 5 | machine | 0 to 31 |
//! | 12 | sequence within the millisecond | 0 to 4095 |
//!
//! ```text
//! id = ((t - 1288834974657) << 22) | (datacenter << 17) | (machine << 12) | sequence
//! ```
//!
//! The time field runs out at 2080-07-10T17:30:30.208Z; one node makes at most
//! 4,096 IDs a millisecond; 1,024 nodes can be addressed. IDs from different
//! nodes sort by time only as well as the nodes' clocks agree.
//!
//! Other families are [`Layout`] presets (`discord`, `instagram`, `sonyflake`,
//! `mastodon`) or custom layouts such as `time:29,worker:21,sequence:13`.
//!
//! ```
//! use snowflake::{Id, Layout};
//!
//! let twitter = Layout::twitter();
//! let id = twitter.compose(1288834975657, &[("datacenter", 1), ("machine", 1), ("sequence", 0)])?;
//! assert_eq!(id, Id::new(4194439168));
//!
//! let decoded = twitter.decode(id)?;
//! assert_eq!(decoded.time().to_string(), "2010-11-04T01:42:55.657Z");
//! assert_eq!(decoded.field("machine"), Some(1));
//! # Ok::<(), snowflake::Error>(())
//! ```
//!
//! [`Generator`] hands out IDs: lock-free, safe when the clock steps back,
//! safe across restarts with a [`MarkStore`], at the layout's ceiling.
//!
//! [`Layout::time_left`] says how long a layout lasts. The tools an
//! operator plans a layout with or audits a dump of IDs with are the
//! `snowflake-ops` crate's; the file a generator keeps its mark in is the
//! `snowflake-store` crate's: this crate does no I/O.
//!
//! # Features
//! - `std` (default): the system clock, the generator and its waiting, the
//!   [`MarkStore`] trait. Without it the crate is `no_std` (with `alloc`): layouts,
//!   compose, decode and bounds.
//! - `serde`: [`Id`] as a decimal string; [`Decoded`] as the JSON breakdown.
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(missing_docs)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

extern crate alloc;

#[cfg(feature = "std")]
mod batch;
mod bounds;
#[cfg(feature = "std")]
mod builder;
#[cfg(feature = "std")]
mod clock;
mod decoded;
mod digits;
mod error;
#[cfg(feature = "std")]
mod generator;
mod id;
mod layout;
mod lifetime;
#[cfg(all(test, loom))]
mod loom_tests;
mod parse_time;
mod presets;
mod readings;
#[cfg(feature = "std")]
mod reserve;
mod spec;
#[cfg(feature = "std")]
mod store;
#[cfg(feature = "std")]
mod sync;
mod text;
mod time;

#[cfg(feature = "std")]
pub use batch::IdBatch;
pub use bounds::Bounds;
#[cfg(feature = "std")]
pub use builder::GeneratorBuilder;
#[cfg(feature = "std")]
pub use clock::{CachedClock, Clock, ManualClock, SystemClock};
pub use decoded::{Decoded, Segment};
pub use error::{Error, ErrorKind};
#[cfg(feature = "std")]
pub use generator::{Generator, GeneratorStats, SharedGenerator, SharedState};
pub use id::Id;
pub use layout::{Field, Layout, LayoutBuilder};
pub use lifetime::TimeLeft;
pub use presets::{Platform, Preset};
pub use readings::{Reading, Readings, Verdict};
#[cfg(feature = "std")]
pub use store::{MarkStore, SharedMark};
pub use text::TextForm;
pub use time::UnixMillis;

#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
