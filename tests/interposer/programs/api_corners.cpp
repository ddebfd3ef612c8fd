// api_corners: the corner cases of the allocation API, printed as text that
// does not depend on addresses. The test runs it with and without heapline
// preloaded and requires identical output: heapline keeps glibc's semantics
// and errno exactly.
//
// `api_corners common` leaves out what not every allocator people preload
// has: pvalloc and reallocarray (jemalloc defines neither, so glibc's would
// hand its blocks to jemalloc's free) and new of a huge array (mimalloc
// aborts instead of throwing). The allocators' test runs that.
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <initializer_list>
#include <new>

namespace {

const int kCanary = 4321;

void line(const char* what, const void* result, int error) {
  printf("%-44s %s errno=%s\n", what, result != nullptr ? "ptr " : "NULL", error == kCanary ? "kept" : strerrorname_np(error));
}

bool aligned(const void* p, size_t alignment) { return reinterpret_cast<uintptr_t>(p) % alignment == 0; }

}  // namespace

int main(int argc, char** argv) {
  const bool glibc_calls = !(argc > 1 && strcmp(argv[1], "common") == 0);
  const size_t huge = SIZE_MAX - 4096;
  void* p;

#define CHECK_PTR(label, expression) \
  do {                               \
    errno = kCanary;                 \
    p = (expression);                \
    int error = errno;               \
    line(label, p, error);           \
    free(p);                         \
  } while (0)

  CHECK_PTR("malloc(0)", malloc(0));
  CHECK_PTR("malloc(100)", malloc(100));
  CHECK_PTR("malloc(huge)", malloc(huge));
  CHECK_PTR("calloc(0, 0)", calloc(0, 0));
  CHECK_PTR("calloc(10, 10)", calloc(10, 10));
  CHECK_PTR("calloc overflow (SIZE_MAX/2, 4)", calloc(SIZE_MAX / 2, 4));
  CHECK_PTR("realloc(NULL, 100)", realloc(nullptr, 100));
  if (glibc_calls) {
    CHECK_PTR("reallocarray(NULL, 10, 10)", reallocarray(nullptr, 10, 10));
    CHECK_PTR("reallocarray overflow (NULL, SIZE_MAX, 2)", reallocarray(nullptr, SIZE_MAX, 2));
    // A product that wraps to exactly 0 would be realloc(NULL, 0): a block.
    CHECK_PTR("reallocarray overflow to 0 (NULL, 2^32, 2^32)",
              reallocarray(nullptr, size_t{1} << 32, size_t{1} << 32));
  }
  CHECK_PTR("aligned_alloc(64, 100)", aligned_alloc(64, 100));
  CHECK_PTR("aligned_alloc(64, huge)", aligned_alloc(64, huge));
  CHECK_PTR("memalign(64, 100)", memalign(64, 100));
  CHECK_PTR("memalign(64, huge)", memalign(64, huge));
  CHECK_PTR("valloc(100)", valloc(100));
  if (glibc_calls) CHECK_PTR("pvalloc(100)", pvalloc(100));

  // realloc(p, 0) frees p and returns NULL in glibc.
  p = malloc(100);
  errno = kCanary;
  void* q = realloc(p, 0);
  line("realloc(p, 0)", q, errno);
  free(q);

  // A failed realloc leaves the block alone.
  p = malloc(100);
  memset(p, 7, 100);
  errno = kCanary;
  q = realloc(p, huge);
  line("realloc(p, huge)", q, errno);
  printf("%-44s %s\n", "block after failed realloc", static_cast<unsigned char*>(p)[99] == 7 ? "intact" : "CHANGED");
  free(p);

  if (glibc_calls) {
    p = malloc(10);
    errno = kCanary;
    q = reallocarray(p, SIZE_MAX, 16);
    line("reallocarray(p, overflow)", q, errno);
    free(p);
  }

  // posix_memalign reports through its return value; errno is not touched.
  struct {
    const char* label;
    size_t alignment;
    size_t size;
  } memalign_cases[] = {{"posix_memalign(64, 100)", 64, 100},
                        {"posix_memalign(3, 16) bad alignment", 3, 16},
                        {"posix_memalign(0, 16) bad alignment", 0, 16},
                        {"posix_memalign(4, 16) below sizeof(void*)", 4, 16},
                        {"posix_memalign(64, huge)", 64, huge},
                        {"posix_memalign(4096, 0)", 4096, 0}};
  for (const auto& c : memalign_cases) {
    void* out = reinterpret_cast<void*>(0x1);
    errno = kCanary;
    int result = posix_memalign(&out, c.alignment, c.size);
    printf("%-44s returns %s errno=%s out=%s\n", c.label, result == 0 ? "0" : strerrorname_np(result),
           errno == kCanary ? "kept" : strerrorname_np(errno),
           out == reinterpret_cast<void*>(0x1) ? "untouched" : (aligned(out, c.alignment) ? "aligned" : "MISALIGNED"));
    if (result == 0) free(out);
  }

  // Alignment is what was asked for.
  p = aligned_alloc(256, 1000);
  printf("%-44s %s\n", "aligned_alloc(256, 1000) alignment", aligned(p, 256) ? "ok" : "WRONG");
  free(p);
  p = valloc(10);
  printf("%-44s %s\n", "valloc page alignment", aligned(p, static_cast<size_t>(sysconf(_SC_PAGESIZE))) ? "ok" : "WRONG");
  free(p);

  // No header is added: malloc_usable_size sees what glibc gives.
  for (size_t size : {1u, 24u, 25u, 100u, 1000u, 4096u, 200000u}) {
    p = malloc(size);
    printf("malloc_usable_size(malloc(%zu)) = %zu\n", size, malloc_usable_size(p));
    free(p);
  }

  // errno survives successful calls and free.
  errno = kCanary;
  p = malloc(50);
  p = realloc(p, 5000);
  q = calloc(3, 300);
  free(p);
  free(q);
  free(nullptr);
  char* array = new char[300];
  delete[] array;
  printf("%-44s %s\n", "errno after successful calls", errno == kCanary ? "kept" : strerrorname_np(errno));

  errno = kCanary;
  free(nullptr);
  printf("%-44s %s\n", "free(NULL) errno", errno == kCanary ? "kept" : strerrorname_np(errno));

  if (!glibc_calls) return 0;
  try {
    volatile size_t huge_count = huge;  // not a constant: the compiler would refuse it
    char* too_big = new char[huge_count];
    printf("new char[huge] returned %p\n", static_cast<void*>(too_big));
  } catch (const std::bad_alloc&) {
    printf("%-44s %s\n", "new char[huge]", "bad_alloc");
  }
  return 0;
}
