// libheapline_slow_shim.so: a deliberately slower heapline, for the tests
// and the measurement that prove the service flags a slower library.
//
//   LD_PRELOAD=libheapline_slow_shim.so:libheapline.so COMMAND
//   heapline-bench overhead churn-1t libheapline_slow_shim.so:libheapline.so 10
//
// Preloaded in front of libheapline.so, malloc, free, calloc and realloc
// spend SLOW_SHIM_SPINS turns of an empty loop (three instructions a turn,
// about 40 with the call: "a few dozen extra instructions per call"), then
// forward to the next definition in the search order, heapline's. The
// interposer itself is untouched, so the slow build is heapline as it is plus
// a known cost per call. Test-only: never installed. (heapline says at exit
// that the program's malloc is not its own: true, and harmless here, since
// every call still reaches it.)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

#ifndef SLOW_SHIM_SPINS
#define SLOW_SHIM_SPINS 12
#endif

// glibc's own entry points, for the calls made while dlsym itself is being
// resolved (it may allocate on some versions): a pointer they return is an
// ordinary glibc chunk, which heapline's free accepts.
extern void* __libc_malloc(size_t size);
extern void* __libc_calloc(size_t count, size_t size);
extern void* __libc_realloc(void* p, size_t size);
extern void __libc_free(void* p);

typedef void* malloc_fn(size_t);
typedef void free_fn(void*);
typedef void* calloc_fn(size_t, size_t);
typedef void* realloc_fn(void*, size_t);

static malloc_fn* next_malloc;
static free_fn* next_free;
static calloc_fn* next_calloc;
static realloc_fn* next_realloc;
static __thread int resolving;

// The counter passes through an empty asm the compiler cannot see into, so
// the loop is neither unrolled away nor folded: three instructions a turn.
static void burn(void) {
  for (int i = 0; i < SLOW_SHIM_SPINS; ++i) __asm__ volatile("" : "+r"(i));
}

// Resolved on first use (a library's constructor may allocate before ours
// runs); every thread that races here stores the same addresses.
static int resolve(void) {
  if (__atomic_load_n(&next_free, __ATOMIC_ACQUIRE) != NULL) return 1;
  if (resolving) return 0;
  resolving = 1;
  malloc_fn* m = (malloc_fn*)dlsym(RTLD_NEXT, "malloc");
  calloc_fn* c = (calloc_fn*)dlsym(RTLD_NEXT, "calloc");
  realloc_fn* r = (realloc_fn*)dlsym(RTLD_NEXT, "realloc");
  free_fn* f = (free_fn*)dlsym(RTLD_NEXT, "free");
  resolving = 0;
  if (m == NULL || c == NULL || r == NULL || f == NULL) return 0;
  next_malloc = m;
  next_calloc = c;
  next_realloc = r;
  __atomic_store_n(&next_free, f, __ATOMIC_RELEASE);
  return 1;
}

__attribute__((visibility("default"))) void* malloc(size_t size) {
  if (!resolve()) return __libc_malloc(size);
  burn();
  return next_malloc(size);
}

__attribute__((visibility("default"))) void free(void* p) {
  if (!resolve()) {
    __libc_free(p);
    return;
  }
  burn();
  next_free(p);
}

__attribute__((visibility("default"))) void* calloc(size_t count, size_t size) {
  if (!resolve()) return __libc_calloc(count, size);
  burn();
  return next_calloc(count, size);
}

__attribute__((visibility("default"))) void* realloc(void* p, size_t size) {
  if (!resolve()) return __libc_realloc(p, size);
  burn();
  return next_realloc(p, size);
}
