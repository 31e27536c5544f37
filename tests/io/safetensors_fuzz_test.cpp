// A deterministic, libFuzzer-style robustness test of the safetensors reader: a valid file is
// mutated many times (bit flips, structural characters dropped into the header, lies in numbers
// and in the header length, truncations, spliced copies) and each mutant is opened and every
// tensor read. The only acceptable outcomes are success or a one-line websd::Error naming the
// file; anything else (another exception type, a crash, a sanitizer report) fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>

#include "core/error.h"
#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"
#include "support/fixtures.h"

namespace websd {
namespace {

// Every dtype and the odd shapes (scalar, empty) so that mutations reach every read path.
std::string make_seed_file(const std::string& path) {
  const std::vector<std::uint16_t> halves = {f32_to_f16(1.5f), f32_to_f16(-2.0f), 0x7c00, 0x7e00};
  const std::vector<std::uint16_t> brains = {f32_to_bf16(3.0f), f32_to_bf16(0.5f)};
  const std::vector<float> floats = {1, 2, 3, 4, 5, 6};
  const std::vector<double> doubles = {0.25, -8.0};
  const std::vector<std::int64_t> longs = {49406, 320, 49407};
  const std::vector<std::int32_t> ints = {-7, 7};
  const std::vector<std::uint8_t> bytes = {0, 1, 255};
  const float scalar = 42.0f;
  safetensors_write(path,
                    {{"text_model.h", DType::kF16, {2, 2}, std::as_bytes(std::span(halves))},
                     {"unet.b", DType::kBF16, {1, 2}, std::as_bytes(std::span(brains))},
                     {"vae.f", DType::kF32, {2, 3}, std::as_bytes(std::span(floats))},
                     {"d", DType::kF64, {2}, std::as_bytes(std::span(doubles))},
                     {"ids", DType::kI64, {3}, std::as_bytes(std::span(longs))},
                     {"i", DType::kI32, {2, 1}, std::as_bytes(std::span(ints))},
                     {"u", DType::kU8, {3}, std::as_bytes(std::span(bytes))},
                     {"flags", DType::kBool, {3}, std::as_bytes(std::span(bytes))},
                     {"scalar", DType::kF32, {}, std::as_bytes(std::span(&scalar, 1))},
                     {"empty", DType::kF16, {0, 4}, {}}},
                    {{"format", "pt"}, {"note", "seed"}});
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : random_(seed) {}

  // Raw engine output only: std:: distributions differ between standard libraries.
  std::uint64_t below(std::uint64_t bound) { return bound == 0 ? 0 : random_() % bound; }

  std::string mutate(std::string file) {
    const int rounds = 1 + static_cast<int>(below(3));
    for (int round = 0; round < rounds; ++round) apply_one(file);
    return file;
  }

 private:
  std::uint64_t header_end(const std::string& file) const { return std::min<std::uint64_t>(file.size(), 8 + 2048); }

  void apply_one(std::string& file) {
    switch (below(6)) {
      case 0:  // flip a few bits anywhere
        for (int flips = 1 + static_cast<int>(below(8)); flips > 0 && !file.empty(); --flips) {
          file[below(file.size())] ^= static_cast<char>(1u << below(8));
        }
        break;
      case 1: {  // a structural or invalid byte inside the header
        static constexpr std::array<char, 14> kBytes = {'[', ']', '{', '}',  '"',  ',',    ':',
                                                        '-', '0', '9', '\\', '\0', '\xff', '\xc3'};
        if (file.size() > 8) file[8 + below(header_end(file) - 8)] = kBytes[below(kBytes.size())];
        break;
      }
      case 2: {  // replace a number in the header with a boundary value
        static constexpr std::array<const char*, 10> kNumbers = {"0",
                                                                 "1",
                                                                 "-1",
                                                                 "4294967296",
                                                                 "9223372036854775807",
                                                                 "9223372036854775808",
                                                                 "18446744073709551615",
                                                                 "18446744073709551616",
                                                                 "1e3",
                                                                 "2.5"};
        const std::size_t start = 8 + below(header_end(file) > 8 ? header_end(file) - 8 : 1);
        const std::size_t digit = file.find_first_of("0123456789", start);
        if (digit == std::string::npos || digit >= header_end(file)) break;
        const std::size_t after = file.find_first_not_of("0123456789", digit);
        file.replace(digit, (after == std::string::npos ? file.size() : after) - digit,
                     kNumbers[below(kNumbers.size())]);
        break;
      }
      case 3: {  // lie about the header length
        std::uint64_t truth = 0;
        for (int i = 7; i >= 0 && file.size() >= 8; --i) truth = (truth << 8) | static_cast<unsigned char>(file[i]);
        const std::array<std::uint64_t, 6> lies = {
            truth + 1 + below(16), truth - 1 - below(16), 0, file.size() - 8, random_(), ~0ull};
        const std::uint64_t lie = lies[below(lies.size())];
        for (int i = 0; i < 8 && static_cast<std::size_t>(i) < file.size(); ++i) {
          file[i] = static_cast<char>((lie >> (8 * i)) & 0xff);
        }
        break;
      }
      case 4:  // truncate
        file.resize(below(file.size() + 1));
        break;
      default: {  // splice a copy of one header region into another
        if (header_end(file) <= 8) break;
        const std::size_t from = 8 + below(header_end(file) - 8);
        const std::size_t length = below(64);
        const std::size_t to = 8 + below(header_end(file) - 8);
        file.insert(to, file.substr(from, length));
        break;
      }
    }
  }

  std::mt19937_64 random_;
};

// Opens and reads everything; returns true on success, false on websd::Error, fails otherwise.
bool open_and_read_everything(const std::string& path, const std::string& context) {
  try {
    const SafetensorsFile file(path);
    for (const auto& entry : file.entries()) {
      const auto raw = file.bytes(entry);
      EXPECT_EQ(raw.size(), entry.byte_size()) << context;
      if (dtype_is_float(entry.dtype)) {
        EXPECT_EQ(file.read_f32(entry.name).data.size(), entry.numel()) << context;
      } else if (entry.dtype == DType::kBool) {
        unsigned sum = 0;
        for (const auto byte : raw) sum += std::to_integer<unsigned>(byte);
        (void)sum;
      } else {
        EXPECT_EQ(file.read_i64(entry.name).size(), entry.numel()) << context;
      }
    }
    return true;
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(path), std::string::npos) << context << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << context << ": " << message;
    return false;
  } catch (const std::exception& error) {
    ADD_FAILURE() << context << ": not a websd::Error: " << error.what();
    return false;
  }
}

TEST(SafetensorsFuzz, MutantsOpenOrFailCleanly) {
  const std::string dir = test::make_temp_dir("st-fuzz");
  const std::string seed_file = make_seed_file(dir + "/seed.safetensors");
  ASSERT_TRUE(open_and_read_everything(dir + "/seed.safetensors", "seed"));
  // WEBSD_FUZZ_ITERATIONS raises the count for a local stress run (e.g. under sanitizers).
  const char* requested = std::getenv("WEBSD_FUZZ_ITERATIONS");
  const int iterations = requested != nullptr ? std::max(100, std::atoi(requested)) : 20000;
  Mutator mutator(0x5afe7e45u);
  const std::string path = dir + "/mutant.safetensors";
  int opened = 0;
  int refused = 0;
  for (int iteration = 0; iteration < iterations; ++iteration) {
    const std::string mutant = mutator.mutate(seed_file);
    // A fresh file each time: rewriting one in place makes ext4 flush it to disk on close (slow).
    std::filesystem::remove(path);
    std::ofstream(path, std::ios::binary) << mutant;
    const bool ok = open_and_read_everything(path, "iteration " + std::to_string(iteration));
    if (ok) {
      ++opened;
    } else {
      ++refused;
    }
    if (::testing::Test::HasFailure()) break;  // the first failure is the one to debug
  }
  // Both outcomes must occur, or the mutations are not reaching the interesting code.
  EXPECT_GT(opened, iterations / 50);
  EXPECT_GT(refused, iterations / 2);
  RecordProperty("opened", opened);
  RecordProperty("refused", refused);
  std::cout << "mutants opened: " << opened << ", refused with websd::Error: " << refused << "\n";
}

}  // namespace
}  // namespace websd
