#pragma once
// MD5 (through OpenSSL), only for picking FxGraphDrawer's colours.
#include <cstdint>
#include <string>

namespace tdfx {

/// The first 32 bits of the MD5 digest of `text`, read big-endian: Python's
/// int(hashlib.md5(text.encode()).hexdigest()[:8], 16), which FxGraphDrawer uses to pick colours.
/// Throws tdfx::Error when OpenSSL cannot compute the digest.
uint32_t md5Prefix32(const std::string& text);

}  // namespace tdfx
