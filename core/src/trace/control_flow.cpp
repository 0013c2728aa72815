// The parts of ModuleTracer that flatten TorchScript control flow: an if takes the branch its
// concrete condition selects (or becomes an assert), a loop is unrolled within budgets.
#include "trace_context.h"
#include "tdfx/ir/fx_target.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>


namespace tdfx::trace {

namespace jit = torch::jit;

namespace {

// Unrolling budgets. Past either, the loop's submodule is kept whole (one call_module node, with the
// reason in its metadata): a graph of more nodes is unreadable, and a loop of more iterations that
// adds no nodes (constant arithmetic, `while True`) would otherwise keep the tracer busy for ever.
constexpr int64_t kMaxUnrolledIterations = 100000;
constexpr size_t kMaxUnrolledNodes = 5000;

bool blockRaises(jit::Block* b) {
  for (jit::Node* n : b->nodes())
    if (n->kind() == c10::prim::RaiseException) return true;
  return false;
}

bool blockIsEmpty(jit::Block* b) { return b->nodes().begin() == b->nodes().end(); }

// The text of a string value when it is known: a constant, a string the tracer computed (an
// f-string, `known`), or a sum of those (`"AssertionError: " + msg` in TorchScript's assert).
std::optional<std::string> stringValue(const jit::Value* v,
                                       const std::function<std::optional<std::string>(const jit::Value*)>& known) {
  if (auto c = jit::toIValue(v); c && c->isString()) return c->toStringRef();
  if (auto k = known(v)) return k;
  const jit::Node* n = v->node();
  if (n->kind() == c10::aten::add && n->inputs().size() == 2) {
    auto a = stringValue(n->input(0), known), b = stringValue(n->input(1), known);
    if (a && b) return *a + *b;
  }
  return std::nullopt;
}

// The message of the first exception raised in `b`, when it is known while tracing.
std::string raisedMessage(jit::Block* b, const std::function<std::optional<std::string>(const jit::Value*)>& known) {
  for (jit::Node* n : b->nodes()) {
    if (n->kind() != c10::prim::RaiseException || n->inputs().empty()) continue;
    if (auto v = stringValue(n->input(0), known)) {
      // `assert cond, msg` compiles to a raise of "AssertionError: msg"; torch._assert shows msg.
      const std::string prefix = "AssertionError: ";
      const std::string& msg = *v;
      return msg.rfind(prefix, 0) == 0 ? msg.substr(prefix.size()) : msg;
    }
  }
  return "assertion failed";
}

}  // namespace

const SymValue& Frame::get(const jit::Value* v) const {
  auto it = env.find(v);
  if (it == env.end()) throw TraceError("internal error: TorchScript value %" + v->debugName() + " used before definition");
  return it->second;
}

void registerControlFlowConverters(ConverterTable& t) {
  t.add(c10::prim::If, &always<&convertIf>);
  t.add(c10::prim::Loop, &always<&convertLoop>);
  t.add(c10::prim::RaiseException, &refuseRaise);
}

bool refuseRaise(TraceContext& cx, jit::Node* node, Frame& frame) {
  // An if whose branch raises is an assert (convertIf); a raise reached unconditionally is not.
  fail(cx, node, frame, "this code path always raises an exception for the module's configuration");
}

namespace {
// Whether a condition is computed from torch.is_grad_enabled() (through not, and, or).
bool readsGradMode(const jit::Value* condition, int depth = 0) {
  static const c10::Symbol kIsGradEnabled = c10::Symbol::fromQualString("aten::is_grad_enabled");
  const jit::Node* made = condition->node();
  if (made->kind() == kIsGradEnabled) return true;
  const std::string name = made->kind().toUnqualString();
  // `a and b` compiles to a prim::If whose outputs carry the operands.
  if (depth > 8 || (name != "__not__" && name != "__and__" && name != "__or__" && made->kind() != c10::prim::If))
    return false;
  if (made->kind() == c10::prim::If) {
    for (const jit::Block* block : made->blocks())
      for (const jit::Value* out : block->outputs())
        if (readsGradMode(out, depth + 1)) return true;
  }
  for (const jit::Value* in : made->inputs())
    if (readsGradMode(in, depth + 1)) return true;
  return false;
}
}  // namespace

void convertIf(TraceContext& cx, jit::Node* node, Frame& frame) {
  const SymValue& cond = frame.get(node->input(0));
  if (cond.constant && cond.constant->isBool()) {
    const size_t branch = cond.constant->toBool() ? 0 : 1;
    jit::Block* taken = node->blocks()[branch];
    {
      const PathStep step(cx.path, node, branch);
      convertBlock(cx, taken, frame);
    }
    for (size_t i = 0; i < node->outputs().size(); ++i) frame.env[node->outputs()[i]] = frame.get(taken->outputs()[i]);
    return;
  }
  jit::Block* thenBlock = node->blocks()[0];
  jit::Block* elseBlock = node->blocks()[1];
  const bool raisesWhenTrue = blockRaises(thenBlock) && blockIsEmpty(elseBlock);
  const bool raisesWhenFalse = blockRaises(elseBlock) && blockIsEmpty(thenBlock);
  if (node->outputs().empty() && (raisesWhenTrue || raisesWhenFalse)) {
    // `if bad: raise ...` on a runtime value: an assertion. It stays in the graph as
    // torch._assert(ok, message), checked on every run.
    Argument ok = cond.arg;
    if (raisesWhenTrue) {
      Node* negated = fx_target::create(cx.builder.graph(), fx_target::kNot, {cond.arg});
      describeSource(cx, node, frame, negated->meta());
      ok = Argument(negated);
    }
    const auto known = [&](const jit::Value* v) -> std::optional<std::string> {
      auto it = frame.env.find(v);
      if (it == frame.env.end() || !it->second.constant || !it->second.constant->isString()) return std::nullopt;
      return it->second.constant->toStringRef();
    };
    const std::string message = raisedMessage(raisesWhenTrue ? thenBlock : elseBlock, known);
    Node* check = fx_target::create(cx.builder.graph(), fx_target::kAssert, {ok, Argument(message)});
    describeSource(cx, node, frame, check->meta());
    return;
  }
  failDataDependent(cx, node, frame,
                    readsGradMode(node->input(0))
                        ? "the condition of this if depends on torch.is_grad_enabled(), the grad mode the model "
                          "runs in, which is not known while tracing (torch.fx takes the branch of the mode it "
                          "traces in; tdfx refuses rather than fix one)"
                        : "the condition of this if depends on tensor data");
}

void convertLoop(TraceContext& cx, jit::Node* node, Frame& frame) {
  // prim::Loop(max_trip_count, start_condition, carried...) with body(i, carried...) -> (condition, carried...):
  // unrolled when the trip count and every condition are known while tracing.
  const SymValue& trip = frame.get(node->input(0));
  const SymValue& start = frame.get(node->input(1));
  if (!trip.constant || !trip.constant->isInt() || !start.constant || !start.constant->isBool())
    failDataDependent(cx, node, frame, "the number of iterations of this loop depends on tensor data");
  std::vector<SymValue> carried;
  for (size_t i = 2; i < node->inputs().size(); ++i) carried.push_back(frame.get(node->input(i)));
  jit::Block* body = node->blocks()[0];
  bool keepGoing = start.constant->toBool();
  const size_t nodesBefore = cx.builder.size();
  const int64_t trips = trip.constant->toInt();
  for (int64_t i = 0; keepGoing && i < trips; ++i) {
    if (i >= kMaxUnrolledIterations)
      failDataDependent(cx, node, frame, "this loop runs more than " + std::to_string(kMaxUnrolledIterations) +
                                         " iterations, too many to unroll");
    if (cx.builder.size() - nodesBefore > kMaxUnrolledNodes)
      failDataDependent(cx, node, frame, "unrolling this loop adds more than " + std::to_string(kMaxUnrolledNodes) +
                                         " nodes (" + std::to_string(i) + " of " +
                                         (trips == std::numeric_limits<int64_t>::max() ? std::string("unbounded")
                                                                                       : std::to_string(trips)) +
                                         " iterations)");
    frame.env[body->inputs()[0]] = SymValue::ofConstant(c10::IValue(i));
    for (size_t k = 0; k < carried.size(); ++k) frame.env[body->inputs()[k + 1]] = carried[k];
    {
      // On the path of the values made in this iteration: verify's recording unrolls the loop the
      // same way and reads iteration i's values (runtime/eager_values.cpp).
      const PathStep step(cx.path, node, static_cast<size_t>(i));
      convertBlock(cx, body, frame);
    }
    const SymValue& cond = frame.get(body->outputs()[0]);
    if (!cond.constant || !cond.constant->isBool())
      failDataDependent(cx, node, frame, "whether this loop continues depends on tensor data");
    keepGoing = cond.constant->toBool();
    for (size_t k = 0; k < carried.size(); ++k) carried[k] = frame.get(body->outputs()[k + 1]);
  }
  for (size_t k = 0; k < carried.size(); ++k) frame.env[node->outputs()[k]] = carried[k];
}

}  // namespace tdfx::trace
