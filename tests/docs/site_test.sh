#!/usr/bin/env bash
# The user guide as a site: `mkdocs build --strict` over docs/ (mkdocs.yml) into a scratch folder,
# so that a broken link or a page missing from nav fails. Skipped (exit 77) without mkdocs
# (scripts/test.sh installs Debian's package).
set -euo pipefail
src=${1:?usage: site_test.sh SOURCE_DIR}
command -v mkdocs >/dev/null 2>&1 || { echo "site_test: mkdocs not installed: skipped"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdocs build --strict --quiet --config-file "$src/mkdocs.yml" --site-dir "$out"
echo "site_test: ok ($(find "$out" -name '*.html' | wc -l) pages)"
