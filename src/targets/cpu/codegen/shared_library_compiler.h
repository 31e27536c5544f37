// Compiles generated C++ into a shared library with the system compiler: the source is written
// beside the library (same path, extension ".cpp"), then `$CXX` (else `c++`) runs through
// posix_spawnp (an argument vector, never a shell line) as
//   <compiler> -O3 -std=c++17 -fPIC -shared -fvisibility=hidden -fvisibility-inlines-hidden
//              -ffp-contract=off -fno-math-errno -fno-trapping-math [-march=<march>]
//              <source> -o <tmp> <extra flags...>
// (no contraction keeps results as written; no errno and no FP traps let branch-free loops
// vectorise), and <tmp> is renamed onto the library path, so a failed build never leaves a partial
// library. $CXX may hold a command with options separated by spaces ("ccache g++"); quoting is not
// interpreted. A compiler that cannot be started or that fails raises websd::Error("codegen")
// carrying its diagnostics (newlines shown as " | ", at most 4000 characters). The compiler leads a
// process group of its own, which an interrupt of websd kills and reaps with everything the
// compiler started (io/interrupt_cleanup.h). Thread-safe (each call its own files and process).
#pragma once

#include <string>
#include <vector>

namespace websd::codegen {

struct SharedLibraryOptions {
  std::string compiler;  // empty: $CXX, else "c++"
  // -march=<march> ("native": fastest here, but the library may not run on an older CPU;
  // "x86-64-v3", "armv8-a", ...); empty: the compiler's default.
  std::string march;
  std::vector<std::string> extra_flags;  // appended last (e.g. "-L<dir>", "-lfoo")
};

struct SharedLibraryBuild {
  std::string library_path;
  std::string source_path;
  std::vector<std::string> command;  // the compiler's argument vector, as run
  double compile_seconds = 0.0;      // wall time of the compiler process
};

SharedLibraryBuild compile_shared_library(const std::string& source, const std::string& library_path,
                                          const SharedLibraryOptions& options = {});

}  // namespace websd::codegen
