// Progress of a generation run, reported by the pipeline once per stage and once per denoising step,
// and its rendering for a terminal: a bar redrawn in place when the output is a terminal, plain lines
// otherwise (logs, pipes). Not thread-safe: one printer per run. Whether a redrawn line is open (awaits
// its newline) is process-wide state, so that whoever prints next, an error message above all, can end
// it first with progress_line_end().
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

// Ends the line that a redrawing ProgressPrinter (or a caller of progress_line_open) left open, if any,
// by writing its pending newline; a no-op otherwise. Call it before printing anything, an error above
// all, to a stream a progress line may share. Each open line is ended once, even with concurrent
// callers; writing to the stream itself is as thread-safe as that stream.
void progress_line_end();
// Records that `out` now holds a line awaiting its newline (a partial line printed before a long
// step, e.g. "[1/3] attention:...": its end follows when the step is done), so that
// progress_line_end() ends it should an error come first. `out` must outlive the open line.
void progress_line_open(std::ostream& out);
// Records that the line opened on `out` was ended by its writer (no-op if another line is open).
void progress_line_closed(std::ostream& out);

class ProgressPrinter {
 public:
  // `redraw`: overwrite one line with '\r' (a terminal); else one line per event.
  ProgressPrinter(std::ostream& out, bool redraw);
  // Ends an open redrawn line (progress_line_end), so an interrupted run leaves the cursor on a new line.
  ~ProgressPrinter();
  ProgressPrinter(const ProgressPrinter&) = delete;
  ProgressPrinter& operator=(const ProgressPrinter&) = delete;

  void operator()(const ProgressEvent& event);

 private:
  std::ostream& out_;
  bool redraw_;
  std::chrono::steady_clock::time_point stage_start_;
};

}  // namespace websd
