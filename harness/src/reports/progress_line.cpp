#include "heapline_bench/reports/progress_line.h"

#include "heapline_bench/text/text.h"

#include <unistd.h>

#include <chrono>
#include <cmath>

namespace heapline::bench {
namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string duration_text(double seconds) {
  char text[48];
  if (seconds < 10) {
    std::snprintf(text, sizeof text, "%.1f s", seconds);
  } else if (seconds < 60) {
    std::snprintf(text, sizeof text, "%.0f s", seconds);
  } else {
    const long whole = std::lround(seconds);
    if (whole < 3600)
      std::snprintf(text, sizeof text, "%ld min %02ld s", whole / 60, whole % 60);
    else
      std::snprintf(text, sizeof text, "%ld h %02ld min", whole / 3600, whole % 3600 / 60);
  }
  return text;
}

std::string progress_text(const std::string& prefix, const std::string& scenario, const PlannedRun& run,
                          int runs, double elapsed_seconds, double seconds_left) {
  std::string text = prefix + scenario + ": " +
                     (run.warmup() ? std::string("warm-up")
                                   : "run " + std::to_string(run.pair + 1) + "/" + std::to_string(runs)) +
                     " " + side_name(run.side) + " the library, " + duration_text(elapsed_seconds) + " elapsed";
  if (seconds_left >= 0) text += ", ~" + duration_text(seconds_left) + " left";
  return text;
}

ProgressLine::ProgressLine(std::string prefix)
    : ProgressLine(std::move(prefix), stderr, isatty(STDERR_FILENO) == 1, 10, steady_seconds) {
  ticker_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::seconds(1),
                           [this] { return stopping_; })) {
      lock.unlock();
      tick();
      lock.lock();
    }
  });
}

ProgressLine::ProgressLine(std::string prefix, std::FILE* out, bool terminal, double every_seconds, Clock clock)
    : prefix_(std::move(prefix)), out_(out), terminal_(terminal), every_seconds_(every_seconds), clock_(std::move(clock)) {}

ProgressLine::~ProgressLine() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  clear();
}

void ProgressLine::show(const ProgressEvent& event) {
  std::lock_guard lock(mutex_);
  const double now = clock_();
  if (!started_) started_ = now;
  last_ = Last{event.request->scenario, event.run, event.request->runs, now, event.seconds_left};
  print_locked(now);
}

void ProgressLine::tick() {
  std::lock_guard lock(mutex_);
  if (last_) print_locked(clock_());
}

void ProgressLine::print_locked(double now) {
  // A plain line only when `every_seconds` have passed since the last one.
  if (!terminal_ && printed_ && now - *printed_ < every_seconds_) return;
  const double left = last_->seconds_left < 0 ? -1 : std::max(0.0, last_->seconds_left - (now - last_->at));
  // Through the door of printed lines (heapline::terminal_line): the
  // escape sequence that redraws the line is the only control text here.
  const std::string text =
      terminal_line(progress_text(prefix_, last_->scenario, last_->run, last_->runs, now - *started_, left));
  if (terminal_) {
    std::fprintf(out_, "\r\033[K%s", text.c_str());
    drawn_ = true;
  } else {
    std::fprintf(out_, "%s\n", text.c_str());
    printed_ = now;
  }
  std::fflush(out_);
}

void ProgressLine::clear() {
  std::lock_guard lock(mutex_);
  if (drawn_) std::fputs("\r\033[K", out_);
  drawn_ = false;
  last_.reset();
}

}  // namespace heapline::bench
