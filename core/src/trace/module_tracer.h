#pragma once
// Converting a TorchScript method into FX nodes without running it.
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <string>
#include <vector>

#include <torch/csrc/jit/api/module.h>

#include "tdfx/error.h"
#include "tdfx/ir/graph.h"
#include "call_form.h"
#include "graph_builder.h"
#include "source_expr.h"
#include "source_lookup.h"
#include "tdfx/nn/source_index.h"

namespace tdfx::trace {

struct TraceContext;

/// How a value is built, for the tracer's own bookkeeping of lists and tuples (their items'
/// structure survives `append`, unpacking and `len`): a constant, the value of a node, or a list or
/// tuple of parts. `node` is non-owning and points into the graph being built.
struct ValueParts {
  /// PendingField: an item of a Python list or tuple that is a field not yet in the graph (`field`).
  enum class Kind { Constant, NodeValue, List, Tuple, PendingField };
  Kind kind = Kind::Constant;
  c10::IValue constant;
  Node* node = nullptr;
  std::shared_ptr<PendingField> field;
  c10::TypePtr elementType;  ///< element type of a List
  std::vector<ValueParts> items;
  /// A List's identity: Python passes lists by reference, so a list changed in a called function
  /// or through another name is changed everywhere it is held (0: none assigned).
  uint64_t listId = 0;
  /// A Constant that is a tensor FX holds in Python, not yet in the graph (SymValue::pendingTensor),
  /// and its get_attr target: an item of a list keeps being one when the list is unpacked.
  bool pendingTensor = false;
  std::string tensorTarget;

  static ValueParts ofConstant(c10::IValue v) {
    ValueParts k;
    k.constant = std::move(v);
    return k;
  }
  static ValueParts ofNode(Node* n) {
    ValueParts k;
    k.kind = Kind::NodeValue;
    k.node = n;
    return k;
  }
};

/// A module object and its qualified path relative to the traced module ("" = the module itself).
struct ModuleRef {
  torch::jit::Module module;
  std::string path;
};

/// What a TorchScript value stands for during conversion: an FX argument (a constant, a node, or
/// a list/tuple of them) with its runtime view, or a module.
struct SymValue {
  enum class Kind { Value, Module };
  Kind kind = Kind::Value;
  Argument arg;                          ///< FX view
  ValueParts input;                      ///< how it is built
  std::optional<c10::IValue> constant;   ///< set when the value is known without running
  std::shared_ptr<const ModuleRef> module;  ///< Kind::Module (shared: values are copied a lot)
  /// A tensor known while tracing (a buffer, a tensor constant, or one computed from them only),
  /// not yet in the graph: FX computes with such tensors in Python and records a get_attr only
  /// where a recorded operation uses one (torch.fx's create_arg). `constant` holds the tensor.
  bool pendingTensor = false;
  std::string tensorTarget;  ///< its get_attr target: the attribute's path, or "" for `_tensor_constantN`
  /// A field not yet in the graph (see trace::PendingField); `input` is then its PendingField part.
  using PendingField = trace::PendingField;
  std::shared_ptr<PendingField> pendingField;

  static SymValue ofPendingField(Node* container, int64_t index, std::string field);

  static SymValue ofConstant(const c10::IValue& v);
  static SymValue ofPendingTensor(const at::Tensor& t, std::string target);
  static SymValue ofNode(Node* n);
  static SymValue ofModule(ModuleRef m);
};

/// The expression of the `return` in the else branch of a function whose body is
/// `if torch.jit.is_scripting(): ... else: return EXPR` and nothing more; nullopt otherwise.
std::optional<std::string> scriptingElseReturn(const std::string& source);

/// A branch on `torch.jit.is_scripting()` in a function's source: TorchScript compiles one side
/// (the archive holds only that one), torch.fx runs the other.
struct ScriptingBranch {
  std::string test;        ///< `if torch.jit.is_scripting():` as written
  std::string pythonSide;  ///< the first statement of the side Python runs, as written
};
/// The first such branch in `source`; nullopt when there is none.
std::optional<ScriptingBranch> scriptingBranch(const std::string& source);

/// Qualified Python name of a TorchScript class: "torch.nn.modules.linear.Linear"
/// (without "__torch__." and the "___torch_mangle_N" parts TorchScript adds).
std::string pythonTypeName(const c10::ClassTypePtr& type);

/// A TorchScript qualified name as Python spells it: without "__torch__." and "___torch_mangle_N".
std::string pythonQualifiedName(std::string name);

/// Whether a method name is a module's forward (`forward`, or an overload `forward__1`).
bool isForwardMethod(const std::string& name);

/// Whether values of this type may hold tensors (Tensor, Any, or a container of them). Tensors are
/// never folded: their values must come from running the graph.
bool mayHoldTensor(const c10::TypePtr& t);

/// Whether a module is a leaf for tracing: a torch.nn module other than the containers.
bool isLeafModule(const torch::jit::Module& module);

/// A call being inlined or an if's block being converted: on the tracer's path (EagerValueRef)
/// while it is.
class PathStep {
 public:
  PathStep(std::vector<EagerValueRef::Step>& path, const torch::jit::Node* node, size_t block = 0) : path_(path) {
    path_.push_back({node, block});
  }
  ~PathStep() { path_.pop_back(); }
  PathStep(const PathStep&) = delete;
  PathStep& operator=(const PathStep&) = delete;

 private:
  std::vector<EagerValueRef::Step>& path_;
};

/// Raised for control flow that depends on tensor data: the tracer catches it at the nearest
/// submodule call and keeps that submodule as a leaf instead.
class DataDependentError : public TraceError {
 public:
  using TraceError::TraceError;
};

/// Converts TorchScript graphs into nodes of one FX graph. Non-leaf submodule calls, methods and
/// user functions are inlined; torch.nn leaf modules become call_module nodes. The conversion
/// rules are free functions over a TraceContext (trace_context.h): it reads the user's code through
/// a SourceLookup, builds through a GraphBuilder (which owns rollback), and converts each
/// TorchScript node with the converters registered for its symbol (ConverterTable).
class ModuleTracer {
 public:
  /// `sources`: source locations decoded by the loader (may be null: the debug info is then read
  /// directly, which is safe only for archives that are trusted).
  explicit ModuleTracer(Graph& graph, const SourceIndex* sources = nullptr);
  ~ModuleTracer();
  ModuleTracer(const ModuleTracer&) = delete;
  ModuleTracer& operator=(const ModuleTracer&) = delete;

  /// Inlines `module.forward` with `inputs` (not including self) and returns its outputs.
  std::vector<SymValue> traceForward(const ModuleRef& module, std::vector<SymValue> inputs);

  /// The user's source of `fn` (its `def` and body); empty when the archive has no debug info.
  std::string functionSource(const torch::jit::Function& fn) const;

  /// Where the printed graph follows code that torch.fx does not run (the TorchScript side of a
  /// branch on `torch.jit.is_scripting()`), one line per function; empty when nowhere.
  const std::vector<std::string>& fxDifferences() const;

  /// Type of every module whose code was inlined or kept as a leaf, by path.
  const std::map<std::string, std::string>& moduleTypes() const;
  /// The tensors behind `_tensor_constantN` get_attr nodes (computed while tracing), by target.
  const std::map<std::string, at::Tensor>& tensorConstants() const;

 private:
  // The state of one trace; the rules that convert nodes are free functions over it
  // (trace_context.h), as torch.fx's Proxy carries the behaviour and its tracer stays small.
  std::unique_ptr<TraceContext> cx_;
};

}  // namespace tdfx::trace
