// `websd tokenize --tokenizer DIR [--no-pad] PROMPT...`: prints the CLIP token ids of each prompt as one
// JSON array per line, padded/truncated to the tokenizer's max length unless --no-pad is given.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/command_registry.h"
#include "pipeline/tokenizer/clip_tokenizer_loader.h"

namespace websd::app {
namespace {

struct TokenizeOptions {
  std::string tokenizer;
  bool no_pad = false;
  std::vector<std::string> prompts;
};

void run_tokenize(const TokenizeOptions& options) {
  const ClipTokenizer tokenizer = load_clip_tokenizer(options.tokenizer);
  for (const std::string& prompt : options.prompts) {
    const std::vector<TokenId> ids = options.no_pad ? tokenizer.encode_unpadded(prompt) : tokenizer.encode(prompt);
    std::cout << nlohmann::json(ids).dump() << '\n';
  }
}

const bool registered = register_command(
    {"tokenize", "Print the CLIP token ids of prompts", [](CLI::App& command) {
       auto options = std::make_shared<TokenizeOptions>();
       command
           .add_option("--tokenizer", options->tokenizer,
                       "Tokenizer folder (tokenizer.json or vocab.json + merges.txt) or diffusers model folder")
           ->required();
       command.add_flag("--no-pad", options->no_pad, "Print BOS, every token and EOS: no truncation, no padding");
       command
           .add_option(
               "prompts", options->prompts,
               "Prompts to tokenize, one JSON array of ids per prompt (put -- before a prompt that starts with -)")
           ->required();
       command.callback([options] { run_tokenize(*options); });
     }});

}  // namespace
}  // namespace websd::app
