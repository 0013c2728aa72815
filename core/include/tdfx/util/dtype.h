#pragma once
// Names of torch dtypes as users write them.
#include <string>

#include <c10/core/ScalarType.h>

namespace tdfx {

/// Parses "float32", "float", "int64", "bool", ... Throws tdfx::Error listing the accepted names.
c10::ScalarType parseDtype(const std::string& name);
/// "float32", "int64", ...: the short name tdfx prints and parseDtype accepts (LibTorch's name for
/// dtypes tdfx does not list). Never throws.
std::string dtypeToString(c10::ScalarType dtype);
/// Python's repr of the dtype: "torch.float32".
std::string dtypeRepr(c10::ScalarType dtype);

}  // namespace tdfx
