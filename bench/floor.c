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
 * With --threads N, N threads receive notifications from the one listener, each answering its
 * own, while the first thread only waits for the command: the floor of a supervisor that is not
 * one thread serving every caller of a multi-threaded tool.
 *
 *   cc -O2 -pthread -o floor bench/floor.c && ./floor [--one-step] [--threads N] -- cmd args...
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
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
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
  int fd = -1, err = 0;
  if (unlink) err = unlinkat(dir, name, 0) == 0 ? 0 : errno;
  else {
    fd = openat(dir, name, (flags & ~O_CLOEXEC) | O_CLOEXEC, mode);
    err = fd < 0 ? errno : 0;
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
    struct pollfd p = {serve_listener, POLLIN, 0};
    if (poll(&p, 1, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (!(p.revents & POLLIN)) break; /* every process of the command is gone */
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
    }
    memset(resp, 0, sizes.seccomp_notif_resp);
    resp->id = req->id;
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    ioctl(serve_listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int first = 1, one_step = 0, threads = 1;
  if (argc > first && strcmp(argv[first], "--one-step") == 0) one_step = 1, first++;
  if (argc > first + 1 && strcmp(argv[first], "--threads") == 0) {
    threads = atoi(argv[first + 1]);
    if (threads < 1) threads = 1;
    first += 2;
  }
  if (argc > first && strcmp(argv[first], "--") == 0) first++;
  if (first >= argc) {
    fprintf(stderr, "usage: floor [--one-step] [--threads N] -- command [args...]\n");
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
