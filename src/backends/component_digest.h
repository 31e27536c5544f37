// What the prepared-weight cache keys a checkpoint component by (prepared_weight_cache.h).
//
// The content digest is the SHA-256 of every tensor of the component in canonical-name order:
// name, dtype, shape and raw bytes. It names the content, not the file: a checkpoint copied,
// moved or converted to another layout of the same tensors keeps it, and the tensors of the other
// components of a single file do not enter it. Hashing reads every byte (about 1 s for the 1.7 GB
// of an f16 SD 1.5 UNet), so a cache also keeps the digest under the files' identity: the stat
// fields that any write to a file changes (size, modification and status-change times, inode).
// ctime cannot be set back by a program, so an unchanged identity means unchanged bytes, the rule
// git's index and ccache's direct mode rely on.
// Thread-safety: pure functions over an immutable component.
#pragma once

#include <string>

#include "import/checkpoint_component.h"

namespace websd::backends {

// Lower-case hex SHA-256 of the component's tensors (see above). Drops each tensor's mapped pages
// once hashed, so hashing does not raise resident memory by the checkpoint's size.
std::string component_content_digest(const CheckpointComponent& component);

// One line per weight file of the component: its path, device, inode, size, mtime and ctime in
// nanoseconds; with the component's name and websd's version (which decide how the files are read).
// Throws websd::Error naming a file that cannot be examined.
std::string component_file_identity(const CheckpointComponent& component);

}  // namespace websd::backends
