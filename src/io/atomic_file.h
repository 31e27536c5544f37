// Writes a file so that readers see either the old content or the complete new content: data goes
// to a temporary file in the same folder, is flushed, and is renamed over the target. A failure
// leaves the target untouched and removes the temporary file (an interrupt too, see
// interrupt_cleanup.h). A target that exists and is not a regular file (a device, FIFO, socket or
// symbolic link) is refused, never replaced. Thread-compatible.
#pragma once

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>

namespace websd {

// Calls `write` with a stream onto the temporary file, then commits it to `path`.
// Throws websd::Error naming the path if anything fails; exceptions from `write` propagate.
void atomic_write_file(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace websd
