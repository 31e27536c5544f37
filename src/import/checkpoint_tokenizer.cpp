#include "import/checkpoint_tokenizer.h"

#include <filesystem>

#include "io/input_file.h"
#include "models/tokenizer_folder.h"
#include "pipeline/tokenizer/bundled_clip_vocab.h"
#include "pipeline/tokenizer/clip_tokenizer_loader.h"

namespace websd {

ClipTokenizer checkpoint_tokenizer(const DiffusersCheckpoint& checkpoint) {
  const DiffusersCheckpoint::TokenizerSource& source = checkpoint.tokenizer();
  if (!source.folder.empty()) return load_clip_tokenizer(source.folder);
  if (!source.files.empty()) return ClipTokenizer(read_clip_tokenizer_spec_from_files(source.files, source.origin));
  return ClipTokenizer(bundled_clip_tokenizer_spec(source.bundled_pad));
}

std::map<std::string, std::string> checkpoint_tokenizer_files(const DiffusersCheckpoint& checkpoint) {
  const DiffusersCheckpoint::TokenizerSource& source = checkpoint.tokenizer();
  if (!source.files.empty()) return source.files;
  if (source.folder.empty()) return bundled_clip_tokenizer_files(source.bundled_pad);
  const std::filesystem::path folder = find_tokenizer_folder(source.folder);
  std::map<std::string, std::string> files;
  for (const char* name : kTokenizerFileNames) {
    const std::filesystem::path path = folder / name;
    if (std::filesystem::exists(path))
      files[name] = input_file_read("tokenizer", path.string(), tokenizer_file_kind(name));
  }
  return files;
}

}  // namespace websd
