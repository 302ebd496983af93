//! What a dump of IDs says after an incident: duplicates, which node issued
//! what and when, IDs out of order on a node, IDs from the future or from
//! before the platform began, and time units where a node ran out of
//! sequence.
//!
//! # Memory
//! Duplicates are found exactly, by sorting. Every ID read goes into one
//! vector of `u64`s; whenever it fills it is sorted, its duplicates are
//! counted (in a map of the duplicated values) and dropped, and it doubles
//! only if more than half of it is still in use. So it never holds more
//! than four times the distinct IDs: at most 32 bytes per distinct ID, and
//! 8 to 16 for a dump without duplicates. Beside it: one entry per node
//! (about 100 bytes), one per duplicated value (about 40), and the IDs
//! listed in the report (at most the listing limit of each kind).
//!
//! Order within a node is judged as the IDs come, so it needs no more than
//! the node's previous ID.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use snowflake::{Error, Id, Layout, Readings};

/// The vector's first size, and the smallest it is compacted at.
const FIRST_CAPACITY: usize = 1 << 12;

/// Reads IDs one at a time and tallies what an operator looks for after an
/// incident; [`Audit::finish`] makes the [`AuditReport`].
///
/// ```
/// use snowflake::Layout;
/// use snowflake_ops::Audit;
///
/// let twitter = Layout::twitter();
/// let now = 1735689600000; // 2025-01-01
/// let at = |ms, machine, seq| twitter.compose(ms, &[("machine", machine), ("sequence", seq)]);
/// let mut audit = Audit::new(&twitter, now);
/// for id in [
///     at(now - 5000, 1, 0)?,
///     at(now - 4000, 1, 0)?,
///     at(now - 4000, 1, 0)?, // a copy
///     at(now - 6000, 1, 0)?, // machine 1's clock stepped back
///     at(now - 5000, 2, 4095)?, // machine 2 used its whole sequence
///     at(now + 3_600_000, 2, 0)?, // an hour ahead
/// ] {
///     audit.add(id)?;
/// }
/// let report = audit.finish();
/// assert_eq!((report.ids(), report.distinct()), (6, 5));
/// assert_eq!(report.duplicates()[0].count(), 2);
/// assert_eq!(report.not_increasing(), 2); // the copy, and the step back
/// assert_eq!(report.future(), 1);
/// assert_eq!(report.saturated_units(), Some(1));
/// assert_eq!(report.nodes().len(), 2);
/// # Ok::<(), snowflake::Error>(())
/// ```
#[derive(Debug)]
pub struct Audit<'a> {
    layout: &'a Layout,
    now_ms: i64,
    limit: usize,
    node_mask: u64,
    platform_ms: Option<i64>,
    ids: Vec<u64>,
    /// Values seen more than once, with their copies beyond the first.
    extra: BTreeMap<u64, u64>,
    /// A node's key (the ID with only its node bits) to its tally.
    index: BTreeMap<u64, usize>,
    nodes: Vec<NodeTally>,
    /// The tally of the last ID's node, as dumps come in runs of one node.
    last_node: Option<(u64, usize)>,
    count: u64,
    not_increasing: u64,
    future: u64,
    future_ids: Vec<Id>,
    early: u64,
    early_ids: Vec<Id>,
    first_ms: i64,
    last_ms: i64,
}

#[derive(Clone, Copy, Debug)]
struct NodeTally {
    key: u64,
    ids: u64,
    first_ms: i64,
    last_ms: i64,
    previous: u64,
    not_increasing: u64,
    saturated: u64,
}

impl<'a> Audit<'a> {
    /// How many IDs of each kind (duplicated, future, early) a report lists
    /// unless told otherwise; its counts are always exact.
    ///
    /// ```
    /// assert_eq!(snowflake_ops::Audit::DEFAULT_LIMIT, 100);
    /// ```
    pub const DEFAULT_LIMIT: usize = 100;

    /// An audit of IDs of `layout`, judged at `now_ms` (the caller reads its
    /// clock, so that tests can fix it). IDs more than
    /// [`Readings::FUTURE_SLACK_MS`] past it are from the future.
    ///
    /// ```
    /// let twitter = snowflake::Layout::twitter();
    /// let report = snowflake_ops::Audit::new(&twitter, 0).finish();
    /// assert_eq!(report.ids(), 0);
    /// ```
    pub fn new(layout: &'a Layout, now_ms: i64) -> Audit<'a> {
        let node_mask = layout
            .node_fields()
            .fold(0, |mask, f| mask | (f.max() << f.shift()));
        Audit {
            layout,
            now_ms,
            limit: Audit::DEFAULT_LIMIT,
            node_mask,
            platform_ms: layout.platform().map(|p| p.launched_ms()),
            ids: Vec::new(),
            extra: BTreeMap::new(),
            index: BTreeMap::new(),
            nodes: Vec::new(),
            last_node: None,
            count: 0,
            not_increasing: 0,
            future: 0,
            future_ids: Vec::new(),
            early: 0,
            early_ids: Vec::new(),
            first_ms: i64::MAX,
            last_ms: i64::MIN,
        }
    }

    /// Lists at most `limit` IDs of each kind in the report.
    ///
    /// ```
    /// let twitter = snowflake::Layout::twitter();
    /// let mut audit = snowflake_ops::Audit::new(&twitter, 0).limit(0);
    /// audit.add(1.into())?;
    /// audit.add(1.into())?;
    /// let report = audit.finish();
    /// assert_eq!((report.duplicated_values(), report.duplicates().len()), (1, 0));
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn limit(mut self, limit: usize) -> Audit<'a> {
        self.limit = limit;
        self
    }

    /// Reads one ID; an error, and nothing tallied, when the layout cannot
    /// decode it.
    ///
    /// ```
    /// let js53 = snowflake::Layout::js53();
    /// let mut audit = snowflake_ops::Audit::new(&js53, 0);
    /// assert!(audit.add((1u64 << 60).into()).is_err());
    /// assert_eq!(audit.finish().ids(), 0);
    /// ```
    pub fn add(&mut self, id: Id) -> Result<(), Error> {
        let time_ms = self.layout.decode(id)?.timestamp_ms();
        let raw = id.get();
        self.count += 1;
        self.first_ms = self.first_ms.min(time_ms);
        self.last_ms = self.last_ms.max(time_ms);
        if time_ms > self.now_ms.saturating_add(Readings::FUTURE_SLACK_MS) {
            self.future += 1;
            keep(&mut self.future_ids, self.limit, id);
        }
        if self.platform_ms.is_some_and(|launched| time_ms < launched) {
            self.early += 1;
            keep(&mut self.early_ids, self.limit, id);
        }
        let node = self.tally_of(raw & self.node_mask, time_ms);
        let stepped_back = node.ids > 0 && raw <= node.previous;
        node.not_increasing += u64::from(stepped_back);
        node.ids += 1;
        node.previous = raw;
        node.first_ms = node.first_ms.min(time_ms);
        node.last_ms = node.last_ms.max(time_ms);
        self.not_increasing += u64::from(stepped_back);
        if self.ids.len() == self.ids.capacity() {
            self.make_room();
        }
        self.ids.push(raw);
        Ok(())
    }

    fn tally_of(&mut self, key: u64, time_ms: i64) -> &mut NodeTally {
        let at = match self.last_node {
            Some((last, at)) if last == key => at,
            _ => {
                let nodes = &mut self.nodes;
                let at = *self.index.entry(key).or_insert_with(|| {
                    nodes.push(NodeTally {
                        key,
                        ids: 0,
                        first_ms: time_ms,
                        last_ms: time_ms,
                        previous: 0,
                        not_increasing: 0,
                        saturated: 0,
                    });
                    nodes.len() - 1
                });
                self.last_node = Some((key, at));
                at
            }
        };
        &mut self.nodes[at]
    }

    /// Compacts the full vector, and doubles it if that freed no more than
    /// half: the bound on memory in the module's docs.
    fn make_room(&mut self) {
        if self.ids.capacity() < FIRST_CAPACITY {
            self.ids.reserve_exact(FIRST_CAPACITY - self.ids.len());
            return;
        }
        self.compact();
        let capacity = self.ids.capacity();
        if self.ids.len() > capacity / 2 {
            self.ids.reserve_exact(capacity - self.ids.len() + capacity);
        }
    }

    /// Sorts the IDs, counts each value's copies beyond the first into
    /// `extra` and keeps one of each.
    fn compact(&mut self) {
        self.ids.sort_unstable();
        let ids = &mut self.ids;
        let mut kept = 0;
        let mut i = 0;
        while i < ids.len() {
            let value = ids[i];
            let mut run = 1;
            while i + run < ids.len() && ids[i + run] == value {
                run += 1;
            }
            if run > 1 {
                *self.extra.entry(value).or_insert(0) += run as u64 - 1;
            }
            ids[kept] = value;
            kept += 1;
            i += run;
        }
        ids.truncate(kept);
    }

    /// The report: duplicates found, saturated units counted, nodes in the
    /// order of their fields.
    pub fn finish(mut self) -> AuditReport<'a> {
        self.compact();
        let mut saturated_units = None;
        if let Some(seq) = self.layout.sequence() {
            let mut units = 0;
            // Each distinct ID whose sequence is the last is one (unit, node):
            // the rest of the ID is the unit and the node.
            for &raw in &self.ids {
                if seq.extract(raw) == seq.max() {
                    units += 1;
                    if let Some(&at) = self.index.get(&(raw & self.node_mask)) {
                        self.nodes[at].saturated += 1;
                    }
                }
            }
            saturated_units = Some(units);
        }
        let duplicates = self
            .extra
            .iter()
            .take(self.limit)
            .map(|(&value, &extra)| Duplicate {
                id: Id::new(value),
                count: extra + 1,
            })
            .collect();
        let mut nodes: Vec<NodeReport<'a>> = self
            .nodes
            .iter()
            .map(|t| NodeReport {
                layout: self.layout,
                key: t.key,
                ids: t.ids,
                first_ms: t.first_ms,
                last_ms: t.last_ms,
                not_increasing: t.not_increasing,
                saturated_units: saturated_units.map(|_| t.saturated),
            })
            .collect();
        nodes.sort_unstable_by_key(|n| n.key);
        AuditReport {
            layout: self.layout,
            now_ms: self.now_ms,
            ids: self.count,
            distinct: self.ids.len() as u64,
            duplicated_values: self.extra.len() as u64,
            duplicates,
            nodes,
            not_increasing: self.not_increasing,
            future: self.future,
            future_ids: self.future_ids,
            before_platform: self.platform_ms.map(|_| self.early),
            early_ids: self.early_ids,
            saturated_units,
            span: (self.count > 0).then_some((self.first_ms, self.last_ms)),
        }
    }
}

fn keep(list: &mut Vec<Id>, limit: usize, id: Id) {
    if list.len() < limit {
        list.push(id);
    }
}

/// A value that appears more than once, and how many times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Duplicate {
    id: Id,
    count: u64,
}

impl Duplicate {
    /// The ID.
    pub fn id(&self) -> Id {
        self.id
    }

    /// How many times it appears, 2 or more.
    pub fn count(&self) -> u64 {
        self.count
    }
}

/// One node's IDs: the node being the values of the layout's fields other
/// than time and sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeReport<'a> {
    layout: &'a Layout,
    key: u64,
    ids: u64,
    first_ms: i64,
    last_ms: i64,
    not_increasing: u64,
    saturated_units: Option<u64>,
}

impl<'a> NodeReport<'a> {
    /// The node's fields and their values, most significant first.
    ///
    /// ```
    /// let twitter = snowflake::Layout::twitter();
    /// let mut audit = snowflake_ops::Audit::new(&twitter, 0);
    /// audit.add(twitter.compose(1288834975657, &[("datacenter", 3), ("machine", 7)])?)?;
    /// let report = audit.finish();
    /// let node: Vec<(&str, u64)> = report.nodes()[0].fields().collect();
    /// assert_eq!(node, [("datacenter", 3), ("machine", 7)]);
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn fields(&self) -> impl Iterator<Item = (&'a str, u64)> + 'a {
        let key = self.key;
        self.layout
            .node_fields()
            .map(move |f| (f.name(), f.extract(key)))
    }

    /// How many IDs of the node were read, copies included.
    pub fn ids(&self) -> u64 {
        self.ids
    }

    /// Its earliest ID's time, Unix milliseconds.
    pub fn first_ms(&self) -> i64 {
        self.first_ms
    }

    /// Its latest ID's time, Unix milliseconds.
    pub fn last_ms(&self) -> i64 {
        self.last_ms
    }

    /// How many of its IDs were not above the node's ID before them, in the
    /// order read: a clock stepped back, two processes issuing as one node,
    /// or a copy.
    pub fn not_increasing(&self) -> u64 {
        self.not_increasing
    }

    /// In how many time units it issued the sequence's last value; `None`
    /// for a layout without a sequence.
    pub fn saturated_units(&self) -> Option<u64> {
        self.saturated_units
    }
}

/// What an [`Audit`] found; exact counts, and IDs listed up to its limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditReport<'a> {
    layout: &'a Layout,
    now_ms: i64,
    ids: u64,
    distinct: u64,
    duplicated_values: u64,
    duplicates: Vec<Duplicate>,
    nodes: Vec<NodeReport<'a>>,
    not_increasing: u64,
    future: u64,
    future_ids: Vec<Id>,
    before_platform: Option<u64>,
    early_ids: Vec<Id>,
    saturated_units: Option<u64>,
    span: Option<(i64, i64)>,
}

impl<'a> AuditReport<'a> {
    /// The layout the IDs were read with.
    pub fn layout(&self) -> &'a Layout {
        self.layout
    }

    /// The time the IDs were judged against, Unix milliseconds.
    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    /// How many IDs were read, copies included.
    pub fn ids(&self) -> u64 {
        self.ids
    }

    /// How many different IDs were read.
    pub fn distinct(&self) -> u64 {
        self.distinct
    }

    /// How many different values were read more than once.
    pub fn duplicated_values(&self) -> u64 {
        self.duplicated_values
    }

    /// Copies beyond each value's first: [`ids`](AuditReport::ids) less
    /// [`distinct`](AuditReport::distinct).
    pub fn extra_copies(&self) -> u64 {
        self.ids - self.distinct
    }

    /// The duplicated values, smallest first, up to the limit.
    pub fn duplicates(&self) -> &[Duplicate] {
        &self.duplicates
    }

    /// Each node seen, in the order of its field values.
    pub fn nodes(&self) -> &[NodeReport<'a>] {
        &self.nodes
    }

    /// How many IDs were not above their node's ID before them, all nodes
    /// together.
    pub fn not_increasing(&self) -> u64 {
        self.not_increasing
    }

    /// How many IDs are dated more than [`Readings::FUTURE_SLACK_MS`] after
    /// [`now_ms`](AuditReport::now_ms).
    pub fn future(&self) -> u64 {
        self.future
    }

    /// The IDs from the future, in the order read, up to the limit.
    pub fn future_ids(&self) -> &[Id] {
        &self.future_ids
    }

    /// How many IDs are dated before the layout's platform began; `None`
    /// for a layout with no [`Platform`](snowflake::Platform).
    pub fn before_platform(&self) -> Option<u64> {
        self.before_platform
    }

    /// The IDs from before the platform, in the order read, up to the limit.
    pub fn before_platform_ids(&self) -> &[Id] {
        &self.early_ids
    }

    /// How many (time unit, node) pairs issued the sequence's last value:
    /// the node used its whole sequence, and a generator then waits for the
    /// next unit. `None` for a layout without a sequence.
    pub fn saturated_units(&self) -> Option<u64> {
        self.saturated_units
    }

    /// The earliest and latest time of all IDs read; `None` when none were.
    pub fn span_ms(&self) -> Option<(i64, i64)> {
        self.span
    }

    /// Whether nothing looks wrong: no copies, nothing out of order, nothing
    /// from the future or before the platform. Saturation is load, not a
    /// fault, and does not count.
    ///
    /// ```
    /// let twitter = snowflake::Layout::twitter();
    /// assert!(snowflake_ops::Audit::new(&twitter, 0).finish().is_clean());
    /// ```
    pub fn is_clean(&self) -> bool {
        self.extra_copies() == 0
            && self.not_increasing == 0
            && self.future == 0
            && self.before_platform.unwrap_or(0) == 0
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::{AuditReport, Duplicate, NodeReport};
    use alloc::string::ToString;
    use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};
    use snowflake::Id;
    use snowflake::UnixMillis;

    /// An ID with its time: `{"id","time_ms","time"}`.
    struct Dated<'r>(&'r AuditReport<'r>, Id);

    impl Serialize for Dated<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let time = self.0.layout.decode(self.1).map(|d| d.timestamp_ms()).ok();
            let mut s = serializer.serialize_struct("Dated", 3)?;
            s.serialize_field("id", &self.1)?;
            s.serialize_field("time_ms", &time)?;
            s.serialize_field("time", &time.map(|t| UnixMillis(t).to_string()))?;
            s.end()
        }
    }

    struct DuplicateJson<'r>(&'r AuditReport<'r>, Duplicate);

    impl Serialize for DuplicateJson<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let time = self
                .0
                .layout
                .decode(self.1.id)
                .map(|d| d.timestamp_ms())
                .ok();
            let mut s = serializer.serialize_struct("Duplicate", 4)?;
            s.serialize_field("id", &self.1.id)?;
            s.serialize_field("count", &self.1.count)?;
            s.serialize_field("time_ms", &time)?;
            s.serialize_field("time", &time.map(|t| UnixMillis(t).to_string()))?;
            s.end()
        }
    }

    struct Fields<'n>(&'n NodeReport<'n>);

    impl Serialize for Fields<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_map(self.0.fields())
        }
    }

    /// `{"node":{field:value},"ids","first_ms","first","last_ms","last","not_increasing","saturated_units"}`.
    impl Serialize for NodeReport<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut s = serializer.serialize_struct("NodeReport", 8)?;
            s.serialize_field("node", &Fields(self))?;
            s.serialize_field("ids", &self.ids)?;
            s.serialize_field("first_ms", &self.first_ms)?;
            s.serialize_field("first", &UnixMillis(self.first_ms).to_string())?;
            s.serialize_field("last_ms", &self.last_ms)?;
            s.serialize_field("last", &UnixMillis(self.last_ms).to_string())?;
            s.serialize_field("not_increasing", &self.not_increasing)?;
            s.serialize_field("saturated_units", &self.saturated_units)?;
            s.end()
        }
    }

    struct List<'r, T>(&'r AuditReport<'r>, &'r [T]);

    impl Serialize for List<'_, Id> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_seq(self.1.iter().map(|id| Dated(self.0, *id)))
        }
    }

    impl Serialize for List<'_, Duplicate> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_seq(self.1.iter().map(|d| DuplicateJson(self.0, *d)))
        }
    }

    /// The one JSON form of an audit: `layout`, `now`, the counts (`ids`,
    /// `distinct`, `duplicated_values`, `extra_copies`, `not_increasing`,
    /// `future`, `before_platform`, `saturated_units`), the lists
    /// (`duplicates`, `future_ids`, `before_platform_ids`: `{"id","time"}`
    /// with `count` for a duplicate) and `nodes`.
    impl Serialize for AuditReport<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(None)?;
            map.serialize_entry("layout", &self.layout.spec())?;
            map.serialize_entry("name", &*self.layout.name())?;
            map.serialize_entry("epoch_ms", &self.layout.epoch_ms())?;
            map.serialize_entry("tick_ms", &self.layout.tick_ms())?;
            map.serialize_entry("now_ms", &self.now_ms)?;
            map.serialize_entry("now", &UnixMillis(self.now_ms).to_string())?;
            map.serialize_entry("ids", &self.ids)?;
            map.serialize_entry("distinct", &self.distinct)?;
            map.serialize_entry("duplicated_values", &self.duplicated_values)?;
            map.serialize_entry("extra_copies", &self.extra_copies())?;
            map.serialize_entry("duplicates", &List(self, &self.duplicates))?;
            map.serialize_entry("not_increasing", &self.not_increasing)?;
            map.serialize_entry("future", &self.future)?;
            map.serialize_entry("future_ids", &List(self, &self.future_ids))?;
            map.serialize_entry("before_platform", &self.before_platform)?;
            map.serialize_entry("before_platform_ids", &List(self, &self.early_ids))?;
            map.serialize_entry("saturated_units", &self.saturated_units)?;
            let (first, last) = match self.span {
                Some((first, last)) => (
                    Some(UnixMillis(first).to_string()),
                    Some(UnixMillis(last).to_string()),
                ),
                None => (None, None),
            };
            map.serialize_entry("first", &first)?;
            map.serialize_entry("last", &last)?;
            map.serialize_entry("clean", &self.is_clean())?;
            map.serialize_entry("nodes", &self.nodes)?;
            map.end()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1735689600000;

    fn audit_of<'a>(layout: &'a Layout, ids: &[u64]) -> AuditReport<'a> {
        let mut audit = Audit::new(layout, NOW);
        for &id in ids {
            audit.add(Id::new(id)).unwrap();
        }
        audit.finish()
    }

    #[test]
    fn duplicates_are_exact_across_many_compactions() {
        let layout = Layout::parse("time:41,node:10,sequence:12").unwrap();
        // 50,000 distinct IDs read twice over, the second time in reverse,
        // and one of them a third time: several compactions of the vector.
        let distinct: Vec<u64> = (0..50_000u64).map(|i| i * 7919 + (i << 30)).collect();
        let mut ids = distinct.clone();
        ids.extend(distinct.iter().rev());
        ids.push(distinct[123]);
        let report = audit_of(&layout, &ids);
        assert_eq!(report.ids(), 100_001);
        assert_eq!(report.distinct(), 50_000);
        assert_eq!(report.duplicated_values(), 50_000);
        assert_eq!(report.extra_copies(), 50_001);
        let listed: Vec<(u64, u64)> = report
            .duplicates()
            .iter()
            .map(|d| (d.id().get(), d.count()))
            .collect();
        assert_eq!(listed.len(), Audit::DEFAULT_LIMIT);
        let mut sorted = distinct.clone();
        sorted.sort_unstable();
        for (i, (id, count)) in listed.iter().enumerate() {
            assert_eq!(*id, sorted[i]);
            assert_eq!(*count, if *id == distinct[123] { 3 } else { 2 });
        }
    }

    #[test]
    fn copies_within_one_sort_are_counted_each() {
        let layout = Layout::mastodon();
        let report = audit_of(&layout, &[9, 9, 3, 9, 9]);
        assert_eq!((report.distinct(), report.extra_copies()), (2, 3));
        assert_eq!(
            report.duplicates(),
            [Duplicate {
                id: Id::new(9),
                count: 4
            }]
        );
    }

    #[test]
    fn the_vector_stays_within_four_times_the_distinct_ids() {
        let layout = Layout::mastodon();
        let mut audit = Audit::new(&layout, NOW);
        // A million reads of 1,000 values: the vector never grows past its
        // first size doubled, however many reads.
        for i in 0..1_000_000u64 {
            audit.add(Id::new((i % 1000) << 16)).unwrap();
        }
        assert!(
            audit.ids.capacity() <= 2 * FIRST_CAPACITY,
            "{}",
            audit.ids.capacity()
        );
        // All distinct: it holds them all, in at most twice their room.
        let mut audit = Audit::new(&layout, NOW);
        for i in 0..100_000u64 {
            audit.add(Id::new(i << 16)).unwrap();
        }
        assert!(
            audit.ids.capacity() <= 2 * 100_000,
            "{}",
            audit.ids.capacity()
        );
        assert_eq!(audit.finish().distinct(), 100_000);
    }

    #[test]
    fn order_is_judged_per_node_as_read() {
        let layout = Layout::twitter();
        let id = |ms: i64, machine: u64, seq: u64| {
            layout
                .compose(ms, &[("machine", machine), ("sequence", seq)])
                .unwrap()
                .get()
        };
        let t = NOW - 10_000;
        // Machines 1 and 2 interleaved, each increasing on its own: no fault,
        // though the stream as a whole goes up and down.
        let clean = [id(t, 2, 0), id(t, 1, 5), id(t + 1, 2, 0), id(t + 1, 1, 0)];
        let report = audit_of(&layout, &clean);
        assert_eq!(report.not_increasing(), 0);
        assert!(report.is_clean());
        // Two processes on machine 3, each counting its own sequence in the
        // same milliseconds: every switch back to the one behind is a fault.
        let shared = [
            id(t, 3, 0),
            id(t, 3, 1),
            id(t, 3, 0),
            id(t, 3, 1),
            id(t, 3, 2),
        ];
        let report = audit_of(&layout, &shared);
        assert_eq!(report.not_increasing(), 1);
        assert_eq!(report.extra_copies(), 2);
        assert_eq!(report.nodes()[0].not_increasing(), 1);
        assert_eq!(report.nodes()[0].ids(), 5);
    }

    #[test]
    fn nodes_times_saturation_future_and_platform() {
        let layout = Layout::twitter();
        let id = |ms: i64, dc: u64, machine: u64, seq: u64| {
            layout
                .compose(
                    ms,
                    &[("datacenter", dc), ("machine", machine), ("sequence", seq)],
                )
                .unwrap()
                .get()
        };
        let t = NOW - 60_000;
        let ids = [
            id(t, 1, 2, 4095),
            id(t, 1, 2, 4095), // a copy of a saturated ID counts once
            id(t + 5, 1, 2, 4095),
            id(t + 7, 0, 9, 0),
            id(NOW + Readings::FUTURE_SLACK_MS, 0, 9, 1), // within the slack
            id(NOW + Readings::FUTURE_SLACK_MS + 1, 0, 9, 2),
            id(1288834974657, 0, 9, 0), // Twitter's epoch: on its launch day
        ];
        let report = audit_of(&layout, &ids);
        /// A node as the test compares it: fields, IDs, first, last, not
        /// increasing, saturated units.
        type Row<'a> = (Vec<(&'a str, u64)>, u64, i64, i64, u64, Option<u64>);
        let nodes: Vec<Row<'_>> = report
            .nodes()
            .iter()
            .map(|n| {
                (
                    n.fields().collect(),
                    n.ids(),
                    n.first_ms(),
                    n.last_ms(),
                    n.not_increasing(),
                    n.saturated_units(),
                )
            })
            .collect();
        assert_eq!(
            nodes,
            [
                (
                    vec![("datacenter", 0), ("machine", 9)],
                    4,
                    1288834974657,
                    NOW + Readings::FUTURE_SLACK_MS + 1,
                    1,
                    Some(0)
                ),
                (
                    vec![("datacenter", 1), ("machine", 2)],
                    3,
                    t,
                    t + 5,
                    1,
                    Some(2)
                ),
            ]
        );
        assert_eq!(report.saturated_units(), Some(2));
        assert_eq!(report.future(), 1);
        assert_eq!(report.future_ids(), [Id::new(ids[5])]);
        assert_eq!(report.before_platform(), Some(0));
        assert_eq!(
            report.span_ms(),
            Some((1288834974657, NOW + Readings::FUTURE_SLACK_MS + 1))
        );
        // Mastodon began in 2016: a 1970 ID under its Unix epoch is early.
        let mastodon = Layout::mastodon();
        let report = audit_of(
            &mastodon,
            &[1 << 16, mastodon.compose(NOW, &[]).unwrap().get()],
        );
        assert_eq!(report.before_platform(), Some(1));
        assert_eq!(report.before_platform_ids(), [Id::new(1 << 16)]);
        assert!(!report.is_clean());
        // A custom layout has no platform, and without a sequence no saturation.
        let bare = Layout::parse("time:41,node:22").unwrap();
        let report = audit_of(&bare, &[u64::from(u32::MAX)]);
        assert_eq!(report.before_platform(), None);
        assert_eq!(report.saturated_units(), None);
        assert_eq!(report.nodes()[0].saturated_units(), None);
    }
}
