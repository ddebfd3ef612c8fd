// A loaded object's program headers (loaded_object.h), the one walk of them
// in the library: its span takes every PT_LOAD segment and nothing past the
// table, and its build id is read only from inside its note segment,
// whatever the notes claim. The tables are heap arrays of their exact size,
// so under tools/test.sh --sanitize a read past one is a report too.
#include <elf.h>
#include <link.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "loaded_object.h"

namespace heapline {
namespace {

ElfW(Phdr) segment(ElfW(Word) type, std::uintptr_t vaddr, std::uintptr_t memsz) {
  ElfW(Phdr) header{};
  header.p_type = type;
  header.p_vaddr = vaddr;
  header.p_memsz = memsz;
  header.p_filesz = memsz;
  return header;
}

// An object whose program header table holds `headers`, loaded at `bias`.
struct FakeObject {
  std::unique_ptr<ElfW(Phdr)[]> table;
  dl_phdr_info info{};
  FakeObject(const std::vector<ElfW(Phdr)>& headers, std::uintptr_t bias, std::size_t counted) {
    table = std::make_unique<ElfW(Phdr)[]>(headers.size());
    std::copy(headers.begin(), headers.end(), table.get());
    info.dlpi_addr = bias;
    info.dlpi_name = "fake.so";
    info.dlpi_phdr = table.get();
    info.dlpi_phnum = static_cast<ElfW(Half)>(counted);
  }
};

TEST(LoadedObject, TheSpanCoversEveryLoadSegmentAtItsLoadBias) {
  const FakeObject object({segment(PT_PHDR, 0x40, 0x1c0), segment(PT_LOAD, 0x1000, 0x500),
                           segment(PT_NOTE, 0x300, 0x24), segment(PT_LOAD, 0x0, 0x800),
                           segment(PT_LOAD, 0x3000, 0x2100), segment(PT_GNU_STACK, 0, 0)},
                          0x7f0000000000, 6);
  const loaded::Span span = loaded::span_of(object.info);
  EXPECT_EQ(span.begin, 0x7f0000000000u);
  EXPECT_EQ(span.end, 0x7f0000005100u);
  EXPECT_FALSE(span.empty());
  EXPECT_TRUE(span.contains(0x7f0000000000));
  EXPECT_TRUE(span.contains(0x7f00000050ff));
  EXPECT_FALSE(span.contains(0x7f0000005100));
  EXPECT_FALSE(span.contains(0x7effffffffff));
}

TEST(LoadedObject, AHeaderPastTheTableIsNotTheObjects) {
  // The table says two headers; what lies after them in memory (here a
  // load segment far below and far above) belongs to something else.
  const FakeObject object({segment(PT_LOAD, 0x10000, 0x1000), segment(PT_LOAD, 0x12000, 0x1000),
                           segment(PT_LOAD, 0x0, 0x100000)},
                          0x400000, 2);
  const loaded::Span span = loaded::span_of(object.info);
  EXPECT_EQ(span.begin, 0x410000u);
  EXPECT_EQ(span.end, 0x413000u);
}

TEST(LoadedObject, AnObjectWithoutALoadSegmentHasAnEmptySpan) {
  const FakeObject object({segment(PT_NOTE, 0x300, 0x24), segment(PT_GNU_STACK, 0, 0)}, 0x1000, 2);
  EXPECT_TRUE(loaded::span_of(object.info).empty());
  EXPECT_FALSE(loaded::span_of(object.info).contains(0x1300));
  const FakeObject nothing({}, 0x1000, 0);
  EXPECT_TRUE(loaded::span_of(nothing.info).empty());
}

// Notes as the linker lays them out: header, name and descriptor, each
// padded to 4 bytes.
void append_note(std::vector<std::uint8_t>& out, ElfW(Word) type, const char* name, std::size_t name_size,
                 const std::vector<std::uint8_t>& desc, ElfW(Word) claimed_desc_size) {
  ElfW(Nhdr) header{static_cast<ElfW(Word)>(name_size), claimed_desc_size, type};
  const auto* raw = reinterpret_cast<const std::uint8_t*>(&header);
  out.insert(out.end(), raw, raw + sizeof header);
  out.insert(out.end(), name, name + name_size);
  out.resize((out.size() + 3) & ~std::size_t{3});
  out.insert(out.end(), desc.begin(), desc.end());
  out.resize((out.size() + 3) & ~std::size_t{3});
}

std::vector<std::uint8_t> twenty_bytes(std::uint8_t first) {
  std::vector<std::uint8_t> id(20);
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<std::uint8_t>(first + i);
  return id;
}

// The notes in a heap buffer of exactly `visible` bytes... and a PT_NOTE
// header whose segment is those bytes (dlpi_addr 0: the address is the
// segment's own).
struct NoteObject {
  std::unique_ptr<std::uint8_t[]> bytes;
  std::unique_ptr<ElfW(Phdr)[]> table;
  dl_phdr_info info{};
  NoteObject(const std::vector<std::uint8_t>& notes, std::size_t segment_size) {
    bytes = std::make_unique<std::uint8_t[]>(notes.size());
    std::memcpy(bytes.get(), notes.data(), notes.size());
    table = std::make_unique<ElfW(Phdr)[]>(2);
    table[0] = segment(PT_LOAD, 0, 0x1000);
    table[1] = segment(PT_NOTE, reinterpret_cast<std::uintptr_t>(bytes.get()), segment_size);
    info.dlpi_phdr = table.get();
    info.dlpi_phnum = 2;
  }
};

TEST(LoadedObject, TheBuildIdIsTheGnuNoteOfItsType) {
  std::vector<std::uint8_t> notes;
  append_note(notes, NT_GNU_ABI_TAG, "GNU", 4, {0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}, 16);
  append_note(notes, NT_GNU_BUILD_ID, "Go", 3, twenty_bytes(100), 20);  // another vendor's
  append_note(notes, NT_GNU_BUILD_ID, "GNU", 4, twenty_bytes(1), 20);
  const NoteObject object(notes, notes.size());
  const loaded::BuildId id = loaded::build_id_of(object.info);
  ASSERT_EQ(id.size, 20u);
  EXPECT_EQ(std::vector<std::uint8_t>(id.bytes, id.bytes + id.size), twenty_bytes(1));
}

TEST(LoadedObject, ANoteThatClaimsMoreThanItsSegmentHoldsEndsTheSearch) {
  std::vector<std::uint8_t> notes;
  append_note(notes, NT_GNU_BUILD_ID, "GNU", 4, twenty_bytes(1), 20);
  // The segment ends inside the descriptor: no id, and nothing read past it.
  const NoteObject cut(notes, notes.size() - 4);
  EXPECT_EQ(loaded::build_id_of(cut.info).bytes, nullptr);
  // Sizes near 2^32 would wrap a pointer sum: still no id.
  std::vector<std::uint8_t> huge;
  append_note(huge, NT_GNU_BUILD_ID, "GNU", 4, twenty_bytes(1), 0xfffffffe);
  const NoteObject claims(huge, huge.size());
  EXPECT_EQ(loaded::build_id_of(claims.info).bytes, nullptr);
  std::vector<std::uint8_t> long_name;
  append_note(long_name, NT_GNU_BUILD_ID, "GNU", 4, twenty_bytes(1), 20);
  reinterpret_cast<ElfW(Nhdr)*>(long_name.data())->n_namesz = 0xfffffffd;
  const NoteObject named(long_name, long_name.size());
  EXPECT_EQ(loaded::build_id_of(named.info).bytes, nullptr);
  // A segment shorter than a note header.
  const NoteObject tiny(notes, sizeof(ElfW(Nhdr)) - 1);
  EXPECT_EQ(loaded::build_id_of(tiny.info).bytes, nullptr);
}

TEST(LoadedObject, ThisProgramIsOneObjectWithItsBuildId) {
  struct Found {
    std::uintptr_t address;
    int objects = 0;
    loaded::BuildId id;
  } found{reinterpret_cast<std::uintptr_t>(&append_note), 0, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) -> int {
        auto* f = static_cast<Found*>(data);
        if (!loaded::span_of(*info).contains(f->address)) return 0;
        ++f->objects;
        f->id = loaded::build_id_of(*info);
        return 0;
      },
      &found);
  EXPECT_EQ(found.objects, 1);
  // Debian's toolchain links every program with --build-id (SHA-1: 20 bytes).
  EXPECT_EQ(found.id.size, 20u);
  EXPECT_NE(found.id.bytes, nullptr);
}

}  // namespace
}  // namespace heapline
