// Interrupted and killed builds (issue 19): after SIGINT no compiler process that websd started
// outlives it, and the staging folder of a build killed outright (SIGKILL: no cleanup can run) is
// removed by the next build of the same artifact, while a live build's is left alone
// (io/folder_lock.h).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/cli_checks.h"
#include "support/fixtures.h"

namespace websd::test {
namespace {

namespace fs = std::filesystem;

struct Process {
  pid_t pid = 0;
  char state = '?';
  pid_t parent = 0;
  pid_t group = 0;
};

// Every process of the machine, from /proc/<pid>/stat ("pid (comm) state ppid pgrp ...").
std::vector<Process> processes() {
  std::vector<Process> all;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), {});
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    Process process;
    process.pid = std::stoi(name);
    std::istringstream fields(stat.substr(close + 1));
    fields >> process.state >> process.parent >> process.group;
    all.push_back(process);
  }
  return all;
}

// Polls `found` every 10 ms for up to two minutes.
bool wait_until(const std::function<bool()>& found) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (!found()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::vector<std::string> staging_folders(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("art.websd-partial-", 0) == 0) found.push_back(entry.path().string());
  }
  return found;
}

// Whether a process holds an flock on `path` (/proc/locks lists it by inode). Read, not probed with
// flock: taking the lock, even for a moment, would make the owner give up that folder for another.
bool flock_held(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return false;
  std::string inode = std::to_string(info.st_ino);
  inode.insert(0, 1, ':');  // not ":" + ...: GCC 12 warns falsely (-Wrestrict) about that concatenation
  std::ifstream locks("/proc/locks");
  for (std::string line; std::getline(locks, line);) {
    std::istringstream fields(line);
    std::string id, kind, mode, access, pid, device;
    fields >> id >> kind >> mode >> access >> pid >> device;
    if (kind == "FLOCK" && device.size() > inode.size() && device.ends_with(inode)) return true;
  }
  return false;
}

// The staging folders of `dir` once there are `count` of them, each locked by its build: a build
// stopped before it takes its lock holds nothing, and its folder is fair game for a sweep.
bool locked_staging_folders(const std::string& dir, std::size_t count) {
  const std::vector<std::string> folders = staging_folders(dir);
  return folders.size() == count && std::all_of(folders.begin(), folders.end(), flock_held);
}

std::vector<std::string> build_args(const std::string& out) {
  return {"build", "--model", fixture_model(), "--target", "cpu", "--out", out};
}

TEST(Interrupts, NoCompilerProcessOutlivesAnInterruptedBuild) {
  const std::string dir = make_temp_dir("interrupt-compiler");
  const pid_t websd = spawn_websd(build_args(dir + "/art"));
  pid_t compiler = 0;
  ASSERT_TRUE(wait_until([&] {
    for (const Process& process : processes()) {
      if (process.parent == websd) compiler = process.pid;
    }
    return compiler != 0;
  })) << "websd never started the kernel compiler";
  ::kill(websd, SIGINT);
  EXPECT_EQ(wait_websd(websd), 128 + SIGINT);
  // At once, not after the compiler has finished by itself: the compiler and all it started are gone.
  for (const Process& process : processes()) {
    if (process.state == 'Z') continue;  // exited, only not reaped yet by its new parent
    EXPECT_FALSE(process.pid == compiler || process.group == compiler)
        << "process " << process.pid << " (group " << process.group << ") of the compiler " << compiler
        << " is still running";
  }
  EXPECT_TRUE(fs::is_empty(dir)) << "debris in " << dir;
}

TEST(Interrupts, TheNextBuildRemovesWhatAKilledBuildLeftButNotWhatALiveBuildHolds) {
  const std::string dir = make_temp_dir("interrupt-killed");
  const std::string art = dir + "/art";
  // A build killed outright while it writes: stopped at once, so that it holds its staging folder
  // while the live build below starts.
  const pid_t killed = spawn_websd(build_args(art));
  ASSERT_TRUE(wait_until([&] { return locked_staging_folders(dir, 1); }));
  ::kill(killed, SIGSTOP);
  const std::string abandoned = staging_folders(dir).front();
  // A live build of the same artifact, stopped while it holds its own.
  const pid_t live = spawn_websd(build_args(art));
  ASSERT_TRUE(wait_until([&] { return locked_staging_folders(dir, 2); }));
  ::kill(live, SIGSTOP);
  const std::vector<std::string> folders = staging_folders(dir);
  const std::string held = folders[0] == abandoned ? folders[1] : folders[0];
  ::kill(killed, SIGKILL);
  EXPECT_EQ(wait_websd(killed), 128 + SIGKILL);
  ASSERT_TRUE(fs::exists(abandoned)) << "SIGKILL leaves the staging folder";

  const CommandResult next = run_websd(build_args(art));
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_NE(next.err.find("removed " + abandoned + ", left by a build that was killed"), std::string::npos) << next.err;
  EXPECT_FALSE(fs::exists(abandoned));
  EXPECT_TRUE(fs::exists(held)) << "a live build's staging folder was removed";
  EXPECT_TRUE(fs::exists(art + "/manifest.json"));

  ::kill(live, SIGTERM);
  ::kill(live, SIGCONT);
  EXPECT_EQ(wait_websd(live), 128 + SIGTERM);
  EXPECT_FALSE(fs::exists(held)) << "the live build removes its own folder when interrupted";
}

}  // namespace
}  // namespace websd::test
