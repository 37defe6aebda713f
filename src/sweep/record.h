// A point's record, runs/<id>.point.json: what `llmprof sweep run-point` knows of the point it
// runs (status, exit, host, Slurm job and task, start and end), rewritten atomically when the
// point starts and when it ends. sweep.csv and sweep.json are made from these records and the
// points' locks, by whichever process changed one: no process holds the whole sweep in memory,
// so tasks on many nodes can finish in any order. Private to src/sweep.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan.h"
#include "results.h"

namespace llmprof::sweep {

// <sweep>/runs/<id>.point.json
std::string record_path(const Plan& plan, const Point& p);

// <sweep>/runs/<id>.lock: held while a run-point runs the point.
std::string point_lock_path(const Plan& plan, const Point& p);

// Writes the record atomically. Throws IoError.
void write_record(const Plan& plan, const Point& p, const PointResult& r);

// The record, or nullopt when absent (a point with no record has not started). A record that
// does not read (records are written whole: damaged by hand, or from a newer llmprof) is a
// DataError naming it and the field.
std::optional<PointResult> read_record(const Plan& plan, const Point& p);

// What is known of p now: its record, with a "running" one whose lock nobody holds turned into
// "interrupted" (the task was killed, or its node died, before it could say so); metrics from
// its summary.json; a point without a record is pending unless an earlier run of the same config
// finished. reused: finished by another launcher invocation than the plan's.
PointResult current_result(const Plan& plan, const Point& p);

// current_result of every point, in plan order.
std::vector<PointResult> current_results(const Plan& plan);

// Rewrites sweep.csv and sweep.json from the records, under <sweep>/.tables.lock so that two
// writers never interleave; sweep.json says "finished" once no point is pending or running.
// Returns the results it wrote. Throws IoError.
std::vector<PointResult> refresh_tables(const Plan& plan);

}  // namespace llmprof::sweep
