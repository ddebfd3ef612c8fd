/* static_exit: a statically linked program, which the loader never runs and
   so never preloads into: an exec of it is one the library cannot follow. */
int main(void) { return 0; }
