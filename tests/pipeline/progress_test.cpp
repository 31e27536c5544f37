// Progress lines: bar, step counter, rate and ETA.
#include "pipeline/progress.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace websd
