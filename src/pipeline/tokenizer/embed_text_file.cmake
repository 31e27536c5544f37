# Turns a text file into a C++ source defining `std::string_view <NAMESPACE>::<FUNCTION>()` that returns
# the file's bytes. Run as a build step:
#   cmake -DINPUT=<file> -DOUTPUT=<file.cpp> -DNAMESPACE=<ns> -DFUNCTION=<name> -P embed_text_file.cmake
# Portable to g++ and emscripten's clang (no #embed, no `ld -b binary`): the text becomes raw string
# literals of at most CHUNK_BYTES bytes each, cut after a newline so that no UTF-8 sequence is split.
# They stay separate literals (clang's -Wpedantic flags literals over 64 KiB, concatenated or not) and
# are joined once, on first call, into one string.
cmake_minimum_required(VERSION 3.25)

foreach(name INPUT OUTPUT NAMESPACE FUNCTION)
  if(NOT DEFINED ${name})
    message(FATAL_ERROR "embed_text_file.cmake: -D${name}=... is required")
  endif()
endforeach()
set(CHUNK_BYTES 16000)
set(DELIMITER "websd_embed")

file(READ "${INPUT}" text)
string(LENGTH "${text}" total)
if(total EQUAL 0)
  message(FATAL_ERROR "embed_text_file.cmake: ${INPUT} is empty or unreadable")
endif()
string(FIND "${text}" ")${DELIMITER}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "embed_text_file.cmake: ${INPUT} contains the raw-string end ')${DELIMITER}\"'")
endif()

set(arrays "")
set(views "")
set(offset 0)
set(count 0)
while(offset LESS total)
  string(SUBSTRING "${text}" ${offset} ${CHUNK_BYTES} piece)
  string(LENGTH "${piece}" length)
  math(EXPR end "${offset} + ${length}")
  if(end LESS total)
    string(FIND "${piece}" "\n" last_newline REVERSE)
    if(last_newline EQUAL -1)
      message(FATAL_ERROR "embed_text_file.cmake: ${INPUT} has a line longer than ${CHUNK_BYTES} bytes")
    endif()
    math(EXPR length "${last_newline} + 1")
    string(SUBSTRING "${piece}" 0 ${length} piece)
  endif()
  string(APPEND arrays "constexpr char kChunk${count}[] = R\"${DELIMITER}(${piece})${DELIMITER}\";\n")
  string(APPEND views "    {kChunk${count}, sizeof kChunk${count} - 1},\n")
  math(EXPR offset "${offset} + ${length}")
  math(EXPR count "${count} + 1")
endwhile()

file(WRITE "${OUTPUT}" "// Generated from ${INPUT} by embed_text_file.cmake; do not edit.
#include <string>
#include <string_view>

namespace ${NAMESPACE} {
namespace {

${arrays}
// Sizes from sizeof, not strlen: clang's constexpr step limit rejects measuring 16 KB literals.
constexpr std::string_view kChunks[] = {
${views}};

}  // namespace

std::string_view ${FUNCTION}() {
  static const std::string text = [] {
    std::string joined;
    joined.reserve(${total});
    for (const std::string_view chunk : kChunks) joined.append(chunk);
    return joined;
  }();
  return text;
}

}  // namespace ${NAMESPACE}
")
