// Careless and hostile input through the CLI, at every place each class can occur: outputs that are
// special files, links or inputs (refused before any work, nothing touched), interrupted commands
// (nothing left behind), sizes and seeds out of range, absurd configs, non-finite values, and
// options that do not apply. Each case: exit status, one error line naming the cause.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/png_file.h"
#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"
#include "support/cli_checks.h"
#include "support/fixtures.h"
#include "support/run_command.h"

namespace websd::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// The fixture's compiled artifact, built once per process.
const std::string& tiny_artifact() {
  static const std::string path = [] {
    const std::string dir = make_temp_dir("hostile-art") + "/art";
    const CommandResult built = run_websd({"build", "--model", fixture_model(), "--target", "cpu", "--out", dir});
    EXPECT_EQ(built.exit_code, 0) << built.err;
    return dir;
  }();
  return path;
}

TEST(HostileOutputs, SpecialFilesAndLinksAreRefusedByEveryCommandAndLeftAsTheyWere) {
  const std::string dir = make_temp_dir("hostile-special");
  const std::string fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string target = dir + "/target.png";
  std::ofstream(target) << "keep";
  fs::create_symlink(target, dir + "/link.png");
  for (const std::string& special : {std::string("/dev/null"), fifo, dir + "/link.png"}) {
    const bool link = special == dir + "/link.png";
    const std::string why = link ? "symbolic link" : (special == fifo ? "a FIFO" : "a device");
    expect_error(run_websd(generate_args(fixture_model(), special)), {"--out " + special, why});
    expect_error(run_websd(generate_args(fixture_model(), dir + "/ok.png", {"--save-latents", special})),
                 {"--save-latents " + special, why});
    expect_error(run_websd({"noise", "--seed", "1", "--shape", "1,4", "--out", special}), {"--out " + special, why});
    expect_error(run_websd({"tune", "--model", fixture_model(), "--target", "cpu", "--db", special}),
                 {"--db " + special, why});
    expect_error(run_websd({"convert", "--model", fixture_model(), "--out", special}), {"--out " + special, why});
    expect_error(run_websd({"make-model", "--preset", "tiny", "--format", "single-file", "--out", special}),
                 {"--out " + special, why});
  }
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_TRUE(fs::is_symlink(dir + "/link.png"));
  EXPECT_EQ(read_all(target), "keep");
  // Folder outputs: a link, a file where a folder is written.
  fs::create_directory_symlink(dir, dir + "/link-dir");
  expect_error(run_websd({"build", "--model", fixture_model(), "--target", "cpu", "--out", dir + "/link-dir"}),
               {"--out " + dir + "/link-dir", "symbolic link"});
  expect_error(run_websd({"make-model", "--preset", "tiny", "--out", dir + "/link-dir"}), {"symbolic link"});
  expect_error(
      run_websd({"build", "--model", fixture_model(), "--target", "cpu", "--out", dir + "/art", "--dump-ir", target}),
      {"--dump-ir " + target, "not a folder"});
}

TEST(HostileOutputs, AnOutputThatIsAnInputIsRefusedBeforeAnyWork) {
  const std::string model = copy_fixture("hostile-inputs");
  const std::string weights = model + "/unet/diffusion_pytorch_model.safetensors";
  const std::string before = read_all(weights);
  const std::string dir = make_temp_dir("hostile-inputs-out");
  const std::string init = dir + "/init.png";
  ASSERT_EQ(run_websd(generate_args(model, init)).exit_code, 0);
  const std::string init_bytes = read_all(init);
  const std::string latents = dir + "/latents.safetensors";
  ASSERT_EQ(run_websd({"noise", "--seed", "2", "--shape", "1,4,16,16", "--out", latents}).exit_code, 0);
  const std::string scheduler = dir + "/scheduler.json";
  fs::copy_file(model + "/scheduler/scheduler_config.json", scheduler);

  expect_error(run_websd(generate_args(model, weights)), {"--out " + weights, "lies inside the input --model"});
  expect_error(run_websd(generate_args(model, init, {"--init-image", init})), {"is the input --init-image"});
  expect_error(run_websd(generate_args(model, dir + "/a.png", {"--init-latents", latents, "--save-latents", latents})),
               {"--save-latents " + latents, "is the input --init-latents"});
  expect_error(
      run_websd(generate_args(model, dir + "/b.png", {"--scheduler-config", scheduler, "--save-latents", scheduler})),
      {"is the input --scheduler-config"});
  expect_error(run_websd(generate_args(model, dir + "/same.png", {"--save-latents", dir + "/same.png"})),
               {"--out and --save-latents both name"});
  // Through a link to the input, too.
  fs::create_symlink(init, dir + "/alias.png");
  expect_error(
      run_websd(generate_args(model, dir + "/c.png", {"--init-image", dir + "/alias.png", "--save-latents", init})),
      {"is the input --init-image"});
  expect_error(run_websd({"build", "--model", model, "--target", "cpu", "--out", model + "/art"}),
               {"lies inside the input --model"});
  expect_error(
      run_websd({"build", "--model", model, "--target", "cpu", "--out", fs::path(model).parent_path().string()}),
      {"holds the input --model"});
  expect_error(run_websd({"convert", "--model", model, "--out", weights}), {"lies inside the input --model"});
  expect_error(run_websd({"tune", "--model", model, "--target", "cpu", "--db", weights}),
               {"lies inside the input --model"});
  expect_error(run_websd({"make-model", "--preset", "tiny", "--out", model + "/tokenizer", "--tokenizer",
                          model + "/tokenizer", "--force"}),
               {"is the input --tokenizer"});
  EXPECT_EQ(read_all(weights), before);
  EXPECT_EQ(read_all(init), init_bytes);
}

TEST(HostileOutputs, EmptyMissingOrLongOutputsFailAtOnceAndWriteNothing) {
  const std::string dir = make_temp_dir("hostile-early");
  expect_error(run_websd(generate_args(fixture_model(), "")), {"--out is empty"});
  expect_error(run_websd(generate_args(fixture_model(), dir + "/ok.png", {"--save-latents", ""})),
               {"--save-latents is empty"});
  expect_error(run_websd(generate_args(fixture_model(), dir + "/ok.png", {"--save-latents", dir + "/no/such/l.st"})),
               {"--save-latents " + dir + "/no/such/l.st", "does not exist"});
  expect_error(run_websd(generate_args(fixture_model(), dir + "/" + std::string(230, 'x') + ".png")),
               {"the file name is"});
  expect_error(run_websd({"noise", "--seed", "1", "--shape", "2", "--out", ""}), {"--out is empty"});
  expect_error(run_websd({"build", "--model", fixture_model(), "--target", "cpu", "--out", ""}), {"--out is empty"});
  expect_error(run_websd(generate_args(fixture_model(), dir + "/picture.jpg")), {"name the file *.png"});
  EXPECT_TRUE(fs::is_empty(dir));
}

bool holds_name_with(const std::string& dir, const std::string& part) {
  for (const auto& item : fs::directory_iterator(dir)) {
    if (item.path().filename().string().find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(HostileOutputs, AnInterruptedBuildOrGenerateLeavesNothingBehind) {
  const std::string dir = make_temp_dir("hostile-interrupt");
  const int build_status = interrupted_run(
      {"build", "--model", fixture_model(), "--target", "cpu", "--out", dir + "/art"},
      [&] { return holds_name_with(dir, "websd-partial"); }, SIGINT);
  EXPECT_EQ(build_status, 128 + SIGINT);
  EXPECT_TRUE(fs::is_empty(dir)) << "debris in " << dir;
  for (const auto& item : fs::directory_iterator(fs::temp_directory_path())) {
    // The compiler's scratch folder is named for its build process: one whose process is gone is
    // debris (others belong to builds that tests running alongside have under way).
    const std::string name = item.path().filename().string();
    if (name.rfind("websd-kernels-", 0) == 0) {
      const pid_t owner = static_cast<pid_t>(std::atoi(name.c_str() + 14));
      EXPECT_EQ(::kill(owner, 0), 0) << item.path() << " left by a process that is gone";
    }
  }
  const auto started = std::chrono::steady_clock::now();
  const int generate_status = interrupted_run(
      {"generate", "--model", fixture_model(), "--prompt", "x", "--steps", "400", "--out", dir + "/g.png",
       "--save-latents", dir + "/g.safetensors"},
      [&] { return std::chrono::steady_clock::now() - started > std::chrono::milliseconds(1500); }, SIGTERM);
  EXPECT_EQ(generate_status, 128 + SIGTERM);
  EXPECT_TRUE(fs::is_empty(dir)) << "debris in " << dir;
}

TEST(HostileSizes, SidesBeyondTheLimitAreRefusedEverywhereBeforeWork) {
  const std::string dir = make_temp_dir("hostile-sizes");
  expect_error(run_websd(generate_args(fixture_model(), dir + "/a.png", {"--width", "100000"})),
               {"width 100000 exceeds websd's maximum side of 4096 pixels"});
  expect_error(run_websd({"build", "--model", fixture_model(), "--target", "cpu", "--out", dir + "/art", "--width",
                          "65536", "--height", "65536"}),
               {"width 65536 exceeds websd's maximum side"});
  expect_error(run_websd({"bench", "--model", fixture_model(), "--width", "8192", "--height", "64"}),
               {"width 8192 exceeds"});
  expect_error(
      run_websd({"tune", "--model", fixture_model(), "--target", "cpu", "--db", dir + "/t.jsonl", "--height", "4104"}),
      {"height 4104 exceeds"});
  for (const char* bad : {"0", "-8", ""}) {
    EXPECT_EQ(run_websd(generate_args(fixture_model(), dir + "/b.png", {"--width", bad})).exit_code, 2) << bad;
    EXPECT_EQ(run_websd({"build", "--model", fixture_model(), "--target", "cpu", "--out", dir + "/c", "--height", bad})
                  .exit_code,
              2)
        << bad;
  }
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(HostileSizes, ASizeThatDoesNotFitInMemoryIsRefusedWithItsFigure) {
  const std::string dir = make_temp_dir("hostile-memory");
  // Under a 2.5 GiB address-space limit the tiny model's VAE cannot encode a 2048x2048 init image:
  // refused before the network allocates, with the figure (its convolutions' reorder copies
  // included: they live outside the planned arena). The decoder is checked the same way.
  RgbImage image{2048, 2048, std::vector<std::uint8_t>(2048 * 2048 * 3, 128)};
  png_write_rgb(dir + "/big.png", image);
  const std::string command = "ulimit -v 2600000; '" + websd_binary() + "' generate --model '" + fixture_model() +
                              "' --prompt x --steps 2 --strength 0.5 --init-image '" + dir + "/big.png' --out '" + dir +
                              "/m.png' 2>'" + dir + "/err.txt'";
  const int status = std::system(("bash -c \"" + command + "\"").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const std::string err = read_all(dir + "/err.txt");
  EXPECT_NE(err.find("vae_encode for inputs [1,3,2048,2048] needs about"), std::string::npos) << err;
  EXPECT_NE(err.find("available (choose a smaller size)"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir + "/m.png"));
}

TEST(HostileConfigs, AbsurdCountsAreRefusedBeforeAnythingIsBuilt) {
  for (const auto& [file, key, value] : std::vector<std::tuple<std::string, std::string, Json>>{
           {"text_encoder", "num_hidden_layers", 1e9},
           {"unet", "layers_per_block", 1e9},
           {"unet", "transformer_layers_per_block", 1000000},
           {"unet", "sample_size", 1e9},
           {"vae", "block_out_channels", Json::array({32, 32, 64, 1e12})}}) {
    const std::string model = copy_fixture("hostile-config");
    const std::string path = model + "/" + file + "/config.json";
    Json config;
    std::ifstream(path) >> config;
    config[key] = value;
    std::ofstream(path) << config.dump();
    const auto start = std::chrono::steady_clock::now();
    expect_error(run_websd({"import", "--model", model, "--verify"}), {key, "expected at most"});
    expect_error(run_websd(generate_args(model, make_temp_dir("hostile-config-out") + "/x.png")), {key});
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60)) << key << " runs away";
  }
}

// A tensor of the copied model set to NaN; every float tensor is F16 in the fixture.
void poison(const std::string& weights_file, const std::string& tensor) {
  const SafetensorsFile file(weights_file);
  std::vector<std::vector<std::byte>> storage;
  std::vector<SafetensorsTensorView> views;
  for (const auto& entry : file.entries()) {
    const auto bytes = file.bytes(entry);
    storage.emplace_back(bytes.begin(), bytes.end());
    if (entry.name == tensor) {
      const std::uint16_t nan = 0x7e00;
      std::memcpy(storage.back().data(), &nan, 2);
    }
    views.push_back({entry.name, entry.dtype, entry.shape, storage.back()});
  }
  const std::string copy = weights_file + ".new";
  safetensors_write(copy, views, file.metadata());
  fs::rename(copy, weights_file);
}

TEST(HostileValues, NonFiniteWeightsOrLatentsStopTheRunNamingTheNetwork) {
  const std::string dir = make_temp_dir("hostile-nan");
  for (const auto& [component, file, tensor, network] :
       std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
           {"unet", "diffusion_pytorch_model.safetensors", "conv_in.bias", "the UNet's prediction at step 1 of 1"},
           {"text_encoder", "model.safetensors", "text_model.final_layer_norm.bias", "the text encoder's output"},
           {"vae", "diffusion_pytorch_model.safetensors", "decoder.conv_out.bias", "the VAE decoder's image"}}) {
    const std::string model = copy_fixture("hostile-nan-" + component);
    poison(model + "/" + component + "/" + file, tensor);
    expect_error(run_websd(generate_args(model, dir + "/" + component + ".png")), {network, "NaN or infinite"});
    EXPECT_FALSE(fs::exists(dir + "/" + component + ".png"));
  }
  const std::string latents = dir + "/nan.safetensors";
  std::vector<float> values(4 * 16 * 16, 0.5f);
  values[7] = std::numeric_limits<float>::quiet_NaN();
  safetensors_write(latents, {{"latents", DType::kF32, {1, 4, 16, 16}, std::as_bytes(std::span(values))}});
  expect_error(run_websd(generate_args(fixture_model(), dir + "/l.png", {"--init-latents", latents})),
               {"the init latents", "NaN or infinite"});
}

TEST(HostileSeeds, OneParserForEveryCommand) {
  const std::string dir = make_temp_dir("hostile-seeds");
  for (const char* bad : {"18446744073709551616", "-2", "1.5", "0x10", " 7", "seven", ""}) {
    expect_error(run_websd({"generate", "--model", fixture_model(), "--prompt", "x", "--steps", "1", "--seed", bad,
                            "--out", dir + "/a.png"}),
                 {"--seed", "not a seed"});
    expect_error(run_websd({"noise", "--seed", bad, "--shape", "2", "--out", dir + "/n.st"}), {"not a seed"});
    expect_error(run_websd({"make-model", "--preset", "tiny", "--seed", bad, "--out", dir + "/m"}), {"not a seed"});
  }
  EXPECT_TRUE(fs::is_empty(dir));
  const CommandResult top = run_websd({"generate", "--model", fixture_model(), "--prompt", "x", "--steps", "1",
                                       "--seed", "18446744073709551615", "--out", dir + "/top.png"});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  const CommandResult random = run_websd({"generate", "--model", fixture_model(), "--prompt", "x", "--steps", "1",
                                          "--seed", "-1", "--out", dir + "/r.png"});
  ASSERT_EQ(random.exit_code, 0) << random.err;
  const std::size_t at = random.err.find("random seed ");
  ASSERT_NE(at, std::string::npos) << random.err;
  const std::string seed = random.err.substr(at + 12, random.err.find(' ', at + 12) - at - 12);
  bool recorded = false;
  for (const auto& text : png_read_text(dir + "/r.png"))
    recorded |= text.text.find("Seed: " + seed + ",") != std::string::npos;
  EXPECT_TRUE(recorded) << "the PNG records the seed used";
}

TEST(HostileOptions, OptionsThatDoNotApplyAreRefused) {
  const std::string dir = make_temp_dir("hostile-options");
  for (const std::string& key : {dir + "/missing.key", fixture_model() + "/model_index.json"}) {
    expect_error(run_websd({"generate", "--artifact", tiny_artifact(), "--key-file", key, "--prompt", "x", "--steps",
                            "1", "--out", dir + "/a.png"}),
                 {"the artifact is not encrypted"});
    expect_error(run_websd({"inspect", tiny_artifact(), "--key-file", key}), {"the artifact is not encrypted"});
    expect_error(run_websd({"profile", "--artifact", tiny_artifact(), "--key-file", key}),
                 {"the artifact is not encrypted"});
  }
  expect_error(run_websd(generate_args(fixture_model(), dir + "/b.png", {"--scheduler", ""})),
               {"--scheduler is empty"});
  expect_error(run_websd({"generate", "--model", fixture_model(), "--prompt", std::string("caf\xe9 \xff"), "--steps",
                          "1", "--out", dir + "/c.png"}),
               {"prompt is not valid UTF-8"});
  expect_error(run_websd({"generate", "--model", fixture_model(), "--prompt", "x", "--negative-prompt", "\xc3",
                          "--steps", "1", "--out", dir + "/d.png"}),
               {"negative prompt is not valid UTF-8"});
  for (const auto& [key, value, message] : std::vector<std::tuple<std::string, Json, std::string>>{
           {"_class_name", "StableDiffusionXLPipeline", "is not a Stable Diffusion 1.x/2.x pipeline"},
           {"unet", Json::array({"diffusers", "UNet3DConditionModel"}), "'UNet3DConditionModel'; websd supports"},
           {"vae", Json::array({"diffusers", "AutoencoderTiny"}), "'AutoencoderTiny'; websd supports AutoencoderKL"}}) {
    const std::string model = copy_fixture("hostile-index");
    Json index;
    std::ifstream(model + "/model_index.json") >> index;
    index[key] = value;
    std::ofstream(model + "/model_index.json") << index.dump();
    expect_error(run_websd({"import", "--model", model}), {message});
    expect_error(run_websd(generate_args(model, dir + "/e.png")), {message});
  }
  EXPECT_TRUE(fs::is_empty(dir));
}

}  // namespace
}  // namespace websd::test
