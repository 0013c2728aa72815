#pragma once
// The View menu's checkable options (style, direction, expand all, shapes on edges, input checks,
// shape arithmetic, time colouring, following the file, the theme) and the toolbar's depth box: the
// controls, and how they show a ViewOptions. The window changes its options and calls reflect(),
// so no setter has to remember which action to tick.
#include <QAction>
#include <QActionGroup>
#include <QSignalBlocker>
#include <QSpinBox>
#include <algorithm>

#include "tdfx/layout/view_graph.h"

namespace tdfx::ui {

struct ViewToggles {
  QAction* fxStyle = nullptr;
  QAction* leftToRight = nullptr;
  QAction* expandAll = nullptr;
  QAction* shapes = nullptr;
  QAction* checks = nullptr;
  QAction* shapeArithmetic = nullptr;
  QAction* time = nullptr;  ///< its own state: the time overlay is no ViewOptions
  QAction* follow = nullptr;  ///< View > Follow file changes
  QActionGroup* themes = nullptr;  ///< View > Theme; each action's data is its theme (an int)
  QSpinBox* depth = nullptr;  ///< the toolbar's depth box

  /// The theme ticked in View > Theme (0, the system's, before any is).
  int theme() const {
    const QAction* checked = themes ? themes->checkedAction() : nullptr;
    return checked ? checked->data().toInt() : 0;
  }
  void reflectTheme(int theme) const {
    for (QAction* a : themes->actions()) a->setChecked(a->data().toInt() == theme);
  }
  /// Shows depth `depth` of `deepest` in the depth box, without acting on it (0: nothing to expand).
  void reflectDepth(int depthShown, int deepest) const {
    const QSignalBlocker blocker(depth);
    depth->setEnabled(deepest > 0);
    // Greyed out, it says why (issue 57, J: a TransformerEncoder model, one box, no depth to choose).
    depth->setToolTip(deepest > 0
                          ? QObject::tr("Module scopes shown expanded down to this depth; deeper ones are collapsed into one node")
                          : QObject::tr("No module scopes to open or fold: torch.fx calls this graph's modules whole "
                                        "(torch.nn modules are leaves), so each is one node"));
    depth->setRange(0, deepest);
    depth->setValue(std::min(depthShown, deepest));
  }

  void reflect(const ViewOptions& options) const {
    fxStyle->setChecked(options.style == ViewStyle::Fx);
    leftToRight->setChecked(options.rankdir == "LR");
    expandAll->setChecked(options.hierarchy.expandAll);
    shapes->setChecked(options.shapes);
    checks->setChecked(options.checks);
    shapeArithmetic->setChecked(options.shapeArithmetic);
  }
};

}  // namespace tdfx::ui
