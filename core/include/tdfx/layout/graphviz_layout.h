#pragma once
// Graphviz layout and rendering of a ViewGraph. Graphviz is not thread-safe: every call into it
// holds one process-wide lock, so layouts may run on worker threads. Geometry is copied out into
// plain structs and Graphviz's layout freed before the lock is released.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tdfx/layout/view_graph.h"

namespace tdfx {

/// The size of one line of text.
struct TextSize {
  double width = 0, height = 0;  ///< in points (1/72 inch)
};
/// Measures one line of label text; the GUI passes real font metrics, the CLI the default.
/// Called on the thread running the layout while the Graphviz lock is held: it must not call
/// tdfx's layout or rendering functions.
using TextMeasure = std::function<TextSize(const std::string& line)>;
/// An estimate for a 10 pt sans-serif font.
TextMeasure defaultTextMeasure();

/// Geometry in points, origin top-left, y growing downwards. Plain data copied out of Graphviz
/// (Graphviz's own layout is freed before layoutView returns); ids are the ViewGraph's node and
/// cluster ids.
struct LayoutResult {
  struct Point {
    double x = 0, y = 0;
  };
  /// One field of a record node (fx style): its box and its text lines, as Graphviz placed them.
  struct RecordField {
    double x = 0, y = 0, width = 0, height = 0;  ///< top-left corner relative to the node's centre
    std::vector<std::string> lines;
    std::string justify;  ///< per line: 'l' left, 'r' right, 'n' centred
  };
  struct NodeBox {
    std::string id;
    double x = 0, y = 0, width = 0, height = 0;  ///< centre and size
    std::vector<RecordField> fields;  ///< record shapes only, in reading order
    double fontSize = 0;              ///< of the record's text, in points
  };
  struct EdgePath {
    std::string from, to;
    std::vector<Point> points;  ///< cubic bezier control points: p0, (c1, c2, p)...
    std::optional<Point> arrowTip;
    std::string label;
    Point labelPos;
  };
  struct ClusterBox {
    std::string id, title;
    double x = 0, y = 0, width = 0, height = 0;  ///< top-left corner and size
  };
  double width = 0, height = 0;
  std::vector<NodeBox> nodes;
  std::vector<EdgePath> edges;
  std::vector<ClusterBox> clusters;
};

/// Lays the view out with Graphviz `dot`. Node sizes come from `measure` (labels never overflow).
/// Views with more than 1,000 nodes and some clusters are laid out per cluster (one small dot call
/// each) and composed. Safe to call from any thread. Throws tdfx::Error when Graphviz fails.
LayoutResult layoutView(const ViewGraph& view, const TextMeasure& measure = defaultTextMeasure());

/// The file formats renderView and exportView write.
enum class ExportFormat { Svg, Dot, Png, Pdf };
/// The format for a file name's extension (.svg, .dot/.gv, .png, .pdf); throws tdfx::Error otherwise.
ExportFormat exportFormatForPath(const std::string& path);

/// The picture as bytes: DOT (re-readable by `dot`, not laid out), or SVG/PNG/PDF rendered by
/// Graphviz (cairo for PNG/PDF). In SVG each node's element has its IR node name as id.
/// SVG of a large clustered view is drawn by tdfx from the composed layout. Throws tdfx::Error
/// when Graphviz cannot lay out, write or render (e.g. the cairo plugin is missing).
std::string renderView(const ViewGraph& view, ExportFormat format);

/// Loads what Graphviz's first render in `format` needs (its plugins; for text, pango, cairo and
/// fontconfig, about 0.1 s) by rendering a two-node graph. A caller that will render soon runs it
/// on another thread while it waits for something else (tdfx-cli: the model worker's load).
/// Thread-safe; failures are left to the real render to report.
void prepareGraphviz(ExportFormat format);

/// Renders and writes atomically (temporary file in the same folder, then rename): a failed
/// export never leaves a partial file and never replaces an existing one. Throws tdfx::Error
/// naming the path and the reason (also for an unknown extension or a failed render).
void exportView(const ViewGraph& view, const std::string& path);

/// Writes `bytes` to `path` atomically (see exportView). Throws tdfx::Error naming the path when
/// the folder is not writable or a write, fsync or rename fails; the temporary file is removed.
void writeFileAtomically(const std::string& path, const std::string& bytes);

}  // namespace tdfx
