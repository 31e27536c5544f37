// The rule for every file or folder a websd command writes, checked before any work so that a bad
// output path fails at once and never after minutes of computing, and an output never destroys
// something else:
//   - the path is not empty and its folder exists and is writable;
//   - an existing file, or a folder that is not empty, is replaced only when the user said so
//     (--force): no command destroys earlier work by default (tune --db, which only appends, may
//     name an existing database);
//   - if it exists, it is a regular file (a folder for folder outputs): a device (/dev/null,
//     /dev/full), FIFO or socket is refused, since writing through a temporary file and renaming
//     would replace it;
//   - a symbolic link is refused (websd does not write through links: the rename would replace the
//     link, and following it would write where the user did not name);
//   - it is none of the command's inputs, does not lie inside an input folder (a model, an
//     artifact), and no two outputs are the same path (links and relative paths resolved).
// The check is linear in the number of outputs (generate --batch-count names up to 10000): each
// folder is checked and resolved once, each input resolved once, and duplicates are found by
// sorting. Pure checks of the file system; thread-safe.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace websd {

struct OutputPath {
  std::string option;  // "--out"
  std::string path;
  bool folder = false;  // a folder the command creates (build --out, make-model --out)
  // It may exist already (not empty, for a folder): the user passed --force, or the command only
  // appends to it.
  bool may_exist = false;
};

struct InputPath {
  std::string option;  // "--model"
  std::string path;    // a file or a folder; empty: not given
};

// The absolute form of `path` with every existing link resolved.
std::filesystem::path resolve_path(const std::string& path);

// How check_outputs resolves paths: resolve_path, or a test's counting wrapper around it.
using PathResolver = std::function<std::filesystem::path(const std::string& path)>;

// Throws websd::Error(component, ...) naming the option, the path and the fix for the first output
// that breaks the rule. Calls `resolve` once per input and once per distinct output folder.
void check_outputs(const std::string& component, const std::vector<OutputPath>& outputs,
                   const std::vector<InputPath>& inputs, const PathResolver& resolve = resolve_path);

}  // namespace websd
