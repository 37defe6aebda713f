// The field tables shared by the sweep documents (sweep_doc_json.h): the context block of
// plan.json and sweep.json, and a point record's outcome.
#include <climits>
#include <string>
#include <utility>

#include "json_forms.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/read.h"
#include "sweep_doc_json.h"

namespace llmprof::rundir::detail {

namespace {

constexpr const char* kResumePolicy =
    "a re-run or re-submission skips points whose summary.json says completed or diverged "
    "(diverged is an outcome of the config); failed, interrupted and unfinished points run "
    "again, their earlier run directory and log renamed to <id>.attempt<N>; a point runs only "
    "under its lock runs/<id>.lock, so no two tasks ever run it at once";

const JsonFields<GridAxis, OJson>& axis_fields() {
  static const JsonFields<GridAxis, OJson> f = {
      member<OJson>("key", &GridAxis::key, Presence::kRequired),
      member<OJson>("values", &GridAxis::values, Presence::kRequired),
      member<OJson>("origin", &GridAxis::origin, Presence::kRequired)};
  return f;
}

// A count or a rate where 0 means none: written as null, and null read as 0.
template <typename M>
JsonField<SweepContext, OJson> zero_as_null(std::string key, M SweepContext::*m, Presence p) {
  return converted<SweepContext, OJson>(
      std::move(key), p,
      [m](const SweepContext& c) { return c.*m > 0 ? OJson(c.*m) : OJson(nullptr); },
      [m](SweepContext& c, ObjectReader& o, DocContext&, const std::string& key) {
        M v{};
        read_value(o, key, v);
        c.*m = v;
      });
}

// The context's fields after the status: the launcher, where the sweep is, its grid, counts, the
// thread split, the shared peak, the command and this invocation.
JsonFields<SweepContext, OJson> settings_fields(SweepFile in) {
  using C = SweepContext;
  constexpr Presence kFirst = Presence::kRequired;
  const Presence since = since_first_or_later(in);
  return {name_member<OJson>("launcher", &C::launcher, since),
          member<OJson>("base_config", &C::base_config, kFirst),
          member<OJson>("sweep_dir", &C::sweep_dir, kFirst),
          member<OJson>("workdir", &C::workdir, since),
          list("grid", &C::grid, axis_fields(), kFirst),
          member<OJson>("overrides", &C::overrides, kFirst),
          member<OJson>("repeat", &C::repeat, kFirst),
          member<OJson>("jobs", &C::jobs, kFirst),
          member<OJson>("jobs_requested", &C::jobs_requested, kFirst),
          member<OJson>("jobs_policy", &C::jobs_policy, kFirst),
          zero_as_null("threads_per_point", &C::threads_per_point, kFirst),  // swept: varies
          member<OJson>("threads_source", &C::threads_source, Presence::kLater),
          zero_as_null("peak_flops_per_s", &C::peak_flops_per_s, since),
          member<OJson>("peak_source", &C::peak_source, since),
          null_if_empty<OJson>("peak_measured_at", &C::peak_measured_at, since),
          member<OJson>("peak_reused", &C::peak_reused, since),
          member<OJson>("cores", &C::cores, kFirst),
          member<OJson>("command_line", &C::command_line, kFirst),
          member<OJson>("start_time", &C::start_time, kFirst),
          member<OJson>("invocation", &C::invocation, since),
          fixed<C, OJson>("resume_policy", kResumePolicy)};  // a fixed sentence, written again
}

}  // namespace

const JsonFields<SweepContext, OJson>& sweep_status_fields() {
  static const JsonFields<SweepContext, OJson> f = {
      name_member<OJson>("status", &SweepContext::status, Presence::kRequired),
      null_if_empty<OJson>("status_note", &SweepContext::status_note, Presence::kLater)};
  return f;
}

const JsonFields<SweepContext, OJson>& context_fields(SweepFile in) {
  static const JsonFields<SweepContext, OJson> plan =
      joined<SweepContext, OJson>({sweep_status_fields(), settings_fields(SweepFile::kPlan)});
  static const JsonFields<SweepContext, OJson> sweep =
      joined<SweepContext, OJson>({sweep_status_fields(), settings_fields(SweepFile::kSweep)});
  return in == SweepFile::kSweep ? sweep : plan;
}

JsonField<PointOutcome, OJson> small_int_member(std::string key,
                                                std::optional<int> PointOutcome::*m,
                                                Presence p) {
  JsonField<PointOutcome, OJson> f = member<OJson>(std::move(key), m, p);
  f.read = [m](PointOutcome& r, ObjectReader& o, DocContext&, const std::string& key) {
    const std::optional<int64_t> v = o.integer(key);
    if (v && (*v < INT_MIN || *v > INT_MAX)) o.fail(key, "an integer of int's range");
    r.*m = v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
  };
  return f;
}

const JsonFields<PointOutcome, OJson>& record_outcome_fields() {
  using R = PointOutcome;
  constexpr Presence kFirst = Presence::kRequired;
  static const JsonFields<R, OJson> f = {name_member<OJson>("status", &R::status, kFirst),
                                         small_int_member("exit_code", &R::exit_code, kFirst),
                                         small_int_member("signal", &R::signal, kFirst),
                                         member<OJson>("message", &R::message, kFirst),
                                         member<OJson>("run_dir", &R::run_dir, kFirst),
                                         member<OJson>("log", &R::log_path, kFirst),
                                         member<OJson>("host", &R::host, kFirst),
                                         member<OJson>("slurm_job_id", &R::slurm_job_id, kFirst),
                                         member<OJson>("slurm_task_id", &R::slurm_task_id, kFirst),
                                         member<OJson>("start_time", &R::start_time, kFirst),
                                         member<OJson>("end_time", &R::end_time, kFirst),
                                         member<OJson>("duration_s", &R::duration_s, kFirst),
                                         member<OJson>("invocation", &R::invocation, kFirst),
                                         member<OJson>("moved_aside", &R::moved_aside, kFirst)};
  return f;
}

}  // namespace llmprof::rundir::detail
