//! BLAKE3 digests of file contents, the unit of the staleness map.
//!
//! A digest is what a read of the path returns, hashed: symlinks are followed, and large files
//! are hashed streaming so memory stays flat on the guard's hot path.

use std::fmt;
use std::io::{self, Read};

/// The BLAKE3 digest of a file's bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    /// Hash `bytes` held in memory.
    pub fn of(bytes: &[u8]) -> Self {
        Digest(*blake3::hash(bytes).as_bytes())
    }

    /// Hash everything `reader` yields.
    pub(crate) fn of_reader(mut reader: impl Read) -> io::Result<Self> {
        let mut hasher = blake3::Hasher::new();
        // 16 KiB reads fill BLAKE3's widest SIMD batch (16 chunks of 1 KiB with AVX-512). A larger
        // buffer hashes no faster and costs the guard a page fault per 4 KiB of it at start-up.
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    hasher.update(&buf[..n]);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(Digest(*hasher.finalize().as_bytes()))
    }

    /// A reader that hashes everything read through it: the digest then names exactly the bytes
    /// that went on, to the store or elsewhere, without holding them.
    pub(crate) fn tee<R: Read>(inner: R) -> Tee<R> {
        Tee {
            inner,
            hasher: blake3::Hasher::new(),
        }
    }

    /// The lowercase hex form, as `b3sum` prints it.
    pub fn to_hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }

    /// Parse the 64-character hex form.
    pub(crate) fn from_hex(s: &str) -> Option<Self> {
        blake3::Hash::from_hex(s)
            .ok()
            .map(|h| Digest(*h.as_bytes()))
    }
}

/// A reader hashing what passes through it (see [`Digest::tee`]).
pub(crate) struct Tee<R> {
    inner: R,
    hasher: blake3::Hasher,
}

impl<R> Tee<R> {
    /// The digest of every byte read so far.
    pub(crate) fn digest(&self) -> Digest {
        Digest(*self.hasher.finalize().as_bytes())
    }

    /// The reader it wraps.
    pub(crate) fn get_ref(&self) -> &R {
        &self.inner
    }
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", &self.to_hex()[..12])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_equals_in_memory_and_round_trips_hex() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let a = Digest::of(&data);
        let b = Digest::of_reader(&data[..]).unwrap();
        assert_eq!(a, b);
        assert_eq!(Digest::from_hex(&a.to_hex()), Some(a));
        assert_eq!(
            Digest::of(b"").to_hex(),
            "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
        );
        assert_eq!(Digest::from_hex("zz"), None);
        let mut tee = Digest::tee(&data[..]);
        let mut copy = Vec::new();
        io::copy(&mut tee, &mut copy).unwrap();
        assert_eq!((tee.digest(), copy), (a, data));
    }
}
