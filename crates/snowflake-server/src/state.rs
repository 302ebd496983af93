//! What every handler shares: the source of IDs and the metrics registry,
//! and the one path by which IDs leave the service.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::body::Body;
use snowflake::{Clock, ErrorKind, Layout, SharedGenerator};
use snowflake_mask::Masker;

use crate::clock_health::{KernelClock, KernelClockReader};

use crate::issue::{self, Framing, Limits, MakeChunk};
use crate::problem::Problem;
use crate::source::{IdSource, Unavailable};
use crate::telemetry::Telemetry;

/// What every handler shares.
pub struct AppState {
    source: Arc<dyn IdSource>,
    pub(crate) telemetry: Telemetry,
    /// The start of every JSON ids body, made once rather than per request.
    ids_prefix: Arc<str>,
    /// Requests for up to this many IDs are served on the async worker: one
    /// time unit's worth, so at most one wait for the next unit happens
    /// there. Larger ones are streamed from the blocking pool.
    inline_count: u64,
    /// Set when issuing failed because the mark could not be stored, cleared
    /// when issuing succeeds: readiness then fails with the IDs route.
    store_failing: AtomicBool,
    /// The keyed permutation IDs are shown through when a client asks for
    /// them masked; `None` when the operator gave no key.
    masker: Option<Arc<Masker>>,
    /// Where the kernel's view of the clock is read from.
    kernel_clock: KernelClockReader,
    /// The largest clock error readiness accepts, in ms, if the operator
    /// requires a synchronised clock.
    clock_requirement: Option<u64>,
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

/// The message when only an operator can make the node issue again.
const NEEDS_OPERATOR: &str = "this node cannot issue IDs until its operator acts";

fn unavailable(why: &Unavailable) -> Problem {
    tracing::debug!(reason = %why, "refused to issue");
    if why.is_for_operator() {
        Problem::needs_operator(NEEDS_OPERATOR)
    } else {
        Problem::unavailable(UNAVAILABLE)
    }
}

impl AppState {
    /// State around a source of IDs.
    pub fn new(source: Arc<dyn IdSource>) -> Self {
        let layout = source.layout();
        AppState {
            ids_prefix: format!(
                "{{\"layout\":{},\"ids\":[",
                serde_json::Value::from(layout.name().into_owned())
            )
            .into(),
            inline_count: layout.ids_per_tick().unwrap_or(1),
            store_failing: AtomicBool::new(false),
            masker: None,
            kernel_clock: KernelClock::reader(),
            clock_requirement: None,
            telemetry: Telemetry::new(),
            source,
        }
    }

    /// The state, with `masker` for the IDs clients ask for masked
    /// (`/api/v1/ids?masked=true`) and, where the operator allows it,
    /// `/api/v1/unmask/{id}`. The masker must be for the source's layout.
    pub fn with_masker(mut self, masker: Arc<Masker>) -> Self {
        self.masker = Some(masker);
        self
    }

    /// The state, reading the kernel's view of the clock from `reader`
    /// instead of the kernel (a test's fake clock).
    pub fn with_kernel_clock(mut self, reader: KernelClockReader) -> Self {
        self.kernel_clock = reader;
        self
    }

    /// The state, ready only while the kernel says the clock is
    /// synchronised with a maximum error of at most `max_error_ms`.
    pub fn requiring_clock_sync(mut self, max_error_ms: u64) -> Self {
        self.clock_requirement = Some(max_error_ms);
        self
    }

    /// The masker, if the operator gave a key.
    pub(crate) fn masker(&self) -> Option<&Masker> {
        self.masker.as_deref()
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
    pub(crate) fn with_generator<T>(
        &self,
        issue: impl FnOnce(&SharedGenerator) -> Result<T, snowflake::Error>,
    ) -> Result<T, Problem> {
        let generator = self.source.current().map_err(|why| unavailable(&why))?;
        let out = match issue(&generator) {
            Ok(out) => {
                // Read first: a store on every request would pass the flag's
                // cache line between cores even while it stays false.
                if self.store_failing.load(Ordering::Relaxed) {
                    self.store_failing.store(false, Ordering::Relaxed);
                }
                out
            }
            Err(err) => {
                if err.kind() == ErrorKind::Store {
                    self.store_failing.store(true, Ordering::Relaxed);
                }
                return Err(Problem::from_issue(&err));
            }
        };
        if !self.source.still_valid(&generator) {
            return Err(unavailable(&Unavailable::new(
                "the source's right to issue ended while these IDs were made; none were issued",
            )));
        }
        Ok(out)
    }

    /// Whether the node can issue now: the readiness body, or why not. After
    /// a failed mark write it issues one ID as a probe, since only a write
    /// shows whether the store works again. The body says what the kernel
    /// says of the clock and how long the layout has left; the clock fails
    /// readiness only where the operator requires it synchronised.
    pub fn ready(&self) -> Result<serde_json::Value, Problem> {
        if self.store_failing.load(Ordering::Relaxed) {
            self.with_generator(|g| g.next_id())?;
        } else {
            self.with_generator(|g| g.ready())?;
        }
        let clock = (self.kernel_clock)();
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
        body.extend(self.source.status());
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

    /// Whether a request for `count` IDs is streamed: more than one time
    /// unit holds. Smaller ones are made at once ([`AppState::issue_now`]).
    pub(crate) fn streams(&self, count: u64) -> bool {
        count > self.inline_count
    }

    /// `count` fresh IDs that fit in one time unit as a response body, JSON
    /// or one per line, made at once.
    pub(crate) fn issue_now(&self, count: u64, framing: Framing) -> Result<Body, Problem> {
        Ok(Body::from(self.make(&framing, count, true, true)?))
    }

    /// `count` fresh IDs, more than one time unit holds, as a body streamed
    /// in chunks made as the client reads (see `issue`).
    pub(crate) async fn issue_streamed(
        self: &Arc<Self>,
        count: u64,
        framing: Framing,
        limits: &Limits,
    ) -> Result<Body, Problem> {
        let deadline = tokio::time::Instant::now() + limits.request_timeout;
        issue::streamed(self, &limits.large, framing, count, deadline).await
    }

    /// Copies the generator's and the source's counters into the metrics
    /// registry; called on each scrape, so the hot path pays nothing for them.
    pub(crate) fn publish_metrics(&self) {
        self.telemetry.scope(|| self.source.publish_metrics());
        let ready = self.ready().is_ok();
        self.telemetry
            .scope(|| metrics::gauge!("snowflake_ready").set(if ready { 1.0 } else { 0.0 }));
        if let Ok(generator) = self.source.current() {
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

impl MakeChunk for AppState {
    fn make(
        &self,
        framing: &Framing,
        count: u64,
        first: bool,
        last: bool,
    ) -> Result<Vec<u8>, Problem> {
        let mask = match (framing.masked, &self.masker) {
            (false, _) => None,
            (true, Some(masker)) => Some(&**masker),
            // The route refuses `masked` without a key before it gets here.
            (true, None) => return Err(Problem::internal()),
        };
        self.with_generator(|generator| {
            issue::write(
                generator,
                &self.ids_prefix,
                framing,
                mask,
                count,
                first,
                last,
            )
        })
    }
}
