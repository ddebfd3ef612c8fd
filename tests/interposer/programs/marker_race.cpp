// marker_race: markers from several threads and from a signal handler at
// once, with allocations publishing between them.
//
//   marker_race THREADS MARKS [kill]
//
// THREADS threads each place MARKS markers (heapline.h), allocating and
// freeing between them, while SIGALRM, every 100 µs, makes a handler on the
// main thread place one more. Then it prints "marks=N handled=H" and exits,
// or with `kill` SIGKILLs itself, leaving its live file. Every sample of
// every series, and every marker, must come in time order (safety_test.cpp
// reads the report and the live file).
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "heapline.h"

namespace {

volatile sig_atomic_t g_handled = 0;
int g_marks = 0;

void on_alarm(int) {
  heapline_mark("signal");
  g_handled = g_handled + 1;
}

void* place_markers(void*) {
  for (int i = 0; i < g_marks; ++i) {
    // Enough bytes to publish now and then, so that samples come from
    // publishes too.
    void* block = std::malloc(static_cast<std::size_t>(4096 + (i % 7) * 1024));
    heapline_mark("thread");
    std::free(block);
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: marker_race THREADS MARKS [kill]\n");
    return 2;
  }
  const int threads = std::atoi(argv[1]);
  g_marks = std::atoi(argv[2]);
  const bool kill_self = argc > 3 && std::strcmp(argv[3], "kill") == 0;

  struct sigaction action {};
  action.sa_handler = on_alarm;
  action.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &action, nullptr);
  // Only the main thread takes the alarm: the others block it.
  sigset_t alarm_only;
  sigemptyset(&alarm_only);
  sigaddset(&alarm_only, SIGALRM);
  pthread_sigmask(SIG_BLOCK, &alarm_only, nullptr);
  std::vector<pthread_t> workers(static_cast<std::size_t>(threads));

  for (pthread_t& worker : workers) pthread_create(&worker, nullptr, place_markers, nullptr);
  pthread_sigmask(SIG_UNBLOCK, &alarm_only, nullptr);
  itimerval every{{0, 100}, {0, 100}};
  setitimer(ITIMER_REAL, &every, nullptr);
  // The main thread marks too, interrupted by its own handler.
  place_markers(nullptr);
  for (pthread_t& worker : workers) pthread_join(worker, nullptr);
  itimerval stop{};
  setitimer(ITIMER_REAL, &stop, nullptr);
  std::printf("marks=%d handled=%d\n", (threads + 1) * g_marks, static_cast<int>(g_handled));
  std::fflush(stdout);
  if (kill_self) kill(getpid(), SIGKILL);
  return 0;
}
