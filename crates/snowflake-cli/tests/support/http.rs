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

/// One HTTP/1.1 request; `None` when the peer does not answer in time.
pub fn http(addr: &str, method: &str, path: &str, body: &str) -> Option<(u16, String)> {
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
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())?;
    Some((status, body))
}
