#include "pipeline/progress.h"

#include <algorithm>
#include <cstdio>

namespace websd {
namespace {

constexpr int kBarWidth = 20;

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

ProgressPrinter::~ProgressPrinter() {
  if (line_open_) out_ << "\n" << std::flush;  // an interrupted run still leaves the terminal on a new line
}

void ProgressPrinter::operator()(const ProgressEvent& event) {
  const auto now = std::chrono::steady_clock::now();
  if (event.step == 0) stage_start_ = now;
  const double seconds = std::chrono::duration<double>(now - stage_start_).count();
  const bool finished = event.step >= event.total_steps;
  if (redraw_) {
    out_ << "\r\033[K" << progress_line(event, seconds, true);
    line_open_ = !finished;
    if (finished) out_ << "\n";
    out_ << std::flush;
  } else if (event.step > 0) {
    out_ << progress_line(event, seconds, false) << "\n" << std::flush;
  }
}

}  // namespace websd
