/* many_objects DIR N: dlopens DIR/object0.so ... DIR/object<N-1>.so (copies
 * of one small object, many_objects_lib.c, each loaded as its own), then
 * allocates 4 MiB through the last one's allocate_here and holds it to the
 * exit: the exit profile's site of that block has a frame in the last
 * object. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: many_objects DIR N\n");
    return 2;
  }
  const int count = atoi(argv[2]);
  void* last = NULL;
  for (int i = 0; i < count; ++i) {
    char path[4096];
    snprintf(path, sizeof path, "%s/object%d.so", argv[1], i);
    last = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (last == NULL) {
      fprintf(stderr, "many_objects: %s\n", dlerror());
      return 1;
    }
  }
  void* (*allocate_here)(size_t) = (void* (*)(size_t))dlsym(last, "allocate_here");
  if (allocate_here == NULL || allocate_here(4 << 20) == NULL) return 1;
  return 0;
}
