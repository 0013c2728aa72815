#include "tdfx/model/tensor_geometry.h"

#include <malloc.h>

#include <c10/util/StringUtil.h>

#include "huge_page_allocator.h"

namespace tdfx {

std::optional<std::string> tensorGeometryProblem(const at::Tensor& t, const std::string& container) {
  if (!t.defined() || !t.has_storage()) return std::nullopt;
  const auto geometry = [&] {
    return "of shape " + c10::str(t.sizes()) + ", strides " + c10::str(t.strides()) + " and storage offset " +
           std::to_string(t.storage_offset());
  };
  if (t.storage_offset() < 0) return "has a negative storage offset (" + std::to_string(t.storage_offset()) + ")";
  bool empty = false;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) < 0) return geometry() + " has a negative size";
    if (t.stride(d) < 0) return std::string("has a negative stride");
    empty = empty || t.size(d) == 0;
  }
  if (empty) return std::nullopt;  // no element is ever read (numel() itself may have overflowed to 0: not used)
  int64_t lastElement = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) {
    int64_t span = 0;
    if (__builtin_mul_overflow(t.size(d) - 1, t.stride(d), &span) || __builtin_add_overflow(lastElement, span, &lastElement))
      return geometry() + " reaches past any storage (its furthest element overflows a 64-bit index)";
  }
  // The storage's size comes from the pickle; its buffer is the zip record, allocated by the
  // huge-page allocator (large records) or LibTorch's own (posix_memalign). A record shorter than
  // the pickle claims is damage too.
  const void* buffer = t.storage().data();
  const size_t claimed = t.storage().nbytes();
  const auto recordBytes = [&] {
    const c10::optional<size_t> huge = hugePageBlockBytes(t.storage().data_ptr());
    return huge ? *huge : ::malloc_usable_size(const_cast<void*>(buffer));
  };
  if (claimed > 0 && (buffer == nullptr || recordBytes() < claimed))
    return "claims " + std::to_string(claimed) + " bytes of storage but its record in the " + container + " is shorter";
  const int64_t available = static_cast<int64_t>(claimed / static_cast<size_t>(t.element_size()));
  if (lastElement >= available)
    return geometry() + " needs " + std::to_string(static_cast<uint64_t>(lastElement) + 1) +
           " elements but its storage holds " + std::to_string(available);
  return std::nullopt;
}

}  // namespace tdfx
