#include "tdfx/ui/verify_panel.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrent>

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
      seedRandom_(new QCheckBox(tr("Random ops draw alike"), this)), atol_(toleranceBox(this)),
      rtol_(toleranceBox(this)), runButton_(new QPushButton(tr("Run eager vs traced"), this)),
      cancelButton_(new QPushButton(tr("Cancel"), this)),
      progress_(new QProgressBar(this)), results_(new QTableWidget(0, 7, this)), summary_(new QLabel(this)) {
  inputs_->setHorizontalHeaderLabels({tr("input key"), tr("shape"), tr("dtype")});
  inputs_->horizontalHeader()->setStretchLastSection(true);
  inputs_->setToolTip(tr("Inputs: key parts joined by '.', shape as 32x100, dtype such as float32. Edit to try other inputs."));
  seed_->setRange(0, std::numeric_limits<int>::max());
  seedRandom_->setChecked(true);
  seedRandom_->setToolTip(tr("Seed torch's generator with the seed before the eager and the traced pass, so that "
                             "rand_like, dropout in train mode and the like draw the same numbers in both"));
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
  settings->addRow(tr("Absolute tolerance"), atol_);
  settings->addRow(tr("Relative tolerance"), rtol_);
  auto* rowButtons = new QHBoxLayout;
  rowButtons->addWidget(addRow);
  rowButtons->addWidget(removeRow);
  rowButtons->addStretch();
  settings->addRow(rowButtons);
  settings->addRow(runButton_);
  cancelButton_->setToolTip(tr("Stop the run: the model's worker process is killed, and started again for the next run"));
  cancelButton_->hide();
  connect(cancelButton_, &QPushButton::clicked, this, &VerifyPanel::cancel);
  settings->addRow(cancelButton_);
  pool_.setMaxThreadCount(1);
  progress_->setRange(0, 0);  // busy: the passes report no progress of their own
  progress_->setTextVisible(false);
  progress_->hide();
  settings->addRow(progress_);

  results_->setHorizontalHeaderLabels(
      {tr("out key"), tr("shape"), tr("dtype"), tr("max |\u0394|"), tr("max rel \u0394"), tr("bitwise"), tr("result")});
  results_->horizontalHeader()->setStretchLastSection(true);
  results_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* top = new QHBoxLayout;
  top->addWidget(inputs_, 3);
  top->addLayout(settings, 2);
  top->addWidget(results_, 5);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(summary_);
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

void VerifyPanel::setSession(std::shared_ptr<const ModelSession> session) {
  cancel();  // a run on the previous model (perhaps endless) stops with its worker
  session_ = std::move(session);
  inputs_->setRowCount(0);
  results_->setRowCount(0);
  runButton_->setEnabled(session_ != nullptr);
  if (!session_) {
    summary_->setText(tr("Open a model to compare its eager and traced outputs."));
    return;
  }
  std::set<NestedKey> listed;
  for (const InputSpec& spec : session_->traced.model.exampleInputs) {
    addInputRow(dottedKey(spec.key), shapeText(spec.shape, QStringLiteral("x")),
                QString::fromStdString(dtypeToString(spec.dtype)));
    listed.insert(spec.key);
  }
  // In keys without an example (plain archives): a row to fill in.
  QStringList missing;
  for (const NestedKey& key : session_->traced.model.inKeys)
    if (!listed.count(key)) {
      addInputRow(dottedKey(key), {}, QStringLiteral("float32"));
      missing << dottedKey(key);
    }
  summary_->setText(missing.isEmpty()
                        ? tr("Inputs are random (seeded) tensors of the shapes above. Tolerance 0 compares bitwise.")
                        : tr("The file has no example shape for %1: type one in the shape column (e.g. 1x3x224x224).")
                              .arg(missing.join(QStringLiteral(", "))));
}

std::vector<InputSpec> VerifyPanel::inputSpecs() const {
  std::vector<InputSpec> specs;
  for (int row = 0; row < inputs_->rowCount(); ++row) {
    const auto cell = [&](int column) {
      const QTableWidgetItem* item = inputs_->item(row, column);
      return item ? item->text().trimmed() : QString();
    };
    if (cell(0).isEmpty() && cell(1).isEmpty()) continue;
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
    summary_->setText(QString::fromStdString(e.what()));
    return;
  }
  const uint64_t seed = static_cast<uint64_t>(seed_->value());
  VerifyOptions options;
  options.atol = atol_->value();
  options.rtol = rtol_->value();
  options.randomSeed = seedRandom_->isChecked() ? std::optional<uint64_t>(seed) : std::nullopt;
  runButton_->setEnabled(false);
  progress_->show();
  summary_->setText(tr("Running the eager module and the traced graph..."));
  cancelButton_->show();
  session_->worker->resetCancel();  // a cancel from now on is meant for this run
  const std::shared_ptr<const ModelSession> session = session_;  // kept alive by the job
  // The model runs in the session's worker process; this thread only waits for its answer. A
  // worker that was cancelled or died is started again, and opens the model again, on demand.
  watcher_.setFuture(QtConcurrent::run(&pool_, [session, specs, seed, options]() -> VerifyRun {
    try {
      if (!session->worker->alive()) session->worker->open(session->traced.model.path);
      WorkerVerifyResult run = session->worker->verify(specs, seed, options);
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
  if (result.report) showReport(*result.report);
  else summary_->setText(result.error);
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
      if (!k.matches) item->setForeground(QColor("#E01B24"));
      results_->setItem(row, c, item);
    }
  }
  QString text = tr("%1 \u2014 eager %2 ms, traced %3 ms; %4")
                     .arg(report.passed() ? tr("PASSED: traced outputs equal eager outputs") : tr("FAILED: outputs differ"))
                     .arg(report.eagerSeconds * 1e3, 0, 'f', 2)
                     .arg(report.tracedSeconds * 1e3, 0, 'f', 2)
                     .arg(report.options.bitwise() ? tr("bitwise comparison")
                                                   : tr("atol %1, rtol %2").arg(report.options.atol).arg(report.options.rtol));
  if (report.divergence)
    text += tr("; first differing node: %1 (marked red in the graph)").arg(QString::fromStdString(report.divergence->node));
  if (!report.randomNodes.empty()) {
    QStringList names;
    for (const auto& name : report.randomNodes) names << QString::fromStdString(name);
    text += tr("; likely cause: random numbers drawn by %1").arg(names.join(QStringLiteral(", ")));
  }
  if (report.keys.empty()) text += tr("; nothing to compare: every out key is \"_\"");
  summary_->setText(text);
}

QString VerifyPanel::summary() const { return summary_->text(); }

}  // namespace tdfx::ui
