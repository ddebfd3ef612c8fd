/* A program that defines clock_gettime, allocates inside it and answers a
 * time an hour ahead, as libfaketime does (its clock_gettime looks itself up
 * with dlsym, which allocates). libheapline.so reads clocks inside
 * allocation calls: it must read its own (glibc's), never this one, or each
 * allocation made here would come back into it until the stack ran out.
 *
 * main makes ROUNDS allocations and frees, then holds one block of HELD
 * bytes to the end and prints "ok calls=N held=HELD" (N: calls of the
 * clock_gettime below, by the program itself only when the library keeps
 * out of it).
 *
 *   clock_allocates */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HELD (1u << 20)
#define ROUNDS 20000

static unsigned long clock_calls;

int clock_gettime(clockid_t clock, struct timespec* now) {
  ++clock_calls;
  free(malloc(48));
  long result = syscall(SYS_clock_gettime, clock, now);
  if (result == 0) now->tv_sec += 3600;
  return (int)result;
}

int main(void) {
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (int i = 0; i < ROUNDS; ++i) {
    char* p = malloc(1000 + (size_t)i % 100);
    if (p == NULL) return 1;
    memset(p, 1, 1000);
    free(p);
  }
  char* held = malloc(HELD);
  if (held == NULL) return 1;
  memset(held, 1, HELD);
  printf("ok calls=%lu held=%u\n", clock_calls, HELD);
  fflush(stdout);
  exit(0); /* exit, not return: nothing may free `held` before the report */
}
