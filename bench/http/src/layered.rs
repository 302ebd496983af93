//! Diagnostic: `GET /hello` under the layers `snowflake_server::app()` puts
//! on every route, each switchable, so wrk can price them one by one.
//!
//! Usage: `layered-hello PORT LAYERS` with LAYERS a comma list of
//! `clock` (a thread waking every 100 µs, as `CachedClock::shared` runs),
//! `trace` (tower-http TraceLayer with a warn-level subscriber), `record`
//! (the per-request metrics middleware: route/method/status labels, a
//! counter and a histogram in a Prometheus recorder), `problem` (a
//! from_fn middleware that looks at the response), `timeout`, `body`
//! (RequestBodyLimitLayer), `concurrency` (ConcurrencyLimitLayer), or `all`.

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::MatchedPath;
use axum::http::{Request, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

async fn record(request: Request<Body>, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let method = request.method().to_string();
    let start = Instant::now();
    let response = next.run(request).await;
    let labels = [
        ("route", route),
        ("method", method),
        ("status", response.status().as_u16().to_string()),
    ];
    metrics::counter!("http_requests_total", &labels).increment(1);
    metrics::histogram!("http_request_duration_seconds", &labels)
        .record(start.elapsed().as_secs_f64());
    response
}

async fn problem(request: Request<Body>, next: Next) -> Response {
    let response = next.run(request).await;
    if response.status().is_client_error() || response.status().is_server_error() {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    response
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(Ok(port)), Some(layers)) = (args.next().map(|p| p.parse::<u16>()), args.next())
    else {
        eprintln!("usage: layered-hello PORT LAYERS (comma list, or all)");
        std::process::exit(2);
    };
    let on = |name: &str| layers == "all" || layers.split(',').any(|l| l == name);

    if on("clock") {
        std::thread::spawn(|| {
            loop {
                std::thread::sleep(Duration::from_micros(100));
                std::hint::black_box(std::time::SystemTime::now());
            }
        });
    }
    if on("trace") {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("warn"))
            .with_writer(std::io::stderr)
            .init();
    }
    if on("record") {
        let recorder = metrics_exporter_prometheus::PrometheusBuilder::new()
            .set_buckets_for_metric(
                metrics_exporter_prometheus::Matcher::Full("http_request_duration_seconds".into()),
                &[
                    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                ],
            )
            .map(|b| b.build_recorder());
        if let Ok(recorder) = recorder {
            let _ = metrics::set_global_recorder(recorder);
        }
    }

    let mut app = snowflake_http_bench::hello();
    // Innermost first, as in snowflake_server::app().
    if on("record") {
        app = app.layer(middleware::from_fn(record));
    }
    if on("concurrency") {
        app = app.layer(tower::limit::ConcurrencyLimitLayer::new(1024));
    }
    if on("body") {
        app = app.layer(RequestBodyLimitLayer::new(64 * 1024));
    }
    if on("timeout") {
        app = app.layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            Duration::from_secs(10),
        ));
    }
    if on("trace") {
        app = app.layer(TraceLayer::new_for_http());
    }
    if on("problem") {
        app = app.layer(middleware::from_fn(problem));
    }
    snowflake_http_bench::serve(port, app).await;
}
