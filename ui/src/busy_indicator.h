#pragma once
// The status bar's sign that a file is being loaded: a busy bar and a Cancel button (Esc), shown
// only while the window waits; Cancel asks the window to stop waiting.
#include <QHBoxLayout>
#include <QProgressBar>
#include <QToolButton>
#include <QWidget>

namespace tdfx::ui {

class BusyIndicator : public QWidget {
  Q_OBJECT
 public:
  explicit BusyIndicator(QWidget* parent = nullptr) : QWidget(parent) {
    auto* bar = new QProgressBar(this);
    bar->setRange(0, 0);
    bar->setMaximumWidth(160);
    bar->setTextVisible(false);
    auto* cancel = new QToolButton(this);
    cancel->setText(tr("Cancel"));
    cancel->setToolTip(tr("Stop waiting for this file; the open model stays (Esc)"));
    cancel->setShortcut(Qt::Key_Escape);
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(bar);
    row->addWidget(cancel);
    connect(cancel, &QToolButton::clicked, this, &BusyIndicator::cancelled);
    hide();
  }
  /// Shown while waiting.
  void setBusy(bool busy) { setVisible(busy); }
  bool busy() const { return !isHidden(); }

 Q_SIGNALS:
  void cancelled();
};

}  // namespace tdfx::ui
