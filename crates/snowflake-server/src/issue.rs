//! Issuing: fresh IDs from the source, under the promise that no ID made
//! after the node's right to issue ended reaches a client.
//!
//! A request flows one way: the IDs route asks the [`Issuer`] for `count`
//! IDs in an [`IdsFormat`]; the issuer takes the generator the
//! [source](crate::source) allows now, has [`body`](crate::body) write the
//! IDs into bytes, and hands the bytes out only if the source still allows
//! it afterwards ([`Issuer::with_generator`], the issuing check). A small
//! request is answered at once; a large one (more IDs than one time unit
//! holds) is streamed as [chunks](crate::chunks), each made as the client
//! reads and checked the same way, so a client that reads nothing holds
//! about two chunks, and the IDs of a client that left are never made.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::{Body, Bytes};
use snowflake::{ErrorKind, SharedGenerator};
use snowflake_mask::Masker;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::body::{self, IdsFormat, Piece};
use crate::chunks;
use crate::config::Config;
use crate::problem::Problem;
use crate::source::{IdSource, Unavailable};

/// IDs per chunk of a streamed body: about 22 KB of JSON, small enough that
/// a slow reader holds little, large enough that a chunk's hop to the
/// blocking pool is a small share of its cost.
pub(crate) const CHUNK_IDS: u64 = 1024;

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

/// Hands out the source's IDs, and nothing the source no longer allows.
pub(crate) struct Issuer {
    source: Arc<dyn IdSource>,
    /// The keyed permutation IDs are shown through when a client asks for
    /// them masked; `None` when the operator gave no key.
    masker: Option<Arc<Masker>>,
    /// The start of every JSON answer, made once rather than per request.
    json_prefix: Box<str>,
    /// Requests for up to this many IDs are served on the async worker: one
    /// time unit's worth, so at most one wait for the next unit happens
    /// there. Larger ones are streamed from the blocking pool.
    inline_count: u64,
    /// Set when issuing failed because the mark could not be stored, cleared
    /// when issuing succeeds: readiness then fails with the IDs route.
    store_failing: AtomicBool,
    /// Permits for making a chunk of a large request, so large requests
    /// take turns and never crowd out small ones.
    large: Arc<Semaphore>,
    /// How long a request may take, a streamed body's reading included.
    request_timeout: Duration,
}

impl Issuer {
    /// The issuer of `source`'s IDs, with the masking key and the limits of
    /// `config`.
    pub(crate) fn new(source: Arc<dyn IdSource>, config: &Config) -> Self {
        let layout = source.layout();
        Issuer {
            json_prefix: body::json_prefix(&layout.name()),
            inline_count: layout.ids_per_tick().unwrap_or(1),
            store_failing: AtomicBool::new(false),
            masker: config.masker.clone(),
            large: Arc::new(Semaphore::new(config.max_large_batches.max(1))),
            request_timeout: config.request_timeout,
            source,
        }
    }

    /// The source IDs come from.
    pub(crate) fn source(&self) -> &Arc<dyn IdSource> {
        &self.source
    }

    /// The masker, if the operator gave a key.
    pub(crate) fn masker(&self) -> Option<&Masker> {
        self.masker.as_deref()
    }

    /// Whether the last attempt to issue failed to store the mark.
    pub(crate) fn store_failing(&self) -> bool {
        self.store_failing.load(Ordering::Relaxed)
    }

    /// `count` fresh IDs as the body of an answer: made at once when they
    /// fit in one time unit, streamed in chunks when they do not.
    pub(crate) async fn issue(
        self: &Arc<Self>,
        count: u64,
        format: IdsFormat,
    ) -> Result<Body, Problem> {
        if count <= self.inline_count {
            return Ok(Body::from(self.make(&format, count, Piece::WHOLE)?));
        }
        let deadline = Instant::now() + self.request_timeout;
        // Boxed: the rare stream's state stays out of every request's future.
        Box::pin(streamed(self, &self.large, format, count, deadline)).await
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
}

/// What makes the pieces of a streamed answer: the [`Issuer`], or a test's
/// recorder.
pub(crate) trait MakeChunk: Send + Sync + 'static {
    /// `count` IDs as `piece` of an answer in `format`; may block.
    fn make(&self, format: &IdsFormat, count: u64, piece: Piece) -> Result<Vec<u8>, Problem>;
}

impl MakeChunk for Issuer {
    fn make(&self, format: &IdsFormat, count: u64, piece: Piece) -> Result<Vec<u8>, Problem> {
        let mask = match (format.masked, &self.masker) {
            (false, _) => None,
            (true, Some(masker)) => Some(&**masker),
            // The route refuses `masked` without a key before it gets here.
            (true, None) => return Err(Problem::internal()),
        };
        self.with_generator(|generator| {
            body::write(generator, &self.json_prefix, format, mask, count, piece)
        })
    }
}

/// One chunk of a streamed body, made off the async workers (the generator
/// may sleep until the next time unit) while holding a large-batch permit,
/// so large requests take turns and never crowd out small ones.
async fn chunk<M: MakeChunk>(
    maker: &Arc<M>,
    large: &Arc<Semaphore>,
    format: &IdsFormat,
    count: u64,
    piece: Piece,
) -> Result<Bytes, Problem> {
    let permit = Arc::clone(large)
        .acquire_owned()
        .await
        .map_err(|_| Problem::internal())?;
    let maker = Arc::clone(maker);
    let format = *format;
    let made = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        maker.make(&format, count, piece)
    })
    .await
    .map_err(|_| Problem::internal())??;
    Ok(Bytes::from(made))
}

/// The body of a large request: the first chunk is made before the answer
/// starts, so a generator that cannot issue still gets a 503; the rest are
/// made as the client reads, each only once the one before it was taken.
/// When the client leaves, or `deadline` passes before it took everything,
/// no further chunk is made and the body ends in an error rather than as
/// valid-looking truncated JSON.
async fn streamed<M: MakeChunk>(
    maker: &Arc<M>,
    large: &Arc<Semaphore>,
    format: IdsFormat,
    count: u64,
    deadline: Instant,
) -> Result<Body, Problem> {
    let size = count.min(CHUNK_IDS);
    let head = chunk(
        maker,
        large,
        &format,
        size,
        Piece {
            first: true,
            last: size == count,
        },
    )
    .await?;
    if size == count {
        return Ok(Body::from(head));
    }
    let (tx, body) = chunks::channel(deadline);
    let (maker, large) = (Arc::clone(maker), Arc::clone(large));
    tokio::spawn(async move {
        let Some(room) = tx.room().await else {
            return;
        };
        room.send(head, false);
        produce(&tx, &maker, &large, format, count - size).await;
    });
    Ok(body)
}

/// The chunks of a stream after its first, `left` IDs in all, each made
/// once the client took the one before it.
async fn produce<M: MakeChunk>(
    tx: &chunks::ChunkSender,
    maker: &Arc<M>,
    large: &Arc<Semaphore>,
    format: IdsFormat,
    mut left: u64,
) {
    while left > 0 {
        // Room first, then the chunk: nothing is made for a client that
        // left or has not taken the chunk before.
        let Some(room) = tx.room().await else {
            return;
        };
        let size = left.min(CHUNK_IDS);
        left -= size;
        let piece = Piece {
            first: false,
            last: left == 0,
        };
        match chunk(maker, large, &format, size, piece).await {
            Ok(made) => room.send(made, left == 0),
            Err(problem) => {
                tracing::warn!(detail = %problem.detail, "an ID stream stopped early");
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use snowflake::TextForm;

    use super::*;
    use crate::body::IdsMedia;

    /// Records the size of every chunk it is asked for.
    #[derive(Default)]
    struct Recording(std::sync::Mutex<Vec<u64>>);

    impl MakeChunk for Recording {
        fn make(&self, _: &IdsFormat, count: u64, _: Piece) -> Result<Vec<u8>, Problem> {
            self.0.lock().unwrap().push(count);
            Ok(vec![b'x'; count as usize])
        }
    }

    /// The producer makes exactly the chunks of the count, none empty, and
    /// ends after the last one even while the client still holds the
    /// finished body (it makes nothing more, and waits for nothing).
    #[tokio::test]
    async fn a_stream_makes_its_chunks_and_nothing_after_the_last() {
        use http_body_util::BodyExt;

        let count = 2 * CHUNK_IDS + 5;
        let maker = Arc::new(Recording::default());
        let format = IdsFormat {
            media: IdsMedia::Lines,
            form: TextForm::Decimal,
            masked: false,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        let large = Arc::new(Semaphore::new(1));
        let mut body = streamed(&maker, &large, format, count, deadline)
            .await
            .unwrap();
        let mut got = 0;
        while let Some(frame) = body.frame().await {
            got += frame.unwrap().into_data().unwrap().len() as u64;
        }
        assert_eq!(got, count);
        // The body is held: only the producer's own end lets go of the maker.
        let until = std::time::Instant::now() + Duration::from_secs(5);
        while Arc::strong_count(&maker) > 1 {
            assert!(
                std::time::Instant::now() < until,
                "the producer is still running after the last chunk: {:?}",
                maker.0.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(*maker.0.lock().unwrap(), [CHUNK_IDS, CHUNK_IDS, 5]);
        drop(body);
    }
}
