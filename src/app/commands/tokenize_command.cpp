// `websd tokenize --tokenizer DIR [--no-pad] PROMPT... | --prompt-file F`: prints the CLIP token ids of
// each prompt as one JSON array per line, padded/truncated to the tokenizer's max length unless
// --no-pad is given.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/command_registry.h"
#include "app/prompt_file.h"
#include "pipeline/tokenizer/clip_tokenizer_loader.h"

namespace websd::app {
namespace {

struct TokenizeOptions {
  std::string tokenizer;
  bool no_pad = false;
  std::vector<std::string> prompts;
  std::string prompt_file;
};

void run_tokenize(TokenizeOptions options) {
  const ClipTokenizer tokenizer = load_clip_tokenizer(options.tokenizer);
  if (!options.prompt_file.empty()) {
    options.prompts = {read_prompt_file("tokenize", "--prompt-file", options.prompt_file)};
  }
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
       CLI::Option* prompts = command.add_option(
           "prompts", options->prompts,
           "Prompts to tokenize, one JSON array of ids per prompt (put -- before a prompt that starts with -)");
       CLI::Option* prompt_file =
           command.add_option("--prompt-file", options->prompt_file,
                              "Tokenize the text of this UTF-8 file instead (- for standard input; one trailing "
                              "newline is dropped)");
       command.parse_complete_callback(
           [prompts, prompt_file] { require_one_prompt_source(*prompts, *prompt_file, true); });
       command.callback([options] { run_tokenize(*options); });
     }});

}  // namespace
}  // namespace websd::app
