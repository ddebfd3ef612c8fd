#include "live_file.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <cerrno>

#include "os.h"

namespace heapline {

int make_live_file(const LiveRegion& image, const char* final_path, int pid, LiveRegion* at, PendingLiveFile* out) {
  const int saved_errno = errno;
  out->region = nullptr;
  out->temp_path[0] = 0;
  // Decided before anything is made: a write past the limit would be
  // refused anyway (os::write_all), this keeps a useless file from being
  // started.
  if (os::file_size_limit() < sizeof(LiveRegion)) return EFBIG;
  const int fd = os::create_temp_file(final_path, pid, O_RDWR, out->temp_path, sizeof out->temp_path);
  if (fd < 0) {
    const int error = errno;
    out->temp_path[0] = 0;
    errno = saved_errno;
    return error;
  }
  std::uint64_t size = 0;
  int error = os::write_all(fd, &image, sizeof(LiveRegion), &size);
  if (error == 0 && !os::file_id(fd, &out->id)) error = EIO;
  void* address = MAP_FAILED;
  if (error == 0) {
    const int flags = MAP_SHARED | (at != nullptr ? MAP_FIXED : 0);
    address = os::map(at, sizeof(LiveRegion), PROT_READ | PROT_WRITE, flags, fd, 0);
    if (address == MAP_FAILED) {
      error = errno;
      // An older kernel may have unmapped `at` before failing: memory goes
      // back there, with the content just written, so that the threads
      // storing into the region carry on.
      if (at != nullptr && os::map(at, sizeof(LiveRegion), PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == at) {
        os::read_at(fd, at, sizeof(LiveRegion), 0);  // else the region is zeros, still memory
      }
    }
  }
  os::close_file(fd);
  if (error != 0) {
    os::remove_name(out->temp_path);
    out->temp_path[0] = 0;
    errno = saved_errno;
    return error;
  }
  out->region = static_cast<LiveRegion*>(address);
  errno = saved_errno;
  return 0;
}

int place_live_file(PendingLiveFile& file, const char* final_path) {
  const int result = os::rename_new(file.temp_path, final_path);
  if (result == 0) file.temp_path[0] = 0;
  return result;
}

void remove_pending_name(PendingLiveFile& file) {
  if (file.temp_path[0] == 0) return;
  os::remove_name(file.temp_path);
  file.temp_path[0] = 0;
}

void release_live_region(LiveRegion* region) {
  if (region != nullptr) os::unmap(region, sizeof(LiveRegion));
}

}  // namespace heapline
