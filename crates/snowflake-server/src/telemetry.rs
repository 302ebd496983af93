//! The Prometheus registry and the handles the hot path records into.

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use axum::http::{Method, StatusCode};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use snowflake::GeneratorStats;

/// One Prometheus recorder per process, however many apps tests build.
pub(crate) fn handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new().set_buckets_for_metric(
                Matcher::Full("http_request_duration_seconds".into()),
                &[
                    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                    0.5, 1.0, 2.5,
                ],
            );
            match builder {
                Ok(builder) => {
                    let recorder = builder.build_recorder();
                    let handle = recorder.handle();
                    // Fails only if another recorder was installed first.
                    let _ = metrics::set_global_recorder(recorder);
                    handle
                }
                Err(_) => PrometheusBuilder::new().build_recorder().handle(),
            }
        })
        .clone()
}

/// The request metrics of one (route, method, status).
#[derive(Clone)]
pub(crate) struct RouteMetrics {
    pub(crate) requests: metrics::Counter,
    pub(crate) latency: metrics::Histogram,
}

/// Handles per route, then per (method, status): registered once, so a
/// request costs two map lookups by reference and no allocation, instead of
/// building owned labels and searching the registry.
type RouteTable = HashMap<String, HashMap<(Method, u16), RouteMetrics>>;

pub(crate) fn route(route: &str, method: &Method, status: StatusCode) -> RouteMetrics {
    static TABLE: OnceLock<RwLock<RouteTable>> = OnceLock::new();
    let table = TABLE.get_or_init(Default::default);
    let key = (method.clone(), status.as_u16());
    if let Some(found) = table
        .read()
        .ok()
        .and_then(|t| t.get(route).and_then(|m| m.get(&key)).cloned())
    {
        return found;
    }
    let labels = [
        ("route", route.to_string()),
        ("method", method.to_string()),
        ("status", status.as_u16().to_string()),
    ];
    let made = RouteMetrics {
        requests: metrics::counter!("http_requests_total", &labels),
        latency: metrics::histogram!("http_request_duration_seconds", &labels),
    };
    if let Ok(mut t) = table.write() {
        t.entry(route.to_string())
            .or_default()
            .insert(key, made.clone());
    }
    made
}

/// The generator's counters, as Prometheus metrics.
pub(crate) fn publish_generator(stats: &GeneratorStats) {
    metrics::counter!("snowflake_ids_issued_total").absolute(stats.issued);
    metrics::counter!("snowflake_sequence_exhaustion_waits_total").absolute(stats.exhaustion_waits);
    metrics::counter!("snowflake_clock_backwards_total").absolute(stats.clock_backwards);
    metrics::gauge!("snowflake_clock_backwards_max_ms").set(stats.clock_backwards_max_ms as f64);
    metrics::gauge!("snowflake_lead_ms").set(stats.lead_ms as f64);
    metrics::counter!("snowflake_mark_writes_total").absolute(stats.mark_writes);
}
