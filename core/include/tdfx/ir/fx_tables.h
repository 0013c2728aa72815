#pragma once
// What torch.fx 1.13 records for Python spellings of torch calls, and how its code prints
// operators, generated from torch's own definitions by core/src/ir/make_fx_tables.py
// (core/src/ir/fx_tables.cpp). In the ir layer, so the tracer, codegen and runtime read the same
// tables. Lookups are by exact spelling.
#include <cstddef>
#include <string>
#include <vector>

namespace tdfx::fx {

/// How FX records a call of a torch callable.
enum class CallKind {
  AsWritten,      ///< a C builtin: one call_function node with the arguments as written
  Handled,        ///< a Python function that passes itself to handle_torch_function with fixed args/kwargs
  TracedThrough,  ///< a Python function FX runs: its body's operations are recorded instead
};

namespace generated {
struct CallableSpelling {
  const char* spelling;  ///< "torch.nn.functional.relu", "torch.special.erf", "torch.nn.functional._max_pool2d"
  const char* target;    ///< what FX prints: "torch.nn.functional.relu", "torch._C._special.special_erf"
  const char* aten;      ///< the operator TorchScript compiles the callable to ("aten::special_erf"), or ""
  CallKind kind;
  const char* args;      ///< Handled: the parameters passed positionally, comma-separated
  const char* kwargs;    ///< Handled: the parameters passed by keyword, in order
  const char* defaults;  ///< Handled: `name=repr(default)` per parameter with a default, tab-separated
};
struct OperatorLowering {
  const char* name;      ///< the operator module's function: "add", "and_", "neg"
  const char* format;    ///< FX's magic method format: "{} + {}"
  const char* operands;  ///< T (tensor), f (float), i (int), L (list) per operand as written: "Tf", "fT"
  const char* aten;      ///< the operator TorchScript emits: "aten::add"
  bool swapped;          ///< the aten operator takes the operands in the other order
};
struct MagicMethod {
  const char* name;    ///< the operator module's function: "add", "getitem", "pos"
  const char* format;  ///< how FX's code prints its call: "{} + {}", "{}[{}]", "+{}"
  /// The Tensor method FX records for `c OP x` with `c` a plain tensor and `x` a Proxy (Tensor's
  /// slot dispatches as that method: "div" for truediv, "__floordiv__"); "" when none.
  const char* concreteLeftMethod;
};
struct ModuleConstants {
  const char* type;       ///< "torch.nn.modules.conv.Conv2d"
  const char* constants;  ///< the class's __constants__, comma-separated, in declaration order
};
extern const CallableSpelling kCallables[];
extern const ModuleConstants kModuleConstants[];
extern const size_t kNumModuleConstants;
extern const size_t kNumCallables;
extern const OperatorLowering kOperators[];
extern const size_t kNumOperators;
extern const MagicMethod kMagicMethods[];
extern const size_t kNumMagicMethods;
extern const char* const kTensorMethods[];
extern const size_t kNumTensorMethods;
}  // namespace generated

/// The entries of a generated list field (`"input,kernel_size"` split at `separator`).
std::vector<std::string> splitTableField(const char* field, char separator = ',');

/// How FX records a call of `spelling` (fully qualified: "torch.nn.functional.relu"); null when
/// the spelling is not a torch callable.
const generated::CallableSpelling* findCallable(const std::string& spelling);

/// The first Python spelling whose TorchScript lowering is `aten` ("aten::special_erf"), or null.
const generated::CallableSpelling* findCallableForAten(const std::string& aten);

/// The __constants__ of a torch.nn module class, in declaration order; empty when unknown.
std::vector<std::string> moduleConstantNames(const std::string& type);

/// Whether torch.Tensor has a method `name`.
bool isTensorMethod(const std::string& name);

/// The FX operator (operator module function) for Python operator text (`+` -> "add", `-` with
/// one operand -> "neg", `==` -> "eq"); empty when FX has no magic method for it.
std::string operatorName(const std::string& text, bool unary);

/// FX's magic method `name` ("add", "getitem"); null when FX prints the operator function as a
/// call (`operator.not_(x)`).
const generated::MagicMethod* findMagicMethod(const std::string& name);

/// The lowering row for FX operator `name` on operand kinds `operands` ("Tf"), or null.
const generated::OperatorLowering* findOperatorLowering(const std::string& name, const std::string& operands);

/// The FX operator whose TorchScript lowering of `operands` operands (unswapped) is `aten`, or null.
const generated::OperatorLowering* findOperatorForAten(const std::string& aten, size_t operands);

}  // namespace tdfx::fx
