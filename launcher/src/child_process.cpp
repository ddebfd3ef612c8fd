#include "child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace heapline::launcher {

namespace {

std::vector<char*> to_argv(std::vector<std::string>& storage) {
  std::vector<char*> argv;
  for (auto& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  return argv;
}

int status_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

int wait_for(pid_t pid) {
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) return 1;
  }
  return wait_status;
}

}  // namespace

ChildResult run_command(const std::vector<std::string>& command, const std::function<void(pid_t)>& prepare_child) {
  std::vector<std::string> storage = command;
  std::vector<char*> argv = to_argv(storage);
  // The child reports an exec failure through this close-on-exec pipe:
  // nothing arrives when exec succeeded.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    std::perror("heapline: pipe");
    return {125, false, -1};
  }
  struct sigaction ignore {}, old_int {}, old_quit {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);

  pid_t pid = fork();
  if (pid < 0) {
    std::perror("heapline: fork");
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    return {125, false, -1};
  }
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    close(report[0]);
    prepare_child(getpid());
    execvp(argv[0], argv.data());
    int error = errno;
    ssize_t ignored = write(report[1], &error, sizeof error);
    (void)ignored;
    _exit(error == ENOENT ? 127 : 126);
  }
  close(report[1]);
  int exec_error = 0;
  ssize_t got;
  do {
    got = read(report[0], &exec_error, sizeof exec_error);
  } while (got < 0 && errno == EINTR);
  close(report[0]);
  int wait_status = wait_for(pid);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  if (got == sizeof exec_error) {
    std::fprintf(stderr, "heapline: cannot run %s: %s\n", command[0].c_str(), std::strerror(exec_error));
    return {exec_error == ENOENT ? 127 : 126, false, pid};
  }
  return {status_of(wait_status), true, pid};
}

int run_helper(const std::vector<std::string>& command) {
  std::vector<std::string> storage = command;
  std::vector<char*> argv = to_argv(storage);
  pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    // The helper writes nothing of interest on stdout; keep the command's
    // stdout clean of it.
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDOUT_FILENO);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  return status_of(wait_for(pid));
}

}  // namespace heapline::launcher
