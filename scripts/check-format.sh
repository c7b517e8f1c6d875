#!/usr/bin/env bash
# Fails, listing the files, when any of Drip's C++ sources differ from clang-format.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.c' 2>/dev/null | grep -v '^build' || true)
[ "${#files[@]}" -eq 0 ] && exit 0
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if ! clang-format --style=file "$f" | cmp -s - "$f"; then bad+=("$f"); fi
done
if [ "${#bad[@]}" -ne 0 ]; then
  echo "check-format: not clang-formatted (run clang-format -i): ${bad[*]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files clean"
