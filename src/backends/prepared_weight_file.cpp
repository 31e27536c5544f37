#include "backends/prepared_weight_file.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <ostream>

#include "core/error.h"
#include "core/utf8.h"
#include "io/atomic_file.h"
#include "io/json_file.h"

namespace websd::backends {
namespace {

constexpr std::array<char, 8> kMagic = {'W', 'E', 'B', 'S', 'D', 'P', 'W', '1'};
constexpr std::uint64_t kPrefixBytes = 24;
// Entries start on page boundaries: the CPU device adopts them in place, and the kernels read
// them with aligned vector loads.
constexpr std::uint64_t kAlignment = 4096;
// A header lists a few thousand entries of ~200 bytes; anything far larger is not ours.
constexpr std::uint64_t kMaxHeaderBytes = 64ull << 20;

std::uint64_t align_up(std::uint64_t value) { return (value + kAlignment - 1) / kAlignment * kAlignment; }

std::uint64_t read_u64(const std::byte* at) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<std::uint8_t>(at[i]);
  return value;
}

void write_u64(std::ostream& out, std::uint64_t value) {
  std::array<char, 8> bytes{};
  for (auto& byte : bytes) {
    byte = static_cast<char>(value & 0xff);
    value >>= 8;
  }
  out.write(bytes.data(), bytes.size());
}

std::uint64_t checksum(std::span<const std::byte> bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

// The header's JSON text with every entry placed; `offsets` gets each entry's offset and then the
// offset after the last entry (the file's size).
std::string header_text(const PreparedWeightsHeader& header, const std::vector<PreparedWeightData>& weights,
                        bool with_checksums, std::vector<std::uint64_t>& offsets) {
  // Offsets depend on the header's length, which depends on the offsets' digits: the data starts
  // after the longest header these entries can have (every number at its widest).
  constexpr std::uint64_t kWidest = std::numeric_limits<std::uint64_t>::max();
  nlohmann::json entries = nlohmann::json::array();
  for (const PreparedWeightData& weight : weights) {
    entries.push_back({{"key", weight.key}, {"offset", kWidest}, {"bytes", weight.bytes.size()}, {"xxh3", kWidest}});
  }
  nlohmann::json json{{"component", header.component},
                      {"source", utf8_or_escaped(header.source)},  // a path: bytes, JSON holds UTF-8
                      {"digest", header.digest},
                      {"signature", header.signature},
                      {"entries", entries}};
  std::uint64_t offset = align_up(kPrefixBytes + json.dump().size());
  for (std::size_t i = 0; i < weights.size(); ++i) {
    offsets.push_back(offset);
    json["entries"][i]["offset"] = offset;
    json["entries"][i]["xxh3"] = with_checksums ? checksum(weights[i].bytes) : 0;
    offset += align_up(weights[i].bytes.size());
  }
  offsets.push_back(offset);
  return json.dump();
}

}  // namespace

std::uint64_t prepared_weight_file_bytes(const PreparedWeightsHeader& header,
                                         const std::vector<PreparedWeightData>& weights) {
  std::vector<std::uint64_t> offsets;
  header_text(header, weights, false, offsets);
  return offsets.back();
}

void write_prepared_weight_file(const std::string& path, const PreparedWeightsHeader& header,
                                const std::vector<PreparedWeightData>& weights) {
  std::vector<std::uint64_t> offsets;
  const std::string text = header_text(header, weights, true, offsets);
  try {
    atomic_write_file(path, [&](std::ostream& out) {
      out.write(kMagic.data(), kMagic.size());
      write_u64(out, text.size());
      write_u64(out, XXH3_64bits(text.data(), text.size()));
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
      std::uint64_t at = kPrefixBytes + text.size();
      const std::vector<char> zeros(kAlignment, 0);
      for (std::size_t i = 0; i < weights.size(); ++i) {
        const std::uint64_t offset = offsets[i];
        out.write(zeros.data(), static_cast<std::streamsize>(offset - at));
        out.write(reinterpret_cast<const char*>(weights[i].bytes.data()),
                  static_cast<std::streamsize>(weights[i].bytes.size()));
        at = offset + weights[i].bytes.size();
      }
      out.write(zeros.data(), static_cast<std::streamsize>(offsets.back() - at));
      if (!out) throw Error("cache", path + ": write failed (disk full?)");
    });
  } catch (const Error& error) {
    throw Error("cache", "cannot write the prepared-weight file: " + error.message());
  }
}

std::shared_ptr<const PreparedWeightFile> PreparedWeightFile::open(const std::string& path) {
  auto file =
      std::shared_ptr<PreparedWeightFile>(new PreparedWeightFile(MappedFile(path, input_kinds::kPreparedWeights)));
  const std::span<const std::byte> bytes = file->mapping_.bytes();
  const auto broken = [&](const std::string& what) { return Error("cache", path + ": " + what); };
  if (bytes.size() < kPrefixBytes || std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0) {
    throw broken("not a websd prepared-weight file (no WEBSDPW1 magic)");
  }
  const std::uint64_t header_bytes = read_u64(bytes.data() + 8);
  if (header_bytes > kMaxHeaderBytes || header_bytes > bytes.size() - kPrefixBytes) {
    throw broken("its header length " + std::to_string(header_bytes) + " runs past the file (" +
                 std::to_string(bytes.size()) + " bytes): truncated");
  }
  const std::span<const std::byte> text = bytes.subspan(kPrefixBytes, header_bytes);
  if (checksum(text) != read_u64(bytes.data() + 16)) throw broken("its header fails its checksum: damaged");
  nlohmann::json json;
  try {
    json = json_parse(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()), path);
    PreparedWeightsHeader& header = file->header_;
    header.component = json.at("component").get<std::string>();
    header.source = json.at("source").get<std::string>();
    header.digest = json.at("digest").get<std::string>();
    header.signature = json.at("signature").get<std::string>();
    for (const nlohmann::json& entry : json.at("entries")) {
      file->entries_.push_back({entry.at("key").get<std::string>(), entry.at("offset").get<std::uint64_t>(),
                                entry.at("bytes").get<std::uint64_t>(), entry.at("xxh3").get<std::uint64_t>()});
    }
  } catch (const nlohmann::json::exception& error) {
    throw broken(std::string("its header is not what websd writes: ") + error.what());
  }
  const std::uint64_t data_begin = kPrefixBytes + header_bytes;
  for (const Entry& entry : file->entries_) {
    if (entry.offset < data_begin || entry.offset > bytes.size() || entry.bytes > bytes.size() - entry.offset) {
      throw broken("entry '" + entry.key + "' lies outside the file: truncated or damaged");
    }
  }
  std::sort(file->entries_.begin(), file->entries_.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
  for (std::size_t i = 1; i < file->entries_.size(); ++i) {
    if (file->entries_[i].key == file->entries_[i - 1].key) {
      throw broken("entry '" + file->entries_[i].key + "' is listed twice: damaged");
    }
  }
  return file;
}

std::optional<std::string> PreparedWeightFile::verify(bool release_pages) const {
  std::vector<const Entry*> in_file_order;
  for (const Entry& entry : entries_) in_file_order.push_back(&entry);
  std::sort(in_file_order.begin(), in_file_order.end(),
            [](const Entry* a, const Entry* b) { return a->offset < b->offset; });
  for (const Entry* entry : in_file_order) {
    const auto offset = static_cast<std::size_t>(entry->offset);
    const auto length = static_cast<std::size_t>(entry->bytes);
    const bool intact = checksum(mapping_.bytes().subspan(offset, length)) == entry->xxh3;
    if (release_pages) mapping_.release_pages(offset, length);
    if (!intact) return entry->key;
  }
  return std::nullopt;
}

std::optional<std::span<const std::byte>> PreparedWeightFile::find(std::string_view key) const {
  const auto found = std::lower_bound(entries_.begin(), entries_.end(), key,
                                      [](const Entry& entry, std::string_view wanted) { return entry.key < wanted; });
  if (found == entries_.end() || found->key != key) return std::nullopt;
  return mapping_.bytes().subspan(static_cast<std::size_t>(found->offset), static_cast<std::size_t>(found->bytes));
}

std::vector<PreparedWeightData> PreparedWeightFile::entries() const {
  std::vector<PreparedWeightData> all;
  for (const Entry& entry : entries_) {
    all.push_back({entry.key, mapping_.bytes().subspan(static_cast<std::size_t>(entry.offset),
                                                       static_cast<std::size_t>(entry.bytes))});
  }
  return all;
}

}  // namespace websd::backends
