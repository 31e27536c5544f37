// The bodies of the libFuzzer targets as plain functions, so that the g++ regression test
// (tests/fuzz_regressions) replays every seed and every crash reproducer through exactly the code
// the fuzzers run. Each entry takes arbitrary bytes and either returns or throws websd::Error (bad
// input, rejected cleanly). It throws FuzzInvariantError when the code under test accepted the
// input but broke one of its own promises (a bug); a crash or a sanitizer report is a bug too.
// Thread-safety: fuzz_safetensors, fuzz_artifact_manifest, fuzz_artifact_open and fuzz_launch_list are; fuzz_tokenizer
// is not (it rewrites one scratch folder per process), nor is fuzz_launch_list_exec (kernels use every core).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "core/error.h"

namespace websd::fuzz {

using FuzzInput = std::span<const std::uint8_t>;

// An accepted input led to a result that contradicts the API's contract.
class FuzzInvariantError : public std::logic_error {
 public:
  explicit FuzzInvariantError(const std::string& what) : std::logic_error("fuzz invariant broken: " + what) {}
};

// The bytes are a safetensors file: open it (through a memfd, no disk I/O), then read every entry
// as f32, as a slice and as int64, checking element counts and that F32 data comes back bit-exact.
void fuzz_safetensors(FuzzInput data);

// The bytes frame a tokenizer folder and a prompt (see fuzz/README.md):
//   byte 0: 'j' for the tokenizer.json layout, anything else for vocab.json + merges.txt;
//   then up to four parts separated by NUL bytes:
//     vocab.json | merges.txt | tokenizer_config.json | prompt        (vocab layout)
//     tokenizer.json | special_tokens_map.json | tokenizer_config.json | prompt   (json layout)
//   the prompt is everything after the third NUL; empty config parts are not written.
// Loads the tokenizer with load_clip_tokenizer and checks encode() against encode_unpadded().
void fuzz_tokenizer(FuzzInput data);

// The bytes are both a manifest.json and a weights/index.json: each parser either rejects them or
// accepts them, and what it accepts must survive manifest_to_text / weight_index_to_text and
// parse again to the same text. Throws websd::Error only when both parsers reject the bytes.
void fuzz_artifact_manifest(FuzzInput data);

// The bytes frame an artifact held in memory (see fuzz/README.md):
//   byte 0: flags: bit 0 opens it with --trust-key of the harness's Ed25519 key; bit 1 replaces the
//   seal part with the seal `websd build --sign-key` writes for the manifest part (its digest, the
//   harness key's signature, and the HMAC under the harness's AES key when the manifest says
//   encrypted), so inputs reach what follows authentication; bit 2 opens it with the harness's AES
//   key (else without a key, as `websd inspect` does);
//   then three parts separated by NUL bytes: manifest.json | seal.json | weights/index.json.
// The artifact also holds weights/shard-00000.bin (256 bytes, byte i = i) and model/file.txt.
// Artifact::open either refuses it or accepts it; what it accepts must be sealed with its
// manifest's SHA-256, signed by the harness key when bit 0 asked for it and authenticated by the
// AES key when bit 2 gave one, and every weight and listed file must read with its sizes or be refused.
void fuzz_artifact_open(FuzzInput data);

// The bytes are one function's launch list (the artifact's launch_lists section, JSON): the runtime's
// reader either rejects it or accepts it, and what it accepts must write (launch_list_to_json) to
// JSON that reads back to the same JSON.
void fuzz_launch_list(FuzzInput data);

// The bytes are one function's launch list, as in fuzz_launch_list, and what the reader accepts is
// executed on the CPU device (runtime::Executor over cpu::CpuDevice) with deterministic weights and
// inputs: loading must refuse, or running must finish, without a crash or a sanitizer report.
// Generated (`file`) kernels run as the CPU's fused-elementwise interpreter of the same program,
// since no compiled library goes with the bytes, and packed convolution weights are taken to be in
// this CPU's packing (the seeds were written on a CPU with other vector units). Lists beyond small shapes (arenas over
// 64 MiB, a weight or input over 16 MiB, more than 4096 launches) are skipped: they are valid, only slow.
void fuzz_launch_list_exec(FuzzInput data);

// Runs `entry` the way a libFuzzer target does: websd::Error is an accepted outcome, anything else
// escapes (libFuzzer then reports the input as a crash).
inline int run_fuzz_entry(void (*entry)(FuzzInput), const std::uint8_t* data, std::size_t size) {
  try {
    entry(FuzzInput(data, size));
  } catch (const websd::Error&) {
    // A clean rejection is what bad input should get.
  }
  return 0;
}

}  // namespace websd::fuzz
