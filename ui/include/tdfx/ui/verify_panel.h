#pragma once
// The Verify dock: editable inputs (key, shape, dtype; prefilled from the model file), seed and
// tolerances, and "Run eager vs traced", which runs both passes on a worker thread and lists every
// out key. The same run records each traced node's output shapes and time for the graph overlays.
#include <QFutureWatcher>
#include <QThreadPool>
#include <QWidget>
#include <memory>
#include <vector>

#include "tdfx/runtime/graph_module.h"
#include "tdfx/runtime/verify.h"

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QStackedWidget;
class QPlainTextEdit;
class QToolButton;
class QTableWidget;

namespace tdfx::ui {

struct ModelSession;

/// What a run hands back to the GUI thread: a report and per-node records, or the error.
struct VerifyRun {
  std::shared_ptr<const ModelSession> session;  ///< the model it ran on
  std::shared_ptr<VerifyReport> report;
  std::vector<NodeRunRecord> records;  ///< the traced graph on the same inputs (by node index)
  QString error;
};

class VerifyPanel : public QWidget {
  Q_OBJECT
 public:
  explicit VerifyPanel(QWidget* parent = nullptr);
  ~VerifyPanel() override;

  /// Shows `session`'s example inputs and clears the results (null: nothing open). Keys without an
  /// example (plain archives) get the shapes last run on this file, else a guess from the model's
  /// first Conv or Linear layer.
  void setSession(std::shared_ptr<const ModelSession> session);
  /// Whether the inputs of each run are remembered per file (QSettings); off in tests by default.
  void setRememberInputs(bool on) { rememberInputs_ = on; }
  /// Starts a run with the inputs, seed and tolerances shown; does nothing while one runs.
  void run();
  bool isRunning() const { return watcher_.isRunning(); }
  /// Stops a run in progress: kills the model's worker process (restarted by the next run).
  void cancel();
  /// The specs in the input table; throws tdfx::Error naming the row that does not parse.
  std::vector<InputSpec> inputSpecs() const;
  /// Inputs given with their values: a file torch.save wrote (a dict {"input.x": tensor} or a
  /// tuple of pairs), as tdfx-cli --input-values reads it. Its tensors are the inputs of their keys
  /// in each run, values included; the rows of the other keys are drawn. Empty: none. Cleared
  /// when another model is opened. The "Values..." button chooses it (cancel clears it).
  void setInputValuesFile(const QString& path);
  QString inputValuesFile() const { return valuesFile_; }

  QTableWidget* inputTable() const { return inputs_; }
  QTableWidget* resultTable() const { return results_; }
  QSpinBox* seedBox() const { return seed_; }
  /// Checked (the default): torch's generator is seeded before each pass, so random ops agree.
  QCheckBox* seedRandomBox() const { return seedRandom_; }
  QCheckBox* timeBox() const { return time_; }
  QDoubleSpinBox* atolBox() const { return atol_; }
  /// The one-line outcome as plain text (PASSED / FAILED / the cause of an error).
  QString summary() const { return summaryText_; }
  /// The whole error (a TorchScript traceback) behind "Details"; empty when there is none.
  QString errorDetail() const;
  /// Whether the detail is shown in place of the result table.
  bool detailShown() const;

 Q_SIGNALS:
  void finished(const tdfx::ui::VerifyRun& run);

 private:
  void onFinished();
  void showReport(const VerifyReport& report);
  void addInputRow(const QString& key, const QString& shape, const QString& dtype);
  /// The rows last run on this file ("key=shape:dtype"), when remembered.
  QStringList rememberedRows() const;
  /// The input table as KEY=SHAPE:DTYPE rows.
  QStringList inputRows() const;
  /// Keeps `rows` for this file (QSettings), offered when it is opened again.
  void rememberRows(const QStringList& rows) const;
  QStringList ranRows_;  ///< the rows of the run in progress
  enum class Outcome { Info, Passed, NotProven, Failed, Error };
  /// Sets the one-line summary (coloured by `outcome`) and the detail behind "Details".
  void setSummary(const QString& text, Outcome outcome, const QString& detail = {});

  std::shared_ptr<const ModelSession> session_;
  QTableWidget* inputs_;
  QSpinBox* seed_;
  QCheckBox* seedRandom_;
  QCheckBox* time_;
  QDoubleSpinBox* atol_;
  QDoubleSpinBox* rtol_;
  QPushButton* runButton_;
  QPushButton* cancelButton_;
  QPushButton* valuesButton_;
  QString valuesFile_;
  QProgressBar* progress_;
  QTableWidget* results_;
  QLabel* summary_;
  QString summaryText_;
  QToolButton* detailButton_;
  QStackedWidget* resultStack_;  ///< the result table, or the error's detail in its place
  QPlainTextEdit* detail_;
  bool rememberInputs_ = false;
  QThreadPool pool_;  // its own: a long run never takes a thread from the global pool
  QFutureWatcher<VerifyRun> watcher_;
};

}  // namespace tdfx::ui
