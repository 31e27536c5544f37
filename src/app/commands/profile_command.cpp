// `websd profile --artifact ART --function SYMBOL [--runs N] [--top K] [--json] [--key-file K] [--trust-key P]`:
// runs one function of a compiled artifact N times (after one warm-up run that allocates its arena
// and touches its weights) and prints a per-kernel table: kernel, operand shapes, total ms per run,
// percent of the run's wall time, calls per run, GFLOP/s, sorted by time. The rows plus the time
// between launches (input checks, output copies) add up to the measured wall time. A webgpu
// artifact runs under Node (webgpu_node_runner.h): its kernels are timed with GPU timestamps, each
// launch in a compute pass of its own, and the wall time runs from submit to the GPU's completion.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/artifact_options.h"
#include "app/command_registry.h"
#include "app/number_ranges.h"
#include "app/webgpu_node_runner.h"
#include "artifact/artifact.h"
#include "artifact/function_signatures.h"
#include "backends/artifact_backend.h"
#include "core/error.h"
#include "core/utf8.h"
#include "runtime/op_profile.h"

namespace websd::app {
namespace {

struct ProfileOptions {
  std::string artifact;
  std::string function = "unet";
  ArtifactAccessOptions access;
  int runs = 3;
  int top = 25;
  bool json = false;
};

struct Row {
  std::string kernel, shapes;
  double ms = 0;  // per run
  double calls = 0;
  double flops = 0;
};

// What one function's runs measured: the warm-up's and the mean timed run's wall seconds, and
// every launch's time summed over the timed runs.
struct Measured {
  double warmup = 0;
  double wall = 0;
  runtime::OpProfile profile;
  std::string device;  // the GPU adapter; empty on the CPU
};

Measured measure_native(const ProfileOptions& options) {
  backends::ArtifactBackend backend(options.artifact, options.access.access());
  artifact::require_function(backend.function_names(), options.function, options.artifact, "profile");
  Measured measured;
  std::cerr << "websd profile: " << options.function << ": warm-up run\n";
  measured.warmup = backend.run_function_once(options.function);
  backend.set_profile(&measured.profile);
  for (int run = 0; run < options.runs; ++run) {
    measured.wall += backend.run_function_once(options.function);
    std::cerr << "websd profile: run " << run + 1 << "/" << options.runs << "\n";
  }
  backend.set_profile(nullptr);
  measured.wall /= options.runs;
  return measured;
}

Measured measure_webgpu(const ProfileOptions& options) {
  if (options.access.given()) {
    throw Error("profile",
                options.artifact + " is a webgpu artifact: --key-file and --trust-key are not available for it yet");
  }
  const artifact::Artifact artifact =
      artifact::Artifact::open(options.artifact, artifact::ArtifactOpenOptions::for_target("webgpu"));
  std::vector<std::string> functions;
  if (const nlohmann::json* section = artifact.section(artifact::kFunctionsSection)) {
    for (const artifact::FunctionSignature& signature :
         artifact::parse_functions_section(*section, artifact.dir() + "/" + std::string(artifact::kManifestFileName))) {
      functions.push_back(signature.symbol);
    }
  }
  std::sort(functions.begin(), functions.end());
  artifact::require_function(functions, options.function, options.artifact, "profile");
  Measured measured;
  bool timed = false;
  run_webgpu_node("profile", "function", options.artifact, options.access.tier,
                  {{"function", options.function}, {"runs", options.runs}}, [&](const nlohmann::json& line) {
                    const nlohmann::json& result = line.at("function");
                    measured.device = result.at("adapter").get<std::string>();
                    timed = result.at("timed").get<bool>();
                    measured.warmup = result.at("warmup_s").get<double>();
                    for (const double seconds : result.at("run_s").get<std::vector<double>>()) measured.wall += seconds;
                    for (const nlohmann::json& op : result.at("ops")) {
                      runtime::OpTotals& totals = measured.profile.by_op[op.at("key").get<std::string>()];
                      totals.seconds += op.at("seconds").get<double>();
                      totals.calls += op.at("calls").get<std::int64_t>();
                      totals.flops += op.at("flops").get<double>();
                    }
                  });
  if (measured.device.empty()) throw Error("profile", "the webgpu runner reported no timings");
  if (!timed) {
    throw Error("profile", measured.device + " offers no 'timestamp-query': its kernels cannot be timed one by one");
  }
  measured.wall /= options.runs;
  return measured;
}

void run_profile(const ProfileOptions& options) {
  const Measured measured = is_webgpu_artifact(options.artifact) ? measure_webgpu(options) : measure_native(options);
  const runtime::OpProfile& profile = measured.profile;
  const double warmup = measured.warmup;
  const double wall = measured.wall;

  std::vector<Row> rows;
  double kernels_ms = 0;
  for (const auto& [key, totals] : profile.by_op) {
    const std::size_t space = key.find(' ');
    Row row{key.substr(0, space), space == std::string::npos ? "" : key.substr(space + 1),
            totals.seconds * 1e3 / options.runs, static_cast<double>(totals.calls) / options.runs,
            totals.flops / options.runs};
    kernels_ms += row.ms;
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ms > b.ms; });
  const double wall_ms = wall * 1e3;
  const double between_ms = std::max(0.0, wall_ms - kernels_ms);

  if (options.json) {
    nlohmann::json out = {{"artifact", utf8_or_escaped(options.artifact)},
                          {"function", options.function},
                          {"device", measured.device.empty() ? "cpu" : measured.device},
                          {"runs", options.runs},
                          {"warmup_ms", warmup * 1e3},
                          {"wall_ms", wall_ms},
                          {"kernels_ms", kernels_ms},
                          {"between_launches_ms", between_ms},
                          {"kernels", nlohmann::json::array()}};
    for (const Row& row : rows) {
      out["kernels"].push_back({{"kernel", row.kernel},
                                {"shapes", row.shapes},
                                {"ms", row.ms},
                                {"percent", 100.0 * row.ms / wall_ms},
                                {"calls", row.calls},
                                {"gflops", row.flops > 0 ? row.flops / (row.ms * 1e6) : 0.0}});
    }
    std::cout << out.dump(2) << std::endl;
    return;
  }
  std::printf("%s: %s, %d runs after a warm-up of %.1f ms; wall %.1f ms per run\n", options.artifact.c_str(),
              options.function.c_str(), options.runs, warmup * 1e3, wall_ms);
  if (!measured.device.empty()) {
    std::printf("WebGPU adapter %s (GPU timestamps, a compute pass per launch)\n", measured.device.c_str());
  }
  std::printf("%10s %7s %6s %8s  %-28s %s\n", "ms/run", "%", "calls", "GFLOP/s", "kernel", "shapes");
  const std::size_t shown = std::min<std::size_t>(rows.size(), static_cast<std::size_t>(options.top));
  double rest_ms = 0, rest_calls = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    if (i >= shown) {
      rest_ms += row.ms;
      rest_calls += row.calls;
      continue;
    }
    const std::string gflops = row.flops > 0 ? std::to_string(static_cast<int>(row.flops / (row.ms * 1e6))) : "";
    std::printf("%10.2f %6.1f%% %6.0f %8s  %-28s %s\n", row.ms, 100.0 * row.ms / wall_ms, row.calls, gflops.c_str(),
                row.kernel.c_str(), row.shapes.c_str());
  }
  if (shown < rows.size()) {
    std::printf("%10.2f %6.1f%% %6.0f %8s  (%zu more kernel rows; --top to see them)\n", rest_ms,
                100.0 * rest_ms / wall_ms, rest_calls, "", rows.size() - shown);
  }
  std::printf("%10.2f %6.1f%% %6s %8s  (between launches: input checks, output copies)\n", between_ms,
              100.0 * between_ms / wall_ms, "", "");
  std::printf("%10.2f %6.1f%% %6s %8s  total = wall time of one run\n", kernels_ms + between_ms,
              100.0 * (kernels_ms + between_ms) / wall_ms, "", "");
}

const bool registered = register_command(
    {"profile", "Time every kernel of one function of a compiled artifact", [](CLI::App& command) {
       auto options = std::make_shared<ProfileOptions>();
       command.add_option("--artifact", options->artifact, "artifact directory (websd build)")->required();
       command.add_option("--function", options->function, "function to run (see websd inspect)")
           ->capture_default_str();
       command.add_option("--runs", options->runs, "timed runs (after one warm-up run)")
           ->capture_default_str()
           ->check(integer_range(1, std::numeric_limits<int>::max()));
       command.add_option("--top", options->top, "kernel rows to print (the rest are summed)")
           ->capture_default_str()
           ->check(integer_range(1, std::numeric_limits<int>::max()));
       command.add_flag("--json", options->json, "print JSON instead of a table");
       add_artifact_access_options(command, options->access);
       command.callback([options] { run_profile(*options); });
     }});

}  // namespace
}  // namespace websd::app
