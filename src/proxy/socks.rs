//! SOCKS5 (RFC 1928), CONNECT only, no authentication; names are resolved by the proxy.
#![forbid(unsafe_code)]

use super::record::NetProtocol;
use super::server::Ctx;
use std::net::{Ipv4Addr, Ipv6Addr};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reply codes.
const OK: u8 = 0;
const NOT_ALLOWED: u8 = 2;
const NO_COMMAND: u8 = 7;
const NO_ADDRESS_TYPE: u8 = 8;

async fn reply(c: &mut TcpStream, code: u8) -> std::io::Result<()> {
    c.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0]).await
}

/// The requested destination: a name, or an address written as text.
async fn destination(c: &mut TcpStream) -> std::io::Result<Result<(String, u16), u8>> {
    let mut head = [0u8; 4];
    c.read_exact(&mut head).await?;
    let host = match head[3] {
        1 => {
            let mut a = [0u8; 4];
            c.read_exact(&mut a).await?;
            Ipv4Addr::from(a).to_string()
        }
        3 => {
            let len = c.read_u8().await?;
            let mut name = vec![0u8; usize::from(len)];
            c.read_exact(&mut name).await?;
            String::from_utf8_lossy(&name).into_owned()
        }
        4 => {
            let mut a = [0u8; 16];
            c.read_exact(&mut a).await?;
            Ipv6Addr::from(a).to_string()
        }
        _ => return Ok(Err(NO_ADDRESS_TYPE)),
    };
    let port = c.read_u16().await?;
    if head[1] != 1 {
        return Ok(Err(NO_COMMAND));
    }
    Ok(Ok((host, port)))
}

async fn negotiate(c: &mut TcpStream) -> std::io::Result<bool> {
    let mut greet = [0u8; 2];
    c.read_exact(&mut greet).await?;
    let mut methods = vec![0u8; usize::from(greet[1])];
    c.read_exact(&mut methods).await?;
    if !methods.contains(&0) {
        c.write_all(&[5, 0xff]).await?;
        return Ok(false);
    }
    c.write_all(&[5, 0]).await?;
    Ok(true)
}

pub(super) async fn serve(mut c: TcpStream, ctx: &Ctx) {
    if !matches!(negotiate(&mut c).await, Ok(true)) {
        return;
    }
    let (host, port) = match destination(&mut c).await {
        Ok(Ok(d)) => d,
        Ok(Err(code)) => {
            let _ = reply(&mut c, code).await;
            return;
        }
        Err(_) => return,
    };
    match ctx.attempt(&host, port, NetProtocol::Socks5).await {
        Ok((up, live)) => {
            if reply(&mut c, OK).await.is_ok() {
                super::relay::relay(c, up.stream, &live, &ctx.ledger).await;
            }
        }
        Err(_) => {
            let _ = reply(&mut c, NOT_ALLOWED).await;
        }
    }
}
