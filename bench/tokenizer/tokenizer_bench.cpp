// Throughput of the CLIP tokenizer on the 30 fixture prompts (refs/tokenizer.json), cold (BPE word cache
// cleared before each pass) and warm, on a 10 000-character prompt, and the time to load a tokenizer
// from vocab.json + merges.txt and from tokenizer.json. Reads the fixtures from $WEBSD_FIXTURES, else
// <project>/../shared/fixtures.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "io/json_file.h"
#include "pipeline/tokenizer/clip_tokenizer_loader.h"

namespace {

std::string fixtures(const std::string& relative) {
  const char* overridden = std::getenv("WEBSD_FIXTURES");
  const std::string root = overridden != nullptr && *overridden != '\0' ? overridden : WEBSD_DEFAULT_FIXTURES;
  return root + "/" + relative;
}

const std::vector<std::string>& prompts() {
  static const std::vector<std::string> loaded =
      websd::json_read_file(fixtures("refs/tokenizer.json")).at("prompts").get<std::vector<std::string>>();
  return loaded;
}

const websd::ClipTokenizer& tokenizer() {
  static const websd::ClipTokenizer loaded = websd::load_clip_tokenizer(fixtures("clip-tokenizer"));
  return loaded;
}

std::int64_t total_bytes(const std::vector<std::string>& texts) {
  std::int64_t bytes = 0;
  for (const std::string& text : texts) bytes += static_cast<std::int64_t>(text.size());
  return bytes;
}

// One pass encodes every prompt; items are prompts, bytes are prompt bytes.
void encode_passes(benchmark::State& state, const std::vector<std::string>& texts, bool cold) {
  const websd::ClipTokenizer& clip = tokenizer();
  for (auto _ : state) {
    if (cold) clip.clear_cache();
    for (const std::string& text : texts) benchmark::DoNotOptimize(clip.encode(text));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(texts.size()));
  state.SetBytesProcessed(state.iterations() * total_bytes(texts));
}

void BM_EncodeFixturePromptsCold(benchmark::State& state) { encode_passes(state, prompts(), true); }
void BM_EncodeFixturePromptsWarm(benchmark::State& state) { encode_passes(state, prompts(), false); }

void BM_EncodeTenThousandCharPromptCold(benchmark::State& state) {
  std::string text;
  while (text.size() < 10000) text += "a watercolor painting of a lighthouse by the sea at sunset, trending, ";
  text.resize(10000);
  encode_passes(state, {text}, true);
}

void BM_LoadVocabAndMerges(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(websd::load_clip_tokenizer(fixtures("clip-tokenizer")));
}

void BM_LoadTokenizerJson(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(websd::load_clip_tokenizer(fixtures("tiny-sd15/model/tokenizer")));
}

BENCHMARK(BM_EncodeFixturePromptsCold)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EncodeFixturePromptsWarm)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EncodeTenThousandCharPromptCold)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LoadVocabAndMerges)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LoadTokenizerJson)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
