// tdfx: the desktop application. Opens the file given on the command line, or the bundled example.
#include <QApplication>
#include <QFileInfo>

#include "tdfx/ui/main_window.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("tdfx"));
  QApplication::setApplicationVersion(QStringLiteral(TDFX_VERSION));
  tdfx::ui::MainWindow window;
  window.show();
  const QStringList args = QApplication::arguments();
  QString file = args.size() > 1 ? args.at(1) : QString();
  if (file.isEmpty()) {
    // The bundled example: beside the binary when installed, in the build tree otherwise.
    for (const QString& candidate : {QApplication::applicationDirPath() + "/../share/tdfx/examples/seed_sequential.pt",
                                     QStringLiteral(TDFX_EXAMPLES_DIR "/seed_sequential.pt")})
      if (QFileInfo::exists(candidate)) {
        file = candidate;
        break;
      }
  }
  if (!file.isEmpty()) window.openFile(file);
  return QApplication::exec();
}
