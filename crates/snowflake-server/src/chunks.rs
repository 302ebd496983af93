//! A response body made as the client reads it: a producer task sends
//! chunks through a channel that holds one, and makes each chunk only once
//! the channel has room for it ([`ChunkSender::room`]), so a client that
//! stops reading holds one chunk of ours (waiting, or being made) besides
//! what hyper and the kernel queue for the socket, and a producer whose
//! client left stops before it makes another.
//!
//! The body ends in an error, never cleanly, when the producer stops before
//! its last chunk (the client was too slow, the right to issue ended, the
//! request's time ran out): hyper then aborts the response, so a client
//! cannot take a cut-off answer for a whole one.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use http_body::Frame;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The producer's end: sends each chunk, saying whether it is the last.
pub(crate) struct ChunkSender {
    tx: mpsc::Sender<(Bytes, bool)>,
    deadline: Instant,
}

impl ChunkSender {
    /// Room for the next chunk, once the client took the one before it, but
    /// not past the deadline. `None`: the client left or was too slow, and
    /// the producer must stop before it makes the chunk.
    pub(crate) async fn room(&self) -> Option<Room<'_>> {
        match tokio::time::timeout_at(self.deadline, self.tx.reserve()).await {
            Ok(Ok(permit)) => Some(Room(permit)),
            Ok(Err(_)) | Err(_) => None,
        }
    }
}

/// A place in the channel for one chunk, made once it is had.
pub(crate) struct Room<'a>(mpsc::Permit<'a, (Bytes, bool)>);

impl Room<'_> {
    /// Hands `chunk` to the body; `last` says it ends the answer.
    pub(crate) fn send(self, chunk: Bytes, last: bool) {
        self.0.send((chunk, last));
    }
}

/// A channel for a body whose client must have read it all by `deadline`.
pub(crate) fn channel(deadline: Instant) -> (ChunkSender, Body) {
    let (tx, rx) = mpsc::channel(1);
    (
        ChunkSender { tx, deadline },
        Body::new(ChunkStream {
            rx,
            finished: false,
        }),
    )
}

/// The body: chunks from the producer; a channel that closes before the
/// last chunk is an error.
struct ChunkStream {
    rx: mpsc::Receiver<(Bytes, bool)>,
    finished: bool,
}

impl http_body::Body for ChunkStream {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        if self.finished {
            return Poll::Ready(None);
        }
        match self.rx.poll_recv(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some((bytes, last))) => {
                self.finished = last;
                Poll::Ready(Some(Ok(Frame::data(bytes))))
            }
            Poll::Ready(None) => Poll::Ready(Some(Err(std::io::Error::other(
                "the answer stopped before its end",
            )))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.finished
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use http_body_util::BodyExt;

    use super::*;

    /// Waits for room and sends `chunk`, the last one if `last`.
    async fn send(tx: &ChunkSender, chunk: &'static [u8], last: bool) {
        tx.room()
            .await
            .unwrap()
            .send(Bytes::from_static(chunk), last);
    }

    #[tokio::test]
    async fn a_producer_that_stops_early_ends_the_body_in_an_error() {
        let (tx, body) = channel(Instant::now() + Duration::from_secs(5));
        tokio::spawn(async move {
            send(&tx, b"one", false).await;
        });
        let mut body = body;
        let first = body.frame().await.unwrap().unwrap();
        assert_eq!(first.into_data().unwrap(), "one");
        assert!(body.frame().await.unwrap().is_err());
    }

    #[tokio::test]
    async fn the_last_chunk_ends_the_body_cleanly() {
        let (tx, body) = channel(Instant::now() + Duration::from_secs(5));
        tokio::spawn(async move {
            send(&tx, b"a", false).await;
            send(&tx, b"b", true).await;
        });
        assert_eq!(body.collect().await.unwrap().to_bytes(), "ab");
    }

    #[tokio::test]
    async fn a_client_that_does_not_read_by_the_deadline_stops_the_producer() {
        let (tx, body) = channel(Instant::now() + Duration::from_millis(100));
        // One chunk fits in the channel; there is no room for a second
        // until a reader takes the first, which never comes.
        send(&tx, b"a", false).await;
        assert!(tx.room().await.is_none());
        drop(body);
    }

    #[tokio::test]
    async fn a_client_that_left_leaves_no_room() {
        let (tx, body) = channel(Instant::now() + Duration::from_secs(5));
        drop(body);
        assert!(tx.room().await.is_none());
    }
}
