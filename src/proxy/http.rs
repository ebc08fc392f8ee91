//! HTTP proxying: CONNECT tunnels, and plain `http://` requests in absolute form, forwarded
//! one request per connection (`Connection: close`).
#![forbid(unsafe_code)]

use super::record::NetProtocol;
use super::server::Ctx;
use std::sync::atomic::Ordering;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const MAX_HEAD: usize = 64 * 1024;

/// The request head up to its blank line, and whatever was read after it.
async fn read_head(c: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let n = c.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Some((String::from_utf8_lossy(&buf).into_owned(), rest));
        }
        if buf.len() > MAX_HEAD {
            return None;
        }
    }
}

/// `host:port` or `[v6]:port`.
fn authority(a: &str, default_port: u16) -> Option<(String, u16)> {
    if let Some(rest) = a.strip_prefix('[') {
        let (h, tail) = rest.split_once(']')?;
        let port = match tail.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None => default_port,
        };
        return Some((h.to_string(), port));
    }
    match a.rsplit_once(':') {
        Some((h, p)) => Some((h.to_string(), p.parse().ok()?)),
        None => Some((a.to_string(), default_port)),
    }
}

async fn refuse(c: &mut TcpStream, status: &str, why: &str) {
    let body = format!("sbx: {why}\n");
    let msg = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = c.write_all(msg.as_bytes()).await;
}

/// The head rewritten for the origin server: origin-form target, no proxy headers, and a
/// `Host` that names the host the proxy connected to (the command's own is dropped).
fn origin_head(method: &str, url: &url::Url, version: &str, head: &str) -> String {
    let target = &url[url::Position::BeforePath..];
    let host = &url[url::Position::BeforeHost..url::Position::AfterPort];
    let mut out = format!("{method} {target} {version}\r\nHost: {host}\r\n");
    for line in head.split("\r\n").skip(1).filter(|l| !l.is_empty()) {
        let name = line
            .split(':')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if !matches!(
            name.as_str(),
            "proxy-connection" | "proxy-authorization" | "connection" | "keep-alive" | "host"
        ) {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out.push_str("Connection: close\r\n\r\n");
    out
}

pub(super) async fn serve(mut c: TcpStream, ctx: &Ctx) {
    let Some((head, rest)) = read_head(&mut c).await else {
        return;
    };
    let first = head.split("\r\n").next().unwrap_or("");
    let mut words = first.split(' ');
    let (method, target, version) = (
        words.next().unwrap_or(""),
        words.next().unwrap_or(""),
        words.next().unwrap_or("HTTP/1.1"),
    );
    if method.eq_ignore_ascii_case("CONNECT") {
        let Some((host, port)) = authority(target, 443) else {
            return refuse(&mut c, "400 Bad Request", "bad CONNECT target").await;
        };
        match ctx.attempt(&host, port, NetProtocol::Connect).await {
            Ok((mut up, live)) => {
                let ok = b"HTTP/1.1 200 Connection established\r\n\r\n";
                if c.write_all(ok).await.is_err() || up.stream.write_all(&rest).await.is_err() {
                    return;
                }
                live.up.fetch_add(rest.len() as u64, Ordering::Relaxed);
                super::relay::relay(c, up.stream, &live, &ctx.ledger).await;
            }
            Err(r) => refuse(&mut c, "403 Forbidden", &r.0).await,
        }
        return;
    }
    let url = match url::Url::parse(target) {
        Ok(u) if u.scheme() == "http" => u,
        _ => {
            let why = "only http:// URLs are forwarded; use CONNECT for others";
            return refuse(&mut c, "400 Bad Request", why).await;
        }
    };
    let Some(body_len) = body_length(&head) else {
        let why = "a request body without Content-Length is not forwarded; use CONNECT";
        return refuse(&mut c, "411 Length Required", why).await;
    };
    let host = url.host_str().unwrap_or("").to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    match ctx.attempt(&host, port, NetProtocol::Http).await {
        Ok((mut up, live)) => {
            let head = origin_head(method, &url, version, &head);
            if up.stream.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            live.up.fetch_add(head.len() as u64, Ordering::Relaxed);
            // This request's body and nothing after it: one request per connection.
            if !ctx.ledger.spend(body_len) {
                live.limit_reached();
                return;
            }
            let Some(sent) = send_body(&mut c, &mut up.stream, &rest, body_len).await else {
                return;
            };
            live.up.fetch_add(sent, Ordering::Relaxed);
            super::relay::answer(c, up.stream, &live, &ctx.ledger).await;
        }
        Err(r) => refuse(&mut c, "403 Forbidden", &r.0).await,
    }
}

/// The body length a request head announces: `Content-Length`, or 0 without one; `None` for
/// a chunked (or otherwise encoded) body or a malformed length.
fn body_length(head: &str) -> Option<u64> {
    let mut len = 0;
    for line in head.split("\r\n").skip(1) {
        let (name, value) = line.split_once(':').unwrap_or((line, ""));
        let name = name.trim();
        if name.eq_ignore_ascii_case("transfer-encoding") {
            return None;
        }
        if name.eq_ignore_ascii_case("content-length") {
            len = value.trim().parse().ok()?;
        }
    }
    Some(len)
}

/// Send `len` body bytes to the upstream: what was read with the head first, then the rest
/// from the client. Bytes past the body (a second request) are dropped. The bytes sent, or
/// `None` when either side failed.
async fn send_body(c: &mut TcpStream, up: &mut TcpStream, rest: &[u8], len: u64) -> Option<u64> {
    let first = rest.len().min(usize::try_from(len).unwrap_or(usize::MAX));
    up.write_all(&rest[..first]).await.ok()?;
    let remaining = len - first as u64;
    let copied = tokio::io::copy(&mut (&mut *c).take(remaining), up)
        .await
        .ok()?;
    (copied == remaining).then_some(len)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn authorities_parse() {
        assert_eq!(authority("a.b:443", 1), Some(("a.b".into(), 443)));
        assert_eq!(body_length("GET / HTTP/1.1\r\nHost: x"), Some(0));
        assert_eq!(
            body_length("POST / HTTP/1.1\r\ncontent-length: 12"),
            Some(12)
        );
        assert_eq!(
            body_length("POST / HTTP/1.1\r\nTransfer-Encoding: chunked"),
            None
        );
        assert_eq!(body_length("POST / HTTP/1.1\r\nContent-Length: x"), None);
        assert_eq!(authority("a.b", 80), Some(("a.b".into(), 80)));
        assert_eq!(authority("[::1]:8080", 1), Some(("::1".into(), 8080)));
        assert_eq!(authority("a.b:x", 1), None);
    }

    #[test]
    fn the_forwarded_head_has_no_proxy_headers() {
        let url = url::Url::parse("http://a.example:8080/p?q=1").unwrap();
        let head = "GET http://a.example:8080/p?q=1 HTTP/1.1\r\nHost: other.example\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n";
        let out = origin_head("GET", &url, "HTTP/1.1", head);
        assert_eq!(
            out,
            "GET /p?q=1 HTTP/1.1\r\nHost: a.example:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
    }
}
