#include "wheel_focus.h"

#include <QAbstractScrollArea>
#include <QCoreApplication>
#include <QEvent>
#include <QScrollBar>

namespace tdfx::ui {

namespace {

class WheelOnlyWhenFocused : public QObject {
 public:
  using QObject::QObject;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    auto* box = qobject_cast<QAbstractSpinBox*>(watched);
    if (event->type() != QEvent::Wheel || !box || box->hasFocus()) return false;
    // The nearest scrolled area holding the box scrolls instead; with none, the wheel does nothing.
    for (QWidget* up = box->parentWidget(); up; up = up->parentWidget())
      if (auto* area = qobject_cast<QAbstractScrollArea*>(up)) {
        QCoreApplication::sendEvent(area->verticalScrollBar(), event);
        break;
      }
    return true;
  }
};

}  // namespace

void wheelOnlyWhenFocused(QAbstractSpinBox* box) {
  box->setFocusPolicy(Qt::StrongFocus);  // not Qt::WheelFocus: the wheel gives it no focus
  box->installEventFilter(new WheelOnlyWhenFocused(box));
}

}  // namespace tdfx::ui
