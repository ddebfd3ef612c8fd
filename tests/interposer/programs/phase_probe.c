/* phase_probe: a C program using heapline.h, for the tests of the public API,
 * the live file and the launcher's convert and top.
 *
 *   phase_probe api               the API's answers: "live=L peak=P phase=Q
 *                                 mapped=M total=T total_peak=U unmapped=V",
 *                                 M and T with 8 MiB mapped anonymously and
 *                                 4 MiB of a file mapped privately, V after
 *                                 both are unmapped
 *   phase_probe phases            markers start, load, sort, done with 20 ms
 *                                 between them; "marks=4"
 *   phase_probe mark NAME [SECONDS]
 *                                 a marker named NAME (any bytes) over 2 MiB
 *                                 held, SECONDS long (default 0)
 *   phase_probe twice             the same peak reached twice: 64 KiB held
 *                                 and freed at the marker "first", again
 *                                 after the marker "second" 50 ms later
 *   phase_probe marks N           N markers 100 us apart, each a block of
 *                                 1000 bytes after it, named "marker-I-"
 *                                 and x up to 60 bytes; "marks=N"
 *   phase_probe pending THREADS   threads that keep pending bytes (below the
 *                                 batched threshold) and are still running
 *                                 at exit; "live=L peak=P"
 *   phase_probe churn MS [STAMP]  allocates and frees without pause; prints
 *                                 "ready" once running, stops after MS ms (0:
 *                                 never); with STAMP, its stamps (below) are
 *                                 kept in that file (mapped), readable after
 *                                 a kill
 *   phase_probe abort MS          churns MS ms, prints its stamps, abort()
 *   phase_probe oom LIMIT_MB      RLIMIT_AS = LIMIT_MB, then 1 MiB blocks
 *                                 (touched) until malloc fails; prints its
 *                                 stamps and aborts
 *
 * The stamps let a test check "the last sample is within one interval of the
 * last allocation" in the interposer's own clock, whatever the scheduler does
 * (the wall clock and the monotonic clock drift apart, and a process can be
 * held off a CPU between any two instructions):
 *   origin_before, origin_after   CLOCK_MONOTONIC just before and after the
 *                                 marker "origin": the marker's time in the
 *                                 report, minus these, brackets the offset
 *                                 between the two time bases
 *   last_before                   CLOCK_MONOTONIC before the last allocation
 *                                 that returned: that allocation looked at
 *                                 the clock later, so the report's last
 *                                 sample is less than one interval before it
 *   samples_at_least              with HEAPLINE_INTERVAL_MS and exact
 *                                 precision: a count of samples the report
 *                                 must hold. An allocation that starts at
 *                                 least one interval after the previous
 *                                 counted one returned sees a sample due, so
 *                                 the sampler took one in between.
 *   phase_probe hold SECONDS      holds 2 MiB after a marker "holding",
 *                                 prints "ready", sleeps
 *   phase_probe hold-abort        holds 2 MiB after a marker "holding",
 *                                 abort()
 *   phase_probe mark-hold SECONDS a marker "holding", then 2 MiB held: the
 *                                 allocation publishes right after the
 *                                 marker's sample; prints "ready", sleeps
 *   phase_probe stderr-reused FILE
 *                                 closes descriptor 2 and opens FILE there,
 *                                 writes "DATA\n" to it, then allocates and
 *                                 holds 1 MiB until the exit
 *   phase_probe peak-held-to-exit fork|alone
 *                                 4 MiB allocated and held until the exit,
 *                                 50 ms later; with fork, a fork child does
 *                                 the same first, its parent once it ended
 *   phase_probe late-peak         the marker "origin", 30 ms of sleep, then
 *                                 a new peak of 4 MiB; prints "origin_before=
 *                                 origin_after= peak_before=": the last is
 *                                 CLOCK_MONOTONIC just before that malloc
 *   phase_probe steps N MS SECONDS
 *                                 N blocks of 1 MiB, MS ms apart (0: at
 *                                 once), held: prints "ready", sleeps
 *   phase_probe dip               what a Python job does: 60 blocks of
 *                                 2 MiB, frees 40, sleeps 100 ms, 30 of
 *                                 1 MiB; prints "origin_before=
 *                                 origin_after= freed= woke=" (freed: just
 *                                 after the last free; woke: after the
 *                                 sleep, before the next allocation)
 *   phase_probe mapped SECONDS    the same, and 8 MiB mapped anonymously
 *                                 and privately, 4 MiB of a file mapped
 *                                 privately (mapped memory: 8 MiB exactly),
 *                                 all touched; the marker is "mapped"
 *   phase_probe late-map MS1 MS2 FREE
 *                                 the marker "origin", 4 MiB allocated
 *                                 (published) and with FREE 1 freed; MS1 ms
 *                                 of sleep, 64 MiB mapped anonymously, MS2
 *                                 ms of sleep, a block allocated and freed;
 *                                 prints "origin_before= origin_after=
 *                                 map_before= map_after="
 *   phase_probe map-hold SECONDS  64 MiB mapped anonymously before any
 *                                 allocation, prints "ready" and sleeps:
 *                                 no call after the mapping
 *   phase_probe map-late-hold SECONDS
 *                                 300 ms of sleep, 8 MiB allocated and held
 *                                 and 64 MiB mapped, 30 ms of sleep, a
 *                                 marker (a sample after both), "ready"
 *                                 and sleep
 *   phase_probe map-drop-hold SECONDS
 *                                 the same mapping, unmapped at once, then
 *                                 "ready" and sleep: a mapped peak that no
 *                                 sample holds
 *   phase_probe map-then-drop-hold SECONDS
 *                                 8 MiB allocated and held and 64 MiB
 *                                 mapped, a marker (a sample of both), 30 ms
 *                                 of sleep, the mapping gone, a marker,
 *                                 "ready" and sleep: a peak of heap +
 *                                 mapped that the samples hold, above what
 *                                 is held at the end
 *   phase_probe map-drop-fork SECONDS
 *                                 the same, then a fork: the child holds
 *                                 2 MiB (written), allocates 1 MiB 50 ms
 *                                 later, prints "child=PID" and sleeps; the
 *                                 parent waits for it
 *   phase_probe map-keep-fork SECONDS
 *                                 the same with the 64 MiB kept: the child
 *                                 inherits them and maps nothing itself
 *   phase_probe fifo-then-failed-exec DIR NAME EXT plain|pid|fsize
 *                                 a FIFO at DIR/NAME.EXT (plain) or at
 *                                 DIR/NAME.PID.EXT (pid: the name with this
 *                                 process's pid, the one a process takes
 *                                 when DIR/NAME.EXT is taken), or (fsize)
 *                                 a file size limit of 64 KiB, then an exec
 *                                 of itself that fails (E2BIG: the library
 *                                 gives its live file up for the exec and
 *                                 makes it again, from the names as they
 *                                 are now), 8 MiB held, 30 ms of sleep and
 *                                 a marker; prints "live file" when
 *                                 DIR/NAME.EXT.live is there, else "no live
 *                                 file"
 *   phase_probe descriptors       8 MiB held, 30 ms of sleep, a marker (a
 *                                 sample: the live file is made), then
 *                                 prints "descriptors:" and each descriptor
 *                                 the process has open, as NUMBER:KIND
 *                                 (file, pipe, socket or other) with
 *                                 ",cloexec" when it is close-on-exec
 *   phase_probe resident MIB TOUCHED_MIB SECONDS
 *                                 one block of MIB MiB, of which the first
 *                                 TOUCHED_MIB are written; 30 ms of sleep,
 *                                 then the marker "resident" (a sample, the
 *                                 resident set's interval long past, so it
 *                                 reads the resident set); prints "ready",
 *                                 sleeps SECONDS, frees the block
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heapline.h"

static void say(const char* line) {
  size_t length = strlen(line);
  if (write(STDOUT_FILENO, line, length) != (ssize_t)length) _exit(3);
}

static unsigned long long clock_ns(clockid_t clock) {
  struct timespec now;
  clock_gettime(clock, &now);
  return (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec;
}

static void sleep_ms(long ms) {
  struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&pause, &pause) != 0) {
  }
}

static void* volatile g_sink;
enum { kOriginBefore, kOriginAfter, kLastBefore, kSamplesAtLeast, kStampCount };
static volatile unsigned long long* g_stamp; /* kStampCount stamps */
static unsigned long long g_stamp_local[kStampCount];

static void mark_origin(void) {
  g_stamp[kOriginBefore] = clock_ns(CLOCK_MONOTONIC);
  heapline_mark("origin");
  g_stamp[kOriginAfter] = clock_ns(CLOCK_MONOTONIC);
}

/* Allocates and frees continuously until `ms` have passed (0: forever). */
static void churn(long ms) {
  const char* interval_ms = getenv("HEAPLINE_INTERVAL_MS");
  const unsigned long long interval = interval_ms != NULL ? strtoull(interval_ms, NULL, 10) * 1000000ull : 0;
  unsigned long long end = clock_ns(CLOCK_MONOTONIC) + (unsigned long long)ms * 1000000ull;
  unsigned long long counted_return = 0;
  static void* blocks[256];
  size_t i = 0;
  while (ms == 0 || clock_ns(CLOCK_MONOTONIC) < end) {
    size_t slot = i % 256;
    unsigned long long before = clock_ns(CLOCK_MONOTONIC);
    free(blocks[slot]);
    blocks[slot] = malloc(64 + (i * 7919) % 4000);
    unsigned long long returned = clock_ns(CLOCK_MONOTONIC);
    g_sink = blocks[slot];
    g_stamp[kLastBefore] = before;
    if (interval > 0 && (g_stamp[kSamplesAtLeast] == 0 || before >= counted_return + interval)) {
      counted_return = returned;
      g_stamp[kSamplesAtLeast] = g_stamp[kSamplesAtLeast] + 1;
    }
    ++i;
  }
}

static void print_stamps_and_abort(void) {
  char line[160];
  snprintf(line, sizeof line, "origin_before=%llu origin_after=%llu last_before=%llu samples_at_least=%llu\n",
           g_stamp[kOriginBefore], g_stamp[kOriginAfter], g_stamp[kLastBefore], g_stamp[kSamplesAtLeast]);
  say(line);
  abort();
}

#define MAPPED_ANONYMOUS (8L << 20)
#define MAPPED_FILE (4L << 20)

/* 8 MiB anonymous private (counted) and 4 MiB of `file` private (not
 * counted: file-backed), both written. */
static void map_both(FILE* file, void** anonymous, void** of_file) {
  if (file == NULL || ftruncate(fileno(file), MAPPED_FILE) != 0) _exit(4);
  *anonymous = mmap(NULL, MAPPED_ANONYMOUS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  *of_file = mmap(NULL, MAPPED_FILE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fileno(file), 0);
  if (*anonymous == MAP_FAILED || *of_file == MAP_FAILED) _exit(4);
  memset(*anonymous, 1, MAPPED_ANONYMOUS);
  memset(*of_file, 1, MAPPED_FILE);
}

static pthread_barrier_t g_barrier;

static void* hold_pending(void* argument) {
  (void)argument;
  /* 8 KiB in small blocks: below the 16 KiB threshold, so never published. */
  for (int i = 0; i < 64; ++i) g_sink = malloc(100);
  pthread_barrier_wait(&g_barrier);
  for (;;) pause();
  return NULL;
}

/* 64 MiB mapped anonymously and privately (counted); with `drop`, unmapped
   at once. 0 when a call failed. */
static int map_64_mib(int drop) {
  void* mapping = mmap(NULL, 64L << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return mapping != MAP_FAILED && (!drop || munmap(mapping, 64L << 20) == 0);
}

/* "ready", then SECONDS of sleep with no call of the library's. */
static int ready_then_hold(const char* seconds) {
  say("ready\n");
  sleep_ms(atol(seconds) * 1000);
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  char line[160];
  g_stamp = g_stamp_local;
  if (strcmp(mode, "api") == 0) {
    FILE* file = tmpfile(); /* before the phase: it allocates */
    heapline_mark("api");
    void* block = malloc(1 << 20);
    g_sink = block;
    heapline_reset_peak();
    long long live = (long long)heapline_live_bytes();
    long long peak = (long long)heapline_peak_bytes();
    void *anonymous, *of_file;
    map_both(file, &anonymous, &of_file);
    long long mapped = (long long)heapline_mapped_bytes();
    long long total = (long long)heapline_total_bytes();
    if (munmap(anonymous, MAPPED_ANONYMOUS) != 0 || munmap(of_file, MAPPED_FILE) != 0) return 4;
    long long unmapped = (long long)heapline_mapped_bytes();
    long long total_peak = (long long)heapline_total_peak_bytes();
    free(block);
    long long phase = (long long)heapline_peak_bytes();
    snprintf(line, sizeof line, "live=%lld peak=%lld phase=%lld mapped=%lld total=%lld total_peak=%lld unmapped=%lld\n",
             live, peak, phase, mapped, total, total_peak, unmapped);
    say(line);
    return 0;
  }
  if (strcmp(mode, "mark-pending") == 0) {
    /* A small block between two markers: under the thread's threshold, so
     * still its pending bytes when the second marker comes. */
    heapline_mark("before");
    g_sink = malloc(1000);
    heapline_mark("after");
    say("marked\n");
    return 0;
  }
  if (strcmp(mode, "phases") == 0) {
    static const char* const names[] = {"start", "load", "sort", "done"};
    for (int i = 0; i < 4; ++i) {
      heapline_mark(names[i]);
      g_sink = malloc((size_t)(i + 1) << 20);
      sleep_ms(20);
    }
    say("marks=4\n");
    return 0;
  }
  if (strcmp(mode, "mark") == 0 && (argc == 3 || argc == 4)) {
    void* held = malloc(2 << 20);
    memset(held, 1, 2 << 20);
    heapline_mark(argv[2]);
    sleep_ms(argc == 4 ? atol(argv[3]) * 1000 : 0);
    free(held);
    return 0;
  }
  if (strcmp(mode, "twice") == 0) {
    g_sink = malloc(64 << 10);
    heapline_mark("first");
    free((void*)g_sink);
    sleep_ms(50);
    heapline_mark("second");
    g_sink = malloc(64 << 10);
    free((void*)g_sink);
    say("twice\n");
    return 0;
  }
  if (strcmp(mode, "marks") == 0 && argc == 3) {
    const int count = atoi(argv[2]);
    for (int i = 0; i < count; ++i) {
      char name[61];
      int length = snprintf(name, sizeof name, "marker-%d-", i);
      while (length < 60) name[length++] = 'x';
      name[60] = 0;
      heapline_mark(name);
      g_sink = malloc(1000);
      struct timespec pause = {0, 100000L};
      nanosleep(&pause, NULL);
    }
    snprintf(line, sizeof line, "marks=%d\n", count);
    say(line);
    return 0;
  }
  if (strcmp(mode, "pending") == 0 && argc == 3) {
    int threads = atoi(argv[2]);
    pthread_barrier_init(&g_barrier, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; ++i) {
      pthread_t thread;
      pthread_create(&thread, NULL, hold_pending, NULL);
    }
    pthread_barrier_wait(&g_barrier);
    long long live = (long long)heapline_live_bytes();
    long long peak = (long long)heapline_peak_bytes();
    snprintf(line, sizeof line, "live=%lld peak=%lld\n", live, peak);
    say(line);
    exit(0); /* the threads are still running, their bytes pending */
  }
  if (strcmp(mode, "churn") == 0 && (argc == 3 || argc == 4)) {
    if (argc == 4) {
      int fd = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || ftruncate(fd, sizeof g_stamp_local) != 0) return 4;
      void* mapped = mmap(NULL, sizeof g_stamp_local, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (mapped == MAP_FAILED) return 4;
      g_stamp = mapped;
    }
    mark_origin();
    say("ready\n");
    churn(atol(argv[2]));
    return 0;
  }
  if (strcmp(mode, "abort") == 0 && argc == 3) {
    mark_origin();
    churn(atol(argv[2]));
    print_stamps_and_abort();
  }
  if (strcmp(mode, "oom") == 0 && argc == 3) {
    struct rlimit limit = {(rlim_t)atol(argv[2]) << 20, (rlim_t)atol(argv[2]) << 20};
    if (setrlimit(RLIMIT_AS, &limit) != 0) return 4;
    mark_origin();
    for (;;) {
      unsigned long long before = clock_ns(CLOCK_MONOTONIC);
      char* block = malloc(1 << 20);
      if (block == NULL) print_stamps_and_abort();
      g_stamp[kLastBefore] = before;
      memset(block, 1, 1 << 20);
    }
  }
  if (strcmp(mode, "hold-abort") == 0 && argc == 2) {
    char* block = malloc(2 << 20);
    memset(block, 1, 2 << 20);
    g_sink = block;
    heapline_mark("holding");
    abort();
  }
  if (strcmp(mode, "hold") == 0 && argc == 3) {
    char* block = malloc(2 << 20);
    memset(block, 1, 2 << 20);
    g_sink = block;
    heapline_mark("holding");
    say("ready\n");
    sleep_ms(atol(argv[2]) * 1000);
    return 0;
  }
  if (strcmp(mode, "mark-hold") == 0 && argc == 3) {
    heapline_mark("holding");
    char* block = malloc(2 << 20);
    memset(block, 1, 2 << 20);
    g_sink = block;
    say("ready\n");
    sleep_ms(atol(argv[2]) * 1000);
    return 0;
  }
  if (strcmp(mode, "stderr-reused") == 0 && argc == 3) {
    // A program that keeps its data on descriptor 2: closed, then a file of
    // its own opened there.
    close(2);
    if (open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) != 2) return 4;
    if (write(2, "DATA\n", 5) != 5) return 5;
    char* block = malloc(1 << 20);
    memset(block, 1, 1 << 20);
    g_sink = block;
    return 0;
  }
  if (strcmp(mode, "peak-held-to-exit") == 0 && argc == 3) {
    // argv[2] "fork": a fork child does the same first, its parent after it.
    const pid_t child = strcmp(argv[2], "fork") == 0 ? fork() : 0;
    if (child > 0 && waitpid(child, NULL, 0) != child) return 5;
    char* block = malloc(4 << 20);
    memset(block, 1, 4 << 20);
    g_sink = block;
    sleep_ms(50);
    return 0;
  }
  if (strcmp(mode, "late-peak") == 0) {
    mark_origin();
    sleep_ms(30);
    const unsigned long long peak_before = clock_ns(CLOCK_MONOTONIC);
    char* block = malloc(4 << 20);
    memset(block, 1, 4 << 20);
    g_sink = block;
    snprintf(line, sizeof line, "origin_before=%llu origin_after=%llu peak_before=%llu\n", g_stamp[kOriginBefore],
             g_stamp[kOriginAfter], peak_before);
    say(line);
    return 0;
  }
  if (strcmp(mode, "steps") == 0 && argc == 5) {
    const int count = atoi(argv[2]);
    for (int i = 0; i < count; ++i) {
      if (i > 0 && atol(argv[3]) > 0) sleep_ms(atol(argv[3]));
      g_sink = malloc(1 << 20);
    }
    say("ready\n");
    sleep_ms(atol(argv[4]) * 1000);
    return 0;
  }
  if (strcmp(mode, "dip") == 0) {
    static void* blocks[60];
    mark_origin();
    for (int i = 0; i < 60; ++i) blocks[i] = malloc(2 << 20);
    for (int i = 0; i < 40; ++i) free(blocks[i]);
    const unsigned long long freed = clock_ns(CLOCK_MONOTONIC);
    sleep_ms(100);
    const unsigned long long woke = clock_ns(CLOCK_MONOTONIC);
    for (int i = 0; i < 30; ++i) g_sink = malloc(1 << 20);
    snprintf(line, sizeof line, "origin_before=%llu origin_after=%llu freed=%llu woke=%llu\n", g_stamp[kOriginBefore],
             g_stamp[kOriginAfter], freed, woke);
    say(line);
    return 0;
  }
  if (strcmp(mode, "mapped") == 0 && argc == 3) {
    FILE* file = tmpfile();
    char* block = malloc(2 << 20);
    memset(block, 1, 2 << 20);
    g_sink = block;
    void *anonymous, *of_file;
    map_both(file, &anonymous, &of_file);
    heapline_mark("mapped");
    say("ready\n");
    sleep_ms(atol(argv[2]) * 1000);
    return 0;
  }
  if (strcmp(mode, "late-map") == 0 && argc == 5) {
    mark_origin();
    char* block = malloc(4 << 20);
    g_sink = block;
    if (atoi(argv[4]) != 0) free(block);
    sleep_ms(atol(argv[2]));
    const unsigned long long map_before = clock_ns(CLOCK_MONOTONIC);
    void* mapping = mmap(NULL, 64L << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    const unsigned long long map_after = clock_ns(CLOCK_MONOTONIC);
    if (mapping == MAP_FAILED) return 4;
    sleep_ms(atol(argv[3]));
    free(malloc(1000));
    snprintf(line, sizeof line, "origin_before=%llu origin_after=%llu map_before=%llu map_after=%llu\n",
             g_stamp[kOriginBefore], g_stamp[kOriginAfter], map_before, map_after);
    say(line);
    return 0;
  }
  if (strcmp(mode, "map-hold") == 0 && argc == 3) return map_64_mib(0) ? ready_then_hold(argv[2]) : 4;
  if (strcmp(mode, "map-late-hold") == 0 && argc == 3) {
    sleep_ms(300);
    g_sink = malloc(8 << 20);
    if (!map_64_mib(0)) return 4;
    sleep_ms(30);
    heapline_mark("mapped");
    return ready_then_hold(argv[2]);
  }
  if (strcmp(mode, "map-then-drop-hold") == 0 && argc == 3) {
    g_sink = malloc(8 << 20);
    void* mapping = mmap(NULL, 64L << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapping == MAP_FAILED) return 4;
    heapline_mark("mapped");
    sleep_ms(30);
    if (munmap(mapping, 64L << 20) != 0) return 4;
    heapline_mark("unmapped");
    return ready_then_hold(argv[2]);
  }
  if (strcmp(mode, "map-drop-hold") == 0 && argc == 3) return map_64_mib(1) ? ready_then_hold(argv[2]) : 4;
  if ((strcmp(mode, "map-drop-fork") == 0 || strcmp(mode, "map-keep-fork") == 0) && argc == 3) {
    if (!map_64_mib(strcmp(mode, "map-drop-fork") == 0)) return 4;
    const pid_t child = fork();
    if (child < 0) return 5;
    if (child == 0) {
      char* block = malloc(2 << 20);
      memset(block, 1, 2 << 20);
      g_sink = block;
      sleep_ms(50);
      g_sink = malloc(1 << 20);  /* a publish past the interval: a sample, and the live file it now merits */
      free(g_sink);
      g_sink = block;
      snprintf(line, sizeof line, "child=%d\n", (int)getpid());
      say(line);
      sleep_ms(atol(argv[2]) * 1000);
      return 0;
    }
    int status = 0;
    waitpid(child, &status, 0);
    return 0;
  }
  if (strcmp(mode, "fifo-then-failed-exec") == 0 && argc == 6) {
    char fifo[4096];
    if (strcmp(argv[5], "fsize") == 0) {
      /* No FIFO: a file size limit under a live file's size instead, so
       * that the live file cannot be made again after the exec. */
      struct rlimit limit = {64 << 10, 64 << 10};
      if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 4;
    } else {
      if (strcmp(argv[5], "plain") == 0) {
        snprintf(fifo, sizeof fifo, "%s/%s.%s", argv[2], argv[3], argv[4]);
      } else {
        snprintf(fifo, sizeof fifo, "%s/%s.%d.%s", argv[2], argv[3], (int)getpid(), argv[4]);
      }
      if (mkfifo(fifo, 0600) != 0) return 4;
    }
    /* This very program, with one argument longer than the kernel takes
     * (MAX_ARG_STRLEN, 128 KiB): the library judges that the new image
     * runs it, gives the live file up, and the exec fails (E2BIG). */
    char* too_long = malloc(200000);
    if (too_long == NULL) return 4;
    memset(too_long, 'x', 199999);
    too_long[199999] = 0;
    char* const refused_args[] = {argv[0], too_long, NULL};
    if (execv("/proc/self/exe", refused_args) == 0 || errno != E2BIG) return 6;
    free(too_long);
    g_sink = malloc(8 << 20);
    sleep_ms(30);
    heapline_mark("held");
    char live[4096];
    snprintf(live, sizeof live, "%s/%s.%s.live", argv[2], argv[3], argv[4]);
    say(access(live, F_OK) == 0 ? "live file\n" : "no live file\n");
    return 0;
  }
  if (strcmp(mode, "descriptors") == 0) {
    g_sink = malloc(8 << 20);
    sleep_ms(30);
    heapline_mark("descriptors");
    DIR* fds = opendir("/proc/self/fd");
    if (fds == NULL) return 4;
    const int own = dirfd(fds);
    char list[1024] = "descriptors:";
    for (struct dirent* entry; (entry = readdir(fds)) != NULL;) {
      if (entry->d_name[0] == '.' || atoi(entry->d_name) == own) continue;
      const int fd = atoi(entry->d_name);
      char link[64], target[256] = "";
      snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
      if (readlink(link, target, sizeof target - 1) < 0) return 5;
      const char* kind = target[0] == '/'                        ? "file"
                         : strncmp(target, "pipe:", 5) == 0   ? "pipe"
                         : strncmp(target, "socket:", 7) == 0 ? "socket"
                                                              : "other";
      char item[96];
      snprintf(item, sizeof item, " %d:%s%s", fd, kind, (fcntl(fd, F_GETFD) & FD_CLOEXEC) ? ",cloexec" : "");
      if (strlen(list) + strlen(item) + 2 > sizeof list) return 5;
      strcat(list, item);
    }
    closedir(fds);
    strcat(list, "\n");
    say(list);
    return 0;
  }
  if (strcmp(mode, "resident") == 0 && argc == 5) {
    const size_t mib = strtoul(argv[2], NULL, 10), touched = strtoul(argv[3], NULL, 10);
    if (touched > mib) return 2;
    char* block = malloc(mib << 20);
    if (block == NULL) return 4;
    for (size_t i = 0; i < (touched << 20); i += 4096) block[i] = 1;
    g_sink = block;
    sleep_ms(30);
    heapline_mark("resident");
    say("ready\n");
    sleep_ms(atol(argv[4]) * 1000);
    free(block);
    return 0;
  }
  say("usage: phase_probe api|phases|pending N|churn MS|abort MS|oom MB|hold S|hold-abort|mark-hold S|stderr-reused FILE|peak-held-to-exit HOW|late-peak|mapped S|steps N MS S|dip|late-map MS1 MS2 FREE|map-hold S|resident MIB TOUCHED S\n");
  return 2;
}
