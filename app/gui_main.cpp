// tdfx: the desktop application. Opens the file given on the command line, or the bundled example.
#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QListWidget>
#include <QtGlobal>

#include <cstdio>
#include <cstdlib>

#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/main_window.h"
#include "tdfx/version.h"
#include "tdfx/worker/model_worker.h"

namespace {

// The bundled example: in share/tdfx when installed, in the build tree otherwise.
QString bundledExample() {
  for (const QString& candidate : {QApplication::applicationDirPath() + "/../share/tdfx/examples/seed_sequential.pt",
                                   QStringLiteral(TDFX_EXAMPLES_DIR "/seed_sequential.pt")})
    if (QFileInfo::exists(candidate)) return candidate;
  return {};
}

// TDFX_STATE_FILE=PATH (for tests that drive the real app, such as tdfx.show's): each time the
// window shows a model (opened, or reopened after its followed file changed), fails to load one,
// or finds its followed file gone, one JSON line is appended to PATH with what the window shows:
// title, status bar, the number of nodes drawn, the Changes panel's rows, and a failed load's error.
void recordStates(tdfx::ui::MainWindow& window, const QString& path) {
  const auto record = [&window, path](const char* event, const QString& error) {
    QJsonArray changes;
    if (const QListWidget* list = window.changesList(); list && list->parentWidget()->isVisible())
      for (int i = 0; i < list->count(); ++i) changes.append(list->item(i)->text());
    QJsonObject state{{"event", event},
                      {"title", window.windowTitle()},
                      {"status", window.statusText()},
                      {"nodes", window.scene()->nodeCount()},
                      {"changes", changes}};
    if (!error.isEmpty()) state.insert("error", error);
    QFile file(path);
    if (file.open(QIODevice::WriteOnly | QIODevice::Append))
      file.write(QJsonDocument(state).toJson(QJsonDocument::Compact) + '\n');
  };
  QObject::connect(&window, &tdfx::ui::MainWindow::modelLoaded, &window, [record] { record("loaded", {}); });
  QObject::connect(&window, &tdfx::ui::MainWindow::loadFailed, &window,
                   [record](const QString& message) { record("load_failed", message); });
  QObject::connect(&window, &tdfx::ui::MainWindow::followedFileGone, &window, [record] { record("gone", {}); });
}

}  // namespace

int main(int argc, char** argv) {
  // First, while this process has one thread: the zygote that forks one model worker per open model.
  tdfx::startWorkerZygote();
  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("tdfx: trace PyTorch TensorDict modules into FX graphs and inspect them.\n"
                     "With no FILE, opens the bundled example."));
  parser.addHelpOption();
  parser.addOption({{"v", "version"}, QStringLiteral("Print the versions of tdfx, LibTorch, Qt and Graphviz.")});
  parser.addOption({QStringLiteral("timeout"),
                    QStringLiteral("Seconds a model may take to load (default 120) or to run a verify (default 60)."),
                    QStringLiteral("SECONDS")});
  parser.addOption({QStringLiteral("memory-limit"),
                    QStringLiteral("GiB of memory each model worker may use (default: half of physical memory)."),
                    QStringLiteral("GIB")});
  parser.addOption({QStringLiteral("follow"),
                    QStringLiteral("Follow FILE: reopen it whenever it changes on disk (View > Follow file changes).")});
  // Not --name: on X11 QApplication takes -name/--name (and -title) as its own and removes them
  // before the parser sees them (the offscreen platform does not, so tests there passed).
  parser.addOption({QStringLiteral("model-name"),
                    QStringLiteral("Title the window NAME (and say \"Reloaded NAME\") instead of FILE's name, and leave FILE out of "
                                   "File > Open Recent (tdfx.show: a temporary copy of a module, named after its class)."),
                    QStringLiteral("NAME")});
  parser.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("TorchScript archive (.pt) to open."), "[FILE]");

  // --help and --version are answered before QApplication exists, so they work without a display.
  for (int i = 1; i < argc; ++i) {
    const QString arg = QString::fromLocal8Bit(argv[i]);
    if (arg == "-h" || arg == "--help" || arg == "-?") {
      std::fputs(qPrintable(parser.helpText().replace(QStringLiteral("<executable_name>"), QStringLiteral("tdfx"))), stdout);
      return 0;
    }
    if (arg == "-v" || arg == "--version") {
      std::fputs(tdfx::versionReport("tdfx", qVersion()).c_str(), stdout);
      return 0;
    }
  }

  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("tdfx"));
  QApplication::setOrganizationName(QStringLiteral("tdfx"));
  QApplication::setApplicationVersion(QString::fromStdString(tdfx::tdfxVersion()));
  QApplication::setDesktopFileName(QStringLiteral("io.github.tdfx.Tdfx"));
  parser.process(app);  // Qt's own options (-platform, ...) are gone by now; unknown ones exit with a message
  const QStringList files = parser.positionalArguments();
  if (files.size() > 1) parser.showHelp(64);

  tdfx::WorkerLimits limits;
  bool ok = true;
  if (parser.isSet(QStringLiteral("timeout"))) {
    const double seconds = parser.value(QStringLiteral("timeout")).toDouble(&ok);
    if (!ok || !(seconds > 0 && seconds <= 86400)) {  // also refuses nan
      std::fprintf(stderr, "tdfx: --timeout: expected a number of seconds from 0 to 86400\n");
      return 64;
    }
    limits.openSeconds = limits.requestSeconds = seconds;
  }
  if (parser.isSet(QStringLiteral("memory-limit"))) {
    const double gib = parser.value(QStringLiteral("memory-limit")).toDouble(&ok);
    if (!ok || !(gib > 0 && gib <= 1 << 20)) {
      std::fprintf(stderr, "tdfx: --memory-limit: expected a number of GiB from 0 to 1048576\n");
      return 64;
    }
    limits.memoryBytes = static_cast<uint64_t>(gib * static_cast<double>(uint64_t{1} << 30));
  }

  int rc = 0;
  {
    tdfx::ui::MainWindow window;
    window.setWorkerLimits(limits);
    if (const QString stateFile = qEnvironmentVariable("TDFX_STATE_FILE"); !stateFile.isEmpty()) recordStates(window, stateFile);
    window.show();
    const QString file = files.isEmpty() ? bundledExample() : files.first();
    // Before the load: the model is followed once it is open, whatever the saved setting says.
    if (parser.isSet(QStringLiteral("follow"))) window.setFollowFileChanges(true);
    if (parser.isSet(QStringLiteral("model-name"))) window.nameFile(file, parser.value(QStringLiteral("model-name")));
    if (!file.isEmpty()) window.openFile(file);
    rc = QApplication::exec();
  }  // the window is gone: its settings are saved and its model workers stopped
  // LibTorch's static teardown (about 0.3 s, more with the zygote sharing pages) is skipped.
  std::fflush(nullptr);
  std::_Exit(rc);
}
