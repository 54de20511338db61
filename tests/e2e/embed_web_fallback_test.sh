#!/usr/bin/env bash
# scripts/embed_web.py without node/npm on PATH: it still writes a compilable web_assets.cc with
# the "dashboard was not built" page, and fails only when the real page is required.
# Usage: embed_web_fallback_test.sh SOURCE_DIR
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
py=$(python3 -c "import sys; print(sys.executable)")
PATH="$tmp/bin" "$py" "$src/scripts/embed_web.py" --web "$src/web" --dist "$tmp/dist" \
  --out "$tmp/web_assets.cc" 2>"$tmp/err"
grep -q "not built" "$tmp/err" || { echo "FAIL: no warning"; cat "$tmp/err"; exit 1; }
grep -q "WebDashboardBuilt() { return false; }" "$tmp/web_assets.cc" || { echo "FAIL: flag"; exit 1; }
g++ -std=c++20 -fsyntax-only -I"$src/src" "$tmp/web_assets.cc"
if PATH="$tmp/bin" GPUDOCTOR_REQUIRE_WEB=1 "$py" "$src/scripts/embed_web.py" --web "$src/web" \
  --dist "$tmp/dist" --out "$tmp/required.cc" 2>/dev/null; then
  echo "FAIL: GPUDOCTOR_REQUIRE_WEB=1 should fail without npm"
  exit 1
fi
echo "PASS: fallback page embedded without node/npm"
