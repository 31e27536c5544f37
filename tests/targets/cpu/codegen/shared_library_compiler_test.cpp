// compile_shared_library: the system compiler builds a .so from source written beside it; its
// diagnostics reach the error; a missing compiler, $CXX and bad paths are reported clearly.
#include "targets/cpu/codegen/shared_library_compiler.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "support/fixtures.h"

namespace websd::codegen {
namespace {

namespace fs = std::filesystem;

const char* kSource = "extern \"C\" __attribute__((visibility(\"default\"))) int answer(void) { return 42; }\n";

std::string compile_error(const std::string& source, const std::string& path, const SharedLibraryOptions& options) {
  try {
    compile_shared_library(source, path, options);
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "no error compiling into " << path;
  return "";
}

// Sets an environment variable for the scope's lifetime.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() { had_ ? setenv(name_, old_.c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST(SharedLibraryCompiler, BuildsALibraryFromSourceWrittenBesideIt) {
  const std::string dir = test::make_temp_dir("compiler-ok");
  const SharedLibraryBuild build = compile_shared_library(kSource, dir + "/answer.so");
  EXPECT_EQ(build.library_path, dir + "/answer.so");
  EXPECT_EQ(build.source_path, dir + "/answer.cpp");
  EXPECT_GT(build.compile_seconds, 0.0);
  for (const char* flag : {"-O3", "-std=c++17", "-fPIC", "-shared", "-fvisibility=hidden"}) {
    EXPECT_NE(std::find(build.command.begin(), build.command.end(), flag), build.command.end()) << flag;
  }
  EXPECT_EQ(std::find(build.command.begin(), build.command.end(), "-march=native"), build.command.end());
  std::ifstream source(build.source_path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(source), {}), kSource);
  std::ifstream library(build.library_path, std::ios::binary);
  char magic[4] = {};
  library.read(magic, 4);
  EXPECT_EQ(std::string(magic, 4),
            "\x7f"
            "ELF");
  // Only the source and the library: no temporary output is left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);

  SharedLibraryOptions native;
  native.march = "native";
  const SharedLibraryBuild tuned = compile_shared_library(kSource, dir + "/native.so", native);
  EXPECT_NE(std::find(tuned.command.begin(), tuned.command.end(), "-march=native"), tuned.command.end());
  EXPECT_TRUE(fs::exists(dir + "/native.so"));
}

TEST(SharedLibraryCompiler, CompilerDiagnosticsReachTheError) {
  const std::string dir = test::make_temp_dir("compiler-bad");
  const std::string message =
      compile_error("int broken( { return undeclared_thing; }\n", dir + "/broken.so", SharedLibraryOptions{});
  EXPECT_NE(message.find("[codegen] compiling " + dir + "/broken.cpp failed"), std::string::npos) << message;
  EXPECT_NE(message.find("exited with status"), std::string::npos) << message;
  EXPECT_NE(message.find("error"), std::string::npos) << message;
  EXPECT_NE(message.find("broken.cpp:1"), std::string::npos) << message;  // the compiler's own location
  EXPECT_FALSE(fs::exists(dir + "/broken.so"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);  // the source only
}

TEST(SharedLibraryCompiler, MissingCompilerAndCxxAreReported) {
  const std::string dir = test::make_temp_dir("compiler-missing");
  SharedLibraryOptions options;
  options.compiler = "/nonexistent/websd-cxx";
  std::string message = compile_error(kSource, dir + "/a.so", options);
  EXPECT_NE(message.find("cannot run the C++ compiler '/nonexistent/websd-cxx'"), std::string::npos) << message;
  EXPECT_NE(message.find("No such file"), std::string::npos) << message;
  {
    const ScopedEnv cxx("CXX", "websd-no-such-compiler -O0");
    message = compile_error(kSource, dir + "/b.so", SharedLibraryOptions{});
    EXPECT_NE(message.find("'websd-no-such-compiler'"), std::string::npos) << message;
  }
  {
    const ScopedEnv cxx("CXX", "g++ -DWEBSD_FROM_CXX");  // a command with options: split on spaces
    const SharedLibraryBuild build = compile_shared_library(kSource, dir + "/c.so");
    EXPECT_EQ(build.command.at(0), "g++");
    EXPECT_EQ(build.command.at(1), "-DWEBSD_FROM_CXX");
  }
  message = compile_error(kSource, dir + "/d.cpp", SharedLibraryOptions{});
  EXPECT_NE(message.find("must not end in .cpp"), std::string::npos) << message;
  // Paths with spaces and shell characters reach the compiler as they are.
  const std::string odd = dir + "/odd dir; $(echo x)";
  fs::create_directories(odd);
  EXPECT_TRUE(fs::exists(compile_shared_library(kSource, odd + "/lib'q.so").library_path));
}

}  // namespace
}  // namespace websd::codegen
