/* The object many_objects loads many copies of: a block allocated here has
 * this object's frame on its stack. */
#include <stdlib.h>
#include <string.h>

void* g_held;

__attribute__((noinline)) void* allocate_here(size_t bytes) {
  g_held = malloc(bytes);
  if (g_held != NULL) memset(g_held, 1, bytes);
  return g_held;
}
