// heapline.h used from C++: compiled (with -Werror) but never run; the C
// program phase_probe exercises the calls.
#include "heapline.h"

#include <cstdint>

std::int64_t heapline_api_from_cxx() {
  heapline_mark("c++");
  heapline_reset_peak();
  return heapline_live_bytes() + heapline_peak_bytes();
}
