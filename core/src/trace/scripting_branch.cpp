// The part of ModuleTracer for a forward that branches on `torch.jit.is_scripting()`. TorchScript
// compiles the branch it takes (is_scripting() is True while it compiles) and drops the other;
// torch.fx runs the Python, where is_scripting() is False. When the other branch is one
// `return CALL(...)` of a torch function on the forward's parameters and the module's attributes,
// its text is still in the archive's debug info, and that call is what FX records. timm's Linear:
//
//     def forward(self, input):
//         if torch.jit.is_scripting():
//             bias = self.bias.to(dtype=input.dtype) if self.bias is not None else None
//             return F.linear(input, self.weight.to(dtype=input.dtype), bias=bias)
//         else:
//             return F.linear(input, self.weight, self.bias)
#include <algorithm>
#include <sstream>

#include "tdfx/ir/fx_tables.h"
#include "trace_context.h"

namespace tdfx::trace {

namespace jit = torch::jit;

namespace {

size_t indentOf(const std::string& line) { return line.find_first_not_of(" \t"); }

std::string stripped(const std::string& line) {
  const size_t a = line.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  std::string s = line.substr(a);
  const size_t hash = s.find('#');
  if (hash != std::string::npos && s.find_first_of("'\"") > hash) s = s.substr(0, hash);
  s.erase(s.find_last_not_of(" \t\r") + 1);
  return s;
}

// The lines of `source` that hold code (not blank, not only a comment).
std::vector<std::string> codeLines(const std::string& source) {
  std::vector<std::string> lines;
  std::istringstream in(source);
  for (std::string line; std::getline(in, line);)
    if (!stripped(line).empty()) lines.push_back(line);
  return lines;
}

}  // namespace

std::optional<std::string> scriptingElseReturn(const std::string& source) {
  const std::vector<std::string> lines = codeLines(source);
  // The header (`def forward(self, x):`, perhaps over several lines) ends at the first line that
  // ends with ':'; the `if` must be the body's first statement, so nothing before it ran.
  size_t i = 0;
  while (i < lines.size() && stripped(lines[i]).back() != ':') ++i;
  if (++i >= lines.size()) return std::nullopt;
  const std::string test = stripped(lines[i]);
  if (test != "if torch.jit.is_scripting():" && test != "if is_scripting():") return std::nullopt;
  const size_t indent = indentOf(lines[i]);
  size_t j = i + 1;
  while (j < lines.size() && indentOf(lines[j]) > indent) ++j;
  if (j >= lines.size() || indentOf(lines[j]) != indent || stripped(lines[j]) != "else:") return std::nullopt;
  // The else branch: one `return EXPR` line, and nothing after it in the function.
  if (j + 2 != lines.size() || indentOf(lines[j + 1]) <= indent) return std::nullopt;
  const std::string ret = stripped(lines[j + 1]);
  if (ret.rfind("return ", 0) != 0) return std::nullopt;
  return ret.substr(7);
}

std::optional<ScriptingBranch> scriptingBranch(const std::string& source) {
  const std::vector<std::string> lines = codeLines(source);
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::string test = stripped(lines[i]);
    const bool positive = test == "if torch.jit.is_scripting():" || test == "if is_scripting():";
    const bool negative = test == "if not torch.jit.is_scripting():" || test == "if not is_scripting():";
    if (!positive && !negative) continue;
    const size_t indent = indentOf(lines[i]);
    size_t j = i + 1;
    while (j < lines.size() && indentOf(lines[j]) > indent) ++j;
    const bool hasElse = j < lines.size() && indentOf(lines[j]) == indent && stripped(lines[j]) == "else:";
    ScriptingBranch branch{test, ""};
    if (negative) {
      branch.pythonSide = stripped(lines[i + 1]);
    } else if (hasElse && j + 1 < lines.size() && indentOf(lines[j + 1]) > indent) {
      branch.pythonSide = "else: " + stripped(lines[j + 1]);
    } else {
      branch.pythonSide = "the block is skipped";
    }
    return branch;
  }
  return std::nullopt;
}

Node* scriptingElseCall(TraceContext& cx, jit::Node* node, Frame& frame, const ModuleRef& target,
                                      const jit::Function& fn, const std::vector<SymValue>& args) {
  const std::string source = cx.source.functionSource(fn);
  if (source.find("is_scripting()") == std::string::npos) return nullptr;
  const auto text = scriptingElseReturn(source);
  const auto header = py::parseFunctionHeader(source, fn.name());
  if (!text || !header || header->parameters.size() != args.size() + 1) return nullptr;
  const py::ExprPtr call = py::parseExpressionPrefix(*text);
  if (!call || call->kind != py::Expr::Kind::Call || call->end != text->size()) return nullptr;
  const auto callee = py::dottedName(*call->items[0]);
  if (!callee || callee->find('.') == std::string::npos) return nullptr;
  const auto ns = writtenNamespace(callee->substr(0, callee->rfind('.')));
  const auto* callable = ns ? findCallable(*ns + callee->substr(callee->rfind('.'))) : nullptr;
  if (!callable || callable->kind != CallKind::AsWritten) return nullptr;

  // Each written argument: a forward parameter, `self.NAME`, or a literal. The get_attr nodes are
  // made in the order Python evaluates the arguments; anything else undoes them and falls back.
  const GraphBuilder::Mark mark = cx.builder.mark();
  const auto valueOf = [&](const py::Expr& e) -> std::optional<Argument> {
    if (auto literal = literalArgument(e)) return literal;
    if (e.kind == py::Expr::Kind::Name) {
      for (size_t k = 1; k < header->parameters.size(); ++k)
        if (header->parameters[k].name == e.text && !args[k - 1].pendingTensor && !args[k - 1].pendingField)
          return args[k - 1].arg;
      return std::nullopt;
    }
    const auto dotted = py::dottedName(e);
    if (!dotted || dotted->rfind("self.", 0) != 0 || dotted->find('.', 5) != std::string::npos) return std::nullopt;
    const std::string name = dotted->substr(5);
    const auto slot = target.module.type()->findAttributeSlot(name);
    if (!slot) return std::nullopt;
    const c10::IValue value = target.module._ivalue()->getSlot(*slot);
    const std::string path = target.path.empty() ? name : target.path + "." + name;
    if (value.isTensor())
      return Argument(tensorAttribute(cx, path, value.toTensor(), frame, node, target.module.type()->is_parameter(*slot)));
    if (value.isModule()) return std::nullopt;
    return argumentFromIValue(value);
  };
  CallForm form;
  form.target = callable->target;
  bool ok = true;
  for (size_t k = 1; ok && k < call->items.size(); ++k) {
    const py::Expr& item = *call->items[k];
    if (item.kind == py::Expr::Kind::Starred) {
      ok = false;
      break;
    }
    auto v = valueOf(item);
    ok = v.has_value();
    if (!ok) break;
    if (k <= call->positionalCount()) {
      form.args.push_back(std::move(*v));
    } else {
      form.kwargs.emplace_back(call->keywords[k - 1 - call->positionalCount()], std::move(*v));
    }
  }
  if (!ok) {
    cx.builder.rollBackTo(mark);
    return nullptr;
  }
  Node* fx = cx.builder.graph().createNode(OpKind::CallFunction, form.target, std::move(form.args), std::move(form.kwargs));
  describeSource(cx, node, frame, fx->meta());
  fx->meta().modulePath = target.path;
  fx->meta().moduleType = pythonTypeName(target.module.type());
  fx->meta().sourceText = *text;
  fx->meta().schema = callable->aten;
  return fx;
}

void noteScriptingBranch(TraceContext& cx, const jit::Function& fn) {
  if (!cx.scriptingNoted.insert(&fn).second) return;
  const std::string source = cx.source.functionSource(fn);
  if (source.find("is_scripting()") == std::string::npos) return;
  const auto branch = scriptingBranch(source);
  if (!branch) return;
  std::string note = pythonQualifiedName(fn.qualname().qualifiedName()) + ": torch.fx runs the Python side of `" +
                     branch->test + "` (" +
                     (branch->pythonSide == "the block is skipped" ? branch->pythonSide : "`" + branch->pythonSide + "`") +
                     "); the archive holds only the TorchScript side, "
                     "which this graph follows";
  if (std::find(cx.fxDifferences.begin(), cx.fxDifferences.end(), note) == cx.fxDifferences.end())
    cx.fxDifferences.push_back(std::move(note));
}

}  // namespace tdfx::trace
