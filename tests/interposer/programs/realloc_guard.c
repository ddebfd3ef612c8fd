/* realloc moves a block into a sampled one and must copy no byte past the
 * old block's end. The old block comes from posix_memalign, above glibc's
 * mmap threshold, and gets a PROT_NONE page right after its mapping: a read
 * past it kills the process. Run with a mean near the blocks' size
 * (HEAPLINE_SAMPLE=512k), some old blocks are sampled and some not (an
 * unsampled one has glibc's own header), and some of the new ones are
 * sampled. Prints "ok" when every byte came over, with how many rounds had
 * a guard page and how many moved an unsampled block into a sampled one.
 *
 *   realloc_guard */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A block heapline's sampler chose reads 2^60 where glibc's chunk size is. */
static int sampled(const void* p) {
  const size_t header = *(const size_t*)((uintptr_t)p - sizeof(size_t));  /* before the block: an address, not p[-1] */
  return (header & ~(size_t)7) == (size_t)1 << 60;
}

int main(void) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  int guarded = 0;
  int unsampled_into_sampled = 0;
  for (int round = 0; round < 64; ++round) {
    /* Above glibc's mmap threshold: its own mapping, the user block ending
     * where the mapping ends (usable size = chunk - 16). */
    const size_t size = 300 * 1024 - 16;
    /* The kernel maps each new block just below the previous one: the
     * block above p, freed, leaves the page after p's mapping free. */
    void* above = NULL;
    void* block = NULL;
    if (posix_memalign(&above, 16, size) != 0 || posix_memalign(&block, 16, size) != 0) return 1;
    unsigned char* p = block;
    free(above);
    const size_t usable = malloc_usable_size(p);
    memset(p, 0xab, usable);
    uintptr_t end = ((uintptr_t)p + usable + page - 1) & ~(uintptr_t)(page - 1);
    void* guard = mmap((void*)end, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (guard != MAP_FAILED) ++guarded;
    const int was_sampled = sampled(p);
    unsigned char* q = realloc(p, 2 * size);
    if (q == NULL) return 1;
    if (!was_sampled && sampled(q)) ++unsampled_into_sampled;
    for (size_t i = 0; i < usable && i < 2 * size; ++i) {
      if (q[i] != 0xab) {
        printf("byte %zu lost\n", i);
        return 1;
      }
    }
    free(q);
    if (guard != MAP_FAILED) munmap(guard, page);
  }
  printf("ok guarded=%d unsampled_into_sampled=%d\n", guarded, unsampled_into_sampled);
  return 0;
}
