// The exec family: an image that execs another program gives its live file up
// first, and gets it back if the exec fails (live_header.cpp). The new image,
// run under the library, makes its own, so a wrapper that execs the program
// it wraps (env, nice, a pyenv shim; timeout's child) leaves no live file of
// its own behind. Only when the new image will run the library: an exec
// that cannot succeed (no such file), of a program the loader will not
// preload into (statically linked, set-user-ID or with file capabilities),
// or with LD_PRELOAD no longer naming the library keeps the live file, the
// only trace of this image (`heapline` converts it and says why). Every
// member is defined, since glibc's own execv, execvp, execl... reach the
// kernel without going through the exported execve. Only the counting
// library has these; a vfork child (python's subprocess) goes straight
// through, its parent's live file untouched.
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cerrno>
#include <cstddef>

#include "intercepted.h"
#include "os.h"
#include "slow_paths.h"
#include "text.h"

namespace {

using Execve = int (*)(const char*, char* const[], char* const[]);

// Resolved at load time: a vfork child must not run dlsym (it may allocate,
// in its parent's memory). Two lookups only (each costs every process a few
// thousand instructions at its start): execv and execvp are these with
// environ, as in glibc; fexecve and execveat are system calls.
Execve g_next_execve = nullptr;
Execve g_next_execvpe = nullptr;

__attribute__((constructor)) void resolve_next_execs() {
  g_next_execve = reinterpret_cast<Execve>(dlsym(RTLD_NEXT, "execve"));
  g_next_execvpe = reinterpret_cast<Execve>(dlsym(RTLD_NEXT, "execvpe"));
}

bool starts_with(const char* text, const char* prefix) {
  while (*prefix != 0 && *text == *prefix) ++text, ++prefix;
  return *prefix == 0;
}

bool contains(const char* text, const char* part) {
  for (; *text != 0; ++text) {
    if (starts_with(text, part)) return true;
  }
  return false;
}

// Whether `envp` still preloads this library (its file name in LD_PRELOAD).
bool preloads_this_library(char* const envp[]) {
  Dl_info self{};
  if (envp == nullptr || dladdr(reinterpret_cast<void*>(&preloads_this_library), &self) == 0 ||
      self.dli_fname == nullptr) {
    return false;
  }
  const char* name = self.dli_fname;
  for (const char* c = self.dli_fname; *c != 0; ++c) {
    if (*c == '/') name = c + 1;
  }
  for (char* const* entry = envp; *entry != nullptr; ++entry) {
    if (starts_with(*entry, "LD_PRELOAD=") && contains(*entry + 11, name)) return true;
  }
  return false;
}

// The file `execvp` runs for `file`: itself when it names a path, else the
// first executable regular file of that name in PATH (glibc's default when
// unset). False when there is none.
bool find_in_path(const char* file, char* found, std::size_t capacity) {
  if (contains(file, "/")) {
    heapline::copy_utf8_prefix(found, capacity, file);
    return true;
  }
  const char* path = heapline::os::environment("PATH");
  if (path == nullptr) path = "/bin:/usr/bin";
  while (true) {
    const char* end = path;
    while (*end != 0 && *end != ':') ++end;
    heapline::TextSink candidate(found, capacity);
    candidate.append(path, static_cast<std::size_t>(end - path));
    if (end != path) candidate.append('/');
    candidate.append(file);
    candidate.c_str();
    if (!candidate.truncated() && heapline::os::executable_file(found)) return true;
    if (*end == 0) return false;
    path = end + 1;
  }
}

// What an exec of `file` starts, for the library: a program that runs it
// (this image gives its live file up), one that does not (why: noted in the
// live file, which stays), or nothing (the exec will fail: nothing
// changes). `searched`: `file` is looked up in PATH.
struct NewImage {
  bool runs_library = false;
  const char* why_not = nullptr;  // with runs_library false: nullptr when the exec will fail
  char path[4096];
};

void judge(const char* file, char* const envp[], bool searched, NewImage* image) {
  image->runs_library = false;
  image->why_not = nullptr;
  if (file == nullptr || file[0] == 0) return;
  const int saved_errno = errno;
  if (searched ? find_in_path(file, image->path, sizeof image->path) : heapline::os::executable_file(file)) {
    if (!searched) heapline::copy_utf8_prefix(image->path, sizeof image->path, file);
    image->why_not = !preloads_this_library(envp) ? "LD_PRELOAD no longer names the library"
                                                  : heapline::os::why_loader_skips(image->path);
    image->runs_library = image->why_not == nullptr;
  }
  errno = saved_errno;
}

// The exec, with the live file given up around it when the new image will
// run the library, or noted in it when it will not (asked only when there
// is a live file); returns what a failed exec returns, with its errno.
template <typename Judge, typename Exec>
int exec_giving_up_live_file(Judge judge_new_image, Exec exec) {
  NewImage image;
  bool retired = false;
  bool noted = false;
  if (heapline::accounting::live_file_to_give_up()) {
    judge_new_image(&image);
    if (image.runs_library) {
      retired = heapline::accounting::retire_live_file_for_exec();
    } else if (image.why_not != nullptr) {
      heapline::accounting::note_exec_not_followed(image.path, image.why_not);
      noted = true;
    }
  }
  const int result = exec();
  const int error = errno;
  if (retired) heapline::accounting::restore_live_file_after_failed_exec();
  if (noted) heapline::accounting::note_exec_not_followed(nullptr, nullptr);
  errno = error;
  return result;
}

int no_next() {
  errno = ENOSYS;
  return -1;
}

int run_execve(const char* path, char* const argv[], char* const envp[]) {
  return exec_giving_up_live_file([&](NewImage* image) { judge(path, envp, false, image); }, [&] {
    if (g_next_execve != nullptr) return g_next_execve(path, argv, envp);
    return heapline::os::exec(path, argv, envp);
  });
}

int run_execvpe(const char* file, char* const argv[], char* const envp[]) {
  return exec_giving_up_live_file([&](NewImage* image) { judge(file, envp, true, image); }, [&] {
    return g_next_execvpe != nullptr ? g_next_execvpe(file, argv, envp) : no_next();
  });
}

int run_execveat(int dirfd, const char* path, char* const argv[], char* const envp[], int flags) {
  return heapline::os::exec_at(dirfd, path, argv, envp, flags);
}

// fexecve as glibc's: execveat(fd, "", AT_EMPTY_PATH), and on a kernel
// without it (before 3.19: ENOSYS) execve of the descriptor's /proc name;
// when that fails because /proc is not there, ENOSYS again.
int run_fexecve(int fd, const char* proc_name, char* const argv[], char* const envp[]) {
  if (run_execveat(fd, "", argv, envp, AT_EMPTY_PATH) == 0 || errno != ENOSYS || fd < 0) return -1;
  heapline::os::exec(proc_name, argv, envp);
  int error = errno;
  int lstat_error = 0;
  if (error == ENOENT && heapline::os::path_kind("/proc/self/fd", &lstat_error) == heapline::os::PathKind::kNothing) {
    error = ENOSYS;
  }
  errno = error;
  return -1;
}

// execl's arguments: `first` and those after it up to the NULL, as an argv
// for `run`, which gets the rest of `arguments` too (execle's envp).
template <typename Run>
int with_argv(const char* first, va_list arguments, Run run) {
  va_list counting;
  va_copy(counting, arguments);
  std::size_t count = 1;
  while (va_arg(counting, const char*) != nullptr) ++count;
  va_end(counting);
  const char* argv[count + 1];
  argv[0] = first;
  for (std::size_t i = 1; i < count; ++i) argv[i] = va_arg(arguments, const char*);
  argv[count] = nullptr;
  return run(const_cast<char* const*>(argv), arguments);
}

}  // namespace

HEAPLINE_EXPORT(execve) int execve(const char* path, char* const argv[], char* const envp[]) noexcept {
  return run_execve(path, argv, envp);
}

HEAPLINE_EXPORT(execv) int execv(const char* path, char* const argv[]) noexcept { return run_execve(path, argv, environ); }

HEAPLINE_EXPORT(execvp) int execvp(const char* file, char* const argv[]) noexcept { return run_execvpe(file, argv, environ); }

HEAPLINE_EXPORT(execvpe) int execvpe(const char* file, char* const argv[], char* const envp[]) noexcept {
  return run_execvpe(file, argv, envp);
}

HEAPLINE_EXPORT(fexecve) int fexecve(int fd, char* const argv[], char* const envp[]) noexcept {
  // The file behind the descriptor, as the kernel will run it.
  char path[64];
  heapline::TextSink name(path, sizeof path);
  name.append("/proc/self/fd/");
  name.append_signed(fd);
  return exec_giving_up_live_file([&](NewImage* image) { judge(fd >= 0 ? name.c_str() : nullptr, envp, false, image); },
                                  [&] { return run_fexecve(fd, name.c_str(), argv, envp); });
}

HEAPLINE_EXPORT(execveat) int execveat(int dirfd, const char* path, char* const argv[], char* const envp[], int flags) noexcept {
  // Judged as execve judges a path; one relative to another directory
  // keeps the live file.
  const bool judged = path != nullptr && (path[0] == '/' || dirfd == AT_FDCWD) && (flags & AT_EMPTY_PATH) == 0;
  return exec_giving_up_live_file([&](NewImage* image) { judge(judged ? path : nullptr, envp, false, image); }, [&] {
    return run_execveat(dirfd, path, argv, envp, flags);
  });
}

HEAPLINE_EXPORT(execl) int execl(const char* path, const char* arg, ...) noexcept {
  va_list arguments;
  va_start(arguments, arg);
  const int result =
      with_argv(arg, arguments, [&](char* const* argv, va_list) { return run_execve(path, argv, environ); });
  va_end(arguments);
  return result;
}

HEAPLINE_EXPORT(execle) int execle(const char* path, const char* arg, ...) noexcept {
  va_list arguments;
  va_start(arguments, arg);
  const int result = with_argv(arg, arguments, [&](char* const* argv, va_list rest) {
    va_arg(rest, const char*);  // the NULL that ends the arguments
    return run_execve(path, argv, va_arg(rest, char* const*));
  });
  va_end(arguments);
  return result;
}

HEAPLINE_EXPORT(execlp) int execlp(const char* file, const char* arg, ...) noexcept {
  va_list arguments;
  va_start(arguments, arg);
  const int result =
      with_argv(arg, arguments, [&](char* const* argv, va_list) { return run_execvpe(file, argv, environ); });
  va_end(arguments);
  return result;
}
