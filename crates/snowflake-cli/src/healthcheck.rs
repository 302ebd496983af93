//! `snowflake healthcheck`: asks a running service for `/healthz` and
//! `/readyz` (or the URLs given) and exits 0 only when every answer is a
//! 2xx, so that a container image built from nothing but this binary can
//! check itself.
//!
//! The request is written by hand over a `TcpStream`: a status line is all
//! a health check reads, of a plain-HTTP service on loopback, and an HTTP
//! client crate would bring a runtime and TLS into a ten-line exchange. The
//! URL is parsed by `http`'s `Uri`, which the service's stack already uses.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use crate::args::HealthcheckArgs;
use crate::failure::Failure;
use crate::output::emit;
use crate::usage::UsageError;

/// The checks a container runs: alive, and able to issue IDs.
const DEFAULT_PATHS: [&str; 2] = ["/healthz", "/readyz"];

/// Where one check goes.
struct Target {
    url: String,
    addr: SocketAddr,
    host: String,
    path: String,
}

pub fn run(args: &HealthcheckArgs) -> Result<(), Failure> {
    let given: Vec<&str> = if args.urls.is_empty() {
        DEFAULT_PATHS.to_vec()
    } else {
        args.urls.iter().map(String::as_str).collect()
    };
    let targets = given
        .iter()
        .map(|text| target(text, args.listen))
        .collect::<Result<Vec<_>, _>>()?;
    let timeout = Duration::from_secs(args.timeout);
    let mut out = String::new();
    let mut failed = 0;
    for t in &targets {
        match status(t, timeout) {
            Ok(code) if (200..300).contains(&code) => {
                out.push_str(&format!("{code} {}\n", t.url));
            }
            Ok(code) => {
                failed += 1;
                out.push_str(&format!("{code} {}\n", t.url));
            }
            Err(err) => {
                failed += 1;
                out.push_str(&format!("no answer from {}: {err}\n", t.url));
            }
        }
    }
    emit(&out)?;
    match failed {
        0 => Ok(()),
        n => Err(Failure::Runtime(format!(
            "{n} of {} checks failed",
            targets.len()
        ))),
    }
}

/// A path on the service at `listen`, or a whole `http://` URL.
fn target(text: &str, listen: SocketAddr) -> Result<Target, Failure> {
    let refuse = |allowed| Failure::Argument(UsageError::new("url", text, allowed));
    if text.starts_with('/') {
        // A service on every address answers on loopback.
        let ip = match listen.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        let addr = SocketAddr::new(ip, listen.port());
        return Ok(Target {
            url: format!("http://{addr}{text}"),
            addr,
            host: addr.to_string(),
            path: text.to_string(),
        });
    }
    const FORMS: &str =
        "give a path such as /readyz, or a URL such as http://127.0.0.1:8080/readyz";
    let uri: http::Uri = text.parse().map_err(|_| refuse(FORMS))?;
    match uri.scheme_str() {
        Some("http") => {}
        None => return Err(refuse(FORMS)),
        Some(_) => {
            return Err(refuse(
                "a health check speaks plain HTTP to its own service: give an http:// URL",
            ));
        }
    }
    let authority = uri
        .authority()
        .ok_or_else(|| refuse("the URL has no host"))?;
    let port = authority.port_u16().unwrap_or(80);
    let addr = (authority.host().trim_matches(['[', ']']), port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .ok_or_else(|| refuse("its host does not resolve to an address"))?;
    let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_string();
    Ok(Target {
        url: text.to_string(),
        addr,
        host: authority.as_str().to_string(),
        path,
    })
}

/// The status code of a GET, within `timeout` for the connection and again
/// for each read and write.
fn status(target: &Target, timeout: Duration) -> std::io::Result<u16> {
    let mut stream = TcpStream::connect_timeout(&target.addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    write!(
        stream,
        "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: snowflake-healthcheck\r\nConnection: close\r\n\r\n",
        target.path, target.host
    )?;
    // "HTTP/1.1 200" is all that is read.
    let mut head = [0u8; 12];
    let mut got = 0;
    while got < head.len() {
        match stream.read(&mut head[got..])? {
            0 => break,
            n => got += n,
        }
    }
    let line = std::str::from_utf8(&head[..got]).unwrap_or("");
    line.strip_prefix("HTTP/1.")
        .and_then(|rest| rest.get(2..5))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("not an HTTP answer: {line:?}"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_go_to_the_listen_address_on_loopback_when_unspecified() {
        let t = target("/readyz", "0.0.0.0:8080".parse().unwrap()).unwrap();
        assert_eq!(t.url, "http://127.0.0.1:8080/readyz");
        let t = target("/healthz", "[::]:9".parse().unwrap()).unwrap();
        assert_eq!(t.addr, "[::1]:9".parse().unwrap());
        let t = target("/healthz", "10.1.2.3:9".parse().unwrap()).unwrap();
        assert_eq!(t.host, "10.1.2.3:9");
        let t = target(
            "http://127.0.0.1:81/readyz?x=1",
            "0.0.0.0:1".parse().unwrap(),
        )
        .unwrap();
        assert_eq!((t.addr.port(), t.path.as_str()), (81, "/readyz?x=1"));
        let t = target("http://[::1]/", "0.0.0.0:1".parse().unwrap()).unwrap();
        assert_eq!(t.addr, "[::1]:80".parse().unwrap());
    }

    #[test]
    fn other_schemes_and_garbage_are_refused_with_the_reason() {
        let listen = "127.0.0.1:8080".parse().unwrap();
        for (text, why) in [
            ("https://127.0.0.1/readyz", "plain HTTP"),
            ("readyz", "give a path such as /readyz"),
            ("http://", "give a path such as /readyz"),
        ] {
            let Err(Failure::Argument(err)) = target(text, listen) else {
                panic!("{text} was accepted");
            };
            assert_eq!(err.field(), "url");
            assert!(err.to_string().contains(why), "{text}: {err}");
        }
    }
}
