#pragma once
// The View menu's checkable options (style, direction, expand all, shapes on edges, input checks,
// shape arithmetic, time colouring): the actions, and how they show a ViewOptions. The window
// changes its options and calls reflect(), so no setter has to remember which action to tick.
#include <QAction>

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
