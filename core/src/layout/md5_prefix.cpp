#include "tdfx/util/md5.h"

#include <openssl/evp.h>

#include "tdfx/error.h"

namespace tdfx {

uint32_t md5Prefix32(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &length, EVP_md5(), nullptr) != 1 || length < 4)
    throw Error("OpenSSL could not compute an MD5 digest");
  return (uint32_t(digest[0]) << 24) | (uint32_t(digest[1]) << 16) | (uint32_t(digest[2]) << 8) | uint32_t(digest[3]);
}

}  // namespace tdfx
