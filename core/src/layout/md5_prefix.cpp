#include "md5_prefix.h"

// libmd (Debian's libmd0, which libbsd already pulls in): a small, kept MD5 instead of OpenSSL.
#include <md5.h>

namespace tdfx {

uint32_t md5Prefix32(const std::string& text) {
  MD5_CTX context;
  MD5Init(&context);
  MD5Update(&context, reinterpret_cast<const uint8_t*>(text.data()), text.size());
  uint8_t digest[MD5_DIGEST_LENGTH];
  MD5Final(digest, &context);
  return (uint32_t(digest[0]) << 24) | (uint32_t(digest[1]) << 16) | (uint32_t(digest[2]) << 8) | uint32_t(digest[3]);
}

}  // namespace tdfx
