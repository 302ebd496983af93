//! A run of IDs claimed with one compare-and-swap.

use crate::id::Id;

/// A run of consecutive IDs from one time unit, from [`Generator::next_ids`](crate::Generator::next_ids).
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

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn a_batch_steps_by_the_sequence_place_value() {
        let mut batch = IdBatch::new(10, 3, 4);
        assert_eq!(batch.len(), 3);
        assert_eq!(batch.size_hint(), (3, Some(3)));
        assert_eq!(batch.first(), Some(Id::new(10)));
        assert_eq!(batch.last_id(), Some(Id::new(18)));
        assert_eq!(batch.next(), Some(Id::new(10)));
        assert_eq!(batch.first(), Some(Id::new(14)));
        assert_eq!(batch.last_id(), Some(Id::new(18)));
        let rest: Vec<u64> = batch.by_ref().map(Id::get).collect();
        assert_eq!(rest, [14, 18]);
        assert_eq!(
            (batch.first(), batch.last_id(), batch.next()),
            (None, None, None)
        );
        assert_eq!(batch.len(), 0);
    }

    #[test]
    fn an_empty_batch_has_no_ids() {
        let mut empty = IdBatch::new(0, 0, 0);
        assert_eq!(
            (empty.first(), empty.last_id(), empty.next()),
            (None, None, None)
        );
    }
}
