// The built-in demo model: the `tiny` preset of `websd make-model` (the architecture of the shared
// test fixtures) with random weights, written once into the user's cache folder so that
// `websd generate` works with no checkpoint at all. Its images are patterns, not pictures.
// Thread-compatible: concurrent first runs may both write it; the loser's copy is discarded.
#pragma once

#include <functional>
#include <string>

namespace websd::backends {

// $XDG_CACHE_HOME/websd/demo-tiny, else $HOME/.cache/websd/demo-tiny. Throws websd::Error when
// neither variable is set.
std::string demo_model_dir();

// demo_model_dir(), after writing the model there if it has no model_index.json yet; `progress` gets
// one line per written component.
std::string ensure_demo_model(const std::function<void(const std::string&)>& progress);

}  // namespace websd::backends
