#include "pipeline/progress.h"

#include <algorithm>
#include <atomic>
#include <cstdio>

namespace websd {
namespace {

constexpr int kBarWidth = 20;

// The stream whose last line awaits its newline, or null: one per process, as there is one terminal.
std::atomic<std::ostream*> open_line{nullptr};

std::string fixed(double value, int decimals) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

}  // namespace

std::string progress_line(const ProgressEvent& event, double seconds, bool bar) {
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on chains of "literal" + std::string.
  std::string line;
  if (event.image_count > 1) {
    line.append("image ").append(std::to_string(event.image + 1)).append("/");
    line.append(std::to_string(event.image_count)).append(" ");
  }
  line.append(event.stage);
  if (bar) {
    const int done = event.total_steps > 0 ? kBarWidth * event.step / event.total_steps : kBarWidth;
    const int filled = std::clamp(done, 0, kBarWidth);
    line.append(" [").append(static_cast<std::size_t>(filled), '#');
    line.append(static_cast<std::size_t>(kBarWidth - filled), ' ').append("]");
  }
  line.append(" ").append(std::to_string(event.step)).append("/").append(std::to_string(event.total_steps));
  if (event.step > 0 && seconds > 0) {
    const double rate = event.step / seconds;
    if (event.total_steps > 1) line.append(" ").append(fixed(rate, 2)).append(" it/s");  // one-step stages: time only
    if (event.step < event.total_steps) {
      line.append(" ETA ").append(fixed((event.total_steps - event.step) / rate, 1)).append("s");
    } else {
      line.append(" in ").append(fixed(seconds, 1)).append("s");
    }
  }
  return line;
}

ProgressPrinter::ProgressPrinter(std::ostream& out, bool redraw) : out_(out), redraw_(redraw) {}

void progress_line_end() {
  if (std::ostream* out = open_line.exchange(nullptr)) *out << "\n" << std::flush;
}

void progress_line_open(std::ostream& out) { open_line.store(&out); }

void progress_line_closed(std::ostream& out) {
  std::ostream* expected = &out;
  open_line.compare_exchange_strong(expected, nullptr);
}

ProgressPrinter::~ProgressPrinter() {
  std::ostream* expected = &out_;
  if (open_line.compare_exchange_strong(expected, nullptr)) out_ << "\n" << std::flush;
}

void ProgressPrinter::operator()(const ProgressEvent& event) {
  const auto now = std::chrono::steady_clock::now();
  if (event.step == 0) stage_start_ = now;
  const double seconds = std::chrono::duration<double>(now - stage_start_).count();
  const bool finished = event.step >= event.total_steps;
  if (redraw_) {
    out_ << "\r\033[K" << progress_line(event, seconds, true);
    if (finished) {
      out_ << "\n";
      progress_line_closed(out_);
    } else {
      progress_line_open(out_);
    }
    out_ << std::flush;
  } else if (event.step > 0) {
    out_ << progress_line(event, seconds, false) << "\n" << std::flush;
  }
}

}  // namespace websd
