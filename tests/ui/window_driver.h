#pragma once
// Drives the real MainWindow in tests: open a file or run verify and wait for the worker.
#include <QFile>
#include <QSignalSpy>
#include <QTest>
#include <string>

#include "support/synthetic_graph.h"
#include "tdfx/layout/graphviz_layout.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "tdfx/ui/main_window.h"

namespace tdfx::ui {

inline bool openAndWait(MainWindow& w, const std::string& file) {
  QSignalSpy loaded(&w, &MainWindow::modelLoaded);
  QSignalSpy failed(&w, &MainWindow::loadFailed);
  w.openFile(QString::fromStdString(file));
  for (int i = 0; i < 600 && loaded.isEmpty() && failed.isEmpty(); ++i) QTest::qWait(50);
  return !loaded.isEmpty();
}

/// Runs verify; true when it finished and passed.
inline bool verifyAndWait(MainWindow& w) {
  QSignalSpy done(&w, &MainWindow::verified);
  w.runVerify();
  for (int i = 0; i < 600 && done.isEmpty(); ++i) QTest::qWait(50);
  return !done.isEmpty() && done.first().first().toBool();
}

/// Calls `start` (exportTo, exportCode or exportTorchScript) and waits for the export; true when it
/// started and wrote its file. The export is asynchronous: it has not finished when `start` returns.
template <typename Start>
bool exportAndWait(MainWindow& w, Start start) {
  QSignalSpy exported(&w, &MainWindow::exported);
  if (!start()) return false;
  for (int i = 0; i < 600 && exported.isEmpty(); ++i) QTest::qWait(20);
  return !exported.isEmpty() && exported.first().at(1).toBool();
}

/// Calls `change` (a style, direction or hierarchy change) and waits for the new picture.
template <typename Change>
bool relayoutAndWait(MainWindow& w, Change change) {
  QSignalSpy changed(&w, &MainWindow::viewChanged);
  change();
  for (int i = 0; i < 600 && changed.isEmpty(); ++i) QTest::qWait(20);
  return !changed.isEmpty();
}

/// Writes `bytes` to `path` (a model file that is not one); false when it cannot.
inline bool writeFile(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

/// A scene and a view, shown, of syntheticTransformer(`layers`) with every scope expanded: a
/// deep net without a model file.
struct SyntheticView {
  ViewGraph graph;
  GraphScene scene;
  GraphView view;
  SyntheticView(int layers, int width, int height) {
    ViewOptions options;
    options.hierarchy.expandAll = true;
    graph = buildView(tdfx::testing::syntheticTransformer(layers), options);
    scene.showGraph(graph, layoutView(graph));
    view.setScene(&scene);
    view.resize(width, height);
    view.show();
    view.sceneChanged();
  }
};

}  // namespace tdfx::ui
