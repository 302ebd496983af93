//! What every handler shares: the issuer, the metrics registry, the
//! kernel's view of the clock, and the operator's word on unmasking; and
//! what the health routes ask of them (readiness, the metrics published on
//! a scrape). Built once per service from its source and [`Config`].

use std::sync::Arc;
use std::time::Duration;

use snowflake::{Clock, Layout};
use snowflake_mask::Masker;

use crate::clock_health::{KernelClock, KernelClockReader};
use crate::config::Config;
use crate::issue::Issuer;
use crate::problem::Problem;
use crate::source::IdSource;
use crate::telemetry::Telemetry;

/// What every handler shares.
pub(crate) struct AppState {
    /// Where fresh IDs come from, and the promise they keep.
    pub(crate) issuer: Arc<Issuer>,
    pub(crate) telemetry: Telemetry,
    /// Where the kernel's view of the clock is read from.
    kernel_clock: KernelClockReader,
    /// The largest clock error readiness accepts, in ms, if the operator
    /// requires a synchronised clock.
    clock_requirement: Option<u64>,
    /// The operator's word that `/api/v1/unmask/{id}` may answer.
    pub(crate) allow_unmask: bool,
    /// How long a request may take, a streamed body's reading included.
    pub(crate) request_timeout: Duration,
}

impl AppState {
    /// The state of a service issuing `source`'s IDs, set up by `config`.
    pub(crate) fn new(source: Arc<dyn IdSource>, config: &Config) -> Self {
        AppState {
            issuer: Arc::new(Issuer::new(source, config)),
            telemetry: Telemetry::new(),
            kernel_clock: Arc::clone(&config.kernel_clock),
            clock_requirement: config.require_clock_sync,
            allow_unmask: config.allow_unmask,
            request_timeout: config.request_timeout,
        }
    }

    /// The source IDs come from.
    pub(crate) fn source(&self) -> &Arc<dyn IdSource> {
        self.issuer.source()
    }

    /// The layout IDs are issued in.
    pub(crate) fn layout(&self) -> &Layout {
        self.source().layout()
    }

    /// The clock the service reads for "now".
    pub(crate) fn clock(&self) -> &Arc<dyn Clock> {
        self.source().clock()
    }

    /// The masker, if the operator gave a key.
    pub(crate) fn masker(&self) -> Option<&Masker> {
        self.issuer.masker()
    }

    /// Whether the node can issue now: the readiness body, or why not. After
    /// a failed mark write it issues one ID as a probe, since only a write
    /// shows whether the store works again. The body says what the kernel
    /// says of the clock and how long the layout has left; the clock fails
    /// readiness only where the operator requires it synchronised.
    pub(crate) fn ready(&self) -> Result<serde_json::Value, Problem> {
        if self.issuer.store_failing() {
            self.issuer.with_generator(|g| g.next_id())?;
        } else {
            self.issuer.with_generator(|g| g.ready())?;
        }
        let clock = self.kernel_clock();
        if let Some(max_error_ms) = self.clock_requirement {
            let short = match &clock {
                Some(clock) => clock.falls_short_of(max_error_ms),
                None => Some(
                    "the kernel's view of the clock cannot be read; this service requires \
                     it synchronised (--require-clock-sync)"
                        .to_string(),
                ),
            };
            if let Some(why) = short {
                return Err(Problem::unavailable(why));
            }
        }
        let mut body = serde_json::Map::new();
        body.insert("status".into(), "ready".into());
        body.extend(self.source().status());
        body.insert(
            "clock".into(),
            clock.map_or(serde_json::Value::Null, |c| c.to_json()),
        );
        body.insert("time_left".into(), serde_json::json!(self.time_left()));
        Ok(serde_json::Value::Object(body))
    }

    /// How long the layout has left, from the clock's now.
    pub(crate) fn time_left(&self) -> snowflake::TimeLeft {
        self.layout().time_left(self.clock().now_ms())
    }

    /// What the kernel says of the clock now.
    pub(crate) fn kernel_clock(&self) -> Option<KernelClock> {
        (self.kernel_clock)()
    }

    /// Copies the generator's and the source's counters into the metrics
    /// registry; called on each scrape, so the hot path pays nothing for them.
    pub(crate) fn publish_metrics(&self) {
        self.telemetry.scope(|| self.source().publish_metrics());
        let ready = self.ready().is_ok();
        self.telemetry
            .scope(|| metrics::gauge!("snowflake_ready").set(if ready { 1.0 } else { 0.0 }));
        if let Ok(generator) = self.source().current() {
            self.telemetry.publish_generator(&generator.stats());
        }
        let time_left = self.time_left();
        let clock = self.kernel_clock();
        self.telemetry.scope(|| {
            metrics::gauge!("snowflake_layout_time_left_seconds")
                .set(time_left.ms() as f64 / 1000.0);
            if let Some(clock) = clock {
                metrics::gauge!("snowflake_clock_synchronised").set(if clock.synchronised {
                    1.0
                } else {
                    0.0
                });
                metrics::gauge!("snowflake_clock_max_error_seconds").set(clock.max_error_ms / 1e3);
                metrics::gauge!("snowflake_clock_estimated_error_seconds")
                    .set(clock.estimated_error_ms / 1e3);
                metrics::gauge!("snowflake_clock_offset_seconds").set(clock.offset_ms / 1e3);
            }
        });
    }
}
