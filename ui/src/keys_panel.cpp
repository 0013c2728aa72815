#include "tdfx/ui/keys_panel.h"

#include "error_text.h"

#include <algorithm>
#include <set>

namespace tdfx::ui {

namespace {

constexpr int kKeyRole = Qt::UserRole;        // QStringList of the key's parts, on leaf items
constexpr int kGroupRole = Qt::UserRole + 1;  // "inputs", "intermediates", "outputs", on group items

QTreeWidgetItem* childNamed(const QTreeWidgetItem* parent, const QString& text) {
  for (int i = 0; i < parent->childCount(); ++i)
    if (parent->child(i)->text(0) == text) return parent->child(i);
  return nullptr;
}

void collectKeys(const QTreeWidgetItem* item, std::vector<NestedKey>& keys) {
  const QStringList parts = item->data(0, kKeyRole).toStringList();
  if (!parts.isEmpty()) {
    std::vector<std::string> p;
    for (const QString& s : parts) p.push_back(s.toStdString());
    keys.emplace_back(std::move(p));
  }
  for (int i = 0; i < item->childCount(); ++i) collectKeys(item->child(i), keys);
}

void addKey(QTreeWidgetItem* group, const NestedKey& key) {
  QTreeWidgetItem* parent = group;
  QStringList sofar;
  for (const std::string& part : key.parts()) {
    const QString text = QString::fromStdString(part);
    sofar << text;
    QTreeWidgetItem* child = childNamed(parent, text);
    if (!child) child = new QTreeWidgetItem(parent, {text});
    parent = child;
  }
  parent->setData(0, kKeyRole, sofar);
  parent->setToolTip(0, plainToolTip(QString::fromStdString(keyRepr(key))));
}

}  // namespace

std::vector<std::string> nodesUsingKey(const TracedGraph& traced, const NestedKey& key) {
  std::vector<std::string> names;
  if (!traced.graph) return names;
  for (const auto& node : traced.graph->nodes())
    if (node->meta().tensordictKey && *node->meta().tensordictKey == key) names.push_back(node->name());
  for (const TracedGraph::KeyWrite& w : traced.writes)
    if (w.key == key && w.node) names.push_back(w.node->name());
  return names;
}

KeysPanel::KeysPanel(QWidget* parent) : QTreeWidget(parent) {
  setHeaderLabels({tr("key")});
  setHeaderHidden(true);
  connect(this, &QTreeWidget::currentItemChanged, this, [this] { Q_EMIT keysSelected(selectedKeys()); });
}

void KeysPanel::setKeys(const TracedGraph& traced, const std::vector<NestedKey>& inKeys) {
  const QSignalBlocker blocker(this);
  clear();
  if (!traced.graph) return;
  // Intermediates: keys one TensorDictModule writes and a later one reads (they may be outputs too).
  std::vector<NestedKey> intermediates;
  std::set<NestedKey> written;
  for (const TracedGraph::ModuleInfo& m : traced.modules) {
    for (const NestedKey& k : m.inKeys)
      if (written.count(k) && std::find(intermediates.begin(), intermediates.end(), k) == intermediates.end())
        intermediates.push_back(k);
    written.insert(m.outKeys.begin(), m.outKeys.end());
  }
  const auto group = [this](const QString& name, const std::vector<NestedKey>& keys) {
    auto* item = new QTreeWidgetItem(this, {name});
    item->setData(0, kGroupRole, name);
    QFont bold = item->font(0);
    bold.setBold(true);
    item->setFont(0, bold);
    for (const NestedKey& k : keys) addKey(item, k);
    item->setText(0, QStringLiteral("%1 (%2)").arg(name).arg(keys.size()));
  };
  group(QStringLiteral("inputs"), inKeys);
  group(QStringLiteral("intermediates"), intermediates);
  group(QStringLiteral("outputs"), traced.outKeys);
  expandAll();
}

std::vector<NestedKey> KeysPanel::selectedKeys() const {
  std::vector<NestedKey> keys;
  if (const QTreeWidgetItem* item = currentItem()) collectKeys(item, keys);
  return keys;
}

QTreeWidgetItem* KeysPanel::itemFor(const QString& group, const NestedKey& key) const {
  for (int g = 0; g < topLevelItemCount(); ++g) {
    QTreeWidgetItem* item = topLevelItem(g);
    if (item->data(0, kGroupRole).toString() != group) continue;
    for (const std::string& part : key.parts())
      if (!(item = childNamed(item, QString::fromStdString(part)))) return nullptr;
    return item;
  }
  return nullptr;
}

}  // namespace tdfx::ui
