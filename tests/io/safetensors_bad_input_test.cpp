// Hostile and broken safetensors files: each must end in one websd::Error that names the file,
// the tensor where there is one, and what is wrong; none may crash or allocate without bound.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <string>

#include "core/error.h"
#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"
#include "support/fixtures.h"

namespace websd {
namespace {

std::string le64(std::uint64_t value) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  return bytes;
}

class SafetensorsBadInput : public ::testing::Test {
 protected:
  std::string dir_ = test::make_temp_dir("st-bad");

  // Writes raw bytes to a fresh file and returns its path.
  std::string write_bytes(const std::string& bytes) {
    const std::string path = dir_ + "/case" + std::to_string(counter_++) + ".safetensors";
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  // A file whose header is `header` (length prefix true) followed by `data_bytes` zero bytes.
  std::string write_header(const std::string& header, std::size_t data_bytes = 64) {
    return write_bytes(le64(header.size()) + header + std::string(data_bytes, '\0'));
  }

  // Opens `path`, reads every tensor, and expects a websd::Error naming the file and each of `parts`.
  static void expect_error(const std::string& path, std::initializer_list<std::string> parts) {
    try {
      const SafetensorsFile file(path);
      for (const auto& entry : file.entries()) (void)file.read_f32(entry.name);
      FAIL() << "no error for " << path;
    } catch (const Error& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(path), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message << "\nlacks: " << part;
    }
  }

 private:
  int counter_ = 0;
};

const std::string kGoodEntry = R"({"dtype":"F32","shape":[2,2],"data_offsets":[0,16]})";

TEST_F(SafetensorsBadInput, EmptyAndShortFiles) {
  expect_error(write_bytes(""), {"0 bytes, too short"});
  expect_error(write_bytes("abcde"), {"5 bytes, too short"});
}

TEST_F(SafetensorsBadInput, HeaderLengthBeyondTheFile) {
  expect_error(write_bytes(le64(9'000'000'000'000'000'000ull) + "{}"), {"header length 9000000000000000000 exceeds"});
  expect_error(write_bytes(le64(~0ull) + "{}"), {"exceeds file size"});
  expect_error(write_bytes(le64(3) + "{}"), {"exceeds file size 10 B"});
}

TEST_F(SafetensorsBadInput, HeaderLengthAboveTheLimitInASparseFile) {
  const std::uint64_t header_len = SafetensorsFile::kMaxHeaderBytes + 8;
  const std::string path = write_bytes(le64(header_len));
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(header_len + 64)), 0);  // a hole: no disk used
  expect_error(path, {"exceeds the 100 MiB limit"});
}

TEST_F(SafetensorsBadInput, HeaderThatIsNotAJsonObject) {
  expect_error(write_header("this is not json"), {"header is not valid JSON"});
  expect_error(write_header(R"({"a": )"), {"header is not valid JSON"});
  expect_error(write_header("[1, 2, 3]"), {"header is a JSON array, expected a JSON object"});
  expect_error(write_header("42"), {"header is 42, expected a JSON object"});
  expect_error(write_header(""), {"header is not valid JSON"});
}

TEST_F(SafetensorsBadInput, HeaderThatIsNotUtf8) {
  expect_error(write_header("{\"we\xff\xfeird\":" + kGoodEntry + "}"), {"not valid UTF-8 at byte 12"});
  expect_error(write_header("{\"\xc0\xaf\":" + kGoodEntry + "}"), {"not valid UTF-8"});      // overlong '/'
  expect_error(write_header("{\"\xed\xa0\x80\":" + kGoodEntry + "}"), {"not valid UTF-8"});  // surrogate
  expect_error(write_header("{\"\xf4\x90\x80\x80\":" + kGoodEntry + "}"), {"not valid UTF-8"});
  expect_error(write_header("{\"abc\xe2\x82"), {"not valid UTF-8 at byte 13"});  // cut mid-character
  // Escaped lone surrogates are valid UTF-8 bytes but not valid JSON text.
  expect_error(write_header(R"({"\ud800":)" + kGoodEntry + "}"), {"header is not valid JSON"});
}

TEST_F(SafetensorsBadInput, NonAsciiUtf8NamesAreFine) {
  const SafetensorsFile file(write_header("{\"gewicht.\xc3\xbc\xe2\x82\xac\":" + kGoodEntry + "}"));
  EXPECT_NE(file.find("gewicht.\xc3\xbc\xe2\x82\xac"), nullptr);
}

TEST_F(SafetensorsBadInput, MissingOrIllTypedFields) {
  expect_error(write_header(R"({"w":{"shape":[1],"data_offsets":[0,4]}})"), {"tensor 'w'", "missing string 'dtype'"});
  expect_error(write_header(R"({"w":{"dtype":7,"shape":[1],"data_offsets":[0,4]}})"), {"'w'", "'dtype'"});
  expect_error(write_header(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})"), {"'w'", "missing array 'shape'"});
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":"1","data_offsets":[0,4]}})"), {"'w'", "'shape'"});
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":[1]}})"), {"'w'", "missing 'data_offsets'"});
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}})"), {"'w'", "data_offsets"});
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":{"a":0}}})"), {"'w'", "data_offsets"});
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})"),
               {"'w'", "data_offset -4 is not a non-negative integer"});
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4.5]}})"), {"'w'", "non-integer 4.5"});
  expect_error(write_header(R"({"w":[1,2,3]})"), {"tensor 'w'", "entry is a JSON array"});
  expect_error(write_header(R"({"w":null})"), {"tensor 'w'", "entry is a JSON null"});
}

TEST_F(SafetensorsBadInput, UnknownDtype) {
  expect_error(write_header(R"({"w":{"dtype":"Q4_K","shape":[1],"data_offsets":[0,4]}})"),
               {"tensor 'w'", "unsupported dtype 'Q4_K'", "supported: F64 F32 F16 BF16"});
}

TEST_F(SafetensorsBadInput, NegativeFractionalAndHugeDimensions) {
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":[2,-1],"data_offsets":[0,4]}})"),
               {"tensor 'w'", "shape dimension 1 is -1, expected a non-negative integer"});
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})"),
               {"'w'", "shape dimension 0 is the non-integer 1.5"});
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":[[1]],"data_offsets":[0,4]}})"),
               {"'w'", "shape dimension 0 is a JSON array"});
  // numel overflows 64 bits, and numel x 4 overflows while numel alone does not.
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,2],"data_offsets":[0,0]}})"),
               {"'w'", "more elements than fit in 64 bits"});
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})"),
               {"'w'", "more elements than fit in 64 bits"});
  // Above int64 max: cannot be a Shape extent.
  expect_error(write_header(R"({"w":{"dtype":"U8","shape":[9223372036854775808],"data_offsets":[0,0]}})"),
               {"'w'", "more elements than fit in 64 bits"});
  // 2^64 does not fit any integer type: the JSON parser makes it a float.
  expect_error(write_header(R"({"w":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,0]}})"),
               {"'w'", "shape dimension 0 is the non-integer"});
  std::string deep_rank = "[";
  for (int i = 0; i < 100; ++i) deep_rank += i ? ",1" : "1";
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":)" + deep_rank + R"(],"data_offsets":[0,4]}})"),
               {"'w'", "shape has 100 dimensions, more than 64"});
}

TEST_F(SafetensorsBadInput, OffsetsOutOfRangeBackwardsOrWrongSize) {
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[60,68]}})", 64),
               {"tensor 'w'", "data_offsets [60,68] end past the data section, which holds 64 bytes"});
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,18446744073709551615]}})"),
               {"'w'", "end past the data section"});
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})"),
               {"'w'", "data_offsets [8,0] end before they begin"});
  expect_error(write_header(R"({"w":{"dtype":"F16","shape":[3,2],"data_offsets":[0,16]}})"),
               {"tensor 'w'", "span 16 bytes but shape [3,2] of F16 needs 12"});
}

TEST_F(SafetensorsBadInput, OverlappingTensors) {
  expect_error(write_header(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})"),
               {"tensors 'a' and 'b' overlap"});
  expect_error(write_header(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                            R"("b":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})"),
               {"overlap"});
}

TEST_F(SafetensorsBadInput, DuplicateKeys) {
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                            R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})"),
               {"key 'w' twice (duplicate tensor names)"});
  expect_error(write_header(R"({"w":{"dtype":"F32","dtype":"F16","shape":[1],"data_offsets":[0,4]}})"),
               {"key 'dtype' twice inside one object"});
  expect_error(write_header(R"({"__metadata__":{"a":"1"},"__metadata__":{"a":"2"}})"), {"'__metadata__' twice"});
}

TEST_F(SafetensorsBadInput, MetadataThatIsNotStrings) {
  expect_error(write_header(R"({"__metadata__":{"format":1}})"),
               {"__metadata__ value of 'format' is 1, expected a string"});
  expect_error(write_header(R"({"__metadata__":{"format":{"x":"y"}}})"), {"'format' is a JSON object"});
  expect_error(write_header(R"({"__metadata__":["pt"]})"), {"__metadata__ is a JSON array"});
}

TEST_F(SafetensorsBadInput, DeeplyNestedHeaderIsRefusedNotRecursedInto) {
  // Serialising this for a message would recurse a million levels deep and overflow the stack.
  const std::string nest(1'000'000, '[');
  expect_error(write_header(R"({"w":{"dtype":"F32","shape":)" + nest + std::string(1'000'000, ']') +
                            R"(,"data_offsets":[0,4]}})"),
               {"header nests deeper than 16 levels"});
  expect_error(write_header(R"({"__metadata__":{"a":)" + nest), {"nests deeper"});
}

TEST_F(SafetensorsBadInput, HostileNamesStayOnOneShortLine) {
  expect_error(write_header(R"({"line\nbreak":{"dtype":"X","shape":[1],"data_offsets":[0,4]}})"),
               {"tensor 'line\\x0abreak'"});
  const std::string long_name(100'000, 'n');
  try {
    const SafetensorsFile file(
        write_header("{\"" + long_name + R"(":{"dtype":"X","shape":[1],"data_offsets":[0,4]}})"));
    FAIL();
  } catch (const Error& error) {
    EXPECT_LT(std::string(error.what()).size(), 600u);
    EXPECT_NE(std::string(error.what()).find("...(100000 bytes)"), std::string::npos) << error.what();
  }
}

TEST_F(SafetensorsBadInput, TruncatedDataSection) {
  const std::string path = dir_ + "/whole.safetensors";
  const std::vector<float> values(100, 1.0f);
  safetensors_write(path, {{"a", DType::kF32, {50}, std::as_bytes(std::span(values).first(50))},
                           {"b", DType::kF32, {50}, std::as_bytes(std::span(values).last(50))}});
  std::ifstream in(path, std::ios::binary);
  const std::string whole((std::istreambuf_iterator<char>(in)), {});
  expect_error(write_bytes(whole.substr(0, whole.size() - 1)), {"tensor 'b'", "end past the data section"});
  expect_error(write_bytes(whole.substr(0, whole.size() - 300)), {"end past the data section", "truncated file?"});
  expect_error(write_bytes(whole.substr(0, 20)), {"exceeds file size 20 B"});
}

TEST_F(SafetensorsBadInput, PathsThatAreNotFiles) {
  expect_error(dir_ + "/does-not-exist.safetensors", {"cannot open"});
  expect_error(dir_, {"is a folder, expected a safetensors file"});
}

TEST_F(SafetensorsBadInput, WrongKindOfReadNamesFileAndTensor) {
  const std::vector<std::int64_t> ids = {1, 2};
  const std::vector<float> values = {1, 2, 3};
  const std::string path = dir_ + "/mixed.safetensors";
  safetensors_write(path, {{"ids", DType::kI64, {2}, std::as_bytes(std::span(ids))},
                           {"w", DType::kF32, {3}, std::as_bytes(std::span(values))}});
  const SafetensorsFile file(path);
  const auto message_of = [](auto&& action) {
    try {
      action();
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of([&] { file.read_f32("ids"); }).find(path + ": tensor 'ids' is I64, expected a float type"),
            std::string::npos);
  EXPECT_NE(message_of([&] { file.read_i64("w"); }).find("tensor 'w' is F32, expected an integer type"),
            std::string::npos);
  EXPECT_NE(message_of([&] { file.at("nope"); }).find(path + ": no tensor named 'nope'"), std::string::npos);
  std::vector<float> two(2);
  EXPECT_NE(message_of([&] { file.read_f32_into(file.at("w"), two); }).find("3 elements, destination holds 2"),
            std::string::npos);
  EXPECT_NE(message_of([&] { file.read_f32_slice(file.at("w"), 2, two); }).find("cannot read 2 from element 2"),
            std::string::npos);
  file.read_f32_slice(file.at("w"), 1, two);
  EXPECT_EQ(two, (std::vector<float>{2, 3}));
}

TEST_F(SafetensorsBadInput, EdgeCasesThatAreValid) {
  // Scalars, empty tensors, gaps between tensors and trailing bytes are all legal.
  const SafetensorsFile file(write_header(R"({"scalar":{"dtype":"F32","shape":[],"data_offsets":[8,12]},)"
                                          R"("empty":{"dtype":"F16","shape":[0,3],"data_offsets":[12,12]},)"
                                          R"("__metadata__":{}})"));
  EXPECT_EQ(file.read_f32("scalar").data, std::vector<float>{0.0f});
  EXPECT_EQ(file.read_f32("empty").data.size(), 0u);
  EXPECT_EQ(file.at("empty").shape, (Shape{0, 3}));
  EXPECT_TRUE(file.metadata().empty());
}

}  // namespace
}  // namespace websd
