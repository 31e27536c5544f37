#include "import/checkpoint_verify.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace websd {
namespace {

// A page fault may map the cached pages around it again, already-read ones included (Linux maps
// whole page-cache folios, up to 2 MiB); releasing this much behind the read position as well
// keeps them from piling up in resident memory.
constexpr std::uint64_t kReleaseLookbackBytes = std::uint64_t{2} << 20;

}  // namespace

ComponentVerifyReport verify_component(const CheckpointComponent& component, std::size_t buffer_elements) {
  if (buffer_elements == 0) throw Error("import", "verify_component needs a buffer of at least one element");
  ComponentVerifyReport report;
  report.component = component.name();
  std::vector<float> buffer(buffer_elements);
  // File by file in offset order, so that reading streams through each file once.
  for (const auto& file : component.weight_files()) {
    for (const SafetensorsEntry& entry : file->entries()) {
      if (!dtype_is_float(entry.dtype)) continue;  // integer buffers (position_ids) cannot be non-finite
      NonFiniteTensor found{canonical_tensor_name(component.naming(), entry.name), file->path(), 0, 0};
      const std::uint64_t numel = entry.numel();
      const std::uint64_t element_size = dtype_size(entry.dtype);
      for (std::uint64_t first = 0; first < numel; first += buffer_elements) {
        const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(buffer_elements, numel - first));
        const std::span<float> chunk(buffer.data(), count);
        file->read_f32_slice(entry, first, chunk);
        const std::uint64_t chunk_begin = entry.begin + first * element_size;
        file->release_data_pages(chunk_begin - std::min(chunk_begin, kReleaseLookbackBytes),
                                 chunk_begin + count * element_size);
        for (std::size_t i = 0; i < count; ++i) {
          if (!std::isfinite(chunk[i]) && found.count++ == 0) found.first_index = first + i;
        }
      }
      ++report.tensors_read;
      report.values_read += numel;
      if (found.count > 0) report.non_finite.push_back(std::move(found));
    }
    file->release_data_pages(0, std::numeric_limits<std::uint64_t>::max());
  }
  std::sort(report.non_finite.begin(), report.non_finite.end(),
            [](const NonFiniteTensor& a, const NonFiniteTensor& b) { return a.name < b.name; });
  return report;
}

}  // namespace websd
