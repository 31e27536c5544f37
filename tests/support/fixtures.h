// Locates the shared reference fixtures (see ../shared/fixtures/README.md). A missing fixture is
// a test failure, never a skip.
#pragma once

#include <string>

namespace websd::test {

// $WEBSD_FIXTURES if set, else <project root>/../shared/fixtures. Fails the test (throws) if absent.
std::string fixtures_dir();
// fixtures_dir() + "/" + relative, checked to exist.
std::string fixture_path(const std::string& relative);
// A fresh, empty temporary directory for this test; removed with its contents when the process exits.
std::string make_temp_dir(const std::string& tag);
// A private copy of the fixture `relative` (a file or a folder) in a fresh temporary directory, for a
// test that breaks it: <temp dir>/<its name>.
std::string copy_fixture(const std::string& relative, const std::string& tag);
// The whole content of the file at `path` ("" when it cannot be read), to compare outputs byte for byte.
std::string read_bytes(const std::string& path);

}  // namespace websd::test
