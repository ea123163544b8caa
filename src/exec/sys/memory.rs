//! What the supervisor does to keep its memory to what it uses: the C library's allocator told
//! to give large blocks back, and the pages of the store's packs let go of as steps read them.

use std::io::BufRead as _;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

/// Blocks from this size up are mapped on their own and unmapped when freed.
const MAP_FROM: libc::c_int = 128 << 10;

/// Keep the C library's allocator from holding on to what large tables leave behind. glibc raises
/// its threshold for mapping a block on its own each time such a block is freed, so after the
/// first of the supervisor's tables grew, the next ones grew inside the heap, and the room each
/// left when it grew again stayed the process's (a command reading 100,000 files for the first
/// time peaked 20 MiB higher). A fixed threshold gives every large block back when it is freed.
pub(crate) fn allocator_gives_back() {
    #[cfg(target_env = "gnu")]
    // SAFETY: `mallopt` only sets a parameter of the allocator; any value is valid.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MAP_FROM);
    }
}

/// Let go of the pages of every pack under `pack_dir` this process has mapped: they are the page
/// cache's, and read again from it when next touched. A step reads the map's fan-out trees from
/// every pack an earlier step wrote, and each of those pages would otherwise stay counted as the
/// process's for as long as the pack is mapped, a pack's worth a step. Best effort: a mapping
/// this cannot read or let go of stays as it was. Called by the one thread that opens, reads and
/// writes the store, after each large step and every few hundred objects it reads (the journal's
/// pacer), between two of gix's calls, so no mapping of the folder comes or goes meanwhile.
pub(crate) fn release_pack_pages(pack_dir: &Path) {
    // The kernel names each mapped file by its path with every link resolved.
    let (Ok(pack_dir), Ok(maps)) = (
        std::fs::canonicalize(pack_dir),
        std::fs::File::open("/proc/self/maps"),
    ) else {
        return;
    };
    let prefix = pack_dir.as_os_str().as_bytes();
    for line in std::io::BufReader::new(maps).split(b'\n') {
        let Ok(line) = line else {
            return;
        };
        if let Some((start, end)) = pack_mapping(&line, prefix) {
            // SAFETY: the range is a mapping of a pack file that this process holds read-only
            // and no one rewrites (a pack is written once, under a temporary name): dropping its
            // pages changes no byte a reader sees, each is read again from the file when touched.
            // The range is still that mapping: only this thread maps or unmaps the store's files.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
            }
        }
    }
}

/// The address range of a line of `/proc/self/maps` that maps a `.pack` file in the folder
/// `prefix`, read-only.
fn pack_mapping(line: &[u8], prefix: &[u8]) -> Option<(usize, usize)> {
    let mut fields = line.splitn(6, |b| *b == b' ');
    let range = fields.next()?;
    let perms = fields.next()?;
    let path = fields.nth(3)?.trim_ascii_start();
    let name = path.strip_prefix(prefix)?.strip_prefix(b"/")?;
    if !name.ends_with(b".pack") || name.contains(&b'/') || perms.get(1) != Some(&b'-') {
        return None;
    }
    let text = std::str::from_utf8(range).ok()?;
    let (start, end) = text.split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    (end > start).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Map `path` read-only and shared, as gix maps a pack, and touch every page of it.
    fn map_touched(path: &Path, len: usize) -> *mut libc::c_void {
        let file = std::fs::File::open(path).unwrap();
        // SAFETY: a fresh read-only mapping of a whole file of `len` bytes.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                std::os::fd::AsRawFd::as_raw_fd(&file),
                0,
            )
        };
        assert_ne!(at, libc::MAP_FAILED);
        let mut sum = 0u64;
        for page in (0..len).step_by(4096) {
            // SAFETY: within the mapping.
            sum += u64::from(unsafe { std::ptr::read_volatile(at.cast::<u8>().add(page)) });
        }
        assert_eq!(sum, (len / 4096) as u64, "each page begins with a 1");
        at
    }

    /// The resident size of the mapping of `path`, in KiB, from `/proc/self/smaps`.
    fn resident(path: &Path) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let path = path.to_str().unwrap();
        let mut lines = smaps.lines();
        while let Some(line) = lines.next() {
            if line.ends_with(path) {
                let rss = lines.find(|l| l.starts_with("Rss:")).unwrap();
                return rss.split_whitespace().nth(1).unwrap().parse().unwrap();
            }
        }
        panic!("{path} is not mapped");
    }

    #[test]
    fn the_pages_of_the_folders_packs_are_let_go_and_read_again() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap().join("pack");
        std::fs::create_dir(&dir).unwrap();
        let len = 64 * 4096;
        let page = |n: usize| {
            let mut p = vec![0u8; 4096];
            p[0] = 1;
            p[1] = n as u8;
            p
        };
        let bytes: Vec<u8> = (0..len / 4096).flat_map(page).collect();
        let (pack, idx) = (dir.join("pack-a.pack"), dir.join("pack-a.idx"));
        std::fs::write(&pack, &bytes).unwrap();
        std::fs::write(&idx, &bytes).unwrap();
        let (p, i) = (map_touched(&pack, len), map_touched(&idx, len));
        assert_eq!(resident(&pack), 256);
        // Named through a link, as a store's folder may be.
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        release_pack_pages(&link);
        assert_eq!(resident(&pack), 0, "the pack's pages were let go");
        assert_eq!(resident(&idx), 256, "an index is not a pack");
        // Read again, each byte as it was.
        // SAFETY: the mapping made above, `len` bytes long.
        let seen = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
        assert_eq!(seen, &bytes[..]);
        // SAFETY: unmapping the two mappings made above, used no more.
        unsafe {
            libc::munmap(p, len);
            libc::munmap(i, len);
        }
    }

    #[test]
    fn only_read_only_pack_mappings_of_the_folder_are_let_go() {
        let dir = b"/s/store.git/objects/pack";
        let line = |perms: &str, path: &str| {
            format!("7f0000000000-7f0000004000 {perms} 00000000 08:01 1234         {path}")
        };
        let pack = "/s/store.git/objects/pack/pack-ab.pack";
        assert_eq!(
            pack_mapping(line("r--s", pack).as_bytes(), dir),
            Some((0x7f00_0000_0000, 0x7f00_0000_4000))
        );
        assert!(pack_mapping(line("r--p", pack).as_bytes(), dir).is_some());
        // Writable, an index, another folder, a folder beneath, nothing mapped.
        assert_eq!(pack_mapping(line("rw-s", pack).as_bytes(), dir), None);
        let idx = "/s/store.git/objects/pack/pack-ab.idx";
        assert_eq!(pack_mapping(line("r--s", idx).as_bytes(), dir), None);
        let other = "/t/store.git/objects/pack/pack-ab.pack";
        assert_eq!(pack_mapping(line("r--s", other).as_bytes(), dir), None);
        let under = "/s/store.git/objects/pack/x/pack-ab.pack";
        assert_eq!(pack_mapping(line("r--s", under).as_bytes(), dir), None);
        let anon = "7f0000000000-7f0000004000 rw-p 00000000 00:00 0 ";
        assert_eq!(pack_mapping(anon.as_bytes(), dir), None);
    }
}
