#include "app/weight_cache_options.h"

#include <iostream>

#include "core/error.h"

namespace websd::app {

void add_weight_cache_option(CLI::App& command, WeightCacheOptions& options) {
  command.add_flag("--no-weight-cache", options.disabled,
                   "Prepare every weight from the checkpoint and keep nothing in the prepared-weight cache "
                   "(default: reuse the weights a previous run prepared; see `websd cache`)");
}

std::shared_ptr<backends::PreparedWeightCache> open_weight_cache(const WeightCacheOptions& options,
                                                                 const std::string& command) {
  if (options.disabled) return nullptr;
  backends::PreparedWeightCacheOptions cache;
  cache.max_bytes = backends::PreparedWeightCache::default_max_bytes();
  try {
    cache.dir = backends::PreparedWeightCache::default_dir();
  } catch (const Error& error) {
    // A service without a home folder still runs; it prepares the weights every time.
    std::cerr << "websd " << command << ": running without the prepared-weight cache: " << error.message() << "\n";
    return nullptr;
  }
  cache.notice = [command](const std::string& line) { std::cerr << "websd " << command << ": " << line << "\n"; };
  return std::make_shared<backends::PreparedWeightCache>(std::move(cache));
}

}  // namespace websd::app
