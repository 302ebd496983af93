//! The masking crate end to end, through its public API only.

mod support;

/// Key files: created private and once, read with clear errors, never shown.
mod key_files;
/// What masked IDs show: no order, nothing shared between keys.
mod order;
/// Round trips, ranges and the bijection, over random IDs of every preset and width.
mod properties;
/// Key rotation through a key ring.
mod rotation;
/// The shared vectors in testdata/mask-vectors.json, which the page's
/// JavaScript checks too.
mod vectors;
