#include "tdfx/ui/verify_panel.h"

#include <algorithm>

#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QDoubleSpinBox>
#include <QFontDatabase>
#include <QFileInfo>
#include <QFormLayout>
#include <QHash>
#include <QSettings>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QScrollArea>
#include <QStackedWidget>
#include <QToolButton>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrent>

#include "error_text.h"
#include "wheel_focus.h"
#include "tdfx/error.h"
#include "tdfx/ui/model_session.h"
#include "tdfx/util/dtype.h"

namespace tdfx::ui {

namespace {

QString dottedKey(const NestedKey& key) {
  QStringList parts;
  for (const std::string& p : key.parts()) parts << QString::fromStdString(p);
  return parts.join('.');
}

QString shapeText(const std::vector<int64_t>& shape, const QString& separator) {
  QStringList dims;
  for (int64_t d : shape) dims << QString::number(d);
  return dims.join(separator);
}

/// An input that the model's first layer accepts, from its constants: Conv2d(in_channels=3) gives
/// 1x3x224x224, Linear(in_features=8) 1x8, LSTM(input_size=32) 1x16x32, Embedding a row of 16
/// int64 indices. The first of these layers in the graph decides (an Embedding before a
/// TransformerEncoder leaf and a Linear head: the Embedding, not the head; issue 57, H). Empty when
/// the graph has none.
struct ShapeGuess {
  QString shape, dtype, reason;
};
ShapeGuess guessInputShape(const Graph& graph) {
  struct Rule {
    const char* constant;
    QString shape;  // %1: the constant's value
    QString dtype;
  };
  static const std::vector<std::pair<std::string, Rule>> layers = {
      {"torch.nn.modules.conv.Conv1d", {"in_channels", QStringLiteral("1x%1x224"), QStringLiteral("float32")}},
      {"torch.nn.modules.conv.Conv2d", {"in_channels", QStringLiteral("1x%1x224x224"), QStringLiteral("float32")}},
      {"torch.nn.modules.conv.Conv3d", {"in_channels", QStringLiteral("1x%1x16x112x112"), QStringLiteral("float32")}},
      {"torch.nn.modules.linear.Linear", {"in_features", QStringLiteral("1x%1"), QStringLiteral("float32")}},
      // A sequence of 16 steps, one of a batch: (1, 16, H) suits batch_first either way.
      {"torch.nn.modules.rnn.LSTM", {"input_size", QStringLiteral("1x16x%1"), QStringLiteral("float32")}},
      {"torch.nn.modules.rnn.GRU", {"input_size", QStringLiteral("1x16x%1"), QStringLiteral("float32")}},
      {"torch.nn.modules.rnn.RNN", {"input_size", QStringLiteral("1x16x%1"), QStringLiteral("float32")}},
      // Indices: verify draws them below num_embeddings.
      {"torch.nn.modules.sparse.Embedding", {"num_embeddings", QStringLiteral("1x16"), QStringLiteral("int64")}},
  };
  for (const auto& node : graph.nodes()) {
    if (node->op() != OpKind::CallModule) continue;
    for (const auto& [type, rule] : layers) {
      if (node->meta().moduleType != type) continue;
      for (const auto& [name, value] : node->meta().moduleConstants)
        if (name == rule.constant) {
          const QString layer = QString::fromStdString(type.substr(type.rfind('.') + 1));
          return {rule.shape.contains(QStringLiteral("%1")) ? rule.shape.arg(QString::fromStdString(value)) : rule.shape,
                  rule.dtype,
                  QObject::tr("%1 (%2 %3)").arg(layer, QString::fromStdString(name), QString::fromStdString(value))};
        }
    }
  }
  return {};
}

constexpr const char* kRememberedInputs = "verifyInputs";

QDoubleSpinBox* toleranceBox(QWidget* parent) {
  auto* box = new QDoubleSpinBox(parent);
  box->setDecimals(10);
  box->setRange(0.0, 1e6);
  box->setSingleStep(1e-6);
  box->setSpecialValueText(QObject::tr("0 (bitwise)"));
  return box;
}

}  // namespace

VerifyPanel::VerifyPanel(QWidget* parent)
    : QWidget(parent), inputs_(new QTableWidget(0, 3, this)), seed_(new QSpinBox(this)),
      seedRandom_(new QCheckBox(tr("Random ops draw alike"), this)),
      time_(new QCheckBox(tr("Time both passes"), this)), atol_(toleranceBox(this)),
      rtol_(toleranceBox(this)), runButton_(new QPushButton(tr("Run eager vs traced"), this)),
      cancelButton_(new QPushButton(tr("Cancel"), this)), valuesButton_(new QPushButton(this)),
      progress_(new QProgressBar(this)), results_(new QTableWidget(0, 7, this)), summary_(new QLabel(this)),
      detailButton_(new QToolButton(this)), resultStack_(new QStackedWidget(this)), detail_(new QPlainTextEdit(this)) {
  inputs_->setHorizontalHeaderLabels({tr("input key"), tr("shape"), tr("dtype")});
  inputs_->horizontalHeader()->setStretchLastSection(true);
  inputs_->setToolTip(tr("Inputs: key parts joined by '.', shape as 32x100, dtype such as float32. Edit to try other inputs."));
  seed_->setRange(0, std::numeric_limits<int>::max());
  seedRandom_->setChecked(true);
  seedRandom_->setToolTip(tr("Seed torch's generator with the seed before the eager and the traced pass, so that "
                             "rand_like, dropout in train mode and the like draw the same numbers in both"));
  time_->setToolTip(tr("Also time the eager module and the traced graph: each runs twice more, and the faster "
                       "run is shown. Off, each runs once, for the comparison only"));
  auto* addRow = new QPushButton(tr("+"), this);
  auto* removeRow = new QPushButton(tr("\u2212"), this);
  addRow->setToolTip(tr("Add an input"));
  removeRow->setToolTip(tr("Remove the selected input"));
  connect(addRow, &QPushButton::clicked, this, [this] { addInputRow({}, {}, QStringLiteral("float32")); });
  connect(removeRow, &QPushButton::clicked, this, [this] {
    if (inputs_->currentRow() >= 0) inputs_->removeRow(inputs_->currentRow());
  });

  auto* settings = new QFormLayout;
  settings->addRow(tr("Seed"), seed_);
  settings->addRow(QString(), seedRandom_);
  settings->addRow(QString(), time_);
  settings->addRow(tr("Absolute tolerance"), atol_);
  settings->addRow(tr("Relative tolerance"), rtol_);
  auto* rowButtons = new QHBoxLayout;
  rowButtons->addWidget(addRow);
  rowButtons->addWidget(removeRow);
  rowButtons->addWidget(valuesButton_);
  rowButtons->addStretch();
  setInputValuesFile({});
  connect(valuesButton_, &QPushButton::clicked, this, [this] {
    const QString model = session_ ? QString::fromStdString(session_->traced.model.path) : QString();
    // Cancelled: no values any more (the way to take them back).
    setInputValuesFile(QFileDialog::getOpenFileName(this, tr("Input values (saved with torch.save)"),
                                                    QFileInfo(model).absolutePath(),
                                                    tr("PyTorch files (*.pt *.pth);;All files (*)")));
  });
  settings->addRow(rowButtons);
  cancelButton_->setToolTip(tr("Stop the run: the model's worker process is killed, and started again for the next run"));
  connect(cancelButton_, &QPushButton::clicked, this, &VerifyPanel::cancel);
  pool_.setMaxThreadCount(1);
  progress_->setRange(0, 0);  // busy: the passes report no progress of their own
  progress_->setTextVisible(false);
  progress_->setMaximumWidth(120);
  for (QWidget* transient : {static_cast<QWidget*>(cancelButton_), static_cast<QWidget*>(progress_),
                             static_cast<QWidget*>(detailButton_)}) {
    QSizePolicy policy = transient->sizePolicy();
    policy.setRetainSizeWhenHidden(true);
    transient->setSizePolicy(policy);
    transient->hide();
  }

  results_->setHorizontalHeaderLabels(
      {tr("out key"), tr("shape"), tr("dtype"), tr("max |\u0394|"), tr("max rel \u0394"), tr("bitwise"), tr("result")});
  results_->horizontalHeader()->setStretchLastSection(false);
  results_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  // One line that never grows the dock: long text is cut here and is whole in the tooltip.
  summary_->setWordWrap(false);
  summary_->setTextFormat(Qt::RichText);
  summary_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  detail_->setReadOnly(true);
  detail_->setLineWrapMode(QPlainTextEdit::NoWrap);
  detail_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  // Tables whose size hints grow with their rows would make the main window hand the dock more
  // height after each run: they take the height the dock has, nothing more.
  for (QWidget* area : {static_cast<QWidget*>(inputs_), static_cast<QWidget*>(resultStack_)})
    area->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Ignored);
  resultStack_->addWidget(results_);
  resultStack_->addWidget(detail_);
  detailButton_->setText(tr("Details"));
  detailButton_->setCheckable(true);
  detailButton_->setToolTip(tr("Show the whole error (the TorchScript traceback) in place of the results"));
  connect(detailButton_, &QToolButton::toggled, this,
          [this](bool on) { resultStack_->setCurrentWidget(on ? static_cast<QWidget*>(detail_) : results_); });

  // The run's bar on top, always in sight: Run, Cancel, the busy bar, the verdict and Details
  // (issue 57, E: at 1400x900 the button and the verdict were below the fold of a scrolled dock).
  // What appears only during a run keeps its space while hidden: a run must not move the verdict.
  auto* bar = new QHBoxLayout;
  bar->addWidget(runButton_);
  bar->addWidget(cancelButton_);
  bar->addWidget(progress_);
  bar->addWidget(summary_, 1);
  bar->addWidget(detailButton_);
  // The inputs, options and results below it scroll when the dock is short: they must not take
  // the graph's place (at 710x444 the graph was 80 px tall and the hint ran into the status bar).
  auto* body = new QWidget;
  auto* top = new QHBoxLayout(body);
  top->setContentsMargins(0, 0, 0, 0);
  top->addWidget(inputs_, 3);
  top->addLayout(settings, 2);
  top->addWidget(resultStack_, 5);
  auto* scroll = new QScrollArea(this);
  scroll->setObjectName(QStringLiteral("verifyBody"));
  scroll->setWidget(body);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setMinimumHeight(24);  // the bar is what must fit; a short dock scrolls the rest
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 4, 6, 4);
  layout->addLayout(bar);
  layout->addWidget(scroll, 1);
  // A wheel turned to scroll the panel must not change the seed or a tolerance it passes over.
  for (QAbstractSpinBox* box : {static_cast<QAbstractSpinBox*>(seed_), static_cast<QAbstractSpinBox*>(atol_),
                                static_cast<QAbstractSpinBox*>(rtol_)})
    wheelOnlyWhenFocused(box);
  connect(runButton_, &QPushButton::clicked, this, &VerifyPanel::run);
  connect(&watcher_, &QFutureWatcher<VerifyRun>::finished, this, &VerifyPanel::onFinished);
  setSession(nullptr);
}

VerifyPanel::~VerifyPanel() {
  cancel();  // a model looping forever must not keep the window from closing
  watcher_.waitForFinished();
}

void VerifyPanel::addInputRow(const QString& key, const QString& shape, const QString& dtype) {
  const int row = inputs_->rowCount();
  inputs_->insertRow(row);
  inputs_->setItem(row, 0, new QTableWidgetItem(key));
  inputs_->setItem(row, 1, new QTableWidgetItem(shape));
  inputs_->setItem(row, 2, new QTableWidgetItem(dtype));
}

void VerifyPanel::setInputValuesFile(const QString& path) {
  valuesFile_ = path;
  valuesButton_->setText(path.isEmpty() ? tr("Values...") : tr("Values: %1").arg(QFileInfo(path).fileName()));
  valuesButton_->setToolTip(
      path.isEmpty() ? tr("Run on tensors of your own: a file saved with torch.save, a tuple of (\"input.x\", tensor) pairs "
                          "or a dict of two or more keys. Their keys use these values; the other rows are drawn from "
                          "the seed.")
                     : tr("%1: its tensors are the inputs of their keys. Click to choose another; cancel to drop it.")
                           .arg(QDir::toNativeSeparators(path)));
}

void VerifyPanel::setSession(std::shared_ptr<const ModelSession> session) {
  cancel();  // a run on the previous model (perhaps endless) stops with its worker
  // The values stay for a new version of the same file (follow-file), not for another model.
  if (!session || !session_ || session->traced.model.path != session_->traced.model.path) setInputValuesFile({});
  session_ = std::move(session);
  inputs_->setRowCount(0);
  results_->setRowCount(0);
  runButton_->setEnabled(session_ != nullptr);
  if (!session_) {
    setSummary(tr("Open a model to compare its eager and traced outputs."), Outcome::Info);
    return;
  }
  std::set<NestedKey> listed;
  for (const InputSpec& spec : session_->traced.model.exampleInputs) {
    addInputRow(dottedKey(spec.key), shapeText(spec.shape, QStringLiteral("x")),
                QString::fromStdString(dtypeToString(spec.dtype)));
    listed.insert(spec.key);
  }
  // In keys without an example (plain archives): the shapes last run on this file, else a guess
  // from the first layer when one key is missing, else a row to fill in.
  QHash<QString, QPair<QString, QString>> remembered;  // key -> (shape, dtype)
  for (const QString& row : rememberedRows()) {
    const qsizetype eq = row.indexOf('='), colon = row.lastIndexOf(':');
    if (eq > 0 && colon > eq) remembered.insert(row.left(eq), {row.mid(eq + 1, colon - eq - 1), row.mid(colon + 1)});
  }
  QStringList missing;
  for (const NestedKey& key : session_->traced.model.inKeys)
    if (!listed.count(key) && !remembered.contains(dottedKey(key))) missing << dottedKey(key);
  const ShapeGuess guess = missing.size() == 1 ? guessInputShape(session_->graph()) : ShapeGuess{};
  bool usedRemembered = false;
  for (const NestedKey& key : session_->traced.model.inKeys) {
    if (listed.count(key)) continue;
    const QString name = dottedKey(key);
    if (remembered.contains(name)) {
      addInputRow(name, remembered[name].first, remembered[name].second);
      usedRemembered = true;
    } else {
      addInputRow(name, guess.shape, guess.dtype.isEmpty() ? QStringLiteral("float32") : guess.dtype);
    }
  }
  QString text = tr("Inputs are random (seeded) tensors of the shapes above. Tolerance 0 compares bitwise.");
  if (!guess.shape.isEmpty())
    text = tr("No example shape in the file: %1 is a guess from the first layer, %2; edit it if the model wants another.")
               .arg(guess.shape, guess.reason);
  else if (!missing.isEmpty())
    text = tr("The file has no example shape for %1: type one in the shape column (e.g. 1x3x224x224).")
               .arg(missing.join(QStringLiteral(", ")));
  else if (usedRemembered)
    text = tr("The shapes of the last run on this file. Tolerance 0 compares bitwise.");
  setSummary(text, Outcome::Info);
}

QStringList VerifyPanel::rememberedRows() const {
  if (!rememberInputs_ || !session_) return {};
  const QVariantMap files = QSettings().value(QLatin1String(kRememberedInputs)).toMap();
  return files.value(QFileInfo(QString::fromStdString(session_->traced.model.path)).absoluteFilePath()).toStringList();
}

QStringList VerifyPanel::inputRows() const {
  QStringList rows;
  for (int row = 0; row < inputs_->rowCount(); ++row) {
    const auto cell = [&](int column) {
      const QTableWidgetItem* item = inputs_->item(row, column);
      return item ? item->text().trimmed() : QString();
    };
    if (!cell(0).isEmpty()) rows << cell(0) + "=" + cell(1) + ":" + cell(2);
  }
  return rows;
}

void VerifyPanel::rememberRows(const QStringList& rows) const {
  if (!rememberInputs_ || !session_ || session_->traced.model.exampleInputs.size() == session_->traced.model.inKeys.size())
    return;  // a tdfx archive's examples come from the file itself
  QSettings settings;
  QVariantMap files = settings.value(QLatin1String(kRememberedInputs)).toMap();
  files.insert(QFileInfo(QString::fromStdString(session_->traced.model.path)).absoluteFilePath(), rows);
  while (files.size() > 200) files.erase(files.begin());  // bounded: files long gone drop out first by name
  settings.setValue(QLatin1String(kRememberedInputs), files);
}

std::vector<InputSpec> VerifyPanel::inputSpecs() const {
  std::vector<InputSpec> specs;
  for (int row = 0; row < inputs_->rowCount(); ++row) {
    const auto cell = [&](int column) {
      const QTableWidgetItem* item = inputs_->item(row, column);
      return item ? item->text().trimmed() : QString();
    };
    if (cell(0).isEmpty() && cell(1).isEmpty()) continue;
    // An empty cell is a shape not given yet, not a scalar (which is written "scalar"): it ran,
    // and failed deep in the model ("Dimension specified as 0").
    if (cell(1).isEmpty())
      throw Error("input row " + std::to_string(row + 1) + " ('" + cell(0).toStdString() +
                  "') has no shape: type one in the shape column, such as 1x16x32 (\"scalar\" for a 0-d tensor)");
    QString text = cell(0) + "=" + cell(1);
    if (!cell(2).isEmpty()) text += ":" + cell(2);
    try {
      specs.push_back(parseInputSpec(text.toStdString()));
    } catch (const Error& e) {
      throw Error("input row " + std::to_string(row + 1) + ": " + e.what());
    }
  }
  return specs;
}

void VerifyPanel::run() {
  if (!session_ || isRunning()) return;
  std::vector<InputSpec> specs;
  try {
    specs = inputSpecs();
  } catch (const Error& e) {
    setSummary(QString::fromStdString(e.what()), Outcome::Error);
    return;
  }
  ranRows_ = inputRows();  // remembered once they have run: a shape that fails is not offered again
  const uint64_t seed = static_cast<uint64_t>(seed_->value());
  VerifyOptions options;
  options.atol = atol_->value();
  options.rtol = rtol_->value();
  options.randomSeed = seedRandom_->isChecked() ? std::optional<uint64_t>(seed) : std::nullopt;
  options.time = time_->isChecked();
  runButton_->setEnabled(false);
  progress_->show();
  setSummary(tr("Running the eager module and the traced graph..."), Outcome::Info);
  cancelButton_->show();
  session_->worker->resetCancel();  // a cancel from now on is meant for this run
  const std::shared_ptr<const ModelSession> session = session_;  // kept alive by the job
  // The model runs in the session's worker process; this thread only waits for its answer. A
  // worker that was cancelled or died is started again, and opens the model again, on demand.
  const std::string valuesFile = QFile::encodeName(valuesFile_).toStdString();  // the file system's bytes
  watcher_.setFuture(QtConcurrent::run(&pool_, [session, specs, seed, options, valuesFile]() -> VerifyRun {
    try {
      // Read here, off the window's thread (up to 512 MiB), and parsed by the worker.
      const std::vector<char> values =
          valuesFile.empty() ? std::vector<char>() : readInputValuesFile(valuesFile, "input values " + valuesFile);
      if (!session->worker->alive()) session->worker->open(session->traced.model.path);
      WorkerVerifyResult run = session->worker->verify(specs, seed, options, values);
      VerifyRun result;
      result.session = session;
      result.report = std::make_shared<VerifyReport>(std::move(run.report));
      result.records = std::move(run.records);
      return result;
    } catch (const std::exception& e) {
      return {session, nullptr, {}, QString::fromStdString(e.what())};
    }
  }));
}

void VerifyPanel::cancel() {
  if (isRunning() && session_) session_->worker->cancel();  // the job ends at once with WorkerCancelled
}

void VerifyPanel::onFinished() {
  progress_->hide();
  cancelButton_->hide();
  runButton_->setEnabled(session_ != nullptr);
  const VerifyRun result = watcher_.result();
  if (result.session != session_) return;  // another model was opened meanwhile
  if (result.report) {
    rememberRows(ranRows_);
    showReport(*result.report);
  } else {
    results_->setRowCount(0);
    const ErrorText error = splitError(capMessage(result.error));  // a model's message: the first 4 KB
    setSummary(error.cause, Outcome::Error, error.detail);
  }
  Q_EMIT finished(result);
}

void VerifyPanel::showReport(const VerifyReport& report) {
  results_->setRowCount(static_cast<int>(report.keys.size()));
  for (int row = 0; row < static_cast<int>(report.keys.size()); ++row) {
    const KeyComparison& k = report.keys[row];
    const QStringList cells{QString::fromStdString(keyToString(k.key)),
                            "[" + shapeText(k.eagerShape, QStringLiteral(", ")) + "]",
                            QString::fromStdString(k.eagerDtype),
                            QString::number(k.maxAbsDiff, 'g', 4),
                            QString::number(k.maxRelDiff, 'g', 4),
                            k.bitwiseEqual ? QStringLiteral("\u2713") : QStringLiteral("\u2717"),
                            k.matches ? tr("equal") : tr("DIFFERS %1").arg(QString::fromStdString(k.problem))};
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      item->setToolTip(cells[c]);
      if (!k.matches) item->setForeground(QColor("#E01B24"));
      results_->setItem(row, c, item);
    }
  }
  // Each column as wide as what it holds (the "result" column was cut when the dock was narrow);
  // the table scrolls sideways rather than clipping.
  results_->resizeColumnsToContents();
  bool keysMatch = true;
  for (const auto& k : report.keys) keysMatch = keysMatch && k.matches;
  // What differs comes first, so that a narrow dock still shows it; times and counts follow.
  const Verdict verdict = report.verdict();
  int64_t excused = 0;
  for (const auto& [reason, count] : report.nodesExcused) excused += count;
  QString text = verdict == Verdict::Passed ? tr("PASSED: traced outputs equal eager outputs, every node proven")
                 : verdict == Verdict::NotProven
                     ? (!report.nodeComparisonProblem.empty()
                            ? tr("NOT PROVEN: nothing differs, but the nodes were not compared: %1")
                                  .arg(QString::fromStdString(report.nodeComparisonProblem))
                            : tr("NOT PROVEN: nothing differs, but %n node(s) have no proof", "",
                                 static_cast<int>(report.unproven.size())))
                 : report.keys.empty() ? tr("FAILED: nothing to compare: every out key is \"_\"")
                 : keysMatch           ? tr("DIFFERS: outputs equal, but a node differs")
                                       : tr("DIFFERS: outputs differ");
  if (verdict == Verdict::NotProven && !report.unproven.empty()) {
    // The nodes first, each reason once (a loop of 40 nodes has one reason, not 40 copies of it),
    // so that a narrow dock still shows which nodes.
    std::vector<std::pair<std::string, QStringList>> byReason;
    size_t shown = 0;
    for (const auto& u : report.unproven) {
      auto it = std::find_if(byReason.begin(), byReason.end(), [&](const auto& r) { return r.first == u.reason; });
      if (it == byReason.end()) it = byReason.insert(byReason.end(), {u.reason, {}});
      if (shown < 8) it->second << QString::fromStdString(u.node);
      ++shown;
    }
    QStringList groups;
    for (const auto& [reason, names] : byReason)
      if (!names.isEmpty()) groups << names.join(QStringLiteral(", ")) + QStringLiteral(" (") + QString::fromStdString(reason) + QStringLiteral(")");
    if (report.unproven.size() > 8) groups << tr("%1 more").arg(report.unproven.size() - 8);
    text += QStringLiteral(": ") + groups.join(QStringLiteral("; "));
  }
  if (report.divergence) {
    text += tr("; first differing node: %1 (marked red in the graph)").arg(QString::fromStdString(report.divergence->node));
    if (!report.divergence->problem.empty())
      text += tr(": %1 (eager %2, traced %3)")
                  .arg(QString::fromStdString(report.divergence->problem), QString::fromStdString(report.divergence->eagerValue),
                       QString::fromStdString(report.divergence->tracedValue));
  }
  text += QStringLiteral(" \u2014 ");
  if (report.timed)
    text += tr("eager %1 ms, traced %2 ms; ").arg(report.eagerSeconds * 1e3, 0, 'f', 2).arg(report.tracedSeconds * 1e3, 0, 'f', 2);
  text += tr("%1; %2 nodes compared with their eager values, %3 excused")
              .arg(report.options.bitwise() ? tr("bitwise comparison")
                                            : tr("atol %1, rtol %2").arg(report.options.atol).arg(report.options.rtol))
              .arg(report.nodesCompared)
              .arg(excused);
  if (!report.nodeByNodeReason.empty())
    text += tr("; the traced graph ran node by node: %1").arg(QString::fromStdString(report.nodeByNodeReason));
  if (!report.randomNodes.empty()) {
    QStringList names;
    for (const auto& name : report.randomNodes) names << QString::fromStdString(name);
    text += tr("; likely cause: random numbers drawn by %1").arg(names.join(QStringLiteral(", ")));
  }
  setSummary(text, verdict == Verdict::Passed      ? Outcome::Passed
                   : verdict == Verdict::NotProven ? Outcome::NotProven
                                                   : Outcome::Failed);
}

void VerifyPanel::setSummary(const QString& text, Outcome outcome, const QString& detail) {
  summaryText_ = text;
  QString html = text.toHtmlEscaped();
  // The verdict word in colour: green PASSED, red DIFFERS, a red error.
  static const QString green = QStringLiteral("#1E8449"), red = QStringLiteral("#C0392B");
  const auto coloured = [](const QString& colour, const QString& body) {
    return QStringLiteral("<b style=\"color:%1\">%2</b>").arg(colour, body);
  };
  if (outcome == Outcome::Error) html = coloured(red, html);
  if (outcome == Outcome::Passed || outcome == Outcome::NotProven || outcome == Outcome::Failed) {
    static const QString amber = QStringLiteral("#B9770E");
    const qsizetype colon = html.indexOf(':');
    const QString& colour = outcome == Outcome::Passed ? green : outcome == Outcome::NotProven ? amber : red;
    if (colon > 0) html = coloured(colour, html.left(colon)) + html.mid(colon);
  }
  summary_->setText(html);
  summary_->setToolTip(plainToolTip(text));
  detail_->setPlainText(detail);
  detailButton_->setVisible(!detail.isEmpty());
  detailButton_->setChecked(false);
  resultStack_->setCurrentWidget(results_);
}

QString VerifyPanel::errorDetail() const { return detail_->toPlainText(); }

bool VerifyPanel::detailShown() const { return resultStack_->currentWidget() == detail_; }

}  // namespace tdfx::ui
