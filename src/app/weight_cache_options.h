// The prepared-weight cache as the commands that run a checkpoint use it (generate, bench): on by
// default, `--no-weight-cache` to prepare every weight from the checkpoint and keep nothing. The
// folder is backends::PreparedWeightCache::default_dir(), its bound WEBSD_WEIGHT_CACHE_MAX; see
// `websd cache` for listing and clearing it. Not thread-safe (CLI setup).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "backends/prepared_weight_cache.h"

namespace websd::app {

struct WeightCacheOptions {
  bool disabled = false;
};

void add_weight_cache_option(CLI::App& command, WeightCacheOptions& options);

// The cache to use, or null when disabled or when no cache folder can be named (neither
// XDG_CACHE_HOME nor HOME set: said on stderr); its notices go to stderr as "websd <command>: ...".
// Throws websd::Error for a malformed WEBSD_WEIGHT_CACHE_MAX.
std::shared_ptr<backends::PreparedWeightCache> open_weight_cache(const WeightCacheOptions& options,
                                                                 const std::string& command);

}  // namespace websd::app
