#include "io/output_paths.h"

#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

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

// The absolute form of `path` with every existing link resolved.
fs::path resolved(const std::string& path) {
  std::error_code error;
  fs::path result = fs::weakly_canonical(fs::absolute(path, error), error);
  return error ? fs::absolute(path, error).lexically_normal() : result;
}

bool inside(const fs::path& child, const fs::path& parent) {
  const auto [mismatch, rest] = std::mismatch(parent.begin(), parent.end(), child.begin(), child.end());
  (void)rest;
  return mismatch == parent.end();
}

void check_one(const std::string& component, const OutputPath& output) {
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
  }
  fs::path folder = fs::path(output.path).parent_path();
  if (folder.empty()) folder = ".";
  if (!fs::is_directory(folder, error)) {
    throw Error(component, where + ": folder " + folder.string() + " does not exist (create it first)");
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    throw Error(component, where + ": folder " + folder.string() + " is not writable");
  }
}

}  // namespace

void check_outputs(const std::string& component, const std::vector<OutputPath>& outputs,
                   const std::vector<InputPath>& inputs) {
  for (const OutputPath& output : outputs) check_one(component, output);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const fs::path target = resolved(outputs[i].path);
    for (const InputPath& input : inputs) {
      if (input.path.empty()) continue;
      const fs::path source = resolved(input.path);
      std::error_code error;
      const bool folder_input = fs::is_directory(input.path, error);
      if (target == source || (folder_input && inside(target, source))) {
        throw Error(component, outputs[i].option + " " + outputs[i].path + ": " +
                                   (target == source ? "is" : "lies inside") + " the input " + input.option + " " +
                                   input.path + "; websd never writes over its inputs (choose another path)");
      }
      if (outputs[i].folder && inside(source, target)) {
        throw Error(component, outputs[i].option + " " + outputs[i].path + ": holds the input " + input.option + " " +
                                   input.path + ", which replacing the folder would delete (choose another path)");
      }
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (resolved(outputs[j].path) == target) {
        throw Error(component, outputs[j].option + " and " + outputs[i].option + " both name " + outputs[i].path +
                                   " (give each output its own path)");
      }
    }
  }
}

}  // namespace websd
