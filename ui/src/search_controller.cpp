#include "tdfx/ui/search_controller.h"

#include <QAction>
#include <QGuiApplication>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSet>
#include <QTimer>
#include <QToolBar>
#include <algorithm>
#include <unordered_map>

#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/model_session.h"

namespace tdfx::ui {

SearchController::SearchController(GraphScene* scene, Session session, Go go, QWidget* parent)
    : QObject(parent), scene_(scene), session_(std::move(session)), go_(std::move(go)), field_(new QLineEdit(parent)),
      count_(new QLabel(parent)), timer_(new QTimer(this)) {
  field_->setPlaceholderText(tr("Find node, target, op, module type or key (Ctrl+F)"));
  field_->setClearButtonEnabled(true);
  field_->setMinimumWidth(320);
  timer_->setSingleShot(true);
  timer_->setInterval(250);
  connect(timer_, &QTimer::timeout, this, &SearchController::searchLive);
  connect(field_, &QLineEdit::returnPressed, this, [this] {
    timer_->stop();  // Enter goes at once; the pending live search would only repeat it
    const bool previous = QGuiApplication::keyboardModifiers() & Qt::ShiftModifier;
    const QString found = find(field_->text(), previous ? -1 : +1);
    if (found.isEmpty() && !field_->text().isEmpty()) Q_EMIT noMatch(field_->text());
  });
  connect(field_, &QLineEdit::textChanged, this, [this](const QString& text) {
    if (text.isEmpty()) {
      timer_->stop();
      forget();
    } else {
      timer_->start();
    }
  });
}

void SearchController::addTo(QToolBar* toolbar) {
  toolbar->addWidget(field_);
  regexAction_ = toolbar->addAction(QStringLiteral(".*"), this, [this](bool on) { setRegex(on); });
  regexAction_->setCheckable(true);
  regexAction_->setToolTip(tr("Search with a regular expression"));
  toolbar->addWidget(count_);
}

QString SearchController::countText() const { return count_->text(); }

QStringList SearchController::matchingNodes(const ModelSession& session, const QString& text, bool regex) {
  QStringList ids;
  if (text.isEmpty()) return ids;
  const QRegularExpression pattern(text, QRegularExpression::CaseInsensitiveOption);
  if (regex && !pattern.isValid()) return ids;
  const auto contains = [&](const QString& field) {
    return regex ? pattern.match(field).hasMatch() : field.contains(text, Qt::CaseInsensitive);
  };
  std::unordered_map<std::string, const Node*> byName;  // Graph::findNode is a linear scan
  for (const auto& node : session.graph().nodes()) byName.emplace(node->name(), node.get());
  const auto matches = [&](const ViewNode& n) {
    QStringList fields{QString::fromStdString(n.id), QString::fromStdString(n.recordLabel),
                       QString::fromStdString(n.scope)};
    for (const auto& l : n.lines) fields << QString::fromStdString(l);
    for (const auto& ir : n.irNodes) {
      fields << QString::fromStdString(ir);
      if (auto it = byName.find(ir); it != byName.end()) {
        const Node* node = it->second;
        fields << QString::fromStdString(node->target()) << QString::fromStdString(node->meta().moduleType)
               << opKindName(node->op());
        if (node->meta().tensordictKey) fields << QString::fromStdString(keyToString(*node->meta().tensordictKey));
      }
    }
    return std::any_of(fields.begin(), fields.end(), contains);
  };
  for (const ViewNode& n : session.view.nodes)
    if (matches(n)) ids << QString::fromStdString(n.id);
  return ids;
}

void SearchController::setRegex(bool on) {
  regex_ = on;
  if (regexAction_) regexAction_->setChecked(on);
  matchedText_.clear();  // the same text means something else now
  if (!field_->text().isEmpty()) searchLive();
}

void SearchController::forget() {
  matches_.clear();
  matchedText_.clear();  // typing the same text again searches again
  walkingChanges_ = false;
  count_->clear();
  count_->setStyleSheet({});
  scene_->setMarked({}, GraphScene::SearchMatch);
}

void SearchController::clear() {
  field_->clear();
  timer_->stop();
  forget();
}

void SearchController::walk(const QStringList& ids, const QString& count) {
  matches_ = ids;
  matchedText_.clear();
  walkingChanges_ = !ids.isEmpty();
  if (!count.isEmpty()) count_->setText(count);
}

void SearchController::redrawn() {
  if (!matchedText_.isEmpty()) {  // the matches of the search shown, in the new picture
    const QString text = matchedText_;
    matchedText_.clear();  // searched again; a pattern that does not compile says so again
    if (updateMatches(text)) count_->setText(tr(" %1 matches ").arg(matches_.size()));
  } else if (walkingChanges_) {  // compared changes: those still drawn
    QStringList kept;
    for (const QString& id : matches_)
      if (scene_->nodeItem(id)) kept << id;
    matches_ = kept;
  } else {
    matches_.clear();
  }
}

// Recomputes the matches when the text (or the mode) changed; false when nothing matches, with
// the reason shown beside the field.
bool SearchController::updateMatches(const QString& text) {
  if (text != matchedText_) {
    walkingChanges_ = false;  // a search replaces the compared changes
    const ModelSession* session = session_();
    matches_ = session ? matchingNodes(*session, text, regex_) : QStringList();
    matchedText_ = text;
  }
  scene_->setMarked(QSet<QString>(matches_.begin(), matches_.end()), GraphScene::SearchMatch);
  count_->setStyleSheet({});
  if (!matches_.isEmpty()) return true;
  const QRegularExpression pattern(text);
  if (regex_ && !pattern.isValid()) {
    count_->setText(tr(" invalid pattern: %1 ").arg(pattern.errorString()));
    count_->setStyleSheet(QStringLiteral("color: #C0392B"));
  } else {
    count_->setText(tr(" no match "));
  }
  return false;
}

void SearchController::searchLive() {
  const QString text = field_->text();
  if (!session_() || text.isEmpty()) return;
  if (!updateMatches(text)) return;
  const int at = static_cast<int>(matches_.indexOf(scene_->selectedNode()));
  if (at >= 0) {  // the selection still matches: stay on it
    count_->setText(tr(" %1 of %2 ").arg(at + 1).arg(matches_.size()));
    return;
  }
  go_(matches_.first());
  count_->setText(tr(" 1 of %1 ").arg(matches_.size()));
}

QString SearchController::find(const QString& text, int direction) {
  if (!session_()) return {};
  // With the search field empty after a compare, F3 walks the changed nodes it marked.
  if (text.isEmpty() ? !walkingChanges_ || matches_.isEmpty() : !updateMatches(text)) return {};
  const int at = static_cast<int>(matches_.indexOf(scene_->selectedNode()));
  const int count = static_cast<int>(matches_.size());
  const int next = at < 0 ? (direction > 0 ? 0 : count - 1) : (at + direction + count) % count;
  const QString id = matches_[next];
  go_(id);
  count_->setText(tr(" %1 of %2 ").arg(next + 1).arg(count));
  return id;
}

}  // namespace tdfx::ui
