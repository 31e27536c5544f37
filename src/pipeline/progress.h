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

// Reported at each stage's start (step 0), at the end of each step, and within a step as the
// backend's call progresses (parts > 0: part of parts done, the step after `step` under way).
struct ProgressEvent {
  std::string stage;    // "encode prompt", "encode image", "denoise", "decode"
  int image = 0;        // 0-based index in the run
  int image_count = 1;  // images in the run
  int step = 0;         // steps done in this stage (1..total_steps once a step finished; 0 at its start)
  int total_steps = 1;
  int part = 0;   // within the step under way: parts (launches) done
  int parts = 0;  // and in all; 0: not a report within a step
  // Not empty: a line to show the user once (how the run adapts, e.g. a decode in tiles), reported
  // apart from the stage's progress.
  std::string note{};
};

using ProgressCallback = std::function<void(const ProgressEvent&)>;

// One line: "image 1/2 denoise [#####     ] 4/8 2.50 it/s ETA 1.6s" (bar) or without the bar; within
// a step, the step under way and its share done follow: "denoise [#         ] 1/20 0.21 it/s ETA
// 90.2s (step 2: 41%)". `seconds` is the time since the stage's step 0.
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

// Prints each step's end (a terminal: every event, redrawn), and each note as a line of its own
// ("websd: <note>"). Reports within a step are shown only when
// the step is slow (running for kSlowStep), at most every kRedrawInterval on a terminal and every
// kLineInterval as lines elsewhere (logs); a fast step costs one clock read per report.
class ProgressPrinter {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  static constexpr std::chrono::milliseconds kSlowStep{1000};
  static constexpr std::chrono::milliseconds kRedrawInterval{250};
  static constexpr std::chrono::milliseconds kLineInterval{5000};

  // `redraw`: overwrite one line with '\r' (a terminal); else one line per event. `clock`: the time
  // (default: std::chrono::steady_clock::now; tests inject their own).
  ProgressPrinter(std::ostream& out, bool redraw, Clock clock = {});
  // Ends an open redrawn line (progress_line_end), so an interrupted run leaves the cursor on a new line.
  ~ProgressPrinter();
  ProgressPrinter(const ProgressPrinter&) = delete;
  ProgressPrinter& operator=(const ProgressPrinter&) = delete;

  void operator()(const ProgressEvent& event);

 private:
  void print(const ProgressEvent& event, std::chrono::steady_clock::time_point now, bool finished);

  std::ostream& out_;
  bool redraw_;
  Clock clock_;
  std::chrono::steady_clock::time_point stage_start_, step_start_, last_print_;
};

}  // namespace websd
