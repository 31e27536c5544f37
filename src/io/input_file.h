// The rule for every file a websd command reads, the counterpart of output_paths.h, so that no input
// can hang a command or take its memory before it is refused:
//   - only a regular file is read (or standard input, where an option documents "-"): a folder, a
//     FIFO, a socket or a device (/dev/zero; /dev/stdin when it is a pipe or a terminal) is refused,
//     naming what it is;
//   - the file is opened with O_NONBLOCK (opening a FIFO would otherwise wait for a writer forever)
//     and checked with fstat on the opened descriptor, so nothing can swap the path between the
//     check and the read;
//   - each kind of file has a size cap (InputKind, all of them below), checked before a byte is read
//     and again while reading (a file that grows, standard input).
// Errors: websd::Error(component, "<role> <path>: <what it is>, expected <kind> (<fix>)"), one line.
// Thread-safe (no shared state); an InputFile is move-only and read by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace websd {

// What a file is read as: its name in messages, and the most bytes websd reads of one.
struct InputKind {
  std::string_view name;    // "a JSON file": "expected a JSON file"
  std::uint64_t max_bytes;  // files over this are refused before reading
};

// Every cap, with headroom over any real file of the kind.
namespace input_kinds {
// Configs (model_index.json, */config.json, scheduler and tokenizer configs, weight indexes): a few
// KB; the index of a sharded checkpoint of thousands of tensors stays far below 1 MB.
inline constexpr InputKind kJsonConfig{"a JSON file", std::uint64_t{4} << 20};
// vocab.json, merges.txt, tokenizer.json: CLIP's tokenizer.json is 3.6 MB, the largest multilingual
// tokenizer.json files about 20 MB.
inline constexpr InputKind kTokenizerFile{"a tokenizer file", std::uint64_t{64} << 20};
// 32 raw bytes or 64 hex digits and a line end.
inline constexpr InputKind kKeyFile{"a key file", std::uint64_t{4} << 10};
// Far above any PNG of 16384 pixels a side that a tool writes (about 1 GiB as uncompressed RGBA8).
inline constexpr InputKind kPngImage{"a PNG file", std::uint64_t{2} << 30};
// The LDM inference configs (v1-inference.yaml) are a few KB.
inline constexpr InputKind kLdmConfig{"an LDM inference config (YAML)", std::uint64_t{1} << 20};
// JSON lines of a few hundred bytes per tuned workload.
inline constexpr InputKind kTuningDb{"a tuning database", std::uint64_t{64} << 20};
// Far above anything the tokenizer keeps (77 tokens), but bounded.
inline constexpr InputKind kPromptFile{"a prompt file", std::uint64_t{1} << 20};
// An artifact's files read whole (manifest, launch lists, kernels; shards are mapped): its largest
// single weight, a token embedding, is about 150 MB in float32.
inline constexpr InputKind kArtifactFile{"an artifact file", std::uint64_t{4} << 30};
// Checkpoints and latents are memory-mapped, never read whole: no cap (the mapping costs address
// space; pages are read as they are used).
inline constexpr InputKind kSafetensors{"a safetensors file", std::numeric_limits<std::uint64_t>::max()};
// The prepared-weight cache's identity records: one SHA-256 in hex and a line end.
inline constexpr InputKind kCacheRecord{"a websd cache record", std::uint64_t{4} << 10};
// What the Node runner of webgpu artifacts hands back per image: raw RGB (16384^2 x 3 bytes at most)
// and float32 latents.
inline constexpr InputKind kRunnerOutput{"a file of the webgpu runner's output", std::uint64_t{1} << 30};
// websd's prepared-weight cache files (backends/prepared_weight_file.h) are mapped the same way.
inline constexpr InputKind kPreparedWeights{"a websd prepared-weight file", std::numeric_limits<std::uint64_t>::max()};
}  // namespace input_kinds

// How to fix a failed file operation, from its errno ("check the path", "check the permissions").
std::string file_error_fix(int error_number);

class InputFile {
 public:
  // Opens `path` under the rule. `role` (an option such as "--init-image"; may be empty) is put
  // before the path in messages. Throws websd::Error(component, ...) when the path cannot be opened,
  // is not a regular file, or holds more than kind.max_bytes.
  InputFile(std::string component, const std::string& path, const InputKind& kind, std::string role = {});
  ~InputFile();
  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // The open descriptor (blocking reads), owned by this object; for mmap.
  int descriptor() const { return fd_; }
  // The size fstat gave at open.
  std::uint64_t size() const { return size_; }
  // "<role> <path>", or the path without a role: how messages name the file.
  const std::string& where() const { return where_; }

  // The rest of the file, from the current position; a file that grows past the kind's cap while it
  // is read is refused.
  std::string read_all();
  std::vector<std::byte> read_all_bytes();
  // Up to `count` bytes from the current position (fewer at the end of the file).
  std::string read_prefix(std::size_t count);

 private:
  InputFile(std::string component, int fd, bool owned, std::uint64_t size, const InputKind& kind, std::string where);
  friend std::string input_file_read_or_stdin(const std::string& component, const std::string& path,
                                              const InputKind& kind, const std::string& role);
  template <typename Buffer>
  Buffer read_into();
  std::size_t read_some(char* into, std::size_t count);
  void close() noexcept;

  std::string component_;
  int fd_ = -1;
  bool owned_ = true;  // false for standard input, which is never closed
  std::uint64_t size_ = 0;
  InputKind kind_;
  std::string where_;
};

// InputFile(component, path, kind, role).read_all().
std::string input_file_read(const std::string& component, const std::string& path, const InputKind& kind,
                            const std::string& role = {});
// "-" reads standard input to its end (whatever it is: a pipe, a terminal, a file), within the
// kind's cap; any other path is read as input_file_read reads it. Only for options that document "-".
std::string input_file_read_or_stdin(const std::string& component, const std::string& path, const InputKind& kind,
                                     const std::string& role);

}  // namespace websd
