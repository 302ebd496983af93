//! [`FileMarkStore`]: a generator's high-water mark in a small file, so that
//! a restarted `snowflake` generator never issues an ID it issued before.
//!
//! The core crate defines what a store is ([`snowflake::MarkStore`]) and
//! does no I/O; this crate is the file that `snowflake generate
//! --state-file` and `snowflake serve --state-file` use: one line with a
//! checksum, written ahead of the IDs it covers, locked for one process at
//! a time, and refused when it is not a plain file.
//!
//! ```
//! use snowflake::{Generator, Layout};
//! use snowflake_store::FileMarkStore;
//!
//! let dir = std::env::temp_dir().join(format!("snowflake-store-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let generator = Generator::builder(Layout::twitter())
//!     .store(FileMarkStore::new(dir.join("mark")))
//!     .build()?;
//! let id = generator.next_id()?;
//! assert!(id.get() > 0);
//! # drop(generator);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), snowflake::Error>(())
//! ```
#![deny(missing_docs)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

mod file;
mod format;
mod guard;
mod refusal;
#[cfg(test)]
mod testing;

pub use file::FileMarkStore;

// The guide's page on the library is tested as this crate's doc-tests: its
// examples use the core and the file store together.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/library.md")]
struct LibraryGuideDoctests;
