//! Sets and maps keyed by a path's bytes, with a cheap hash. Planning looks up every denied
//! path several times (the built-in secrets list has over a hundred); `Path`'s own `Hash`
//! parses components and SipHash guards against inputs chosen to collide, which paths from
//! profiles and the local file system are not.
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::ffi::OsString;
use std::hash::{BuildHasherDefault, Hasher};

/// The Fx hash (rustc's): one rotate, xor and multiply per eight bytes.
#[derive(Default)]
pub struct WordHash(u64);

impl WordHash {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for WordHash {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            self.add(u64::from_le_bytes(b));
        }
        let rest = words.remainder();
        let mut b = [0u8; 8];
        b[..rest.len()].copy_from_slice(rest);
        // The length keeps `a` and `a\0` apart.
        self.add(u64::from_le_bytes(b) ^ ((rest.len() as u64) << 59));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Paths (as their bytes, so compare normalised ones) to values.
pub type PathMap<V> = HashMap<OsString, V, BuildHasherDefault<WordHash>>;
