// FX's Proxy semantics over the user's source (see source_evaluator.h). The values are a variant,
// as in torch/fx/proxy.py: a concrete argument (a Python value, or a node, FX's Proxy) or an
// Attribute of a Proxy not yet in the graph.
#include "source_evaluator.h"

#include <cmath>
#include <variant>
#include <vector>

#include "call_form.h"
#include "tdfx/ir/fx_tables.h"
#include "tdfx/ir/fx_target.h"
#include "tdfx/util/dtype.h"

namespace tdfx::trace {

namespace {

using K = py::Expr::Kind;

/// FX's Attribute proxy: `x.shape` is a node only once an operation uses it; a method call on it
/// (`x.view(-1)`) records the call and no getattr.
struct ProxyAttribute {
  Node* object;
  std::string name;
};
using Value = std::variant<Argument, ProxyAttribute>;

class Evaluation {
 public:
  Evaluation(GraphBuilder& builder, const SourceScope& scope) : builder_(builder), scope_(scope) {}

  std::optional<Value> eval(const py::Expr& e) {
    if (auto it = scope_.computed.find(&e); it != scope_.computed.end()) return Value(it->second);
    if (auto literal = literalArgument(e)) return Value(*literal);
    switch (e.kind) {
      case K::Name: {
        auto v = scope_.name(e.text);
        return v ? std::optional<Value>(*v) : std::nullopt;
      }
      case K::Attribute: {
        // `torch.float64` (or an alias, `torch.double`): Python's dtype object, which FX prints
        // as its canonical name.
        if (const auto name = py::dottedName(e); name && name->rfind("torch.", 0) == 0) {
          try {
            return Value(Argument(parseDtype(name->substr(6))));
          } catch (const std::exception&) {
            // not a dtype (torch.strided, torch.channels_last): not run here
          }
        }
        auto object = argument(*e.items[0]);
        if (!object || !object->isNode()) return std::nullopt;  // a module's or a Python value's: not run here
        return Value(ProxyAttribute{object->node(), e.text});
      }
      case K::Subscript: return subscript(e);
      case K::BinOp:
      case K::Compare: return binary(e);
      case K::UnaryOp: return unary(e);
      case K::Call: return call(e);
      case K::Tuple:
      case K::List: {
        std::vector<Argument> items;
        for (const auto& item : e.items) {
          auto v = argument(*item);
          if (!v) return std::nullopt;
          items.push_back(std::move(*v));
        }
        if (e.kind == K::Tuple) return Value(Argument(ArgumentTuple{std::move(items)}));
        return Value(Argument(ArgumentList{std::move(items)}));
      }
      case K::Slice: {
        std::vector<Argument> bounds;
        for (const auto& item : e.items) {
          if (!item) {
            bounds.emplace_back();
            continue;
          }
          auto v = argument(*item);
          if (!v) return std::nullopt;
          bounds.push_back(std::move(*v));
        }
        return Value(Argument(ArgumentSlice{std::move(bounds)}));
      }
      case K::Ellipsis: return Value(Argument(ArgumentEllipsis{}));
      default: return std::nullopt;  // comprehensions, lambdas, `a if c else b`, `and`/`or`
    }
  }

  /// The value as an argument: an Attribute becomes its getattr node here, at its first use.
  std::optional<Argument> argument(const py::Expr& e) {
    auto v = eval(e);
    if (!v) return std::nullopt;
    if (auto* a = std::get_if<Argument>(&*v)) return std::move(*a);
    const auto& attribute = std::get<ProxyAttribute>(*v);
    return Argument(describe(builder_.getItem(attribute.object, 0, attribute.name)));
  }

 private:
  Node* describe(Node* node) {
    NodeMeta& meta = node->meta();
    meta.modulePath = scope_.meta.modulePath;
    meta.moduleType = scope_.meta.moduleType;
    meta.sourceFile = scope_.meta.sourceFile;
    meta.sourceLine = scope_.meta.sourceLine;
    meta.sourceText = scope_.meta.sourceText;
    return node;
  }
  Node* record(OpKind op, const std::string& target, std::vector<Argument> args, Kwargs kwargs = {}) {
    return describe(builder_.graph().createNode(op, target, std::move(args), std::move(kwargs)));
  }

  std::optional<Value> subscript(const py::Expr& e) {
    auto object = argument(*e.items[0]);
    auto index = object ? argument(*e.items[1]) : std::nullopt;
    if (!index) return std::nullopt;
    if (object->isNode() || index->refersToNodes())
      return Value(Argument(record(OpKind::CallFunction, fx_target::kGetItem.qualifiedName, {*object, *index})));
    // Python indexes a concrete list or tuple while FX traces.
    const auto* items = object->items();
    const auto* i = std::get_if<int64_t>(&index->value);
    if (!items || !i) return std::nullopt;
    const int64_t n = static_cast<int64_t>(items->size());
    const int64_t at = *i < 0 ? *i + n : *i;
    if (at < 0 || at >= n) return std::nullopt;
    return Value((*items)[static_cast<size_t>(at)]);
  }

  std::optional<Value> binary(const py::Expr& e) {
    const std::string name = fx::operatorName(e.text, /*unary=*/false);
    if (name.empty()) return std::nullopt;  // `is`, `in`: Python's, on values it does not hold here
    auto left = argument(*e.items[0]);
    auto right = left ? argument(*e.items[1]) : std::nullopt;
    if (!right) return std::nullopt;
    if (left->refersToNodes() || right->refersToNodes())
      return Value(Argument(record(OpKind::CallFunction, fx_target::operatorTarget(name), {*left, *right})));
    return concreteArithmetic(name, *left, *right);
  }

  // Python's arithmetic on two numbers (`2 * 3` inside a dead statement); others are not run here.
  static std::optional<Value> concreteArithmetic(const std::string& name, const Argument& a, const Argument& b) {
    const auto* ia = std::get_if<int64_t>(&a.value);
    const auto* ib = std::get_if<int64_t>(&b.value);
    if (ia && ib) {
      if (name == "add") return Value(Argument(*ia + *ib));
      if (name == "sub") return Value(Argument(*ia - *ib));
      if (name == "mul") return Value(Argument(*ia * *ib));
      return std::nullopt;
    }
    const auto number = [](const Argument& x) -> std::optional<double> {
      if (const auto* i = std::get_if<int64_t>(&x.value)) return static_cast<double>(*i);
      if (const auto* d = std::get_if<double>(&x.value)) return *d;
      return std::nullopt;
    };
    const auto da = number(a), db = number(b);
    if (!da || !db) return std::nullopt;
    if (name == "add") return Value(Argument(*da + *db));
    if (name == "sub") return Value(Argument(*da - *db));
    if (name == "mul") return Value(Argument(*da * *db));
    if (name == "truediv" && *db != 0.0) return Value(Argument(*da / *db));
    return std::nullopt;
  }

  std::optional<Value> unary(const py::Expr& e) {
    // `not x` asks for the Proxy's bool, which FX refuses (and of a value it is Python's).
    if (e.text == "not") return std::nullopt;
    const std::string name = fx::operatorName(e.text, /*unary=*/true);
    if (name.empty()) return std::nullopt;
    auto operand = argument(*e.items[0]);
    if (!operand || !operand->isNode()) return std::nullopt;
    return Value(Argument(record(OpKind::CallFunction, fx_target::operatorTarget(name), {*operand})));
  }

  std::optional<Value> call(const py::Expr& e) {
    const py::Expr& callee = *e.items[0];
    std::vector<Argument> args;
    Kwargs kwargs;
    const auto arguments = [&]() {
      for (size_t k = 1; k < e.items.size(); ++k) {
        if (e.items[k]->kind == K::Starred) return false;
        auto v = argument(*e.items[k]);
        if (!v) return false;
        if (k <= e.positionalCount()) args.push_back(std::move(*v));
        else kwargs.emplace_back(e.keywords[k - 1 - e.positionalCount()], std::move(*v));
      }
      return true;
    };
    if (callee.kind == K::Attribute) {
      // A method of a Proxy: Attribute.__call__ records call_method, no getattr.
      if (const auto object = eval(*callee.items[0])) {
        Node* receiver = nullptr;
        if (const auto* a = std::get_if<Argument>(&*object); a && a->isNode()) receiver = a->node();
        else if (const auto* attribute = std::get_if<ProxyAttribute>(&*object))
          receiver = describe(builder_.getItem(attribute->object, 0, attribute->name));
        if (!receiver) return std::nullopt;
        const std::string& method = callee.text;
        // A change in place has a side effect: a statement holding one is never dead code, so its
        // absence from the compiled graph is not TorchScript's elimination.
        const bool inPlace = method.size() > 1 && method.back() == '_' && method.compare(0, 2, "__") != 0;
        if (inPlace || !fx::isTensorMethod(method)) return std::nullopt;
        args.push_back(Argument(receiver));
        if (!arguments()) return std::nullopt;
        return Value(Argument(record(OpKind::CallMethod, method, std::move(args), std::move(kwargs))));
      }
    }
    // A torch function FX records as written (a C builtin); one FX runs or hands on with fixed
    // arguments is beyond this evaluator.
    const auto dotted = py::dottedName(callee);
    if (!dotted || dotted->find('.') == std::string::npos) return std::nullopt;
    const auto ns = writtenNamespace(dotted->substr(0, dotted->rfind('.')));
    const auto* callable = ns ? fx::findCallable(*ns + dotted->substr(dotted->rfind('.'))) : nullptr;
    if (!callable || callable->kind != fx::CallKind::AsWritten) return std::nullopt;
    const std::string function = callable->target;
    if (function.size() > 1 && function.back() == '_') return std::nullopt;  // in place
    if (!arguments()) return std::nullopt;
    bool proxy = false;
    for (const Argument& a : args) proxy = proxy || a.refersToNodes();
    for (const auto& [k, a] : kwargs) proxy = proxy || a.refersToNodes();
    if (!proxy) return std::nullopt;  // Python computes it; its value is not known here
    return Value(Argument(record(OpKind::CallFunction, function, std::move(args), std::move(kwargs))));
  }

  GraphBuilder& builder_;
  const SourceScope& scope_;
};

}  // namespace

std::optional<Argument> evaluateSource(GraphBuilder& builder, const py::Expr& e, const SourceScope& scope) {
  Evaluation evaluation(builder, scope);
  auto v = evaluation.eval(e);
  if (!v) return std::nullopt;
  if (auto* a = std::get_if<Argument>(&*v)) return std::move(*a);
  return std::nullopt;  // an Attribute nothing uses: FX makes no node for it
}

const py::Expr* callStartingAt(const py::Expr& root, size_t offset) {
  for (const auto& item : root.items)
    if (item)
      if (const py::Expr* inner = callStartingAt(*item, offset)) return inner;
  return root.kind == K::Call && root.begin == offset ? &root : nullptr;
}

}  // namespace tdfx::trace
