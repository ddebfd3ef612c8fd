# Cross-compiling heapline for arm64 (aarch64) Linux with glibc on a Debian
# x86-64 machine, as tools/test.sh --arch arm64 does:
#
#   tools/arm64_sysroot.sh build/arm64-sysroot
#   cmake -S . -B build/arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#
# The compilers are Debian's (crossbuild-essential-arm64, with their own C
# library); every other arm64 library and header comes from the sysroot
# folder that tools/arm64_sysroot.sh unpacks from Debian's arm64 packages
# (build/arm64-sysroot, or $HEAPLINE_ARM64_SYSROOT), never from the host's
# directories: nothing arm64 is installed on the machine for this. Programs
# the build runs (python3, gzip, help2man) are the host's; the arm64 ones it
# runs (gtest_discover_tests' listing) and the tests run under qemu-user
# with the sysroot as its -L.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# The environment, not a cache variable: try_compile projects read this file
# again without the cache.
if(DEFINED ENV{HEAPLINE_ARM64_SYSROOT})
  set(HEAPLINE_ARM64_SYSROOT "$ENV{HEAPLINE_ARM64_SYSROOT}")
else()
  get_filename_component(HEAPLINE_ARM64_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/../build/arm64-sysroot" ABSOLUTE)
endif()
if(NOT EXISTS "${HEAPLINE_ARM64_SYSROOT}/lib/ld-linux-aarch64.so.1")
  message(FATAL_ERROR "No arm64 sysroot at ${HEAPLINE_ARM64_SYSROOT}: make it with tools/arm64_sysroot.sh")
endif()

set(CMAKE_FIND_ROOT_PATH "${HEAPLINE_ARM64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config (libdw) reads the sysroot's .pc files and prefixes their paths.
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${HEAPLINE_ARM64_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR}
    "${HEAPLINE_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${HEAPLINE_ARM64_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# The sysroot's libraries need others of theirs (libdw: libelf, liblzma...):
# the linker looks for those in the sysroot too.
set(heapline_rpath_link
    "-Wl,-rpath-link,${HEAPLINE_ARM64_SYSROOT}/lib/aarch64-linux-gnu:${HEAPLINE_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${heapline_rpath_link}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${heapline_rpath_link}")

# The arm64 programs that CMake and ctest run directly. qemu-aarch64-static
# rather than the dynamic qemu-aarch64: a test's LD_PRELOAD then reaches
# the arm64 program only (a static qemu has no loader of its own to take
# it). The programs these exec run through binfmt_misc, with the same
# sysroot in QEMU_LD_PREFIX (tools/test.sh --arch arm64).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L "${HEAPLINE_ARM64_SYSROOT}")
