#include "svg_writer.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>

namespace tdfx {

std::string xmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters are not allowed in XML 1.0 text.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += ' ';
        else out += c;
    }
  }
  return out;
}

namespace {


std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

}  // namespace

std::string colorToHex(const std::string& color) {
  static const std::map<std::string, std::string> x11 = {
      {"AliceBlue", "#F0F8FF"},      {"LemonChiffon1", "#FFFACD"}, {"LightGrey", "#D3D3D3"},
      {"PowderBlue", "#B0E0E6"},     {"Salmon", "#FA8072"},        {"CadetBlue1", "#98F5FF"},
      {"Coral", "#FF7F50"},          {"DarkOliveGreen1", "#CAFF70"}, {"DarkSeaGreen1", "#C1FFC1"},
      {"GhostWhite", "#F8F8FF"},     {"Khaki1", "#FFF68F"},        {"LavenderBlush1", "#FFF0F5"},
      {"LightSkyBlue", "#87CEFA"},   {"MistyRose1", "#FFE4E1"},    {"MistyRose2", "#EED5D2"},
      {"PaleTurquoise2", "#AEEEEE"}, {"PeachPuff1", "#FFDAB9"},    {"Thistle1", "#FFE1FF"},
      {"Thistle3", "#CDB5CD"},       {"Wheat1", "#FFE7BA"},        {"Yellow2", "#EEEE00"}};
  auto it = x11.find(color);
  return it != x11.end() ? it->second : (color.empty() ? "#FFFFFF" : color);
}

std::string pictureRecordLabel(const std::string& recordLabel) {
  static const std::string kParameter = "|op_code=get_parameter";
  const size_t at = recordLabel.find(kParameter);
  if (at == std::string::npos) return recordLabel;
  const size_t end = at + kParameter.size();
  if (end >= recordLabel.size() || recordLabel[end] == '\\' || recordLabel[end] == '}') return recordLabel;
  return recordLabel.substr(0, end) + "\\n" + recordLabel.substr(end);
}

std::vector<std::string> recordLines(const std::string& recordLabel) {
  const std::string label = pictureRecordLabel(recordLabel);
  std::vector<std::string> lines;
  std::string current;
  const auto flush = [&] {
    if (!current.empty()) lines.push_back(current);
    current.clear();
  };
  for (size_t i = 0; i < label.size(); ++i) {
    const char c = label[i];
    if (c == '\\' && i + 1 < label.size()) {
      const char next = label[++i];
      if (next == 'n' || next == 'l' || next == 'r') flush();
      else current += next;  // an escaped character of the text
    } else if (c == '|') {
      flush();
    } else if (c != '{' && c != '}') {
      current += c;
    }
  }
  flush();
  return lines;
}

std::string raiseFrameTitles(const std::string& svg) {
  static const std::string kCluster = "class=\"cluster\">";
  std::string out, titles;
  size_t copied = 0;
  for (size_t at = svg.find(kCluster); at != std::string::npos; at = svg.find(kCluster, at + 1)) {
    const size_t end = svg.find("</g>", at);
    const size_t text = svg.find("<text", at);
    if (end == std::string::npos || text == std::string::npos || text > end) continue;  // a frame without a title
    const size_t textEnd = svg.find("</text>", text) + std::strlen("</text>");
    const auto between = [&](const std::string& open, const std::string& close) {
      const size_t b = svg.find(open, at);
      if (b == std::string::npos || b > end) return std::string();
      const size_t e = svg.find(close, b + open.size());
      return e == std::string::npos ? std::string() : svg.substr(b + open.size(), e - b - open.size());
    };
    const std::string name = between("<title>", "</title>");
    std::string fill = between("<path fill=\"", "\"");
    if (fill.empty() || fill == "none") fill = "white";
    // The halo: a stroke of the frame's own fill under the glyphs (paint-order), where an edge passes.
    titles += "<g class=\"frame-title\"><title>" + name + "</title>\n" + svg.substr(text, 5) + " stroke=\"" + fill +
              "\" stroke-width=\"3\" stroke-linejoin=\"round\" paint-order=\"stroke\"" +
              svg.substr(text + 5, textEnd - text - 5) + "\n</g>\n";
    size_t cut = textEnd;
    if (cut < svg.size() && svg[cut] == '\n') ++cut;
    out += svg.substr(copied, text - copied);
    copied = cut;
  }
  out += svg.substr(copied);
  if (titles.empty()) return svg;
  const size_t graphEnd = out.rfind("</g>");  // the end of Graphviz's graph group, in its transform
  if (graphEnd == std::string::npos) return svg;
  return out.insert(graphEnd, titles);
}

std::string svgFromLayout(const ViewGraph& view, const LayoutResult& layout) {
  std::unordered_map<std::string, const ViewNode*> nodes;
  for (const ViewNode& n : view.nodes) nodes[n.id] = &n;
  const double pad = 8;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    num(layout.width + 2 * pad) + "pt\" height=\"" + num(layout.height + 2 * pad) + "pt\" viewBox=\"" +
                    num(-pad) + " " + num(-pad) + " " + num(layout.width + 2 * pad) + " " + num(layout.height + 2 * pad) +
                    "\">\n<title>" + xmlEscape(view.name) + "</title>\n"
                    "<style>text{font-family:Helvetica,Arial,sans-serif;font-size:10px}</style>\n"
                    "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" "
                    "markerHeight=\"8\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#333\"/></marker></defs>\n";
  for (const auto& c : layout.clusters)
    out += "<g class=\"cluster\" id=\"" + xmlEscape(c.id) + "\"><rect x=\"" + num(c.x) + "\" y=\"" + num(c.y) + "\" width=\"" +
           num(c.width) + "\" height=\"" + num(c.height) +
           "\" rx=\"6\" fill=\"#F6F8FA\" stroke=\"#9AA5B1\"/></g>\n";
  for (const auto& e : layout.edges) {
    if (e.points.empty()) continue;
    std::string d = "M" + num(e.points[0].x) + "," + num(e.points[0].y);
    for (size_t i = 1; i + 2 < e.points.size(); i += 3)
      d += " C" + num(e.points[i].x) + "," + num(e.points[i].y) + " " + num(e.points[i + 1].x) + "," +
           num(e.points[i + 1].y) + " " + num(e.points[i + 2].x) + "," + num(e.points[i + 2].y);
    if (e.arrowTip) d += " L" + num(e.arrowTip->x) + "," + num(e.arrowTip->y);
    out += "<g class=\"edge\"><title>" + xmlEscape(e.from + "->" + e.to) + "</title><path d=\"" + d +
           "\" fill=\"none\" stroke=\"#333\" marker-end=\"url(#arrow)\"/>";
    if (!e.label.empty())
      out += "<text x=\"" + num(e.labelPos.x) + "\" y=\"" + num(e.labelPos.y) + "\" font-size=\"10\" text-anchor=\"middle\" dominant-baseline=\"central\">" + xmlEscape(e.label) + "</text>";
    out += "</g>\n";
  }
  // Titles after the edges that enter their frames through them, on a halo of the frame's fill.
  for (const auto& c : layout.clusters)
    out += "<g class=\"frame-title\"><text x=\"" + num(c.x + 6) + "\" y=\"" + num(c.y + 12) +
           "\" stroke=\"#F6F8FA\" stroke-width=\"3\" stroke-linejoin=\"round\" paint-order=\"stroke\">" +
           xmlEscape(c.title) + "</text></g>\n";
  for (const auto& b : layout.nodes) {
    const ViewNode* v = nodes.count(b.id) ? nodes.at(b.id) : nullptr;
    const std::string fill = colorToHex(v ? v->fillColor : "");
    out += "<g class=\"node\" id=\"" + xmlEscape(b.id) + "\">";
    if (v && v->shape == "ellipse")
      out += "<ellipse cx=\"" + num(b.x) + "\" cy=\"" + num(b.y) + "\" rx=\"" + num(b.width / 2) + "\" ry=\"" +
             num(b.height / 2) + "\" fill=\"" + fill + "\" stroke=\"#333\"/>";
    else
      out += "<rect x=\"" + num(b.x - b.width / 2) + "\" y=\"" + num(b.y - b.height / 2) + "\" width=\"" + num(b.width) +
             "\" height=\"" + num(b.height) + "\" rx=\"3\" fill=\"" + fill + "\" stroke=\"#333\"/>";
    const std::vector<std::string> lines = v ? (v->recordLabel.empty() ? v->lines : recordLines(v->recordLabel))
                                              : std::vector<std::string>{b.id};
    const double lineHeight = 12;
    double y = b.y - (lines.size() - 1) * lineHeight / 2 + 3.5;
    for (const std::string& line : lines) {
      out += "<text x=\"" + num(b.x) + "\" y=\"" + num(y) + "\" text-anchor=\"middle\">" + xmlEscape(line) + "</text>";
      y += lineHeight;
    }
    out += "</g>\n";
  }
  return out + "</svg>\n";
}

}  // namespace tdfx
