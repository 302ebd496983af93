//! FF1 over a layout's bits: the keyed permutation itself.

use std::fmt;

use aes::Aes256Enc;
use fpe::ff1::FF1;
use snowflake::{Id, Layout};

use crate::bits::Bits;
use crate::error::Error;
use crate::key::MaskKey;

/// FF1's tweak, the same for every ID. The layout's width is already bound
/// by FF1 itself (its length enters every round), and a key file serves
/// this and nothing else, so there is nothing to separate; an empty tweak
/// also keeps each round to one two-block CBC-MAC.
const TWEAK: &[u8] = &[];

/// A keyed permutation of one layout's IDs: every ID of the layout masks to
/// another ID of the layout, in the same width, and unmasks back exactly.
///
/// It is FF1 (NIST SP 800-38G) with AES-256, radix 2, over the layout's
/// [`bits`](Layout::bits): the ID written as that many binary digits, most
/// significant first, is the plaintext. The permutation depends on the key
/// and the width only, not on the names, order or epoch of the fields, so
/// an epoch override leaves masked IDs unchanged.
///
/// Making one costs an AES key schedule; masking costs eleven AES blocks
/// (one shared by FF1's ten rounds, then one a round) and no allocation. It is `Send` and `Sync`: share one
/// behind an `Arc`.
///
/// ```
/// use snowflake::{Id, Layout};
/// use snowflake_mask::{MaskKey, Masker};
///
/// let twitter = Layout::twitter();
/// let masker = Masker::new(&twitter, &MaskKey::from_bytes([7; 32]))?;
/// let id = Id::new(1541815603606036480);
/// let masked = masker.mask(id)?;
/// assert_ne!(masked, id);
/// assert!(masked <= twitter.max_id()); // still a non-negative i64
/// assert_eq!(masker.unmask(masked)?, id);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Masker {
    layout: Layout,
    ff1: FF1<Aes256Enc>,
}

impl Masker {
    /// The narrowest layout that can be masked, in bits: FF1 needs a domain
    /// of at least a million values (NIST SP 800-38G Rev. 1), and 2^20 is
    /// the first power of two past it.
    ///
    /// ```
    /// assert_eq!(snowflake_mask::Masker::MIN_BITS, 20);
    /// ```
    pub const MIN_BITS: u8 = 20;

    /// A masker for `layout`'s IDs under `key`. Layouts narrower than
    /// [`MIN_BITS`](Masker::MIN_BITS) are refused.
    ///
    /// ```
    /// use snowflake::Layout;
    /// use snowflake_mask::{MaskKey, Masker};
    ///
    /// let key = MaskKey::from_bytes([7; 32]);
    /// assert!(Masker::new(&Layout::js53(), &key).is_ok());
    /// let err = Masker::new(&"time:12,sequence:6".parse()?, &key).unwrap_err();
    /// assert!(err.to_string().starts_with("layout time:12,sequence:6 is 18 bits wide; masking needs at least 20 bits"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(layout: &Layout, key: &MaskKey) -> Result<Masker, Error> {
        if layout.bits() < Masker::MIN_BITS {
            return Err(Error::too_narrow(
                layout.name().into_owned(),
                layout.bits(),
                Masker::MIN_BITS,
            ));
        }
        let ff1 = match FF1::<Aes256Enc>::new(key.bytes(), 2) {
            Ok(ff1) => ff1,
            Err(err) => unreachable!("radix 2 is within FF1's range: {err}"),
        };
        Ok(Masker {
            layout: layout.clone(),
            ff1,
        })
    }

    /// The layout whose IDs this masker permutes.
    ///
    /// ```
    /// # use snowflake_mask::{MaskKey, Masker};
    /// let masker = Masker::new(&snowflake::Layout::js53(), &MaskKey::from_bytes([7; 32]))?;
    /// assert_eq!(masker.layout().name(), "js53");
    /// # Ok::<(), snowflake_mask::Error>(())
    /// ```
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Masks an ID. An ID outside the layout (the sign bit set, or bits
    /// above a narrower layout's width) is the error `decode` gives for it.
    ///
    /// ```
    /// use snowflake::{Id, Layout};
    /// use snowflake_mask::{MaskKey, Masker};
    ///
    /// let js53 = Layout::js53();
    /// let masker = Masker::new(&js53, &MaskKey::from_bytes([7; 32]))?;
    /// assert!(masker.mask(Id::new(12345))?.get() <= (1 << 53) - 1);
    /// let err = masker.mask(Id::new(1 << 53)).unwrap_err();
    /// assert_eq!(err.field(), Some("id"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn mask(&self, id: Id) -> Result<Id, snowflake::Error> {
        let bits = self.bits(id)?;
        match self.ff1.encrypt(TWEAK, &bits) {
            Ok(masked) => Ok(Self::id(masked)),
            Err(err) => unreachable!("the width was checked in Masker::new: {err}"),
        }
    }

    /// Unmasks a masked ID: the inverse of [`mask`](Masker::mask). Any ID of
    /// the layout unmasks to some ID of the layout; only the key that
    /// masked it gives back the one that was masked.
    ///
    /// ```
    /// use snowflake::{Id, Layout};
    /// use snowflake_mask::{MaskKey, Masker};
    ///
    /// let masker = Masker::new(&Layout::twitter(), &MaskKey::from_bytes([7; 32]))?;
    /// let id = Id::new(4194439168);
    /// assert_eq!(masker.unmask(masker.mask(id)?)?, id);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn unmask(&self, masked: Id) -> Result<Id, snowflake::Error> {
        let bits = self.bits(masked)?;
        match self.ff1.decrypt(TWEAK, &bits) {
            Ok(id) => Ok(Self::id(id)),
            Err(err) => unreachable!("the width was checked in Masker::new: {err}"),
        }
    }

    /// The ID as FF1's numeral string, after the layout's own range check.
    fn bits(&self, id: Id) -> Result<Bits, snowflake::Error> {
        self.layout.decode(id)?;
        Ok(Bits::new(
            u128::from(id.get()),
            u32::from(self.layout.bits()),
        ))
    }

    fn id(bits: Bits) -> Id {
        // A permutation of n-bit strings, n at most 64: the value fits.
        Id::new(bits.value() as u64)
    }
}

impl fmt::Debug for Masker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Masker")
            .field("layout", &self.layout.name())
            .field("bits", &self.layout.bits())
            .field("key", &format_args!("[redacted]"))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_names_the_layout_and_hides_the_key() {
        let masker = Masker::new(&Layout::twitter(), &MaskKey::from_bytes([0xab; 32])).unwrap();
        let debug = format!("{masker:?}");
        assert_eq!(
            debug,
            "Masker { layout: \"twitter\", bits: 63, key: [redacted] }"
        );
    }

    #[test]
    fn maskers_can_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<Masker>();
    }

    #[test]
    fn the_narrowest_width_is_twenty_bits() {
        let key = MaskKey::from_bytes([1; 32]);
        let at = |bits: u8| {
            Layout::builder()
                .time_bits(bits - 4)
                .sequence("sequence", 4)
                .build()
                .unwrap()
        };
        assert!(Masker::new(&at(20), &key).is_ok());
        let err = Masker::new(&at(19), &key).unwrap_err();
        assert_eq!(
            err.to_string(),
            "layout time:15,sequence:4 is 19 bits wide; masking needs at least 20 bits, because \
             FF1 is approved only for domains of a million values or more (NIST SP 800-38G Rev. 1)"
        );
    }
}
