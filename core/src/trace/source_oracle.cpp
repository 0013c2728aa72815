// The compiled graph as the oracle of the source. The debug info's source text is model data: a
// hostile or stale archive can hold a source that says `torch.clamp(x, -50.0, 50.0)` over code
// that clamps at ±60, or `x.relu_()` over code that runs `x.relu()`. The printed call takes its
// literals and its name from the source, so each must be what the compiled node computes with;
// where it is not, the trace is refused, naming the node (issue 54, what to build, 3).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include "trace_context.h"

namespace tdfx::trace {

namespace jit = torch::jit;

namespace {

// The number a literal as written stands for (`2.5e3`, `0x10`, `1_000`, `-1`), or nullopt for
// anything else (a name, an expression, a complex literal).
std::optional<double> literalValue(const py::Expr& e) {
  if (e.kind == py::Expr::Kind::UnaryOp && e.text == "-" && e.items.size() == 1 && e.items[0]) {
    const auto inner = literalValue(*e.items[0]);
    return inner ? std::optional<double>(-*inner) : std::nullopt;
  }
  if (e.kind != py::Expr::Kind::Number) return std::nullopt;
  std::string text = e.text;
  text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
  if (text.empty() || text.back() == 'j' || text.back() == 'J') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  double value = 0;
  if (text.size() > 2 && text[0] == '0' && std::strchr("xXoObB", text[1])) {
    const int base = std::strchr("xX", text[1]) ? 16 : std::strchr("oO", text[1]) ? 8 : 2;
    value = static_cast<double>(std::strtoull(text.c_str() + 2, &end, base));
  } else {
    value = std::strtod(text.c_str(), &end);
  }
  if (errno || !end || *end != '\0') return std::nullopt;
  return value;
}

// The numbers the compiled node computes with: its constant inputs, and the constant items of
// the lists it takes (`x.view(4, -1)` passes a list).
std::vector<double> compiledNumbers(const jit::Node& node) {
  std::vector<double> out;
  const auto add = [&](const c10::IValue& v) {
    if (v.isInt()) out.push_back(static_cast<double>(v.toInt()));
    if (v.isDouble()) out.push_back(v.toDouble());
    if (v.isIntList())
      for (const int64_t i : v.toIntVector()) out.push_back(static_cast<double>(i));
    if (v.isDoubleList())
      for (const double d : v.toDoubleVector()) out.push_back(d);
  };
  for (const jit::Value* in : node.inputs()) {
    if (auto constant = jit::toIValue(in)) {
      add(*constant);
    } else if (in->node()->kind() == c10::prim::ListConstruct) {
      for (const jit::Value* item : in->node()->inputs())
        if (auto constant = jit::toIValue(item)) add(*constant);
    }
  }
  return out;
}

bool sameNumber(double written, double compiled) {
  if (written == compiled) return true;
  // A float TorchScript stored as written (`1e-3`) compares exactly; one it computed from an int
  // and back may differ in the last bit: within one part in 10^15.
  return std::fabs(written - compiled) <= 1e-15 * std::max(std::fabs(written), std::fabs(compiled));
}

// The name the written call is called by: `relu_` in `x.relu_()` and `torch.relu_(x)`.
std::string calleeName(const py::Expr& call) {
  const py::Expr& callee = *call.items[0];
  if (callee.kind == py::Expr::Kind::Attribute || callee.kind == py::Expr::Kind::Name) return callee.text;
  return "";
}

}  // namespace

std::optional<std::string> sourceDisagreement(const jit::Node& node, const py::Expr& written) {
  std::vector<py::ExprPtr> operands;
  switch (written.kind) {
    case py::Expr::Kind::Call: operands.assign(written.items.begin() + 1, written.items.end()); break;
    case py::Expr::Kind::BinOp:
    case py::Expr::Kind::Compare: operands = written.items; break;
    default: return std::nullopt;
  }
  const std::string op = node.kind().toUnqualString();
  if (written.kind == py::Expr::Kind::Call && node.kind().is_aten()) {
    // In place or not: `relu_` over `aten::relu` (or `relu` over `aten::relu_`) computes otherwise.
    const std::string name = calleeName(written);
    if (!name.empty() && (name == op + "_" || op == name + "_"))
      return "the archive's source calls `" + name + "` where its compiled code runs aten::" + op +
             ": the source is not the code the archive runs";
  }
  const std::vector<double> compiled = compiledNumbers(node);
  if (compiled.empty()) return std::nullopt;  // its numbers are not constants of this node: nothing to compare
  for (const py::ExprPtr& operand : operands) {
    if (!operand) continue;
    const auto value = literalValue(*operand);
    if (!value) continue;
    if (std::none_of(compiled.begin(), compiled.end(), [&](double c) { return sameNumber(*value, c); }))
      return "the archive's source writes " + operand->text + (operand->kind == py::Expr::Kind::UnaryOp ? operand->items[0]->text : "") +
             " where its compiled code (aten::" + op + ") holds no such constant: the source is not the code the archive runs";
  }
  return std::nullopt;
}

}  // namespace tdfx::trace
