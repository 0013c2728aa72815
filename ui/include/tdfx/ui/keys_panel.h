#pragma once
// The Keys dock: the TensorDict's inputs, intermediates and outputs as a tree (nested keys nested).
// Selecting a key (or a group of keys) asks the window to highlight the nodes that read or write it.
#include <QTreeWidget>
#include <vector>

#include "tdfx/tensordict/nested_key.h"
#include "tdfx/trace/symbolic_trace.h"

namespace tdfx::ui {

/// The names of the IR nodes that read `key` (tensordict getitem) or compute a value written to it.
std::vector<std::string> nodesUsingKey(const TracedGraph& traced, const NestedKey& key);

class KeysPanel : public QTreeWidget {
  Q_OBJECT
 public:
  explicit KeysPanel(QWidget* parent = nullptr);
  /// Lists the keys of a traced module whose in keys are `inKeys`; an empty traced graph clears.
  void setKeys(const TracedGraph& traced, const std::vector<NestedKey>& inKeys);
  /// The key items' keys under the current item (one key for a leaf).
  std::vector<NestedKey> selectedKeys() const;
  /// The item of `key` in group `group` ("inputs", "intermediates", "outputs"), or null.
  QTreeWidgetItem* itemFor(const QString& group, const NestedKey& key) const;

 Q_SIGNALS:
  void keysSelected(const std::vector<tdfx::NestedKey>& keys);
};

}  // namespace tdfx::ui
