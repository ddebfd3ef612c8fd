// The driver of a fuzz target in an ordinary build (any compiler, no
// libFuzzer): runs LLVMFuzzerTestOneInput once on each file named on the
// command line, or on each file of a directory named there, so that ctest
// replays the seed corpus and every crash ever found on every build. A
// target reports a broken property by aborting, which fails the replay.
//
// An empty corpus fails too: a replay of nothing would pass whatever the
// target does.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

bool replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
    return false;
  }
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  // A copy of exactly the input's size, so that a read past its end is a
  // read past an allocation (which the sanitizer build sees).
  std::vector<std::uint8_t> input(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(input.empty() ? nullptr : input.data(), input.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path = argv[i];
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
      std::vector<std::filesystem::path> files;
      for (const auto& entry : std::filesystem::recursive_directory_iterator(path))
        if (entry.is_regular_file()) files.push_back(entry.path());
      std::sort(files.begin(), files.end());  // the same order on every machine
      for (const auto& file : files) {
        if (!replay(file)) return 1;
        ++inputs;
      }
    } else {
      if (!replay(path)) return 1;
      ++inputs;
    }
  }
  if (inputs == 0) {
    std::fprintf(stderr, "replay: no input files (a seed corpus is empty or missing)\n");
    return 1;
  }
  std::printf("replay: %zu inputs, no property broken\n", inputs);
  return 0;
}
