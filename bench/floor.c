/* The floor of the shell guard's mechanism: a minimal seccomp user-notification supervisor.
 *
 * It runs a command under a filter that traps the same system calls as Stella's
 * (src/exec/filter.rs: every open that is not of a folder or O_PATH, creat, truncate, unlink of
 * a file, rename, link, openat2, open_by_handle_at), and for each notification does only what
 * any such supervisor must: read the path out of the caller's memory, check the notification is
 * still valid, and answer "continue". It asks for synchronous wake-up where the kernel has it
 * (Linux 6.6+), as Stella does. `bench/exec.sh` runs every workload plain, under this, and under
 * `git stella exec`, in one run.
 *
 * With --one-step it is the floor of a guard whose check and write are one step: an open for
 * writing is carried out by the supervisor itself, under an flock of the file's folder (the hold
 * every Stella writer takes), and the descriptor is put into the caller with
 * SECCOMP_IOCTL_NOTIF_ADDFD; an unlink likewise, returning its result.
 *
 * With --checked it is also the floor of a guard that checks what it lets through, doing only
 * the looks such a check needs, with none of Stella's bookkeeping: each read of a file is one
 * fstatat (its signature, in the caller's folder held open from one call to the next); before an
 * open for writing or an unlink, the file is read whole under the folder's flock (waiting for no
 * other writer: one shared flock of the file); a file opened for writing is marked (an exclusive
 * flock) and its folder watched with inotify, and each file closed after writing is looked at
 * once (fstatat), what the guard takes as the command's bytes.
 *
 * With --threads N, N threads receive notifications from the one listener, each answering its
 * own, while the first thread only waits for the command: the floor of a supervisor that is not
 * one thread serving every caller of a multi-threaded tool.
 *
 *   cc -O2 -pthread -o floor bench/floor.c && ./floor [--one-step | --checked] [--threads N] -- cmd args...
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "the floor is measured on x86_64 and aarch64"
#endif

#define LD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
/* Jump to the NOTIFY return (the last but one instruction) when nr == `n`. */
#define TRAP(n) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (n), 0, 1), RET(SECCOMP_RET_USER_NOTIF)

static struct sock_filter program[] = {
    LD(offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
    RET(SECCOMP_RET_ERRNO | ENOSYS),
    LD(offsetof(struct seccomp_data, nr)),
    TRAP(__NR_openat2),
    TRAP(__NR_truncate),
    TRAP(__NR_renameat),
    TRAP(__NR_renameat2),
    TRAP(__NR_linkat),
    TRAP(__NR_open_by_handle_at),
    TRAP(__NR_chdir),
    TRAP(__NR_fchdir),
    TRAP(__NR_chroot),
    TRAP(__NR_setns),
    TRAP(__NR_unshare),
    TRAP(__NR_pivot_root),
#ifdef __x86_64__
    TRAP(__NR_creat),
    TRAP(__NR_unlink),
    TRAP(__NR_rename),
    TRAP(__NR_link),
    /* open: flags in arg 1 (a miss skips the four instructions; the accumulator keeps nr) */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_open, 0, 4),
    LD(ARG_LO(1)),
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_DIRECTORY | O_PATH, 0, 1),
    RET(SECCOMP_RET_ALLOW),
    RET(SECCOMP_RET_USER_NOTIF),
#endif
    /* openat: flags in arg 2 */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 4),
    LD(ARG_LO(2)),
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_DIRECTORY | O_PATH, 0, 1),
    RET(SECCOMP_RET_ALLOW),
    RET(SECCOMP_RET_USER_NOTIF),
    /* unlinkat of a file */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unlinkat, 0, 4),
    LD(ARG_LO(2)),
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, AT_REMOVEDIR, 0, 1),
    RET(SECCOMP_RET_ALLOW),
    RET(SECCOMP_RET_USER_NOTIF),
    RET(SECCOMP_RET_ALLOW),
};

/* Which argument holds the path each trapped call names (the destination, for two). */
static int path_arg(int nr) {
  switch (nr) {
#ifdef __x86_64__
  case __NR_open: case __NR_creat: case __NR_unlink: return 0;
  case __NR_rename: case __NR_link: return 1;
#endif
  case __NR_truncate: return 0;
  case __NR_openat: case __NR_openat2: case __NR_unlinkat: return 1;
  case __NR_renameat: case __NR_renameat2: case __NR_linkat: return 3;
  default: return -1;
  }
}

static int serve_checked;

/* --checked: the folders watched for closes after writing, by watch descriptor (an O_PATH
 * descriptor of each, to look at a closed file), and the last one watched. */
#define WATCHES 65536
static int inotify_fd = -1, watched_dir[WATCHES], last_watch = -1;
static dev_t last_dev;
static ino_t last_ino;

/* The file `name` in `dir` read whole, as a check before changing it reads it: opened without
 * following a link or waiting on a FIFO, its size asked, waited for while another writer holds
 * it (here: only asked), read, closed. */
static void read_whole(int dir, const char *name) {
  int fd = openat(dir, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    flock(fd, LOCK_SH | LOCK_NB);
    char buf[65536];
    while (read(fd, buf, sizeof buf) > 0) {
    }
  }
  close(fd);
}

/* Watch `dir` for files closed after writing, unless it is the folder watched last. */
static void watch(int dir) {
  struct stat st;
  if (fstat(dir, &st) != 0) return;
  if (last_watch >= 0 && st.st_dev == last_dev && st.st_ino == last_ino) return;
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", dir);
  int wd = inotify_add_watch(inotify_fd, proc, IN_CLOSE_WRITE | IN_ONLYDIR);
  if (wd < 0 || wd >= WATCHES) return;
  if (watched_dir[wd] <= 0) watched_dir[wd] = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
  last_watch = wd, last_dev = st.st_dev, last_ino = st.st_ino;
}

/* Look once at each file closed after writing since the last look. */
static void closes(void) {
  char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
  ssize_t n;
  while ((n = read(inotify_fd, buf, sizeof buf)) > 0) {
    for (char *at = buf; at < buf + n;) {
      struct inotify_event *e = (struct inotify_event *)at;
      struct stat st;
      if (e->len && e->wd >= 0 && e->wd < WATCHES && watched_dir[e->wd] > 0)
        fstatat(watched_dir[e->wd], e->name, &st, AT_SYMLINK_NOFOLLOW);
      at += sizeof *e + e->len;
    }
  }
}

/* --checked: the callers' folders of reads, held open from one call to the next, by caller,
 * descriptor and folder name (a change of working folder forgets them all). */
#define FOLDERS 256
static struct {
  __u32 pid;
  int dirfd, fd;
  char name[256];
} folders[FOLDERS];

static void forget_folders(void) {
  for (int i = 0; i < FOLDERS; i++)
    if (folders[i].fd > 0) close(folders[i].fd), folders[i].fd = 0;
}

/* The look a read takes: the signature of what `path` names, from the folder it is in. */
static void look(struct seccomp_notif *req, const char *path) {
  int nr = req->data.nr, dirfd = AT_FDCWD;
  if (nr == __NR_chdir || nr == __NR_fchdir) {
    forget_folders();
    return;
  }
  if (nr == __NR_openat || nr == __NR_openat2) dirfd = req->data.args[0];
#ifdef __x86_64__
  else if (nr != __NR_open) return;
#else
  else return;
#endif
  if (path[0] != '/' && dirfd != AT_FDCWD) return;
  const char *slash = strrchr(path, '/');
  const char *name = slash ? slash + 1 : path;
  int len = slash ? (int)(slash - path) + 1 : 0;
  if (len >= (int)sizeof folders[0].name) return;
  unsigned h = req->pid * 31u + (unsigned)dirfd;
  for (int i = 0; i < len; i++) h = h * 131u + (unsigned char)path[i];
  h %= FOLDERS;
  if (folders[h].fd <= 0 || folders[h].pid != req->pid || folders[h].dirfd != dirfd ||
      strncmp(folders[h].name, path, len) != 0 || folders[h].name[len] != 0) {
    if (folders[h].fd > 0) close(folders[h].fd);
    char at[4200];
    if (path[0] == '/') snprintf(at, sizeof at, "%.*s", len, path);
    else snprintf(at, sizeof at, "/proc/%u/cwd/%.*s", req->pid, len, path);
    folders[h].fd = open(at, O_PATH | O_DIRECTORY | O_CLOEXEC);
    folders[h].pid = req->pid, folders[h].dirfd = dirfd;
    snprintf(folders[h].name, sizeof folders[h].name, "%.*s", len, path);
    if (folders[h].fd < 0) return;
  }
  struct stat st;
  fstatat(folders[h].fd, name, &st, AT_SYMLINK_NOFOLLOW);
}

/* Carry out an open for writing or an unlink for the caller, as a one-step guard must: resolve
 * from the caller's working folder, hold the file's folder, act, let go. Returns 1 when it
 * answered the notification itself. */
static int carry_out(int listener, struct seccomp_notif *req, struct seccomp_notif_resp *resp,
                     const char *path) {
  int nr = req->data.nr, dirfd = AT_FDCWD, flags = -1, unlink = 0;
  mode_t mode = 0;
  switch (nr) {
#ifdef __x86_64__
  case __NR_open: flags = req->data.args[1]; mode = req->data.args[2]; break;
  case __NR_creat: flags = O_CREAT | O_WRONLY | O_TRUNC; mode = req->data.args[1]; break;
  case __NR_unlink: unlink = 1; break;
#endif
  case __NR_openat: dirfd = req->data.args[0]; flags = req->data.args[2]; mode = req->data.args[3]; break;
  case __NR_unlinkat:
    if (req->data.args[2] & AT_REMOVEDIR) return 0;
    dirfd = req->data.args[0]; unlink = 1; break;
  default: return 0;
  }
  if (!unlink && (flags & O_ACCMODE) == O_RDONLY && !(flags & (O_TRUNC | O_CREAT))) return 0;
  char at[64];
  if (path[0] == '/') snprintf(at, sizeof at, "/");
  else if (dirfd == AT_FDCWD) snprintf(at, sizeof at, "/proc/%u/cwd", req->pid);
  else snprintf(at, sizeof at, "/proc/%u/fd/%d", req->pid, dirfd);
  const char *slash = strrchr(path, '/');
  char folder[4096];
  const char *name = path;
  if (slash) {
    snprintf(folder, sizeof folder, "%.*s", (int)(slash - path) + 1, path);
    name = slash + 1;
  } else {
    snprintf(folder, sizeof folder, ".");
  }
  int base = open(at, O_PATH | O_DIRECTORY | O_CLOEXEC);
  int dir = base < 0 ? -1 : openat(base, folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (base >= 0) close(base);
  if (dir < 0) return 0;
  flock(dir, LOCK_EX);
  if (serve_checked) read_whole(dir, name);
  int fd = -1, err = 0;
  if (unlink) err = unlinkat(dir, name, 0) == 0 ? 0 : errno;
  else {
    fd = openat(dir, name, (flags & ~O_CLOEXEC) | O_CLOEXEC, mode);
    err = fd < 0 ? errno : 0;
    if (serve_checked && fd >= 0) {
      struct stat st;
      if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        flock(fd, LOCK_EX | LOCK_NB);
        watch(dir);
      }
    }
  }
  flock(dir, LOCK_UN);
  close(dir);
  memset(resp, 0, sizeof *resp);
  resp->id = req->id;
  if (fd >= 0) {
    struct seccomp_notif_addfd add = {.id = req->id, .flags = SECCOMP_ADDFD_FLAG_SEND,
                                      .srcfd = fd, .newfd_flags = flags & O_CLOEXEC};
    ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
    close(fd);
    return 1;
  }
  resp->error = -err;
  ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
  return 1;
}

static void die(const char *what) {
  perror(what);
  exit(125);
}

static int serve_listener, serve_one_step;

/* Answer notifications until every process of the command is gone. */
static void *serve(void *unused) {
  (void)unused;
  struct seccomp_notif_sizes sizes;
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) die("sizes");
  struct seccomp_notif *req = calloc(1, sizes.seccomp_notif);
  struct seccomp_notif_resp *resp = calloc(1, sizes.seccomp_notif_resp);
  char path[4096];
  for (;;) {
    struct pollfd p[2] = {{serve_listener, POLLIN, 0}, {inotify_fd, POLLIN, 0}};
    if (poll(p, inotify_fd >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (inotify_fd >= 0 && (p[1].revents & POLLIN)) closes();
    if (!(p[0].revents & POLLIN)) {
      if (p[0].revents) break; /* every process of the command is gone */
      continue;
    }
    memset(req, 0, sizes.seccomp_notif);
    if (ioctl(serve_listener, SECCOMP_IOCTL_NOTIF_RECV, req) != 0) {
      if (errno == EINTR || errno == ENOENT) continue;
      die("recv");
    }
    int arg = path_arg(req->data.nr);
    if (arg >= 0) {
      /* Page by page, as a supervisor must: the path may end just before unmapped memory. */
      unsigned long at = req->data.args[arg];
      size_t got = 0;
      while (got < sizeof path) {
        size_t len = 4096 - at % 4096;
        if (len > sizeof path - got) len = sizeof path - got;
        struct iovec local = {path + got, len}, remote = {(void *)at, len};
        ssize_t n = process_vm_readv(req->pid, &local, 1, &remote, 1, 0);
        if (n <= 0 || memchr(path + got, 0, n)) break;
        got += n;
        at += n;
      }
      ioctl(serve_listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id);
      if (serve_one_step && carry_out(serve_listener, req, resp, path)) continue;
      if (serve_checked) look(req, path);
    }
    memset(resp, 0, sizes.seccomp_notif_resp);
    resp->id = req->id;
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    ioctl(serve_listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int first = 1, one_step = 0, checked = 0, threads = 1;
  if (argc > first && strcmp(argv[first], "--one-step") == 0) one_step = 1, first++;
  if (argc > first && strcmp(argv[first], "--checked") == 0) one_step = checked = 1, first++;
  if (argc > first + 1 && strcmp(argv[first], "--threads") == 0) {
    threads = atoi(argv[first + 1]);
    if (threads < 1) threads = 1;
    first += 2;
  }
  if (argc > first && strcmp(argv[first], "--") == 0) first++;
  if (first >= argc) {
    fprintf(stderr, "usage: floor [--one-step | --checked] [--threads N] -- command [args...]\n");
    return 125;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) die("socketpair");
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    struct sock_fprog prog = {sizeof program / sizeof program[0], program};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("prctl");
    int fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                     SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
    if (fd < 0) die("seccomp");
    char byte = 'F';
    struct iovec iov = {&byte, 1};
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } u;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                         .msg_controllen = sizeof u.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    if (sendmsg(sv[1], &msg, 0) != 1) die("sendmsg");
    close(fd);
    execvp(argv[first], argv + first);
    die(argv[first]);
  }
  close(sv[1]);
  char byte;
  struct iovec iov = {&byte, 1};
  union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } u;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
  if (recvmsg(sv[0], &msg, 0) != 1) die("recvmsg");
  int listener;
  memcpy(&listener, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof listener);
  /* Where the kernel has it; silently without it, as Stella does. */
  ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);

  serve_listener = listener;
  serve_one_step = one_step;
  serve_checked = checked;
  if (checked && (inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0) die("inotify");
  if (checked && threads > 1) {
    fprintf(stderr, "floor: --checked serves on one thread\n");
    return 125;
  }
  if (threads == 1) {
    serve(NULL);
  } else {
    for (int t = 0; t < threads; t++) {
      pthread_t thread;
      if (pthread_create(&thread, NULL, serve, NULL) != 0) die("pthread_create");
    }
  }
  int status;
  if (waitpid(child, &status, 0) < 0) die("waitpid");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
