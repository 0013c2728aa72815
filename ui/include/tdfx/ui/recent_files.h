#pragma once
// File > Open Recent: the files opened last (newest first, at most ten), kept in the settings, and
// the one file that is shown under a name of its own and never remembered (tdfx.show's temporary
// copy of a module, named after the module's class).
#include <QObject>
#include <QPair>
#include <QStringList>

class QMenu;

namespace tdfx::ui {

class RecentFiles : public QObject {
  Q_OBJECT
 public:
  static constexpr int kMax = 10;
  /// `persist` false: the list is neither read from nor written to the settings (tests).
  explicit RecentFiles(bool persist, QObject* parent = nullptr);

  /// The menu that lists them (and "Clear list"); filled now and after every change.
  void setMenu(QMenu* menu);
  /// Reads the list from the settings (persisting only).
  void restore();
  /// Puts `path` first, unless it is the named file.
  void remember(const QString& path);
  /// Shows `path` as `name` from now on, and never remembers it.
  void nameFile(const QString& path, const QString& name);
  /// What the window calls `path`: its name from nameFile(), else its file name.
  QString nameOf(const QString& path) const;
  QStringList files() const { return files_; }

 Q_SIGNALS:
  /// A file was chosen from the menu.
  void chosen(const QString& path);

 private:
  void fillMenu();
  void store() const;

  bool persist_;
  QStringList files_;
  QMenu* menu_ = nullptr;
  QPair<QString, QString> named_;  ///< the absolute path, and its name
};

}  // namespace tdfx::ui
