//! The snowflake HTTP service: the web tool at `/`, a JSON API under
//! `/api/v1` that composes, decodes and hands out IDs, health and metrics.
//!
//! [`app`] builds the whole service as a `Router`, so tests drive it with
//! `tower::ServiceExt::oneshot` and no socket; [`serve`] runs it on a
//! listener the caller bound until SIGTERM or Ctrl-C, then lets the source
//! flush its state. IDs come from an [`IdSource`]: a [`Standalone`]
//! generator, or whatever the caller adapts (the CLI adapts cluster mode);
//! the service does not know which. Its settings are one [`Config`].
//!
//! A request for IDs flows one way: the edge admits it (`edge`), the IDs
//! route reads what it asks for (`routes::ids`: its query, its `Accept`),
//! the issuer takes the generator the source allows (`issue`, `source`),
//! the body is written (`body`), streamed in chunks when large
//! (`chunks`), and handed out only if the source still allows it.
//!
//! ```
//! use std::sync::Arc;
//! use axum::body::Body;
//! use axum::http::{Request, StatusCode};
//! use snowflake::{Clock, Generator, Layout, SystemClock};
//! use snowflake_server::{Config, Standalone, app};
//! use tower::ServiceExt;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let clock: Arc<dyn Clock> = Arc::new(SystemClock);
//! let source = Standalone::new(Generator::builder(Layout::twitter()).clock(clock).build()?);
//! let request = Request::post("/api/v1/ids?count=3").body(Body::empty()).unwrap();
//! let response = app(source, &Config::new()).oneshot(request).await.unwrap();
//! assert_eq!(response.status(), StatusCode::OK);
//! # Ok::<(), snowflake::Error>(())
//! # }).unwrap();
//! ```
#![warn(missing_docs)]

mod app;
mod body;
mod chunks;
mod clock_health;
mod config;
mod edge;
mod issue;
mod page;
mod problem;
mod routes;
mod serve;
mod source;
mod state;
mod telemetry;

pub use app::{api_routes, app};
pub use clock_health::{KernelClock, KernelClockReader};
pub use config::Config;
pub use page::{content_security_policy, standalone_page};
pub use problem::Problem;
#[doc(hidden)]
pub use routes::ApiRoute;
pub use routes::ids::MAX_COUNT;
/// The service's OpenAPI document, as it serves it at `/api/v1/openapi.json`.
pub use routes::openapi::document as openapi_document;
pub use serve::{ServeError, serve, serve_until};
pub use source::{IdSource, Shutdown, Standalone, Unavailable};
