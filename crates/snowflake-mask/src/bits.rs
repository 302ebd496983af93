//! An ID as FF1 reads it in radix 2: a numeral string of `n` binary digits,
//! most significant first, so that NUM₂(X) is the ID itself.
//!
//! `fpe` runs the cipher (the rounds, the PRF, the round keys' arithmetic
//! order); a numeral string only says how its digits are split, joined,
//! turned into bytes and added to modulo radix^m. The crate's own radix-2
//! string works on whole bytes in little-endian bit order and its general
//! one on big integers; an ID is neither. Here the whole string is a `u128`
//! and each half a `u64`, so every step is a shift, a mask or a wrapping
//! add, with no allocation. The tests hold it to the published radix-2
//! vectors and to `fpe`'s big-integer string on random widths and values.

use fpe::ff1::{NumeralString, Operations};

/// The widest numeral string: each half of a 128-digit string fits in a
/// `u64`, which is what keeps the arithmetic below in machine words. IDs
/// use at most 64; the published radix-2 vectors need 88.
pub(crate) const MAX_DIGITS: u32 = 128;

/// `n` binary digits, most significant first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bits {
    value: u128,
    len: u32,
}

impl Bits {
    /// The `len` low bits of `value`; higher bits make it invalid for FF1,
    /// which then refuses it.
    pub(crate) const fn new(value: u128, len: u32) -> Bits {
        Bits { value, len }
    }

    pub(crate) const fn value(self) -> u128 {
        self.value
    }
}

/// One half of a [`Bits`] during the rounds: at most 64 digits.
#[derive(Debug)]
pub(crate) struct Half {
    value: u64,
    len: u32,
}

/// NUM₂(X) as `b` big-endian bytes, `b` at most 16.
#[derive(Debug)]
pub(crate) struct BeBytes {
    buf: [u8; 16],
    len: usize,
}

impl AsRef<[u8]> for BeBytes {
    fn as_ref(&self) -> &[u8] {
        &self.buf[16 - self.len..]
    }
}

/// The `bits` low bits set, for `bits` of 0 to 64.
const fn low_mask(bits: u32) -> u64 {
    match bits {
        0 => 0,
        _ => u64::MAX >> (64 - bits),
    }
}

/// The low 64 bits of a big-endian byte string: all that `(x ± y) mod 2^m`
/// needs of `y` when `m` is at most 64.
fn low_u64(bytes: impl Iterator<Item = u8>) -> u64 {
    bytes.fold(0, |acc, byte| (acc << 8) | u64::from(byte))
}

impl Half {
    /// `value` mod 2^m, as `m` binary digits. 2^m divides 2^64, so a sum or
    /// difference wrapped in u64 and then masked is taken mod 2^m.
    fn mod_exp(value: u64, m: usize) -> Half {
        let m = m as u32;
        Half {
            value: value & low_mask(m),
            len: m,
        }
    }
}

impl Operations for Half {
    type Bytes = BeBytes;

    fn numeral_count(&self) -> usize {
        self.len as usize
    }

    fn to_be_bytes(&self, radix: u32, b: usize) -> BeBytes {
        debug_assert_eq!(radix, 2);
        // FF1 sizes b for the longer half: ⌈v / 8⌉, at most 8 here. The
        // value's 8 bytes sit at the end of 16, so any b up to 16 reads
        // leading zeros and then the value.
        let mut buf = [0; 16];
        buf[8..].copy_from_slice(&self.value.to_be_bytes());
        BeBytes {
            buf,
            len: b.min(16),
        }
    }

    fn add_mod_exp(self, other: impl Iterator<Item = u8>, radix: u32, m: usize) -> Self {
        debug_assert_eq!(radix, 2);
        Half::mod_exp(self.value.wrapping_add(low_u64(other)), m)
    }

    fn sub_mod_exp(self, other: impl Iterator<Item = u8>, radix: u32, m: usize) -> Self {
        debug_assert_eq!(radix, 2);
        Half::mod_exp(self.value.wrapping_sub(low_u64(other)), m)
    }
}

impl NumeralString for Bits {
    type Ops = Half;

    fn is_valid(&self, radix: u32) -> bool {
        radix == 2
            && self.len <= MAX_DIGITS
            && (self.len == MAX_DIGITS || self.value >> self.len == 0)
    }

    fn numeral_count(&self) -> usize {
        self.len as usize
    }

    /// A = the top ⌊n/2⌋ digits, B = the other ⌈n/2⌉ (SP 800-38G, FF1 steps 1–2).
    fn split(&self) -> (Half, Half) {
        let u = self.len / 2;
        let v = self.len - u;
        // Each half is at most 64 digits, so the casts keep every bit.
        let b = (self.value & u128::from(low_mask(v))) as u64;
        let a = (self.value.checked_shr(v).unwrap_or(0)) as u64;
        (Half { value: a, len: u }, Half { value: b, len: v })
    }

    /// A || B (SP 800-38G, FF1 step 7).
    fn concat(a: Half, b: Half) -> Bits {
        Bits {
            value: (u128::from(a.value) << b.len) | u128::from(b.value),
            len: a.len + b.len,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_and_concat_are_inverse_at_every_width() {
        for len in 2..=MAX_DIGITS {
            let value = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834_u128;
            let value = if len == 128 {
                value
            } else {
                value & ((1 << len) - 1)
            };
            let bits = Bits::new(value, len);
            let (a, b) = bits.split();
            assert_eq!((a.len, b.len), (len / 2, len - len / 2));
            assert_eq!(Bits::concat(a, b), bits, "width {len}");
        }
    }

    #[test]
    fn halves_are_the_top_and_bottom_digits() {
        // 0b10110 in 5 digits: A = "10", B = "110".
        let (a, b) = Bits::new(0b10110, 5).split();
        assert_eq!((a.value, a.len), (0b10, 2));
        assert_eq!((b.value, b.len), (0b110, 3));
    }

    #[test]
    fn bytes_are_big_endian_and_padded_to_b() {
        let half = Half {
            value: 0x0102,
            len: 12,
        };
        assert_eq!(half.to_be_bytes(2, 2).as_ref(), [1, 2]);
        assert_eq!(half.to_be_bytes(2, 4).as_ref(), [0, 0, 1, 2]);
    }

    #[test]
    fn modular_arithmetic_wraps_at_m_digits() {
        let half = |value| Half { value, len: 4 };
        // 15 + 3 = 18 ≡ 2 (mod 16); y given as more bytes than m needs.
        assert_eq!(
            half(15).add_mod_exp([0xff, 0x03].into_iter(), 2, 4).value,
            2
        );
        // 1 − 3 ≡ 14 (mod 16).
        assert_eq!(half(1).sub_mod_exp([3].into_iter(), 2, 4).value, 14);
        let full = Half {
            value: u64::MAX,
            len: 64,
        };
        assert_eq!(full.add_mod_exp([1].into_iter(), 2, 64).value, 0);
    }

    #[test]
    fn digits_beyond_the_width_are_invalid() {
        assert!(Bits::new(0b1111, 4).is_valid(2));
        assert!(!Bits::new(0b10000, 4).is_valid(2));
        assert!(!Bits::new(1, 4).is_valid(10));
        assert!(Bits::new(u128::MAX, 128).is_valid(2));
    }

    /// The published vectors, and `fpe`'s own big-integer numeral string,
    /// which they check, to hold ours to.
    mod published {
        use aes::Aes256;
        use fpe::ff1::{FF1, FlexibleNumeralString};
        use proptest::prelude::*;

        use super::*;

        /// The key of NIST's AES-256 samples and of Zcash's vectors.
        const KEY: [u8; 32] = [
            0x2B, 0x7E, 0x15, 0x16, 0x28, 0xAE, 0xD2, 0xA6, 0xAB, 0xF7, 0x15, 0x88, 0x09, 0xCF,
            0x4F, 0x3C, 0xEF, 0x43, 0x59, 0xD8, 0xD5, 0x80, 0xAA, 0x4F, 0x7F, 0x03, 0x6D, 0x6F,
            0x04, 0xFC, 0x6A, 0x94,
        ];

        fn ff1(key: &[u8; 32], radix: u32) -> FF1<Aes256> {
            FF1::<Aes256>::new(key, radix).unwrap()
        }

        /// NIST's FF1 samples 7 to 9 (FF1samples.pdf), the AES-256 ones:
        /// the `fpe` and `aes` we build with compute FF1 as published.
        #[test]
        fn nist_aes256_samples() {
            let tweak36 = [
                0x37, 0x37, 0x37, 0x37, 0x70, 0x71, 0x72, 0x73, 0x37, 0x37, 0x37,
            ];
            /// Tweak, radix, plaintext, ciphertext.
            type Sample<'a> = (&'a [u8], u32, Vec<u16>, Vec<u16>);
            let samples: [Sample<'_>; 3] = [
                (
                    &[],
                    10,
                    (0..10).collect(),
                    vec![6, 6, 5, 7, 6, 6, 7, 0, 0, 9],
                ),
                (
                    b"9876543210",
                    10,
                    (0..10).collect(),
                    vec![1, 0, 0, 1, 6, 2, 3, 4, 6, 3],
                ),
                (
                    &tweak36,
                    36,
                    (0..19).collect(),
                    vec![
                        33, 28, 8, 10, 0, 10, 35, 17, 2, 10, 31, 34, 10, 21, 34, 35, 30, 32, 13,
                    ],
                ),
            ];
            for (tweak, radix, pt, ct) in samples {
                let ff = ff1(&KEY, radix);
                let got = ff
                    .encrypt(tweak, &FlexibleNumeralString::from(pt.clone()))
                    .unwrap();
                assert_eq!(Vec::from(got), ct, "radix {radix}");
                let back = ff.decrypt(tweak, &FlexibleNumeralString::from(ct)).unwrap();
                assert_eq!(Vec::from(back), pt);
            }
        }

        /// A bit string given as bytes in little-endian bit order, as Zcash
        /// writes its vectors, most significant digit first.
        fn from_le_bit_bytes(hex: &str) -> Bits {
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            let mut value = 0u128;
            for byte in &bytes {
                for k in 0..8 {
                    value = (value << 1) | u128::from((byte >> k) & 1);
                }
            }
            Bits::new(value, 8 * bytes.len() as u32)
        }

        /// Zcash's radix-2 FF1-AES256 vectors (zcash-test-vectors, `ff1.py`,
        /// 88 bits, one with a 255-byte tweak) and the all-zero key's
        /// 32-bit case, through our numeral string.
        #[test]
        fn radix_2_vectors_through_our_numeral_string() {
            let tweak: Vec<u8> = (0..=254).collect();
            let cases: [(&[u8; 32], &[u8], &str, &str); 5] = [
                (
                    &KEY,
                    &[],
                    "0000000000000000000000",
                    "90acee3f83cde7ae5622f3",
                ),
                (
                    &KEY,
                    &[],
                    "90acee3f83cde7ae5622f3",
                    "5b8bf120f39bab8527ea1b",
                ),
                (
                    &KEY,
                    &[],
                    "aaaaaaaaaaaaaaaaaaaaaa",
                    "f082b7ee8f29c07691ce64",
                ),
                (
                    &KEY,
                    &tweak,
                    "aaaaaaaaaaaaaaaaaaaaaa",
                    "be11b886a8059c27517bc5",
                ),
                (&[0; 32], &[], "00000000", "7bf9041b"),
            ];
            for (key, tweak, pt, ct) in cases {
                let ff = ff1(key, 2);
                let (pt, ct) = (from_le_bit_bytes(pt), from_le_bit_bytes(ct));
                assert_eq!(ff.encrypt(tweak, &pt).unwrap(), ct, "{pt:?}");
                assert_eq!(ff.decrypt(tweak, &ct).unwrap(), pt, "{ct:?}");
            }
        }

        fn digits(bits: Bits) -> Vec<u16> {
            (0..bits.len)
                .rev()
                .map(|k| ((bits.value >> k) & 1) as u16)
                .collect()
        }

        proptest! {
            /// On any key, tweak, width and value, our numeral string and
            /// `fpe`'s big-integer one give the same FF1 answers.
            #[test]
            fn agrees_with_the_big_integer_numeral_string(
                key in any::<[u8; 32]>(),
                len in 20u32..=MAX_DIGITS,
                value in any::<u128>(),
                tweak in proptest::collection::vec(any::<u8>(), 0..40),
            ) {
                let value = if len == 128 { value } else { value & ((1 << len) - 1) };
                let bits = Bits::new(value, len);
                let ff = ff1(&key, 2);
                let ours = ff.encrypt(&tweak, &bits).unwrap();
                let theirs = ff.encrypt(&tweak, &FlexibleNumeralString::from(digits(bits))).unwrap();
                prop_assert_eq!(digits(ours), Vec::from(theirs));
                let back = ff.decrypt(&tweak, &FlexibleNumeralString::from(digits(ours))).unwrap();
                prop_assert_eq!(ff.decrypt(&tweak, &ours).unwrap(), bits);
                prop_assert_eq!(digits(bits), Vec::from(back));
            }
        }
    }
}
