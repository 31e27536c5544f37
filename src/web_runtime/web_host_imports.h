// What the wasm runtime asks of its JavaScript host (web_host_library.js): the artifact's files
// (the embedder reads or fetches them; a page verifies and caches them first) and a place for
// standard error. Declarations of imports; only for the WebAssembly build.
#pragma once

#include <cstddef>

extern "C" {
// Writes where the files come from (a URL, a folder) as UTF-8 into `out`; returns its length, or -1.
int websd_files_describe(char* out, int capacity);
// The file's size in bytes; -1 when the host has no such file, -2 when asking failed.
double websd_files_size(const char* path);
// Copies the whole file (exactly `bytes` bytes) to `out`; 0, or -1 when it failed.
int websd_files_read(const char* path, void* out, double bytes);
// Writes to `out` (32 bytes) the SHA-256 of what the last websd_files_read of `path` delivered,
// when the host computed or checked it (web_host_library.js: files.digest); 1 when written, 0 when
// the host has none, -1 when asking failed.
int websd_files_digest(const char* path, unsigned char* out);
// The message kept by the last failed call, taken (cleared).
int websd_host_error_bytes();
void websd_host_error_take(char* out, int capacity);
// `bytes` of UTF-8 text to the host's standard error (process.stderr under Node, the console in a page).
void websd_stderr_write(const char* text, int bytes);
}
