# rustc and cargo (offline, a crate with no dependencies). WL_RUST_BIN is the toolchain's bin
# directory, found outside the sandbox by the test.
export PATH="$WL_RUST_BIN:$PATH"
mkdir -p w/rust && cd w/rust || exit 1
printf 'fn main(){println!("hello-rustc {}", 6*7);}\n' > hello.rs
rustc -O -o hello-rs hello.rs && ./hello-rs | grep -qx 'hello-rustc 42' && echo "OK rustc"
mkdir -p crate/src
printf '[package]\nname = "wlcrate"\nversion = "0.1.0"\nedition = "2021"\n' > crate/Cargo.toml
printf 'pub fn double(x: u32) -> u32 { x * 2 }\n#[cfg(test)]\nmod t { #[test] fn doubles() { assert_eq!(super::double(21), 42); } }\n' > crate/src/lib.rs
printf 'fn main(){println!("hello-cargo {}", wlcrate::double(21));}\n' > crate/src/main.rs
(cd crate && cargo build --offline -q && ./target/debug/wlcrate | grep -qx 'hello-cargo 42') && echo "OK cargo-build"
(cd crate && cargo test --offline -q 2>&1 | grep -q 'test result: ok. 1 passed') && echo "OK cargo-test"
