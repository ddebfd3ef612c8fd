// clone_probe: a child made without glibc's fork, so without its fork
// handlers, in the ways programs do it.
//
//   clone_probe HOW END [PROGRAM]
//
// The parent holds 4 MiB in 1 KiB blocks, makes a child HOW, waits for it,
// frees a quarter of its blocks, prints "parent=PID child=PID", and kills
// itself with SIGKILL (so that its heap line is its live file). The child
// allocates 16 MiB more in 1 KiB blocks, a few milliseconds apart (so that
// it samples), then ends END.
//   HOW: clone (clone(SIGCHLD) through glibc's wrapper, a stack of its own),
//        syscall-clone (the raw system call on the parent's stack, copied),
//        _Fork (glibc's fork without handlers), syscall-fork, clone3, or
//        vfork-clone (clone(CLONE_VM | CLONE_VFORK): the child runs in the
//        parent's memory, as posix_spawn's does; it allocates nothing), or
//        posix_spawn (glibc's own, whose child runs in the parent's memory
//        until it execs PROGRAM; END must be exec)
//   END: exit, _exit, exec (PROGRAM, with no argument), kill (SIGKILL)
#define _GNU_SOURCE
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char* g_end;
static const char* g_program;
static int g_shares_memory;

static void pause_briefly(void) {
  struct timespec pause = {0, 200000};
  nanosleep(&pause, NULL);
}

static int child_main(void* unused) {
  (void)unused;
  if (!g_shares_memory) {
    for (int i = 0; i < 16 * 1024; ++i) {
      void* block = malloc(1000);
      memset(block, 1, 1000);
      if (i % 512 == 0) pause_briefly();
    }
  }
  if (strcmp(g_end, "_exit") == 0) _exit(0);
  if (strcmp(g_end, "exec") == 0) {
    char* argv[] = {(char*)g_program, NULL};
    execv(g_program, argv);
    _exit(127);
  }
  if (strcmp(g_end, "kill") == 0) kill(getpid(), SIGKILL);
  if (g_shares_memory) _exit(0);  // exit() would run the parent's handlers in its memory
  exit(0);
}

static pid_t make_child(const char* how) {
  static char stack[256 * 1024] __attribute__((aligned(16)));
  if (strcmp(how, "clone") == 0) return clone(child_main, stack + sizeof stack, SIGCHLD, NULL);
  if (strcmp(how, "posix_spawn") == 0) {
    if (strcmp(g_end, "exec") != 0) {
      fprintf(stderr, "clone_probe: posix_spawn's child only ends by exec\n");
      exit(2);
    }
    extern char** environ;
    char* argv[] = {(char*)g_program, NULL};
    pid_t child = -1;
    const int error = posix_spawn(&child, g_program, NULL, NULL, argv, environ);
    if (error != 0) {
      fprintf(stderr, "clone_probe: posix_spawn: %s\n", strerror(error));
      exit(1);
    }
    return child;
  }
  if (strcmp(how, "vfork-clone") == 0) {
    g_shares_memory = 1;
    return clone(child_main, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
  }
  pid_t child = -1;
  if (strcmp(how, "syscall-clone") == 0) {
    child = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
  } else if (strcmp(how, "_Fork") == 0) {
    child = _Fork();
  } else if (strcmp(how, "syscall-fork") == 0) {
#ifdef SYS_fork
    child = (pid_t)syscall(SYS_fork);
#else  /* arm64 has no fork system call: the kernel's fork there is clone(SIGCHLD) */
    child = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
#endif
  } else if (strcmp(how, "clone3") == 0) {
    struct clone_args args;
    memset(&args, 0, sizeof args);
    args.exit_signal = SIGCHLD;
    child = (pid_t)syscall(SYS_clone3, &args, sizeof args);
  } else {
    fprintf(stderr, "clone_probe: unknown way %s\n", how);
    exit(2);
  }
  if (child == 0) child_main(NULL);
  return child;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: clone_probe HOW END [PROGRAM]\n");
    return 2;
  }
  g_end = argv[2];
  g_program = argc > 3 ? argv[3] : "/bin/true";
  enum { kBlocks = 4 * 1024 };
  static void* held[kBlocks];
  for (int i = 0; i < kBlocks; ++i) {
    held[i] = malloc(1000);
    memset(held[i], 2, 1000);
  }
  fflush(stdout);
  pid_t child = make_child(argv[1]);
  if (child < 0) {
    perror("clone_probe");
    return 1;
  }
  int status = 0;
  while (waitpid(child, &status, __WALL) < 0) {
  }
  for (int i = 0; i < kBlocks / 4; ++i) free(held[i]);
  printf("parent=%d child=%d status=%d\n", (int)getpid(), (int)child, status);
  fflush(stdout);
  kill(getpid(), SIGKILL);
  return 1;
}
