// The tokenizer of an opened checkpoint, from wherever DiffusersCheckpoint::tokenizer() says it is:
// a tokenizer folder, files embedded in a single file, or websd's bundled CLIP vocabulary.
// Pure functions of the checkpoint; thread-safe.
#pragma once

#include <map>
#include <string>

#include "import/diffusers_checkpoint.h"
#include "pipeline/tokenizer/clip_tokenizer.h"

namespace websd {

ClipTokenizer checkpoint_tokenizer(const DiffusersCheckpoint& checkpoint);

// The files of a Hugging Face tokenizer folder holding the same tokenizer (name -> content), as an
// artifact or a converted folder stores them.
std::map<std::string, std::string> checkpoint_tokenizer_files(const DiffusersCheckpoint& checkpoint);

}  // namespace websd
