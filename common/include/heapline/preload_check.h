// The one answer to "will ld.so preload a library into this program?", for
// the three places that ask it: the interposer, when the program it is in
// execs another (does the new image run the library, or is this image's
// live file the only trace?), the launcher, before it runs the command, and
// heapline-bench, when a run shows no library. It is judged as the kernel's
// execve(2) decides it: a script (#!) by its interpreter, whose own
// set-user-ID and set-group-ID bits the kernel ignores; a set-ID bit or file
// capabilities by whether they change the process's credentials, which is
// what puts ld.so in secure mode (AT_SECURE), where it preloads no library
// named by a path; none of that on a nosuid filesystem; and a program with
// no PT_INTERP (statically linked, static-pie included) has no ld.so at all.
//
// Async-signal-safe and allocation-free (the interposer asks it inside an
// exec call, possibly in a vfork child): system calls and caller buffers
// only. A file that cannot be read is given the benefit of the doubt.
#pragma once

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace heapline {

enum class PreloadBlocker {
  none,               // ld.so runs and preloads (or the file could not be read)
  missing,            // no such regular file: the exec will fail
  set_user_id,        // runs as another user: secure mode
  set_group_id,       // runs as another group: secure mode
  file_capabilities,  // gains capabilities: secure mode
  statically_linked,  // no ld.so runs at all
};

// The kernel follows at most this many #! interpreters in a row.
inline constexpr int kMaxInterpreterDepth = 4;

namespace preload_check_detail {

inline void copy_name(char* out, std::size_t capacity, const char* name) {
  if (out == nullptr || capacity == 0) return;
  std::size_t length = std::strlen(name);
  if (length >= capacity) length = capacity - 1;
  std::memcpy(out, name, length);
  out[length] = 0;
}

// Whether the ELF image in `fd` (its header `header`) names an interpreter;
// true (the benefit of the doubt) when it cannot be told.
inline bool names_interpreter(int fd, const Elf64_Ehdr& header) {
  // The kernel refuses program headers past 64 KiB (ENOEXEC): no reading
  // of a hostile count beyond that.
  if (header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum > 65536 / sizeof(Elf64_Phdr)) return true;
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    const off_t at = static_cast<off_t>(header.e_phoff + i * sizeof segment);
    if (::pread(fd, &segment, sizeof segment, at) != static_cast<ssize_t>(sizeof segment)) return true;
    if (segment.p_type == PT_INTERP) return true;
  }
  return false;
}

}  // namespace preload_check_detail

// The blocker in words, the same for every program that says it ("" for
// none): "statically linked: no loader runs", "set-user-ID: the loader
// ignores LD_PRELOAD", ...
inline const char* preload_blocker_text(PreloadBlocker blocker) {
  switch (blocker) {
    case PreloadBlocker::none:
      return "";
    case PreloadBlocker::missing:
      return "not found";
    case PreloadBlocker::set_user_id:
      return "set-user-ID: the loader ignores LD_PRELOAD";
    case PreloadBlocker::set_group_id:
      return "set-group-ID: the loader ignores LD_PRELOAD";
    case PreloadBlocker::file_capabilities:
      return "file capabilities: the loader ignores LD_PRELOAD";
    case PreloadBlocker::statically_linked:
      return "statically linked: no loader runs";
  }
  return "";
}

// What keeps ld.so from preloading a library into the program at `path`
// (a path, as execve takes it: not looked up in PATH). `decided_by`, when
// given, receives the file that decided: `path`, or the interpreter of a
// script (of a script's interpreter, and so on).
inline PreloadBlocker preload_blocker_of(const char* path, char* decided_by = nullptr, std::size_t capacity = 0,
                                         int depth = 0) {
  using preload_check_detail::copy_name;
  copy_name(decided_by, capacity, path);
  struct stat info;
  if (::stat(path, &info) != 0 || !S_ISREG(info.st_mode)) return PreloadBlocker::missing;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return PreloadBlocker::none;
  union {
    Elf64_Ehdr elf;
    char text[256];
  } head;
  std::memset(&head, 0, sizeof head);
  const ssize_t got = ::pread(fd, head.text, sizeof head.text - 1, 0);
  if (got >= 2 && head.text[0] == '#' && head.text[1] == '!') {
    ::close(fd);
    if (depth >= kMaxInterpreterDepth) return PreloadBlocker::none;
    // "#!INTERPRETER [ARGUMENT]": the kernel runs INTERPRETER, with its own
    // set-ID bits, capabilities and ELF headers; this file's are ignored.
    char* interpreter = head.text + 2;
    while (*interpreter == ' ' || *interpreter == '\t') ++interpreter;
    char* end = interpreter;
    while (*end != 0 && *end != ' ' && *end != '\t' && *end != '\n') ++end;
    *end = 0;
    if (interpreter[0] == 0) return PreloadBlocker::none;  // ENOEXEC: execvp runs it with /bin/sh
    return preload_blocker_of(interpreter, decided_by, capacity, depth + 1);
  }
  // The kernel grants no set-ID bit nor file capability on a nosuid mount.
  struct statvfs filesystem;
  const bool privileges = ::statvfs(path, &filesystem) != 0 || (filesystem.f_flag & ST_NOSUID) == 0;
  PreloadBlocker blocker = PreloadBlocker::none;
  // Secure mode when the new effective IDs differ from the real ones (the
  // kernel's cap_bprm_creds_from_file); file capabilities count unless the
  // real user is root.
  if (privileges && (info.st_mode & S_ISUID) != 0 && info.st_uid != ::getuid()) {
    blocker = PreloadBlocker::set_user_id;
  } else if (privileges && (info.st_mode & S_ISGID) != 0 && info.st_gid != ::getgid()) {
    blocker = PreloadBlocker::set_group_id;
  } else if (privileges && ::getuid() != 0 && ::getxattr(path, "security.capability", nullptr, 0) > 0) {
    blocker = PreloadBlocker::file_capabilities;
  } else if (got >= static_cast<ssize_t>(sizeof(Elf64_Ehdr)) && std::memcmp(head.elf.e_ident, ELFMAG, SELFMAG) == 0 &&
             head.elf.e_ident[EI_CLASS] == ELFCLASS64 && !preload_check_detail::names_interpreter(fd, head.elf)) {
    blocker = PreloadBlocker::statically_linked;
  }
  ::close(fd);
  return blocker;
}

}  // namespace heapline
