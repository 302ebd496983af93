//! A TCP proxy to one etcd member, as toxiproxy does it: the test can cut
//! every connection through it and refuse new ones, so that a node behind
//! it loses etcd while its own clients still reach it; and it can hold
//! back what etcd answers, so that an answer arrives a known time after its
//! request was sent.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

pub struct Proxy {
    addr: String,
    cut: Arc<AtomicBool>,
    accepted: Arc<AtomicUsize>,
    streams: Arc<Mutex<Vec<TcpStream>>>,
    acceptor: Option<std::thread::JoinHandle<()>>,
}

impl Proxy {
    /// A proxy to `upstream` that passes on every byte etcd sends `delay`
    /// after it arrived (requests go through at once): an answer reaches
    /// the node no sooner than `delay` after the node sent its request.
    pub fn delaying_answers(upstream: &str, delay: Duration) -> Proxy {
        Proxy::delaying(upstream, Duration::ZERO, delay)
    }

    /// A proxy to `upstream` that passes on every byte the node sends
    /// `requests` after it arrived, and every byte etcd sends `answers`
    /// after it arrived.
    pub fn delaying(upstream: &str, requests: Duration, answers: Duration) -> Proxy {
        let upstream = upstream.trim_start_matches("http://").to_string();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let cut = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicUsize::new(0));
        let streams: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let acceptor = {
            let (cut, accepted, streams) = (cut.clone(), accepted.clone(), streams.clone());
            std::thread::spawn(move || {
                // The listener is dropped when the cut ends this loop, so
                // that new connections are refused.
                while !cut.load(Ordering::Acquire) {
                    let Ok((client, _)) = listener.accept() else {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    };
                    let Ok(server) = TcpStream::connect(&upstream) else {
                        continue;
                    };
                    client.set_nonblocking(false).unwrap();
                    accepted.fetch_add(1, Ordering::Relaxed);
                    let mut open = streams.lock().unwrap();
                    open.push(client.try_clone().unwrap());
                    open.push(server.try_clone().unwrap());
                    drop(open);
                    pipe(
                        client.try_clone().unwrap(),
                        server.try_clone().unwrap(),
                        requests,
                    );
                    pipe(server, client, answers);
                }
            })
        };
        Proxy {
            addr,
            cut,
            accepted,
            streams,
            acceptor: Some(acceptor),
        }
    }

    /// The endpoint a node is given instead of the member's.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// How many connections it has passed on.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::Relaxed)
    }

    /// Cuts every connection and refuses new ones; fails the test if the
    /// fault is not in place afterwards.
    pub fn cut(&mut self) {
        self.cut.store(true, Ordering::Release);
        if let Some(acceptor) = self.acceptor.take() {
            acceptor.join().unwrap();
        }
        for stream in self.streams.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
        assert!(
            TcpStream::connect_timeout(&self.addr.parse().unwrap(), Duration::from_secs(1))
                .is_err(),
            "cannot set up the partition: the proxy at {} still accepts connections",
            self.addr
        );
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if self.acceptor.is_some() {
            self.cut();
        }
    }
}

/// Copies bytes one way until either side closes, each chunk `delay` after
/// it was read. Reading and writing are separate threads, so that a chunk
/// waiting out its delay does not hold back the reading of the next one.
fn pipe(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let (chunks, delayed) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if chunks
                        .send((Instant::now() + delay, buf[..n].to_vec()))
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    });
    std::thread::spawn(move || {
        for (due, chunk) in delayed {
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            if to.write_all(&chunk).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}
