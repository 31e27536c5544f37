#include "io/output_paths.h"

#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"

namespace websd {
namespace {

namespace fs = std::filesystem;

std::string kind_of(const fs::file_status& status) {
  switch (status.type()) {
    case fs::file_type::directory:
      return "a folder";
    case fs::file_type::block:
    case fs::file_type::character:
      return "a device";
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::symlink:
      return "a symbolic link";
    default:
      return "not a regular file";
  }
}

// One spelling per path, so that resolved paths compare as strings: no trailing separator.
std::string normal_text(const fs::path& path) {
  std::string text = path.string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

// `child` is `parent` or lies below it (both in normal_text form).
bool inside(const std::string& child, const std::string& parent) {
  if (child.compare(0, parent.size(), parent) != 0) return false;
  return child.size() == parent.size() || parent.back() == '/' || child[parent.size()] == '/';
}

// The folders that hold outputs, each checked and resolved once however many outputs it holds.
class OutputFolders {
 public:
  explicit OutputFolders(const PathResolver& resolve) : resolve_(resolve) {}

  // Throws unless `folder` exists and is writable; `where` names the output.
  void require_writable(const std::string& component, const std::string& where, const fs::path& folder) {
    if (writable_.count(folder.string()) != 0) return;
    std::error_code error;
    if (!fs::is_directory(folder, error)) {
      throw Error(component, where + ": folder " + folder.string() + " does not exist (create it first)");
    }
    if (::access(folder.c_str(), W_OK | X_OK) != 0) {
      throw Error(component, where + ": folder " + folder.string() + " is not writable");
    }
    writable_.insert(folder.string());
  }

  // The output's absolute path with links resolved. An output is never a link itself (check_one
  // refuses one), so resolving its folder and appending its name is exact.
  std::string resolve_output(const std::string& path) {
    const fs::path name = fs::path(path).filename();
    if (name.empty() || name == "." || name == "..") return normal_text(resolve_(path));
    fs::path folder = fs::path(path).parent_path();
    if (folder.empty()) folder = ".";
    auto found = resolved_.find(folder.string());
    if (found == resolved_.end()) found = resolved_.emplace(folder.string(), resolve_(folder.string())).first;
    return normal_text(found->second / name);
  }

 private:
  const PathResolver& resolve_;
  std::unordered_set<std::string> writable_;
  std::unordered_map<std::string, fs::path> resolved_;
};

// Returns whether the output exists already (a folder: and is not empty), so that writing it replaces something.
bool check_one(const std::string& component, const OutputPath& output, OutputFolders& folders) {
  const std::string where = output.option + " " + output.path;
  if (output.path.empty()) {
    throw Error(component, output.option + " is empty (name the " + (output.folder ? "folder" : "file") + " to write)");
  }
  // websd writes through a temporary sibling whose name adds up to ~48 bytes (StagedFiles, atomic files).
  constexpr std::size_t kTemporarySuffix = 48;
  const std::string name = fs::path(output.path).filename().string();
  if (name.size() + kTemporarySuffix > NAME_MAX) {
    throw Error(component, output.option + " " + output.path.substr(0, 80) + "...: the file name is " +
                               std::to_string(name.size()) + " bytes; at most " +
                               std::to_string(NAME_MAX - kTemporarySuffix) + " fit beside websd's temporary suffix");
  }
  std::error_code error;
  const fs::file_status status = fs::symlink_status(output.path, error);
  bool replaces = false;
  if (error && error != std::errc::no_such_file_or_directory) {
    throw Error(component, where + ": " + error.message() + " (check the path)");
  }
  if (fs::exists(status)) {
    if (fs::is_symlink(status)) {
      throw Error(component, where +
                                 ": is a symbolic link; websd does not write through links (name the file it "
                                 "points to, " +
                                 fs::read_symlink(output.path, error).string() + ", instead)");
    }
    const bool right_kind = output.folder ? fs::is_directory(status) : fs::is_regular_file(status);
    if (!right_kind) {
      throw Error(component, where + ": is " + kind_of(status) + ", not a " + (output.folder ? "folder" : "file") +
                                 " websd may replace (name a " + (output.folder ? "folder" : "regular file") +
                                 " path)");
    }
    replaces = !output.folder || !fs::is_empty(output.path, error);
  }
  fs::path folder = fs::path(output.path).parent_path();
  if (folder.empty()) folder = ".";
  folders.require_writable(component, where, folder);
  return replaces;
}

struct ResolvedInput {
  const InputPath* input;
  std::string path;
  bool folder;
};

// The first pair of outputs (by the later one's position) that resolve to the same path.
void check_distinct(const std::string& component, const std::vector<OutputPath>& outputs,
                    const std::vector<std::string>& targets) {
  std::vector<std::size_t> order(targets.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return targets[a] < targets[b]; });
  std::size_t first = 0, second = targets.size();
  for (std::size_t k = 1; k < order.size(); ++k) {
    // Within a run of equal paths the positions ascend, so its first two make its earliest pair.
    if (targets[order[k]] == targets[order[k - 1]] && order[k] < second) {
      first = order[k - 1];
      second = order[k];
    }
  }
  if (second == targets.size()) return;
  throw Error(component, outputs[first].option + " and " + outputs[second].option + " both name " +
                             outputs[second].path + " (give each output its own path)");
}

}  // namespace

fs::path resolve_path(const std::string& path) {
  std::error_code error;
  fs::path result = fs::weakly_canonical(fs::absolute(path, error), error);
  return error ? fs::absolute(path, error).lexically_normal() : result;
}

void check_outputs(const std::string& component, const std::vector<OutputPath>& outputs,
                   const std::vector<InputPath>& inputs, const PathResolver& resolve) {
  OutputFolders folders(resolve);
  const OutputPath* replaced = nullptr;
  for (const OutputPath& output : outputs) {
    if (check_one(component, output, folders) && !output.may_exist && replaced == nullptr) replaced = &output;
  }
  std::vector<ResolvedInput> sources;
  for (const InputPath& input : inputs) {
    if (input.path.empty()) continue;
    std::error_code error;
    sources.push_back({&input, normal_text(resolve(input.path)), fs::is_directory(input.path, error)});
  }
  std::vector<std::string> targets;
  targets.reserve(outputs.size());
  for (const OutputPath& output : outputs) {
    targets.push_back(folders.resolve_output(output.path));
    const std::string& target = targets.back();
    for (const ResolvedInput& source : sources) {
      const bool same = target == source.path;
      if (same || (source.folder && inside(target, source.path))) {
        throw Error(component, output.option + " " + output.path + ": " + (same ? "is" : "lies inside") +
                                   " the input " + source.input->option + " " + source.input->path +
                                   "; websd never writes over its inputs (choose another path)");
      }
      if (output.folder && inside(source.path, target)) {
        throw Error(component, output.option + " " + output.path + ": holds the input " + source.input->option + " " +
                                   source.input->path +
                                   ", which replacing the folder would delete (choose another path)");
      }
    }
  }
  check_distinct(component, outputs, targets);
  // Last: an output that is an input, or named twice, is the mistake to report, not what --force allows.
  if (replaced != nullptr) {
    throw Error(component, replaced->option + " " + replaced->path +
                               (replaced->folder ? ": exists and is not empty" : ": exists") +
                               " (pass --force to replace it, or choose another path)");
  }
}

}  // namespace websd
