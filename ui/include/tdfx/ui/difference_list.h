#pragma once
// Compare's list of differences: grouped by module (each group titled with its count), filtered by
// kind (nodes, parameters, buffers), one row per finding. Choosing a row tells the window which
// node it shows on each side.
#include <QWidget>
#include <vector>

#include "tdfx/ui/difference_rows.h"

class QComboBox;
class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace tdfx::ui {

class DifferenceList : public QWidget {
  Q_OBJECT
 public:
  enum class Filter { All, Nodes, Parameters, Buffers };

  explicit DifferenceList(QWidget* parent = nullptr);
  /// Shows `rows`; none: the one line `identical`.
  void setRows(const std::vector<DifferenceRow>& rows, const QString& identical);
  void setFilter(Filter filter);
  /// How many findings there are, whatever the filter shows.
  int rowCount() const { return static_cast<int>(rows_.size()); }
  /// The rows shown, in order (group titles left out).
  QStringList shownRows() const;
  /// The groups shown: "layer2.1 (3)".
  QStringList groupTitles() const;
  /// Selects the `index`th row shown (the window then shows its nodes); false when there is none.
  bool selectRow(int index);
  /// The text of the selected row, "" for none.
  QString selectedRow() const;
  void clearSelection();
  QTreeWidget* tree() const { return tree_; }

 Q_SIGNALS:
  /// A row was chosen: the IR node to show on side A and on side B ("" for none).
  void chosen(const QString& irA, const QString& irB);

 private:
  void rebuild();
  QList<QTreeWidgetItem*> leaves() const;

  QComboBox* filter_ = nullptr;
  QLabel* count_ = nullptr;
  QTreeWidget* tree_ = nullptr;
  std::vector<DifferenceRow> rows_;
  QString identical_;
};

}  // namespace tdfx::ui
