// Ways to alter a written artifact on disk the way a broken copy or a hostile edit would, and to
// catch the error that reading it then throws. Portable: the native and the WebAssembly tests use
// them.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace websd::test {

std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);

// Applies `edit` to manifest.json's JSON, writes it back and reseals it, as someone crafting an
// artifact would: the checks after the digest must catch the edit.
void edit_manifest(const std::string& dir, const std::function<void(nlohmann::json&)>& edit);
// Records manifest.json's SHA-256 in seal.json, keeping the seal's HMAC and signature as they were.
void reseal_manifest(const std::string& dir);
// Applies `edit` to weights/index.json, then records the new index checksum in the manifest, as
// someone crafting an artifact would: the index's own checks must catch the edit.
void edit_index_consistently(const std::string& dir, const std::function<void(nlohmann::json&)>& edit);
// Flips one bit of the file's byte at `offset`.
void flip_byte(const std::string& path, std::size_t offset);

// The message of the websd::Error that `action` throws; fails the test if it throws nothing.
std::string error_of(const std::function<void()>& action);

}  // namespace websd::test
