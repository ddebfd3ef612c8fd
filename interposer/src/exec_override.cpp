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
#include <elf.h>
#include <link.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

#include "intercepted.h"
#include "live_header.h"
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

// Why the loader will not run the library in the program at `path` (an
// executable file), or nullptr when it will: not in a statically linked
// program (no PT_INTERP), nor in secure mode (set-user-ID or set-group-ID
// to another user, file capabilities), which ignores LD_PRELOAD. A script
// is judged by its interpreter, once; a file that cannot be read is given
// the benefit of the doubt.
const char* why_loader_skips(const char* path, int depth = 0) {
  struct stat info;
  if (stat(path, &info) != 0) return "not found";
  // On a nosuid filesystem the kernel grants none of these.
  struct statvfs filesystem;
  const bool privileges = statvfs(path, &filesystem) != 0 || (filesystem.f_flag & ST_NOSUID) == 0;
  if (privileges && (info.st_mode & S_ISUID) != 0 && info.st_uid != geteuid()) {
    return "set-user-ID: the loader ignores LD_PRELOAD";
  }
  if (privileges && (info.st_mode & S_ISGID) != 0 && info.st_gid != getegid()) {
    return "set-group-ID: the loader ignores LD_PRELOAD";
  }
  if (privileges && getxattr(path, "security.capability", nullptr, 0) > 0) {
    return "file capabilities: the loader ignores LD_PRELOAD";
  }
  const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return nullptr;
  ElfW(Ehdr) header;
  const ssize_t got = pread(fd, &header, sizeof header, 0);
  const char* why = nullptr;
  const unsigned char* magic = header.e_ident;
  if (got >= 2 && magic[0] == '#' && magic[1] == '!' && depth == 0) {
    // "#!INTERPRETER [ARGUMENT]"
    char line[256];
    const ssize_t length = pread(fd, line, sizeof line - 1, 2);
    line[length > 0 ? length : 0] = 0;
    char* interpreter = line;
    while (*interpreter == ' ' || *interpreter == '\t') ++interpreter;
    char* end = interpreter;
    while (*end != 0 && *end != ' ' && *end != '\t' && *end != '\n') ++end;
    *end = 0;
    if (interpreter[0] != 0 && why_loader_skips(interpreter, depth + 1) != nullptr) {
      why = "a script whose interpreter the library cannot follow";
    }
  } else if (got == static_cast<ssize_t>(sizeof header) && magic[EI_MAG0] == ELFMAG0 && magic[EI_MAG1] == ELFMAG1 &&
             magic[EI_MAG2] == ELFMAG2 && magic[EI_MAG3] == ELFMAG3 &&
             header.e_phentsize == sizeof(ElfW(Phdr)) && header.e_phnum < 256) {
    why = "statically linked: no loader runs";  // until its PT_INTERP is found
    for (unsigned i = 0; i < header.e_phnum && why != nullptr; ++i) {
      ElfW(Phdr) segment;
      if (pread(fd, &segment, sizeof segment, static_cast<off_t>(header.e_phoff + i * sizeof segment)) !=
              static_cast<ssize_t>(sizeof segment) ||
          segment.p_type == PT_INTERP) {
        why = nullptr;
      }
    }
  }
  close(fd);
  return why;
}

// The file `execvp` runs for `file`: itself when it names a path, else the
// first executable regular file of that name in PATH (glibc's default when
// unset). False when there is none.
bool find_in_path(const char* file, char* found, std::size_t capacity) {
  if (contains(file, "/")) {
    heapline::copy_utf8_prefix(found, capacity, file);
    return true;
  }
  const char* path = getenv("PATH");
  if (path == nullptr) path = "/bin:/usr/bin";
  while (true) {
    const char* end = path;
    while (*end != 0 && *end != ':') ++end;
    heapline::TextSink candidate(found, capacity);
    candidate.append(path, static_cast<std::size_t>(end - path));
    if (end != path) candidate.append('/');
    candidate.append(file);
    candidate.c_str();
    struct stat info;
    if (!candidate.truncated() && stat(found, &info) == 0 && S_ISREG(info.st_mode) &&
        faccessat(AT_FDCWD, found, X_OK, AT_EACCESS) == 0) {
      return true;
    }
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
  if (searched ? find_in_path(file, image->path, sizeof image->path)
               : faccessat(AT_FDCWD, file, X_OK, AT_EACCESS) == 0) {
    if (!searched) heapline::copy_utf8_prefix(image->path, sizeof image->path, file);
    image->why_not = !preloads_this_library(envp) ? "LD_PRELOAD no longer names the library"
                                                  : why_loader_skips(image->path);
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
    return static_cast<int>(syscall(SYS_execve, path, argv, envp));
  });
}

int run_execvpe(const char* file, char* const argv[], char* const envp[]) {
  return exec_giving_up_live_file([&](NewImage* image) { judge(file, envp, true, image); }, [&] {
    return g_next_execvpe != nullptr ? g_next_execvpe(file, argv, envp) : no_next();
  });
}

int run_execveat(int dirfd, const char* path, char* const argv[], char* const envp[], int flags) {
  return static_cast<int>(syscall(SYS_execveat, dirfd, path, argv, envp, flags));
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
                                  [&] { return run_execveat(fd, "", argv, envp, AT_EMPTY_PATH); });
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
