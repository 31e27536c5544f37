# websd_fuzz_entries: the bodies of the fuzz targets (fuzz_entries.h). Included by both the clang
# fuzz build (fuzz/CMakeLists.txt) and the g++ regression test (tests/fuzz_regressions), so the
# regression test replays exactly what the fuzzers run; whichever comes first defines it.
if(NOT TARGET websd_fuzz_entries)
  add_library(websd_fuzz_entries ${CMAKE_CURRENT_LIST_DIR}/fuzz_entries.cpp)
  target_include_directories(websd_fuzz_entries PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(websd_fuzz_entries PUBLIC websd_io websd_tokenizer websd_artifact websd_runtime websd_cpu_reference)
endif()
