#include "heapline_bench/measurement/machine.h"

#include <gnu/libc-version.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace heapline::bench {
namespace {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(' '));
        return value;
      }
    }
  }
  return "unknown";
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

}  // namespace

std::string Machine::fingerprint() const {
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
  for (const std::string& field : {cpu_model, std::to_string(cores), kernel, glibc, compiler, runner_image}) {
    for (unsigned char c : field) hash = (hash ^ c) * 0x100000001b3ULL;
    hash = (hash ^ 0x1f) * 0x100000001b3ULL;  // field separator
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return std::string(text, 12);
}

std::string Machine::describe() const {
  std::string out = cpu_model + ", " + std::to_string(cores) + (cores == 1 ? " core" : " cores") + ", Linux " +
                    kernel + ", glibc " + glibc;
  if (!runner_image.empty()) out += ", runner " + runner_image;
  return out;
}

Machine this_machine() {
  Machine machine;
  machine.cpu_model = cpu_model_name();
  machine.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  utsname names{};
  if (uname(&names) == 0) machine.kernel = names.release;
  machine.glibc = gnu_get_libc_version();
  machine.compiler = HEAPLINE_COMPILER;
  const auto image = environment("ImageOS");
  if (!image.empty()) machine.runner_image = image + " " + environment("ImageVersion");
  return machine;
}

}  // namespace heapline::bench
