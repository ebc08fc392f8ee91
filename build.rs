//! Links the `sbx` binary with the functions a run executes first, packed together
//! (`link/hot-functions.txt`, made by `benches/hot-functions.sh`): the kernel maps 64 KiB of a
//! file around each page fault, so packed code means fewer faults at start, less to unmap at
//! exit and a lower peak RSS. Only for the target whose default linker (lld, since Rust 1.90)
//! reads an ordering file; `SBX_NO_ORDERING=1` turns it off.
fn main() {
    println!("cargo:rerun-if-changed=link/hot-functions.txt");
    println!("cargo:rerun-if-env-changed=SBX_NO_ORDERING");
    let target = std::env::var("TARGET").unwrap_or_default();
    let Ok(dir) = std::env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    if target == "x86_64-unknown-linux-gnu" && std::env::var_os("SBX_NO_ORDERING").is_none() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={dir}/link/hot-functions.txt"
        );
        // Names the code no longer has are skipped; tests/hot_functions.rs watches for drift.
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
