//! Public IDs that do not leak: a keyed, reversible permutation of a
//! layout's Snowflake IDs.
//!
//! A Snowflake ID tells anyone who sees it when it was made, on which node,
//! and, from two of them, about how many were made in between. Keep the
//! time-ordered ID in storage and show the world its masked form: another ID
//! of the same layout, in the same width (a twitter ID masks to a
//! non-negative `i64`, a `js53` ID to at most 2^53 − 1), that only the key
//! holder can turn back.
//!
//! ```
//! use snowflake::{Id, Layout};
//! use snowflake_mask::{MaskKey, Masker};
//!
//! let key = MaskKey::from_hex("6c0f9d6b0c2b8f6a3f8e4d2a1b0c9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d")?;
//! let masker = Masker::new(&Layout::twitter(), &key)?;
//!
//! let first = masker.mask(Id::new(1541815603606036480))?;
//! let next = masker.mask(Id::new(1541815603606036481))?;
//! // Neighbours land far apart, in no order, and stay positive i64s.
//! assert!(first.get().abs_diff(next.get()) > 1 << 40);
//! assert!(first.get() <= i64::MAX as u64 && next.get() <= i64::MAX as u64);
//! assert_eq!(masker.unmask(first)?, Id::new(1541815603606036480));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Masking hides time, node and volume from whoever lacks the key. It is not
//! access control and not a signature: anyone can send any value, which
//! unmasks to some ID, so check what a masked ID names as you would a plain
//! one. A leaked key reveals everything ever masked with it. Keys rotate
//! through a [`Keyring`]: the newest key masks, every key unmasks, and the
//! caller says which answer it recognises, since a masked ID cannot say
//! which key made it.
//!
//! # Design
//!
//! **A published construction, never a home-made one.** The permutation is
//! FF1 from NIST SP 800-38G (Rev. 1), with AES-256, radix 2, over the
//! layout's [`bits`](snowflake::Layout::bits), the empty tweak, from the
//! [`fpe`] crate (Jack Grigg's, used by Zcash for its 88-bit diversifiers,
//! kept to RustCrypto's current `cipher` and `aes`). The alternatives:
//!
//! - FF3-1, the other scheme of SP 800-38G, is the repair of FF3 after
//!   Durak and Vaudenay broke its tweak (2017), has been attacked again
//!   since (Beyne's linear cryptanalysis, 2021), takes a fixed 56-bit tweak,
//!   and the second public draft of SP 800-38G Rev. 1 (2025) drops it,
//!   leaving FF1.
//! - A Feistel network of our own over a keyed hash, which is what projects
//!   that mask IDs usually write, has no proof and no review behind it and
//!   gets the details (round count, unbalanced halves, cycle-walking) wrong
//!   in ways no test shows. Never.
//! - A 64-bit block cipher (Speck, Blowfish) masks only widths of exactly
//!   64 bits; a twitter ID would grow its sign bit.
//!
//! FF1 works on any width from 20 bits (its minimum domain of a million
//! values) with no cycle-walking, so a masked ID has exactly the layout's
//! width. Layouts narrower than [`Masker::MIN_BITS`] are refused.
//!
//! **The ID is the numeral string.** Its `n` binary digits, most significant
//! first, are FF1's input X, so NUM₂(X) is the ID and any FF1 implementation
//! with radix 2 gives the same answers (a port needs AES-CBC with a zero IV
//! for FF1's PRF, one call of two blocks per round, and big integers for the
//! halves; the web page and the npm package need none, as they run this
//! crate itself, compiled to WebAssembly). `fpe` runs the rounds; this crate
//! gives it the ID through a numeral string of machine words (see `bits.rs`),
//! checked against the published vectors and against `fpe`'s own big-integer
//! string, because `fpe`'s radix-2 string takes whole bytes and its general
//! one allocates big integers in every round.
//!
//! **The key is a file.** 64 hexadecimal characters, read by
//! [`KeyFile::read`] and written by [`KeyFile::create_new`] (mode 0600, never
//! over an existing file). A key is never an argument or a variable's value,
//! and never appears in `Debug` output or an error message; see [`Error`].
//!
//! The shared vectors in `testdata/mask-vectors.json` are written by
//! `scripts/make-mask-vectors.py`, a transcription of SP 800-38G's FF1 in
//! Python that checks itself against NIST's samples first, so that this
//! crate and the page's JavaScript are held to an answer neither produced.
#![deny(missing_docs)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

mod bits;
mod error;
mod key;
mod key_file;
mod keyring;
mod masker;
mod shown;

pub use error::{Error, ErrorKind};
pub use key::MaskKey;
pub use key_file::KeyFile;
pub use keyring::Keyring;
pub use masker::Masker;

// The guide's page on masking is tested as this crate's doc-tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/masking.md")]
struct MaskingGuideDoctests;
