#include "tdfx/ui/recent_files.h"

#include <QFileInfo>
#include <QMenu>
#include <QSettings>

#include "error_text.h"

namespace tdfx::ui {

namespace {
const QString kKey = QStringLiteral("recentFiles");
}

RecentFiles::RecentFiles(bool persist, QObject* parent) : QObject(parent), persist_(persist) {}

void RecentFiles::setMenu(QMenu* menu) {
  menu_ = menu;
  fillMenu();
}

void RecentFiles::restore() {
  if (!persist_) return;
  files_ = QSettings().value(kKey).toStringList();
  while (files_.size() > kMax) files_.removeLast();
  fillMenu();
}

void RecentFiles::remember(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  if (absolute == named_.first) return;  // a temporary copy: gone when its Python session ends
  files_.removeAll(absolute);
  files_.prepend(absolute);
  while (files_.size() > kMax) files_.removeLast();
  store();
  fillMenu();
}

void RecentFiles::nameFile(const QString& path, const QString& name) {
  named_ = {QFileInfo(path).absoluteFilePath(), name};
}

QString RecentFiles::nameOf(const QString& path) const {
  if (!named_.second.isEmpty() && QFileInfo(path).absoluteFilePath() == named_.first) return named_.second;
  return QFileInfo(path).fileName();
}

void RecentFiles::store() const {
  if (!persist_) return;
  if (files_.isEmpty()) QSettings().remove(kKey);
  else QSettings().setValue(kKey, files_);
}

void RecentFiles::fillMenu() {
  if (!menu_) return;
  menu_->clear();
  for (int i = 0; i < files_.size(); ++i) {
    const QString path = files_[i];
    QAction* a = menu_->addAction(QStringLiteral("&%1 %2").arg((i + 1) % 10).arg(QFileInfo(path).fileName()), this,
                                  [this, path] { Q_EMIT chosen(path); });
    a->setToolTip(plainToolTip(path));
    a->setStatusTip(path);
  }
  menu_->setEnabled(!files_.isEmpty());
  if (files_.isEmpty()) return;
  menu_->addSeparator();
  menu_->addAction(tr("Clear list"), this, [this] {
    files_.clear();
    store();
    fillMenu();
  });
}

}  // namespace tdfx::ui
