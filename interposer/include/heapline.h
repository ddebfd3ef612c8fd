/* heapline.h: phase markers and live figures from inside a program run under
 * libheapline.so (C and C++).
 *
 *   heapline_mark("load");                 // a labelled line in the timeline
 *   heapline_reset_peak();                 // start measuring a phase's peak
 *   run_phase();
 *   int64_t phase_peak = heapline_peak_bytes();
 *   int64_t now = heapline_live_bytes();   // exact, every thread's bytes
 *   int64_t arenas = heapline_mapped_bytes();  // mmap'd outside malloc
 *   int64_t whole = heapline_total_bytes();    // heap + mapped
 *
 * Safe without the library: a program using this header links without any
 * heapline library and runs normally; when libheapline.so is not loaded the
 * calls do nothing and return 0. How: libheapline.so exports
 * heapline_v1_* functions; this header reaches them
 *   - in position-independent code (PIE executables, the default of current
 *     distributions, and shared libraries) through weak references, which
 *     the dynamic linker binds to the preloaded library or leaves NULL;
 *   - otherwise (-no-pie, where the static linker would fix a weak undefined
 *     reference to 0 for good) through dlsym(RTLD_DEFAULT), looked up once per
 *     translation unit. dlsym is in libc from glibc 2.34; link -ldl before.
 *
 * The figures are usable bytes as in the report (glibc chunk sizes). Markers:
 * up to 256 per process, names up to 47 bytes (longer ones are cut); no
 * allocation, callable from any thread. heapline_peak_bytes() is the peak
 * since the process started or since the last heapline_reset_peak(); the
 * report's peak_bytes is the whole run's and is never reset. Mapped memory
 * is the report's "mapped" series (anonymous private mappings the program
 * makes itself, outside malloc); 0 with HEAPLINE_MAPPED=off.
 */
#ifndef HEAPLINE_H
#define HEAPLINE_H

#include <stdint.h>

#if !defined(__PIC__) && !defined(__PIE__)
#include <dlfcn.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Exported by libheapline.so; not to be called directly. */
void heapline_v1_mark(const char* name) __attribute__((weak));
int64_t heapline_v1_live_bytes(void) __attribute__((weak));
int64_t heapline_v1_peak_bytes(void) __attribute__((weak));
void heapline_v1_reset_peak(void) __attribute__((weak));
int64_t heapline_v1_mapped_bytes(void) __attribute__((weak));
int64_t heapline_v1_total_bytes(void) __attribute__((weak));
int64_t heapline_v1_total_peak_bytes(void) __attribute__((weak));

#if defined(__PIC__) || defined(__PIE__)
#define HEAPLINE_DETAIL_FUNCTION(type, index, name) ((type)(name))
#else
static inline void* heapline_detail_lookup(int index, const char* symbol) {
  static void* cache[7]; /* per translation unit; (void*)1: looked up, absent */
  void* found = __atomic_load_n(&cache[index], __ATOMIC_ACQUIRE);
  if (found == 0) {
    found = dlsym((void*)0 /* RTLD_DEFAULT */, symbol);
    if (found == 0) found = (void*)1;
    __atomic_store_n(&cache[index], found, __ATOMIC_RELEASE);
  }
  return found == (void*)1 ? 0 : found;
}
#define HEAPLINE_DETAIL_FUNCTION(type, index, name) ((type)heapline_detail_lookup(index, #name))
#endif

/* Records a marker named `name` at this moment (and a sample of the heap). */
static inline void heapline_mark(const char* name) {
  void (*f)(const char*) = HEAPLINE_DETAIL_FUNCTION(void (*)(const char*), 0, heapline_v1_mark);
  if (f) f(name);
}

/* The live heap now: published bytes plus every thread's pending delta. */
static inline int64_t heapline_live_bytes(void) {
  int64_t (*f)(void) = HEAPLINE_DETAIL_FUNCTION(int64_t (*)(void), 1, heapline_v1_live_bytes);
  return f ? f() : 0;
}

/* The peak since start or the last heapline_reset_peak(); never below any
 * value heapline_live_bytes() returned in that time. */
static inline int64_t heapline_peak_bytes(void) {
  int64_t (*f)(void) = HEAPLINE_DETAIL_FUNCTION(int64_t (*)(void), 2, heapline_v1_peak_bytes);
  return f ? f() : 0;
}

/* Starts a new phase: the peak becomes the live heap now. */
static inline void heapline_reset_peak(void) {
  void (*f)(void) = HEAPLINE_DETAIL_FUNCTION(void (*)(void), 3, heapline_v1_reset_peak);
  if (f) f();
}

/* The mapped memory now (exact: it is published at every mapping call). */
static inline int64_t heapline_mapped_bytes(void) {
  int64_t (*f)(void) = HEAPLINE_DETAIL_FUNCTION(int64_t (*)(void), 4, heapline_v1_mapped_bytes);
  return f ? f() : 0;
}

/* Heap + mapped now: heapline_live_bytes() + heapline_mapped_bytes(). */
static inline int64_t heapline_total_bytes(void) {
  int64_t (*f)(void) = HEAPLINE_DETAIL_FUNCTION(int64_t (*)(void), 5, heapline_v1_total_bytes);
  return f ? f() : 0;
}

/* The peak of heap + mapped (at one moment) since start or the last
 * heapline_reset_peak(); never below any value heapline_total_bytes()
 * returned in that time. */
static inline int64_t heapline_total_peak_bytes(void) {
  int64_t (*f)(void) = HEAPLINE_DETAIL_FUNCTION(int64_t (*)(void), 6, heapline_v1_total_peak_bytes);
  return f ? f() : 0;
}

#ifdef __cplusplus
}
#endif

#endif /* HEAPLINE_H */
