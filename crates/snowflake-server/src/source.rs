//! Where the service's IDs come from. The server asks a source for the
//! generator to issue from and never learns how the source got its node
//! identity: a fixed one ([`Standalone`]) or a slot leased from a cluster,
//! which the caller adapts to [`IdSource`]. So the server knows nothing of
//! etcd, and a test can hand it a source that refuses.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use snowflake::{Clock, Layout, SharedGenerator};

/// What [`IdSource::shutdown`] returns: a future, so a source may talk to the
/// network while it lets go.
pub type Shutdown = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// Why a source cannot issue now. The reason goes to the log; clients get a
/// fixed message, since a reason may name hosts, files or credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    reason: String,
    needs_operator: bool,
}

impl Unavailable {
    /// A source cannot issue, for `reason`.
    pub fn new(reason: impl Into<String>) -> Self {
        Unavailable {
            reason: reason.into(),
            needs_operator: false,
        }
    }

    /// A source cannot issue until an operator acts (a damaged mark):
    /// its 503 carries no `Retry-After`.
    pub fn needs_operator(reason: impl Into<String>) -> Self {
        Unavailable {
            reason: reason.into(),
            needs_operator: true,
        }
    }

    /// Whether only an operator can make the source issue again.
    pub fn is_for_operator(&self) -> bool {
        self.needs_operator
    }

    /// Why, in words for the operator.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

/// A source of IDs for the service.
///
/// ```
/// use std::sync::Arc;
/// use snowflake::{Clock, Generator, Layout, SystemClock};
/// use snowflake_server::{IdSource, Standalone};
///
/// let clock: Arc<dyn Clock> = Arc::new(SystemClock);
/// let generator = Generator::builder(Layout::twitter()).clock(clock).build()?;
/// let source = Standalone::new(generator);
/// let id = source.current().unwrap().next_id()?;
/// assert!(source.still_valid(&source.current().unwrap()));
/// # Ok::<(), snowflake::Error>(())
/// ```
pub trait IdSource: Send + Sync + fmt::Debug + 'static {
    /// The layout every ID is issued in.
    fn layout(&self) -> &Layout;

    /// The clock the service reads for "now".
    fn clock(&self) -> &Arc<dyn Clock>;

    /// The generator to issue from now, or why none may issue.
    fn current(&self) -> Result<Arc<SharedGenerator>, Unavailable>;

    /// Whether IDs just made with `generator` may still be handed out. A
    /// source whose right to issue can lapse (a lease) checks it again here,
    /// after the IDs were made, so a process paused in between finds out.
    fn still_valid(&self, generator: &Arc<SharedGenerator>) -> bool {
        let _ = generator;
        true
    }

    /// Fields for `/readyz` beside `"status"`, printed as given.
    fn status(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }

    /// Called on each scrape of `/metrics`: a source with metrics of its own
    /// records them here through the `metrics` facade.
    fn publish_metrics(&self) {}

    /// Called once, after the last request finished: flush what must outlive
    /// the process (a high-water mark) and let go of the node identity.
    fn shutdown(self: Arc<Self>) -> Shutdown;
}

/// A fixed node identity: one generator, always there.
#[derive(Debug)]
pub struct Standalone {
    generator: Arc<SharedGenerator>,
}

impl Standalone {
    /// The source around `generator`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use snowflake::{Clock, Generator, Layout, SystemClock};
    ///
    /// let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    /// let generator = Generator::builder(Layout::twitter()).clock(clock).build()?;
    /// let source = snowflake_server::Standalone::new(generator);
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn new(generator: SharedGenerator) -> Arc<Self> {
        Arc::new(Standalone {
            generator: Arc::new(generator),
        })
    }

    /// The generator, for callers that want its statistics.
    pub fn generator(&self) -> &Arc<SharedGenerator> {
        &self.generator
    }
}

impl IdSource for Standalone {
    fn layout(&self) -> &Layout {
        self.generator.layout()
    }

    fn clock(&self) -> &Arc<dyn Clock> {
        self.generator.clock()
    }

    fn current(&self) -> Result<Arc<SharedGenerator>, Unavailable> {
        Ok(Arc::clone(&self.generator))
    }

    /// Shrinks the mark to the last ID issued, so a clean restart does not
    /// wait out the reserved window. Needs the only reference: a request
    /// still holding the generator leaves the mark a window ahead, which is
    /// safe, and a quick restart waits it out.
    fn shutdown(self: Arc<Self>) -> Shutdown {
        let result = match Arc::try_unwrap(self)
            .ok()
            .and_then(|s| Arc::try_unwrap(s.generator).ok())
        {
            Some(generator) => generator.close().map_err(|err| err.to_string()),
            None => {
                tracing::warn!("the generator is still in use; its mark was not shrunk");
                Ok(())
            }
        };
        Box::pin(std::future::ready(result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reason is kept for the log, as given, and says whether an
    /// operator must act.
    #[test]
    fn a_reason_is_kept_as_given() {
        let why = Unavailable::new("cannot reach etcd at http://10.0.0.1:2379");
        assert_eq!(why.reason(), "cannot reach etcd at http://10.0.0.1:2379");
        assert_eq!(why.to_string(), why.reason());
        assert!(!why.is_for_operator());
        let lasting = Unavailable::needs_operator("marks/1 is damaged");
        assert_eq!(
            (lasting.to_string().as_str(), lasting.is_for_operator()),
            ("marks/1 is damaged", true)
        );
    }
}
