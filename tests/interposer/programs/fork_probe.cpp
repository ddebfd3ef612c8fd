// fork_probe: fork and exec patterns for heapline's per-process files.
//
//   fork_probe fork BYTES [HOW]      hold BYTES in 1 KiB blocks, fork; the child
//                                     allocates 64 KiB more and ends through HOW:
//                                     exit (the default), _exit, _Exit or
//                                     abort
//   fork_probe exec PROGRAM ARGS...  fork, then exec PROGRAM in the child
//   fork_probe threads N             N threads allocate 1000 times each and
//                                     end, N more allocate and stay (parked) at
//                                     the fork; the child starts one thread of
//                                     its own, which allocates 10 times
//
// Prints "parent=PID child=PID held=COUNTED" (COUNTED in glibc chunk bytes).
#include <malloc.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

void allocate_and_free(int times) {
  for (int i = 0; i < times; ++i) {
    void* block = std::malloc(100);
    block = std::realloc(block, 200);
    std::free(block);
  }
}

// The parent's threads, ended and alive at the fork, leave counters behind
// in the copy the child starts from: the child's report must count only
// its own threads and calls.
int fork_after_threads(int threads) {
  std::vector<std::thread> ended;
  for (int i = 0; i < threads; ++i) ended.emplace_back(allocate_and_free, 1000);
  for (auto& thread : ended) thread.join();
  pthread_barrier_t allocated;
  pthread_barrier_init(&allocated, nullptr, threads + 1);
  int release[2];
  if (pipe(release) != 0) return 1;
  std::vector<std::thread> parked;
  for (int i = 0; i < threads; ++i) {
    parked.emplace_back([&] {
      allocate_and_free(1000);
      pthread_barrier_wait(&allocated);
      char byte;
      while (read(release[0], &byte, 1) < 0) {
      }
    });
  }
  pthread_barrier_wait(&allocated);
  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    std::thread own(allocate_and_free, 10);
    own.join();
    std::exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  close(release[1]);  // the parked threads' read returns 0: they end
  for (auto& thread : parked) thread.join();
  std::printf("parent=%d child=%d held=0\n", getpid(), child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "fork") == 0) {
    std::size_t bytes = std::strtoull(argv[2], nullptr, 10);
    std::size_t held = 0;
    void** blocks = static_cast<void**>(std::malloc((bytes / 1024 + 1) * sizeof(void*)));
    for (std::size_t i = 0; i < bytes / 1024; ++i) {
      blocks[i] = std::malloc(1024 - 16);
      std::size_t header;  // glibc's chunk size, in the word before the block
      std::memcpy(&header, static_cast<char*>(blocks[i]) - sizeof header, sizeof header);
      // A block heapline's sampler chose reads 2^60 there: it counts as it
      // would have unsampled, malloc_usable_size + 8.
      held += (header & ~std::size_t{7}) == std::size_t{1} << 60 ? malloc_usable_size(blocks[i]) + 8
                                                               : header & ~std::size_t{7};
    }
    std::fflush(stdout);
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
      void* more[64];
      for (auto& block : more) block = std::malloc(1000);
      const char* how = argc >= 4 ? argv[3] : "exit";
      if (std::strcmp(how, "_exit") == 0) _exit(0);  // no destructors: a shell's subshell, a forked worker
      if (std::strcmp(how, "_Exit") == 0) std::_Exit(0);
      if (std::strcmp(how, "abort") == 0) std::abort();
      std::exit(0);  // runs destructors: the child writes its own file
    }
    int status = 0;
    waitpid(child, &status, 0);
    std::printf("parent=%d child=%d held=%zu\n", getpid(), child, held);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  if (argc >= 3 && std::strcmp(argv[1], "exec") == 0) {
    std::fflush(stdout);
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
      execv(argv[2], argv + 2);
      _exit(127);
    }
    int status = 0;
    waitpid(child, &status, 0);
    std::printf("parent=%d child=%d held=0\n", getpid(), child);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  if (argc >= 3 && std::strcmp(argv[1], "threads") == 0) return fork_after_threads(std::atoi(argv[2]));
  std::fprintf(stderr, "usage: fork_probe fork BYTES [HOW] | fork_probe exec PROGRAM ARGS... | fork_probe threads N\n");
  return 2;
}
