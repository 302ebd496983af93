//! The Prometheus registry and the handles the hot path records into.
//!
//! Every [`AppState`](crate::AppState) owns its registry rather than sharing
//! a process-wide recorder: two services in one process (tests, above all)
//! then never see each other's counts.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use axum::http::{Method, StatusCode};
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};
use snowflake::GeneratorStats;

/// The request metrics of one (route, method, status).
#[derive(Clone)]
pub(crate) struct RouteMetrics {
    pub(crate) requests: metrics::Counter,
    pub(crate) latency: metrics::Histogram,
}

/// Handles per route, then per (method, status): registered once, so a
/// request costs two map lookups by reference and no allocation, instead of
/// building owned labels and searching the registry.
type RouteTable = HashMap<&'static str, HashMap<(&'static str, u16), RouteMetrics>>;

/// The handles of one route's successful answers (status 200) to one
/// method, remembered by the route's own layer: a route that answers the
/// same way every time, as most requests to most routes do, records with
/// two comparisons instead of a lock and two hashed lookups in the
/// [`Telemetry`] table. Other answers go through the table.
#[derive(Default)]
pub(crate) struct RouteMemo(OnceLock<Memo>);

impl RouteMemo {
    /// Whether this memo is set, and for `route`.
    pub(crate) fn holds(&self, route: &str) -> bool {
        self.route() == Some(route)
    }

    /// The route this memo is for, once set.
    pub(crate) fn route(&self) -> Option<&str> {
        self.0.get().map(|m| &*m.route)
    }
}

struct Memo {
    route: Box<str>,
    method: &'static str,
    metrics: RouteMetrics,
}

/// One service's registry.
pub(crate) struct Telemetry {
    recorder: Arc<PrometheusRecorder>,
    handle: PrometheusHandle,
    routes: RwLock<RouteTable>,
}

/// The route label of a request that matched no route: one label for every
/// such path, so made-up paths cannot grow the registry.
pub(crate) const UNMATCHED: &str = "unmatched";

/// The method as a label: the standard methods by name, anything else as
/// `other`. HTTP accepts any token as a method; labelling by the raw token
/// let a client grow `/metrics` without limit.
pub(crate) fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "other",
    }
}

impl Telemetry {
    pub(crate) fn new() -> Self {
        let builder = PrometheusBuilder::new().set_buckets_for_metric(
            Matcher::Full("http_request_duration_seconds".into()),
            &[
                0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                1.0, 2.5,
            ],
        );
        // Fails only on an empty bucket list, which the one above is not.
        let recorder = builder
            .unwrap_or_else(|_| PrometheusBuilder::new())
            .build_recorder();
        Telemetry {
            handle: recorder.handle(),
            recorder: Arc::new(recorder),
            routes: RwLock::default(),
        }
    }

    /// Runs `record` with this registry as the `metrics` facade's recorder,
    /// so sources that record through the facade land here.
    pub(crate) fn scope<T>(&self, record: impl FnOnce() -> T) -> T {
        metrics::with_local_recorder(&*self.recorder, record)
    }

    pub(crate) fn handle(&self) -> &PrometheusHandle {
        &self.handle
    }

    /// The handles for one request's labels. `route` is a route pattern of
    /// the router or [`UNMATCHED`], so the label set is bounded by routes ×
    /// methods × statuses.
    pub(crate) fn route(&self, route: &str, method: &Method, status: StatusCode) -> RouteMetrics {
        let key = (method_label(method), status.as_u16());
        if let Some(found) = self
            .routes
            .read()
            .ok()
            .and_then(|t| t.get(route).and_then(|m| m.get(&key)).cloned())
        {
            return found;
        }
        // Route patterns are a fixed set, so leaking each one once keeps the
        // table's keys borrowed for free on every later request.
        let route: &'static str = match self
            .routes
            .read()
            .ok()
            .and_then(|t| t.get_key_value(route).map(|(k, _)| *k))
        {
            Some(known) => known,
            None => Box::leak(route.to_string().into_boxed_str()),
        };
        let labels = [
            ("route", route.to_string()),
            ("method", key.0.to_string()),
            ("status", key.1.to_string()),
        ];
        let made = self.scope(|| RouteMetrics {
            requests: metrics::counter!("http_requests_total", &labels),
            latency: metrics::histogram!("http_request_duration_seconds", &labels),
        });
        if let Ok(mut t) = self.routes.write() {
            t.entry(route).or_default().insert(key, made.clone());
        }
        made
    }

    /// Counts one answer of `route` and records how long it took. The
    /// first 200 is remembered in `memo`, for the route's later calls.
    pub(crate) fn record(
        &self,
        memo: &RouteMemo,
        route: &str,
        method: &Method,
        status: StatusCode,
        seconds: f64,
    ) {
        let method_label = method_label(method);
        let ok = status == StatusCode::OK;
        let remembered = memo
            .0
            .get()
            .filter(|m| ok && m.method == method_label && *m.route == *route);
        let looked_up;
        let metrics = match remembered {
            Some(memo) => &memo.metrics,
            None => {
                looked_up = self.route(route, method, status);
                // Only the first 200 is remembered, so a memo never changes
                // once set; a route's other methods keep using the table.
                if ok {
                    let _ = memo.0.set(Memo {
                        route: route.into(),
                        method: method_label,
                        metrics: looked_up.clone(),
                    });
                }
                &looked_up
            }
        };
        metrics.requests.increment(1);
        metrics.latency.record(seconds);
    }

    /// The generator's counters, as Prometheus metrics.
    pub(crate) fn publish_generator(&self, stats: &GeneratorStats) {
        self.scope(|| {
            metrics::counter!("snowflake_ids_issued_total").absolute(stats.issued);
            metrics::counter!("snowflake_sequence_exhaustion_waits_total")
                .absolute(stats.exhaustion_waits);
            metrics::counter!("snowflake_clock_backwards_total").absolute(stats.clock_backwards);
            metrics::gauge!("snowflake_clock_backwards_max_ms")
                .set(stats.clock_backwards_max_ms as f64);
            metrics::gauge!("snowflake_lead_ms").set(stats.lead_ms as f64);
            metrics::counter!("snowflake_mark_writes_total").absolute(stats.mark_writes);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_route_still_counts_every_other_answer_apart() {
        let telemetry = Telemetry::new();
        let memo = RouteMemo::default();
        let answers = [
            (Method::GET, StatusCode::OK),
            (Method::POST, StatusCode::OK),
            (Method::GET, StatusCode::BAD_REQUEST),
            (Method::GET, StatusCode::OK),
            (Method::GET, StatusCode::OK),
        ];
        for (method, status) in answers {
            telemetry.record(&memo, "/api/v1/ids", &method, status, 0.001);
        }
        // Another route through the same memo is not taken for the first.
        telemetry.record(&memo, "/healthz", &Method::GET, StatusCode::OK, 0.001);
        let text = telemetry.handle().render();
        let mut lines: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("http_requests_total"))
            .collect();
        lines.sort_unstable();
        assert_eq!(
            lines,
            [
                "http_requests_total{route=\"/api/v1/ids\",method=\"GET\",status=\"200\"} 3",
                "http_requests_total{route=\"/api/v1/ids\",method=\"GET\",status=\"400\"} 1",
                "http_requests_total{route=\"/api/v1/ids\",method=\"POST\",status=\"200\"} 1",
                "http_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\"} 1",
            ]
        );
        assert!(text.contains(
            "http_request_duration_seconds_count{route=\"/api/v1/ids\",method=\"GET\",status=\"200\"} 3"
        ));
    }

    #[test]
    fn made_up_methods_share_one_label() {
        let made_up = Method::from_bytes(b"FROBNICATE").unwrap();
        assert_eq!(method_label(&made_up), "other");
        assert_eq!(method_label(&Method::GET), "GET");
        let telemetry = Telemetry::new();
        for n in 0..100 {
            let method = Method::from_bytes(format!("M{n}").as_bytes()).unwrap();
            telemetry
                .route(UNMATCHED, &method, StatusCode::NOT_FOUND)
                .requests
                .increment(1);
        }
        let text = telemetry.handle().render();
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("http_requests_total"))
            .collect();
        assert_eq!(
            lines,
            ["http_requests_total{route=\"unmatched\",method=\"other\",status=\"404\"} 100"]
        );
    }
}
