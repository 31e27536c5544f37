// Progress lines: bar, step counter, rate and ETA.
#include "pipeline/progress.h"

#include <gtest/gtest.h>

#include <algorithm>
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

}  // namespace
}  // namespace websd
