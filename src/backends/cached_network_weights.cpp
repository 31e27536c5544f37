#include "backends/cached_network_weights.h"

#include <exception>
#include <vector>

#include "core/error.h"

namespace websd::backends {

CachedNetworkWeights::CachedNetworkWeights(std::shared_ptr<PreparedWeightCache> cache,
                                           const CheckpointComponent& component, std::string signature)
    : cache_(std::move(cache)), component_(component), signature_(std::move(signature)) {}

CachedNetworkWeights::~CachedNetworkWeights() { join_writer(); }

void CachedNetworkWeights::resolve() {
  const std::lock_guard lock(mutex_);
  if (resolved_) return;
  resolved_ = true;
  try {
    digest_ = cache_->digest_of(component_);
    file_ = cache_->open(digest_, signature_, true);
  } catch (const std::exception& failure) {
    // The cache only saves time: the run goes on without it.
    disabled_ = true;
    file_.reset();
    const auto* error = dynamic_cast<const Error*>(&failure);
    cache_->notice("prepared-weight cache: not used for " + component_.name() + ": " +
                   (error ? error->message() : std::string(failure.what())));
  }
}

std::optional<runtime::WeightBytes> CachedNetworkWeights::find(const std::string& key, DType stored) {
  resolve();
  const std::lock_guard lock(mutex_);
  if (!file_) return std::nullopt;
  const std::optional<std::span<const std::byte>> found = file_->find(key);
  if (!found) return std::nullopt;
  return runtime::WeightBytes{*found, stored, file_};
}

void CachedNetworkWeights::add_prepared(const std::string& key, const runtime::WeightBytes& bytes) {
  const std::lock_guard lock(mutex_);
  if (!disabled_) prepared_.insert_or_assign(key, bytes);
}

void CachedNetworkWeights::write_behind() {
  join_writer();
  const std::lock_guard lock(mutex_);
  if (disabled_ || !resolved_ || prepared_.empty()) return;
  // The new file: what was prepared now and every weight of the current file (another input
  // shape's packings stay cached). The owners keep all of it alive until written.
  std::vector<PreparedWeightData> weights;
  std::vector<std::shared_ptr<const void>> owners;
  for (const auto& [key, bytes] : prepared_) {
    weights.push_back({key, bytes.bytes});
    owners.push_back(bytes.owner);
  }
  if (file_) {
    for (const PreparedWeightData& kept : file_->entries()) {
      if (!prepared_.contains(kept.key)) weights.push_back(kept);
    }
    owners.push_back(file_);
  }
  prepared_.clear();
  PreparedWeightsHeader header{
      component_.name(),
      component_.weight_files().empty() ? component_.dir() : component_.weight_files().front()->path(), digest_,
      signature_};
  writer_ = std::thread([cache = cache_, header = std::move(header), weights = std::move(weights),
                         owners = std::move(owners)] { cache->store(header, weights); });
}

void CachedNetworkWeights::release() {
  join_writer();
  const std::lock_guard lock(mutex_);
  file_.reset();
  prepared_.clear();
  resolved_ = false;
}

bool CachedNetworkWeights::hit() const {
  const std::lock_guard lock(mutex_);
  return file_ != nullptr;
}

void CachedNetworkWeights::join_writer() {
  if (writer_.joinable()) writer_.join();
}

}  // namespace websd::backends
