/* C functions whose names __cxa_demangle would read as types (i: int,
   d: double, f: float, w: wchar_t, Dn: decltype(nullptr)), each holding
   8 MiB at the peak: their profile frames must name them as they are. */
#include <stdlib.h>
#include <string.h>

enum { kBlocks = 64, kBlockBytes = 128 << 10 };

static void* held[5][kBlocks];

#define HOLDER(name, index)                           \
  __attribute__((noinline)) void name(void) {         \
    for (int b = 0; b < kBlocks; ++b) {               \
      held[index][b] = malloc(kBlockBytes);           \
      memset(held[index][b], index + 1, kBlockBytes); \
    }                                                 \
    __asm__ volatile("" ::: "memory");                \
  }

HOLDER(i, 0)
HOLDER(d, 1)
HOLDER(f, 2)
HOLDER(w, 3)
HOLDER(Dn, 4)

int main(void) {
  i();
  d();
  f();
  w();
  Dn();
  for (int h = 0; h < 5; ++h)
    for (int b = 0; b < kBlocks; ++b) free(held[h][b]);
  return 0;
}
