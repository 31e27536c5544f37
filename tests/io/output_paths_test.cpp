// The output rule (io/output_paths.h), all-or-nothing files (io/staged_files.h) and the refusal of
// atomic writes over special files, as library calls.
#include "io/output_paths.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "io/atomic_file.h"
#include "io/staged_files.h"
#include "support/error_text.h"
#include "support/fixtures.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

std::string error_of(const std::vector<OutputPath>& outputs, const std::vector<InputPath>& inputs = {}) {
  return test::error_of([&] { check_outputs("cmd", outputs, inputs); });
}

TEST(OutputPaths, RegularFilesNewFilesAndFoldersPass) {
  const std::string dir = test::make_temp_dir("out-ok");
  std::ofstream(dir + "/old.png") << "x";
  fs::create_directory(dir + "/empty");
  EXPECT_EQ(error_of({{"--out", dir + "/old.png", false, true},
                      {"--save", dir + "/new.bin"},
                      {"--dir", dir + "/art", true},
                      {"--empty", dir + "/empty", true}}),
            "(no error)");
}

TEST(OutputPaths, AnExistingFileOrFolderThatIsNotEmptyIsReplacedOnlyWhenAllowed) {
  const std::string dir = test::make_temp_dir("out-exists");
  std::ofstream(dir + "/old.png") << "x";
  fs::create_directories(dir + "/art/weights");
  EXPECT_NE(error_of({{"--out", dir + "/old.png"}}).find("--out " + dir + "/old.png: exists (pass --force"),
            std::string::npos);
  EXPECT_NE(error_of({{"--out", dir + "/art", true}}).find(": exists and is not empty (pass --force"),
            std::string::npos);
  EXPECT_EQ(error_of({{"--out", dir + "/art", true, true}}), "(no error)");
  // Being an input is the mistake to name, not what --force would allow.
  EXPECT_NE(error_of({{"--out", dir + "/old.png"}}, {{"--init", dir + "/old.png"}}).find("is the input --init"),
            std::string::npos);
}

TEST(OutputPaths, EachBrokenRuleNamesOptionPathAndCause) {
  const std::string dir = test::make_temp_dir("out-bad");
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  fs::create_symlink(dir + "/target", dir + "/link");
  fs::create_directory(dir + "/folder");
  std::ofstream(dir + "/file") << "x";
  EXPECT_NE(error_of({{"--out", ""}}).find("[cmd] --out is empty"), std::string::npos);
  EXPECT_NE(error_of({{"--out", "/dev/null"}}).find("--out /dev/null: is a device"), std::string::npos);
  EXPECT_NE(error_of({{"--out", dir + "/fifo"}}).find("is a FIFO"), std::string::npos);
  EXPECT_NE(error_of({{"--out", dir + "/link"}}).find("is a symbolic link"), std::string::npos);
  EXPECT_NE(error_of({{"--out", dir + "/folder"}}).find("is a folder, not a file"), std::string::npos);
  EXPECT_NE(error_of({{"--out", dir + "/file", true}}).find("not a folder"), std::string::npos);
  EXPECT_NE(error_of({{"--out", dir + "/none/x.png"}}).find("folder " + dir + "/none does not exist"),
            std::string::npos);
  EXPECT_NE(error_of({{"--out", dir + "/" + std::string(240, 'a')}}).find("the file name is 240 bytes"),
            std::string::npos);
  EXPECT_NE(error_of({{"--out", dir + "/file", false, true}}, {{"--init", dir + "/file"}}).find("is the input --init"),
            std::string::npos);
  EXPECT_NE(
      error_of({{"--out", dir + "/folder/x"}}, {{"--model", dir + "/folder"}}).find("lies inside the input --model"),
      std::string::npos);
  EXPECT_NE(error_of({{"--out", dir, true}}, {{"--model", dir + "/folder"}}).find("holds the input --model"),
            std::string::npos);
  EXPECT_NE(error_of({{"--a", dir + "/x"}, {"--b", dir + "/../" + fs::path(dir).filename().string() + "/x"}})
                .find("--a and --b both name"),
            std::string::npos);
}

// generate --batch-count names up to 10000 outputs: the check resolves each input once and each
// output folder once (the quadratic check it replaces resolved every path again per pair).
TEST(OutputPaths, ResolvesEachInputAndOutputFolderOnceHoweverManyOutputs) {
  const std::string dir = test::make_temp_dir("out-many");
  fs::create_directory(dir + "/model");
  std::ofstream(dir + "/init.png") << "x";
  std::vector<OutputPath> outputs;
  for (int i = 0; i < 2000; ++i) outputs.push_back({"--out", dir + "/out-" + std::to_string(i) + ".png"});
  outputs.push_back({"--save-latents", dir + "/latents.safetensors"});
  const std::vector<InputPath> inputs = {{"--model", dir + "/model"}, {"--init-image", dir + "/init.png"}, {"--x", ""}};
  std::size_t calls = 0;
  const PathResolver counting = [&](const std::string& path) {
    ++calls;
    return resolve_path(path);
  };
  EXPECT_EQ(test::error_of([&] { check_outputs("cmd", outputs, inputs, counting); }), "(no error)");
  EXPECT_EQ(calls, 3u) << "one output folder and two inputs";
  // A late duplicate is still found, and named with the earliest output it repeats.
  outputs.push_back({"--again", dir + "/./out-7.png"});
  outputs.push_back({"--late", dir + "/out-7.png"});
  EXPECT_NE(error_of(outputs, inputs).find("--out and --again both name " + dir + "/./out-7.png"), std::string::npos);
}

TEST(StagedFiles, NothingAppearsUntilCommitAndAFailureLeavesTheOldContent) {
  const std::string dir = test::make_temp_dir("staged");
  std::ofstream(dir + "/a.txt") << "old";
  {
    StagedFiles files("cmd");
    std::ofstream(files.stage(dir + "/a.txt")) << "new a";
    std::ofstream(files.stage(dir + "/b.txt")) << "new b";
    EXPECT_FALSE(fs::exists(dir + "/b.txt"));
    // Destroyed without commit: an error before the last output.
  }
  std::ifstream a(dir + "/a.txt");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}), "old");
  EXPECT_FALSE(fs::exists(dir + "/b.txt"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  StagedFiles files("cmd");
  std::ofstream(files.stage(dir + "/b.txt")) << "b";
  files.commit();
  EXPECT_TRUE(fs::exists(dir + "/b.txt"));
}

TEST(AtomicWrite, RefusesToReplaceWhatIsNotARegularFile) {
  const std::string dir = test::make_temp_dir("atomic-special");
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  const auto write = [](const std::string& path) {
    return test::error_of([&] { atomic_write_file(path, [](std::ostream& out) { out << "x"; }); });
  };
  EXPECT_NE(write(dir + "/fifo").find("is not a regular file"), std::string::npos);
  EXPECT_TRUE(fs::is_fifo(dir + "/fifo"));
  EXPECT_NE(write("/dev/null").find("is not a regular file"), std::string::npos);
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

}  // namespace
}  // namespace websd
