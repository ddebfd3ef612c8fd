// Fork children that end with _exit at the moments when a fork child may
// call neither into the loader nor malloc: the parent was interrupted
// inside malloc (a fork from a signal handler, which POSIX allows), or
// another thread held the loader's lock (dlopen, dlclose) at the fork.
// The child's copy of that lock or of malloc's arena stays held for ever.
//
//   fork_hazards signal N          N children forked from a SIGALRM handler
//                                  while the main thread allocates and frees
//   fork_hazards loader N MODULE   N children forked while two threads
//                                  dlopen and dlclose MODULE
//
// Every child only calls _exit(0). Exits 0 when all were reaped, each with
// status 0; 3 when one is still running 20 s after the start (it is killed:
// it hangs), 4 when one ended otherwise (an abort). Prints what it saw.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kMaxChildren = 1000 };
static volatile sig_atomic_t forks;
static volatile sig_atomic_t wanted;
static pid_t children[kMaxChildren];
static volatile int stop;
static const char* module;

static void fork_in_handler(int signal_number) {
  (void)signal_number;
  if (forks >= wanted) return;
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  if (pid > 0) children[forks++] = pid;
}

static void* load_and_unload(void* unused) {
  (void)unused;
  while (!stop) {
    void* handle = dlopen(module, RTLD_NOW | RTLD_LOCAL);
    if (handle != NULL) dlclose(handle);
    free(malloc(100));
  }
  return NULL;
}

static double seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

// Reaps every child, killing one still running at the deadline.
static int reap(int count, double deadline) {
  int reaped = 0, stuck = 0, failed = 0;
  for (int i = 0; i < count; ++i) {
    int status = 0;
    pid_t got;
    while ((got = waitpid(children[i], &status, WNOHANG)) == 0 && seconds() < deadline) usleep(1000);
    if (got == 0) {
      ++stuck;
      kill(children[i], SIGKILL);
      waitpid(children[i], &status, 0);
      continue;
    }
    ++reaped;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  printf("forked %d, reaped %d, stuck %d, ended otherwise %d\n", count, reaped, stuck, failed);
  return stuck > 0 ? 3 : failed > 0 ? 4 : 0;
}

int main(int argc, char** argv) {
  const double deadline = seconds() + 20;
  if (argc >= 3 && strcmp(argv[1], "signal") == 0) {
    wanted = atoi(argv[2]) < kMaxChildren ? atoi(argv[2]) : kMaxChildren;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = fork_in_handler;
    action.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &action, NULL);
    const struct itimerval every = {{0, 300}, {0, 300}};
    setitimer(ITIMER_REAL, &every, NULL);
    void* kept[64] = {0};
    for (long i = 0; forks < wanted && seconds() < deadline; ++i) {
      const int k = (int)(i % 64);
      free(kept[k]);
      kept[k] = malloc((size_t)((i * 7919) % 70000 + 1));
    }
    const struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    for (int k = 0; k < 64; ++k) free(kept[k]);
    return reap(forks, deadline);
  }
  if (argc >= 4 && strcmp(argv[1], "loader") == 0) {
    const int count = atoi(argv[2]) < kMaxChildren ? atoi(argv[2]) : kMaxChildren;
    module = argv[3];
    pthread_t threads[2];
    for (int i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, load_and_unload, NULL);
    int made = 0;
    for (int i = 0; i < count && seconds() < deadline; ++i) {
      const pid_t pid = fork();
      if (pid == 0) _exit(0);
      if (pid < 0) break;
      children[made++] = pid;
      // One at a time, as a worker pool's short tasks: each child's exit
      // then meets the loader's lock as another thread holds it.
      int status = 0;
      pid_t got;
      while ((got = waitpid(pid, &status, WNOHANG)) == 0 && seconds() < deadline) usleep(200);
      if (got == 0) break;  // stuck: reap() says so
      children[--made] = 0;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        stop = 1;
        for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
        printf("forked %d, a child ended otherwise (status %d)\n", i + 1, status);
        return 4;
      }
    }
    stop = 1;
    for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
    if (made > 0) return reap(made, deadline);
    printf("forked %d, reaped %d, stuck 0, ended otherwise 0\n", count, count);
    return 0;
  }
  fprintf(stderr, "usage: fork_hazards signal N | fork_hazards loader N MODULE\n");
  return 2;
}
