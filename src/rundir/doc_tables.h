// Each converted JSON document's field table (json_fields.h): the one list of its keys that its
// writer and its reader both run through. Declared here for tests/rundir's check that what the
// writer writes is what the reader reads. Private to src/rundir.
#pragma once

#include "json_fields.h"
#include "llmprof/rundir/bench_doc.h"
#include "llmprof/rundir/check_doc.h"
#include "llmprof/rundir/checkpoint_meta.h"
#include "llmprof/rundir/env.h"
#include "llmprof/rundir/eval_doc.h"
#include "llmprof/rundir/plan_doc.h"
#include "llmprof/rundir/report_doc.h"
#include "llmprof/rundir/summary.h"
#include "llmprof/rundir/tried_doc.h"
#include "llmprof/rundir/tune_doc.h"

namespace llmprof::rundir::detail {

const JsonFields<BenchDoc>& bench_doc_fields();
const JsonFields<CheckDoc>& check_doc_fields();
const JsonFields<CheckpointMeta>& checkpoint_meta_fields();
const JsonFields<Env>& env_fields();  // but schema_version: bench.json's context too
const JsonFields<EvalDoc>& eval_doc_fields();
const JsonFields<PlanDoc>& plan_doc_fields();
const JsonFields<ReportDoc>& report_doc_fields();
const JsonFields<Summary>& summary_fields();
const JsonFields<TriedDoc>& tried_doc_fields();
const JsonFields<TuneDoc>& tune_doc_fields();
// eval.json's and bench.json's "tokenizer".
const JsonFields<DocTokenizer>& tokenizer_fields();

}  // namespace llmprof::rundir::detail
