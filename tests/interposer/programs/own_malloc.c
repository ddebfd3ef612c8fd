/* own_malloc: a program that defines malloc, free, calloc and realloc
   itself (a bump allocator over a static arena), as some programs and
   runtimes do. Its calls, and libc's, bind to these definitions, never to a
   preloaded library's: heapline must say it does not see them.
   Prints "own malloc served BYTES". */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static _Alignas(16) unsigned char arena[64 << 20];
static size_t used;

void* malloc(size_t size) {
  size_t need = (size + 16 + 15) & ~(size_t)15; /* a 16-byte header keeps the size */
  if (need < size || need > sizeof arena - used) return NULL;
  unsigned char* block = arena + used;
  used += need;
  memcpy(block, &size, sizeof size);
  return block + 16;
}

void free(void* block) { (void)block; /* a bump allocator never gives back */ }

void* calloc(size_t count, size_t size) {
  if (size != 0 && count > (size_t)-1 / size) return NULL;
  return malloc(count * size); /* the arena is zero and never reused */
}

void* realloc(void* old, size_t size) {
  void* block = malloc(size);
  if (block != NULL && old != NULL) {
    size_t old_size;
    memcpy(&old_size, (unsigned char*)old - 16, sizeof old_size);
    memcpy(block, old, old_size < size ? old_size : size);
  }
  return block;
}

int main(void) {
  for (int i = 0; i < 4096; ++i) {
    char* block = malloc(1024);
    if (block == NULL) return 1;
    block[0] = (char)i;
  }
  printf("own malloc served %zu\n", used);
  return 0;
}
