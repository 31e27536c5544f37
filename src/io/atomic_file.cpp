#include "io/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "io/interrupt_cleanup.h"

namespace websd {

void atomic_write_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  // The rename would replace a device, FIFO, socket or link with a regular file (see output_paths.h).
  std::error_code status_error;
  const auto status = std::filesystem::symlink_status(path, status_error);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    throw Error("file", path + ": exists and is not a regular file; websd replaces only regular files");
  }
  const std::string temp_path = path + ".tmp-" + std::to_string(::getpid());
  const CleanupOnInterrupt cleanup(temp_path);
  try {
    {
      std::ofstream stream(temp_path, std::ios::binary | std::ios::trunc);
      if (!stream) throw Error("file", path + ": cannot create " + temp_path + ": " + std::strerror(errno));
      write(stream);
      stream.flush();
      if (!stream) throw Error("file", path + ": write failed (disk full?)");
    }
    std::error_code error;
    std::filesystem::rename(temp_path, path, error);
    if (error) throw Error("file", path + ": cannot replace: " + error.message());
  } catch (...) {
    std::remove(temp_path.c_str());
    throw;
  }
}

}  // namespace websd
