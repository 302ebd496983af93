//! The host a request names, and whether it is a loopback name: the check
//! against DNS rebinding that the edge makes on every request to a service
//! listening on loopback.

use std::net::{IpAddr, Ipv6Addr};

use axum::body::Body;
use axum::http::{Request, header};

/// The host a request names: the authority of its target when it has one
/// (an HTTP/1 target in absolute form, `GET http://host/path`, or an HTTP/2
/// request's `:authority`), else its `Host` header. RFC 9112, section
/// 3.2.2: a target in absolute form overrides the `Host` header, so a
/// check of the header alone would let `GET http://evil.example/` with
/// `Host: 127.0.0.1` through.
pub(crate) fn host_of(request: &Request<Body>) -> Option<&str> {
    host_once(request).ok().flatten()
}

/// [`host_of`], or `Err` when the request carries more than one `Host`
/// header, which RFC 9112 (section 3.2) answers with 400: which one counts
/// is ambiguous, and two parties reading different ones is how requests
/// are smuggled. One look at the headers answers both.
pub(crate) fn host_once(request: &Request<Body>) -> Result<Option<&str>, TwoHosts> {
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let first = hosts.next();
    if hosts.next().is_some() {
        return Err(TwoHosts);
    }
    Ok(match request.uri().authority() {
        Some(authority) => Some(authority.as_str()),
        None => first.and_then(|h| h.to_str().ok()),
    })
}

/// A request with two `Host` headers.
#[derive(Debug)]
pub(crate) struct TwoHosts;

/// `host` without its port: `[::1]:8080` → `[::1]`, `localhost:80` → `localhost`.
pub(crate) fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    // By byte rather than `rsplit_once`, whose searcher costs more than
    // the rest of the host check on every request.
    host.bytes()
        .rposition(|b| b == b':')
        .map_or(host, |colon| &host[..colon])
}

/// Whether `name` (any case) is a loopback name. Compared in place rather
/// than lower-cased first: this runs on every request.
pub(crate) fn is_loopback_name(name: &str) -> bool {
    const SUFFIX: &str = ".localhost";
    let len = name.len();
    if name.eq_ignore_ascii_case("localhost")
        || (len > SUFFIX.len()
            && name.is_char_boundary(len - SUFFIX.len())
            && name[len - SUFFIX.len()..].eq_ignore_ascii_case(SUFFIX))
    {
        return true;
    }
    if let Some(inner) = name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
        return inner.parse::<Ipv6Addr>().is_ok_and(|ip| ip.is_loopback());
    }
    if name.strip_prefix("127.").is_some_and(three_octets) {
        return true;
    }
    name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether `text` is `b.c.d`, three decimal octets written as the standard
/// library writes them (no sign, no leading zero, 255 at most): the rest of
/// a `127.b.c.d` host, the usual one on loopback, checked in a few steps
/// where parsing it as an address took hundreds on every request. Whatever
/// this does not accept, `IpAddr`'s parser still judges.
fn three_octets(text: &str) -> bool {
    let mut octets = 0;
    for digits in text.as_bytes().split(|&b| b == b'.') {
        let canonical = matches!(digits.len(), 1..=3)
            && digits.iter().all(u8::is_ascii_digit)
            && (digits.len() == 1 || digits[0] != b'0')
            && digits
                .iter()
                .fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'))
                <= 255;
        if !canonical {
            return false;
        }
        octets += 1;
    }
    octets == 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_with_and_without_ports() {
        for host in [
            "localhost",
            "localhost:8080",
            "LOCALHOST:1",
            "app.LocalHost:8080",
            "127.0.0.1",
            "127.1.2.3:80",
            "[::1]",
            "[::1]:8080",
        ] {
            assert!(is_loopback_name(host_name(host)), "{host} is loopback");
        }
        for host in [
            "evil.example",
            "evil.example:8080",
            "127.0.0.1.evil.example",
            "10.0.0.1:80",
            "[::2]:80",
            "localhost.evil.example",
            "",
            // A label before ".localhost" is needed: the suffix alone is no
            // name.
            ".localhost",
            // Where the suffix would start inside a character, the name is
            // no loopback name, and looking must not panic.
            "xé123456789",
            "éé.localhos",
        ] {
            assert!(!is_loopback_name(host_name(host)), "{host} is not loopback");
        }
    }

    #[test]
    fn the_quick_octets_accept_only_what_the_address_parser_calls_loopback() {
        let octets = [
            "0", "1", "9", "10", "99", "100", "199", "255", "256", "300", "999", "00", "01", "010",
            "0255", "-1", "+1", "", " 1", "1 ", "a", "1a", "0x1",
        ];
        for b in octets {
            for c in octets {
                for d in octets {
                    let rest = format!("{b}.{c}.{d}");
                    let std = format!("127.{rest}")
                        .parse::<IpAddr>()
                        .is_ok_and(|ip| ip.is_loopback());
                    assert!(!three_octets(&rest) || std, "127.{rest}");
                    assert_eq!(is_loopback_name(&format!("127.{rest}")), std, "127.{rest}");
                }
            }
        }
        for rest in ["1.2", "1.2.3.4", "1..2", ".1.2.3", "1.2.3."] {
            assert!(!three_octets(rest), "{rest}");
        }
        assert!(three_octets("0.0.1"));
        assert!(three_octets("255.255.255"));
    }
}
