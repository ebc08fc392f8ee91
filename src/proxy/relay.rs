//! Relaying bytes between the command and an upstream, counted against the run's budget.
#![forbid(unsafe_code)]

use super::record::{Ledger, Live};
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

const BUF: usize = 64 * 1024;

/// Copy until end of input, an error, or the run's byte budget is spent (the chunk that
/// would overrun it is not relayed); then close the writing side.
async fn pump<R, W>(mut r: R, mut w: W, count: &AtomicU64, live: &Live, ledger: &Ledger)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; BUF];
    loop {
        let n = match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if !ledger.spend(n as u64) {
            live.limit_reached();
            break;
        }
        if w.write_all(&buf[..n]).await.is_err() {
            break;
        }
        count.fetch_add(n as u64, Ordering::Relaxed);
    }
    let _ = w.shutdown().await;
}

/// Relay the upstream's answer to the client, and nothing the other way: a forwarded request
/// is sent whole before, and later requests on the same connection are not relayed.
pub(super) async fn answer(client: TcpStream, upstream: TcpStream, live: &Live, ledger: &Ledger) {
    let (_cr, cw) = client.into_split();
    let (ur, _uw) = upstream.into_split();
    pump(ur, cw, &live.down, live, ledger).await;
}

/// Relay both ways until both sides are done.
pub(super) async fn relay(client: TcpStream, upstream: TcpStream, live: &Live, ledger: &Ledger) {
    let (cr, cw) = client.into_split();
    let (ur, uw) = upstream.into_split();
    tokio::join!(
        pump(cr, uw, &live.up, live, ledger),
        pump(ur, cw, &live.down, live, ledger)
    );
}
