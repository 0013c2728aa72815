#pragma once
// The main window: graph view in the centre, inspector and code as docks, File/View menus.
// Loading, tracing and layout run on a worker thread; the window stays responsive.
#include <QFutureWatcher>
#include <QMainWindow>
#include <memory>

#include "tdfx/runtime/verify.h"
#include "tdfx/ui/model_session.h"

class QPlainTextEdit;
class QLabel;
class QLineEdit;
class QTableWidget;

namespace tdfx::ui {

class GraphScene;
class GraphView;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  /// `interactive` false: errors go to the status bar and lastError() instead of a dialog (tests).
  explicit MainWindow(bool interactive = true, QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Starts loading `path`; emits modelLoaded or loadFailed. The open model stays until success.
  void openFile(const QString& path);
  /// Writes the current picture (format from the extension) atomically; returns false and
  /// reports the error when it fails.
  bool exportTo(const QString& path);
  void selectNode(const QString& id);
  /// Finds the next view node (after the selection) whose label, id or IR nodes contain `text`,
  /// case-insensitively; selects and centres it. Returns its id, or "" when nothing matches.
  QString findNext(const QString& text);
  /// Runs eager and traced on the model's example inputs (worker thread) and fills the verify
  /// table; emits verified. Plain archives without example inputs report what input is missing.
  void runVerify();
  /// Expands a collapsed scope node in place (double-click does the same).
  void expandScope(const QString& nodeId);
  void setStyle(ViewStyle style);
  /// Shows module scopes expanded down to `depth` (individual expansions are reset).
  void setDepth(int depth);

  GraphScene* scene() const { return scene_; }
  GraphView* view() const { return view_; }
  QPlainTextEdit* codeEditor() const { return code_; }
  QPlainTextEdit* inspector() const { return inspector_; }
  QTableWidget* verifyTable() const { return verifyTable_; }
  const VerifyReport* lastReport() const { return report_ ? report_.get() : nullptr; }
  const ModelSession* session() const { return session_.get(); }
  QString lastError() const { return lastError_; }

 Q_SIGNALS:
  void modelLoaded();
  void loadFailed(const QString& message);
  void verified(bool passed);

 private:
  void buildMenus();
  void onLoaded();
  void showError(const QString& message);
  void showNode(const QString& id);
  void onCodeCursorMoved();
  void relayoutCurrent();

  bool interactive_;
  GraphScene* scene_;
  GraphView* view_;
  QPlainTextEdit* code_;
  QPlainTextEdit* inspector_;
  QLabel* status_;
  QLineEdit* search_;
  QTableWidget* verifyTable_;
  QLabel* verifySummary_;
  std::shared_ptr<VerifyReport> report_;
  struct VerifyOutcome {
    std::shared_ptr<VerifyReport> report;
    QString error;
  };
  QFutureWatcher<VerifyOutcome> verifier_;
  void onVerified();
  std::shared_ptr<ModelSession> session_;
  /// What the worker hands back: a session, or the error message (exceptions stay on the worker).
  struct LoadOutcome {
    std::shared_ptr<ModelSession> session;
    QString error;
  };
  QFutureWatcher<LoadOutcome> loader_;
  QString pendingPath_, lastError_;
  ViewOptions options_;
  bool syncingCode_ = false;
};

}  // namespace tdfx::ui
