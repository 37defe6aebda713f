#!/usr/bin/env bash
# The HTML report in a real browser: `llmprof report --format html` on the report fixtures (runs,
# a run cut short, a sweep, a comparison) opened by headless Chromium, which
#   - dumps the DOM after the page's script ran: every table's section, every chart gnuplot draws
#     for these inputs, findings, warnings, config files; the sort script ran;
#   - clicks a numeric column title (a copy of the page with a test script appended) and checks
#     the rows come out in order of their raw values;
#   - logs its network activity: the page asked for no URL (a deliberately bad page, checked the
#     same way, shows the check can see one), and it reports no blocked load;
#   - takes a screenshot (kept in the work directory).
# Usage: browser_test.sh LLMPROF_BINARY SOURCE_DIR WORK_DIR. Exits 77 (ctest: skipped) when
# Chromium is absent and cannot be installed.
set -euo pipefail

llmprof=$1
src=$2
work=$3
fixtures=$src/tests/report/fixtures

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# --- Chromium: use it, or install it (Debian package `chromium`), or skip. -----------------------
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser=$(command -v "$b"); break; fi
done
if [ -z "$browser" ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "browser_test: chromium missing, installing it (apt-get install chromium)"
    if DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1; then
      browser=$(command -v chromium || true)
    fi
  fi
fi
if [ -z "$browser" ]; then
  echo "SKIPPED: chromium is not installed and could not be installed (apt-get install chromium" \
    "as root); the HTML report was not checked in a browser"
  exit 77
fi
echo "browser_test: $("$browser" --version 2>/dev/null | head -1)"

rm -rf "$work"
mkdir -p "$work"

# Flags for a container as root, no GPU; no name resolves, and Chromium's own background traffic
# (updates, sync) is turned off as far as flags go. Its remaining requests carry no file://
# isolation key, so page_requests() below tells them from the page's.
run_browser() {
  local profile
  profile=$(mktemp -d "$work/profile.XXXXXX")
  timeout 120 "$browser" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --no-default-browser-check --disable-extensions --disable-sync \
    --disable-background-networking --disable-component-update --disable-breakpad \
    "--host-resolver-rules=MAP * ~NOTFOUND" --user-data-dir="$profile" \
    --enable-logging=stderr --v=0 "$@"
  rm -rf "$profile"
}

# URLs the page asked the network for: requests whose isolation key is the file:// page.
page_requests() {
  grep '"network_isolation_key":"file://' "$1" | grep -o '"url":"[^"]*"' |
    grep -v '"url":"\(file\|data\):' || true
}

# --- The page. --------------------------------------------------------------------------------
cut=$work/run_cut
cp -r "$fixtures/run_a" "$cut"
steps=$(cat "$fixtures/run_a/steps.csv")
printf '%s' "${steps:0:$((${#steps} - 40))}" >"$cut/steps.csv"  # killed mid-row
: >"$cut/modules.csv"                                              # an empty file
rm "$cut/summary.json"
inputs=("$fixtures/run_a" "$cut" "$fixtures/sweep_2d")
page=$work/report.html
"$llmprof" report "${inputs[@]}" --compare "$fixtures/run_a" "$fixtures/run_b" --format html \
  --out "$page" 2>"$work/report.err" || fail "llmprof report exited $?: $(cat "$work/report.err")"
[ -s "$page" ] || fail "no page written"
"$llmprof" report "${inputs[@]}" --compare "$fixtures/run_a" "$fixtures/run_b" --format json \
  --out "$work/report.json" 2>/dev/null
if command -v gnuplot >/dev/null 2>&1; then
  "$llmprof" plot "${inputs[@]}" "$fixtures/run_b" --format svg --out "$work/plots" >"$work/plot.out"
  charts=$(grep -c '^wrote ' "$work/plot.out" || true)
  [ "$charts" -ge 8 ] || fail "llmprof plot drew only $charts charts: $(cat "$work/plot.out")"
else  # the page is written without charts and says why
  : >"$work/plot.out"
  charts=0
  grep -q 'Charts left out: .*not found on PATH' "$page" || fail "no note on the missing charts"
fi

# Nothing in the file points outside it.
if grep -Eio "(src|href)[[:space:]]*=[[:space:]]*[\"']?[[:space:]]*(https?:|//|file:)[^\"' >]*" "$page"; then
  fail "the page references the outside (above)"
fi
if grep -Eio "url\([[:space:]]*[\"']?(https?:|//)[^)]*\)|@import" "$page"; then
  fail "the page's style references the outside (above)"
fi

# --- The DOM after scripts ran, and the network log. ------------------------------------------
run_browser --log-net-log="$work/net.json" --virtual-time-budget=3000 --dump-dom \
  "file://$page" >"$work/dom.html" 2>"$work/browser.err" || fail "chromium failed: $(tail -5 "$work/browser.err")"
grep -q 'data-sort-ready="1"' "$work/dom.html" || fail "the page's script did not run"
ids=$(grep -o '"id": "[^"]*"' "$work/report.json" | sed 's/"id": "\(.*\)"/\1/')
[ "$(echo "$ids" | wc -l)" -ge 15 ] || fail "too few tables in report.json: $ids"
for id in $ids; do
  grep -qF "class=\"table\" data-table=\"$id\">" "$work/dom.html" || fail "no section for table $id"
done
sections="warnings findings inputs contents"
# "Charts" lists what was not drawn, or why none were.
if grep -q '^skipped ' "$work/plot.out" || [ "$charts" -eq 0 ]; then sections="$sections charts"; fi
for section in $sections; do
  grep -q "id=\"$section\"" "$work/dom.html" || fail "no section $section"
done
grep -q '<footer>' "$work/dom.html" || fail "no footer"
for name in $(sed -n 's|^wrote *.*/\([^/]*\)\.svg$|\1|p' "$work/plot.out"); do
  grep -qF "id=\"chart-$name\"" "$work/dom.html" || fail "chart $name is not on the page"
done
svgs=$( (grep -o '<svg' "$work/dom.html" || true) | wc -l)
[ "$svgs" -eq "$charts" ] || fail "$svgs inline svg elements on the page, llmprof plot drew $charts"
for f in "$fixtures/run_a/config.yaml" "$fixtures/run_b/env.json" "$fixtures/sweep_2d/sweep.json"; do
  grep -qF "<code>$f</code>" "$work/dom.html" || fail "$f is not shown"
done
requests=$(page_requests "$work/net.json")
[ -z "$requests" ] || fail "the page requested: $requests"
# The page's console: a load the Content-Security-Policy blocked, or an error of its script.
if grep "CONSOLE" "$work/browser.err" | grep -i "Refused to\|Content Security Policy\|net::ERR\|Uncaught"; then
  fail "the browser blocked a load or the script failed (above)"
fi

# The network check can see a request: a page that asks for one.
printf '<!DOCTYPE html><img src="http://llmprof-test.invalid/x.png">' >"$work/bad.html"
run_browser --log-net-log="$work/net_bad.json" --virtual-time-budget=3000 --dump-dom \
  "file://$work/bad.html" >/dev/null 2>&1 || true
[ -n "$(page_requests "$work/net_bad.json")" ] || fail "the network check missed a request"

# --- Sorting by a click, in the browser. ------------------------------------------------------
cat >"$work/sort_check.js" <<'EOF'
<script>
(function(){
  // The numeric column with the most distinct values on the page, clicked once and twice.
  function values(body,c){return Array.prototype.map.call(body.rows,function(r){
    var v=r.cells[c]&&r.cells[c].getAttribute('data-value');return v===null?null:parseFloat(v);})
    .filter(function(v){return v!==null;});}
  var best=null;
  document.querySelectorAll('table.sortable').forEach(function(t){
    Array.prototype.forEach.call(t.tHead.rows[0].cells,function(th,c){
      if(th.getAttribute('data-type')!=='num')return;
      var distinct=new Set(values(t.tBodies[0],c)).size;
      if(!best||distinct>best.distinct)best={table:t,th:th,c:c,distinct:distinct};
    });
  });
  var out='no numeric column with 3 or more distinct values';
  if(best&&best.distinct>=3){
    var body=best.table.tBodies[0],before=values(body,best.c);
    best.th.click();
    var up=values(body,best.c);
    best.th.click();
    var down=values(body,best.c);
    var ok=up.every(function(v,i){return i===0||up[i-1]<=v;})&&
           down.every(function(v,i){return i===0||down[i-1]>=v;})&&
           up.length===before.length&&best.th.getAttribute('aria-sort')==='descending';
    out=(ok?'ok ':'fail ')+best.table.id+' column '+best.c+': '+up.join(',')+' / '+down.join(',');
  }
  document.body.setAttribute('data-sort-check',out);
})();
</script>
EOF
sed '/<\/body>/{
r '"$work/sort_check.js"'
}' "$page" >"$work/sorted.html"
run_browser --virtual-time-budget=3000 --dump-dom "file://$work/sorted.html" \
  >"$work/sorted_dom.html" 2>/dev/null || fail "chromium failed on the sort check"
check=$(grep -o 'data-sort-check="[^"]*"' "$work/sorted_dom.html" || true)
echo "browser_test: sort check: $check"
case "$check" in
  'data-sort-check="ok '*) ;;
  *) fail "sorting by a click: ${check:-no result}" ;;
esac

# --- Screenshot. ------------------------------------------------------------------------------
run_browser --window-size=1280,1600 --hide-scrollbars --screenshot="$work/report.png" \
  "file://$page" >/dev/null 2>&1 || fail "chromium failed to take the screenshot"
[ "$(head -c 8 "$work/report.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] ||
  fail "the screenshot is not a PNG"
size=$(stat -c %s "$work/report.png")
[ "$size" -gt 20000 ] || fail "the screenshot is only $size bytes: a blank page?"

echo "browser_test: ok: $(echo "$ids" | wc -l) tables, $svgs charts, no network request;" \
  "screenshot $work/report.png ($size bytes)"
