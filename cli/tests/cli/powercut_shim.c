/* A power-cut recorder for tests/cli/powercut.rs, loaded with LD_PRELOAD into git-stella and the
 * git processes it starts.
 *
 * Its constructor installs a seccomp filter that traps every system call that can change a file
 * or a folder (unless its sixth argument is MAGIC, which is how the handler below makes the call
 * itself), and a SIGSYS handler that:
 *   - numbers each such call that touches PC_ROOT with one counter shared by every process of the
 *     run (a MAP_SHARED file), and logs it to PC_LOG/ops;
 *   - ends the process (exit_group) when the counter reaches PC_CRASH_AT, and every process at
 *     every later call: the machine lost power there, and nothing after it happens;
 *   - after an fsync/fdatasync, copies what became durable: a file's bytes, or a folder's
 *     entries (name, inode, type), to PC_LOG/snap/<number>;
 *   - before an unlink, rmdir or rename over an existing name, logs the inode it frees, so a
 *     later file given the same inode number is not mistaken for it.
 * A plain LD_PRELOAD of libc's functions would miss most of Stella's renames: rustix (through
 * the tempfile crate) makes them as raw system calls. seccomp sees every call, whoever makes it.
 *
 * x86_64 Linux only; every call the handler makes is a raw system call (async-signal-safe). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <ucontext.h>

#define MAGIC 0x5ca1ab1eL
#define O_TMPFILE_BIT 020000000

static long raw(long n, long a, long b, long c, long d, long e) {
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = MAGIC;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

static char root[4096];
static size_t root_len;
static char logdir[4096];
static int log_fd = -1;
static volatile int64_t *counter;
static int64_t crash_at;

static size_t slen(const char *s) { size_t n = 0; while (s[n]) n++; return n; }

static void scat(char *dst, size_t cap, const char *src) {
    size_t n = slen(dst), i = 0;
    while (src[i] && n + 1 < cap) dst[n++] = src[i++];
    dst[n] = 0;
}

static void num(char *dst, size_t cap, long v) {
    char tmp[32];
    int i = 0, neg = v < 0;
    unsigned long u = neg ? -(unsigned long)v : (unsigned long)v;
    do { tmp[i++] = '0' + u % 10; u /= 10; } while (u);
    if (neg) tmp[i++] = '-';
    char out[32];
    int j = 0;
    while (i) out[j++] = tmp[--i];
    out[j] = 0;
    scat(dst, cap, out);
}

/* The path of descriptor `fd`, or of `path` relative to descriptor `dirfd`. */
static int fd_path(long fd, char *out, size_t cap) {
    char link[64] = "/proc/self/fd/";
    num(link, sizeof link, fd);
    long n = raw(SYS_readlink, (long)link, (long)out, cap - 1, 0, 0);
    if (n < 0) { out[0] = 0; return -1; }
    out[n] = 0;
    return 0;
}

static void at_path(long dirfd, const char *path, char *out, size_t cap) {
    out[0] = 0;
    if (!path) return;
    if (path[0] == '/') { scat(out, cap, path); return; }
    if (dirfd == AT_FDCWD) {
        if (raw(SYS_getcwd, (long)out, cap, 0, 0, 0) < 0) out[0] = 0;
    } else {
        fd_path(dirfd, out, cap);
    }
    scat(out, cap, "/");
    scat(out, cap, path);
}

static int under_root(const char *p) {
    return root_len && strncmp(p, root, root_len) == 0 && (p[root_len] == '/' || p[root_len] == 0);
}

static void log_line(const char *a, const char *b, const char *c, const char *d, const char *e) {
    char line[9000] = "";
    const char *parts[] = {a, b, c, d, e};
    for (int i = 0; i < 5; i++) {
        if (!parts[i]) continue;
        if (i) scat(line, sizeof line, "\t");
        scat(line, sizeof line, parts[i]);
    }
    scat(line, sizeof line, "\n");
    raw(SYS_write, log_fd, (long)line, slen(line), 0, 0);
}

/* Log the inode `path` frees when it goes (its last link), before the call that removes it. */
static void log_free(const char *seq, const char *path) {
    struct stat st;
    if (raw(SYS_newfstatat, AT_FDCWD, (long)path, (long)&st, AT_SYMLINK_NOFOLLOW, 0) < 0) return;
    if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) return;
    char ino[32] = "";
    num(ino, sizeof ino, (long)st.st_ino);
    log_line(seq, "free", ino, path, 0);
}

/* Copy what an fsync of `fd` made durable to PC_LOG/snap/<seq>. */
static void snapshot(const char *seq, long fd, const char *path) {
    struct stat st;
    if (raw(SYS_fstat, fd, (long)&st, 0, 0, 0) < 0) return;
    char out[4200] = "";
    scat(out, sizeof out, logdir);
    scat(out, sizeof out, "/snap/");
    scat(out, sizeof out, seq);
    long o = raw(SYS_openat, AT_FDCWD, (long)out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600, 0);
    if (o < 0) return;
    char ino[32] = "";
    num(ino, sizeof ino, (long)st.st_ino);
    /* Read through /proc: `fd` may be open for writing only. */
    char again[64] = "/proc/self/fd/";
    num(again, sizeof again, fd);
    if (S_ISDIR(st.st_mode)) {
        long d = raw(SYS_openat, AT_FDCWD, (long)again, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, 0);
        char buf[8192];
        long n;
        while (d >= 0 && (n = raw(SYS_getdents64, d, (long)buf, sizeof buf, 0, 0)) > 0) {
            for (long off = 0; off < n;) {
                struct { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; } *e = (void *)(buf + off);
                if (strcmp(e->name, ".") && strcmp(e->name, "..")) {
                    char line[600] = "";
                    num(line, sizeof line, (long)e->ino);
                    scat(line, sizeof line, "\t");
                    scat(line, sizeof line, e->type == DT_DIR ? "d" : "f");
                    scat(line, sizeof line, "\t");
                    scat(line, sizeof line, e->name);
                    scat(line, sizeof line, "\n");
                    raw(SYS_write, o, (long)line, slen(line), 0, 0);
                }
                off += e->reclen;
            }
        }
        if (d >= 0) raw(SYS_close, d, 0, 0, 0, 0);
        log_line(seq, "syncdir", ino, path, 0);
    } else {
        char buf[16384];
        long n, r = raw(SYS_openat, AT_FDCWD, (long)again, O_RDONLY | O_CLOEXEC, 0, 0);
        while (r >= 0 && (n = raw(SYS_read, r, (long)buf, sizeof buf, 0, 0)) > 0)
            raw(SYS_write, o, (long)buf, n, 0, 0);
        if (r >= 0) raw(SYS_close, r, 0, 0, 0, 0);
        log_line(seq, "syncfile", ino, path, 0);
    }
    raw(SYS_close, o, 0, 0, 0, 0);
}

static void handler(int sig, siginfo_t *si, void *ctx) {
    (void)sig;
    ucontext_t *uc = ctx;
    greg_t *g = uc->uc_mcontext.gregs;
    long nr = si->si_syscall;
    long a0 = g[REG_RDI], a1 = g[REG_RSI], a2 = g[REG_RDX], a3 = g[REG_R10], a4 = g[REG_R8];
    int saved = errno;
    char p1[4200], p2[4200];
    p1[0] = p2[0] = 0;
    const char *name = "?";
    int frees_dest = 0, frees_src = 0;
    switch (nr) {
    case SYS_write: case SYS_pwrite64: case SYS_writev: case SYS_pwritev: case SYS_pwritev2:
    case SYS_fsync: case SYS_fdatasync: case SYS_ftruncate: case SYS_fallocate:
    case SYS_sync_file_range:
        name = nr == SYS_fsync ? "fsync" : nr == SYS_fdatasync ? "fdatasync" : "write";
        fd_path(a0, p1, sizeof p1);
        break;
    case SYS_sendfile: name = "write"; fd_path(a0, p1, sizeof p1); break;
    case SYS_copy_file_range: name = "write"; fd_path(a2, p1, sizeof p1); break;
    case SYS_open: case SYS_creat: name = "open"; at_path(AT_FDCWD, (char *)a0, p1, sizeof p1); break;
    case SYS_openat: case SYS_openat2: name = "open"; at_path(a0, (char *)a1, p1, sizeof p1); break;
    case SYS_truncate: name = "write"; at_path(AT_FDCWD, (char *)a0, p1, sizeof p1); break;
    case SYS_mkdir: name = "mkdir"; at_path(AT_FDCWD, (char *)a0, p1, sizeof p1); break;
    case SYS_mkdirat: name = "mkdir"; at_path(a0, (char *)a1, p1, sizeof p1); break;
    case SYS_unlink: case SYS_rmdir: name = "unlink"; frees_src = 1; at_path(AT_FDCWD, (char *)a0, p1, sizeof p1); break;
    case SYS_unlinkat: name = "unlink"; frees_src = 1; at_path(a0, (char *)a1, p1, sizeof p1); break;
    case SYS_rename: name = "rename"; frees_dest = 1;
        at_path(AT_FDCWD, (char *)a0, p1, sizeof p1); at_path(AT_FDCWD, (char *)a1, p2, sizeof p2); break;
    case SYS_renameat: case SYS_renameat2: name = "rename"; frees_dest = !(nr == SYS_renameat2 && (a4 & 2 /* EXCHANGE */));
        at_path(a0, (char *)a1, p1, sizeof p1); at_path(a2, (char *)a3, p2, sizeof p2); break;
    case SYS_link: name = "link"; at_path(AT_FDCWD, (char *)a0, p1, sizeof p1); at_path(AT_FDCWD, (char *)a1, p2, sizeof p2); break;
    case SYS_linkat: name = "link"; at_path(a0, (char *)a1, p1, sizeof p1); at_path(a2, (char *)a3, p2, sizeof p2); break;
    case SYS_symlink: name = "symlink"; at_path(AT_FDCWD, (char *)a1, p1, sizeof p1); break;
    case SYS_symlinkat: name = "symlink"; at_path(a1, (char *)a2, p1, sizeof p1); break;
    }
    int relevant = under_root(p1) || under_root(p2);
    char seq[32] = "";
    if (relevant) {
        int64_t n = __atomic_add_fetch(counter, 1, __ATOMIC_SEQ_CST);
        num(seq, sizeof seq, (long)n);
        if (crash_at > 0 && n >= crash_at) raw(SYS_exit_group, 137, 0, 0, 0, 0);
        if (frees_src) log_free(seq, p1);
        if (frees_dest && p2[0]) log_free(seq, p2);
    } else if (crash_at > 0 && *counter >= crash_at) {
        /* Power is off: nothing more happens anywhere. */
        raw(SYS_exit_group, 137, 0, 0, 0, 0);
    }
    long ret = raw(nr, a0, a1, a2, a3, a4);
    if (relevant) {
        char r[32] = "";
        num(r, sizeof r, ret);
        log_line(seq, name, r, p1, p2[0] ? p2 : 0);
        if ((nr == SYS_fsync || nr == SYS_fdatasync) && ret == 0) snapshot(seq, a0, p1);
    }
    g[REG_RAX] = ret;
    errno = saved;
}

static const char *env(char **envp, const char *key) {
    size_t k = slen(key);
    for (; envp && *envp; envp++)
        if (!strncmp(*envp, key, k) && (*envp)[k] == '=') return *envp + k + 1;
    return 0;
}

static long parse(const char *s) {
    long v = 0;
    while (s && *s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
    return v;
}

__attribute__((constructor)) static void init(int argc, char **argv, char **envp) {
    (void)argc; (void)argv;
    const char *r = env(envp, "PC_ROOT"), *l = env(envp, "PC_LOG");
    if (!r || !l) return;
    scat(root, sizeof root, r);
    root_len = slen(root);
    scat(logdir, sizeof logdir, l);
    crash_at = parse(env(envp, "PC_CRASH_AT"));
    char path[4200] = "";
    scat(path, sizeof path, logdir);
    scat(path, sizeof path, "/counter");
    long c = raw(SYS_openat, AT_FDCWD, (long)path, O_RDWR | O_CLOEXEC, 0, 0);
    if (c < 0) raw(SYS_exit_group, 121, 0, 0, 0, 0);
    /* libc's mmap: raw() would pass MAGIC as the offset. */
    counter = mmap(0, 8, PROT_READ | PROT_WRITE, MAP_SHARED, c, 0);
    if (counter == MAP_FAILED) raw(SYS_exit_group, 121, 0, 0, 0, 0);
    path[0] = 0;
    scat(path, sizeof path, logdir);
    scat(path, sizeof path, "/ops");
    log_fd = raw(SYS_openat, AT_FDCWD, (long)path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600, 0);
    /* Keep the descriptor out of the way of programs that expect low numbers free. */
    long high = raw(SYS_fcntl, log_fd, F_DUPFD_CLOEXEC, 900, 0, 0);
    if (high >= 0) { raw(SYS_close, log_fd, 0, 0, 0, 0); log_fd = high; }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSYS, &sa, 0);

    enum { ARG5 = offsetof(struct seccomp_data, args) + 5 * 8,
           FLAGS1 = offsetof(struct seccomp_data, args) + 1 * 8,
           FLAGS2 = offsetof(struct seccomp_data, args) + 2 * 8 };
    const unsigned create = O_CREAT | O_TRUNC | O_TMPFILE_BIT;
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* The handler's own calls carry MAGIC: let them through. */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG5),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MAGIC, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        /* open(path, flags) and openat(dirfd, path, flags): only when they create or truncate. */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, FLAGS1),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, create, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, FLAGS2),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, create, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#define T(n) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (n), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP)
        T(SYS_write), T(SYS_pwrite64), T(SYS_writev), T(SYS_pwritev), T(SYS_pwritev2),
        T(SYS_fsync), T(SYS_fdatasync), T(SYS_ftruncate), T(SYS_fallocate), T(SYS_sync_file_range),
        T(SYS_sendfile), T(SYS_copy_file_range), T(SYS_creat), T(SYS_openat2), T(SYS_truncate),
        T(SYS_mkdir), T(SYS_mkdirat), T(SYS_unlink), T(SYS_rmdir), T(SYS_unlinkat),
        T(SYS_rename), T(SYS_renameat), T(SYS_renameat2), T(SYS_link), T(SYS_linkat),
        T(SYS_symlink), T(SYS_symlinkat),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
        raw(SYS_exit_group, 122, 0, 0, 0, 0);
}
