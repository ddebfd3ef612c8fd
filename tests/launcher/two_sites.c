/* Two sites in one function, built without line tables: the profile must
 * tell them apart by their offsets (symbolizer.h, FrameName::text).
 *
 *   two_sites */
#include <stdlib.h>
#include <string.h>

static void* volatile g_kept[2];

__attribute__((noipa)) void tab_init(void) {
  g_kept[0] = malloc(8 << 20);
  g_kept[1] = calloc(1, 4 << 20);
  memset(g_kept[0], 1, 8 << 20);
}

int main(void) {
  tab_init();
  return 0;
}
