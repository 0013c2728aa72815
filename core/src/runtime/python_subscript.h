#pragma once
// Python's `container[index]`, for the operator.getitem nodes of a printed graph.
#include <functional>

#include <ATen/core/ivalue.h>

#include "tdfx/ir/argument.h"
#include "tdfx/tensordict/nested_key.h"

namespace tdfx::runtime {

/// `container[index]` as Python computes it: a Tensor as Tensor.__getitem__ does (ints, slices,
/// None, Ellipsis, bools, tensors and int lists, alone or in a tuple), a tuple or list by an int
/// or a slice, a dict by its key, a str by an int. `valueOf` gives the value of a node the index
/// refers to. Throws tdfx::RuntimeError for an index Python would reject (out of range, wrong type).
c10::IValue pythonSubscript(const c10::IValue& container, const Argument& index,
                            const std::function<c10::IValue(const Node*)>& valueOf);

/// The key of `tensordict[key]` as printed: a str, or a tuple of str. Throws tdfx::RuntimeError
/// for anything else.
NestedKey tensordictKey(const Argument& key);

}  // namespace tdfx::runtime
