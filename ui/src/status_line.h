#pragma once
// The window's status bar: one line of plain text (counts, timings, the cause of an error), and
// while a file loads a busy bar with a Cancel button (Esc); Cancel asks the window to stop waiting.
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QStatusBar>
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

/// The line of text (object name "status") and the busy indicator, added to `bar`.
class StatusLine : public QObject {
  Q_OBJECT
 public:
  explicit StatusLine(QStatusBar* bar) : QObject(bar), text_(new QLabel(bar)), busy_(new BusyIndicator(bar)) {
    bar->addWidget(text_, 1);
    text_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);  // a long message never widens the window
    text_->setTextFormat(Qt::PlainText);  // model-derived text (errors, names) is never markup
    text_->setObjectName(QStringLiteral("status"));
    bar->addPermanentWidget(busy_);
    busy_->hide();  // the status bar shows what it is given
    connect(busy_, &BusyIndicator::cancelled, this, &StatusLine::cancelled);
  }
  void setText(const QString& text) { text_->setText(text); }
  QString text() const { return text_->text(); }
  /// The whole message behind a line cut short.
  void setToolTip(const QString& tip) { text_->setToolTip(tip); }
  /// Says `what` and shows the busy bar with Cancel.
  void setBusy(const QString& what) {
    text_->setText(what);
    busy_->setBusy(true);
  }
  void setIdle() { busy_->setBusy(false); }
  bool busy() const { return busy_->busy(); }

 Q_SIGNALS:
  void cancelled();

 private:
  QLabel* text_;
  BusyIndicator* busy_;
};

}  // namespace tdfx::ui
