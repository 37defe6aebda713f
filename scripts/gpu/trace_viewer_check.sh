#!/usr/bin/env bash
# Opens an llmprof trace in the Chrome trace viewer (catapult's, the one chrome://tracing used to
# be; a checkout you bring, e.g. github.com/catapult-project/catapult): tracing/bin/trace2html
# makes a self-contained page of it, headless Chromium loads the page as it is and, driven over
# the DevTools pipe, reads the viewer's model once the import is done. Prints the processes and
# threads, slices per category, flow events per category, import warnings (grouped by type, a few
# quoted) and errors. A page screenshot and summary.json go to OUT_DIR (default: a new temp dir).
# (--dump-dom with --virtual-time-budget cannot do it: the viewer imports in animation frames,
# which virtual time barely runs.) Needs python3 (for trace2html and the pipe) and chromium.
# Usage: scripts/gpu/trace_viewer_check.sh TRACE.json[.gz] CATAPULT_CHECKOUT [OUT_DIR]
# Exits 0 when the viewer imported the trace without an error, a warning or an uncaught exception
# and shows kernels, 1 otherwise, 2 on bad arguments or a missing tool.
set -euo pipefail

usage() {
  echo "usage: $0 TRACE.json CATAPULT_CHECKOUT [OUT_DIR]" >&2
  [ -z "${1:-}" ] || echo "trace_viewer_check: $1" >&2
  exit 2
}
if [ $# -lt 2 ] || [ $# -gt 3 ]; then usage "expected 2 or 3 arguments, got $#"; fi
trace=$1
catapult=$2
[ -f "$trace" ] || usage "no trace file $trace"
[ -f "$catapult/tracing/bin/trace2html" ] ||
  usage "$catapult is not a catapult checkout: no tracing/bin/trace2html in it"
command -v python3 >/dev/null || usage "python3 not found"
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser=$(command -v "$b"); break; fi
done
[ -n "$browser" ] || usage "no chromium on PATH (Debian: apt-get install chromium)"
out=${3:-$(mktemp -d /tmp/trace_viewer_check.XXXXXX)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

python3 "$catapult/tracing/bin/trace2html" --quiet --output "$out/trace.html" "$trace" ||
  { echo "trace_viewer_check: trace2html failed on $trace" >&2; exit 1; }

# Runs in the page once it has loaded: waits for the viewer's import (trace2html's page keeps the
# timeline view in g_timelineViewEl and shows a failed import as an "Import error" overlay).
export PROBE_JS='new Promise(function(resolve){
  var t0=Date.now();
  (function poll(){
    var errs=[];
    Array.prototype.forEach.call(document.querySelectorAll("overlay"),function(o){
      if(o.visible&&o.title==="Import error")errs.push(Polymer.dom(o).textContent);});
    var v=typeof g_timelineViewEl!=="undefined"?g_timelineViewEl:null, m=v&&v.model;
    if(!errs.length&&!m){
      if(Date.now()-t0<120000)return setTimeout(poll,250);
      errs.push("no model after 120 s: the import did not finish");}
    var o={importErrors:errs,processes:[],slices:{},flows:{},counters:0,warnings:[],ms:Date.now()-t0};
    if(m){
      m.importWarnings.forEach(function(w){o.warnings.push([w.type,w.message]);});
      m.flowEvents.forEach(function(f){o.flows[f.category]=(o.flows[f.category]||0)+1;});
      m.getAllProcesses().forEach(function(p){
        var ts=[];
        Object.values(p.threads).forEach(function(t){
          var n=0;
          [t.sliceGroup.slices,t.asyncSliceGroup.slices].forEach(function(list){list.forEach(function(s){
            n++;o.slices[s.category]=(o.slices[s.category]||0)+1;});});
          ts.push({tid:t.tid,name:t.name||"",slices:n});});
        o.counters+=Object.keys(p.counters).length;
        o.processes.push({pid:p.pid,name:p.name||"",threads:ts});});
      o.spanMs=m.bounds.range;
    }
    resolve(o);
  })();
})'

timeout 300 python3 - "$browser" "$out" "$trace" <<'EOF'
import base64, collections, fcntl, json, os, shutil, subprocess, sys, tempfile, time
browser, out, trace = sys.argv[1:4]
# Chromium reads DevTools commands from fd 3 and answers on fd 4, each message ending in \0.
to_browser, cmd_w = os.pipe()
reply_r, from_browser = os.pipe()
def child_fds():
    a = fcntl.fcntl(to_browser, fcntl.F_DUPFD, 10)
    b = fcntl.fcntl(from_browser, fcntl.F_DUPFD, 10)
    os.dup2(a, 3)
    os.dup2(b, 4)
profile = tempfile.mkdtemp(dir=out)
proc = subprocess.Popen(
    [browser, '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
     '--no-first-run', '--no-default-browser-check', '--disable-extensions', '--disable-sync',
     '--disable-background-networking', '--disable-component-update', '--disable-breakpad',
     '--host-resolver-rules=MAP * ~NOTFOUND', '--window-size=1600,1000',
     '--remote-debugging-pipe', '--user-data-dir=' + profile, 'about:blank'],
    pass_fds=(3, 4), preexec_fn=child_fds, stdout=subprocess.DEVNULL,
    stderr=open(os.path.join(out, 'chromium.log'), 'w'))
os.close(to_browser); os.close(from_browser)
buf, events, next_id = b'', [], [0]
def recv():
    global buf
    while b'\0' not in buf:
        chunk = os.read(reply_r, 1 << 20)
        if not chunk:
            sys.exit('trace_viewer_check: chromium closed the DevTools pipe (see chromium.log)')
        buf += chunk
    msg, buf = buf.split(b'\0', 1)
    return json.loads(msg)
def call(method, session=None, **params):
    next_id[0] += 1
    msg = {'id': next_id[0], 'method': method, 'params': params}
    if session: msg['sessionId'] = session
    os.write(cmd_w, json.dumps(msg).encode() + b'\0')
    while True:
        r = recv()
        if r.get('id') == next_id[0]:
            if 'error' in r: sys.exit('trace_viewer_check: %s: %s' % (method, r['error']))
            return r['result']
        events.append(r)
target = call('Target.createTarget', url='about:blank')['targetId']
s = call('Target.attachToTarget', targetId=target, flatten=True)['sessionId']
call('Page.enable', s)
call('Runtime.enable', s)
call('Page.navigate', s, url='file://' + os.path.join(out, 'trace.html'))
while not any(e.get('method') == 'Page.loadEventFired' for e in events):
    events.append(recv())
r = call('Runtime.evaluate', s, expression=os.environ['PROBE_JS'], awaitPromise=True,
         returnByValue=True)
o = r.get('result', {}).get('value') or {'importErrors': ['the probe failed: %s' % r]}
o['exceptions'] = [e['params']['exceptionDetails'].get('exception', {}).get('description') or
                   e['params']['exceptionDetails']['text']
                   for e in events if e.get('method') == 'Runtime.exceptionThrown']
o['console'] = [' '.join(str(a.get('value', a.get('description'))) for a in e['params']['args'])
                for e in events if e.get('method') == 'Runtime.consoleAPICalled' and
                e['params']['type'] in ('error', 'warning')]
time.sleep(1)  # let the timeline draw
shot = os.path.join(out, 'screenshot.png')
open(shot, 'wb').write(base64.b64decode(call('Page.captureScreenshot', s, format='png')['data']))
try:
    call('Browser.close')
except SystemExit:
    pass
proc.wait(timeout=30)
shutil.rmtree(profile, ignore_errors=True)
json.dump(o, open(os.path.join(out, 'summary.json'), 'w'), indent=1)

def counts(d):
    return ', '.join('%s %d' % kv for kv in sorted(d.items(), key=lambda kv: -kv[1])) or 'none'
print('trace_viewer_check: %s, import done in %.1f s, time span %.3f ms' %
      (trace, o.get('ms', 0) / 1e3, o.get('spanMs') or 0))
for p in o.get('processes', []):
    print('  pid %s "%s": %s' % (p['pid'], p['name'], '; '.join(
        'tid %s "%s" %d slices' % (t['tid'], t['name'], t['slices']) for t in p['threads'])))
print('slices by category: ' + counts(o.get('slices', {})))
print('flow events by category: ' + counts(o.get('flows', {})))
print('counter tracks: %d' % o.get('counters', 0))
for c in o['console']:
    print('console: ' + c)
by_type = collections.defaultdict(list)
for t, m in o.get('warnings', []):
    by_type[t].append(m)
print('import warnings: %d' % len(o.get('warnings', [])))
for t, ms in by_type.items():
    print('  %d %s, e.g.' % (len(ms), t))
    for m in ms[:3]:
        print('    "%s"' % m)
errors = o['importErrors'] + o['exceptions']
print('import errors: %d' % len(errors))
for e in errors:
    print('  ' + e)
kernels = o.get('slices', {}).get('kernel', 0)
if not kernels:
    print('FAIL: no kernel slices in the viewer')
print('screenshot: %s; summary: %s' % (shot, os.path.join(out, 'summary.json')))
sys.exit(0 if kernels and not errors and not o.get('warnings') else 1)
EOF
