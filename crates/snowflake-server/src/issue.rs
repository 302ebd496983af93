//! IDs into response bodies: a small request at once, a large one as a
//! stream of chunks made as the client reads.
//!
//! A large body is never built whole: streamed ([`crate::chunks`]), a
//! client that reads nothing holds about two chunks, and the IDs of a
//! client that left are never made.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use snowflake::{Id, IdBatch, TextForm};
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::chunks;
use crate::config::Config;
use crate::problem::Problem;
use snowflake::SharedGenerator;
use snowflake_mask::Masker;

/// IDs per chunk of a streamed body: about 22 KB of JSON, small enough that
/// a slow reader holds little, large enough that a chunk's hop to the
/// blocking pool is a small share of its cost.
pub(crate) const CHUNK_IDS: u64 = 1024;

/// The service's limits on issuing, from its [`Config`]: the edge hands
/// them to the IDs route with each request, so they come from the same
/// settings as the layers around it.
pub(crate) struct Limits {
    /// Permits for making a chunk of a large request.
    pub(crate) large: Arc<Semaphore>,
    /// How long a request may take, a streamed body's reading included.
    pub(crate) request_timeout: Duration,
}

impl Limits {
    pub(crate) fn new(config: &Config) -> Self {
        Limits {
            large: Arc::new(Semaphore::new(config.max_large_batches.max(1))),
            request_timeout: config.request_timeout,
        }
    }
}

/// How a body is written: JSON (`{"layout":…,"ids":["…",…]}`) or one ID
/// per line, each ID in the text form asked for, masked if asked. The
/// JSON's opening, which names the layout, is the source's to give
/// ([`MakeChunk::make`]), and so is the masker.
#[derive(Clone, Copy)]
pub(crate) struct Framing {
    pub(crate) plain: bool,
    pub(crate) form: TextForm,
    pub(crate) masked: bool,
}

impl Framing {
    /// Appends `batch` to `out`, each ID masked by `mask` if given; `first`
    /// says whether no ID was written yet.
    fn push(
        &self,
        batch: IdBatch,
        mask: Option<&Masker>,
        first: &mut bool,
        out: &mut Vec<u8>,
    ) -> Result<(), snowflake::Error> {
        let mut buf = [0u8; TextForm::MAX_LEN];
        for id in batch {
            let id = match mask {
                Some(masker) => masker.mask(id)?,
                None => id,
            };
            let start = self.form.write_back(id, &mut buf);
            self.push_text(&buf[start..], first, out);
        }
        Ok(())
    }

    /// Appends one ID already written as `text`: the one place an ID's
    /// framing (quotes and commas, or a line) is written.
    fn push_text(&self, text: &[u8], first: &mut bool, out: &mut Vec<u8>) {
        if self.plain {
            out.extend_from_slice(text);
            out.push(b'\n');
        } else {
            if !*first {
                out.push(b',');
            }
            out.push(b'"');
            out.extend_from_slice(text);
            out.push(b'"');
        }
        *first = false;
    }

    /// A whole body of one ID, what `start`, `push` and `end` write, in a
    /// buffer of exactly its size: `Bytes` takes such a buffer over as it
    /// is, where a larger one costs it an allocation more.
    fn one(&self, prefix: &str, id: Id) -> Vec<u8> {
        let mut buf = [0u8; TextForm::MAX_LEN];
        let start = self.form.write_back(id, &mut buf);
        let text = &buf[start..];
        let framing = if self.plain { 1 } else { prefix.len() + 4 };
        let mut out = Vec::with_capacity(text.len() + framing);
        self.start(prefix, &mut out);
        self.push_text(text, &mut true, &mut out);
        self.end(&mut out);
        out
    }

    fn start(&self, prefix: &str, out: &mut Vec<u8>) {
        if !self.plain {
            out.extend_from_slice(prefix.as_bytes());
        }
    }

    fn end(&self, out: &mut Vec<u8>) {
        if !self.plain {
            out.extend_from_slice(b"]}");
        }
    }
}

/// `count` IDs from `generator`, in as many batches as time units need,
/// each masked by `mask` if given.
fn fill(
    generator: &SharedGenerator,
    framing: &Framing,
    mask: Option<&Masker>,
    count: u64,
    first: &mut bool,
    out: &mut Vec<u8>,
) -> Result<(), snowflake::Error> {
    let mut left = count;
    while left > 0 {
        let batch = generator.next_ids(left)?;
        left -= batch.len() as u64;
        framing.push(batch, mask, first, out)?;
    }
    Ok(())
}

/// `count` IDs as (part of) a body: the JSON opening (`prefix`,
/// `{"layout":"<name>","ids":[`) when `first`, the closing when `last`;
/// each ID masked by `mask` if given.
pub(crate) fn write(
    generator: &SharedGenerator,
    prefix: &str,
    framing: &Framing,
    mask: Option<&Masker>,
    count: u64,
    first: bool,
    last: bool,
) -> Result<Vec<u8>, snowflake::Error> {
    if count == 1 && first && last && mask.is_none() {
        // The generator's own path for one ID: a single compare-and-swap
        // when the time unit has a number left, where a batch of one takes
        // the general path.
        return Ok(framing.one(prefix, generator.next_id()?));
    }
    let mut out = Vec::with_capacity(count as usize * 23 + prefix.len() + 2);
    if first {
        framing.start(prefix, &mut out);
    }
    let mut fresh = first;
    fill(generator, framing, mask, count, &mut fresh, &mut out)?;
    if last {
        framing.end(&mut out);
    }
    Ok(out)
}

/// What makes the chunks of a streamed body: the service state, which
/// knows which generator may issue now.
pub(crate) trait MakeChunk: Send + Sync + 'static {
    /// [`write`] on the generator that may issue now; may block.
    fn make(
        &self,
        framing: &Framing,
        count: u64,
        first: bool,
        last: bool,
    ) -> Result<Vec<u8>, Problem>;
}

/// One chunk of a streamed body, made off the async workers (the generator
/// may sleep until the next time unit) while holding a large-batch permit,
/// so large requests take turns and never crowd out small ones.
async fn chunk<S: MakeChunk>(
    source: &Arc<S>,
    large: &Arc<Semaphore>,
    framing: &Framing,
    count: u64,
    first: bool,
    last: bool,
) -> Result<Bytes, Problem> {
    let permit = Arc::clone(large)
        .acquire_owned()
        .await
        .map_err(|_| Problem::internal())?;
    let source = Arc::clone(source);
    let framing = *framing;
    let made = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        source.make(&framing, count, first, last)
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
pub(crate) async fn streamed<S: MakeChunk>(
    source: &Arc<S>,
    large: &Arc<Semaphore>,
    framing: Framing,
    count: u64,
    deadline: Instant,
) -> Result<Body, Problem> {
    let size = count.min(CHUNK_IDS);
    let head = chunk(source, large, &framing, size, true, size == count).await?;
    if size == count {
        return Ok(Body::from(head));
    }
    let (tx, body) = chunks::channel(deadline);
    let source = Arc::clone(source);
    let large = Arc::clone(large);
    tokio::spawn(async move {
        let Some(room) = tx.room().await else {
            return;
        };
        room.send(head, false);
        let mut left = count - size;
        while left > 0 {
            // Room first, then the chunk: nothing is made for a client that
            // left or has not taken the chunk before.
            let Some(room) = tx.room().await else {
                return;
            };
            let size = left.min(CHUNK_IDS);
            left -= size;
            match chunk(&source, &large, &framing, size, false, left == 0).await {
                Ok(made) => room.send(made, left == 0),
                Err(problem) => {
                    tracing::warn!(detail = %problem.detail, "an ID stream stopped early");
                    return;
                }
            }
        }
    });
    Ok(body)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use snowflake::{Clock, Generator, Layout, ManualClock, SharedGenerator};

    use super::*;

    fn generator(at_ms: i64) -> SharedGenerator {
        let clock: Arc<dyn Clock> = Arc::new(ManualClock::new(at_ms));
        Generator::builder(Layout::twitter())
            .node(&[("machine", 3)])
            .clock(clock)
            .build()
            .unwrap()
    }

    /// Records the size of every chunk it is asked for.
    #[derive(Default)]
    struct Recording(std::sync::Mutex<Vec<u64>>);

    impl MakeChunk for Recording {
        fn make(&self, _: &Framing, count: u64, _: bool, _: bool) -> Result<Vec<u8>, Problem> {
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
        let source = Arc::new(Recording::default());
        let framing = Framing {
            plain: true,
            form: TextForm::Decimal,
            masked: false,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut body = streamed(
            &source,
            &Arc::new(Semaphore::new(1)),
            framing,
            count,
            deadline,
        )
        .await
        .unwrap();
        let mut got = 0;
        while let Some(frame) = body.frame().await {
            got += frame.unwrap().into_data().unwrap().len() as u64;
        }
        assert_eq!(got, count);
        // The body is held: only the producer's own end lets go of the source.
        let until = std::time::Instant::now() + Duration::from_secs(5);
        while Arc::strong_count(&source) > 1 {
            assert!(
                std::time::Instant::now() < until,
                "the producer is still running after the last chunk: {:?}",
                source.0.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(*source.0.lock().unwrap(), [CHUNK_IDS, CHUNK_IDS, 5]);
        drop(body);
    }

    /// The one-ID body is what the general path writes for a count of one,
    /// byte for byte, in every form, whatever the sequence had reached,
    /// and its buffer is exactly full.
    #[test]
    fn one_id_is_written_as_the_general_path_writes_it() {
        let prefix = r#"{"layout":"twitter","ids":["#;
        for form in TextForm::ALL {
            for plain in [false, true] {
                let framing = Framing {
                    plain,
                    form,
                    masked: false,
                };
                for issued_before in [0, 1, 7, 4094, 4095] {
                    let fast = generator(1_700_000_000_000);
                    let general = generator(1_700_000_000_000);
                    for _ in 0..issued_before {
                        fast.next_id().unwrap();
                        general.next_id().unwrap();
                    }
                    let body = write(&fast, prefix, &framing, None, 1, true, true).unwrap();
                    let mut expected = Vec::new();
                    framing.start(prefix, &mut expected);
                    fill(&general, &framing, None, 1, &mut true, &mut expected).unwrap();
                    framing.end(&mut expected);
                    let what = format!("{form:?}, plain {plain}, after {issued_before}");
                    assert_eq!(body, expected, "{what}");
                    assert_eq!(body.len(), body.capacity(), "{what}");
                }
            }
        }
    }
}
