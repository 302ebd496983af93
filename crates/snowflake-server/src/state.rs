//! What every handler shares: the source of IDs and the metrics registry,
//! and the one path by which IDs leave the service.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::body::Body;
use snowflake::{Clock, ErrorKind, Layout, SharedGenerator};
use snowflake_mask::Masker;

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
    /// shows whether the store works again.
    pub fn ready(&self) -> Result<serde_json::Value, Problem> {
        if self.store_failing.load(Ordering::Relaxed) {
            self.with_generator(|g| g.next_id())?;
        } else {
            self.with_generator(|g| g.ready())?;
        }
        let mut body = serde_json::Map::new();
        body.insert("status".into(), "ready".into());
        body.extend(self.source.status());
        Ok(serde_json::Value::Object(body))
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
