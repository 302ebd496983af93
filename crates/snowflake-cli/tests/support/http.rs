//! Plain HTTP/1.1 over a real socket, and free ports for etcd, which cannot
//! be handed a bound socket.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A loopback port nobody listens on right now: for etcd, which cannot be
/// handed a bound socket (the cluster tests retry on a port taken since).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An HTTP/1.1 answer: the status, the header block as sent, the body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Answer {
    /// The value of header `name` (any case), if the answer has it.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }
}

/// One HTTP/1.1 request; `None` when the peer does not answer in time.
pub fn http(addr: &str, method: &str, path: &str, body: &str) -> Option<(u16, String)> {
    exchange(addr, method, path, body).map(|a| (a.status, a.body))
}

/// One HTTP/1.1 request, the whole answer; `None` when the peer does not
/// answer in time.
pub fn exchange(addr: &str, method: &str, path: &str, body: &str) -> Option<Answer> {
    let mut stream =
        TcpStream::connect_timeout(&addr.parse().ok()?, Duration::from_secs(1)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    stream
        .set_write_timeout(Some(Duration::from_secs(2)))
        .ok()?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let status = response.get(9..12)?.parse().ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    Some(Answer {
        status,
        head: head.to_string(),
        body: body.to_string(),
    })
}
