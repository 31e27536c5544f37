// Folders a live websd owns (io/folder_lock.h): a sweep removes the folders whose lock is free and
// keeps the ones held, whoever holds them.
#include "io/folder_lock.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/error_text.h"
#include "support/fixtures.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

TEST(FolderLock, AFolderWhoseLockIsFreeIsRemovedAndAHeldOneKept) {
  const std::string dir = test::make_temp_dir("folder-lock");
  FolderLock held = FolderLock::create(dir + "/art.websd-partial-XXXXXX", "test");
  ASSERT_TRUE(fs::is_directory(held.path()));
  fs::create_directory(dir + "/art.websd-partial-left");  // no process holds its lock: its owner is gone
  fs::create_directory(dir + "/other");
  std::ofstream(dir + "/art.websd-partial-file") << "a file, not a folder";
  EXPECT_EQ(remove_abandoned_folders(dir, "art.websd-partial-"),
            std::vector<std::string>{dir + "/art.websd-partial-left"});
  EXPECT_TRUE(fs::exists(held.path()));
  EXPECT_TRUE(fs::exists(dir + "/other"));
  EXPECT_TRUE(fs::exists(dir + "/art.websd-partial-file"));
  // Its owner ends: the folder is abandoned now.
  const std::string path = held.path();
  held = FolderLock();
  EXPECT_EQ(remove_abandoned_folders(dir, "art.websd-partial-"), std::vector<std::string>{path});
}

TEST(FolderLock, AFolderThatCannotBeCreatedNamesWhereAndWhy) {
  const std::string error = test::error_of([] { FolderLock::create("/nonexistent/websd/x-XXXXXX", "build"); });
  EXPECT_NE(error.find("[build] /nonexistent/websd: cannot create a folder in it"), std::string::npos) << error;
}

}  // namespace
}  // namespace websd
