# websd_fuzz_entries: the bodies of the fuzz targets (fuzz_entries.h). Included by both the clang
# fuzz build (fuzz/CMakeLists.txt) and the g++ regression test (tests/fuzz_regressions), so the
# regression test replays exactly what the fuzzers run; whichever comes first defines it.
if(NOT TARGET websd_fuzz_entries)
  # The harness's Ed25519 key files are written by the tests' own helper (OpenSSL).
  find_package(OpenSSL REQUIRED COMPONENTS Crypto)
  add_library(websd_fuzz_entries ${CMAKE_CURRENT_LIST_DIR}/fuzz_entries.cpp ${CMAKE_CURRENT_LIST_DIR}/artifact_open_entry.cpp
              ${CMAKE_CURRENT_LIST_DIR}/../tests/support/signing_key_files.cpp)
  target_include_directories(websd_fuzz_entries PUBLIC ${CMAKE_CURRENT_LIST_DIR} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../tests)
  target_link_libraries(websd_fuzz_entries PUBLIC websd_io websd_tokenizer websd_artifact websd_artifact_writer websd_runtime
                        websd_cpu_reference PRIVATE OpenSSL::Crypto)
endif()
