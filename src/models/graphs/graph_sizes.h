// Checks of the static sizes a network graph is built for (batch, tokens, spatial sizes). Errors read
// "[component] function: what = value must be ... (how to fix)". Internal to websd_model_graphs;
// pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace websd::graph_sizes {

// Throws websd::Error unless value >= 1.
void require_positive(const std::string& component, const std::string& function, const std::string& what,
                      std::int64_t value);
// 2^(levels-1): how much a network with `levels` resolution levels halves (or doubles) H and W.
std::int64_t level_factor(std::size_t levels);
// Throws websd::Error unless height and width are positive and divisible by level_factor(levels).
void require_spatial(const std::string& component, const std::string& function, const std::string& what,
                     std::int64_t height, std::int64_t width, std::size_t levels);

}  // namespace websd::graph_sizes
