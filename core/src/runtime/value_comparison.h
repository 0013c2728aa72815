#pragma once
// Comparing an eager value with a traced one: tensors bitwise or within tolerance (neg and conj
// views by value, complex numbers by both parts, NaN in the same places equal), and values of any
// structure leaf by leaf. Verify's rows for out keys and its node comparison both use these.
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "tdfx/runtime/verify.h"

namespace tdfx::runtime {

/// One row: shapes and dtypes, max differences, NaN and Inf counts, bitwise equality, the verdict.
KeyComparison compareKey(const NestedKey& key, const at::Tensor& eager, const at::Tensor& traced,
                         const VerifyOptions& options);

/// One row per leaf of two values of any structure (tensors; None, bool, int, float, str; the
/// items of tuples, lists and string-keyed dicts), keyed by its path from `path` (`output_1[0]`).
void compareValues(const std::string& path, const c10::IValue& eager, const c10::IValue& traced,
                   const VerifyOptions& options, std::vector<KeyComparison>& rows);

/// Whether two values of any structure are bitwise the same, tensors by their values (neg and conj
/// views resolved): the cheap answer for the common case, before compareValues' statistics.
bool bitwiseSame(const c10::IValue& eager, const c10::IValue& traced);

/// "float64 [2, 3]", "int 4", "None": a value as a divergence names it.
std::string describeValue(const c10::IValue& v);

}  // namespace tdfx::runtime
