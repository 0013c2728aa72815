#include "tdfx/ir/graph.h"

#include <algorithm>
#include <cctype>

#include "tdfx/error.h"
#include "tdfx/util/python_repr.h"

namespace tdfx {

const char* opKindName(OpKind op) {
  switch (op) {
    case OpKind::Placeholder: return "placeholder";
    case OpKind::GetAttr: return "get_attr";
    case OpKind::CallFunction: return "call_function";
    case OpKind::CallMethod: return "call_method";
    case OpKind::CallModule: return "call_module";
    case OpKind::Output: return "output";
  }
  return "?";
}

namespace {

// Names FX's code generator reserves for globals of generated code (torch.fx.graph._custom_builtins).
bool isCustomBuiltin(const std::string& name) {
  return name == "inf" || name == "nan" || name == "NoneType" || name == "torch" || name == "device";
}

bool isIllegalName(const std::string& name) {
  return isPythonKeyword(name) || isPythonBuiltin(name) || isCustomBuiltin(name);
}

std::string snakeCase(const std::string& s) {
  std::string out;
  bool prevLower = false;
  for (char c : s) {
    const bool upper = std::isupper(static_cast<unsigned char>(c));
    if (prevLower && upper) out += '_';
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    prevLower = std::islower(static_cast<unsigned char>(c));
  }
  return out;
}

// A trailing "_<digits>" is read as base + counter, like FX's r"(.*)_(\d+)$"; the base may be
// empty (`_0` is base "" and counter 0: the next is `_1`).
bool splitNumberedName(const std::string& name, std::string& base, long long& num) {
  const size_t us = name.rfind('_');
  if (us == std::string::npos || us + 1 >= name.size() || name.size() - us - 1 >= 18 ||
      name.find_first_not_of("0123456789", us + 1) != std::string::npos)
    return false;
  base = name.substr(0, us);
  num = std::stoll(name.substr(us + 1));
  return true;
}

bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::string NameSpace::create(const std::string& raw) {
  // Runs of illegal characters become one underscore, as re.sub('[^0-9a-zA-Z_]+', '_', ...) does.
  std::string candidate;
  for (size_t i = 0; i < raw.size();) {
    if (isIdentChar(raw[i])) {
      candidate += raw[i++];
    } else {
      candidate += '_';
      while (i < raw.size() && !isIdentChar(raw[i])) ++i;
    }
  }
  if (candidate.empty()) candidate = "_";
  if (std::isdigit(static_cast<unsigned char>(candidate[0]))) candidate = "_" + candidate;

  std::string base = candidate;
  long long num = 0;
  if (splitNumberedName(candidate, base, num)) candidate = base + "_" + std::to_string(num);
  if (used_.count(candidate) || isIllegalName(candidate)) {
    // base_1 ... base_n are known to be taken: start the scan after them (the same name FX finds).
    const long long start = num;
    const auto known = takenThrough_.find(base);
    if (known != takenThrough_.end() && known->second > num) num = known->second;
    do {
      ++num;
      candidate = base + "_" + std::to_string(num);
    } while (used_.count(candidate) || isIllegalName(candidate));
    // Every suffix from 1 to num is now taken when the scan started inside the known run.
    if (known == takenThrough_.end() ? start == 0 : start <= known->second) takenThrough_[base] = num;
  }
  used_.insert(candidate);
  return candidate;
}

void NameSpace::release(const std::string& name) {
  if (!used_.erase(name)) return;
  std::string base;
  long long num = 0;
  if (!splitNumberedName(name, base, num)) return;
  const auto known = takenThrough_.find(base);
  if (known != takenThrough_.end() && known->second >= num) known->second = num - 1;
}

std::string nameForTarget(OpKind op, const std::string& target) {
  std::string name = target;
  if (op == OpKind::CallFunction) {
    const size_t dot = name.rfind('.');
    if (dot != std::string::npos) name = name.substr(dot + 1);
  } else if (name.size() > 4 && name.compare(0, 2, "__") == 0 && name.compare(name.size() - 2, 2, "__") == 0) {
    name = name.substr(2, name.size() - 4);
  }
  return snakeCase(name);
}

Node* Graph::createNode(OpKind op, std::string target, std::vector<Argument> args, Kwargs kwargs,
                        const std::string& nameCandidate) {
  ++revision_;
  std::string candidate = nameCandidate.empty() ? nameForTarget(op, target) : nameCandidate;
  std::string local;
  if (localNames_) candidate = local = localNames_->create(candidate);
  const std::string name = names_.create(candidate);
  nodes_.push_back(std::unique_ptr<Node>(
      new Node(name, op, std::move(target), std::move(args), std::move(kwargs), nodes_.size())));
  Node* node = nodes_.back().get();
  if (localNames_) localNameOf_[node] = local;
  linkUses(*node);
  return node;
}

Node* Graph::insertBefore(const Node& before, OpKind op, std::string target, std::vector<Argument> args,
                          Kwargs kwargs, const std::string& nameCandidate) {
  ++revision_;
  const size_t position = before.index();
  if (position >= nodes_.size() || nodes_[position].get() != &before)
    throw Error("cannot insert before node '" + before.name() + "': it is not in this graph");
  Node* node = createNode(op, std::move(target), std::move(args), std::move(kwargs), nameCandidate);
  std::unique_ptr<Node> owned = std::move(nodes_.back());
  nodes_.pop_back();
  unlinkUses(*node);
  nodes_.insert(nodes_.begin() + static_cast<std::ptrdiff_t>(position), std::move(owned));
  renumber(position);
  linkUses(*node);
  return node;
}

std::vector<Node*> Graph::replaceAllUsesWith(Node& node, Node& replacement) {
  ++revision_;
  std::vector<Node*> changed;
  const std::vector<Node*> users = node.users_;
  const auto swap = [&](Node* n) { return n == &node ? &replacement : n; };
  for (Node* user : users) {
    if (user == &replacement) continue;
    std::vector<Argument> args;
    for (const Argument& a : user->args_) args.push_back(mapNodes(a, swap));
    Kwargs kwargs;
    for (const auto& [name, a] : user->kwargs_) kwargs.emplace_back(name, mapNodes(a, swap));
    setArguments(*user, std::move(args), std::move(kwargs));
    changed.push_back(user);
  }
  return changed;
}

void Graph::eraseNode(Node& node) {
  ++revision_;
  const size_t position = node.index();
  if (position >= nodes_.size() || nodes_[position].get() != &node)
    throw Error("cannot erase node '" + node.name() + "': it is not in this graph");
  if (!node.users_.empty()) {
    std::string users;
    for (const Node* u : node.users_) users += (users.empty() ? "" : ", ") + u->name();
    throw Error("cannot erase node '" + node.name() + "': it is still used by " + users);
  }
  unlinkUses(node);
  releaseNames(node);
  nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(position));
  renumber(position);
}

void Graph::lint() const {
  std::unordered_set<std::string> names;
  std::unordered_map<const Node*, size_t> position;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& node = *nodes_[i];
    const std::string where = "node '" + node.name() + "' (position " + std::to_string(i) + ")";
    if (node.index() != i) throw Error(where + " has index " + std::to_string(node.index()));
    if (!names.insert(node.name()).second) throw Error(where + ": the name is taken by an earlier node");
    if (node.op() == OpKind::Output && i + 1 != nodes_.size()) throw Error(where + ": the output node is not the last");
    const auto check = [&](Node* used) {
      auto it = position.find(used);
      if (it == position.end()) {
        bool inGraph = false;
        for (const auto& n : nodes_) inGraph = inGraph || n.get() == used;
        throw Error(where + " refers to '" + used->name() + "', " +
                    (inGraph ? "which comes after it" : "which is not in this graph"));
      }
      const auto& users = used->users();
      if (std::find(users.begin(), users.end(), &node) == users.end())
        throw Error(where + " refers to '" + used->name() + "', whose users do not list it");
    };
    for (const Argument& a : node.args()) forEachNode(a, check);
    for (const auto& kv : node.kwargs()) forEachNode(kv.second, check);
    position[&node] = i;
  }
  for (const auto& n : nodes_) {
    for (const Node* user : n->users()) {
      bool refers = false;
      const auto find = [&](Node* used) { refers = refers || used == n.get(); };
      for (const Argument& a : user->args()) forEachNode(a, find);
      for (const auto& kv : user->kwargs()) forEachNode(kv.second, find);
      if (!refers) throw Error("node '" + n->name() + "' lists '" + user->name() + "' as a user, which does not refer to it");
    }
  }
}

void Graph::renumber(size_t from) {
  for (size_t i = from; i < nodes_.size(); ++i) nodes_[i]->index_ = i;
}

void Graph::releaseNames(const Node& node) {
  if (auto it = takenNameOf_.find(&node); it != takenNameOf_.end()) {
    names_.release(it->second);
    takenNameOf_.erase(it);
  } else {
    names_.release(node.name_);
  }
  if (auto it = localNameOf_.find(&node); it != localNameOf_.end()) {
    if (localNames_) localNames_->release(it->second);
    localNameOf_.erase(it);
  }
}

void Graph::linkUses(Node& node) {
  Node* self = &node;
  const auto addUser = [self](Node* used) {
    auto& users = used->users_;
    if (!users.empty() && users.back() == self) return;
    if (std::find(users.begin(), users.end(), self) != users.end()) return;
    // Users stay in graph order (a new node is the last, so it is appended).
    auto at = std::find_if(users.begin(), users.end(), [self](Node* u) { return u->index() > self->index(); });
    users.insert(at, self);
  };
  for (const Argument& a : node.args_) forEachNode(a, addUser);
  for (const auto& kv : node.kwargs_) forEachNode(kv.second, addUser);
}

void Graph::unlinkUses(Node& node) {
  Node* self = &node;
  const auto dropUser = [self](Node* used) {
    auto& users = used->users_;
    users.erase(std::remove(users.begin(), users.end(), self), users.end());
  };
  for (const Argument& a : node.args_) forEachNode(a, dropUser);
  for (const auto& kv : node.kwargs_) forEachNode(kv.second, dropUser);
}

void Graph::setTarget(Node& node, std::string target) {
  ++revision_;
  node.target_ = std::move(target);
}

void Graph::setArguments(Node& node, std::vector<Argument> args, Kwargs kwargs) {
  ++revision_;
  unlinkUses(node);
  node.args_ = std::move(args);
  node.kwargs_ = std::move(kwargs);
  linkUses(node);
}

Node* Graph::outputNode() const {
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it)
    if ((*it)->op() == OpKind::Output) return it->get();
  return nullptr;
}

void Graph::truncate(size_t size) {
  ++revision_;
  while (nodes_.size() > size) {
    Node* node = nodes_.back().get();
    unlinkUses(*node);
    releaseNames(*node);
    nodes_.pop_back();
  }
}

const std::string& Graph::localName(const Node& node) const {
  auto it = localNameOf_.find(&node);
  return it == localNameOf_.end() ? node.name() : it->second;
}

void Graph::prefixName(Node& node, const std::string& prefix) {
  ++revision_;
  takenNameOf_.emplace(&node, node.name_);
  node.name_ = prefix + node.name_;
}

Node* Graph::findNode(const std::string& name) const {
  for (const auto& n : nodes_)
    if (n->name() == name) return n.get();
  return nullptr;
}

}  // namespace tdfx
