// Names a profile's frames offline, after the program has ended: each
// frame (module path, build id, address in the module's ELF file) becomes
// its function and, where the module or its separate debug file
// (/usr/lib/debug/.build-id/...) has line tables, its file and line.
// elfutils' libdw reads the files; nothing is run, nothing runs in the
// program. A module whose file is gone, or whose build id is no longer the
// one recorded (the file was rebuilt since), is named by path and address.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <heapline/report_reader.h>

namespace heapline::launcher {

struct FrameName {
  std::string function;  // demangled; empty when unknown
  std::string file;      // empty when no line table
  int line = 0;
  std::string module;    // the module's file name (no directory)
  std::uint64_t address = 0;
  std::uint64_t offset = 0;  // from the function's start (the return address's)
  // "function (file:line)"; without a line table "function+0xOFFSET
  // (module+0xADDR)", so that two sites in one function read apart; or
  // "module+0xADDR".
  std::string text() const;
  // The function, or "module+0xADDR" when unknown: a stack's element.
  std::string short_text() const;
};

// A symbol's name as a frame shows it: demangled when it is an Itanium C++
// name (it starts with _Z), as it is otherwise (a C function named `i` is
// `i`, never `int`).
std::string function_name(const char* symbol);

class Symbolizer {
 public:
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // A frame of `profile` (a return address: the call it returns from is
  // looked up, one byte before it).
  FrameName name(const ProfileData& profile, const ProfileFrameData& frame);
  // Why modules could not be named ("PATH: build id differs"), one line each.
  std::vector<std::string> problems() const;

 private:
  struct Module;
  Module& module_for(const ProfileModuleData& module);
  std::map<std::string, std::unique_ptr<Module>> modules_;
  std::map<std::pair<std::string, std::uint64_t>, FrameName> names_;
};

}  // namespace heapline::launcher
