#include "tdfx/layout/graphviz_layout.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <unistd.h>

#include "tdfx/error.h"
#include "composed_layout.h"
#include "graphviz_runtime.h"
#include "svg_writer.h"

namespace tdfx {
namespace {

std::mutex& graphvizMutex() {
  static std::mutex m;
  return m;
}

// One Graphviz context for the process, created on first use (under the lock).
GVC_t* context() {
  static GVC_t* gvc = [] {
    agseterr(AGERR);  // warnings (e.g. about fonts) are not errors of the user's
    return gvContext();
  }();
  return gvc;
}

char* cstr(const char* s) { return const_cast<char*>(s); }

// cgraph takes C strings: a NUL inside a key ("a\0b") would cut a name or label there, and two
// such nodes would merge. It is drawn as U+2400 SYMBOL FOR NULL instead.
std::string cgraphText(const std::string& s) {
  if (s.find('\0') == std::string::npos) return s;
  std::string out;
  for (char c : s) out += c == '\0' ? std::string("\xE2\x90\x80") : std::string(1, c);
  return out;
}

// XML 1.0 has no control characters but tab, newline and carriage return, and Graphviz's SVG
// writes a label's bytes as they are: a key holding ESC made the whole picture unreadable. Each
// is drawn as its Unicode control picture (ESC as U+241B).
std::string xmlControlPictures(std::string svg) {
  const auto invalid = [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 && c != '\t' && c != '\n' && c != '\r';
  };
  if (std::none_of(svg.begin(), svg.end(), invalid)) return svg;
  std::string out;
  out.reserve(svg.size() + 16);
  for (char c : svg) {
    if (!invalid(c)) {
      out += c;
      continue;
    }
    out += "\xE2\x90";
    out += static_cast<char>(0x80 + static_cast<unsigned char>(c));
  }
  return out;
}

void set(void* obj, const char* name, const std::string& value) {
  const std::string text = cgraphText(value);
  agsafeset(obj, cstr(name), cstr(text.c_str()), cstr(""));
}

// A plain Graphviz label: backslashes are escapes there, so user text doubles them; lines join with \n.
std::string plainLabel(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += "\\n";
    for (char c : lines[i]) {
      if (c == '\\') out += "\\\\";
      else out += c;
    }
  }
  return out;
}

struct GraphDeleter {
  void operator()(Agraph_t* g) const { agclose(g); }
};
using GraphPtr = std::unique_ptr<Agraph_t, GraphDeleter>;

constexpr double kPadX = 16, kPadY = 10;

// Builds the cgraph graph. With `measure`, nodes get fixed sizes from measured text (for layouts
// drawn by the caller); without, Graphviz sizes and draws the labels itself (for rendering). A
// picture draws record labels as pictureRecordLabel says; `exactDot` keeps them as they are.
GraphPtr buildGraph(const ViewGraph& view, const TextMeasure* measure, bool exactDot = false) {
  GraphPtr g(agopen(cstr(view.name.c_str()), Agdirected, nullptr));
  const bool fx = view.style == ViewStyle::Fx;
  set(g.get(), "rankdir", view.rankdir == "LR" ? "LR" : "TB");
  if (!fx) {
    set(g.get(), "fontname", "Helvetica");
    set(g.get(), "fontsize", "10");
    set(g.get(), "nodesep", "0.25");
    set(g.get(), "ranksep", "0.35");
  }
  if (view.nodes.size() + view.edges.size() > 500) {
    // dot's crossing minimisation and network simplex dominate on big or dense graphs (DenseNet's
    // concatenations): bounded iterations keep them well under a second with little visible loss.
    set(g.get(), "nslimit", "2");
    set(g.get(), "nslimit1", "2");
    set(g.get(), "mclimit", "0.1");
  }
  if (!measure && !view.legend.empty()) {
    std::string html = "<<TABLE BORDER=\"0\" CELLSPACING=\"2\"><TR>";
    for (const auto& [label, color] : view.legend)
      html += "<TD BGCOLOR=\"" + xmlEscape(color) + "\" BORDER=\"1\">" + xmlEscape(label) + "</TD>";
    html += "</TR></TABLE>>";
    // An HTML-like label: the text between the outer <> marks, registered as HTML with cgraph.
    agattr(g.get(), AGRAPH, cstr("label"), cstr(""));
    char* h = agstrdup_html(g.get(), cstr(html.substr(1, html.size() - 2).c_str()));
    agset(g.get(), cstr("label"), h);
    agstrfree(g.get(), h);
    set(g.get(), "labelloc", "b");
  }

  std::map<std::string, Agraph_t*> clusters;
  for (const ViewCluster& c : view.clusters) {
    Agraph_t* parent = c.parent.empty() ? g.get() : clusters.at(c.parent);
    const std::string clusterName = cgraphText(c.id);
    Agraph_t* sub = agsubg(parent, cstr(clusterName.c_str()), 1);
    set(sub, "label", plainLabel({c.title}));
    // A subgraph starts with its parent's attribute values: without this, the root's labelloc=b
    // (the legend under the picture) would move every frame's title to its bottom.
    set(sub, "labelloc", "t");
    set(sub, "style", fx ? "dashed" : "rounded,filled");
    if (!fx) {
      set(sub, "fillcolor", "#F6F8FA");
      set(sub, "color", "#9AA5B1");
      set(sub, "fontsize", "9");
    }
    clusters[c.id] = sub;
  }

  std::map<std::string, Agnode_t*> nodes;
  for (const ViewNode& v : view.nodes) {
    Agraph_t* parent = v.cluster.empty() ? g.get() : clusters.at(v.cluster);
    const std::string nodeName = cgraphText(v.id);
    Agnode_t* n = agnode(parent, cstr(nodeName.c_str()), 1);
    nodes[v.id] = n;
    set(n, "id", v.id);
    set(n, "shape", v.shape);
    set(n, "style", fx ? "filled,rounded" : "filled");
    set(n, "fillcolor", v.fillColor);
    if (!v.recordLabel.empty()) {
      set(n, "label", exactDot ? v.recordLabel : pictureRecordLabel(v.recordLabel));
    } else {
      set(n, "label", plainLabel(v.lines));
      if (!fx) {
        set(n, "fontname", "Helvetica");
        set(n, "fontsize", "10");
      }
    }
    if (v.fixedWidth > 0 && v.fixedHeight > 0) {
      set(n, "fixedsize", "true");
      set(n, "width", std::to_string(v.fixedWidth / 72.0));
      set(n, "height", std::to_string(v.fixedHeight / 72.0));
    } else if (measure && v.recordLabel.empty()) {
      double w = 0, h = 0;
      for (const std::string& line : v.lines) {
        const TextSize s = (*measure)(line);
        w = std::max(w, s.width);
        h += s.height;
      }
      set(n, "fixedsize", "true");
      set(n, "width", std::to_string((w + 2 * kPadX) / 72.0));
      set(n, "height", std::to_string((h + 2 * kPadY) / 72.0));
    }
  }
  for (const ViewEdge& e : view.edges) {
    auto from = nodes.find(e.from), to = nodes.find(e.to);
    if (from == nodes.end() || to == nodes.end()) continue;
    Agedge_t* edge = agedge(g.get(), from->second, to->second, nullptr, 1);
    if (!e.label.empty()) {
      set(edge, "label", plainLabel({e.label}));
      set(edge, "fontsize", "10");
      if (!fx) set(edge, "fontname", "Helvetica");  // the nodes' font, not Graphviz's default Times
    }
  }
  return g;
}

// The leaf fields of a record node with their text, relative to the node's centre (y down), so a
// viewer draws FxGraphDrawer's records exactly where Graphviz put their separators and lines.
void copyRecordFields(const field_t* f, std::vector<LayoutResult::RecordField>& out) {
  if (!f) return;
  if (f->n_flds > 0) {
    for (int i = 0; i < f->n_flds; ++i) copyRecordFields(f->fld[i], out);
    return;
  }
  LayoutResult::RecordField field;
  field.x = f->b.LL.x;
  field.y = -f->b.UR.y;
  field.width = f->b.UR.x - f->b.LL.x;
  field.height = f->b.UR.y - f->b.LL.y;
  if (const textlabel_t* lp = f->lp; lp && !lp->html)
    for (short i = 0; i < lp->u.txt.nspans; ++i) {
      const textspan_t& span = lp->u.txt.span[i];
      field.lines.emplace_back(span.str ? span.str : "");
      field.justify += span.just ? span.just : 'n';
    }
  out.push_back(std::move(field));
}

}  // namespace

TextMeasure defaultTextMeasure() {
  return [](const std::string& line) {
    // Count code points, not bytes, so keys in other scripts are not measured three times too wide.
    size_t chars = 0;
    for (unsigned char c : line) chars += (c & 0xC0) != 0x80;
    return TextSize{chars * 6.0, 13.0};
  };
}

LayoutResult layoutView(const ViewGraph& view, const TextMeasure& measure) {
  if (view.nodes.size() > kComposeAbove && !view.clusters.empty()) return layoutComposed(view, measure);
  return layoutWithDot(view, measure);
}

LayoutResult layoutWithDot(const ViewGraph& view, const TextMeasure& measure) {
  std::lock_guard<std::mutex> lock(graphvizMutex());
  GVC_t* gvc = context();
  GraphPtr g = buildGraph(view, &measure);
  if (gvLayout(gvc, g.get(), "dot") != 0) throw Error("Graphviz could not lay out the graph");
  LayoutResult out;
  const boxf bb = GD_bb(g.get());
  out.width = bb.UR.x - bb.LL.x;
  out.height = bb.UR.y - bb.LL.y;
  const auto flip = [&](pointf p) { return LayoutResult::Point{p.x - bb.LL.x, bb.UR.y - p.y}; };
  for (Agnode_t* n = agfstnode(g.get()); n; n = agnxtnode(g.get(), n)) {
    const auto c = flip(ND_coord(n));
    LayoutResult::NodeBox box{agnameof(n), c.x, c.y, ND_width(n) * 72.0, ND_height(n) * 72.0, {}, 0};
    if (const char* shape = agget(n, cstr("shape")); shape && std::strcmp(shape, "record") == 0) {
      copyRecordFields(static_cast<const field_t*>(ND_shape_info(n)), box.fields);
      if (ND_label(n)) box.fontSize = ND_label(n)->fontsize;
    }
    out.nodes.push_back(std::move(box));
    for (Agedge_t* e = agfstout(g.get(), n); e; e = agnxtout(g.get(), e)) {
      LayoutResult::EdgePath path;
      path.from = agnameof(agtail(e));
      path.to = agnameof(aghead(e));
      if (const splines* spl = ED_spl(e); spl && spl->size > 0) {
        const bezier& bz = spl->list[0];
        for (int i = 0; i < bz.size; ++i) path.points.push_back(flip(bz.list[i]));
        if (bz.eflag) path.arrowTip = flip(bz.ep);
      }
      if (textlabel_t* label = ED_label(e)) {
        path.label = label->text ? label->text : "";
        path.labelPos = flip(label->pos);
      }
      out.edges.push_back(std::move(path));
    }
  }
  // Clusters, depth first.
  std::vector<Agraph_t*> stack{g.get()};
  while (!stack.empty()) {
    Agraph_t* sg = stack.back();
    stack.pop_back();
    for (Agraph_t* sub = agfstsubg(sg); sub; sub = agnxtsubg(sub)) {
      const boxf b = GD_bb(sub);
      const auto tl = flip(pointf{b.LL.x, b.UR.y});
      const char* title = agget(sub, cstr("label"));
      out.clusters.push_back({agnameof(sub), title ? title : "", tl.x, tl.y, b.UR.x - b.LL.x, b.UR.y - b.LL.y});
      stack.push_back(sub);
    }
  }
  gvFreeLayout(gvc, g.get());
  return out;
}

ExportFormat exportFormatForPath(const std::string& path) {
  const size_t dot = path.rfind('.');
  std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == "svg") return ExportFormat::Svg;
  if (ext == "dot" || ext == "gv") return ExportFormat::Dot;
  if (ext == "png") return ExportFormat::Png;
  if (ext == "pdf") return ExportFormat::Pdf;
  throw Error(path + ": unknown export format \"." + ext + "\"; expected .svg, .dot, .gv, .png or .pdf");
}

namespace {
const char* rendererFor(ExportFormat format) {
  return format == ExportFormat::Svg ? "svg" : format == ExportFormat::Png ? "png:cairo" : "pdf:cairo";
}
}  // namespace

void prepareGraphviz(ExportFormat format) {
  if (format == ExportFormat::Dot) return;  // DOT is written without a layout or fonts
  // Both styles' fonts: fx leaves Graphviz's default (Times), the tdfx style asks for Helvetica.
  static const char kWarmGraph[] =
      "digraph warm { node [shape=record]; a [label=\"{a|b}\"]; b [label=\"b\" fontname=\"Helvetica\"]; a -> b }";
  std::lock_guard<std::mutex> lock(graphvizMutex());
  GVC_t* gvc = context();
  GraphPtr g(agmemread(kWarmGraph));
  if (!g || gvLayout(gvc, g.get(), "dot") != 0) return;  // the real render reports what is wrong
  char* data = nullptr;
  unsigned int length = 0;
  gvRenderData(gvc, g.get(), rendererFor(format), &data, &length);
  if (data) gvFreeRenderData(data);
  gvFreeLayout(gvc, g.get());
}

std::string renderView(const ViewGraph& view, ExportFormat format) {
  // Graphviz would lay a huge graph out again in one slow dot call: draw the composed layout.
  if (format == ExportFormat::Svg && view.nodes.size() > kComposeAbove && !view.clusters.empty())
    return svgFromLayout(view, layoutComposed(view, defaultTextMeasure()));
  std::lock_guard<std::mutex> lock(graphvizMutex());
  GVC_t* gvc = context();
  GraphPtr g = buildGraph(view, nullptr, /*exactDot=*/format == ExportFormat::Dot);
  if (format == ExportFormat::Dot) {
    char* buffer = nullptr;
    size_t size = 0;
    FILE* f = open_memstream(&buffer, &size);
    if (!f) throw Error("cannot allocate memory for the DOT text");
    const int rc = agwrite(g.get(), f);
    std::fclose(f);
    std::string dotText(buffer ? buffer : "", size);
    std::free(buffer);
    if (rc != 0) throw Error("Graphviz could not write the DOT text");
    return dotText;
  }
  if (gvLayout(gvc, g.get(), "dot") != 0) throw Error("Graphviz could not lay out the graph");
  if (format == ExportFormat::Png) {
    // Image tools stop at 16384 pixels a side (ImageMagick's default policy, and others; a detection
    // backbone came out 394 x 20949: issue 57, M), and Cairo's bitmaps at 32767, past which
    // Graphviz scales the picture down to an unreadable one and still succeeds. A picture up to
    // twice the limit is drawn smaller (at a lower dpi: Graphviz reads it when it lays out), its
    // text at half size or more; a larger one is refused (points -> pixels at Graphviz's 96 dpi).
    constexpr double kMostPixels = 16384;
    const boxf bb = GD_bb(g.get());
    const double width = (bb.UR.x - bb.LL.x) * 96.0 / 72.0, height = (bb.UR.y - bb.LL.y) * 96.0 / 72.0;
    const double longest = std::max(width, height);
    if (longest > 2 * kMostPixels) {
      gvFreeLayout(gvc, g.get());
      throw Error("the picture would be " + std::to_string(static_cast<long>(width)) + " x " +
                  std::to_string(static_cast<long>(height)) + " px, more than twice the " +
                  std::to_string(static_cast<long>(kMostPixels)) +
                  " px a side that image tools take, so its text would be too small to read; export SVG or PDF "
                  "instead, or show fewer nodes (--depth)");
    }
    if (longest > kMostPixels) {
      gvFreeLayout(gvc, g.get());
      // A little under the limit: the drawing has a margin (pad) beyond its box, and rounds up.
      agsafeset(g.get(), const_cast<char*>("dpi"), const_cast<char*>(std::to_string(96.0 * (kMostPixels - 64) / longest).c_str()),
                const_cast<char*>(""));
      if (gvLayout(gvc, g.get(), "dot") != 0) throw Error("Graphviz could not lay out the graph");
    }
  }
  const char* renderer = rendererFor(format);
  char* data = nullptr;
  unsigned int length = 0;
  const int rc = gvRenderData(gvc, g.get(), renderer, &data, &length);
  std::string bytes(data ? data : "", data ? length : 0);
  if (data) gvFreeRenderData(data);
  gvFreeLayout(gvc, g.get());
  if (rc != 0 || bytes.empty())
    throw Error(std::string("Graphviz cannot render ") + renderer +
                " (is the cairo plugin, Debian's libgvplugin-pango / graphviz package, installed?)");
  return format == ExportFormat::Svg ? raiseFrameTitles(xmlControlPictures(std::move(bytes))) : bytes;
}

void exportView(const ViewGraph& view, const std::string& path) {
  writeFileAtomically(path, renderView(view, exportFormatForPath(path)));
}

std::string graphvizRuntimeVersion() {
  std::lock_guard<std::mutex> lock(graphvizMutex());
  const char* version = gvcVersion(context());
  return version ? version : "unknown";
}

}  // namespace tdfx
