#pragma once
// The Inspector's text for one IR node.
#include <QString>
#include <QTextBrowser>
#include <map>
#include <string>

#include "tdfx/codegen/python_code.h"
#include "tdfx/ir/graph.h"
#include "tdfx/ir/node.h"
#include "tdfx/layout/view_graph.h"
#include "tdfx/ui/model_session.h"

namespace tdfx::ui {

/// Name, op, target, args, kwargs, users, tensordict key, module (path, type, constants),
/// parameters and buffers (shape, dtype, count and the min / max / mean the model worker read), the
/// source location and line, the schema, recorded output shapes and time, and the line of code.
/// The run's shapes and time come from `run` (none when null), the statistics from `stats`.
std::string describeNode(const Node& node, const PythonCode& code, const RunOverlay* run = nullptr,
                         const ParameterStatsMap* stats = nullptr);

/// describeNode as rich text with links: args and users ("node:NAME"), the module path
/// ("scope:PATH"), and the source and code lines ("code:LINE").
QString describeNodeHtml(const Node& node, const PythonCode& code, const RunOverlay* run = nullptr,
                         const ParameterStatsMap* stats = nullptr);

/// A collapsed module scope: its type, the nodes inside, parameter count and size, the shapes of
/// the values entering and leaving it after a run, and the modules inside by type, counted.
QString describeScope(const ViewNode& scope, const Graph& graph, const std::map<std::string, std::string>& scopeTypes,
                      const RunOverlay* run = nullptr);

/// The hover card of view node `id` (rich text, a few lines): op and target; the shapes and dtypes
/// coming in and going out (after a run, or the load's example run); its parameters; its source
/// line. A collapsed module: its type and size. Empty for an id the session does not draw.
QString hoverCardHtml(const ModelSession& session, const QString& id);

/// Shows view node `id` of `session` in `inspector`: an op's description, a collapsed module's, a
/// key's; the id alone for anything else.
void inspectViewNode(QTextBrowser* inspector, const ModelSession& session, const QString& id);

}  // namespace tdfx::ui
