// The library's boundary with the operating system: the files it creates and
// writes, its mappings, clocks and the processes it asks about, in one place
// (the model is mimalloc's prim.h). Everything here is async-signal-safe,
// allocates nothing and keeps the caller's errno unless it says otherwise;
// what the library may do to its host is decided here:
//  - a file is only ever created new (create_file): never opened through a
//    link, never one that was there already, whoever made it and whatever
//    fs.protected_regular says;
//  - no write of the library's raises a signal in its host (write_all): not
//    SIGXFSZ past the file size limit (RLIMIT_FSIZE), not SIGPIPE on a
//    closed stderr, and the host's own signals and dispositions are left
//    alone;
//  - no store into the live file's shared mapping kills its host when
//    another process cuts the file (guard_cut_mapping): the one disposition
//    the library sets, SIGBUS's, handles its own pages and passes every
//    other SIGBUS on to the disposition it found, exactly;
//  - mappings go to the kernel directly, never through the exported mmap
//    the library itself defines;
//  - whether an exec'd program will run the library is judged as the kernel
//    and ld.so decide it (heapline/preload_check.h, shared with the
//    launcher and heapline-bench).
//  - what the library calls from inside an allocation never leaves for
//    another library that defines the same name: the clocks are the vDSO's
//    (bind_clocks), the waits and the rest are system calls.
// No other file of the library makes a system call or calls libc for one
// (tests/interposer/os_boundary.py checks it). The dynamic loader (dlsym,
// dlopen, dladdr) is not the OS: the files that resolve symbols call it.
#pragma once

#include <errno.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace heapline::os {

// --- clocks -----------------------------------------------------------------

// The vDSO's clock_gettime, the one glibc's calls, found when the library
// loads (os.cpp), never the first definition of the name in the search
// order: another preloaded library's (libfaketime's looks itself up with
// dlsym, which allocates) would be called from inside a publish and come
// back into the allocator until the stack ran out. Until then
// (constructors that ran before this library's), and without a vDSO, the
// system call.
using ClockFunction = int (*)(clockid_t, timespec*);
extern ClockFunction g_clock_gettime;

inline std::uint64_t clock_ns(clockid_t clock) {
  timespec now;
  __atomic_load_n(&g_clock_gettime, __ATOMIC_RELAXED)(clock, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(now.tv_nsec);
}

// A clock's resolution (its tick), in nanoseconds; 0 when unknown.
std::uint64_t clock_resolution_ns(clockid_t clock);

// --- mappings: the kernel's calls, as glibc's wrappers make them --------------

inline void* map(void* address, std::size_t length, int prot, int flags, int fd, off_t offset) {
  return reinterpret_cast<void*>(syscall(SYS_mmap, address, length, prot, flags, fd, offset));
}
inline int unmap(void* address, std::size_t length) { return static_cast<int>(syscall(SYS_munmap, address, length)); }
inline void* remap(void* old_address, std::size_t old_length, std::size_t new_length, int flags, void* new_address) {
  return reinterpret_cast<void*>(syscall(SYS_mremap, old_address, old_length, new_length, flags, new_address));
}

// --- files ------------------------------------------------------------------

// Creates `path` for this process alone: O_CREAT | O_EXCL | O_NOFOLLOW |
// O_CLOEXEC (EEXIST when anything, a file, a link or a FIFO, is at the path
// already), then checks with fstat that what it opened is a regular file of
// this effective user with one link (EPERM otherwise: a filesystem that does
// not honour O_EXCL or maps owners). `access` is O_WRONLY or O_RDWR. Returns
// the descriptor, or -1 with errno set.
int create_file(const char* path, int access);

// A file to fill and then rename into place at `final_path` (create_file, in
// the same directory): `<final_path>.<pid>.tmp`, or, when something is at
// that name already (left by a killed process of the same pid, or planted),
// `<final_path>.<pid>.<16 random hex digits>.tmp`. Its name goes to
// `temp_path`. Returns the descriptor, or -1 with errno set.
int create_temp_file(const char* final_path, int pid, int access, char* temp_path, std::size_t capacity);

// The largest size a file of this process may reach (RLIMIT_FSIZE's soft
// limit), UINT64_MAX when unlimited.
std::uint64_t file_size_limit();

// Writes all of `data` to `fd`, whose size so far is *file_size (nullptr: a
// stream such as stderr, whose size is unknown), retrying after EINTR and
// short writes. Returns 0 or the errno of the failure: EFBIG when the file
// would pass the file size limit (checked before writing; nothing is
// written then), ENOSPC for a write that stores nothing. SIGXFSZ and SIGPIPE
// are blocked in this thread around the writes, and one that the writes
// raised is taken back before they are unblocked, so the host never sees
// it; a signal that was pending before stays pending.
int write_all(int fd, const void* data, std::size_t size, std::uint64_t* file_size);

// Renames `from` to `to` only when nothing is at `to` (EEXIST otherwise):
// renameat2(RENAME_NOREPLACE), or link and unlink on a filesystem without
// it. Returns 0 or an errno.
int rename_new(const char* from, const char* to);
// Swaps the two names atomically (renameat2(RENAME_EXCHANGE)). Returns 0 or
// an errno (EINVAL where the filesystem cannot).
int exchange_names(const char* a, const char* b);

// What a name refers to, as lstat sees it.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const FileId&) const = default;
};
bool file_id(const char* path, FileId* id);
bool file_id(int fd, FileId* id);  // what `fd` is open on (fstat)

// A descriptor to read `path` through, or -1 with errno set: O_RDONLY |
// O_CLOEXEC | O_NONBLOCK (a FIFO never blocks the host) | O_NOFOLLOW (a
// link planted where a file of the library's is expected is not followed).
int open_to_read(const char* path);
// pread, whole or nothing: true when `size` bytes were read at `offset`.
bool read_at(int fd, void* out, std::size_t size, std::uint64_t offset);
// Closes `fd`: 0 or the errno of the failure (a close that reports a
// delayed write error). Keeps errno.
int close_file(int fd);
// Removes the name `path` (unlink): 0 or an errno. Keeps errno.
int remove_name(const char* path);
// Renames `from` over `to` (rename): 0 or an errno. A regular file at `to`
// gives `from` its permission bits first: a file replaced keeps its mode (a
// private report stays private). Keeps errno.
int replace_name(const char* from, const char* to);

// What `fd` is open on (fstat): its identity, whether it is a regular file
// of this effective user, and when it was last modified (seconds since the
// epoch). False when fstat fails.
struct FileStatus {
  FileId id;
  bool own_regular_file = false;
  std::int64_t modified_s = 0;
};
bool file_status(int fd, FileStatus* status);

// What is at `path`, not following a final link (lstat): nothing, a
// regular file of this effective user, or something else (a link, a FIFO,
// a directory, a device, another user's file: never the library's to
// replace, even for root, which rename would let replace another user's
// file in a shared sticky directory).
enum class PathKind { kNothing, kOwnRegularFile, kOther, kUnknown };
// kUnknown: lstat failed otherwise than ENOENT; *error gets its errno.
PathKind path_kind(const char* path, int* error);

// Whether `path` is a regular file this process may execute (its effective
// IDs, as execve checks).
bool executable_file(const char* path);

// --- programs ------------------------------------------------------------------

// Why the loader will not run this library in the program at `path` (an
// executable file), as a short text for the live file's exec note, or
// nullptr when it will (heapline/preload_check.h decides).
const char* why_loader_skips(const char* path);

// The system calls behind execve and execveat, for when no next definition
// was found: -1 with errno on failure.
int exec(const char* path, char* const argv[], char* const envp[]);
int exec_at(int dirfd, const char* path, char* const argv[], char* const envp[], int flags);

// --- processes ------------------------------------------------------------------

inline int pid() { return static_cast<int>(::getpid()); }
inline int parent_pid() { return static_cast<int>(::getppid()); }

// The path of this process's program (/proc/self/exe) into `out`, "" when
// unknown; always NUL-terminated.
void program_path(char* out, std::size_t capacity);
// The working directory into `out`, "" when unknown (or longer than
// `capacity`); always NUL-terminated.
void working_directory(char* out, std::size_t capacity);

// Marks the whole pages at [address, address + length), private anonymous
// memory, MADV_WIPEONFORK: a process made from this one without CLONE_VM
// (fork, clone(SIGCHLD), _Fork, the fork system call) finds them zeroed,
// one that shares this memory (a thread, a vfork child) finds them as they
// are. The mark is inherited by such a copy and dropped at exec. False when
// the kernel cannot (before Linux 4.14: EINVAL).
bool wipe_on_fork(void* address, std::size_t length);

// The size of a page (ld.so's, no system call).
inline std::size_t page_size() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

// A variable of the environment (getenv). The caller decides whether the
// environment is to be trusted (secure_mode()).
const char* environment(const char* name);
// Sets a variable of the environment (setenv, overwriting). It allocates:
// only from the constructor, before the program's threads run.
void set_environment(const char* name, const char* value);

// Gives the processor up for a moment, inside a short wait for another
// thread (sched_yield, the system call).
inline void yield() { syscall(SYS_sched_yield); }

// The same in a wait of unknown length, at its `tries`-th round: the first
// rounds yield, the later ones sleep a millisecond, so that a thread the
// scheduler puts below the waiting one (a lower real-time priority on the
// same processor) runs all the same.
inline void yield_then_nap(unsigned tries) {
  if (tries <= 64) {
    yield();
    return;
  }
  const timespec nap{0, 1'000'000};
  const int saved_errno = errno;  // EINTR, should a signal end the nap
  syscall(SYS_nanosleep, &nap, nullptr);
  errno = saved_errno;
}

// Ends the process at once with `status`, as glibc's _exit does.
[[noreturn]] void exit_process(int status);

#if HEAPLINE_TEST_HOOKS
// Dies at once (SIGKILL to this process): the test hooks' kill points.
void kill_this_process();
#endif

// When process `pid` started, in clock ticks since boot (the 22nd field of
// /proc/PID/stat): with the pid, it names one process for the life of the
// system, whatever images it execs. 0 when unknown (no such process, no /proc).
std::uint64_t process_start_ticks(int pid);

// The largest resident set this process image has had, in bytes: the
// kernel's high-water mark of its memory (VmHWM in /proc/thread-self/status),
// which exec starts again. Not getrusage's ru_maxrss: that one is kept
// across exec, so a program started by a process that held 300 MiB (a fork
// copies its pages, an exec keeps the mark) reported 300 MiB of its own.
// -1 when unknown (no /proc). Three system calls: once, at the exit.
std::int64_t peak_resident_bytes();

// This process's resident set now, in bytes: the second field of statm
// (pages) times the page size, -1 when unknown (no /proc, EMFILE, a seccomp
// filter, a thread whose process has no memory any more). Read from
// /proc/thread-self/statm, which stays right after the main thread has
// exited (/proc/self is then a zombie's, all zeros), or /proc/self/statm on
// kernels before 3.17. Three system calls (read_small_file); for the
// samples, never the hot path.
std::int64_t resident_bytes();

// Reads the small file at `path` (a /proc file, whose text the kernel makes
// at once) into `text`, NUL-terminated, at most `capacity` - 1 bytes.
// Opened, read with pread and closed within the call, through the kernel's
// calls directly: no descriptor outlives it (none for the host to close
// and reuse under the library), none leaks to an exec (O_CLOEXEC), no
// cancellation point (a thread cancelled there would keep the sampling
// lock), no wrapper another preload may hook. Returns the length read, or
// -1 with nothing read.
long read_small_file(const char* path, char* text, std::size_t capacity);

// --- barriers on the other threads --------------------------------------------

// Registers this process image for membarrier(MEMBARRIER_CMD_PRIVATE_
// EXPEDITED) (a fork child or an exec'd image registers again). False when
// the kernel lacks it, or when the process runs under a seccomp filter,
// which might end the process for a system call it does not expect: the
// library then never calls membarrier (/proc/self/status says whether a
// filter is there; without /proc, no).
bool register_membarrier_private_expedited();
// Every running thread of this process passes a full barrier before this
// returns, each at an instruction boundary: an instruction of theirs in
// flight when it was called has completed and its stores are visible.
// False if the kernel refused.
bool membarrier_private_expedited();

// --- signals -------------------------------------------------------------------

// A thread's signal mask, as the kernel keeps it (signal N is bit N - 1).
using SignalMask = std::uint64_t;
// Blocks every signal in this thread (but glibc's own, as pthread_sigmask
// does, and SIGBUS: a fault cannot wait, the kernel kills a thread that
// faults with SIGBUS blocked, and a store into a cut live file is one, see
// below) and returns the mask it had; restore_signals puts it back.
SignalMask block_signals();
void restore_signals(SignalMask mask);

// --- a shared mapping of a file that another process may cut -----------------

// The live file is mapped MAP_SHARED, and whoever may write the file may
// truncate it (`: > x.live`, a log rotator's copytruncate): the kernel drops
// the pages past the new end, and the next load or store into one raises
// SIGBUS in the thread that makes it, which would kill the host. While a
// mapping is guarded, the library's SIGBUS handler (installed at the first
// guard: SA_SIGINFO | SA_ONSTACK, the mask and SA_RESTART of the
// disposition it replaces) puts zeroed anonymous memory in place of every
// page past the file's end (found without touching them:
// MADV_POPULATE_READ, Linux 5.14; else from the faulting page on) up to the
// pages replaced already, and returns: the access is made again, in memory.
// The limit of the replaced pages only goes down, by compare-exchange, so
// two threads never replace the same pages (the second would zero what the
// first one's thread has stored since). Any other SIGBUS (a fault outside
// the guarded pages, one sent by kill or raise, a memory error) goes to the
// disposition the handler replaced, as the kernel would have delivered it:
// a handler of the program's called with the same arguments (SA_RESETHAND
// honoured), SIG_IGN honoured (a fault, which the kernel never lets a
// process ignore, made again under it: the kernel kills), SIG_DFL restored
// (a fault made again under it; a sent signal sent again to this thread,
// with its siginfo, pending until the handler returns): the default
// action, a core dump included. Limits: a program that installs its own
// SIGBUS handler afterwards replaces the library's (its handler then gets
// the faults of a cut live file); a thread that has SIGBUS blocked when it
// faults is killed by the kernel, whatever the handler (the library's own
// windows never block SIGBUS: block_signals).
void guard_cut_mapping(void* begin, std::size_t length);
// The guarded mapping is going away (a fork child's copy of its parent's).
void unguard_cut_mapping();
// Whether the handler (or settle_cut_mapping) has replaced pages since the
// guard began: one load.
bool cut_mapping_seen();
// Replaces the guarded pages past the file's end now, without touching
// them (on a kernel without MADV_POPULATE_READ, by reading each page in
// this thread, SIGBUS unblocked meanwhile, when the handler is still the
// library's), and returns the offset from the mapping's start from which it
// is anonymous memory ("length" rounded up to whole pages, or more: none of
// it).
std::size_t settle_cut_mapping();
// One page of the file at `path`, when it is still the file `id`, mapped
// with no access: nothing is ever read or written through it, but the
// process's mappings (/proc/PID/maps) still name the file once all of its
// pages were replaced (heapline top and clean find a running process's
// live file there). nullptr when it cannot be made.
void* map_name_only(const char* path, const FileId& id);

// --- the calling thread's stack -------------------------------------------------

// Whether the `bytes` below the address `top` can all be read: 1; 0 when
// one of them cannot (a guard page, the end of a mapping); -1 when the
// kernel cannot tell (process_vm_readv refused: a seccomp filter, or
// qemu-user, which has no such call). They are read into a buffer of the
// library's by the kernel, never touched in this thread: a page that cannot
// be read is EFAULT, not SIGSEGV. At most 16 KiB, or what a heap sample
// needs where that is more (arch.h, kSampleStackBytes).
int readable_below(std::uintptr_t top, std::size_t bytes);
// Whether the calling thread is the process's first (its stack grows on
// demand, up to RLIMIT_STACK, rather than ending at a guard page).
bool is_main_thread();

// Whether a process `pid` exists (kill(pid, 0); another user's counts).
bool process_exists(int pid);

// Whether the loader runs this process in secure mode (set-user-ID,
// set-group-ID or file capabilities: AT_SECURE): then the environment is not
// the user's to trust.
bool secure_mode();

// 64 random bits (getrandom, or the clock where it is missing): names that
// another user cannot guess.
std::uint64_t random_bits();

}  // namespace heapline::os
