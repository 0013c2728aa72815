#include "tdfx/codegen/python_code.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>
#include <vector>

#include "tdfx/ir/fx_tables.h"
#include "tdfx/ir/fx_target.h"
#include "tdfx/util/python_repr.h"

namespace tdfx {

std::string formatTargetPath(const std::string& base, const std::string& dottedPath) {
  std::string r = base;
  size_t start = 0;
  while (true) {
    const size_t dot = dottedPath.find('.', start);
    const std::string atom = dottedPath.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    r = isPythonIdentifier(atom) ? r + "." + atom : "getattr(" + r + ", \"" + atom + "\")";
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return r;
}

namespace {

// A magic method's format (fx::findMagicMethod) filled with the printed arguments.
std::string substitute(const char* format, const std::vector<Argument>& args) {
  std::string out;
  size_t next = 0;
  for (const char* p = format; *p; ++p) {
    if (p[0] == '{' && p[1] == '}') {
      out += next < args.size() ? formatCodeArgument(args[next]) : std::string("None");
      ++next;
      ++p;
    } else {
      out += *p;
    }
  }
  return out;
}

std::string formatArgs(const std::vector<Argument>& args, size_t first, const Kwargs& kwargs) {
  std::string out;
  for (size_t i = first; i < args.size(); ++i) out += (out.empty() ? "" : ", ") + formatCodeArgument(args[i]);
  for (const auto& [k, v] : kwargs) out += (out.empty() ? "" : ", ") + k + " = " + formatCodeArgument(v);
  return out;
}

// FX's add_global: torch's callables keep their qualified name; any other function (one that
// torch.fx.wrap kept as one call) gets a global named after it, unique in the graph's namespace.
struct Globals {
  NameSpace names;
  std::map<std::string, std::string> byTarget;
  std::vector<std::string> wrapped;  // in first use, for the `torch.fx._symbolic_trace.wrap("NAME")` lines

  std::string nameFor(const std::string& target) {
    if (target.rfind("torch.", 0) == 0) return target;
    auto it = byTarget.find(target);
    if (it != byTarget.end()) return it->second;
    const std::string name = names.create(target);
    wrapped.push_back(name);
    return byTarget.emplace(target, name).first->second;
  }
};

std::string statement(const Node& node, Globals& globals) {
  const std::string& t = node.target();
  const std::string lhs = node.name() + " = ";
  switch (node.op()) {
    case OpKind::CallMethod:
      return lhs + formatTargetPath(formatCodeArgument(node.args().at(0)), t) + "(" +
             formatArgs(node.args(), 1, node.kwargs()) + ")";
    case OpKind::CallModule:
      return lhs + formatTargetPath("self", t) + "(" + formatArgs(node.args(), 0, node.kwargs()) + ")";
    case OpKind::GetAttr:
      return lhs + formatTargetPath("self", t);
    case OpKind::CallFunction: {
      const auto operatorName = fx_target::operatorName(t);
      if (operatorName) {
        if (const auto* magic = fx::findMagicMethod(*operatorName)) return lhs + substitute(magic->format, node.args());
      }
      std::string global;
      if (const auto builtin = fx_target::builtinName(t)) global = *builtin;
      else if (operatorName) global = t;
      else global = globals.nameFor(t);
      const auto& a = node.args();
      if (global == "getattr" && a.size() == 2 && std::holds_alternative<std::string>(a[1].value) &&
          isPythonIdentifier(std::get<std::string>(a[1].value)))
        return lhs + formatTargetPath(formatCodeArgument(a[0]), std::get<std::string>(a[1].value));
      return lhs + global + "(" + formatArgs(a, 0, node.kwargs()) + ")";
    }
    default:
      return "";
  }
}

}  // namespace

namespace {
// FX's code generator writes an annotation's classes through globals named after them (add_global:
// the dots of the qualified name become underscores), except torch's own, which keep their dotted
// name: `typing.Tuple[torch.Tensor, torch.Tensor]` becomes `typing_Tuple[torch.Tensor,torch.Tensor]`,
// a NamedTuple `torchvision.models.googlenet.GoogLeNetOutputs` becomes
// `torchvision_models_googlenet_GoogLeNetOutputs`.
// FX's code generator writes a typing object by its __origin__, and Optional[X] is
// Union[X, NoneType] to Python: the graph prints typing.Optional[torch.Tensor], the code
// typing_Union[torch.Tensor,NoneType].
std::string optionalAsUnion(std::string type) {
  const std::string optional = "typing.Optional[";
  for (size_t at = type.find(optional); at != std::string::npos; at = type.find(optional, at)) {
    int depth = 0;
    size_t close = at + optional.size() - 1;
    for (; close < type.size(); ++close) {
      if (type[close] == '[') ++depth;
      if (type[close] == ']' && --depth == 0) break;
    }
    if (close >= type.size()) break;
    type = type.substr(0, at) + "typing.Union[" + type.substr(at + optional.size(), close - at - optional.size()) +
           ", NoneType]" + type.substr(close + 1);
  }
  return type;
}

std::string codeTypeRepr(const std::string& annotation) {
  const std::string type = optionalAsUnion(annotation);
  std::string out;
  const auto isNameChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  for (size_t i = 0; i < type.size();) {
    if (isNameChar(type[i])) {
      size_t end = i;
      while (end < type.size() && isNameChar(type[end])) ++end;
      std::string name = type.substr(i, end - i);
      if (name.compare(0, 6, "torch.") != 0)
        for (char& c : name) c = c == '.' ? '_' : c;
      out += name;
      i = end;
    } else if (type.compare(i, 2, ", ") == 0) {
      out += ',';
      i += 2;
    } else {
      out += type[i++];
    }
  }
  return out;
}
}  // namespace

PythonCode pythonCode(const Graph& graph) {
  const auto& nodes = graph.nodes();
  // Walking backwards, the first use seen of a value is its last use: free it after that statement.
  std::unordered_map<const Node*, const Node*> lastUser;
  std::unordered_map<const Node*, std::vector<const Node*>> freedAfter;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node* user = it->get();
    const auto record = [&](Node* used) {
      if (lastUser.emplace(used, user).second) freedAfter[user].push_back(used);
    };
    for (const Argument& a : user->args()) forEachNode(a, record);
    for (const auto& kv : user->kwargs()) forEachNode(kv.second, record);
  }

  PythonCode code;
  Globals globals{graph.names(), {}, {}};
  std::vector<std::string> params;
  std::string returnAnnotation;
  std::string body;
  int line = 5;  // the text starts with "\n\n\ndef forward(...):\n"
  for (const auto& nodePtr : nodes) {
    const Node& node = *nodePtr;
    if (node.op() == OpKind::Placeholder) {
      // FX: `x : torch.Tensor`, `k : int = 2`.
      params.push_back(node.target() + (node.type().empty() ? "" : " : " + codeTypeRepr(node.type())) +
                       (node.args().empty() ? "" : " = " + formatCodeArgument(node.args()[0])));
      if (node.target() != node.name()) {
        body += node.name() + " = " + node.target() + "\n";
        code.nodeLines[node.name()] = line++;
      }
      continue;
    }
    code.nodeLines[node.name()] = line++;
    if (node.op() == OpKind::Output) {
      if (!node.type().empty()) returnAnnotation = " -> " + codeTypeRepr(node.type());
      body += "return " + (node.args().empty() ? std::string("None") : formatCodeArgument(node.args()[0])) + "\n";
      continue;
    }
    body += statement(node, globals);
    auto freed = freedAfter.find(&node);
    if (freed != freedAfter.end() && !freed->second.empty()) {
      body += ";  ";
      for (const Node* n : freed->second) body += n->name() + " = ";
      body += "None";
    }
    body += "\n";
  }
  if (body.empty()) body = "pass\n";

  std::string signature = "def forward(self";
  for (const auto& p : params) signature += ", " + p;
  signature += ")" + returnAnnotation + ":";
  std::string indented;
  size_t start = 0;
  while (true) {
    const size_t nl = body.find('\n', start);
    indented += "    " + body.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (nl == std::string::npos) break;
    indented += "\n";
    start = nl + 1;
  }
  std::string wraps;
  for (const std::string& name : globals.wrapped) wraps += "torch.fx._symbolic_trace.wrap(\"" + name + "\")\n";
  if (!wraps.empty()) {
    // FX: "\n" + the wrap lines + "\n" before the def, where there are otherwise three newlines;
    // every later statement's line moves down with them.
    const int extra = static_cast<int>(std::count(wraps.begin(), wraps.end(), '\n')) - 1;
    for (auto& entry : code.nodeLines) entry.second += extra;
    code.text = "\n" + wraps + "\n" + signature + "\n" + indented;
  } else {
    code.text = "\n\n\n" + signature + "\n" + indented;
  }
  return code;
}

std::string statementText(const PythonCode& code, const std::string& nodeName) {
  auto it = code.nodeLines.find(nodeName);
  if (it == code.nodeLines.end()) return "";
  size_t start = 0;
  for (int line = 1; line < it->second && start != std::string::npos; ++line) {
    start = code.text.find('\n', start);
    if (start != std::string::npos) ++start;
  }
  if (start == std::string::npos) return "";
  const size_t end = code.text.find('\n', start);
  std::string text = code.text.substr(start, end == std::string::npos ? std::string::npos : end - start);
  text.erase(0, text.find_first_not_of(' '));
  return text;
}

}  // namespace tdfx
