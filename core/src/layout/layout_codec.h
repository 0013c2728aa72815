#pragma once
// ViewGraph and LayoutResult as JSON values, for the layout process's requests and answers
// (layout_process.cpp). Plain field-by-field copies; readers throw tdfx::Error on a malformed value.
#include <nlohmann/json.hpp>

#include "tdfx/layout/graphviz_layout.h"

namespace tdfx::layout {

nlohmann::json viewToJson(const ViewGraph& view);
ViewGraph viewFromJson(const nlohmann::json& j);

nlohmann::json layoutToJson(const LayoutResult& layout);
LayoutResult layoutFromJson(const nlohmann::json& j);

}  // namespace tdfx::layout
