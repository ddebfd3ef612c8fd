/* small_stack USED: a thread with the smallest stack POSIX allows
 * (PTHREAD_STACK_MIN) uses USED bytes of it, then allocates and frees 1000
 * blocks from there; prints "ok" when the thread came back. A plain call
 * of glibc's fits in what is left up to a point; the heap sampler must
 * never need more (it skips a sample, counted as dropped, when the stack
 * is short).
 * small_stack size: prints that stack's size in bytes, which is the
 * processor's: glibc's PTHREAD_STACK_MIN is 16 KiB on x86-64 and 128 KiB
 * on arm64 (C without _GNU_SOURCE: the constant, not sysconf's figure). */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void* volatile g_keep;

static void* thread_main(void* argument) {
  char pad[(long)argument];
  memset(pad, 1, sizeof pad);
  g_keep = pad;
  for (int i = 0; i < 1000; ++i) {
    void* p = malloc(100 + i);
    g_keep = p;
    free(p);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  if (strcmp(argv[1], "size") == 0) {
    printf("%ld\n", (long)PTHREAD_STACK_MIN);
    return 0;
  }
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, PTHREAD_STACK_MIN);
  pthread_t thread;
  if (pthread_create(&thread, &attributes, thread_main, (void*)atol(argv[1])) != 0) return 3;
  pthread_join(thread, NULL);
  puts("ok");
  return 0;
}
