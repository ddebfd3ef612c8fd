/* A program that interposes dlsym and allocates inside it, as tracing shims
 * and GL dispatch wrappers do. libheapline.so finds the allocator it forwards
 * to with dlsym, so under it these allocations arrive while it is still
 * choosing: they must be served (non-NULL, zeroed by calloc, aligned as
 * asked, their usable size at least what was asked) and may be freed or
 * resized later like any block. Some are freed inside dlsym, the rest in
 * main, after the choice. The library's later lookups (glibc's
 * posix_memalign, malloc_usable_size) meet the same allocations.
 *
 * Then main holds one block of HELD bytes to the end and prints
 * "ok calls=N held=HELD", or what went wrong and exits 1. With
 * DLSYM_ALLOCATES_QUIET set, dlsym allocates nothing (the same program's
 * figures without the allocations in dlsym).
 *
 *   dlsym_allocates
 *
 * The wrapper must reach glibc's dlsym with its caller's return address
 * (RTLD_NEXT means "after the caller's object"), so it ends in a jump,
 * written in assembly (x86-64 and aarch64). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HELD (3u << 20)
#define KEPT_MAX 256

void* (*real_dlsym)(void*, const char*);
unsigned long dlsym_calls;
static void* kept[KEPT_MAX];
static size_t kept_count;
static const char* failure;
static int main_started;

/* Before main, kept for main to free; from main on (the library's own dlsym
 * calls at exit), freed at once: what main holds at the end is HELD. */
static void keep(void* p) {
  if (!main_started && kept_count < KEPT_MAX) {
    kept[kept_count++] = p;
  } else {
    free(p);
  }
}

static int aligned(const void* p, size_t alignment) { return ((uintptr_t)p & (alignment - 1)) == 0; }

/* Called by the dlsym below before it jumps to glibc's. */
void before_dlsym(void) {
  if (real_dlsym == NULL) {
    /* RTLD_NEXT from this executable: the first definition after it. dlvsym
     * allocates nothing when it finds the symbol. */
    real_dlsym = (void* (*)(void*, const char*))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    /* Before glibc 2.34, dlsym's version was the processor's first one. */
    if (real_dlsym == NULL) real_dlsym = (void* (*)(void*, const char*))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    if (real_dlsym == NULL) real_dlsym = (void* (*)(void*, const char*))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.17");
    if (real_dlsym == NULL) abort();
  }
  ++dlsym_calls;
  if (getenv("DLSYM_ALLOCATES_QUIET") != NULL) return;

  unsigned char* zeroed = calloc(5, 24);
  if (zeroed == NULL) {
    failure = "calloc in dlsym returned NULL";
    return;
  }
  for (size_t i = 0; i < 5 * 24; ++i) {
    if (zeroed[i] != 0) failure = "calloc in dlsym gave a block that is not zeroed";
  }
  memset(zeroed, 0x5a, 5 * 24);
  keep(zeroed);

  char* grown = malloc(40);
  if (grown == NULL) {
    failure = "malloc in dlsym returned NULL";
    return;
  }
  memset(grown, 'g', 40);
  grown = realloc(grown, 4000);
  if (grown == NULL || grown[39] != 'g') {
    failure = "realloc in dlsym lost the block's bytes";
    return;
  }
  keep(grown);

  void* by_posix = NULL;
  if (posix_memalign(&by_posix, 256, 300) != 0 || !aligned(by_posix, 256)) {
    failure = "posix_memalign in dlsym failed";
    return;
  }
  keep(by_posix);
  void* by_aligned_alloc = aligned_alloc(64, 640);
  if (by_aligned_alloc == NULL || !aligned(by_aligned_alloc, 64)) {
    failure = "aligned_alloc in dlsym failed";
    return;
  }
  free(by_aligned_alloc); /* freed at once, still inside dlsym */
  void* by_memalign = memalign(128, 100);
  if (by_memalign == NULL || !aligned(by_memalign, 128)) {
    failure = "memalign in dlsym failed";
    return;
  }
  keep(by_memalign);
  void* by_valloc = valloc(10);
  void* by_pvalloc = pvalloc(10);
  if (by_valloc == NULL || by_pvalloc == NULL || !aligned(by_valloc, 4096) || !aligned(by_pvalloc, 4096)) {
    failure = "valloc or pvalloc in dlsym failed";
    return;
  }
  free(by_valloc);
  keep(by_pvalloc);
  if (malloc_usable_size(grown) < 4000 || malloc_usable_size(by_posix) < 300) {
    failure = "malloc_usable_size in dlsym is below the size asked";
    return;
  }
  free(malloc(72));
}

/* dlsym(handle, name): before_dlsym(), then a jump to glibc's dlsym with the
 * arguments and the return address this call came with. */
#if defined(__x86_64__)
__asm__(
    ".text\n"
    ".globl dlsym\n"
    ".type dlsym, @function\n"
    "dlsym:\n"
    "  push %rdi\n"
    "  push %rsi\n"
    "  sub $8, %rsp\n" /* the stack 16-byte aligned at the call */
    "  call before_dlsym\n"
    "  add $8, %rsp\n"
    "  pop %rsi\n"
    "  pop %rdi\n"
    "  jmp *real_dlsym(%rip)\n"
    ".size dlsym, .-dlsym\n");
#elif defined(__aarch64__)
__asm__(
    ".text\n"
    ".globl dlsym\n"
    ".type dlsym, %function\n"
    "dlsym:\n"
    "  stp x29, x30, [sp, #-32]!\n" /* the return address (x30) kept */
    "  stp x0, x1, [sp, #16]\n"
    "  bl before_dlsym\n"
    "  ldp x0, x1, [sp, #16]\n"
    "  ldp x29, x30, [sp], #32\n"
    "  adrp x16, real_dlsym\n"
    "  ldr x16, [x16, :lo12:real_dlsym]\n"
    "  br x16\n"
    ".size dlsym, .-dlsym\n");
#else
#error "dlsym_allocates: no dlsym wrapper for this processor"
#endif

int main(void) {
  main_started = 1;
  if (failure != NULL) {
    printf("%s\n", failure);
    return 1;
  }
  /* The blocks made inside dlsym, freed after the choice: counted out only
   * if they were counted in. */
  for (size_t i = 0; i < kept_count; ++i) free(kept[i]);
  kept_count = 0;
  char* held = malloc(HELD);
  if (held == NULL) return 1;
  memset(held, 1, HELD);
  printf("ok calls=%lu held=%u\n", dlsym_calls, HELD);
  fflush(stdout);
  /* exit, not return: nothing may free `held` before the report. */
  exit(0);
}
