//! A run of IDs claimed with one compare-and-swap.

use crate::id::Id;

/// A run of consecutive IDs from one time unit, from [`Generator::next_ids`].
///
/// ```
/// let generator = snowflake::Generator::new(snowflake::Layout::twitter(), &[])?;
/// let batch = generator.next_ids(3)?;
/// let ids: Vec<_> = batch.collect();
/// assert!(ids.len() >= 1 && ids.len() <= 3);
/// assert!(ids.windows(2).all(|w| w[0] < w[1]));
/// # Ok::<(), snowflake::Error>(())
/// ```
// Not `Clone`: a copy would hand out the same IDs again.
#[derive(Debug, PartialEq, Eq)]
pub struct IdBatch {
    next: u64,
    left: u64,
    step: u64,
}

impl IdBatch {
    /// `left` IDs from `next` on, `step` apart (the sequence's place value).
    pub(crate) fn new(next: u64, left: u64, step: u64) -> Self {
        IdBatch { next, left, step }
    }

    /// The first ID of what is left, if any.
    pub fn first(&self) -> Option<Id> {
        (self.left > 0).then_some(Id::new(self.next))
    }

    /// The last ID of the batch, if any.
    pub fn last_id(&self) -> Option<Id> {
        (self.left > 0).then(|| Id::new(self.next + (self.left - 1) * self.step))
    }
}

impl Iterator for IdBatch {
    type Item = Id;

    #[inline]
    fn next(&mut self) -> Option<Id> {
        if self.left == 0 {
            return None;
        }
        let id = Id::new(self.next);
        self.left -= 1;
        self.next = self.next.wrapping_add(self.step);
        Some(id)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.left).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

impl ExactSizeIterator for IdBatch {}
