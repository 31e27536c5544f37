// `websd noise`: writes torch-compatible initial noise, torch.randn(shape, generator=
// torch.Generator("cpu").manual_seed(seed)), as the F32 tensor "noise" of a safetensors file.
// Everything is validated before anything is written; an existing output is replaced (atomically) only
// with --force, so a failed run leaves it untouched.
#include <charconv>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <system_error>

#include "app/command_registry.h"
#include "core/error.h"
#include "io/output_paths.h"
#include "io/safetensors_writer.h"
#include "pipeline/random/seed.h"
#include "pipeline/random/torch_generator.h"

namespace websd::app {
namespace {

// Larger requests are almost surely typos; 2^31 floats are already 8 GiB.
constexpr std::int64_t kMaxNoiseElements = std::int64_t{1} << 31;

struct NoiseOptions {
  std::string seed;
  std::string shape;
  std::string out;
  bool force = false;
};

// Parses all of `text` as a decimal unsigned integer; false on any other character or overflow.
bool parse_unsigned(const std::string& text, std::uint64_t& value) {
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  return !text.empty() && error == std::errc() && stop == end;
}

Shape parse_shape(const std::string& text) {
  const std::string how = " (write positive dimensions separated by commas, e.g. --shape 1,4,64,64)";
  Shape shape;
  std::int64_t numel = 1;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    const std::string item = text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    std::uint64_t dim = 0;
    if (!parse_unsigned(item, dim) || dim == 0 || dim > static_cast<std::uint64_t>(kMaxNoiseElements)) {
      throw Error("noise", "--shape '" + text + "': dimension '" + item + "' is not a positive integer" + how);
    }
    numel *= static_cast<std::int64_t>(dim);  // both factors <= 2^31: no overflow before the check below
    if (numel > kMaxNoiseElements) {
      throw Error("noise", "--shape '" + text + "': more than 2^31 elements; refusing to allocate that much noise");
    }
    shape.push_back(static_cast<std::int64_t>(dim));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return shape;
}

void run_noise(const NoiseOptions& options) {
  const std::optional<std::uint64_t> chosen = parse_seed(options.seed, "--seed", "noise");
  check_outputs("noise", {{"--out", options.out, false, options.force}}, {});
  const std::uint64_t seed = chosen ? *chosen : random_seed();
  const Shape shape = parse_shape(options.shape);
  TorchGenerator generator(seed);
  const HostTensor noise = generator.randn(shape);
  safetensors_write_f32(options.out, {{"noise", &noise}}, {{"seed", std::to_string(seed)}});
  std::cout << "wrote noise " << shape_to_string(shape) << " (seed " << seed << ") to " << options.out << "\n";
}

const bool registered =
    register_command({"noise", "Write torch-compatible standard-normal noise (torch.randn with a seeded CPU generator)",
                      [](CLI::App& command) {
                        auto options = std::make_shared<NoiseOptions>();
                        command
                            .add_option("--seed", options->seed,
                                        "Generator seed: an integer from 0 to 2^64-1, or -1 for a random one (printed)")
                            ->type_name("SEED")
                            ->required();
                        command.add_option("--shape", options->shape, "Comma-separated dimensions, e.g. 1,4,64,64")
                            ->type_name("D0,D1,...")
                            ->required();
                        command.add_option("--out", options->out, "Output .safetensors file (tensor 'noise', F32)")
                            ->type_name("FILE")
                            ->required();
                        command.add_flag("--force", options->force, "Replace --out if it exists");
                        command.callback([options] { run_noise(*options); });
                      }});

}  // namespace
}  // namespace websd::app
