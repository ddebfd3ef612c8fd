#include "loaded_object.h"

#include <elf.h>
#include <string.h>

namespace heapline::loaded {

Span span_of(const dl_phdr_info& info) {
  Span span;
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info.dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    const std::uintptr_t start = info.dlpi_addr + segment.p_vaddr;
    if (start < span.begin) span.begin = start;
    if (start + segment.p_memsz > span.end) span.end = start + segment.p_memsz;
  }
  return span;
}

Span span_of_object_holding(const void* code) {
  struct Search {
    std::uintptr_t address;
    Span span;
  } search{reinterpret_cast<std::uintptr_t>(code), {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        const Span span = span_of(*info);
        if (!span.contains(s->address)) return 0;
        s->span = span;
        return 1;
      },
      &search);
  return search.span;
}

BuildId build_id_of(const dl_phdr_info& info) {
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info.dlpi_phdr[i];
    if (segment.p_type != PT_NOTE) continue;
    const auto* note = reinterpret_cast<const std::uint8_t*>(info.dlpi_addr + segment.p_vaddr);
    const std::uint8_t* end = note + segment.p_filesz;
    // Each note: a header, then its name and its descriptor, each padded to
    // 4 bytes; a note that runs past the segment ends the walk.
    while (static_cast<std::size_t>(end - note) >= sizeof(ElfW(Nhdr))) {
      const auto* header = reinterpret_cast<const ElfW(Nhdr)*>(note);
      const std::size_t name_bytes = (std::size_t{header->n_namesz} + 3) & ~std::size_t{3};
      const std::size_t desc_bytes = (std::size_t{header->n_descsz} + 3) & ~std::size_t{3};
      const std::size_t room = static_cast<std::size_t>(end - note) - sizeof(ElfW(Nhdr));
      if (name_bytes > room || desc_bytes > room - name_bytes) break;
      const std::uint8_t* name = note + sizeof(ElfW(Nhdr));
      const std::uint8_t* desc = name + name_bytes;
      if (header->n_type == NT_GNU_BUILD_ID && header->n_namesz == 4 && memcmp(name, "GNU", 4) == 0)
        return {desc, header->n_descsz};
      note = desc + desc_bytes;
    }
  }
  return {};
}

}  // namespace heapline::loaded
