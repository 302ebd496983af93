//! Connections over real loopback sockets: the header, idle and shutdown
//! timeouts, and the cap on open connections.

use std::sync::Arc;
use std::time::Duration;

use snowflake::{Clock, Generator, Layout, SystemClock};
use snowflake_server::Standalone;

use crate::support::*;

#[tokio::test]
async fn a_client_trickling_headers_is_cut_off() {
    use tokio::io::AsyncWriteExt;
    let config = config().with_header_timeout(Duration::from_secs(1));
    let served = Served::start(config).await;
    let mut stream = served.connect().await;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n")
        .await
        .unwrap();
    let (mut reader, mut writer) = stream.into_split();
    // One header line every 100 ms, never the blank line that ends them.
    let trickle = tokio::spawn(async move {
        for n in 0.. {
            let line = format!("x-trickle-{n}: {}\r\n", "a".repeat(50));
            if writer.write_all(line.as_bytes()).await.is_err() {
                return n;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        unreachable!()
    });
    let start = std::time::Instant::now();
    let mut buf = [0u8; 1024];
    let closed = loop {
        use tokio::io::AsyncReadExt;
        match tokio::time::timeout(Duration::from_secs(5), reader.read(&mut buf)).await {
            Err(_) => break None,
            Ok(Ok(0)) | Ok(Err(_)) => break Some(start.elapsed()),
            Ok(Ok(_)) => {}
        }
    };
    let closed = closed.expect("still open 5 s after headers began, with a 1 s timeout");
    assert_closed_on_time(closed, Duration::from_secs(1), "trickled headers");
    trickle.abort();
    served.stop().await;
}

#[tokio::test]
async fn a_kept_alive_connection_waits_for_its_next_request_no_longer_than_the_header_timeout() {
    use tokio::io::AsyncWriteExt;
    let config = config()
        .with_header_timeout(Duration::from_secs(1))
        .with_idle_timeout(Duration::from_secs(60));
    let served = Served::start(config).await;
    let mut stream = served.connect().await;
    // Requests that keep coming, each well within the timeout, keep the
    // connection: the deadline is set for each and lifted when it is in.
    let mut answered = std::time::Instant::now();
    for _ in 0..3 {
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n")
            .await
            .unwrap();
        let answer = read_until_it_ends_with(&mut stream, b"}").await;
        assert!(
            answer.starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&answer)
        );
        answered = std::time::Instant::now();
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
    // Then silence: closed by the header timeout, long before the idle one.
    read_until_closed(&mut stream, Duration::from_secs(5))
        .await
        .expect("a kept-alive connection stayed open 5 s, with a 1 s header timeout");
    assert_closed_on_time(
        answered.elapsed(),
        Duration::from_secs(1),
        "waiting for the next request",
    );
    served.stop().await;
}

#[tokio::test]
async fn a_body_sent_slowly_after_its_headers_is_not_cut_off_by_the_header_timeout() {
    use tokio::io::AsyncWriteExt;
    let config = config().with_header_timeout(Duration::from_secs(1));
    let served = Served::start(config).await;
    let mut stream = served.connect().await;
    let body = b"[\"1\", \"2\", \"3\", \"4\"]";
    let head = format!(
        "POST /api/v1/decode HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // The headers are in; the body takes twice the header timeout.
    for part in body.chunks(body.len() / 4 + 1) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        stream.write_all(part).await.unwrap();
    }
    answered_200(&mut stream, "no answer 5 s after the body was sent").await;
    served.stop().await;
}

#[tokio::test]
async fn shutdown_closes_a_half_sent_request_at_the_deadline() {
    use tokio::io::AsyncWriteExt;
    let config = config()
        .with_header_timeout(Duration::from_secs(60))
        .with_shutdown_timeout(Duration::from_secs(1));
    let served = Served::start(config).await;
    let mut stream = served.connect().await;
    stream
        .write_all(b"POST /api/v1/ids HTTP/1.1\r\nhost: localhost\r\ncontent-length: 10\r\n\r\n12")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let start = std::time::Instant::now();
    // A half-sent request must not hold shutdown past its 1 s deadline.
    served.stop_within(Duration::from_secs(5)).await;
    let took = start.elapsed();
    assert!(took < Duration::from_millis(2500), "shutdown took {took:?}");
    assert!(
        read_until_closed(&mut stream, Duration::from_secs(1))
            .await
            .is_some()
    );
}

#[tokio::test]
async fn connections_past_the_cap_wait_for_one_to_close() {
    use tokio::io::AsyncWriteExt;
    let config = config().with_max_connections(2);
    let served = Served::start(config).await;
    let first = served.connect().await;
    let _second = served.connect().await;
    let mut third = served.connect().await;
    third
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    // The kernel completed the handshake, but the server does not take the
    // connection while two are open.
    assert!(
        read_until_closed(&mut third, Duration::from_millis(500))
            .await
            .is_none(),
        "a third connection was served past a cap of 2"
    );
    drop(first);
    answered_200(
        &mut third,
        "the third connection was not served after one closed",
    )
    .await;
    served.stop().await;
}

#[tokio::test]
async fn serving_refuses_a_clock_outside_the_layout() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let layout = Layout::twitter().with_epoch_ms(4_102_444_800_000).unwrap();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let generator = Generator::builder(layout).clock(clock).build().unwrap();
    let err =
        snowflake_server::serve_until(listener, Standalone::new(generator), config(), async {})
            .await
            .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("before the layout's epoch 2100-01-01"),
        "{text}"
    );
}

/// A connection that says nothing, or only half an HTTP/2 preface, holds
/// its place no longer than the shorter of the header and idle timeouts:
/// a long idle timeout does not keep it past the header one, nor a long
/// header timeout past the idle one.
#[tokio::test]
async fn a_silent_or_half_open_connection_is_closed_at_the_shorter_timeout() {
    use tokio::io::AsyncWriteExt;
    let (short, long) = (Duration::from_secs(1), Duration::from_secs(60));
    for (header, idle, which) in [(short, long, "header"), (long, short, "idle")] {
        for http2 in [false, true] {
            let config = config()
                .with_header_timeout(header)
                .with_idle_timeout(idle)
                .with_http2(http2);
            let served = Served::start(config).await;
            for (first, what) in [(&b""[..], "silent"), (&h2::PREFACE[..10], "half a preface")] {
                let case = format!("{what} (http2 {http2}, 1 s {which} timeout)");
                let mut stream = served.connect().await;
                stream.write_all(first).await.unwrap();
                let (_, after) = read_until_closed(&mut stream, Duration::from_secs(5))
                    .await
                    .unwrap_or_else(|| panic!("{case}: still open after 5 s"));
                assert_closed_on_time(after, short, &case);
            }
            served.stop().await;
        }
    }
}

/// One HTTP/2 frame from `stream`: its kind, flags, stream and payload.
async fn read_frame(stream: &mut tokio::net::TcpStream) -> Option<(u8, u8, u32, Vec<u8>)> {
    use tokio::io::AsyncReadExt;
    let mut head = [0u8; 9];
    tokio::time::timeout(Duration::from_secs(5), stream.read_exact(&mut head))
        .await
        .ok()?
        .ok()?;
    let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
    let id = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
    let mut payload = vec![0u8; len];
    stream.read_exact(&mut payload).await.ok()?;
    Some((head[3], head[4], id, payload))
}

/// PINGs sent every 200 ms until the connection breaks.
fn keep_pinging(mut writer: tokio::net::tcp::OwnedWriteHalf) -> tokio::task::JoinHandle<()> {
    use tokio::io::AsyncWriteExt;
    tokio::spawn(async move {
        while writer.write_all(&h2::ping()).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
}

/// On HTTP/2, PING and SETTINGS frames are not requests: a connection that
/// sends only them is closed at the header timeout, before its first
/// request and after its last stream ended, however often they come.
#[tokio::test]
async fn http2_control_frames_do_not_keep_a_connection_open() {
    use tokio::io::AsyncWriteExt;
    let header = Duration::from_secs(1);
    let config = config()
        .with_header_timeout(header)
        .with_idle_timeout(Duration::from_secs(3))
        .with_http2(true);
    let served = Served::start(config).await;

    // Before any request.
    let mut stream = served.connect().await;
    let start = std::time::Instant::now();
    stream.write_all(h2::PREFACE).await.unwrap();
    stream.write_all(&h2::settings()).await.unwrap();
    let (mut reader, writer) = stream.into_split();
    let pinger = keep_pinging(writer);
    let (rest, _) = read_until_closed(&mut reader, Duration::from_secs(6))
        .await
        .expect("pings kept a connection without requests open for 6 s");
    assert_closed_on_time(start.elapsed(), header, "pings before any request");
    // It was HTTP/2 that answered: the server's SETTINGS come first.
    assert_eq!(rest.get(3), Some(&0x4), "not an HTTP/2 answer: {rest:?}");
    pinger.abort();

    // After a request: the stream ends, then only pings.
    let mut stream = served.connect().await;
    stream.write_all(h2::PREFACE).await.unwrap();
    stream.write_all(&h2::settings()).await.unwrap();
    stream.write_all(&h2::get(1, "/healthz")).await.unwrap();
    let mut status_seen = false;
    loop {
        let (kind, flags, id, _) = read_frame(&mut stream)
            .await
            .expect("the connection ended before the answer did");
        status_seen |= kind == 0x1 && id == 1;
        if id == 1 && flags & 0x1 != 0 {
            break;
        }
    }
    assert!(status_seen, "no HEADERS frame answered the request");
    let ended = std::time::Instant::now();
    let (mut reader, writer) = stream.into_split();
    let pinger = keep_pinging(writer);
    read_until_closed(&mut reader, Duration::from_secs(6))
        .await
        .expect("pings kept an HTTP/2 connection open 6 s after its last stream");
    assert_closed_on_time(ended.elapsed(), header, "pings after the last stream");
    pinger.abort();
    served.stop().await;
}

/// HTTP/2 is off unless asked for: a client that speaks it is not served.
#[tokio::test]
async fn http2_is_off_by_default() {
    use tokio::io::AsyncWriteExt;
    let served = Served::start(config()).await;
    let mut stream = served.connect().await;
    stream.write_all(h2::PREFACE).await.unwrap();
    stream.write_all(&h2::settings()).await.unwrap();
    stream.write_all(&h2::get(1, "/healthz")).await.unwrap();
    let (answer, _) = read_until_closed(&mut stream, Duration::from_secs(5))
        .await
        .expect("an HTTP/2 client was held open 5 s by an HTTP/1 server");
    assert_ne!(
        answer.get(3),
        Some(&0x4),
        "the server answered with HTTP/2 SETTINGS"
    );
    assert!(
        !answer.windows(3).any(|w| w == b"ok\""),
        "served over HTTP/2: {answer:?}"
    );
    served.stop().await;
}

/// A streamed answer over a real connection arrives whole: every ID of a
/// request several chunks long, in order, in a body hyper framed as the
/// stream said (chunked, ended after the last chunk).
#[tokio::test]
async fn a_streamed_answer_arrives_whole_over_a_real_connection() {
    use tokio::io::AsyncWriteExt;
    let served = Served::start(config()).await;
    let mut stream = served.connect().await;
    stream
        .write_all(
            b"GET /api/v1/ids?count=10000 HTTP/1.1\r\nhost: localhost\r\naccept: text/plain\r\n\r\n",
        )
        .await
        .unwrap();
    // Read until the chunked body's last chunk: the connection stays open.
    let answer = tokio::time::timeout(
        Duration::from_secs(30),
        read_until_it_ends_with(&mut stream, b"\r\n0\r\n\r\n"),
    )
    .await
    .expect("the answer took over 30 s");
    let text = String::from_utf8(answer).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("transfer-encoding: chunked"),
        "{head}"
    );
    // Unchunk: sizes in hex, each chunk's data, a CRLF after each.
    let mut ids = String::new();
    let mut rest = body;
    loop {
        let (size, after) = rest.split_once("\r\n").unwrap();
        let size = usize::from_str_radix(size, 16).unwrap();
        if size == 0 {
            break;
        }
        ids.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    let ids: Vec<u64> = ids.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 10_000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    served.stop().await;
}
