//! What every handler shares: the source of IDs and the metrics registry,
//! and the one path by which IDs leave the service.

use std::sync::Arc;

use axum::http::StatusCode;
use metrics_exporter_prometheus::PrometheusHandle;
use snowflake::{Clock, Layout, TextForm};

use crate::problem::Problem;
use snowflake::SharedGenerator;

use crate::source::{IdSource, Unavailable};
use crate::telemetry;

/// Requests for up to this many IDs are served on the async worker.
const INLINE_COUNT: u64 = 1024;

/// What every handler shares.
pub struct AppState {
    source: Arc<dyn IdSource>,
    pub(crate) metrics: PrometheusHandle,
    /// `{"layout":"<name>","ids":[`, the start of every JSON ids body,
    /// made once rather than per request.
    ids_prefix: String,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// The one message a client gets when the source cannot issue; the reason,
/// which may name hosts or files, goes to the log.
const UNAVAILABLE: &str = "this node cannot issue IDs right now; try again shortly";

fn unavailable(why: &Unavailable) -> Problem {
    tracing::debug!(reason = %why, "refused to issue");
    Problem::unavailable(UNAVAILABLE)
}

impl AppState {
    /// State around a source of IDs.
    pub fn new(source: Arc<dyn IdSource>) -> Self {
        AppState {
            ids_prefix: format!(
                "{{\"layout\":{},\"ids\":[",
                serde_json::Value::from(source.layout().name().into_owned())
            ),
            source,
            metrics: telemetry::handle(),
        }
    }

    /// The source IDs come from.
    pub fn source(&self) -> &Arc<dyn IdSource> {
        &self.source
    }

    /// The layout IDs are issued in.
    pub fn layout(&self) -> &Layout {
        self.source.layout()
    }

    /// The clock the service reads for "now".
    pub fn clock(&self) -> &Arc<dyn Clock> {
        self.source.clock()
    }

    /// Runs `issue` on the generator the node may issue from now, and hands
    /// its result out only if the source still allows it afterwards.
    fn with_generator<T>(
        &self,
        issue: impl FnOnce(&SharedGenerator) -> Result<T, snowflake::Error>,
    ) -> Result<T, Problem> {
        let generator = self.source.current().map_err(|why| unavailable(&why))?;
        let out = issue(&generator)?;
        if !self.source.still_valid(&generator) {
            return Err(unavailable(&Unavailable::new(
                "the source's right to issue ended while these IDs were made; none were issued",
            )));
        }
        Ok(out)
    }

    /// Whether the node can issue now: the readiness body, or why not.
    pub fn ready(&self) -> Result<serde_json::Value, Problem> {
        self.with_generator(|g| g.ready())?;
        let mut body = serde_json::Map::new();
        body.insert("status".into(), "ready".into());
        body.extend(self.source.status());
        Ok(serde_json::Value::Object(body))
    }

    /// `count` fresh IDs as the response body: JSON, or one per line.
    fn issue(&self, count: u64, plain: bool, form: TextForm) -> Result<Vec<u8>, Problem> {
        self.with_generator(|generator| self.write_ids(generator, count, plain, form))
    }

    /// Issues off the async workers when the batch is large: past one time
    /// unit's worth the generator may sleep until the next millisecond, and
    /// a worker must not.
    pub(crate) async fn issue_async(
        self: &Arc<Self>,
        count: u64,
        plain: bool,
        form: TextForm,
    ) -> Result<Vec<u8>, Problem> {
        if count <= INLINE_COUNT {
            return self.issue(count, plain, form);
        }
        let state = Arc::clone(self);
        tokio::task::spawn_blocking(move || state.issue(count, plain, form))
            .await
            .map_err(|_| {
                Problem::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "internal server error",
                )
            })?
    }

    fn write_ids(
        &self,
        generator: &SharedGenerator,
        count: u64,
        plain: bool,
        form: TextForm,
    ) -> Result<Vec<u8>, snowflake::Error> {
        let mut body = Vec::with_capacity(count as usize * 22 + 64);
        if !plain {
            body.extend_from_slice(self.ids_prefix.as_bytes());
        }
        let mut left = count;
        let mut buf = [0u8; TextForm::MAX_LEN];
        let mut first = true;
        while left > 0 {
            let batch = generator.next_ids(left)?;
            left -= batch.len() as u64;
            for id in batch {
                if plain {
                    body.extend_from_slice(form.encode(id, &mut buf).as_bytes());
                    body.push(b'\n');
                } else {
                    if !first {
                        body.push(b',');
                    }
                    first = false;
                    body.push(b'"');
                    body.extend_from_slice(form.encode(id, &mut buf).as_bytes());
                    body.push(b'"');
                }
            }
        }
        if !plain {
            body.extend_from_slice(b"]}");
        }
        Ok(body)
    }

    /// Copies the generator's and the source's counters into the metrics
    /// registry; called on each scrape, so the hot path pays nothing for them.
    pub(crate) fn publish_metrics(&self) {
        self.source.publish_metrics();
        let ready = self.ready().is_ok();
        metrics::gauge!("snowflake_ready").set(if ready { 1.0 } else { 0.0 });
        if let Ok(generator) = self.source.current() {
            telemetry::publish_generator(&generator.stats());
        }
    }
}
