// Progress lines: bar, step counter, rate and ETA; progress within a slow step, and none for fast ones.
#include "pipeline/progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <sstream>

namespace websd {
namespace {

TEST(Progress, LineShowsStepRateAndEta) {
  const ProgressEvent event{"denoise", 0, 1, 4, 8};
  EXPECT_EQ(progress_line(event, 2.0, false), "denoise 4/8 2.00 it/s ETA 2.0s");
  EXPECT_EQ(progress_line(event, 2.0, true), "denoise [##########          ] 4/8 2.00 it/s ETA 2.0s");
}

TEST(Progress, LineNamesTheImageOfABatchAndTheTotalTimeAtTheEnd) {
  const ProgressEvent event{"denoise", 1, 3, 8, 8};
  EXPECT_EQ(progress_line(event, 4.0, false), "image 2/3 denoise 8/8 2.00 it/s in 4.0s");
}

TEST(Progress, OneStepStagesShowTheirTimeOnly) {
  EXPECT_EQ(progress_line({"decode", 0, 1, 1, 1}, 0.3, false), "decode 1/1 in 0.3s");
}

TEST(Progress, StartOfAStageHasNoRate) { EXPECT_EQ(progress_line({"decode", 0, 1, 0, 1}, 0.0, false), "decode 0/1"); }

TEST(Progress, PlainPrinterWritesOneLinePerFinishedStep) {
  std::ostringstream out;
  {
    ProgressPrinter printer(out, false);
    printer({"denoise", 0, 1, 0, 2});
    printer({"denoise", 0, 1, 1, 2});
    printer({"denoise", 0, 1, 2, 2});
  }
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("denoise 1/2", 0), 0u) << text;
  EXPECT_NE(text.find("\ndenoise 2/2"), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos);
}

TEST(Progress, TerminalPrinterRedrawsOneLineAndEndsIt) {
  std::ostringstream out;
  {
    ProgressPrinter printer(out, true);
    printer({"denoise", 0, 1, 0, 2});
    printer({"denoise", 0, 1, 1, 2});
  }  // interrupted: the destructor ends the line
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("\r\033[Kdenoise [", 0), 0u);
  EXPECT_EQ(text.back(), '\n');
}

TEST(Progress, LineEndEndsAnOpenRedrawnLineOnce) {
  std::ostringstream out;
  ProgressPrinter printer(out, true);
  printer({"denoise", 0, 1, 0, 4});
  printer({"denoise", 0, 1, 1, 4});
  ASSERT_NE(out.str().back(), '\n');
  progress_line_end();  // what the CLI does before printing an error
  EXPECT_EQ(out.str().back(), '\n') << out.str();
  const std::string ended = out.str();
  progress_line_end();
  EXPECT_EQ(out.str(), ended);  // nothing more to end
}

// A note (e.g. the decode runs in tiles) is a line of its own, after the redrawn line it interrupts.
TEST(Progress, ANoteIsALineOfItsOwn) {
  std::ostringstream out;
  ProgressPrinter printer(out, true);
  printer({"denoise", 0, 1, 1, 4});
  ProgressEvent note{"denoise", 0, 1, 1, 4};
  note.note = "decoding in 4 tiles";
  printer(note);
  const std::string text = out.str();
  EXPECT_NE(text.find("1/4"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.find('\n')), "\nwebsd: decoding in 4 tiles\n") << text;
}

TEST(Progress, LineEndAfterAFinishedStageWritesNothing) {
  std::ostringstream out;
  {
    ProgressPrinter printer(out, true);
    printer({"decode", 0, 1, 0, 1});
    printer({"decode", 0, 1, 1, 1});
    const std::string finished = out.str();
    EXPECT_EQ(finished.back(), '\n');
    progress_line_end();
    EXPECT_EQ(out.str(), finished);
  }
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;  // the destructor adds none
}

TEST(Progress, DestructorAfterLineEndAddsNoSecondNewline) {
  std::ostringstream out;
  {
    ProgressPrinter printer(out, true);
    printer({"denoise", 0, 1, 1, 4});
    progress_line_end();
  }
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
}

TEST(Progress, PartialLinesOpenedByOthersAreEndedToo) {
  std::ostringstream out;
  out << "[1/3] attention:q=f32[2,8,64,40];causal=1";
  progress_line_open(out);
  progress_line_end();
  EXPECT_EQ(out.str().back(), '\n');
  out << ": block_rows 64\n";
  progress_line_open(out);
  progress_line_closed(out);  // its writer ended it: nothing left to end
  const std::string text = out.str();
  progress_line_end();
  EXPECT_EQ(out.str(), text);
}

TEST(Progress, LineShowsTheShareOfTheStepUnderWay) {
  const ProgressEvent within{"denoise", 0, 1, 2, 20, 41, 100};
  EXPECT_EQ(progress_line(within, 10.0, false), "denoise 2/20 0.24 it/s ETA 73.0s (step 3: 41%)");
  EXPECT_EQ(progress_line(within, 10.0, true).substr(0, 31), "denoise [##                  ] ");
  EXPECT_EQ(progress_line({"decode", 0, 1, 0, 1, 30, 100}, 2.0, false), "decode 0/1 ETA 4.7s (30%)");
}

// A printer on a clock the test moves.
struct TimedPrinter {
  std::chrono::steady_clock::time_point now{};
  std::ostringstream out;
  ProgressPrinter printer;

  explicit TimedPrinter(bool redraw) : printer(out, redraw, [this] { return now; }) {}
  void at(double seconds, const ProgressEvent& event) {
    now = std::chrono::steady_clock::time_point{} +
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    printer(event);
  }
  // Reports of `parts` launches spread over [from, to) seconds within the step after `step`.
  void launches(double from, double to, int step, int parts) {
    for (int part = 1; part <= parts; ++part)
      at(from + (to - from) * part / (parts + 1), {"denoise", 0, 1, step, 4, part, parts});
  }
};

TEST(Progress, FastStepsPrintNothingMoreThanTheirEnds) {
  for (const bool redraw : {true, false}) {
    TimedPrinter quiet(redraw), reported(redraw);
    for (int step = 0; step <= 4; ++step) {
      quiet.at(0.01 * step, {"denoise", 0, 1, step, 4});
      if (step > 0) reported.launches(0.01 * (step - 1), 0.01 * step, step - 1, 300);
      reported.at(0.01 * step, {"denoise", 0, 1, step, 4});
    }
    EXPECT_EQ(reported.out.str(), quiet.out.str()) << redraw;
  }
}

TEST(Progress, ASlowStepShowsItsShareOnATerminalAtMostFourTimesASecond) {
  TimedPrinter terminal(true);
  terminal.at(0.0, {"denoise", 0, 1, 0, 4});
  terminal.at(0.5, {"denoise", 0, 1, 1, 4});
  const std::size_t before = terminal.out.str().size();
  terminal.at(1.4, {"denoise", 0, 1, 1, 4, 10, 100});  // 0.9 s into the step: not slow yet
  EXPECT_EQ(terminal.out.str().size(), before);
  terminal.at(1.6, {"denoise", 0, 1, 1, 4, 20, 100});
  EXPECT_NE(terminal.out.str().find("\r\033[Kdenoise [#####", before), std::string::npos);
  EXPECT_NE(terminal.out.str().find("(step 2: 20%)"), std::string::npos) << terminal.out.str();
  const std::size_t shown = terminal.out.str().size();
  terminal.at(1.7, {"denoise", 0, 1, 1, 4, 30, 100});  // 0.1 s after the last redraw
  EXPECT_EQ(terminal.out.str().size(), shown);
  terminal.at(1.9, {"denoise", 0, 1, 1, 4, 40, 100});
  EXPECT_NE(terminal.out.str().find("(step 2: 40%)", shown), std::string::npos);
  EXPECT_EQ(terminal.out.str().find('\n'), std::string::npos) << "one line, redrawn";
}

TEST(Progress, ASlowStepShowsItsShareInALogEveryFiveSeconds) {
  TimedPrinter log(false);
  log.at(0.0, {"denoise", 0, 1, 0, 4});
  log.at(3.0, {"denoise", 0, 1, 1, 4});  // a line at 3 s
  log.launches(3.0, 20.0, 1, 1000);      // a 17 s step: lines at 8, 13 and 18 s
  const std::string text = log.out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4) << text;
  EXPECT_NE(text.find("denoise 1/4"), std::string::npos);
  EXPECT_NE(text.find("(step 2: 29%)"), std::string::npos) << text;  // at 8 s: 5 of 17 s
  EXPECT_EQ(text.find('\r'), std::string::npos);
}

}  // namespace
}  // namespace websd
