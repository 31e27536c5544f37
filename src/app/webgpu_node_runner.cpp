#include "app/webgpu_node_runner.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/error.h"
#include "io/json_file.h"

extern char** environ;

namespace websd {
namespace fs = std::filesystem;

bool is_webgpu_artifact(const std::string& dir) {
  try {
    const nlohmann::json manifest = json_read_file(dir + "/manifest.json", input_kinds::kArtifactFile);
    return manifest.is_object() && manifest.value("target", std::string()) == "webgpu";
  } catch (const std::exception&) {
    return false;
  }
}

namespace {

// The private scratch folder of one run, removed however the run ends.
class Scratch {
 public:
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "websd-webgpu-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw Error("webgpu", "cannot create a folder in " + pattern);
    path_ = pattern;
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

void run_webgpu_node(const std::string& command, const std::string& mode, const std::string& dir,
                     const std::string& tier, const nlohmann::json& request,
                     const std::function<void(const nlohmann::json&)>& on_result,
                     const std::map<std::string, std::span<const std::byte>>& files) {
  const std::string script = dir + "/runtime/node/websd_node.mjs";
  if (!fs::is_regular_file(script)) {
    throw Error(command, dir + " has no runtime/node/websd_node.mjs: rebuild it with websd build --target webgpu");
  }
  const Scratch scratch;
  const std::string request_path = scratch.path() + "/request.json";
  std::ofstream(request_path) << request.dump();
  for (const auto& [name, bytes] : files) {
    std::ofstream file(scratch.path() + "/" + name, std::ios::binary);
    file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!file) throw Error(command, "cannot write " + scratch.path() + "/" + name);
  }
  std::vector<std::string> args = {"node", script, mode, dir, request_path};
  if (mode == "generate") args.push_back(scratch.path());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  // The environment, plus where this build's npm `webgpu` lives when the caller did not say.
  std::vector<std::string> env_text;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "WEBSD_TIER=", 11) != 0) env_text.emplace_back(*entry);
  }
  if (!tier.empty()) env_text.push_back("WEBSD_TIER=" + tier);
  const std::string module = std::string(WEBSD_WEB_SOURCE_DIR) + "/node_modules/webgpu/index.js";
  if (std::getenv("WEBGPU_MODULE") == nullptr && fs::exists(module)) env_text.push_back("WEBGPU_MODULE=" + module);
  std::vector<char*> envp;
  for (std::string& entry : env_text) envp.push_back(entry.data());
  envp.push_back(nullptr);

  int out[2];
  if (::pipe(out) != 0) throw Error(command, std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, "node", &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (spawned != 0) {
    ::close(out[0]);
    throw Error(command, std::string("cannot start node (") + std::strerror(spawned) +
                             "): webgpu artifacts run under Node.js (scripts/install-deps.sh installs it)");
  }
  std::string pending;
  std::string failure;
  char buffer[4096];
  for (;;) {
    const ssize_t got = ::read(out[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    pending.append(buffer, static_cast<std::size_t>(got));
    for (std::size_t end; failure.empty() && (end = pending.find('\n')) != std::string::npos;) {
      const std::string line = pending.substr(0, end);
      pending.erase(0, end + 1);
      try {
        on_result(nlohmann::json::parse(line));
      } catch (const std::exception& error) {
        failure = error.what();  // keep draining, so the runner is not killed by a closed pipe
      }
    }
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!failure.empty()) throw Error(command, "the webgpu runner's result: " + failure);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw Error(command, "the webgpu runner failed (" +
                             (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                                : "signal " + std::to_string(WTERMSIG(status))) +
                             "; its message is above)");
  }
}

}  // namespace websd
