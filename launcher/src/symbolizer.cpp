#include "symbolizer.h"

#include <cxxabi.h>
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include <heapline/regular_file.h>

namespace heapline::launcher {

namespace {

std::string hex(std::uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string hex_bytes(const unsigned char* bytes, int count) {
  static const char kHex[] = "0123456789abcdef";
  std::string text;
  for (int i = 0; i < count; ++i) {
    text += kHex[bytes[i] >> 4];
    text += kHex[bytes[i] & 15];
  }
  return text;
}

constexpr const char* kBuildIdDirectory = "/usr/lib/debug/.build-id/";

// A module's separate debug file: looked up by build id only, in
// /usr/lib/debug/.build-id, and read only when it is a regular file
// (RegularFile). Never downloaded (libdw's standard lookup asks debuginfod
// when DEBUGINFOD_URLS is set), never looked for beside the module (a
// report names the module: its directory is anyone's).
int find_debuginfo_by_build_id(Dwfl_Module* module, void**, const char*, Dwarf_Addr, const char*, const char*,
                               GElf_Word, char** debuginfo_file_name) {
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int length = dwfl_module_build_id(module, &bits, &vaddr);
  if (length < 2) return -1;
  const std::string id = hex_bytes(bits, length);
  const std::string path = kBuildIdDirectory + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
  RegularFile file = RegularFile::open(path);
  if (!file.ok()) return -1;
  *debuginfo_file_name = strdup(path.c_str());
  return file.release();
}

// The main file of a module is always given (module_for): libdw never
// looks for one.
int find_no_elf(Dwfl_Module*, void**, const char*, Dwarf_Addr, char**, Elf**) { return -1; }

char* g_debuginfo_path = nullptr;
const Dwfl_Callbacks kOffline = {
    find_no_elf,
    find_debuginfo_by_build_id,
    dwfl_offline_section_address,
    &g_debuginfo_path,
};

// A module a report names, opened to be read: a regular file (never a FIFO,
// a device, a directory) that holds an ELF image (not a file of /proc,
// whose size is 0, nor any other file's text); else `problem` says why not.
RegularFile open_module(const std::string& path, std::string& problem) {
  RegularFile file = RegularFile::open(path);
  if (!file.ok()) {
    problem = file.error();
    return file;
  }
  unsigned char magic[SELFMAG] = {};
  if (file.size() < sizeof(Elf64_Ehdr) || ::pread(file.fd(), magic, sizeof magic, 0) != SELFMAG ||
      std::memcmp(magic, ELFMAG, SELFMAG) != 0) {
    problem = path + " is not an ELF file";
  }
  return file;
}

}  // namespace

std::string function_name(const char* symbol) {
  if (symbol == nullptr) return "";
  // __cxa_demangle also reads a bare type ("i" is int, "Dn" decltype(nullptr)):
  // only a symbol name that starts with _Z is Itanium-mangled, the rest are
  // C names (or another language's) and stay as the binary spells them.
  if (std::strncmp(symbol, "_Z", 2) != 0) return symbol;
  int status = 0;
  char* plain = abi::__cxa_demangle(symbol, nullptr, nullptr, &status);
  if (status != 0 || plain == nullptr) return symbol;
  std::string result = plain;
  std::free(plain);
  return result;
}

std::string FrameName::text() const {
  if (function.empty()) return module + "+" + hex(address);
  if (!file.empty()) return function + " (" + std::filesystem::path(file).filename().string() + ":" + std::to_string(line) + ")";
  return function + "+" + hex(offset) + " (" + module + "+" + hex(address) + ")";
}

std::string FrameName::short_text() const { return function.empty() ? module + "+" + hex(address) : function; }

struct Symbolizer::Module {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  GElf_Addr bias = 0;
  std::string problem;
  ~Module() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }
};

Symbolizer::Symbolizer() = default;
Symbolizer::~Symbolizer() = default;

Symbolizer::Module& Symbolizer::module_for(const ProfileModuleData& wanted) {
  auto found = modules_.find(wanted.path);
  if (found != modules_.end()) return *found->second;
  auto module = std::make_unique<Module>();
  RegularFile file = open_module(wanted.path, module->problem);
  if (!module->problem.empty()) {
    // said in problems()
  } else if ((module->dwfl = dwfl_begin(&kOffline)) != nullptr) {
    // libdw reads the file from this descriptor, never by the name again.
    module->module = dwfl_report_offline(module->dwfl, wanted.path.c_str(), wanted.path.c_str(), file.release());
    dwfl_report_end(module->dwfl, nullptr, nullptr);
  }
  if (!module->problem.empty()) {
    // open_module said why
  } else if (module->module == nullptr) {
    module->problem = wanted.path + ": cannot be read (" + dwfl_errmsg(-1) + ")";
  } else {
    const unsigned char* bits = nullptr;
    GElf_Addr vaddr = 0;
    const int length = dwfl_module_build_id(module->module, &bits, &vaddr);
    const std::string build_id = length > 0 ? hex_bytes(bits, length) : "";
    if (!wanted.build_id.empty() && build_id != wanted.build_id) {
      module->problem = wanted.path + ": build id " + (build_id.empty() ? "missing" : build_id) +
                        ", the process had " + wanted.build_id + " (the file changed since)";
      module->module = nullptr;
    } else if (dwfl_module_getelf(module->module, &module->bias) == nullptr) {
      module->problem = wanted.path + ": not an ELF file libdw can read";
      module->module = nullptr;
    }
  }
  Module& result = *module;
  modules_.emplace(wanted.path, std::move(module));
  return result;
}

FrameName Symbolizer::name(const ProfileData& profile, const ProfileFrameData& frame) {
  FrameName name;
  name.address = frame.address;
  if (frame.module < 0 || static_cast<std::size_t>(frame.module) >= profile.modules.size()) {
    name.module = "?";
    return name;
  }
  const ProfileModuleData& wanted = profile.modules[static_cast<std::size_t>(frame.module)];
  name.module = std::filesystem::path(wanted.path).filename().string();
  const auto key = std::make_pair(wanted.path, frame.address);
  if (auto cached = names_.find(key); cached != names_.end()) return cached->second;
  Module& module = module_for(wanted);
  if (module.module != nullptr && frame.address > 0) {
    // A return address: the call is the instruction before it.
    const Dwarf_Addr address = frame.address - 1 + module.bias;
    GElf_Off offset = 0;
    GElf_Sym symbol;
    const char* function = dwfl_module_addrinfo(module.module, address, &offset, &symbol, nullptr, nullptr, nullptr);
    name.function = function_name(function);
    if (function != nullptr) name.offset = offset + 1;  // looked up one byte before the return address
    // A versioned dynamic symbol reads "__libc_start_main@@GLIBC_2.34".
    if (const std::size_t at = name.function.find('@'); at != std::string::npos && at > 0) name.function.resize(at);
    if (Dwfl_Line* line = dwfl_module_getsrc(module.module, address); line != nullptr) {
      int number = 0;
      const char* file = dwfl_lineinfo(line, nullptr, &number, nullptr, nullptr, nullptr);
      if (file != nullptr) {
        name.file = file;
        name.line = number;
      }
    }
  }
  names_.emplace(key, name);
  return name;
}

std::vector<std::string> Symbolizer::problems() const {
  std::vector<std::string> lines;
  for (const auto& [path, module] : modules_) {
    if (!module->problem.empty()) lines.push_back(module->problem);
  }
  return lines;
}

}  // namespace heapline::launcher
