#pragma once
// The main window: graph view in the centre; Code, Inspector, Keys and Verify docks; File, View,
// Go and Help menus. Loading, tracing, layout and verification run on worker threads; the window
// stays responsive and a load can be cancelled.
#include <QHash>
#include <QMainWindow>
#include <QPointer>
#include <QSet>
#include <QStringList>
#include <memory>
#include <optional>

#include "tdfx/runtime/verify.h"
#include "tdfx/ui/file_follower.h"
#include "tdfx/ui/model_loader.h"
#include "tdfx/ui/export_jobs.h"
#include <functional>
#include "tdfx/ui/model_session.h"
#include "tdfx/worker/model_diff.h"

class QLabel;
class QListWidget;
class QLineEdit;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QTableWidget;
class QTabWidget;
class QUrl;
class QTextBrowser;
class QSpinBox;
class QTimer;
class QToolButton;

namespace tdfx::ui {

class CompareWindow;
class DockShare;
class FileFollower;
class GraphScene;
class GraphView;
class KeysPanel;
class StatusLine;
class CodePanel;
class Relayouter;
class RecentFiles;
class SearchController;
struct ViewToggles;
class SelectionHistory;
class VerifyPanel;
struct VerifyRun;
class SpareWorker;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  enum class Theme { System, Light, Dark };

  /// `interactive` false: errors go to the status bar and lastError() instead of a dialog, and
  /// settings (recent files, window state) are neither read nor written (tests).
  explicit MainWindow(bool interactive = true, QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Starts loading `path` on a worker thread; emits modelLoaded, loadFailed or loadCancelled.
  /// The open model stays until the new one has loaded.
  void openFile(const QString& path);
  /// Shows file `path` as `name` (the title, the status bar), and never adds it to File > Open
  /// Recent: tdfx.show's temporary copy of a module, named after the module's class (--name).
  void nameFile(const QString& path, const QString& name);
  /// Stops waiting for the load in progress: its result is dropped, the open model stays.
  void cancelLoad();
  bool isLoading() const;
  /// Time and memory limits of the model worker processes started from now on.
  void setWorkerLimits(const WorkerLimits& limits);
  /// The warmed worker kept for the next open (on in the app, off by default in tests).
  SpareWorker* spareWorker() const { return loader_->spare(); }
  /// Starts writing the current picture (format from the extension: svg, png, pdf, dot)
  /// atomically on a thread of its own; emits exported when done, and the status bar (or the
  /// error) says how it went. False, and nothing started, with no model open or while another
  /// export runs. The window goes on meanwhile: no nested event loop waits for it.
  bool exportTo(const QString& path);
  /// The picture as shown: the view with the overlays on (time colouring, its legend), as exported.
  ViewGraph shownView() const;
  /// What File > Export suggests: the model's name with `extension`, beside the model file.
  QString suggestedExportPath(const QString& extension) const;
  /// Starts writing the generated Python code atomically, as exportTo.
  bool exportCode(const QString& path);
  /// Starts writing the traced graph as a TorchScript archive (built by the model's worker)
  /// atomically, as exportTo; never over the model file itself. File > Export as TorchScript.
  bool exportTorchScript(const QString& path);

  void selectNode(const QString& id);
  /// Follows an inspector link (tests; a click does the same).
  void openInspectorLink(const QString& href);
  /// Finds the next (or previous) view node after the selection whose label, id, IR nodes,
  /// targets, op kinds, module types or keys contain `text`, case-insensitively; selects and
  /// centres it and marks every match. Returns its id, or "" when nothing matches.
  QString findNext(const QString& text);
  QString findPrevious(const QString& text);
  /// The view nodes matching the last search.
  QStringList searchMatches() const;
  /// Search text as a regular expression (case-insensitive) instead of plain text.
  void setSearchRegex(bool on);
  /// The toolbar's search field: typing searches live (debounced), Enter and F3 go to the next match.
  QLineEdit* searchField() const;
  /// The match count shown beside the search field (" 3 of 12 ", " no match ", ...).
  QString searchCountText() const;
  /// Back and forward through the selections made (Alt+Left / Alt+Right).
  void goBack();
  void goForward();

  /// File > Compare...: compares the open model with `path` (another worker, on a worker thread);
  /// emits compared with the report. Changed and removed nodes become the search matches, so
  /// F3 walks through them.
  void compareWith(const QString& path);
  QString lastComparison() const { return lastComparison_; }
  /// A file dropped on a side of the compare window: on B, compared with the open model; on A, opened
  /// here and then compared with B.
  void compareDropped(int side, const QString& path);
  /// Copies the selected node's name (or its line of code) to the clipboard; returns what was copied.
  QString copySelected(bool codeLine);
  /// The side-by-side window of the last comparison (null before one, or once closed).
  CompareWindow* compareWindow() const;
  /// View > Follow file changes (on by default): the open file is reopened when it changes on
  /// disk, in a fresh worker, keeping the selection, zoom and collapsed modules, and what changed
  /// against the previous version is marked and listed in the Changes panel.
  void setFollowFileChanges(bool on);
  /// Shrinks and moves the window into its screen's available area (done after restoring a saved
  /// geometry, which may come from a larger screen or another scale factor).
  void keepOnScreen();
  /// The graph keeps at least about half the window: the docks beside and below it shrink, and
  /// get their sizes back when the window grows again.
  void giveTheGraphItsShare();
  bool followsFileChanges() const;
  /// The Changes panel: one row per difference from the previous version of the followed file.
  QListWidget* changesList() const { return changesList_; }
  /// Runs eager and traced with the Verify panel's inputs (worker thread); emits verified.
  void runVerify();
  /// Expands a collapsed scope node, or a shape node, in place (double-click does the same).
  void expandScope(const QString& nodeId);
  /// Collapses module scope `scope` (e.g. "layer1" or "0.module.layer1.0") into one node.
  void collapseScope(const QString& scope);
  void setStyle(ViewStyle style);
  void setRankdir(const QString& rankdir);
  /// Shows module scopes expanded down to `depth` (individual expansions are reset).
  void setDepth(int depth);
  void setExpandAll(bool on);
  /// Edge labels with each value's shape and dtype (needs a verify run; runs one when none was made).
  void setShapesShown(bool on);
  /// View > Show input checks: draw torch._assert and what only feeds it (off: a badge on the
  /// node they check).
  void setChecksShown(bool on);
  /// View > Show shape arithmetic: draw size computations as nodes (off: one "shape" node per use,
  /// which expandScope opens).
  void setShapeArithmeticShown(bool on);
  /// Colours nodes by their time in the last verify run.
  void setTimeOverlay(bool on);
  void setTheme(Theme theme);
  /// The About box's text: tdfx, LibTorch, Qt and Graphviz versions.
  static QString aboutText();

  GraphScene* scene() const { return scene_; }
  GraphView* view() const { return view_; }
  /// The toolbar's depth box: module scopes expanded down to its value.
  QSpinBox* depthBox() const;
  QPlainTextEdit* codeEditor() const;
  QPlainTextEdit* graphText() const;
  QTextBrowser* inspector() const { return inspector_; }
  /// The Model panel: file, format, parameters, keys and shapes.
  QTextBrowser* modelPanel() const { return modelPanel_; }
  KeysPanel* keysPanel() const { return keys_; }
  VerifyPanel* verifyPanel() const { return verify_; }
  QTableWidget* verifyTable() const;
  const VerifyReport* lastReport() const { return session_ && session_->report ? session_->report.get() : nullptr; }
  const ModelSession* session() const { return session_.get(); }
  QString lastError() const { return lastError_; }
  QStringList recentFiles() const;
  QString statusText() const;

 Q_SIGNALS:
  void modelLoaded();
  /// The open model's parameter statistics arrived from its worker (the inspector shows them).
  void parameterStatsShown();
  void loadFailed(const QString& message);
  void loadCancelled();
  void verified(bool passed);
  /// The followed file is gone (deleted or moved); the window shows its last version.
  void followedFileGone(const QString& path);
  /// A comparison finished: the report (or the error), and whether it ran.
  void compared(const QString& report, bool ok);
  /// A new picture is shown after a change of style, direction, hierarchy or overlays (laid out
  /// on a worker thread).
  void viewChanged();
  /// An export finished: its file, and whether it was written (else lastError says why).
  void exported(const QString& path, bool ok);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  // main_window_menus.cpp
  void buildMenus();
  void restoreSettings();
  void saveSettings() const;
  void showNodeMenu(const QString& id, const QPoint& screenPos);
  // main_window.cpp
  void onLoaded(const LoadOutcome& outcome);
  void onVerified(const VerifyRun& run);
  void showNode(const QString& id);
  void clearInspector();
  /// After a new picture of the same model: the inspector and the code follow what is selected
  /// now, and never show a node the picture no longer draws.
  void showSelectionAfterRelayout();
  /// The code's cursor is on IR node `name`'s statement: select the node showing it.
  void onCodeNodeChosen(const QString& name);
  /// A link in the inspector: node:NAME selects it, scope:PATH shows that module, code:LINE opens
  /// the code at that line.
  void followInspectorLink(const QUrl& url);
  /// Puts the Python code's cursor on `line` (1-based) and shows the Code tab.
  void showCodeLine(int line);
  /// What the window calls file `path`: its nameFile() name, else its file name.
  QString nameOf(const QString& path) const;
  /// The followed file is gone (deleted or moved): the title and the status bar say so.
  void onFileGone(const QString& path);
  QString layoutNote() const;  // "; why the fallback layout is shown", or ""
  /// A new picture of the open model for options_; `selectAfter` is selected in it.
  void relayoutCurrent(const QString& selectAfter = {});
  void showLayout(std::shared_ptr<SessionLayout> layout, const QString& selectAfter);
  void showSession();
  void applyOverlays();
  /// The view's legend: the shown picture's colours, then the marks in use.
  void refreshLegend();
  /// The open model's folder (where Open and Compare dialogs start); "" with none open.
  QString modelFolder() const;
  /// After the code is set: the selected node's line highlighted, else the listing from `def`.
  void showCodeStart();
  /// Each view node's share of the slowest node's time in the last run (time overlay on only).
  QHash<QString, double> timeFractions() const;
  void markKeys(const std::vector<NestedKey>& keys);
  /// View nodes that read or write any of `keys` (computing nodes, reads, out-key nodes).
  QSet<QString> viewIdsUsingKeys(const std::vector<NestedKey>& keys) const;
  void resetRunOverlays();
  /// The drawn nodes that read or write any of `keys`.
  QSet<QString> keyUseNodes(const std::vector<NestedKey>& keys) const;
  void showError(const QString& message, bool failedLoad);
  QSet<QString> viewIdsOf(const std::vector<std::string>& irNodes) const;
  /// The view node showing IR node `ir` in the picture; "" when none does.
  QString viewIdOf(const QString& ir) const;
  void selectAndCenter(const QString& id);
  /// The view node showing `id`: itself when drawn, else the collapsed scope holding that IR node.
  QString shownAs(const QString& id) const;
  /// Shows history entry `id` (selection, inspector, code), which is drawn.
  void revisit(const QString& id);
  /// Back (or Forward) to the nearest entry drawn now.
  void stepThroughHistory(bool back);

  bool interactive_;
  DockShare* dockShare_ = nullptr;
  GraphScene* scene_;
  GraphView* view_;
  CodePanel* code_;
  QTextBrowser* inspector_;
  QTextBrowser* modelPanel_;
  void showModelSummary();
  KeysPanel* keys_;
  VerifyPanel* verify_;
  StatusLine* status_;  ///< the status bar's text, and its busy bar and Cancel while a file loads
  SearchController* search_ = nullptr;  ///< the toolbar's search
  std::unique_ptr<ViewToggles> toggles_;  ///< the View menu's options

  std::shared_ptr<ModelSession> session_;
  void startLoad(const QString& path, std::shared_ptr<ModelSession> previous);
  void showLoaded(const LoadOutcome& outcome);
  void buildFollowing(QMenu* viewMenu);
  /// Esc, copy, zoom to selection and the wheel (main_window_keys.cpp).
  void buildHabits(QMenu* viewMenu, QMenu* go);
  /// Follows `path`, `seen` being the version last read (a load's: the file as the load began);
  /// none: the file as it is now.
  void followFile(const QString& path, const std::optional<FileStamp>& seen = std::nullopt);
  /// A reload's result: the new version shown where the old one was, its changes marked; a
  /// failed reload keeps the last good graph and says why.
  void showReload(const LoadOutcome& outcome);
  void markChanges(const ModelDiff& changes);
  FileFollower* follower_ = nullptr;
  QListWidget* changesList_ = nullptr;
  Relayouter* layouts_ = nullptr;  ///< new pictures of the open model
  /// Opens, reloads, compares and parameter statistics, each in a worker process.
  ModelLoader* loader_ = nullptr;
  /// Shows the depth of the picture in the toolbar's box (without acting on it).
  void syncDepthBox();
  QString lastError_;
  QString lastComparison_;
  QPointer<CompareWindow> compareWindow_;
  /// The last compare's findings on this model (side A), or a reload's on the new version: drawn as
  /// compare draws them until another model is opened.
  DiffMarks diffMarks_;
  void onParameterStats(const std::shared_ptr<ModelSession>& session, const std::vector<ParameterStats>& stats);
  void onCompared(const CompareOutcome& outcome);
  /// Starts an export job, or says why not (another one runs).
  bool startExport(const QString& path, std::function<std::string()> write);
  void onExported(const ExportResult& result);
  ExportJobs* exports_ = nullptr;  ///< File > Export's jobs, one at a time
  RecentFiles* recent_ = nullptr;  ///< File > Open Recent, and nameFile()'s name
  ViewOptions options_;
  SelectionHistory* history_ = nullptr;  ///< Back and Forward
  QString viewAnchor_;  ///< the IR node in the view's middle when a relayout with nothing selected began
};

}  // namespace tdfx::ui
