#pragma once
// The state of one trace, and the rules that convert TorchScript nodes into FX nodes: free
// functions over a TraceContext, one group per file (after torch.fx's proxy.py, where the values
// carry the behaviour and the tracer stays small; and torch's JIT, one pass per file).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <torch/csrc/jit/frontend/tree.h>

#include "module_tracer.h"

namespace tdfx::trace {

/// Where each name is assigned in a function's source, at any depth: (statement start, end).
using Assignments = std::map<std::string, std::vector<std::pair<size_t, size_t>>>;

/// A statement `NAME = ...` at a function body's own level that TorchScript removed as dead code
/// (dead_statements.cpp); `begin`, `end`: its offsets in the function's source. A read
/// `NAME = CONTAINER[INDEX]` (or `CONTAINER.ATTRIBUTE[INDEX]`) is found by its container; any
/// other expression (`rhs`) is run by the source evaluator over the names it reads.
struct DeadRead {
  size_t begin = 0, end = 0;
  std::string container;
  int64_t index = 0;
  std::string attribute;  ///< "shape" for `x.shape[1]`; empty for `x[1]`
  /// `i = top.indices`: a field read by name, without an index (only a tuple TorchScript keeps as
  /// its call's outputs is looked at: of a Proxy, FX's Attribute makes no node where it stands).
  std::string field;
  /// The name the read is assigned to (`w` of `w = top[0]`); empty when not one name.
  std::string boundName;
  /// The name the container was last assigned from (`v = h`: "h"), or the container's own.
  std::string containerAlias;
  /// The text [begin, end) of the last statement before it that assigns that name
  /// (begin == end: none found).
  std::pair<size_t, size_t> containerDefinition{0, 0};
  /// The statements, at any depth, that assign the container's name or its alias: (name, text).
  std::vector<std::pair<std::string, std::pair<size_t, size_t>>> assignedAt;
  /// Not a read: the assigned expression, its offset in the source, and the name it is assigned to.
  std::string rhsText;  ///< from the expression's start to the next statement
  std::string target;
  /// An expression alone as a statement (`x.sum()`): run like an assignment, its value bound to no name.
  bool expressionStatement = false;
  /// The names assigned from another (`v = h`: v -> h) where the statement stands.
  std::map<std::string, std::string> aliases;
  std::shared_ptr<const Assignments> assignments;
};

/// An assignment, at any depth of a function's body (`h = h + r(z)` in a loop TorchScript
/// unrolled), whose value TorchScript removed as dead while a call inside it stays (a call is kept
/// for its possible side effects, its result unused): FX records the rest too.
struct PartlyDeadStatement {
  size_t begin = 0, end = 0, rhsBegin = 0;
  std::string target;
  py::ExprPtr rhs;
  std::map<const py::Expr*, Argument> computed;  ///< the kept calls' values
};

/// A function's source parsed once per trace by TorchScript's parser (dead_statements.cpp's
/// statementsOf), with what the dead-statement rules read of it.
struct AssignmentStatement {
  size_t begin = 0, end = 0, rhsBegin = 0;
  std::string target;
};
struct FunctionStatements {
  std::string source;
  /// The parsed `def` (a torch::jit::Def); null when the source is empty or not parsed.
  torch::jit::TreeRef def;
  /// Single-name assignments `NAME = EXPR` at any depth, outer first.
  std::vector<AssignmentStatement> assignments;
  /// Where each name is assigned or augmented (`NAME += ...`), at any depth.
  std::shared_ptr<const Assignments> byName = std::make_shared<const Assignments>();
  std::unordered_set<std::string> names;  ///< every name assigned
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
  /// The function whose graph this call converts (null for graphs without one).
  const torch::jit::Function* function = nullptr;
  /// Names a recorded dead statement assigned: name -> (the statement's offset, its value).
  /// nullopt: the statement could not be run, and the name's value there is not known.
  std::map<std::string, std::pair<size_t, std::optional<Argument>>> deadBound;
  /// Statements with a kept call whose value TorchScript removed, to record once the code after
  /// them is reached.
  std::vector<PartlyDeadStatement> partlyDead;
  /// Where the last node of this call's own level with a user range was made (offset in the
  /// function's source): a call TorchScript gave no range (a staticmethod's) is looked for after it.
  size_t lastMadeAt = 0;
};

/// What one trace knows besides the values of the call being converted: where the user's code is,
/// the graph being built, and what was learnt on the way.
struct TraceContext {
  TraceContext(Graph& graph, const SourceIndex* sources) : source(sources), builder(graph) {}

  SourceLookup source;
  GraphBuilder builder;
  /// The calls inlined and the blocks of ifs taken on the way to the block being converted.
  std::vector<EagerValueRef::Step> path;
  /// The frames of the calls being converted, innermost last (lists are shared across them).
  std::vector<Frame*> frames;
  uint64_t nextListId = 1;
  std::unordered_set<const torch::jit::Node*> repacked;  // tuples that are a multi-output call's value
  /// Type of every module whose code was inlined or kept as a leaf, by path.
  std::map<std::string, std::string> moduleTypes;
  /// The path FX names a parameter or buffer by: the first of root.named_parameters() /
  /// named_buffers(), which skip a tensor already seen, so one held by two submodules (a mask
  /// shared between layers) is named by the first path everywhere. Keyed by (tensor, is parameter).
  std::map<std::pair<const c10::TensorImpl*, bool>, std::string> firstTensorPaths;
  /// The dead statements of each function, found once per function.
  std::unordered_map<const torch::jit::Function*, std::vector<DeadRead>> deadReadsOf;
  std::unordered_map<const torch::jit::Function*, FunctionStatements> statementsOf;
  /// Each module class's attribute slots by name, made at its first read: LibTorch's
  /// findAttributeSlot compares names one by one, and a ParameterList of 5,000 read in a loop
  /// made tracing quadratic.
  std::unordered_map<const c10::ClassType*, std::unordered_map<std::string, size_t>> attributeSlots;
  /// Functions whose is_scripting() branch is already noted, and the notes (fxDifferences()).
  std::unordered_set<const torch::jit::Function*> scriptingNoted;
  std::vector<std::string> fxDifferences;
};

/// Converts one TorchScript node; false when the node is not this converter's case (the next one
/// registered for its symbol is tried, and last convertOperator, the operator tables' call).
using Converter = bool (*)(TraceContext&, torch::jit::Node*, Frame&);
/// The converters by TorchScript symbol, in the order they are tried. Each group registers its
/// own, in the file that converts it.
class ConverterTable {
 public:
  void add(c10::Symbol symbol, Converter converter) { bySymbol_[symbol].push_back(converter); }
  const std::vector<Converter>* find(c10::Symbol symbol) const;

 private:
  std::unordered_map<c10::Symbol, std::vector<Converter>> bySymbol_;
};
const ConverterTable& converters();
/// A converter that always handles its node, from one that returns nothing.
template <void (*Convert)(TraceContext&, torch::jit::Node*, Frame&)>
bool always(TraceContext& cx, torch::jit::Node* node, Frame& frame) {
  Convert(cx, node, frame);
  return true;
}

// ---- module_tracer.cpp: inlining, one node at a time, and values Python computes while FX traces
// (constants, casts, isinstance, `is None`, warnings, grad-mode context managers).
void registerValueConverters(ConverterTable& table);
/// `fn`: the function whose graph `g` is (its source is read for dead statements; may be null).
std::vector<SymValue> inlineGraph(TraceContext& cx, torch::jit::Graph& g, std::vector<SymValue> inputs,
                                  const ModuleRef& scope, int depth, const torch::jit::Function* fn = nullptr);
void convertBlock(TraceContext& cx, torch::jit::Block* block, Frame& frame);
void convertNode(TraceContext& cx, torch::jit::Node* node, Frame& frame);
void convertGetAttr(TraceContext& cx, torch::jit::Node* node, Frame& frame);
/// The slot of attribute `name` of a module class, or nullopt.
std::optional<size_t> attributeSlot(TraceContext& cx, const c10::ClassType& type, const std::string& name);
void convertOperator(TraceContext& cx, torch::jit::Node* node, Frame& frame);
bool convertConstant(TraceContext& cx, torch::jit::Node* node, Frame& frame);
bool convertGradMode(TraceContext& cx, torch::jit::Node* node, Frame& frame);
bool convertPassThrough(TraceContext& cx, torch::jit::Node* node, Frame& frame);
bool convertUninitialized(TraceContext& cx, torch::jit::Node* node, Frame& frame);
bool convertIsInstance(TraceContext& cx, torch::jit::Node* node, Frame& frame);
[[noreturn]] bool refuseSetAttr(TraceContext& cx, torch::jit::Node* node, Frame& frame);
bool convertWarn(TraceContext& cx, torch::jit::Node* node, Frame& frame);
bool convertIsNone(TraceContext& cx, torch::jit::Node* node, Frame& frame);
/// The value Python holds for `s` while FX traces, when it is known: a constant, or a list whose
/// items all are (`[torch.arange(3), torch.arange(4)]`, a list of tensors FX computes with).
std::optional<c10::IValue> knownValue(const SymValue& s);
bool foldable(torch::jit::Node* node, const Frame& frame);
bool tryFold(TraceContext& cx, torch::jit::Node* node, Frame& frame);
/// An f-string's aten::format evaluated as FX's trace does (a Proxy reads `Proxy(name)`); false
/// when its parts are not all known.
bool formatAtTraceTime(torch::jit::Node* node, Frame& frame);
void setOutputs(TraceContext& cx, torch::jit::Node* node, Node* fxNode, size_t numOutputs, Frame& frame);
/// Fills the node's module and source metadata; returns the user's expression behind the node
/// (null without debug info).
py::ExprPtr describeSource(TraceContext& cx, torch::jit::Node* node, Frame& frame, NodeMeta& meta);
/// Records which TorchScript value each node made since position `mark` stands for (their
/// NodeMeta::eagerValue), from the outputs of the TorchScript nodes [first, last) just converted.
void recordEagerValues(TraceContext& cx, torch::jit::graph_node_list_iterator first,
                       torch::jit::graph_node_list_iterator last, size_t mark, const Frame& frame);
/// Reads `self.NAME` of the frame's module: constants and plain attributes, as Python holds them.
AttributeValues attributeValues(const Frame& frame);
std::string failureMessage(TraceContext& cx, torch::jit::Node* node, const Frame& frame, const std::string& what);
[[noreturn]] void fail(TraceContext& cx, torch::jit::Node* node, const Frame& frame, const std::string& what);
[[noreturn]] void failDataDependent(TraceContext& cx, torch::jit::Node* node, const Frame& frame,
                                    const std::string& what);

// ---- source_oracle.cpp: the compiled graph as the oracle of the source.
/// Why the user's expression `written` cannot be what `node` computes (a literal the compiled node
/// holds no constant for, a call in place where the code is not, or the reverse); nullopt when
/// they agree, or when the node holds nothing to compare.
std::optional<std::string> sourceDisagreement(const torch::jit::Node& node, const py::Expr& written);

// ---- calls.cpp: module attributes, method and function calls.
void registerCallConverters(ConverterTable& table);
void convertCallMethod(TraceContext& cx, torch::jit::Node* node, Frame& frame);
void convertCallFunction(TraceContext& cx, torch::jit::Node* node, Frame& frame);
bool convertToList(TraceContext& cx, torch::jit::Node* node, Frame& frame);
Node* createLeafCall(TraceContext& cx, torch::jit::Node* node, Frame& frame, const ModuleRef& target,
                     const std::string& method, const std::vector<SymValue>& args);
void describeModule(const torch::jit::Module& module, NodeMeta& meta);

// ---- scripting_branch.cpp
/// The call FX records for a forward whose body is `if torch.jit.is_scripting(): ... else:
/// return CALL(...)`: the archive holds the scripting branch only, and the other is read from the
/// source. Null when the forward is not of that form.
Node* scriptingElseCall(TraceContext& cx, torch::jit::Node* node, Frame& frame, const ModuleRef& target,
                        const torch::jit::Function& fn, const std::vector<SymValue>& args);
/// Notes the TorchScript side of an is_scripting() branch in `fn`, once per function.
void noteScriptingBranch(TraceContext& cx, const torch::jit::Function& fn);

// ---- control_flow.cpp: if, loops, raise.
void registerControlFlowConverters(ConverterTable& table);
void convertIf(TraceContext& cx, torch::jit::Node* node, Frame& frame);
void convertLoop(TraceContext& cx, torch::jit::Node* node, Frame& frame);
[[noreturn]] bool refuseRaise(TraceContext& cx, torch::jit::Node* node, Frame& frame);

// ---- containers.cpp: lists, tuples and dicts.
void registerContainerConverters(ConverterTable& table);
void convertUnpack(TraceContext& cx, torch::jit::Node* node, Frame& frame);
void convertConstruct(TraceContext& cx, torch::jit::Node* node, Frame& frame);
void convertDictConstruct(TraceContext& cx, torch::jit::Node* node, Frame& frame);
bool convertContainerRead(TraceContext& cx, torch::jit::Node* node, Frame& frame);
bool convertListMutation(TraceContext& cx, torch::jit::Node* node, Frame& frame);
/// `d = OrderedDict()` and `d[key] = v` on dicts built in forward, evaluated as Python does.
bool convertDictOperation(TraceContext& cx, torch::jit::Node* node, Frame& frame);
/// `a + b` and `a[i:j:k]` on lists built in forward, evaluated as Python does while FX traces.
bool convertListOperation(TraceContext& cx, torch::jit::Node* node, Frame& frame);
/// Whether `node` is a Python list or tuple operation (building, changing, indexing, unpacking,
/// a loop carrying values): Python runs it while FX traces, so the fields its lists hold stay
/// pending, to be made where a recorded operation first uses them.
bool isPythonContainerOperation(torch::jit::Node* node, const Frame& frame);
/// Gives every value of every active call that holds the same list (same listId) its new items.
void shareListChange(TraceContext& cx, const SymValue& list);

// ---- pending_values.cpp: values FX holds in Python until a recorded operation uses them.
/// A get_attr node for `target` ("" for a new `_tensor_constantN`). A parameter is a Proxy, one
/// node per target (`shared`); a buffer or plain tensor is a Python tensor that FX puts into the
/// graph anew at each recorded use (`b`, `b_1`).
Node* tensorAttribute(TraceContext& cx, const std::string& target, const at::Tensor& t, Frame& frame,
                      torch::jit::Node* source, bool shared);
/// Tensors that FX holds as plain Python tensors (buffers, constants) go back to pending after
/// the step that used them, so the next use gets its own get_attr node, as in FX.
void restorePendingTensors(TraceContext& cx, Frame& frame);
/// The method FX records for `concrete OP proxy` (Tensor.__mul__ dispatches as `mul`), or "".
std::string concreteLeftMethod(const std::string& operatorTarget);
/// Rewrites `operator.X(concrete tensor, proxy)` into Tensor's method on the concrete tensor.
void applyConcreteLeftOperand(TraceContext& cx, CallForm& form);
/// Holds an attribute read of a Proxy (`form` is builtins.getattr) as a pending field of
/// `output`, made at its first use as FX makes it; false, doing nothing, for any other form.
bool deferAttributeRead(TraceContext& cx, const CallForm& form, const torch::jit::Value* output, const NodeMeta& meta,
                        Frame& frame);
/// Puts the field `value` stands for into the graph, if it is one not yet there (its getattr or
/// getitem node, made as FX's Proxy makes it at first use); the node, or null for another value.
Node* materializePendingField(TraceContext& cx, const torch::jit::Value* value, Frame& frame);
/// Puts the pending tensors among `node`'s inputs into the graph (get_attr nodes), unless the
/// node is computed while tracing.
void materializeInputs(TraceContext& cx, torch::jit::Node* node, Frame& frame);
/// Puts the pending fields held in a list or tuple into the graph (their getattr nodes); true
/// when there were any.
bool materializeParts(TraceContext& cx, ValueParts& parts, Argument& arg);

// ---- dead_statements.cpp
/// The dead statements of `fn` (whose graph is `g`), found once per function.
const std::vector<DeadRead>& deadReads(TraceContext& cx, const torch::jit::Function& fn, torch::jit::Graph& g);
/// Records the dead statements that stand before `node` in the source (all left: null).
void recordDeadReadsBefore(TraceContext& cx, torch::jit::Node* node, Frame& frame);
/// Notes the statements whose value TorchScript removed while a call in them stays: a node among
/// [first, last) whose one result nothing reads, inside an assignment's expression.
void notePartlyDeadStatements(TraceContext& cx, torch::jit::graph_node_list_iterator first,
                              torch::jit::graph_node_list_iterator last, Frame& frame);

// ---- expression_group.cpp: nodes of one Python expression folded into one FX node.
size_t convertExpressionGroup(TraceContext& cx, torch::jit::Node* first, Frame& frame);
std::vector<torch::jit::Node*> expressionGroup(TraceContext& cx, torch::jit::Node* first, const SourceLocation& loc);
std::optional<CallForm> subscriptForm(const std::vector<torch::jit::Node*>& group,
                                      const py::Expr& expr, Frame& frame);
std::optional<CallForm> builtinOperatorForm(const std::vector<torch::jit::Node*>& group,
                                            const std::string& header, Frame& frame);
std::optional<CallForm> operatorGroupForm(const std::vector<torch::jit::Node*>& group,
                                          const py::Expr& expr, Frame& frame);

}  // namespace tdfx::trace
