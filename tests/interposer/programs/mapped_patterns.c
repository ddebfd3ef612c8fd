/* mapped_patterns: memory-mapping patterns whose effect on heapline's mapped
 * series is known, for checking it from the outside.
 *
 *   mapped_patterns kinds     every kind of mapping, partial unmaps, remaps
 *   mapped_patterns threads N each of N threads maps and unmaps, keeps one
 *   mapped_patterns fork      maps, forks; the child maps more
 *   mapped_patterns fork-drop maps 4 MiB, forks; the child unmaps them and
 *                             prints "child_total_peak=N", the library's
 *                             heapline_total_peak_bytes() (0 without it)
 *   mapped_patterns errno     the calls' results and errno, to compare with
 *                             and without the library
 *   mapped_patterns churn N   N times mmap and munmap 64 KiB: the cost per
 *                             call pair, counted with callgrind
 *
 * Each mode but errno and fork-drop prints "mapped_peak=P mapped_final=F" (bytes): what the
 * process holds in anonymous private mappings it made itself, at the peak and
 * at exit. Nothing else in the process maps anonymous private memory through
 * the exported mmap (glibc's malloc uses its internal one), so with heapline
 * the report's mapped figures are exactly these.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heapline.h"

#define MiB (1024L * 1024L)

static long g_live, g_peak;

static void expect(long delta) {
  g_live += delta;
  if (g_live > g_peak) g_peak = g_live;
}

static void* must_map(void* address, size_t length, int prot, int flags, int fd) {
  void* p = mmap(address, length, prot, flags, fd, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(3);
  }
  return p;
}

static void must(int ok, const char* what) {
  if (!ok) {
    perror(what);
    exit(3);
  }
}

static void print_figures(void) {
  char line[128];
  int length = snprintf(line, sizeof line, "mapped_peak=%ld mapped_final=%ld\n", g_peak, g_live);
  if (write(STDOUT_FILENO, line, (size_t)length) != length) exit(3);
}

static int memory_file(long bytes) {
  int fd = memfd_create("mapped_patterns", 0);
  must(fd >= 0 && ftruncate(fd, bytes) == 0, "memfd");
  return fd;
}

static int kinds(void) {
  const int rw = PROT_READ | PROT_WRITE;
  const int anon = MAP_PRIVATE | MAP_ANONYMOUS;
  int fd = memory_file(4 * MiB);

  char* a = must_map(NULL, 8 * MiB, rw, anon, -1);
  expect(8 * MiB);
  memset(a, 1, 8 * MiB);
  /* Not counted: a file (private or shared), shared anonymous memory, a
   * PROT_NONE reservation, and glibc's own large block (heap already). */
  void* file = must_map(NULL, 4 * MiB, rw, MAP_PRIVATE, fd);
  void* file_shared = must_map(NULL, 4 * MiB, rw, MAP_SHARED, fd);
  void* shared = must_map(NULL, 4 * MiB, rw, MAP_SHARED | MAP_ANONYMOUS, -1);
  void* reserved = must_map(NULL, 16 * MiB, PROT_NONE, anon, -1);
  char* big = malloc(32 * MiB);
  must(big != NULL, "malloc");
  memset(big, 2, 32 * MiB);
  /* mmap64 is a symbol of its own. */
  void* small = mmap64(NULL, 1 * MiB + 1, rw, anon, -1, 0);  /* counted as whole pages */
  must(small != MAP_FAILED, "mmap64");
  expect(1 * MiB + 4096);

  /* A hole in the middle: [a, a+2) and [a+4, a+8) stay. */
  must(munmap(a + 2 * MiB, 2 * MiB) == 0, "munmap middle");
  expect(-2 * MiB);
  /* Grow the first part in place into the hole, shrink the second. */
  must(mremap(a, 2 * MiB, 3 * MiB, 0) == a, "mremap grow");
  expect(1 * MiB);
  must(mremap(a + 4 * MiB, 4 * MiB, 1 * MiB, 0) == a + 4 * MiB, "mremap shrink");
  expect(-3 * MiB);
  /* Move and grow the mmap64 block: the peak. */
  char* moved = mremap(small, 1 * MiB + 4096, 12 * MiB, MREMAP_MAYMOVE);
  must(moved != MAP_FAILED, "mremap move");
  expect(12 * MiB - (1 * MiB + 4096));
  memset(moved, 3, 12 * MiB);
  /* A file mapped over a counted MiB, then anonymous memory over the next. */
  must(mmap(a, 1 * MiB, rw, MAP_PRIVATE | MAP_FIXED, fd, 0) == a, "mmap fixed file");
  expect(-1 * MiB);
  must(mmap(a + 1 * MiB, 1 * MiB, rw, anon | MAP_FIXED, -1, 0) == a + 1 * MiB, "mmap fixed anon");
  /* Unmapping what was never counted changes nothing. */
  must(munmap(file, 4 * MiB) == 0 && munmap(file_shared, 4 * MiB) == 0, "munmap file");
  must(munmap(shared, 4 * MiB) == 0 && munmap(reserved, 16 * MiB) == 0, "munmap others");
  free(big);
  /* One call across counted ranges, a file range and unmapped holes. */
  must(munmap(a, 8 * MiB) == 0, "munmap all of a");
  expect(-(2 * MiB + 1 * MiB));
  close(fd);
  print_figures();
  return 0;
}

struct ThreadWork {
  int index;
  long kept;
};

static void* thread_body(void* argument) {
  struct ThreadWork* work = argument;
  const int rw = PROT_READ | PROT_WRITE;
  for (int i = 0; i < 200; ++i) {
    char* p = must_map(NULL, 256 * 1024, rw, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    p[0] = 1;
    must(munmap(p + 64 * 1024, 64 * 1024) == 0, "munmap part");  /* split */
    must(munmap(p, 64 * 1024) == 0 && munmap(p + 128 * 1024, 128 * 1024) == 0, "munmap rest");
  }
  char* kept = must_map(NULL, (size_t)(work->index + 1) * 65536, rw, MAP_PRIVATE | MAP_ANONYMOUS, -1);
  kept[0] = 1;
  work->kept = (work->index + 1) * 65536L;
  return NULL;
}

static int threads(int count) {
  pthread_t ids[64];
  struct ThreadWork work[64];
  if (count < 1 || count > 64) return 2;
  for (int t = 0; t < count; ++t) {
    work[t].index = t;
    pthread_create(&ids[t], NULL, thread_body, &work[t]);
  }
  for (int t = 0; t < count; ++t) pthread_join(ids[t], NULL);
  /* The peak depends on the interleaving: only the final figure is known. */
  for (int t = 0; t < count; ++t) expect(work[t].kept);
  g_peak = -1;
  print_figures();
  return 0;
}

static int fork_child(void) {
  const int rw = PROT_READ | PROT_WRITE;
  void* held = must_map(NULL, 4 * MiB, rw, MAP_PRIVATE | MAP_ANONYMOUS, -1);
  expect(4 * MiB);
  pid_t child = fork();
  if (child == 0) {
    void* more = must_map(NULL, 1 * MiB, rw, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    (void)more;
    expect(1 * MiB);
    printf("child ");
    fflush(stdout);
    print_figures();
    exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  must(munmap(held, 1 * MiB) == 0, "munmap");
  expect(-1 * MiB);
  char line[64];
  int length = snprintf(line, sizeof line, "parent=%d child=%d\n", (int)getpid(), (int)child);
  if (write(STDOUT_FILENO, line, (size_t)length) != length) return 3;
  print_figures();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static int fork_drop(void) {
  void* held = must_map(NULL, 4 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
  pid_t child = fork();
  if (child == 0) {
    must(munmap(held, 4 * MiB) == 0, "munmap");
    printf("child_total_peak=%lld\n", (long long)heapline_total_peak_bytes());
    fflush(stdout);
    exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static const char* name_of(int error) {
  switch (error) {
    case 0: return "0";
    case EBADF: return "EBADF";
    case EINVAL: return "EINVAL";
    case ENOMEM: return "ENOMEM";
    case EFAULT: return "EFAULT";
    case 1234: return "kept";
    default: return "other";
  }
}

static void outcome(const char* call, int failed) {
  printf("%s %s errno=%s\n", call, failed ? "fails" : "works", name_of(errno));
  errno = 1234;
}

static int errno_corners(void) {
  const int rw = PROT_READ | PROT_WRITE;
  errno = 1234;
  void* p = mmap(NULL, 65536, rw, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  outcome("mmap anonymous", p == MAP_FAILED);
  outcome("mmap bad fd", mmap(NULL, 65536, rw, MAP_PRIVATE, 999, 0) == MAP_FAILED);
  outcome("mmap zero length", mmap(NULL, 0, rw, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
  outcome("mmap unaligned offset", mmap(NULL, 4096, rw, MAP_PRIVATE | MAP_ANONYMOUS, -1, 1) == MAP_FAILED);
  outcome("mmap64 anonymous", mmap64(NULL, 4096, rw, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
  outcome("mremap bad flags", mremap(p, 65536, 4096, 1 << 20) == MAP_FAILED);
  outcome("mremap grow in place", mremap(p, 65536, 1L << 40, 0) == MAP_FAILED);
  outcome("mremap shrink", mremap(p, 65536, 4096, 0) == MAP_FAILED);
  outcome("munmap unaligned", munmap((char*)p + 1, 4096) != 0);
  outcome("munmap", munmap(p, 4096) != 0);
  outcome("munmap again", munmap(p, 4096) != 0);
  return 0;
}

static int churn(long rounds) {
  for (long i = 0; i < rounds; ++i) {
    char* p = must_map(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    p[0] = 1;
    must(munmap(p, 65536) == 0, "munmap");
  }
  print_figures();
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "kinds") == 0) return kinds();
  if (argc == 3 && strcmp(argv[1], "threads") == 0) return threads(atoi(argv[2]));
  if (argc >= 2 && strcmp(argv[1], "fork") == 0) return fork_child();
  if (argc >= 2 && strcmp(argv[1], "fork-drop") == 0) return fork_drop();
  if (argc >= 2 && strcmp(argv[1], "errno") == 0) return errno_corners();
  if (argc == 3 && strcmp(argv[1], "churn") == 0) return churn(atol(argv[2]));
  fprintf(stderr, "usage: mapped_patterns kinds|threads N|fork|fork-drop|errno|churn N\n");
  return 2;
}
