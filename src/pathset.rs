//! Sets and maps keyed by a path's bytes, with a cheap hash. Planning looks up every denied
//! path several times (the built-in secrets list has over a hundred); `Path`'s own `Hash`
//! parses components and SipHash guards against inputs chosen to collide, which paths from
//! profiles and the local file system are not.
#![forbid(unsafe_code)]

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::hash::{BuildHasherDefault, Hasher};

/// FNV-1a, 64 bits.
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Paths (as their bytes, so compare normalised ones) to values.
pub type PathMap<V> = HashMap<OsString, V, BuildHasherDefault<Fnv>>;
/// A set of paths, as their bytes.
pub type PathSet = HashSet<OsString, BuildHasherDefault<Fnv>>;
