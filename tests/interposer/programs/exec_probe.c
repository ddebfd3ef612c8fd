/* exec_probe VARIANT: holds 1 MiB (so the library has a heap line and a
 * live file), then replaces itself through the exec function VARIANT
 * (execve, execv, execvp, execvpe, execl, execle, execlp, fexecve or
 * execveat) with /bin/sh -c 'echo ran:$0:$EXEC_PROBE' via-VARIANT, the
 * variable EXEC_PROBE=VARIANT given in the environment the variant passes
 * (an explicit envp, or environ). An exec that returns prints why and
 * exits 5; an unknown variant exits 2. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char** environ;

static void* volatile g_held;

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const char* variant = argv[1];
  g_held = malloc(1 << 20);
  char via[64];
  snprintf(via, sizeof via, "via-%s", variant);
  char variable[64];
  snprintf(variable, sizeof variable, "EXEC_PROBE=%s", variant);
  /* The environment the program has, and EXEC_PROBE: an explicit envp for
   * the variants that take one, environ for the others. */
  size_t count = 0;
  while (environ[count] != NULL) ++count;
  char** envp = calloc(count + 2, sizeof *envp);
  if (envp == NULL) return 3;
  for (size_t i = 0; i < count; ++i) envp[i] = environ[i];
  envp[count] = variable;
  const char* script = "echo ran:$0:$EXEC_PROBE";
  char* args[] = {"sh", "-c", (char*)script, via, NULL};
  if (strcmp(variant, "execve") == 0) {
    execve("/bin/sh", args, envp);
  } else if (strcmp(variant, "execvpe") == 0) {
    execvpe("sh", args, envp);
  } else if (strcmp(variant, "execle") == 0) {
    execle("/bin/sh", "sh", "-c", script, via, (char*)NULL, envp);
  } else if (strcmp(variant, "fexecve") == 0) {
    const int fd = open("/bin/sh", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) fexecve(fd, args, envp);
  } else if (strcmp(variant, "execveat") == 0) {
    execveat(AT_FDCWD, "/bin/sh", args, envp, 0);
  } else {
    if (putenv(variable) != 0) return 3;
    if (strcmp(variant, "execv") == 0) {
      execv("/bin/sh", args);
    } else if (strcmp(variant, "execvp") == 0) {
      execvp("sh", args);
    } else if (strcmp(variant, "execl") == 0) {
      execl("/bin/sh", "sh", "-c", script, via, (char*)NULL);
    } else if (strcmp(variant, "execlp") == 0) {
      execlp("sh", "sh", "-c", script, via, (char*)NULL);
    } else {
      return 2;
    }
  }
  printf("%s returned: %s\n", variant, strerror(errno));
  return 5;
}
