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
  // Steps done, with the share of the step under way when this is a report within it.
  const double within = event.parts > 0 ? std::clamp(static_cast<double>(event.part) / event.parts, 0.0, 1.0) : 0.0;
  const double done = event.step + within;
  if (bar) {
    const int filled = event.total_steps > 0
                           ? std::clamp(static_cast<int>(kBarWidth * done / event.total_steps), 0, kBarWidth)
                           : kBarWidth;
    line.append(" [").append(static_cast<std::size_t>(filled), '#');
    line.append(static_cast<std::size_t>(kBarWidth - filled), ' ').append("]");
  }
  line.append(" ").append(std::to_string(event.step)).append("/").append(std::to_string(event.total_steps));
  if (done > 0 && seconds > 0) {
    const double rate = done / seconds;
    if (event.total_steps > 1) line.append(" ").append(fixed(rate, 2)).append(" it/s");  // one-step stages: time only
    if (done < event.total_steps) {
      line.append(" ETA ").append(fixed((event.total_steps - done) / rate, 1)).append("s");
    } else {
      line.append(" in ").append(fixed(seconds, 1)).append("s");
    }
  }
  if (event.parts > 0) {
    const std::string percent = std::to_string(static_cast<int>(100 * within)) + "%";
    line.append(event.total_steps > 1 ? " (step " + std::to_string(event.step + 1) + ": " + percent + ")"
                                      : " (" + percent + ")");
  }
  return line;
}

ProgressPrinter::ProgressPrinter(std::ostream& out, bool redraw, Clock clock)
    : out_(out), redraw_(redraw), clock_(clock ? std::move(clock) : Clock(std::chrono::steady_clock::now)) {}

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
  if (!event.note.empty()) {
    progress_line_end();
    out_ << "websd: " << event.note << "\n" << std::flush;
    return;
  }
  const auto now = clock_();
  if (event.parts > 0) {  // within a step: most reports return here, after one clock read
    if (now - step_start_ < kSlowStep || now - last_print_ < (redraw_ ? kRedrawInterval : kLineInterval)) return;
    print(event, now, false);
    return;
  }
  if (event.step == 0) stage_start_ = now;
  step_start_ = now;  // the next step starts as this one ends
  const bool finished = event.step >= event.total_steps;
  if (redraw_ || event.step > 0) print(event, now, finished);
}

void ProgressPrinter::print(const ProgressEvent& event, std::chrono::steady_clock::time_point now, bool finished) {
  last_print_ = now;
  const double seconds = std::chrono::duration<double>(now - stage_start_).count();
  if (!redraw_) {
    out_ << progress_line(event, seconds, false) << "\n" << std::flush;
    return;
  }
  out_ << "\r\033[K" << progress_line(event, seconds, true);
  if (finished) {
    out_ << "\n";
    progress_line_closed(out_);
  } else {
    progress_line_open(out_);
  }
  out_ << std::flush;
}

}  // namespace websd
