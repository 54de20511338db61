#include "tui/top_view.h"

#include <curses.h>
#include <langinfo.h>
#include <unistd.h>

#include <algorithm>
#include <clocale>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <string>

namespace gpudoctor {
namespace {

static_assert(TopView::kResizeKey == KEY_RESIZE);

enum Pair : short { kPairOk = 1, kPairWarn, kPairCrit, kPairDim };

bool NoColorRequested() {
  const char* v = std::getenv("NO_COLOR");
  return v != nullptr && *v != '\0';
}

// The bytes of `s` that fill at most `cols` columns at the locale's character widths. A byte
// that does not decode counts as one column. Replaces a cut at `cols` bytes, which cut lines of
// multi-byte characters early (a 60-column sparkline is 180 bytes).
int BytesForColumns(const std::string& s, int cols) {
  std::mbstate_t mb{};
  size_t i = 0;
  int used = 0;
  while (i < s.size()) {
    wchar_t wc = 0;
    size_t n = std::mbrtowc(&wc, s.data() + i, s.size() - i, &mb);
    int w = 1;
    if (n == static_cast<size_t>(-1) || n == static_cast<size_t>(-2) || n == 0) {
      mb = std::mbstate_t{};
      n = 1;
    } else {
      int cw = wcwidth(wc);  // -1: not printable, drawn as an escape of at least one column
      w = cw < 0 ? 1 : cw;
    }
    if (used + w > cols) break;
    used += w;
    i += n;
  }
  return static_cast<int>(i);
}

}  // namespace

Result<std::unique_ptr<TopView>> TopView::Open() {
  if (isatty(STDOUT_FILENO) != 1 || isatty(STDIN_FILENO) != 1) {
    return Unsupported("top needs a terminal (use `gpudoctor check --json` for scripts)");
  }
  // The terminal's locale, so the wide-character curses library draws UTF-8 ("→", "°") as
  // characters instead of "~F~R" byte escapes.
  std::setlocale(LC_ALL, "");
  if (newterm(nullptr, stdout, stdin) == nullptr) {
    return Unsupported("unknown terminal type (TERM)");
  }
  std::unique_ptr<TopView> view(new TopView());
  const char* codeset = nl_langinfo(CODESET);
  view->utf8_ = codeset != nullptr &&
                (std::strcmp(codeset, "UTF-8") == 0 || std::strcmp(codeset, "utf8") == 0);
  cbreak();
  noecho();
  nonl();
  keypad(stdscr, TRUE);
  curs_set(0);
  if (!NoColorRequested() && has_colors()) {
    start_color();
    use_default_colors();
    init_pair(kPairOk, COLOR_GREEN, -1);
    init_pair(kPairWarn, COLOR_YELLOW, -1);
    init_pair(kPairCrit, COLOR_RED, -1);
    init_pair(kPairDim, COLOR_CYAN, -1);
    view->color_ = true;
  }
  return view;
}

TopView::~TopView() { endwin(); }

int TopView::Width() const { return COLS; }
int TopView::Height() const { return LINES; }

void TopView::Draw(const std::vector<TopLine>& all, int* scroll) {
  erase();
  int rows = LINES;
  // The title stays; the rest scrolls (j/k, arrows, PgUp/PgDn in top_command.cc).
  int body = static_cast<int>(all.size()) - 1;
  int max_scroll = std::max(0, body - (rows - 2));
  *scroll = std::clamp(*scroll, 0, max_scroll);
  std::vector<TopLine> lines;
  if (!all.empty()) lines.push_back(all[0]);
  for (int i = 1 + *scroll; i < static_cast<int>(all.size()); ++i) lines.push_back(all[i]);
  int shown = static_cast<int>(lines.size());
  if (shown > rows) shown = rows - 1;
  for (int i = 0; i < shown; ++i) {
    const TopLine& l = lines[i];
    attr_t attr = A_NORMAL;
    short pair = 0;
    switch (l.style) {
      case TopStyle::kHeader:
        attr = A_BOLD;
        break;
      case TopStyle::kCrit:
        attr = A_BOLD;
        pair = kPairCrit;
        break;
      case TopStyle::kWarn:
        pair = kPairWarn;
        break;
      case TopStyle::kOk:
        pair = kPairOk;
        break;
      case TopStyle::kDim:
        pair = kPairDim;
        break;
      case TopStyle::kNormal:
        break;
    }
    if (!color_) pair = 0;
    attr_set(attr, pair, nullptr);
    int bytes = BytesForColumns(l.text, COLS);
    if (bytes > 0) mvaddnstr(i, 0, l.text.c_str(), bytes);
  }
  attr_set(A_NORMAL, 0, nullptr);
  if (shown < static_cast<int>(lines.size())) {
    std::string more = "... " + std::to_string(lines.size() - shown) +
                       " more lines (j/down to scroll, or enlarge the terminal)";
    mvaddnstr(rows - 1, 0, more.c_str(), COLS);
  }
  refresh();
}

int TopView::ScrollStep(int key, int height) {
  int page = std::max(1, height - 3);
  switch (key) {
    case 'j':
    case KEY_DOWN:
      return 1;
    case 'k':
    case KEY_UP:
      return -1;
    case ' ':
    case KEY_NPAGE:
      return page;
    case KEY_PPAGE:
      return -page;
    case 'g':
    case KEY_HOME:
      return -1000000;
    default:
      return 0;
  }
}

int TopView::ReadKey(int timeout_ms) {
  timeout(timeout_ms);
  int ch = getch();
  return ch == ERR ? -1 : ch;
}

}  // namespace gpudoctor
