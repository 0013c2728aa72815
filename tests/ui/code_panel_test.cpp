// CodePanel without a window: FX-shaped code (blank lines before `def`), the statements of nodes
// highlighted, and which cursor moves choose a node.
#include <QApplication>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTextBlock>
#include <gtest/gtest.h>

#include "tdfx/ui/code_panel.h"

namespace tdfx::ui {
namespace {

const QString kCode = QStringLiteral("\n\n\ndef forward(self, x):\n    relu = torch.relu(x);  x = None\n"
                                     "    fc = self.fc(relu);  relu = None\n    return fc\n");
const std::map<std::string, int> kLines{{"relu", 5}, {"fc", 6}};

int cursorLine(const CodePanel& p) { return p.code()->textCursor().blockNumber() + 1; }

TEST(CodePanel, TheListingOpensAtDefAndHighlightsTheStatementsOfNodes) {
  CodePanel panel;
  QSignalSpy chosen(&panel, &CodePanel::nodeChosen);
  panel.setCode(kCode, kLines);
  panel.showStart();
  EXPECT_EQ(cursorLine(panel), 4);
  panel.highlight({"fc", "relu", "not_in_the_code"});
  ASSERT_EQ(panel.code()->extraSelections().size(), 2);
  EXPECT_EQ(cursorLine(panel), 5) << "the first statement";
  panel.highlight({});
  EXPECT_TRUE(panel.code()->extraSelections().isEmpty());
  EXPECT_TRUE(chosen.isEmpty()) << "the panel's own moves choose no node";
  EXPECT_EQ(panel.lineOf("fc"), QStringLiteral("fc = self.fc(relu);  relu = None"));
  EXPECT_TRUE(panel.lineOf("x").isEmpty());
}

TEST(CodePanel, TheUsersCursorOnAStatementChoosesItsNode) {
  CodePanel panel;
  panel.setCode(kCode, kLines);
  QSignalSpy chosen(&panel, &CodePanel::nodeChosen);
  panel.code()->setTextCursor(QTextCursor(panel.code()->document()->findBlockByNumber(5)));  // line 6
  ASSERT_EQ(chosen.size(), 1);
  EXPECT_EQ(chosen.first().first().toString(), QStringLiteral("fc"));
  panel.setCurrentIndex(1);
  panel.showLine(5);  // an inspector's code link
  EXPECT_EQ(panel.currentWidget(), panel.code());
  ASSERT_EQ(chosen.size(), 2);
  EXPECT_EQ(chosen.last().first().toString(), QStringLiteral("relu"));
  panel.code()->setTextCursor(QTextCursor(panel.code()->document()->findBlockByNumber(3)));  // def: no node
  EXPECT_EQ(chosen.size(), 2);
}

// Issue 57, N: short code (it fits the panel, so nothing scrolls) started with FX's three blank
// lines, and so did the code after a depth change. They are hidden; the lines keep their numbers.
TEST(CodePanel, ShortCodeStartsAtDefWithItsLinesNumberedAsFxNumbersThem) {
  CodePanel panel;
  panel.resize(600, 500);
  panel.show();
  for (int change = 0; change < 2; ++change) {  // a new model, then its code after a depth change
    panel.setCode(kCode, kLines);
    panel.showStart();
    QApplication::processEvents();
    EXPECT_TRUE(panel.code()->cursorForPosition(QPoint(4, 4)).block().text().startsWith(QStringLiteral("def ")))
        << "top line: '" << panel.code()->cursorForPosition(QPoint(4, 4)).block().text().toStdString() << "'";
    EXPECT_EQ(panel.lineOf("relu"), QStringLiteral("relu = torch.relu(x);  x = None"));
    panel.highlight({"fc"});
    EXPECT_EQ(cursorLine(panel), 6);
  }
}

}  // namespace
}  // namespace tdfx::ui
