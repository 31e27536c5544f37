// websd_safetensors_bench: opening a safetensors file whose header lists many small tensors (the
// reader every weight file goes through). ParseHeader/N writes a file of N one-float tensors once
// (N = 10k, 100k, 1M: a 63 MiB header for 1M, under the 100 MiB cap) and times SafetensorsFile's
// constructor on it. Counters: tensors_per_s, header_MiB, and rss_peak_growth_MiB (the process's peak
// resident size after the runs minus before the file was opened: what the parse itself holds at
// most, the mapped header pages included). Linear parsing shows as a constant tensors_per_s.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "io/safetensors_reader.h"

namespace websd {
namespace {

std::uint64_t peak_rss_bytes() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

// A file of `count` F32 tensors of shape [1], named t0, t1, ...; returns its path and header size.
std::pair<std::string, std::size_t> write_many_tensors(std::int64_t count) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("websd-bench-many-" + std::to_string(count) + ".safetensors"))
          .string();
  std::string header = "{";
  for (std::int64_t i = 0; i < count; ++i) {
    header += (i == 0 ? "\"t" : ",\"t") + std::to_string(i) + "\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[" +
              std::to_string(4 * i) + "," + std::to_string(4 * i + 4) + "]}";
  }
  header += "}";
  std::ofstream out(path, std::ios::binary);
  const std::uint64_t length = header.size();
  for (int byte = 0; byte < 8; ++byte) out.put(static_cast<char>((length >> (8 * byte)) & 0xff));
  out << header;
  out << std::string(static_cast<std::size_t>(4 * count), '\0');
  return {path, header.size()};
}

void ParseHeader(benchmark::State& state) {
  const std::int64_t count = state.range(0);
  const auto [path, header_bytes] = write_many_tensors(count);
  const std::uint64_t before = peak_rss_bytes();
  for (auto _ : state) {
    const SafetensorsFile file(path);
    benchmark::DoNotOptimize(file.entries().data());
    if (file.entries().size() != static_cast<std::size_t>(count)) state.SkipWithError("wrong tensor count");
  }
  state.counters["tensors_per_s"] = benchmark::Counter(
      static_cast<double>(count) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["header_MiB"] = static_cast<double>(header_bytes) / (1024.0 * 1024.0);
  state.counters["rss_peak_growth_MiB"] = static_cast<double>(peak_rss_bytes() - before) / (1024.0 * 1024.0);
  std::filesystem::remove(path);
}

BENCHMARK(ParseHeader)->Arg(10'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace websd
