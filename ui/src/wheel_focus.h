#pragma once
// A spin box that the mouse wheel changes only when the user is working in it (it has focus);
// otherwise the wheel scrolls what holds it, as the user turning it over a panel means (issue 57,
// E: scrolling the Verify dock changed the seed from 0 to 2 when the pointer crossed its box).
#include <QAbstractSpinBox>

namespace tdfx::ui {

/// Installs the rule on `box` (focus by click or Tab, not by the wheel).
void wheelOnlyWhenFocused(QAbstractSpinBox* box);

}  // namespace tdfx::ui
