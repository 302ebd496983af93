//! Every route of the service but the page, one file per family, and what
//! each route may do, declared where the route is defined:
//!
//! - `read`: compose, decode, bounds, layouts (`/api/v1/...`);
//! - `ids`: fresh IDs (`/api/v1/ids`), the one family that issues;
//! - `decode_many`: many IDs decoded at once (`POST /api/v1/decode`);
//! - `health`: `/healthz`, `/readyz`, `/metrics`;
//! - `openapi`: the OpenAPI document and the route that serves it;
//! - `unmask`: the ID behind a masked one, off unless the operator allows;
//! - `params` and `schema`: what the routes share: the query parameters and
//!   the shapes the document describes.

pub(crate) mod decode_many;
pub(crate) mod health;
pub(crate) mod ids;
pub(crate) mod openapi;
pub(crate) mod params;
pub(crate) mod read;
pub(crate) mod schema;
pub(crate) mod unmask;

use std::sync::Arc;

use axum::Router;
use axum::routing::MethodRouter;

use crate::issue::Limits;
use crate::state::AppState;

/// Routes, and the paths among them that use up IDs. The edge refuses
/// pages from foreign origins on exactly those ([`Routes::issuing`]), so a
/// route that issues says so where it is added, and cannot be forgotten in
/// a list kept elsewhere.
#[derive(Default)]
pub(crate) struct Routes {
    pub(crate) router: Router<Arc<AppState>>,
    pub(crate) issuing: Vec<&'static str>,
}

impl Routes {
    /// A route that hands out no ID.
    pub(crate) fn route(mut self, path: &'static str, route: MethodRouter<Arc<AppState>>) -> Self {
        self.router = self.router.route(path, route);
        self
    }

    /// A route that uses up IDs: a page may call it only from the service's
    /// own origin or one the operator allows.
    pub(crate) fn issuing(self, path: &'static str, route: MethodRouter<Arc<AppState>>) -> Self {
        let mut routes = self.route(path, route);
        routes.issuing.push(path);
        routes
    }

    /// Both sets of routes.
    pub(crate) fn merge(mut self, other: Routes) -> Self {
        self.router = self.router.merge(other.router);
        self.issuing.extend(other.issuing);
        self
    }
}

/// Every route but the page; `limits` bound what one request may take,
/// and `allow_unmask` is the operator's word on `/api/v1/unmask/{id}`.
pub(crate) fn all(limits: &Arc<Limits>, allow_unmask: bool) -> Routes {
    read::routes()
        .merge(ids::routes(Arc::clone(limits)))
        .merge(decode_many::routes(Arc::clone(limits)))
        .merge(unmask::routes(allow_unmask))
        .merge(health::routes())
        .merge(openapi::routes())
}
