// Where heapline's own files are, found from the running program's own
// location: the one rule by which the launcher finds libheapline.so and
// heapline-bench finds its scenario catalogues, malloc_churn and the preload
// libraries.
//
// A build tree puts every program and preload library in one directory
// (build/.../bin) and reads its data (scenarios/, bench/) from the source
// tree it was configured from. An install (cmake --install, the Debian
// package) puts the programs in <prefix>/bin, the preload libraries and
// malloc_churn in <libdir>/heapline and the data in <datadir>/heapline:
// their places relative to bin/ are fixed when CMake configures
// (install_dirs.h), so the same files work under any prefix.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

#include "heapline/install_dirs.h"

namespace heapline {

struct InstallLayout {
  bool installed = false;
  std::filesystem::path programs;   // the running program's directory
  std::filesystem::path libraries;  // libheapline.so, libheapline_null.so, libheapline_accuracy.so, malloc_churn
  std::filesystem::path data;       // scenarios/*.json, bench/python_churn.py
};

// The layout of programs in `programs_dir`. An install is told by its
// library directory (<libdir>/heapline beside bin/), which a build tree
// never has: a build tree's programs are all in bin/, whether or not
// libheapline.so is built yet.
inline InstallLayout layout_of(const std::filesystem::path& programs_dir) {
  InstallLayout layout;
  layout.programs = programs_dir;
  const std::filesystem::path installed_libraries =
      (programs_dir / install_dirs::kLibrariesFromPrograms).lexically_normal();
  std::error_code error;
  if (std::filesystem::is_directory(installed_libraries, error)) {
    layout.installed = true;
    layout.libraries = installed_libraries;
    layout.data = (programs_dir / install_dirs::kDataFromPrograms).lexically_normal();
  } else {
    layout.libraries = programs_dir;
    layout.data = install_dirs::kSourceTree;
  }
  return layout;
}

// libheapline.so among the preload libraries in `libraries` (a layout's,
// or heapline-bench's --bin-dir): the one place its name and place are
// said, for the launcher's default and heapline-bench's
// (tools/lib/library.sh says the same for the scripts).
inline std::filesystem::path heapline_library(const std::filesystem::path& libraries) {
  return libraries / "libheapline.so";
}

// The layout of the running program (/proc/self/exe, symbolic links
// followed: a link to heapline elsewhere finds the files of its target).
// Without /proc, the current directory stands for the program's.
inline InstallLayout own_layout() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return layout_of(error ? std::filesystem::path(".") : self.parent_path());
}

}  // namespace heapline
