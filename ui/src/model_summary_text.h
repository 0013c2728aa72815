#pragma once
// The Model panel's text: what the open file is and holds, as rich text.
#include <QString>

#include "tdfx/runtime/verify.h"
#include "tdfx/ui/model_session.h"

namespace tdfx::ui {

/// File name and size, format (tdfx archive or plain TorchScript, and how it was exported),
/// parameter and buffer counts and bytes, the input keys with their shapes, and the output keys
/// with their shapes once `report` (the last run, may be null) has them.
QString modelSummaryHtml(const ModelSession& session, const VerifyReport* report);

}  // namespace tdfx::ui
