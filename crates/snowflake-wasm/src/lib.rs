//! The snowflake core and its masking, compiled to WebAssembly: the model of
//! the web page and of the `snowflake-toolkit` npm package.
//!
//! Nothing here decides anything about IDs. Every rule is the core's
//! (`snowflake`) or the masking crate's (`snowflake-mask`); this crate moves
//! values across the boundary and hands back what they return, errors
//! included, with the core's kind, field and message, so that the page and
//! JavaScript users see the words of the command and the API.
//!
//! # Design
//!
//! **Hand-written exports, not wasm-bindgen.** wasm-bindgen needs its command
//! line tool at exactly the version of its crate, built from source on every
//! fresh machine, and its generated glue changes with it; the page inlines
//! the module under a Content-Security-Policy and the test command rebuilds
//! it byte for byte. The boundary here is small enough to write out: plain
//! `extern "C"` functions of integers, and the page's and the package's one
//! JavaScript file (`bindings/npm/snowflake.js`) that calls them.
//!
//! **How values cross.** IDs, times and field values are 64-bit integers
//! (`i64` in the signatures, `BigInt` in JavaScript, reinterpreted as `u64`
//! where the core wants one). Text goes in through one input buffer
//! ([`sf_input`] returns where to write it) and comes out through one output
//! buffer ([`sf_out_ptr`], [`sf_out_len`]); several numbers come out through a
//! table of 64-bit slots ([`sf_nums_ptr`]). Anything with a shape (a layout,
//! a breakdown, the readings, the presets) comes out as the core's own JSON:
//! the one the command's `--json` and the HTTP API write. A call returns 0
//! (or a handle) when it worked and −1 when it did not, and then the output
//! buffer holds the error as `{"kind","field","message"}`.
//!
//! **Handles.** Layouts, maskers and generators live here, in tables, and
//! JavaScript holds their index; it frees them when its own object is
//! collected. A layout is parsed once and used for every decode after.
//!
//! **Memory.** Rust's own allocator for the target (dlmalloc), which frees.
//! The module is single-threaded: its state is thread-local.
//!
//! **std on wasm32-unknown-unknown.** The generator and the masking crate
//! need `std`; the module is built with `-Zbuild-std=std,panic_abort`, and
//! nothing it calls reaches the parts of `std` that this target lacks (files,
//! threads, the system clock): the generator's clock is JavaScript's
//! (the `clock` module), and keys come from their text, never from a random source
//! (`getrandom` is built with its `unsupported` backend).

mod abi;
mod clock;
mod registry;
mod reply;

pub use abi::*;
