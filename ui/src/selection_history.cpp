#include "tdfx/ui/selection_history.h"

#include <algorithm>

namespace tdfx::ui {

void SelectionHistory::clear() {
  back_.clear();
  forward_.clear();
  current_.clear();
  announce();
}

void SelectionHistory::selected(const QString& id, const Shown& shownAs) {
  if (id.isEmpty() && !revisiting_ && !current_.isEmpty()) {
    back_ << current_;
    forward_.clear();
    current_.clear();
  }
  if (!revisiting_ && !id.isEmpty() && id != current_ && id != shownAs(current_)) {
    if (!current_.isEmpty()) back_ << current_;
    forward_.clear();
    current_ = id;
  }
  announce();
}

std::optional<QString> SelectionHistory::step(bool back, const Drawn& drawn) {
  QStringList& from = back ? back_ : forward_;
  QStringList passed;  // in the order walked
  while (!from.isEmpty()) {
    const QString id = back ? from.takeLast() : from.takeFirst();
    if (id == current_ || !drawn(id)) {
      passed << id;
      continue;
    }
    if (back) {
      std::reverse(passed.begin(), passed.end());
      forward_ = passed + QStringList{current_} + forward_;
    } else {
      back_ += QStringList{current_} + passed;
    }
    current_ = id;
    announce();
    return id;
  }
  if (back) {  // nothing drawn further back: the history as it was
    std::reverse(passed.begin(), passed.end());
    back_ = passed;
  } else {
    forward_ = passed;
  }
  announce();
  return std::nullopt;
}

}  // namespace tdfx::ui
