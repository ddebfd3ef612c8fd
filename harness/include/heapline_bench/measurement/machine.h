// The machine a point was measured on. Points are compared only with points
// of the same fingerprint: absolute times, and even ratios, move between
// machines (GitHub's runners change hardware from one job to the next).
#pragma once

#include <string>

namespace heapline::bench {

struct Machine {
  std::string cpu_model;
  int cores = 0;
  std::string kernel;
  std::string glibc;
  std::string compiler;
  std::string runner_image;  // GitHub's ImageOS/ImageVersion; empty elsewhere
  bool operator==(const Machine&) const = default;

  // A short stable id (FNV-1a of every field above): any change of machine,
  // kernel, glibc, compiler or runner image starts a new series.
  std::string fingerprint() const;
  // One line for people: "Intel Xeon ... , 2 cores, Linux 6.1, glibc 2.36".
  std::string describe() const;
};

Machine this_machine();

}  // namespace heapline::bench
