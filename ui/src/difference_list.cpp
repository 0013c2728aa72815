#include "tdfx/ui/difference_list.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMap>
#include <QSignalBlocker>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "tdfx/ui/difference_rows.h"

namespace tdfx::ui {

namespace {
constexpr int kRoleA = Qt::UserRole;      // IR node name on side A ("" for none)
constexpr int kRoleB = Qt::UserRole + 1;  // on side B
constexpr int kRoleLeaf = Qt::UserRole + 2;
}  // namespace

DifferenceList::DifferenceList(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("differences"));
  filter_ = new QComboBox(this);
  filter_->addItems({tr("All differences"), tr("Nodes"), tr("Parameters"), tr("Buffers")});
  filter_->setToolTip(tr("Show only the differences of one kind"));
  count_ = new QLabel(this);
  tree_ = new QTreeWidget(this);
  tree_->setHeaderHidden(true);
  tree_->setColumnCount(1);
  tree_->setUniformRowHeights(true);
  tree_->header()->setStretchLastSection(true);
  auto* bar = new QHBoxLayout;
  bar->addWidget(count_, 1);
  bar->addWidget(filter_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(bar);
  layout->addWidget(tree_, 1);
  connect(filter_, &QComboBox::currentIndexChanged, this, [this] { rebuild(); });
  connect(tree_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
    if (item && item->data(0, kRoleLeaf).toBool())
      Q_EMIT chosen(item->data(0, kRoleA).toString(), item->data(0, kRoleB).toString());
  });
}

void DifferenceList::setRows(const std::vector<DifferenceRow>& rows, const QString& identical) {
  rows_ = rows;
  identical_ = identical;
  rebuild();
}

void DifferenceList::setFilter(Filter filter) { filter_->setCurrentIndex(static_cast<int>(filter)); }

void DifferenceList::rebuild() {
  tree_->clear();
  const auto filter = static_cast<Filter>(filter_->currentIndex());
  const auto wanted = [filter](DifferenceRow::Kind kind) {
    switch (filter) {
      case Filter::Nodes: return kind == DifferenceRow::Kind::Node;
      case Filter::Parameters: return kind == DifferenceRow::Kind::Parameter;
      case Filter::Buffers: return kind == DifferenceRow::Kind::Buffer;
      default: return true;
    }
  };
  // Groups in the order their first row comes (the diff's: the graph's order), not alphabetically:
  // layer10 after layer9.
  QMap<QString, QTreeWidgetItem*> groups;
  QList<QTreeWidgetItem*> order;
  int shown = 0;
  for (const DifferenceRow& row : rows_) {
    if (!wanted(row.kind)) continue;
    QTreeWidgetItem*& group = groups[row.group];
    if (!group) {
      group = new QTreeWidgetItem;
      group->setData(0, Qt::UserRole + 3, row.group);
      group->setFlags(Qt::ItemIsEnabled);
      order << group;
    }
    auto* leaf = new QTreeWidgetItem(group, {row.text});
    leaf->setData(0, kRoleA, row.irA);
    leaf->setData(0, kRoleB, row.irB);
    leaf->setData(0, kRoleLeaf, true);
    leaf->setToolTip(0, row.text);
    ++shown;
  }
  for (QTreeWidgetItem* group : order) {
    group->setText(0, tr("%1 (%2)").arg(groupTitle(group->data(0, Qt::UserRole + 3).toString())).arg(group->childCount()));
    QFont bold = group->font(0);
    bold.setBold(true);
    group->setFont(0, bold);
  }
  tree_->addTopLevelItems(order);
  tree_->expandAll();
  if (rows_.empty()) {
    tree_->addTopLevelItem(new QTreeWidgetItem({identical_}));
    count_->setText(tr("identical"));
  } else if (shown == static_cast<int>(rows_.size())) {
    count_->setText(tr("%1 difference(s) in %2 module(s)").arg(rows_.size()).arg(order.size()));
  } else {
    count_->setText(tr("%1 of %2 difference(s) shown").arg(shown).arg(rows_.size()));
  }
}

QList<QTreeWidgetItem*> DifferenceList::leaves() const {
  QList<QTreeWidgetItem*> out;
  for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
    QTreeWidgetItem* group = tree_->topLevelItem(i);
    for (int j = 0; j < group->childCount(); ++j) out << group->child(j);
  }
  return out;
}

QStringList DifferenceList::shownRows() const {
  QStringList out;
  for (const QTreeWidgetItem* leaf : leaves()) out << leaf->text(0);
  if (rows_.empty() && tree_->topLevelItemCount() > 0) out << tree_->topLevelItem(0)->text(0);
  return out;
}

QStringList DifferenceList::groupTitles() const {
  QStringList out;
  if (rows_.empty()) return out;
  for (int i = 0; i < tree_->topLevelItemCount(); ++i) out << tree_->topLevelItem(i)->text(0);
  return out;
}

bool DifferenceList::selectRow(int index) {
  const QList<QTreeWidgetItem*> all = leaves();
  if (index < 0 || index >= all.size()) return false;
  tree_->setCurrentItem(all[index]);
  tree_->scrollToItem(all[index]);
  return true;
}

QString DifferenceList::selectedRow() const {
  const QTreeWidgetItem* item = tree_->currentItem();
  return item && item->isSelected() && item->data(0, kRoleLeaf).toBool() ? item->text(0) : QString();
}

void DifferenceList::clearSelection() {
  const QSignalBlocker quiet(tree_);
  tree_->clearSelection();
  tree_->setCurrentItem(nullptr);
}

}  // namespace tdfx::ui
