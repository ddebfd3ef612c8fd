#include "os.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#if defined(__aarch64__)
#include <asm/hwcap.h>  // HWCAP_ATOMICS
#endif

#include <atomic>
#include <cerrno>
#include <cstring>

#include "arch.h"
#include "heapline/preload_check.h"
#include "text.h"

namespace heapline::os {

namespace {

// The kernel's signal set: 64 bits, signal N is bit N - 1. The system calls
// are made directly, as for mappings: nothing for the loader to resolve at
// every start, and no glibc wrapper between.
constexpr SignalMask bit(int signal_number) { return SignalMask{1} << (signal_number - 1); }

SignalMask change_mask(int how, SignalMask set) {
  SignalMask old = 0;
  syscall(SYS_rt_sigprocmask, how, &set, &old, sizeof(SignalMask));
  return old;
}

SignalMask pending_signals() {
  SignalMask pending = 0;
  syscall(SYS_rt_sigpending, &pending, sizeof pending);
  return pending;
}

// The signals a write can raise in the writing thread: SIGXFSZ (past the
// file size limit) and SIGPIPE (a pipe with no reader). Blocked for the
// scope of one of the library's writes; one that the writes raised is taken
// back (sigtimedwait with no wait) before the thread's mask is restored, so
// neither the host's handler nor its default action (death) ever sees it. A
// signal already pending before is left pending: it is the host's.
constexpr int kWriteSignals[] = {SIGXFSZ, SIGPIPE};

class WriteSignalsKept {
 public:
  WriteSignalsKept() {
    SignalMask guarded = 0;
    for (int signal_number : kWriteSignals) guarded |= bit(signal_number);
    mask_ = change_mask(SIG_BLOCK, guarded);
    pending_before_ = pending_signals();
  }
  ~WriteSignalsKept() {
    const SignalMask raised = pending_signals() & ~pending_before_;
    for (int signal_number : kWriteSignals) {
      if ((raised & bit(signal_number)) == 0) continue;
      const SignalMask one = bit(signal_number);
      const timespec no_wait{};
      syscall(SYS_rt_sigtimedwait, &one, nullptr, &no_wait, sizeof one);
    }
    change_mask(SIG_SETMASK, mask_);
  }
  WriteSignalsKept(const WriteSignalsKept&) = delete;
  WriteSignalsKept& operator=(const WriteSignalsKept&) = delete;

 private:
  SignalMask mask_;
  SignalMask pending_before_;
};

}  // namespace

SignalMask block_signals() {
  // All but glibc's own two (SIGCANCEL and SIGSETXID, 32 and 33), as
  // pthread_sigmask leaves them, and SIGBUS (os.h).
  return change_mask(SIG_BLOCK, ~(bit(32) | bit(33) | bit(SIGBUS)));
}

void restore_signals(SignalMask mask) { change_mask(SIG_SETMASK, mask); }

// --- a shared mapping of a file that another process may cut -----------------

namespace {

struct CutGuard {
  // The guarded pages, [begin, end): 0, 0 when none.
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::uintptr_t> end{0};
  // [replaced_from, end) is anonymous memory now. Only lowered, by
  // compare-exchange: the thread that lowers it replaces what it took.
  std::atomic<std::uintptr_t> replaced_from{0};
  std::atomic<bool> seen{false};
  std::uintptr_t page = 4096;
  bool installed = false;
  struct sigaction previous {};  // the disposition the handler replaced
};
// constinit: the live file is mapped by the lazy init, which may come
// before the library's constructors; a dynamically initialised guard would
// be reset after it was set up.
constinit CutGuard g_cut;

#ifndef MADV_POPULATE_READ
constexpr int MADV_POPULATE_READ = 22;  // Linux 5.14's value, for older headers
#endif

// Whether the guarded page at `page` can be read without SIGBUS, asked
// without touching it: 1, 0 (past the file's end), -1 (the kernel cannot
// tell: older than 5.14). Changes errno.
int page_readable(std::uintptr_t page) {
  if (syscall(SYS_madvise, page, g_cut.page, MADV_POPULATE_READ) == 0) return 1;
  return errno == EFAULT ? 0 : -1;
}

// The first page past the file's end in [begin, limit) (the pages past the
// end are the last ones), by bisection; `limit` when there is none; 0 when
// the kernel cannot tell.
std::uintptr_t first_cut_page(std::uintptr_t begin, std::uintptr_t limit) {
  if (limit <= begin) return limit;
  const int last = page_readable(limit - g_cut.page);
  if (last != 0) return last == 1 ? limit : 0;
  std::uintptr_t readable_below = begin;  // every page below it is readable
  std::uintptr_t cut = limit - g_cut.page;   // a page past the end
  while (readable_below < cut) {
    const std::uintptr_t middle = readable_below + (cut - readable_below) / g_cut.page / 2 * g_cut.page;
    const int readable = page_readable(middle);
    if (readable < 0) return 0;
    if (readable == 1) {
      readable_below = middle + g_cut.page;
    } else {
      cut = middle;
    }
  }
  return cut;
}

// Zeroed memory in place of the guarded pages from `from` up to those
// replaced already. False when the kernel refused the memory.
bool replace_from(std::uintptr_t from) {
  std::uintptr_t limit = g_cut.replaced_from.load(std::memory_order_acquire);
  do {
    if (from >= limit) return true;  // replaced already, or being replaced by the thread that took them
  } while (!g_cut.replaced_from.compare_exchange_weak(limit, from, std::memory_order_acq_rel));
  void* memory = map(reinterpret_cast<void*>(from), limit - from, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  if (memory == MAP_FAILED) return false;
  g_cut.seen.store(true, std::memory_order_release);
  return true;
}

// A fault the instruction makes again when the handler returns (rather than
// a signal sent, or a memory error reported after the fact).
bool is_fault(const siginfo_t* info) {
  return info->si_code == BUS_ADRALN || info->si_code == BUS_ADRERR || info->si_code == BUS_OBJERR ||
         info->si_code == BUS_MCEERR_AR;
}

// The disposition the handler replaced, back in place.
void restore_previous() { sigaction(SIGBUS, &g_cut.previous, nullptr); }

// SIGBUS as the disposition the handler replaced would have taken it.
void pass_on(int signal_number, siginfo_t* info, void* context) {
  const struct sigaction& previous = g_cut.previous;
  if (previous.sa_handler == SIG_IGN) {
    if (is_fault(info)) restore_previous();  // made again under SIG_IGN: the kernel kills, as it would have
    return;                                  // a signal sent: ignored
  }
  if (previous.sa_handler == SIG_DFL) {
    restore_previous();
    if (!is_fault(info)) {
      // Pending (SIGBUS is blocked in its handler) until this returns.
      syscall(SYS_rt_tgsigqueueinfo, ::getpid(), syscall(SYS_gettid), signal_number, info);
    }
    return;
  }
  if ((previous.sa_flags & SA_RESETHAND) != 0) {
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigaction(SIGBUS, &default_action, nullptr);
  }
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    previous.sa_sigaction(signal_number, info, context);
  } else {
    previous.sa_handler(signal_number);
  }
}

void on_sigbus(int signal_number, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  const std::uintptr_t begin = g_cut.begin.load(std::memory_order_acquire);
  const std::uintptr_t end = g_cut.end.load(std::memory_order_acquire);
  bool handled = false;
  if (info->si_code == BUS_ADRERR && address >= begin && address < end) {
    const std::uintptr_t page = address & ~(g_cut.page - 1);
    std::uintptr_t from = first_cut_page(begin, g_cut.replaced_from.load(std::memory_order_acquire));
    if (from == 0 || from > page) from = page;  // the fault itself says this page is past the end
    handled = replace_from(from);
    // No memory for it: the fault is fatal as it was (threads that wait
    // for these pages to be replaced fault again, under that disposition).
    if (!handled) restore_previous();
  }
  if (!handled) pass_on(signal_number, info, context);
  errno = saved_errno;
}

}  // namespace

void guard_cut_mapping(void* begin, std::size_t length) {
  const int saved_errno = errno;
  g_cut.page = page_size();
  const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t end = first + (length + g_cut.page - 1) / g_cut.page * g_cut.page;
  g_cut.begin.store(0, std::memory_order_release);
  g_cut.end.store(end, std::memory_order_relaxed);
  g_cut.replaced_from.store(end, std::memory_order_relaxed);
  g_cut.seen.store(false, std::memory_order_relaxed);
  g_cut.begin.store(first, std::memory_order_release);
  if (!g_cut.installed) {
    // The handler runs with what the replaced disposition asked for (its
    // mask, SA_RESTART, SA_NODEFER), so that passing a signal on changes
    // nothing of how it is handled.
    struct sigaction current {};
    sigaction(SIGBUS, nullptr, &current);
    struct sigaction ours {};
    ours.sa_sigaction = on_sigbus;
    ours.sa_mask = current.sa_mask;
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK | (current.sa_flags & (SA_RESTART | SA_NODEFER));
    g_cut.installed = sigaction(SIGBUS, &ours, &g_cut.previous) == 0;
  }
  errno = saved_errno;
}

void unguard_cut_mapping() {
  g_cut.begin.store(0, std::memory_order_release);
  g_cut.end.store(0, std::memory_order_release);
}

bool cut_mapping_seen() { return g_cut.seen.load(std::memory_order_acquire); }

std::size_t settle_cut_mapping() {
  const std::uintptr_t begin = g_cut.begin.load(std::memory_order_acquire);
  if (begin == 0) return SIZE_MAX;  // nothing guarded: nothing cut
  const int saved_errno = errno;
  const std::uintptr_t from = first_cut_page(begin, g_cut.replaced_from.load(std::memory_order_acquire));
  if (from != 0) {
    replace_from(from);
  } else {
    // A kernel that cannot tell: each page read in turn; the first past
    // the end faults, and the handler replaces it and all above it. Only
    // while the handler is the library's, SIGBUS unblocked meanwhile (a
    // SIGBUS the program blocked and has pending is left to it: no reading).
    struct sigaction current {};
    sigaction(SIGBUS, nullptr, &current);
    const SignalMask mask = change_mask(SIG_BLOCK, 0);
    const bool blocked_pending = (mask & bit(SIGBUS)) != 0 && (pending_signals() & bit(SIGBUS)) != 0;
    if (g_cut.installed && current.sa_sigaction == on_sigbus && !blocked_pending) {
      change_mask(SIG_UNBLOCK, bit(SIGBUS));
      for (std::uintptr_t page = begin; page < g_cut.replaced_from.load(std::memory_order_acquire); page += g_cut.page) {
        (void)*reinterpret_cast<const volatile char*>(page);
      }
      change_mask(SIG_SETMASK, mask);
    }
  }
  errno = saved_errno;
  return g_cut.replaced_from.load(std::memory_order_acquire) - begin;
}

void* map_name_only(const char* path, const FileId& id) {
  const int saved_errno = errno;
  void* page = nullptr;
  const int fd = open_to_read(path);
  FileId opened;
  if (fd >= 0 && file_id(fd, &opened) && opened == id) {
    void* mapped = map(nullptr, page_size(), PROT_NONE, MAP_SHARED, fd, 0);
    if (mapped != MAP_FAILED) page = mapped;
  }
  if (fd >= 0) close_file(fd);
  errno = saved_errno;
  return page;
}

int create_file(const char* path, int access) {
  const int fd = ::open(path, access | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);  // less the umask, as open(2) gives
  if (fd < 0) return -1;
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != ::geteuid() || info.st_nlink != 1) {
    ::close(fd);
    errno = EPERM;
    return -1;
  }
  return fd;
}

int create_temp_file(const char* final_path, int pid, int access, char* temp_path, std::size_t capacity) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    TextSink name(temp_path, capacity);
    name.append(final_path);
    name.append('.');
    name.append_signed(pid);
    if (attempt > 0) {
      static const char kHex[] = "0123456789abcdef";
      char random[17];
      std::uint64_t bits = random_bits();
      for (int i = 0; i < 16; ++i, bits >>= 4) random[i] = kHex[bits & 15];
      name.append('.');
      name.append(random, 16);
    }
    name.append(".tmp");
    name.c_str();
    if (name.truncated()) {
      errno = ENAMETOOLONG;
      return -1;
    }
    const int fd = create_file(temp_path, access);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

namespace {

// The number of the line that starts with `field` ("VmHWM:") in the /proc
// status file at `path`, 0 when there is none. Read in pieces, at any
// length: a Groups: line of thousands of groups comes before it. The
// descriptor is opened and closed within the call, through the kernel's
// calls directly (see read_small_file).
std::uint64_t status_field(const char* path, const char* field) {
  const long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char chunk[512];
  std::uint64_t offset = 0;
  std::uint64_t value = 0;
  std::size_t matched = 0;     // bytes of `field` matched so far at the start of this line
  bool line_matches = true;    // this line may still start with `field`
  bool in_value = false;       // past `field`: its number follows
  bool digits = false;
  bool done = false;
  while (!done) {
    long got;
    do {
      got = syscall(SYS_pread64, fd, chunk, sizeof chunk, offset);
    } while (got < 0 && errno == EINTR);
    if (got <= 0) break;
    offset += static_cast<std::uint64_t>(got);
    for (long i = 0; i < got && !done; ++i) {
      const char c = chunk[i];
      if (in_value) {
        if (c >= '0' && c <= '9') {
          digits = true;
          value = value < (std::uint64_t{1} << 50) ? value * 10 + static_cast<std::uint64_t>(c - '0') : value;
        } else {
          done = digits || (c != ' ' && c != '\t');
        }
      } else if (c == '\n') {
        matched = 0;
        line_matches = true;
      } else if (line_matches && field[matched] == c) {
        in_value = field[++matched] == 0;
      } else {
        line_matches = false;
      }
    }
  }
  syscall(SYS_close, fd);
  return digits ? value : 0;
}

}  // namespace

std::int64_t peak_resident_bytes() {
  const int saved_errno = errno;
  // The memory's own high-water mark, which exec starts again with the new
  // image (getrusage's ru_maxrss keeps the largest of every image the
  // process ran, its parent's copy before an exec included). Read from
  // thread-self, which stays right after the main thread has exited.
  std::uint64_t kib = 0;
  static const char* const kPaths[] = {"/proc/thread-self/status", "/proc/self/status"};
  for (const char* path : kPaths) {
    kib = status_field(path, "VmHWM:");
    if (kib != 0) break;
  }
  errno = saved_errno;
  if (kib == 0) return -1;  // a process has resident pages: 0 is no reading
  return static_cast<std::int64_t>(kib * 1024);  // the kernel counts KiB
}

std::uint64_t file_size_limit() {
  const int saved_errno = errno;
  rlimit limit;
  const bool known = syscall(SYS_prlimit64, 0, RLIMIT_FSIZE, nullptr, &limit) == 0;
  errno = saved_errno;
  if (!known || limit.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  return static_cast<std::uint64_t>(limit.rlim_cur);
}

int write_all(int fd, const void* data, std::size_t size, std::uint64_t* file_size) {
  const int saved_errno = errno;
  if (file_size != nullptr) {
    const std::uint64_t limit = file_size_limit();
    if (*file_size > limit || size > limit - *file_size) return EFBIG;
  }
  int error = 0;
  {
    WriteSignalsKept kept;
    const char* next = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t written = ::write(fd, next, size);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        error = written < 0 ? errno : ENOSPC;
        break;
      }
      next += written;
      size -= static_cast<std::size_t>(written);
      if (file_size != nullptr) *file_size += static_cast<std::uint64_t>(written);
    }
  }
  errno = saved_errno;
  return error;
}

int rename_new(const char* from, const char* to) {
  const int saved_errno = errno;
  int result = 0;
  if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) != 0) {
    result = errno;
    if (result == EINVAL || result == ENOSYS || result == EOPNOTSUPP) {
      // No RENAME_NOREPLACE here: a hard link is just as exclusive.
      result = ::link(from, to) == 0 ? 0 : errno;
      if (result == 0) ::unlink(from);
    }
  }
  errno = saved_errno;
  return result;
}

int exchange_names(const char* a, const char* b) {
  const int saved_errno = errno;
  const int result = syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0 ? 0 : errno;
  errno = saved_errno;
  return result;
}

bool file_id(const char* path, FileId* id) {
  const int saved_errno = errno;
  struct stat info;
  const bool found = ::lstat(path, &info) == 0;
  if (found) *id = FileId{info.st_dev, info.st_ino};
  errno = saved_errno;
  return found;
}

bool file_id(int fd, FileId* id) {
  FileStatus status;
  if (!file_status(fd, &status)) return false;
  *id = status.id;
  return true;
}

long read_small_file(const char* path, char* text, std::size_t capacity) {
  if (capacity == 0) return -1;
  const int saved_errno = errno;
  long length = -1;
  const long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    do {
      length = syscall(SYS_pread64, fd, text, capacity - 1, 0);
    } while (length < 0 && errno == EINTR);
    syscall(SYS_close, fd);
  }
  text[length > 0 ? length : 0] = 0;
  errno = saved_errno;
  return length;
}

namespace {

// The Seccomp field of /proc/self/status ("Seccomp:\t0": none), or -1.
int seccomp_mode() {
  char text[4096];
  if (read_small_file("/proc/self/status", text, sizeof text) <= 0) return -1;
  const char* field = std::strstr(text, "\nSeccomp:");
  if (field == nullptr) return -1;
  field += std::strlen("\nSeccomp:");
  while (*field == ' ' || *field == '\t') ++field;
  return *field >= '0' && *field <= '9' ? *field - '0' : -1;
}

// <linux/membarrier.h>'s commands (the header is not in every libc's).
constexpr int kMembarrierQuery = 0;
constexpr int kMembarrierPrivateExpedited = 1 << 3;
constexpr int kMembarrierRegisterPrivateExpedited = 1 << 4;

}  // namespace

bool register_membarrier_private_expedited() {
#if defined(SYS_membarrier)
  if (seccomp_mode() != 0) return false;
  const int saved_errno = errno;
  const long commands = syscall(SYS_membarrier, kMembarrierQuery, 0, 0);
  const bool registered = commands >= 0 && (commands & kMembarrierPrivateExpedited) != 0 &&
                          syscall(SYS_membarrier, kMembarrierRegisterPrivateExpedited, 0, 0) == 0;
  errno = saved_errno;
  return registered;
#else
  return false;
#endif
}

bool membarrier_private_expedited() {
#if defined(SYS_membarrier)
  const int saved_errno = errno;
  const bool done = syscall(SYS_membarrier, kMembarrierPrivateExpedited, 0, 0) == 0;
  errno = saved_errno;
  return done;
#else
  return false;
#endif
}

std::uint64_t process_start_ticks(int pid) {
  char path[48];
  TextSink name(path, sizeof path);
  name.append("/proc/");
  name.append_signed(pid);
  name.append("/stat");
  char text[1024];
  const long length = read_small_file(name.c_str(), text, sizeof text);
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so
  // the fields are counted from its last ')'.
  const char* p = nullptr;
  for (long i = length - 1; i >= 0 && p == nullptr; --i) {
    if (text[i] == ')') p = text + i;
  }
  std::uint64_t ticks = 0;
  if (p != nullptr) {
    int field = 2;
    for (; *p != 0 && field < 22; ++p) {
      if (*p == ' ') ++field;
    }
    for (; field == 22 && *p >= '0' && *p <= '9'; ++p) ticks = ticks * 10 + static_cast<std::uint64_t>(*p - '0');
  }
  return ticks;
}

int open_to_read(const char* path) {
  return ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
}

bool read_at(int fd, void* out, std::size_t size, std::uint64_t offset) {
  const int saved_errno = errno;
  std::size_t done = 0;
  while (done < size) {
    const ssize_t got = ::pread(fd, static_cast<char*>(out) + done, size - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<std::size_t>(got);
  }
  errno = saved_errno;
  return done == size;
}

int close_file(int fd) {
  const int saved_errno = errno;
  const int result = ::close(fd) == 0 || errno == EINTR ? 0 : errno;  // EINTR: Linux has closed it
  errno = saved_errno;
  return result;
}

int remove_name(const char* path) {
  const int saved_errno = errno;
  const int result = ::unlink(path) == 0 ? 0 : errno;
  errno = saved_errno;
  return result;
}

int replace_name(const char* from, const char* to) {
  const int saved_errno = errno;
  struct stat replaced;
  if (::lstat(to, &replaced) == 0 && S_ISREG(replaced.st_mode)) ::chmod(from, replaced.st_mode & 0777);
  const int result = ::rename(from, to) == 0 ? 0 : errno;
  errno = saved_errno;
  return result;
}

bool file_status(int fd, FileStatus* status) {
  const int saved_errno = errno;
  struct stat info;
  const bool known = ::fstat(fd, &info) == 0;
  if (known) {
    status->id = FileId{info.st_dev, info.st_ino};
    status->own_regular_file = S_ISREG(info.st_mode) && info.st_uid == ::geteuid();
    status->modified_s = static_cast<std::int64_t>(info.st_mtime);
  }
  errno = saved_errno;
  return known;
}

PathKind path_kind(const char* path, int* error) {
  const int saved_errno = errno;
  struct stat info;
  PathKind kind = PathKind::kOther;
  if (::lstat(path, &info) != 0) {
    kind = errno == ENOENT ? PathKind::kNothing : PathKind::kUnknown;
    *error = errno;
  } else if (S_ISREG(info.st_mode) && info.st_uid == ::geteuid()) {
    kind = PathKind::kOwnRegularFile;
  }
  errno = saved_errno;
  return kind;
}

bool executable_file(const char* path) {
  const int saved_errno = errno;
  struct stat info;
  const bool executable =
      ::stat(path, &info) == 0 && S_ISREG(info.st_mode) && ::faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0;
  errno = saved_errno;
  return executable;
}

const char* why_loader_skips(const char* path) {
  const int saved_errno = errno;
  char decided_by[PATH_MAX];  // the file that decided: `path`, or a script's interpreter
  const PreloadBlocker blocker = preload_blocker_of(path, decided_by, sizeof decided_by);
  errno = saved_errno;
  if (blocker == PreloadBlocker::none) return nullptr;
  if (std::strcmp(decided_by, path) != 0) return "a script whose interpreter the library cannot follow";
  return preload_blocker_text(blocker);
}

int exec(const char* path, char* const argv[], char* const envp[]) {
  return static_cast<int>(syscall(SYS_execve, path, argv, envp));
}

int exec_at(int dirfd, const char* path, char* const argv[], char* const envp[], int flags) {
  return static_cast<int>(syscall(SYS_execveat, dirfd, path, argv, envp, flags));
}

void program_path(char* out, std::size_t capacity) {
  if (capacity == 0) return;
  const int saved_errno = errno;
  const ssize_t length = ::readlink("/proc/self/exe", out, capacity - 1);
  out[length > 0 ? length : 0] = 0;
  errno = saved_errno;
}

void working_directory(char* out, std::size_t capacity) {
  if (capacity == 0) return;
  const int saved_errno = errno;
  if (::getcwd(out, capacity) == nullptr) out[0] = 0;
  errno = saved_errno;
}

namespace {

// The system call itself, as glibc makes it without a vDSO (valgrind hides
// it: the instruction counts are taken there), in a few instructions
// (arch.h). -1 on failure, errno left alone (no caller asks a clock that
// fails).
int clock_gettime_by_system_call(clockid_t clock, timespec* now) { return arch::clock_gettime_by_system_call(clock, now); }

// The vDSO's clock_gettime, which glibc's calls: the kernel maps this small
// ELF image into every process (its address in the auxiliary vector).
// Found in its dynamic symbol table, counted by DT_HASH (the x86-64 and the
// aarch64 vDSOs have it), without the dynamic loader: dlopen allocates, and an
// allocation in the library's constructor reaches a foreign allocator
// before its own constructor has run (mimalloc then sizes blocks otherwise).
// nullptr without a vDSO (valgrind hides it) or without DT_HASH.
ClockFunction vdso_clock_gettime() {
  const ElfW(Addr) base = ::getauxval(AT_SYSINFO_EHDR);
  if (base == 0) return nullptr;
  const auto* header = reinterpret_cast<const ElfW(Ehdr)*>(base);
  if (std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0) return nullptr;
  const auto* segments = reinterpret_cast<const ElfW(Phdr)*>(base + header->e_phoff);
  ElfW(Addr) bias = 0;
  bool loaded = false;
  const ElfW(Dyn)* dynamic = nullptr;
  for (ElfW(Half) i = 0; i < header->e_phnum; ++i) {
    if (segments[i].p_type == PT_LOAD && !loaded) {
      bias = base + segments[i].p_offset - segments[i].p_vaddr;
      loaded = true;
    } else if (segments[i].p_type == PT_DYNAMIC) {
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(base + segments[i].p_offset);
    }
  }
  if (!loaded || dynamic == nullptr) return nullptr;
  const ElfW(Sym)* symbols = nullptr;
  const char* names = nullptr;
  const ElfW(Word)* hash = nullptr;
  for (const ElfW(Dyn)* entry = dynamic; entry->d_tag != DT_NULL; ++entry) {
    if (entry->d_tag == DT_SYMTAB) symbols = reinterpret_cast<const ElfW(Sym)*>(bias + entry->d_un.d_ptr);
    if (entry->d_tag == DT_STRTAB) names = reinterpret_cast<const char*>(bias + entry->d_un.d_ptr);
    if (entry->d_tag == DT_HASH) hash = reinterpret_cast<const ElfW(Word)*>(bias + entry->d_un.d_ptr);
  }
  if (symbols == nullptr || names == nullptr || hash == nullptr) return nullptr;
  const ElfW(Word) count = hash[1];  // nchain: one entry per symbol
  for (ElfW(Word) i = 0; i < count; ++i) {
    const ElfW(Sym)& symbol = symbols[i];
    if (ELF64_ST_TYPE(symbol.st_info) == STT_FUNC && symbol.st_shndx != SHN_UNDEF &&
        std::strcmp(names + symbol.st_name, arch::kVdsoClockGettime) == 0) {
      return reinterpret_cast<ClockFunction>(bias + symbol.st_value);
    }
  }
  return nullptr;
}

}  // namespace

ClockFunction g_clock_gettime = clock_gettime_by_system_call;

#if defined(__aarch64__)
}  // namespace heapline::os

namespace heapline::arch::in_place {
// False until the constructor below: the exclusive loop, correct anywhere.
bool g_lse_atomics = false;
}  // namespace heapline::arch::in_place

namespace heapline::os {

// The in-place counters' instructions (arch/aarch64.h), chosen once when
// the library is loaded, before its other constructors.
__attribute__((constructor(101))) void choose_in_place_instructions() {
  arch::in_place::g_lse_atomics = (::getauxval(AT_HWCAP) & HWCAP_ATOMICS) != 0;
}
#endif

// Before the library's other constructors (101: the first priority a
// program may use), which read clocks.
__attribute__((constructor(101))) void bind_clocks() {
  if (ClockFunction vdso = vdso_clock_gettime()) __atomic_store_n(&g_clock_gettime, vdso, __ATOMIC_RELAXED);
}

std::uint64_t clock_resolution_ns(clockid_t clock) {
  const int saved_errno = errno;
  timespec tick;
  const bool known = syscall(SYS_clock_getres, clock, &tick) == 0;
  errno = saved_errno;
  if (!known) return 0;
  return static_cast<std::uint64_t>(tick.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(tick.tv_nsec);
}

const char* environment(const char* name) { return ::getenv(name); }

void set_environment(const char* name, const char* value) {
  const int saved_errno = errno;
  ::setenv(name, value, 1);
  errno = saved_errno;
}

bool wipe_on_fork(void* address, std::size_t length) {
#ifndef MADV_WIPEONFORK
  constexpr int MADV_WIPEONFORK = 18;  // Linux 4.14's value, for older headers
#endif
  const int saved_errno = errno;
  const bool marked = syscall(SYS_madvise, address, length, MADV_WIPEONFORK) == 0;
  errno = saved_errno;
  return marked;
}

void exit_process(int status) {
  for (;;) syscall(SYS_exit_group, status);
}

#if HEAPLINE_TEST_HOOKS
void kill_this_process() { syscall(SYS_kill, ::getpid(), SIGKILL); }
#endif

namespace {

// The second field of statm's "size resident shared text lib data dt", in
// pages; 0 when the text is not that.
std::uint64_t statm_resident_pages(const char* text) {
  const char* p = text;
  while (*p >= '0' && *p <= '9') ++p;
  if (p == text || *p != ' ') return 0;
  std::uint64_t pages = 0;
  const char* digits = ++p;
  for (; *p >= '0' && *p <= '9' && p - digits < 19; ++p) pages = pages * 10 + static_cast<std::uint64_t>(*p - '0');
  return p != digits && (*p == ' ' || *p == '\n') ? pages : 0;
}

}  // namespace

std::int64_t resident_bytes() {
  // "7 numbers of up to 20 digits" fits; a longer text is not statm's.
  char text[160];
  std::uint64_t pages = 0;
  static const char* const kPaths[] = {"/proc/thread-self/statm", "/proc/self/statm"};
  for (const char* path : kPaths) {
    if (read_small_file(path, text, sizeof text) > 0) pages = statm_resident_pages(text);
    if (pages != 0) break;
  }
  const int saved_errno = errno;
  const std::uint64_t page_bytes = ::getauxval(AT_PAGESZ);
  errno = saved_errno;
  // A live process always has a resident page: 0 is a reading of nothing.
  if (pages == 0 || page_bytes == 0 || pages > (std::uint64_t{1} << 62) / page_bytes) return -1;
  return static_cast<std::int64_t>(pages * page_bytes);
}

namespace {
// Where readable_below has the kernel copy what it checks (at most what a
// heap sample needs, arch.h): its content is never read.
char g_probe_sink[arch::kSampleStackBytes > 16 * 1024 ? arch::kSampleStackBytes : 16 * 1024];
}  // namespace

int readable_below(std::uintptr_t top, std::size_t bytes) {
  if (bytes > sizeof g_probe_sink || top < bytes) return 0;
  const int saved_errno = errno;
  iovec local{g_probe_sink, bytes};
  iovec remote{reinterpret_cast<void*>(top - bytes), bytes};
  const long copied = syscall(SYS_process_vm_readv, ::getpid(), &local, 1, &remote, 1, 0);
  const int readable = copied == static_cast<long>(bytes) ? 1 : copied >= 0 || errno == EFAULT ? 0 : -1;
  errno = saved_errno;
  return readable;
}

bool is_main_thread() { return syscall(SYS_gettid) == ::getpid(); }

bool process_exists(int pid) {
  const int saved_errno = errno;
  const bool exists = pid > 0 && (syscall(SYS_kill, pid, 0) == 0 || errno == EPERM);
  errno = saved_errno;
  return exists;
}

bool secure_mode() {
  const int saved_errno = errno;
  const bool secure = ::getauxval(AT_SECURE) != 0;
  errno = saved_errno;
  return secure;
}

std::uint64_t random_bits() {
  const int saved_errno = errno;
  std::uint64_t bits = 0;
  if (syscall(SYS_getrandom, &bits, sizeof bits, GRND_NONBLOCK) != static_cast<long>(sizeof bits)) {
    bits = clock_ns(CLOCK_MONOTONIC) ^ (static_cast<std::uint64_t>(pid()) << 40) ^
           reinterpret_cast<std::uintptr_t>(&bits);
  }
  errno = saved_errno;
  return bits;
}

}  // namespace heapline::os
