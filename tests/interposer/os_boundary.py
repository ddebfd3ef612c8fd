#!/usr/bin/env python3
"""os_boundary.py SOURCE_DIR: the interposer talks to the operating system
in one file. No file of interposer/src but base/os.h and base/os.cpp calls a system
call or a libc function that makes one (files, processes, signals, clocks,
the environment, mappings): they call heapline::os instead, where what the
library may do to its host is decided once (the model is mimalloc's
prim.h). The dynamic loader (dlsym, dlopen, dladdr) is not the OS: the
files that resolve symbols call it."""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
from cpp_lines import masked_lines  # noqa: E402

OS_CALLS = """
open openat open64 creat close read write pread pread64 pwrite pwrite64 lseek ftruncate fsync fdatasync
fstat fstat64 stat stat64 lstat lstat64 fstatat newfstatat statx statvfs fstatvfs getxattr lgetxattr fgetxattr
access faccessat unlink unlinkat rename renameat renameat2 link linkat symlink readlink readlinkat mkdir rmdir
getpid gettid getppid getuid geteuid getgid getegid syscall clock_gettime gettimeofday time
getrlimit setrlimit prlimit getrusage sysconf getpagesize getauxval uname prctl
sigprocmask pthread_sigmask sigaction signal raise kill tgkill sigtimedwait sigpending
getenv secure_getenv setenv unsetenv
mmap mmap64 munmap mremap mprotect madvise
fcntl ioctl dup dup2 dup3 pipe pipe2 isatty
nanosleep usleep sleep sched_yield getrandom fork vfork execve execveat exit_group
getcwd chdir fchdir realpath clock_getres clock_nanosleep sysinfo times getcpu sched_getcpu mincore
opendir readdir closedir fopen fdopen fread fwrite fclose fflush fputs fprintf perror puts
""".split()

CALL = re.compile(r"(?<![\w.>:])(?:::)?(" + "|".join(OS_CALLS) + r")\s*\(")
# A definition of an exported override (mmap_override.cpp defines mmap): the
# name follows a return type, not an operator or a statement start.
DEFINITION = re.compile(r"^\s*HEAPLINE_EXPORT\(")


def calls_outside_os(src):
    """["FILE:LINE: calls NAME()..."] for every OS call outside os.h/os.cpp."""
    found = []
    # The processors' headers (arch/) too: their system call is an
    # instruction sequence that os.cpp alone calls.
    for path in sorted(list(src.rglob("*.cpp")) + list(src.rglob("*.h"))):
        if path.stem == "os" and path.parent == src / "base":
            continue
        for number, line in enumerate(masked_lines(path.read_text().splitlines()), 1):
            if DEFINITION.match(line):
                continue
            for match in CALL.finditer(line):
                found.append(f"{path.relative_to(src)}:{number}: calls {match.group(1)}(): go through heapline::os (os.h)")
    return found


# The checker itself: what it must find, and what it must leave alone.
SELF_TEST = {
    "finds.cpp": ("int a() { return getpid(); }\n"
                  "void b() { ::unlink(\"x\"); }\n"
                  "long c = 1'000'000; int d = open (\"y\", 0);\n", 3),
    "ignores.cpp": ("// getpid() in a comment\n"
                    "/* unlink(path) */ const char* e = \"kill(1)\";\n"
                    "int f() { return os::pid() + setting.read(1) + g->close(2); }\n"
                    "HEAPLINE_EXPORT(mmap) void* mmap(void* a) noexcept;\n", 0),
    "base/os.cpp": ("int g() { return ::getpid(); }\n", 0),
    # os.cpp is the boundary in base/ only.
    "accounting/os.cpp": ("int h() { return ::getpid(); }\n", 1),
}


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as scratch:
        src = pathlib.Path(scratch)
        for name, (text, _) in SELF_TEST.items():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_text(text)
        found = calls_outside_os(src)
        for name, (_, expected) in SELF_TEST.items():
            got = [line for line in found if line.startswith(name + ":")]
            if len(got) != expected:
                print(f"os_boundary: self-test: {name}: expected {expected} calls, found {got}", file=sys.stderr)
                return False
    return True


def main():
    if not self_test():
        return 1
    found = calls_outside_os(pathlib.Path(sys.argv[1]) / "interposer" / "src")
    for line in found:
        print(f"os_boundary: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
