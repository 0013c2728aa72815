#pragma once
// SVG drawn directly from a LayoutResult: for graphs too large for Graphviz's own renderer,
// which would lay the whole graph out again in one dot call.
#include <string>

#include "tdfx/layout/graphviz_layout.h"

namespace tdfx {

/// A valid standalone SVG document; each node's <g> has its view node id (the IR node name).
std::string svgFromLayout(const ViewGraph& view, const LayoutResult& layout);

/// Graphviz's SVG with every frame title moved out of its cluster group to the end of the picture,
/// on a halo of the frame's fill. Graphviz draws clusters first, and the edge into a frame passes
/// through the band kept for its title, so in its order edges are drawn over the title text.
/// Each title becomes `<g class="frame-title"><title>cluster_NAME</title><text .../></g>`.
std::string raiseFrameTitles(const std::string& graphvizSvg);

/// Text escaped for XML content and attribute values (also Graphviz's HTML-like labels).
std::string xmlEscape(const std::string& text);

/// The text lines of a Graphviz record label ("{name=%x|op_code=...\n}"), as pictures draw them
/// (see pictureRecordLabel).
std::vector<std::string> recordLines(const std::string& recordLabel);

/// A record label as pictures draw it. FxGraphDrawer 1.13 writes a parameter node's label without a
/// break between `op_code=get_parameter` and the tensor (`get_parametertorch.float32[50, 100]`,
/// an operator-precedence slip in graph_drawer.py). The DOT export keeps that text byte for byte;
/// pictures put the break in.
std::string pictureRecordLabel(const std::string& recordLabel);

}  // namespace tdfx
