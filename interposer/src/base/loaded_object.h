// What a loaded object's program headers say, as dl_iterate_phdr hands them
// over: the one walk of `dlpi_phdr[0, dlpi_phnum)` in the library. The exit
// report finds whose malloc the program calls, the mapped figure tells the
// library's and the allocator's own mappings from the program's, and the
// sampler names the modules of its stacks; each needs an object's span or
// its build id, and each read one header past the table when it walked them
// itself.
#pragma once

#include <link.h>

#include <cstdint>

namespace heapline::loaded {

// The addresses the object's PT_LOAD segments cover, [begin, end), at run
// time (load bias applied). Empty (begin >= end) for an object without one.
struct Span {
  std::uintptr_t begin = UINTPTR_MAX;
  std::uintptr_t end = 0;
  bool empty() const { return begin >= end; }
  bool contains(std::uintptr_t address) const { return address >= begin && address < end; }
};
Span span_of(const dl_phdr_info& info);
// The span of the loaded object (shared library or executable) whose code
// holds `code`; empty when none does. Walks the loaded objects
// (dl_iterate_phdr: the loader's lock).
Span span_of_object_holding(const void* code);

// The object's GNU build id (NT_GNU_BUILD_ID in a PT_NOTE segment), read in
// place; {nullptr, 0} when it carries none or its notes are cut short.
struct BuildId {
  const std::uint8_t* bytes = nullptr;
  std::uint32_t size = 0;
};
BuildId build_id_of(const dl_phdr_info& info);

}  // namespace heapline::loaded
