#pragma once
// FxGraphDrawer picks a function node's colour by the MD5 of its printed target.
#include <cstdint>
#include <string>

namespace tdfx {

/// The first four bytes of MD5(`text`), big-endian, as Python's int(hashlib.md5(text).hexdigest()[:8], 16).
uint32_t md5Prefix32(const std::string& text);

}  // namespace tdfx
