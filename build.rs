//! Links the `sbx` binary with the functions a run executes first, packed together
//! (`link/hot-functions.txt`, made by `benches/hot-functions.sh`): the kernel maps 64 KiB of a
//! file around each page fault, so packed code means fewer faults at start, less to unmap at
//! exit and a lower peak RSS. Only where the linker is known to be lld, which reads an ordering
//! file (GNU ld does not); `SBX_NO_ORDERING=1` turns it off.
use std::path::Path;
use std::process::Command;

/// rustup's toolchains link x86_64-unknown-linux-gnu with their own lld since Rust 1.90, unless
/// a linker is configured (cargo then passes it as `RUSTC_LINKER`) or rustflags choose one.
fn links_with_lld(target: &str) -> bool {
    if target != "x86_64-unknown-linux-gnu" || std::env::var_os("RUSTC_LINKER").is_some() {
        return false;
    }
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if flags
        .split('\x1f')
        .any(|f| f.contains("linker") || f.contains("fuse-ld") || f.contains("link-self-contained"))
    {
        return false;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = Command::new(rustc).args(["--print", "sysroot"]).output() else {
        return false;
    };
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Path::new(&sysroot)
        .join("lib/rustlib")
        .join(target)
        .join("bin/gcc-ld/ld.lld")
        .exists()
}

fn main() {
    println!("cargo:rerun-if-changed=link/hot-functions.txt");
    println!("cargo:rerun-if-env-changed=SBX_NO_ORDERING");
    let target = std::env::var("TARGET").unwrap_or_default();
    let Ok(dir) = std::env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    if std::env::var_os("SBX_NO_ORDERING").is_none() && links_with_lld(&target) {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={dir}/link/hot-functions.txt"
        );
        // Names the code no longer has are skipped; benches/overhead.sh reports how much of
        // the list still matches.
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
