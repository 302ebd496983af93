//! The service end to end: requests through the whole router in process
//! (tower's `oneshot`, no socket), and over real loopback sockets where the
//! connection itself is under test. One module per concern; what they share
//! is in `api/support.rs`.

mod support;

/// `POST /api/v1/decode`: many IDs in, one record each out.
mod bulk;
/// Connections over real sockets: header, idle and shutdown timeouts, the
/// connection cap.
mod connections;
/// The OpenAPI document against the routes' parameters and what the core
/// writes.
mod document;
/// The IDs route: counts, forms, and when the node may not issue.
mod issuing;
/// The request timeout, the server-wide concurrency limit, the URI limit.
mod limits;
/// Masked IDs, and the route that unmasks them where the operator allows.
mod masking;
/// Health, readiness, metrics, the OpenAPI document, logs of failures.
mod operating;
/// Which pages (CORS) and which host names the service answers.
mod origins;
/// The page: its language, its security headers.
mod page;
/// The first promise on every path that issues IDs: none after the right
/// to issue ended.
mod promise;
/// Compose, decode (one layout or every preset), bounds, layouts, text forms.
mod reading;
/// Large requests streamed in chunks: order, clients that leave or stall.
mod streaming;
