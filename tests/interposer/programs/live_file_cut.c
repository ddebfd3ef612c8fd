/* live_file_cut: a program whose live file the tests cut (truncate) while
 * it runs, and whose own SIGBUS semantics they check with the library's
 * handler in place (cut_test.cpp).
 *
 *   live_file_cut churn GOFILE  allocates and frees without pause (a heap
 *                               of about 20 MiB moving by hundreds of KiB),
 *                               with a marker every 20 ms ("before-N") and
 *                               a mapping made and dropped with each; prints
 *                               "ready" after 100 ms and goes on until
 *                               GOFILE exists, then 300 ms
 *                               more ("after-N"), and prints "done"
 *   live_file_cut idle GOFILE [exec]
 *                               allocates and frees for 100 ms, prints
 *                               "ready", then waits for GOFILE without an
 *                               allocation (nothing of the live file is
 *                               touched meanwhile); with "exec", then an
 *                               exec of itself that fails (E2BIG: the
 *                               library judges that the new image runs it
 *                               and gives the live file up first); prints
 *                               "done"
 *   live_file_cut fault         holds 3 MiB, then reads a page of a file it
 *                               cut itself (a SIGBUS fault outside the live
 *                               file): the default action kills it
 *   live_file_cut sent          holds 3 MiB, then raise(SIGBUS): killed
 *   live_file_cut own           installs its own SIGBUS handler
 *                               (SA_SIGINFO), holds 3 MiB (a process that is
 *                               not the command makes its live file then,
 *                               HEAPLINE_ROOT_PID), then the same fault and
 *                               a raise: the handler sees both, with their
 *                               address and code ("fault=own code=2",
 *                               "sent=own code=-6"), then "done"
 *   live_file_cut ignored       SIG_IGN for SIGBUS, holds 3 MiB, raise
 *                               (ignored: "ignored"), then the fault:
 *                               killed by SIGBUS, as the kernel does
 *
 * Each of the last four prints "handler=library" when the SIGBUS
 * disposition in force once it holds 3 MiB is not the one it set (the
 * library's, which passes on what is not its own), else "handler=own".
 * alarm(20): a handler that loops on a fault ends with SIGALRM, not a hang.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "heapline.h"

static void* volatile g_sink;
static sigjmp_buf g_back;
static volatile sig_atomic_t g_seen_code = 999;
static void* volatile g_seen_address;
static void* volatile g_page;

static void say(const char* text) {
  if (write(1, text, strlen(text)) < 0) _exit(3);
}

static long now_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000L + now.tv_nsec / 1000000L;
}

/* Allocation and free for `ms` ms, or until the file `until` exists when
   given: 64 blocks of 64 KiB to 576 KiB replaced in turn (the heap moves by
   hundreds of KiB at each, so that batched precision publishes too), a
   marker PREFIX-N every 20 ms and a mapping made and dropped with each. */
static void* g_blocks[64];

static void churn(long ms, const char* until, const char* prefix) {
  const long end = now_ms() + ms;
  long next_marker = 0;
  for (unsigned n = 0, i = 0; until != NULL ? access(until, F_OK) != 0 : now_ms() < end;) {
    for (int k = 0; k < 16; ++k, ++i) {
      free(g_blocks[i % 64]);
      g_blocks[i % 64] = malloc(((size_t)(i * 7919u % 9u) + 1) << 16);
    }
    if (now_ms() >= next_marker) {
      char name[32];
      snprintf(name, sizeof name, "%s-%u", prefix, n++);
      heapline_mark(name);
      void* mapping = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (mapping != MAP_FAILED) munmap(mapping, 1 << 20);
      next_marker = now_ms() + 20;
    }
  }
}

/* A page of a file of its own, mapped shared, then the file cut to 0: a
   read of the page is a SIGBUS fault (BUS_ADRERR) outside the live file. */
static volatile char* cut_page(void) {
  char name[] = "/tmp/live_file_cut.XXXXXX";
  const int fd = mkstemp(name);
  if (fd < 0 || ftruncate(fd, 4096) != 0) exit(4);
  void* page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
  if (page == MAP_FAILED || ftruncate(fd, 0) != 0) exit(4);
  unlink(name);
  close(fd);
  g_page = page;
  return page;
}

static void on_sigbus(int signal_number, siginfo_t* info, void* context) {
  (void)signal_number;
  (void)context;
  g_seen_code = info->si_code;
  g_seen_address = info->si_addr;
  if (info->si_code > 0) siglongjmp(g_back, 1);  /* a fault: not made again */
}

/* 3 MiB held, then a few allocations 5 ms apart: samples, at which a
   process that is not the command makes its live file. */
static void allocate_3_mib(void) {
  g_sink = malloc(3 << 20);
  memset((void*)g_sink, 1, 3 << 20);
  for (int i = 0; i < 10; ++i) {
    struct timespec pause = {0, 5000000L};
    nanosleep(&pause, NULL);
    free(malloc(1 << 20));
  }
}

static void hold_3_mib(struct sigaction* set_by_program) {
  allocate_3_mib();
  struct sigaction now;
  sigaction(SIGBUS, NULL, &now);
  const int own = set_by_program != NULL ? now.sa_sigaction == set_by_program->sa_sigaction
                                         : now.sa_handler == SIG_DFL;
  say(own ? "handler=own\n" : "handler=library\n");
}

int main(int argc, char** argv) {
  alarm(20);
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "churn") == 0 && argc == 3) {
    churn(100, NULL, "before");
    say("ready\n");
    churn(30000, argv[2], "before");
    churn(300, NULL, "after");
    say("done\n");
    return 0;
  }
  if (strcmp(mode, "idle") == 0 && (argc == 3 || (argc == 4 && strcmp(argv[3], "exec") == 0))) {
    churn(100, NULL, "before");
    say("ready\n");
    while (access(argv[2], F_OK) != 0) {
      struct timespec pause = {0, 5000000L};
      nanosleep(&pause, NULL);
    }
    if (argc == 4) {
      /* One argument past MAX_ARG_STRLEN (128 KiB): refused by the kernel. */
      static char too_long[200 * 1024];
      memset(too_long, 'x', sizeof too_long - 1);
      char* const args[] = {argv[0], too_long, NULL};
      if (execv("/proc/self/exe", args) == 0 || errno != E2BIG) return 5;
    }
    say("done\n");
    return 0;
  }
  if (strcmp(mode, "fault") == 0 || strcmp(mode, "sent") == 0) {
    hold_3_mib(NULL);
    if (strcmp(mode, "sent") == 0) raise(SIGBUS);
    else g_sink = (void*)(intptr_t)*cut_page();
    say("survived\n");
    return 0;
  }
  if (strcmp(mode, "own") == 0) {
    struct sigaction own;
    memset(&own, 0, sizeof own);
    own.sa_sigaction = on_sigbus;
    own.sa_flags = SA_SIGINFO;
    sigaction(SIGBUS, &own, NULL);
    hold_3_mib(&own);
    volatile char* page = cut_page();
    if (sigsetjmp(g_back, 1) == 0) g_sink = (void*)(intptr_t)*page;
    char line[96];
    snprintf(line, sizeof line, "fault=%s code=%d\n", g_seen_address == (void*)page ? "own" : "other", (int)g_seen_code);
    say(line);
    g_seen_address = NULL;
    raise(SIGBUS);
    snprintf(line, sizeof line, "sent=%s code=%d\n", g_seen_code < 0 ? "own" : "other", (int)g_seen_code);
    say(line);
    say("done\n");
    return 0;
  }
  if (strcmp(mode, "ignored") == 0) {
    signal(SIGBUS, SIG_IGN);
    allocate_3_mib();
    struct sigaction now;
    sigaction(SIGBUS, NULL, &now);
    say(now.sa_handler == SIG_IGN ? "handler=own\n" : "handler=library\n");
    raise(SIGBUS);
    say("ignored\n");
    g_sink = (void*)(intptr_t)*cut_page();
    say("survived\n");
    return 0;
  }
  return 2;
}
