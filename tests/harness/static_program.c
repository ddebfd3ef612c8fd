/* A statically linked program: LD_PRELOAD cannot reach it, so measuring a
   library with it must be refused rather than reported as 0%. */
int main(void) { return 0; }
