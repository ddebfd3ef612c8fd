/* One block of BYTES from one allocation function, held until exit: with
 * HEAPLINE_SAMPLE=1 (every block the meter sees is sampled) the exit profile
 * must hold it, at a site in this program (profile_test.cpp,
 * EveryFunctionTheReportNamesIsSampled).
 *
 *   sample_each FUNCTION BYTES
 *     FUNCTION: malloc, calloc, realloc, reallocarray, posix_memalign,
 *     aligned_alloc, memalign, valloc, pvalloc, mmap, mmap64, mremap (an
 *     anonymous private mapping: mremap grows one page to BYTES) */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void* volatile g_held;

static void* allocate(const char* function, size_t bytes) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  void* p = NULL;
  if (strcmp(function, "malloc") == 0) return malloc(bytes);
  if (strcmp(function, "calloc") == 0) return calloc(bytes / 16, 16);
  if (strcmp(function, "realloc") == 0) return realloc(NULL, bytes);
  if (strcmp(function, "reallocarray") == 0) return reallocarray(NULL, bytes / 16, 16);
  if (strcmp(function, "posix_memalign") == 0) return posix_memalign(&p, 64, bytes) == 0 ? p : NULL;
  if (strcmp(function, "aligned_alloc") == 0) return aligned_alloc(64, bytes);
  if (strcmp(function, "memalign") == 0) return memalign(64, bytes);
  if (strcmp(function, "valloc") == 0) return valloc(bytes);
  if (strcmp(function, "pvalloc") == 0) return pvalloc(bytes);
  if (strcmp(function, "mmap") == 0 || strcmp(function, "mmap64") == 0) {
    p = strcmp(function, "mmap") == 0 ? mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                                      : mmap64(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
  }
  if (strcmp(function, "mremap") == 0) {
    p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    p = mremap(p, page, bytes + page, MREMAP_MAYMOVE);
    return p == MAP_FAILED ? NULL : p;
  }
  fprintf(stderr, "sample_each: unknown function '%s'\n", function);
  exit(2);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: sample_each FUNCTION BYTES\n");
    return 2;
  }
  const size_t bytes = strtoull(argv[2], NULL, 10);
  g_held = allocate(argv[1], bytes);
  if (g_held == NULL) return 1;
  memset(g_held, 1, bytes);
  return 0;
}
