/* tight_memory: the allocation API when the address space has room for the
 * program's blocks but not for heapline's own memory. Under HEAPLINE_SAMPLE=1
 * the heap sampler asks for its arena (about 10 MiB) at the first block and
 * is refused. Prints each call's result and errno, as api_corners does: the
 * test requires the same text with and without heapline.
 *
 * C, not C++: libstdc++ allocates before main, and that first block would
 * map the arena before the limit is set. Nothing here allocates before it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

enum { kCanary = 4321, kRoomBytes = 4 << 20, kUnsampledBlocks = 1000 };

struct Call {
  const char* what;
  int ok;
  int error;
};

static struct Call g_calls[16];
static int g_count;

static void note(const char* what, int ok) {
  g_calls[g_count].what = what;
  g_calls[g_count].ok = ok;
  g_calls[g_count].error = errno;
  ++g_count;
  errno = kCanary;
}

/* The address space in use now, from /proc/self/statm (read without stdio,
 * which would allocate). */
static unsigned long address_space_bytes(void) {
  char text[128] = {0};
  const int fd = open("/proc/self/statm", O_RDONLY);
  if (fd < 0) return 0;
  const ssize_t got = read(fd, text, sizeof text - 1);
  close(fd);
  if (got <= 0) return 0;
  return strtoul(text, NULL, 10) * (unsigned long)sysconf(_SC_PAGESIZE);
}

int main(void) {
  const unsigned long in_use = address_space_bytes();
  if (in_use == 0) return 2;
  struct rlimit limit;
  getrlimit(RLIMIT_AS, &limit);
  limit.rlim_cur = in_use + kRoomBytes;
  if (setrlimit(RLIMIT_AS, &limit) != 0) return 2;

  errno = kCanary;
  void* small = malloc(100);
  note("malloc(100)", small != NULL);
  void* zeroed = calloc(10, 10);
  note("calloc(10, 10)", zeroed != NULL);
  small = realloc(small, 5000);
  note("realloc(p, 5000)", small != NULL);
  void* aligned = aligned_alloc(64, 100);
  note("aligned_alloc(64, 100)", aligned != NULL);
  void* old_style = memalign(256, 1000);
  note("memalign(256, 1000)", old_style != NULL);
  void* paged = valloc(100);
  note("valloc(100)", paged != NULL);
  void* posix = NULL;
  const int posix_result = posix_memalign(&posix, 64, 100);
  note("posix_memalign(64, 100)", posix_result == 0);
  void* too_big = malloc(64 << 20);
  note("malloc(64 MiB)", too_big != NULL);
  free(small);
  free(zeroed);
  free(aligned);
  free(old_style);
  free(paged);
  free(posix);
  free(too_big);
  note("free of each", 1);
  /* Blocks the sampler is asked for and cannot take: each is counted once
   * in the report's sampling.dropped. */
  for (int i = 0; i < kUnsampledBlocks; ++i) {
    void* volatile block = malloc(64); /* volatile: not a pair the compiler may take away */
    free(block);
  }

  for (int i = 0; i < g_count; ++i) {
    printf("%-26s %s errno=%s\n", g_calls[i].what, g_calls[i].ok ? "ok  " : "fail",
           g_calls[i].error == kCanary ? "kept" : strerrorname_np(g_calls[i].error));
  }
  return 0;
}
