#include "graph_json.h"

#include <cmath>

#include "tdfx/error.h"
#include "tdfx/util/dtype.h"

namespace tdfx {

using nlohmann::json;

namespace {

json items(const std::vector<Argument>& args) {
  json out = json::array();
  for (const Argument& a : args) out.push_back(argumentJson(a));
  return out;
}

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw Error("graph document: " + where + ": " + what);
}

// Layouts and memory formats are written as FX prints them; read back by trying each value.
template <typename Enum>
Enum enumFromRepr(const std::string& text, int count, const std::string& where) {
  for (int i = 0; i < count; ++i) {
    const Enum e = static_cast<Enum>(i);
    if (formatGraphArgument(Argument(e)) == text) return e;
  }
  fail(where, "unknown value \"" + text + "\"");
}

}  // namespace

json dtypeJson(c10::ScalarType dtype) {
  if (dtype == c10::ScalarType::Undefined) return nullptr;
  return dtypeToString(dtype);
}

c10::ScalarType dtypeFromJson(const json& j, const std::string& where) {
  if (j.is_null()) return c10::ScalarType::Undefined;
  if (!j.is_string()) fail(where, "expected a dtype name or null, got " + j.dump());
  try {
    return parseDtype(j.get<std::string>());
  } catch (const Error& e) {
    fail(where, e.what());
  }
}

json argumentJson(const Argument& arg) {
  return std::visit(
      [](const auto& v) -> json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) return nullptr;
        else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t> || std::is_same_v<T, std::string>) return v;
        else if constexpr (std::is_same_v<T, double>) {
          if (std::isfinite(v)) return v;
          return {{"float", std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf")}};
        } else if constexpr (std::is_same_v<T, Node*>) return {{"node", v->name()}};
        else if constexpr (std::is_same_v<T, ArgumentList>) return {{"list", items(v.items)}};
        else if constexpr (std::is_same_v<T, ArgumentTuple>) return {{"tuple", items(v.items)}};
        else if constexpr (std::is_same_v<T, ArgumentSlice>) return {{"slice", items(v.items)}};
        else if constexpr (std::is_same_v<T, ArgumentDict>) {
          json pairs = json::array();
          for (size_t i = 0; i < v.keys.size(); ++i) pairs.push_back(json::array({argumentJson(v.keys[i]), argumentJson(v.values[i])}));
          return {{"dict", std::move(pairs)}};
        } else if constexpr (std::is_same_v<T, ArgumentEllipsis>) return {{"ellipsis", true}};
        else if constexpr (std::is_same_v<T, c10::ScalarType>) return {{"dtype", dtypeToString(v)}};
        else if constexpr (std::is_same_v<T, c10::Device>) return {{"device", v.str()}};
        else if constexpr (std::is_same_v<T, c10::Layout>) return {{"layout", formatGraphArgument(Argument(v))}};
        else return {{"memory_format", formatGraphArgument(Argument(v))}};
      },
      arg.value);
}

Argument argumentFromJson(const json& j, const std::string& where, const std::map<std::string, Node*>& nodes) {
  if (j.is_null()) return Argument();
  if (j.is_boolean()) return Argument(j.get<bool>());
  if (j.is_number_integer()) return Argument(j.get<int64_t>());
  if (j.is_number_float()) return Argument(j.get<double>());
  if (j.is_string()) return Argument(j.get<std::string>());
  if (!j.is_object() || j.size() != 1) fail(where, "expected an argument, got " + j.dump());
  const auto entry = j.begin();  // the one member (items() would be a temporary here)
  const std::string tag = entry.key();
  const json& value = entry.value();
  const auto list = [&](const char* what) {
    if (!value.is_array()) fail(where, std::string("expected a list of ") + what);
    std::vector<Argument> out;
    for (size_t i = 0; i < value.size(); ++i)
      out.push_back(argumentFromJson(value[i], where + "." + tag + "[" + std::to_string(i) + "]", nodes));
    return out;
  };
  const auto text = [&] {
    if (!value.is_string()) fail(where + "." + tag, "expected a string, got " + value.dump());
    return value.get<std::string>();
  };
  if (tag == "node") {
    const auto it = nodes.find(text());
    if (it == nodes.end()) fail(where, "no earlier node named \"" + text() + "\"");
    return Argument(it->second);
  }
  if (tag == "float") {
    const std::string v = text();
    if (v == "nan") return Argument(std::nan(""));
    if (v == "inf" || v == "-inf") return Argument(v == "inf" ? HUGE_VAL : -HUGE_VAL);
    fail(where, "expected \"inf\", \"-inf\" or \"nan\", got \"" + v + "\"");
  }
  if (tag == "list") return Argument(ArgumentList{list("arguments")});
  if (tag == "tuple") return Argument(ArgumentTuple{list("arguments")});
  if (tag == "slice") {
    auto parts = list("start, stop and step");
    if (parts.size() != 3) fail(where, "a slice has 3 parts: start, stop and step");
    return Argument(ArgumentSlice{std::move(parts)});
  }
  if (tag == "dict") {
    if (!value.is_array()) fail(where, "expected a list of [key, value] pairs");
    ArgumentDict d;
    for (size_t i = 0; i < value.size(); ++i) {
      const std::string w = where + ".dict[" + std::to_string(i) + "]";
      if (!value[i].is_array() || value[i].size() != 2) fail(w, "expected [key, value]");
      d.keys.push_back(argumentFromJson(value[i][0], w, nodes));
      d.values.push_back(argumentFromJson(value[i][1], w, nodes));
    }
    return Argument(std::move(d));
  }
  if (tag == "ellipsis") return Argument(ArgumentEllipsis{});
  if (tag == "dtype") {
    try {
      return Argument(parseDtype(text()));
    } catch (const Error& e) {
      fail(where, e.what());
    }
  }
  if (tag == "device") {
    try {
      return Argument(c10::Device(text()));
    } catch (const c10::Error&) {
      fail(where, "unknown device \"" + text() + "\"");
    }
  }
  if (tag == "layout") return Argument(enumFromRepr<c10::Layout>(text(), static_cast<int>(c10::Layout::NumOptions), where));
  if (tag == "memory_format")
    return Argument(enumFromRepr<c10::MemoryFormat>(text(), static_cast<int>(c10::MemoryFormat::NumOptions), where));
  fail(where, "unknown argument kind \"" + tag + "\"");
}

}  // namespace tdfx
