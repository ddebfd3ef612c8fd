// The one check of a library a program is told to preload (the launcher's
// --lib, heapline-bench's --lib and --build), made before anything runs:
// ld.so would say it only afterwards, inside the program's own output, and
// run the program without the library. Each program words the problem its
// own way; what counts as a problem is decided here.
#pragma once

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace heapline {

enum class SharedObjectProblem {
  none,
  missing,            // no such file
  not_regular_file,   // a directory, a FIFO, a device
  unreadable,         // cannot be opened or read, or shorter than an ELF header
  not_elf,            // no ELF magic
  not_elf64,          // an ELF file of another class (32-bit)
  other_machine,      // a 64-bit ELF file for another processor
  not_shared_object,  // an executable, an object file: LD_PRELOAD needs ET_DYN
};

// What keeps `path` from being preloaded here; `elf_type`, when given,
// receives the ELF type of a file that has an ELF header. Never blocks (a
// FIFO is opened without waiting for a writer) and follows symbolic links as
// ld.so does.
inline SharedObjectProblem shared_object_problem_of(const std::string& path, unsigned* elf_type = nullptr) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return errno == ENOENT || errno == ENOTDIR ? SharedObjectProblem::missing : SharedObjectProblem::unreadable;
  struct stat info {};
  Elf64_Ehdr header{};
  SharedObjectProblem problem = SharedObjectProblem::none;
#if defined(__x86_64__)
  constexpr int kMachine = EM_X86_64;
#elif defined(__aarch64__)
  constexpr int kMachine = EM_AARCH64;
#else
  constexpr int kMachine = -1;  // not checked
#endif
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    problem = SharedObjectProblem::not_regular_file;
  } else if (::pread(fd, &header, sizeof header, 0) != static_cast<ssize_t>(sizeof header)) {
    problem = SharedObjectProblem::unreadable;
  } else if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    problem = SharedObjectProblem::not_elf;
  } else if (header.e_ident[EI_CLASS] != ELFCLASS64) {
    problem = SharedObjectProblem::not_elf64;
  } else if (kMachine >= 0 && header.e_machine != kMachine) {
    problem = SharedObjectProblem::other_machine;
  } else if (header.e_type != ET_DYN) {
    problem = SharedObjectProblem::not_shared_object;
  }
  if (elf_type != nullptr && problem != SharedObjectProblem::not_regular_file &&
      problem != SharedObjectProblem::unreadable && problem != SharedObjectProblem::not_elf)
    *elf_type = header.e_type;
  ::close(fd);
  return problem;
}

}  // namespace heapline
