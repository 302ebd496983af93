//! Every route of the service but the page, one file per family, each
//! added once ([`Routes`]) for the router and the OpenAPI document alike,
//! with what it may do declared where it is added:
//!
//! - `read`: compose, decode, bounds, layouts (`/api/v1/...`);
//! - `ids`: fresh IDs (`/api/v1/ids`), the one family that issues;
//! - `decode_many`: many IDs decoded at once (`POST /api/v1/decode`);
//! - `health`: `/healthz`, `/readyz`, `/metrics`;
//! - `openapi`: the document, made from the routes as added, and its route;
//! - `unmask`: the ID behind a masked one, off unless the operator allows;
//! - `query`, `accept` and `schema`: what the routes share: their query
//!   parameters, the negotiation of `Accept`, and the shapes of the bodies.

pub(crate) mod accept;
pub(crate) mod decode_many;
pub(crate) mod health;
pub(crate) mod ids;
pub(crate) mod openapi;
pub(crate) mod query;
pub(crate) mod read;
pub(crate) mod schema;
pub(crate) mod unmask;

use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use utoipa::openapi::OpenApi;
use utoipa::openapi::path::PathItem;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

use crate::state::AppState;

/// One route as `utoipa_axum::routes!` makes it: its handlers, and its
/// operations for the document.
type Route = UtoipaMethodRouter<Arc<AppState>>;

/// A path of the API as the router holds it.
#[doc(hidden)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiRoute {
    /// The path, as the router matches it (`/api/v1/decode/{id}`).
    pub path: String,
    /// Whether it was added as a route that uses up IDs.
    pub issuing: bool,
}

/// The routes, each added once: into the router, into the document, and
/// into the list of paths with what each may do. The edge refuses pages
/// from foreign origins on exactly the paths added by
/// [`Routes::issuing`], so a route that issues says so where it is added.
pub(crate) struct Routes {
    router: OpenApiRouter<Arc<AppState>>,
    listed: Vec<ApiRoute>,
}

impl Routes {
    fn new() -> Self {
        Routes {
            router: OpenApiRouter::with_openapi(openapi::base()),
            listed: Vec::new(),
        }
    }

    /// A route that hands out no ID.
    fn reading(self, route: Route) -> Self {
        self.add(route, false)
    }

    /// A route that uses up IDs: a page may call it only from the service's
    /// own origin or one the operator allows, and `HEAD` is refused, since
    /// it would run `GET` and throw the IDs away.
    fn issuing(self, route: Route) -> Self {
        let allow = route.1.paths.values().map(methods).collect::<Vec<_>>();
        let allow = HeaderValue::try_from(allow.join(",")).unwrap_or(HeaderValue::from_static(""));
        let route = route.map(|methods| methods.head(move || refuse_head(allow)));
        self.add(route, true)
    }

    fn add(mut self, route: Route, issuing: bool) -> Self {
        for path in route.1.paths.keys() {
            self.listed.push(ApiRoute {
                path: path.clone(),
                issuing,
            });
        }
        self.router = self.router.routes(route);
        self
    }

    /// The paths, each with whether it issues IDs.
    pub(crate) fn listed(&self) -> &[ApiRoute] {
        &self.listed
    }

    /// The router and the document.
    pub(crate) fn split(self) -> (Router<Arc<AppState>>, OpenApi) {
        self.router.split_for_parts()
    }
}

/// The methods a path's operations answer, as `Allow` lists them.
fn methods(item: &PathItem) -> String {
    let operations = [
        ("GET", &item.get),
        ("PUT", &item.put),
        ("POST", &item.post),
        ("DELETE", &item.delete),
        ("OPTIONS", &item.options),
        ("PATCH", &item.patch),
        ("TRACE", &item.trace),
    ];
    let names: Vec<&str> = operations
        .iter()
        .filter(|(_, operation)| operation.is_some())
        .map(|(name, _)| *name)
        .collect();
    names.join(",")
}

/// The answer to `HEAD` on a route that issues, naming the methods that do.
async fn refuse_head(allow: HeaderValue) -> Response {
    (StatusCode::METHOD_NOT_ALLOWED, [(header::ALLOW, allow)]).into_response()
}

/// Every route but the page.
pub(crate) fn all() -> Routes {
    Routes::new()
        .reading(routes!(read::compose))
        .reading(routes!(read::decode))
        .reading(routes!(decode_many::decode_many))
        .reading(routes!(read::bounds))
        .reading(routes!(read::layouts))
        .issuing(routes!(ids::ids))
        .reading(routes!(unmask::unmask))
        .reading(routes!(openapi::openapi))
        .reading(routes!(health::healthz))
        .reading(routes!(health::readyz))
        .reading(routes!(health::metrics))
}
