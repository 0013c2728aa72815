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
/// user functions are inlined; torch.nn leaf modules become call_module nodes. It reads the user's
/// code through a SourceLookup, builds through a GraphBuilder (which owns rollback), and converts
/// each TorchScript node with the converters registered for its symbol (ConverterTable).
class ModuleTracer {
 public:
  /// `sources`: source locations decoded by the loader (may be null: the debug info is then read
  /// directly, which is safe only for archives that are trusted).
  explicit ModuleTracer(Graph& graph, const SourceIndex* sources = nullptr) : source_(sources), builder_(graph) {}

  /// Inlines `module.forward` with `inputs` (not including self) and returns its outputs.
  std::vector<SymValue> traceForward(const ModuleRef& module, std::vector<SymValue> inputs);

  /// The user's source of `fn` (its `def` and body); empty when the archive has no debug info.
  std::string functionSource(const torch::jit::Function& fn) const { return source_.functionSource(fn); }

  /// Where the printed graph follows code that torch.fx does not run (the TorchScript side of a
  /// branch on `torch.jit.is_scripting()`), one line per function; empty when nowhere.
  const std::vector<std::string>& fxDifferences() const { return fxDifferences_; }

  /// Type of every module whose code was inlined or kept as a leaf, by path.
  const std::map<std::string, std::string>& moduleTypes() const { return moduleTypes_; }
  /// The tensors behind `_tensor_constantN` get_attr nodes (computed while tracing), by target.
  const std::map<std::string, at::Tensor>& tensorConstants() const { return builder_.tensorConstants(); }

 private:
  struct Frame;
  /// Converts one TorchScript node; false when the node is not this converter's case (the next one
  /// registered for its symbol is tried, and last convertOperator, the operator tables' call).
  using Converter = bool (ModuleTracer::*)(torch::jit::Node*, Frame&);
  /// The converters by TorchScript symbol, in the order they are tried. Each group registers its
  /// own, in the file that converts it, as torch's JIT keeps one pass per file.
  class ConverterTable {
   public:
    void add(c10::Symbol symbol, Converter converter) { bySymbol_[symbol].push_back(converter); }
    const std::vector<Converter>* find(c10::Symbol symbol) const;

   private:
    std::unordered_map<c10::Symbol, std::vector<Converter>> bySymbol_;
  };
  static const ConverterTable& converters();
  /// module_tracer.cpp: values Python computes while FX traces (constants, casts, isinstance,
  /// `is None`, warnings, grad-mode context managers).
  static void registerValueConverters(ConverterTable& table);
  /// calls.cpp: module attributes, method and function calls.
  static void registerCallConverters(ConverterTable& table);
  /// control_flow.cpp: if, loops, raise.
  static void registerControlFlowConverters(ConverterTable& table);
  /// containers.cpp: lists, tuples and dicts.
  static void registerContainerConverters(ConverterTable& table);
  /// A converter that always handles its node, from one that returns nothing.
  template <void (ModuleTracer::*Convert)(torch::jit::Node*, Frame&)>
  bool always(torch::jit::Node* node, Frame& frame) {
    (this->*Convert)(node, frame);
    return true;
  }
  bool convertConstant(torch::jit::Node* node, Frame& frame);
  bool convertToList(torch::jit::Node* node, Frame& frame);
  bool convertGradMode(torch::jit::Node* node, Frame& frame);
  bool convertPassThrough(torch::jit::Node* node, Frame& frame);
  bool convertUninitialized(torch::jit::Node* node, Frame& frame);
  bool convertIsInstance(torch::jit::Node* node, Frame& frame);
  [[noreturn]] bool refuseSetAttr(torch::jit::Node* node, Frame& frame);
  [[noreturn]] bool refuseRaise(torch::jit::Node* node, Frame& frame);
  bool convertWarn(torch::jit::Node* node, Frame& frame);
  bool convertIsNone(torch::jit::Node* node, Frame& frame);

  /// A statement `NAME = CONTAINER[INDEX]` (or `CONTAINER.ATTRIBUTE[INDEX]`) at a function body's
  /// own level that TorchScript removed as dead code (dead_statements.cpp); `begin`, `end`: its
  /// offsets in the function's source.
  struct DeadRead {
    size_t begin = 0, end = 0;
    std::string container;
    int64_t index = 0;
    std::string attribute;  ///< "shape" for `x.shape[1]`; empty for `x[1]`
  };
  /// Values of one inlined call: TorchScript values of that graph -> what they stand for.
  struct Frame {
    ModuleRef scope;
    int depth = 0;
    std::unordered_map<const torch::jit::Value*, SymValue> env;
    /// Dicts built in this call, item by item (key, value), for reads with constant keys.
    std::unordered_map<const torch::jit::Value*, std::vector<std::pair<c10::IValue, SymValue>>> dicts;
    const SymValue& get(const torch::jit::Value* v) const;
    /// Plain tensors put into the graph for the step being converted: value -> its pending form.
    struct Materialized {
      const torch::jit::Value* value;
      SymValue pending;
      const Node* node;  ///< compared with the graph before use: a rollback may have erased it
      size_t index;
    };
    std::vector<Materialized> materialized;
    /// Dead statements of this call's function not yet recorded, in source order.
    std::vector<DeadRead> deadReads;
  };
  /// The dead statements of `fn` (whose graph is `g`), found once per function.
  const std::vector<DeadRead>& deadReads(const torch::jit::Function& fn, torch::jit::Graph& g);
  std::unordered_map<const torch::jit::Function*, std::vector<DeadRead>> deadReadsOf_;
  /// Notes the TorchScript side of an is_scripting() branch in `fn`, once per function.
  void noteScriptingBranch(const torch::jit::Function& fn);
  std::unordered_set<const torch::jit::Function*> scriptingNoted_;
  std::vector<std::string> fxDifferences_;
  /// Records the dead statements that stand before `node` in the source (all left: null).
  void recordDeadReadsBefore(torch::jit::Node* node, Frame& frame);
  /// `fn`: the function whose graph `g` is (its source is read for dead statements; may be null).
  std::vector<SymValue> inlineGraph(torch::jit::Graph& g, std::vector<SymValue> inputs, const ModuleRef& scope,
                                    int depth, const torch::jit::Function* fn = nullptr);
  void convertBlock(torch::jit::Block* block, Frame& frame);
  void convertNode(torch::jit::Node* node, Frame& frame);
  void convertCallMethod(torch::jit::Node* node, Frame& frame);
  void convertCallFunction(torch::jit::Node* node, Frame& frame);
  void convertGetAttr(torch::jit::Node* node, Frame& frame);
  void convertOperator(torch::jit::Node* node, Frame& frame);
  bool tryFold(torch::jit::Node* node, Frame& frame);
  /// An f-string's aten::format evaluated as FX's trace does (a Proxy reads `Proxy(name)`); false
  /// when its parts are not all known.
  bool formatAtTraceTime(torch::jit::Node* node, Frame& frame);
  /// Puts the pending tensors among `node`'s inputs into the graph (get_attr nodes), unless the
  /// node is computed while tracing.
  void materializeInputs(torch::jit::Node* node, Frame& frame);
  /// Whether `node` is a Python list or tuple operation (building, changing, indexing, unpacking,
  /// a loop carrying values): Python runs it while FX traces, so the fields its lists hold stay
  /// pending, to be made where a recorded operation first uses them.
  bool isPythonContainerOperation(torch::jit::Node* node, const Frame& frame) const;
  /// Puts the pending fields held in a list or tuple into the graph (their getattr nodes); true
  /// when there were any.
  bool materializeParts(ValueParts& parts, Argument& arg);
  /// Holds an attribute read of a Proxy (`form` is builtins.getattr) as a pending field of
  /// `output`, made at its first use as FX makes it; false, doing nothing, for any other form.
  bool deferAttributeRead(const CallForm& form, const torch::jit::Value* output, const NodeMeta& meta, Frame& frame);
  bool foldable(torch::jit::Node* node, const Frame& frame) const;
  /// A get_attr node for `target` ("" for a new `_tensor_constantN`). A parameter is a Proxy, one
  /// node per target (`shared`); a buffer or plain tensor is a Python tensor that FX puts into the
  /// graph anew at each recorded use (`b`, `b_1`).
  Node* tensorAttribute(const std::string& target, const at::Tensor& t, Frame& frame, torch::jit::Node* source,
                        bool shared);
  /// Tensors that FX holds as plain Python tensors (buffers, constants) go back to pending after
  /// the step that used them, so the next use gets its own get_attr node, as in FX.
  void restorePendingTensors(Frame& frame);
  /// The method FX records for `concrete OP proxy` (Tensor.__mul__ dispatches as `mul`), or "".
  static std::string concreteLeftMethod(const std::string& operatorTarget);
  /// Rewrites `operator.X(concrete tensor, proxy)` into Tensor's method on the concrete tensor.
  void applyConcreteLeftOperand(CallForm& form) const;
  void setOutputs(torch::jit::Node* node, Node* fxNode, size_t numOutputs, Frame& frame);
  /// Fills the node's module and source metadata; returns the user's expression behind the node
  /// (null without debug info).
  py::ExprPtr describeSource(torch::jit::Node* node, Frame& frame, NodeMeta& meta) const;
  void convertIf(torch::jit::Node* node, Frame& frame);
  void convertLoop(torch::jit::Node* node, Frame& frame);
  void convertUnpack(torch::jit::Node* node, Frame& frame);
  void convertConstruct(torch::jit::Node* node, Frame& frame);
  void convertDictConstruct(torch::jit::Node* node, Frame& frame);
  Node* createLeafCall(torch::jit::Node* node, Frame& frame, const ModuleRef& target, const std::string& method,
                       const std::vector<SymValue>& args);
  static void describeModule(const torch::jit::Module& module, NodeMeta& meta);
  [[noreturn]] void fail(torch::jit::Node* node, const Frame& frame, const std::string& what) const;
  bool convertContainerRead(torch::jit::Node* node, Frame& frame);
  bool convertListMutation(torch::jit::Node* node, Frame& frame);
  /// Gives every value of every active call that holds the same list (same listId) its new items.
  void shareListChange(const SymValue& list);
  uint64_t nextListId_ = 1;
  /// The frames of the calls being converted, innermost last (lists are shared across them).
  std::vector<Frame*> frames_;
  /// The call FX records for a forward whose body is `if torch.jit.is_scripting(): ... else:
  /// return CALL(...)` (scripting_branch.cpp): the archive holds the scripting branch only, and the
  /// other is read from the source. Null when the forward is not of that form.
  Node* scriptingElseCall(torch::jit::Node* node, Frame& frame, const ModuleRef& target,
                          const torch::jit::Function& fn, const std::vector<SymValue>& args);
  /// `d = OrderedDict()` and `d[key] = v` on dicts built in forward, evaluated as Python does.
  bool convertDictOperation(torch::jit::Node* node, Frame& frame);
  /// `a + b` and `a[i:j:k]` on lists built in forward, evaluated as Python does while FX traces.
  bool convertListOperation(torch::jit::Node* node, Frame& frame);
  std::string failureMessage(torch::jit::Node* node, const Frame& frame, const std::string& what) const;
  [[noreturn]] void failDataDependent(torch::jit::Node* node, const Frame& frame, const std::string& what) const;

  // Expression groups (expression_group.cpp): nodes of one Python expression folded into one FX node.
  size_t convertExpressionGroup(torch::jit::Node* first, Frame& frame);
  std::vector<torch::jit::Node*> expressionGroup(torch::jit::Node* first, const SourceLocation& loc) const;
  std::optional<CallForm> subscriptForm(const std::vector<torch::jit::Node*>& group, const py::Expr& expr,
                                               Frame& frame) const;
  std::optional<CallForm> builtinOperatorForm(const std::vector<torch::jit::Node*>& group, const std::string& header,
                                              Frame& frame) const;
  std::optional<CallForm> operatorGroupForm(const std::vector<torch::jit::Node*>& group, const py::Expr& expr,
                                                   Frame& frame) const;

  /// Reads `self.NAME` of the frame's module: constants and plain attributes, as Python holds them.
  AttributeValues attributeValues(const Frame& frame) const;

  SourceLookup source_;
  GraphBuilder builder_;
  /// Records which TorchScript value each node made since position `mark` stands for (their
  /// NodeMeta::eagerValue), from the outputs of the TorchScript nodes [first, last) just converted.
  void recordEagerValues(torch::jit::graph_node_list_iterator first, torch::jit::graph_node_list_iterator last,
                         size_t mark, const Frame& frame);
  /// The calls inlined and the blocks of ifs taken on the way to the block being converted.
  std::vector<EagerValueRef::Step> path_;
  std::unordered_set<const torch::jit::Node*> repacked_;  // tuples that are a multi-output call's value
  std::map<std::string, std::string> moduleTypes_;
  /// The path FX names a parameter or buffer by: the first of root.named_parameters() /
  /// named_buffers(), which skip a tensor already seen, so one held by two submodules (a mask
  /// shared between layers) is named by the first path everywhere. Keyed by (tensor, is parameter).
  std::map<std::pair<const c10::TensorImpl*, bool>, std::string> firstTensorPaths_;
};

}  // namespace tdfx::trace
