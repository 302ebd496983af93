//! Key rotation: the current key masks, every key unmasks.
//!
//! A masked ID cannot say which key made it. It has exactly the layout's
//! width, every bit of which the permutation uses, and under any key every
//! value unmasks to *some* valid ID, so there is no wrong answer to notice
//! either. Carrying a key version in FF1's tweak would not help: the tweak
//! must be known to unmask, which is the same question again.
//!
//! So which key made a masked ID has to come from the caller: from where
//! it is kept (a `v2` in the URL's path, a column beside it), or from what
//! the caller knows, as [`Keyring::find`] does, trying each key in turn
//! and keeping the first ID the caller recognises (one its database holds).
//! A wrong key's answer is a uniformly random ID of the layout, which a
//! table holding a sliver of the layout's 2^63 IDs almost never has.

use snowflake::{Id, Layout};

use crate::error::Error;
use crate::key::MaskKey;
use crate::masker::Masker;

/// Maskers for one layout under several keys, newest first: the first
/// masks, all of them unmask.
///
/// ```
/// use std::collections::HashSet;
/// use snowflake::{Id, Layout};
/// use snowflake_mask::{Keyring, MaskKey};
///
/// let twitter = Layout::twitter();
/// let (old, new) = (MaskKey::from_bytes([1; 32]), MaskKey::from_bytes([2; 32]));
/// let id = Id::new(1541815603606036480);
/// let orders: HashSet<Id> = [id].into();
///
/// // Masked before the rotation, under the old key alone...
/// let before = Keyring::new(&twitter, [old.clone()])?.mask(id)?;
/// // ...and found after it, under the old key, second in the ring.
/// let ring = Keyring::new(&twitter, [new, old])?;
/// assert_eq!(ring.find(before, |id| orders.contains(&id))?, Some((1, id)));
/// // New IDs are masked with the new key.
/// let after = ring.mask(id)?;
/// assert_eq!(ring.find(after, |id| orders.contains(&id))?, Some((0, id)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Keyring {
    /// Never empty.
    maskers: Vec<Masker>,
}

impl Keyring {
    /// A ring of `keys`, newest first. At least one key is needed.
    ///
    /// ```
    /// use snowflake_mask::{Keyring, MaskKey};
    ///
    /// let none: [MaskKey; 0] = [];
    /// let err = snowflake_mask::Keyring::new(&snowflake::Layout::twitter(), none).unwrap_err();
    /// assert_eq!(err.to_string(), "a key ring needs at least one key");
    /// ```
    pub fn new(layout: &Layout, keys: impl IntoIterator<Item = MaskKey>) -> Result<Keyring, Error> {
        let maskers = keys
            .into_iter()
            .map(|key| Masker::new(layout, &key))
            .collect::<Result<Vec<_>, _>>()?;
        if maskers.is_empty() {
            return Err(Error::no_key());
        }
        Ok(Keyring { maskers })
    }

    /// Masks with the newest key.
    ///
    /// ```
    /// # use snowflake_mask::{Keyring, MaskKey, Masker};
    /// # let twitter = snowflake::Layout::twitter();
    /// let (new, old) = (MaskKey::from_bytes([2; 32]), MaskKey::from_bytes([1; 32]));
    /// let ring = Keyring::new(&twitter, [new.clone(), old])?;
    /// let id = snowflake::Id::new(4194439168);
    /// assert_eq!(ring.mask(id)?, Masker::new(&twitter, &new)?.mask(id)?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn mask(&self, id: Id) -> Result<Id, snowflake::Error> {
        self.maskers[0].mask(id)
    }

    /// What `masked` unmasks to under each key, newest first: one of them,
    /// at most, is the ID that was masked.
    ///
    /// ```
    /// # use snowflake_mask::{Keyring, MaskKey};
    /// # let twitter = snowflake::Layout::twitter();
    /// let ring = Keyring::new(&twitter, [MaskKey::from_bytes([2; 32]), MaskKey::from_bytes([1; 32])])?;
    /// let id = snowflake::Id::new(4194439168);
    /// let candidates = ring.candidates(ring.mask(id)?)?;
    /// assert_eq!(candidates[0], id);
    /// assert_ne!(candidates[1], id);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn candidates(&self, masked: Id) -> Result<Vec<Id>, snowflake::Error> {
        self.maskers.iter().map(|m| m.unmask(masked)).collect()
    }

    /// The first key, newest first, under which `masked` unmasks to an ID
    /// that `known` accepts, with that ID; `None` if no key does.
    ///
    /// ```
    /// # use snowflake_mask::{Keyring, MaskKey};
    /// # let twitter = snowflake::Layout::twitter();
    /// let ring = Keyring::new(&twitter, [MaskKey::from_bytes([2; 32])])?;
    /// let masked = ring.mask(snowflake::Id::new(4194439168))?;
    /// assert_eq!(ring.find(masked, |_| false)?, None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn find(
        &self,
        masked: Id,
        mut known: impl FnMut(Id) -> bool,
    ) -> Result<Option<(usize, Id)>, snowflake::Error> {
        for (index, masker) in self.maskers.iter().enumerate() {
            let id = masker.unmask(masked)?;
            if known(id) {
                return Ok(Some((index, id)));
            }
        }
        Ok(None)
    }

    /// The maskers, newest key first.
    ///
    /// ```
    /// # use snowflake_mask::{Keyring, MaskKey};
    /// let ring = Keyring::new(&snowflake::Layout::js53(), [MaskKey::from_bytes([2; 32])])?;
    /// assert_eq!(ring.maskers().len(), 1);
    /// # Ok::<(), snowflake_mask::Error>(())
    /// ```
    pub fn maskers(&self) -> &[Masker] {
        &self.maskers
    }
}
