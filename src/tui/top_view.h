// `gpudoctor top` terminal view (ncurses). Draws the model's lines with erase + one refresh per
// frame (curses sends only the changed cells, so the screen does not flicker), follows terminal
// resizes, and reads keys with a timeout. Colour only when the terminal has it and NO_COLOR is
// unset or empty. Lines are cut at the terminal's width in columns (the locale's character
// widths), so multi-byte characters (sparklines, "→") are not cut early and a double-width one
// never wraps. Not thread-safe: create, use and destroy it on one thread.
#pragma once

#include <memory>
#include <vector>

#include "core/status.h"
#include "tui/top_model.h"

namespace gpudoctor {

class TopView {
 public:
  // Takes over the terminal (initscr). Errors: unsupported when stdout is not a terminal or
  // TERM is unknown.
  static Result<std::unique_ptr<TopView>> Open();
  ~TopView();  // restores the terminal (endwin)
  TopView(const TopView&) = delete;
  TopView& operator=(const TopView&) = delete;

  int Width() const;
  int Height() const;
  // True when the terminal's locale is UTF-8 (block-character sparklines draw as characters);
  // false: set TopViewState::unicode = false for ASCII ones.
  bool Utf8() const { return utf8_; }
  // Draws `lines`: the first (title) always, then the rest from `*scroll` on; `*scroll` is clamped
  // to what can move. Lines past the height are dropped and the last row says how many.
  void Draw(const std::vector<TopLine>& lines, int* scroll);
  // The next key within timeout_ms, or -1. A resize is reported as kResizeKey.
  int ReadKey(int timeout_ms);

  static constexpr int kResizeKey = 0x19a;  // KEY_RESIZE
  // Lines to scroll for a key: j/down +1, k/up -1, PgDn/space +page, PgUp -page, g/Home to the
  // top; 0 for other keys.
  static int ScrollStep(int key, int height);

 private:
  TopView() = default;
  bool color_ = false;
  bool utf8_ = false;
};

}  // namespace gpudoctor
