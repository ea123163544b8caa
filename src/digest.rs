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
    pub(crate) fn of_reader(reader: impl Read) -> io::Result<Self> {
        Self::read_whole(reader, None)
    }

    /// [`Digest::of_reader`] of a regular file `fstat` said holds `size` bytes: a read that
    /// comes short with exactly that many bytes read is taken for the end (a regular file's
    /// read comes short only there), which saves the read that would return nothing. A file
    /// that grew or shrank meanwhile is read to its end as ever.
    pub(crate) fn of_file(file: impl Read, size: u64) -> io::Result<Self> {
        Self::read_whole(file, Some(size))
    }

    fn read_whole(mut reader: impl Read, size: Option<u64>) -> io::Result<Self> {
        let mut hasher = blake3::Hasher::new();
        let mut total = 0u64;
        // 16 KiB reads fill BLAKE3's widest SIMD batch (16 chunks of 1 KiB with AVX-512). A larger
        // buffer hashes no faster and costs the guard a page fault per 4 KiB of it at start-up.
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    hasher.update(&buf[..n]);
                    total += n as u64;
                    if n < buf.len() && size == Some(total) {
                        break;
                    }
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

    /// A reader over `data` that counts its reads, as a file's would come.
    struct Counted<'a> {
        data: &'a [u8],
        reads: usize,
    }

    impl Read for Counted<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.reads += 1;
            self.data.read(buf)
        }
    }

    #[test]
    fn a_file_of_the_size_stat_said_is_read_whole_without_the_empty_read() {
        for len in [
            0usize,
            1,
            100,
            16 * 1024 - 1,
            16 * 1024,
            16 * 1024 + 1,
            50_000,
        ] {
            let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let whole = Digest::of(&data);
            let mut file = Counted {
                data: &data,
                reads: 0,
            };
            assert_eq!(Digest::of_file(&mut file, len as u64).unwrap(), whole);
            // A read that fills the buffer says nothing of the end: one more read finds it.
            let full = len.div_ceil(16 * 1024) + usize::from(len % (16 * 1024) == 0);
            assert_eq!(file.reads, full, "{len} bytes");
            // What stat said is stale (the file grew or shrank since): read to its end anyway.
            for stale in [len as u64 + 1, (len as u64).saturating_sub(1), 0, 1 << 20] {
                let mut file = Counted {
                    data: &data,
                    reads: 0,
                };
                assert_eq!(
                    Digest::of_file(&mut file, stale).unwrap(),
                    whole,
                    "{len} {stale}"
                );
            }
        }
    }
}
