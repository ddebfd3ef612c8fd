// What kind of file a stat mode is, for a message ("a FIFO", "a
// directory"): the one wording of the readers (heapline/regular_file.h) and
// the writers (heapline/output_file.h).
#pragma once

#include <sys/stat.h>

namespace heapline {

inline const char* file_kind_name(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    default: return "not a regular file";
  }
}

}  // namespace heapline
