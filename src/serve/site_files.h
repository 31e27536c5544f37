// What `websd serve` publishes, and nothing else: for each webgpu artifact, the files its manifest
// lists (the page, the runtime, kernels, tokenizer, scheduler) and what a reader opens first
// (manifest.json, seal.json, weights/index.json and the weight shards), each under
// /a/<name>/<path> with its SHA-256 as strong ETag. A request for any other path is not a file of
// the site, so there is no directory listing and no way out of the artifacts by construction.
// Every file is hashed when the site is made and must match what its artifact lists; while serving,
// each file's CheckedFile (checked_file.h) keeps ETags and bodies in agreement.
//
//   SiteFiles site = site_files({"sd15.webgpu"});    // opens and checks each artifact
//   const SiteFile* file = site.find("/a/sd15/manifest.json");
//
// Thread-safe to read after construction (the files' CheckedFile guard themselves).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "serve/checked_file.h"

namespace websd::serve {

struct SiteFile {
  std::string disk_path;
  std::string mime;
  std::string sha256;  // lowercase hex: the ETag, and what a ?sha256= query must name to be immutable
  std::uint64_t bytes = 0;
  std::shared_ptr<CheckedFile> checked;  // the identity under which its bytes last matched sha256
};

struct ServedArtifact {
  std::string name;  // its URL segment: /a/<name>/
  std::string dir;
  nlohmann::json model;  // the manifest's model section, for the picker
};

class SiteFiles {
 public:
  // The file at URL path `path` (already percent-decoded, without the query), or nullptr.
  const SiteFile* find(std::string_view path) const;
  const std::vector<ServedArtifact>& artifacts() const { return artifacts_; }
  // /artifacts.json: [{"name", "url", "model", "sizes"}] for the page's model picker.
  std::string artifacts_json() const;
  std::size_t file_count() const { return files_.size(); }
  std::uint64_t total_bytes() const;

  void add(std::string path, SiteFile file);
  void add_artifact(ServedArtifact artifact) { artifacts_.push_back(std::move(artifact)); }

 private:
  std::map<std::string, SiteFile, std::less<>> files_;
  std::vector<ServedArtifact> artifacts_;
};

// Opens every artifact (seal, manifest, index checked: artifact::Artifact::open) and lists its
// files, hashing each. Throws websd::Error("serve") for an artifact of another target (saying how
// to build a webgpu one), one without the page (built by an older websd), a listed file that is
// missing, not a regular file, a symbolic link, or whose bytes do not match the SHA-256 listed. Names come from the
// folders' names, URL-safe, numbered when two collide.
SiteFiles site_files(const std::vector<std::string>& artifact_dirs);

// The Content-Type for a file name by its extension ("application/wasm" for .wasm).
std::string mime_type(std::string_view file_name);

}  // namespace websd::serve
