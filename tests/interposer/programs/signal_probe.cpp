// signal_probe: a signal handler that allocates while its thread is inside
// heapline's hot path.
//
//   signal_probe MS
//
// For MS milliseconds the main thread runs malloc(32)/free without pause
// while SIGALRM, every 50 µs, makes its handler malloc(2000) and keep the
// block. Then the timer stops, every kept block is freed, and it prints
// "before=B after=A handled=N": the exact live heap (heapline.h) before the
// loop and after the frees, and how many blocks the handler made. Nothing is
// allocated between the two reads but the blocks, all freed: A must equal B.
// Output goes through write(), so stdio allocates nothing either.
//
// glibc's allocator is not async-signal-safe in general; here the loop only
// moves one 32-byte block in and out of its thread cache, while the handler's
// 2000-byte blocks are too large for that cache, so the two never touch the
// same glibc structures.
#include <errno.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "heapline.h"

namespace {

constexpr int kCapacity = 1 << 15;
void* g_blocks[kCapacity];
volatile sig_atomic_t g_handled = 0;
void* volatile g_sink;

void on_alarm(int) {
  const int saved_errno = errno;
  if (g_handled < kCapacity) {
    g_blocks[g_handled] = std::malloc(2000);
    g_handled = g_handled + 1;
  }
  errno = saved_errno;
}

long long elapsed_ms(const timespec& start) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - start.tv_sec) * 1000LL + (now.tv_nsec - start.tv_nsec) / 1000000;
}

void say(const char* line) {
  const std::size_t length = std::strlen(line);
  if (write(STDOUT_FILENO, line, length) != static_cast<ssize_t>(length)) _exit(3);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    say("usage: signal_probe MS\n");
    return 2;
  }
  const long long duration_ms = std::atoll(argv[1]);
  g_sink = std::malloc(32);  // registers this thread before any signal
  std::free(g_sink);
  const long long before = static_cast<long long>(heapline_live_bytes());

  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_alarm;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &action, nullptr);
  itimerval every = {{0, 50}, {0, 50}};
  setitimer(ITIMER_REAL, &every, nullptr);

  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (unsigned long round = 0; g_handled < kCapacity; ++round) {
    void* p = std::malloc(32);
    *static_cast<volatile char*>(p) = 1;
    g_sink = p;
    std::free(p);
    if (round % 1024 == 0 && elapsed_ms(start) >= duration_ms) break;
  }

  itimerval stop = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &stop, nullptr);
  sigset_t alarm;
  sigemptyset(&alarm);
  sigaddset(&alarm, SIGALRM);
  sigprocmask(SIG_BLOCK, &alarm, nullptr);  // a signal already on its way stays pending
  const int handled = g_handled;
  for (int i = 0; i < handled; ++i) std::free(g_blocks[i]);
  const long long after = static_cast<long long>(heapline_live_bytes());

  char line[128];
  std::snprintf(line, sizeof line, "before=%lld after=%lld handled=%d\n", before, after, handled);
  say(line);
  return 0;
}
