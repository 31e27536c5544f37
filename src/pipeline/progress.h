// Progress of a generation run, reported by the pipeline once per stage and once per denoising step,
// and its rendering for a terminal: a bar redrawn in place when the output is a terminal, plain lines
// otherwise (logs, pipes). Not thread-safe: one printer per run.
#pragma once

#include <chrono>
#include <functional>
#include <ostream>
#include <string>

namespace websd {

struct ProgressEvent {
  std::string stage;    // "encode prompt", "encode image", "denoise", "decode"
  int image = 0;        // 0-based index in the run
  int image_count = 1;  // images in the run
  int step = 0;         // steps done in this stage (1..total_steps once a step finished; 0 at its start)
  int total_steps = 1;
};

using ProgressCallback = std::function<void(const ProgressEvent&)>;

// One line: "image 1/2 denoise [#####     ] 4/8 2.50 it/s ETA 1.6s" (bar) or without the bar.
// `seconds` is the time since the stage's step 0.
std::string progress_line(const ProgressEvent& event, double seconds, bool bar);

class ProgressPrinter {
 public:
  // `redraw`: overwrite one line with '\r' (a terminal); else one line per event.
  ProgressPrinter(std::ostream& out, bool redraw);
  ~ProgressPrinter();

  void operator()(const ProgressEvent& event);

 private:
  std::ostream& out_;
  bool redraw_;
  bool line_open_ = false;  // a redrawn line awaits its newline
  std::chrono::steady_clock::time_point stage_start_;
};

}  // namespace websd
