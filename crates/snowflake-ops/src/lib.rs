//! Operator tools for Snowflake IDs, beside the core that makes them: what
//! an operator asks before a layout is chosen and after an incident.
//!
//! - [`Requirements`]: a peak rate per node, a number of nodes and a
//!   lifetime. [`Requirements::plan`] makes a [`Proposal`]: the fewest bits
//!   that meet them, the spare bits shared out, or, when they do not fit,
//!   [`Alternative`]s that each make one [`Concession`].
//!   [`Requirements::check`] judges an existing layout: an [`Assessment`]
//!   of its headroom and every [`Gap`] between it and the requirements.
//! - [`Audit`]: a dump of IDs read one at a time, and an [`AuditReport`] of
//!   duplicates, nodes out of order, IDs from the future or from before
//!   their platform began, and saturated time units.
//!
//! How long a layout lasts ([`snowflake::TimeLeft`]) stays in the core: the
//! service shows it too, and knows nothing of this crate.
//!
//! ```
//! use snowflake::Layout;
//! use snowflake_ops::Requirements;
//!
//! // 20,000 IDs a second on each of 200 nodes for 25 years from 2025-01-01.
//! let requirements = Requirements::new(20_000, 200, 25, 1735689600000)?;
//! let proposal = requirements.plan();
//! assert_eq!(proposal.proposed().unwrap().layout().bits(), 63);
//! // Twitter's layout meets them too.
//! assert!(requirements.check(&Layout::twitter()).fits());
//! # Ok::<(), snowflake_ops::Error>(())
//! ```
//!
//! # Features
//! - `serde`: the JSON forms `snowflake plan --json` and `snowflake audit
//!   --json` print.
//!
//! The crate is `no_std` (with `alloc`), as the core can be.
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

extern crate alloc;

mod assessment;
mod audit;
mod error;
mod proposal;
mod requirements;

pub use assessment::{Assessment, Gap};
pub use audit::{Audit, AuditReport, Duplicate, NodeReport};
pub use error::Error;
pub use proposal::{Alternative, Concession, Proposal, Widths};
pub use requirements::Requirements;
