#include "symbolizer.h"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

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

// Debug files are looked up by build id only (/usr/lib/debug/.build-id),
// never downloaded.
char* g_debuginfo_path = nullptr;
const Dwfl_Callbacks kOffline = {
    dwfl_build_id_find_elf,
    dwfl_standard_find_debuginfo,
    dwfl_offline_section_address,
    &g_debuginfo_path,
};

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
  return function + " (" + module + ")";
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
  module->dwfl = dwfl_begin(&kOffline);
  if (module->dwfl != nullptr) {
    module->module = dwfl_report_offline(module->dwfl, wanted.path.c_str(), wanted.path.c_str(), -1);
    dwfl_report_end(module->dwfl, nullptr, nullptr);
  }
  if (module->module == nullptr) {
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
