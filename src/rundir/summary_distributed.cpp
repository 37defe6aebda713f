// summary.json "distributed": a rank's own section and the merged run's, written and read.
#include "summary_sections.h"

namespace llmprof::rundir::detail {

namespace {

template <typename T>
std::vector<T> list_of(ObjectReader& o, const std::string& key, bool (Json::*is)() const,
                       const char* expected) {
  std::vector<T> out;
  const Json* v = o.raw(key);
  if (v == nullptr || v->is_null()) return out;
  if (!v->is_array()) o.fail(key, expected);
  for (const Json& item : *v) {
    if (!(item.*is)()) o.fail(key, expected);
    out.push_back(item.get<T>());
  }
  return out;
}

Json rank_json(const RankFigures& r) {
  return {{"rank", r.rank},
          {"step_ms_median", opt(r.step_ms)},
          {"data_ms_median", opt(r.data_ms)},
          {"forward_ms_median", opt(r.forward_ms)},
          {"backward_ms_median", opt(r.backward_ms)},
          {"optimizer_ms_median", opt(r.optimizer_ms)},
          {"tokens_per_s_median", opt(r.tokens_per_s)},
          {"mfu_median", opt(r.mfu)},
          {"final_train_step_loss", opt(r.final_train_step_loss)}};
}

RankFigures read_rank(ObjectReader& o) {
  RankFigures r;
  r.rank = o.integer("rank").value_or(0);
  r.step_ms = o.number("step_ms_median");
  r.data_ms = o.number("data_ms_median");
  r.forward_ms = o.number("forward_ms_median");
  r.backward_ms = o.number("backward_ms_median");
  r.optimizer_ms = o.number("optimizer_ms_median");
  r.tokens_per_s = o.number("tokens_per_s_median");
  r.mfu = o.number("mfu_median");
  r.final_train_step_loss = o.number("final_train_step_loss");
  return r;
}

}  // namespace

Json distributed_json(const DistributedFigures& d) {
  Json j;
  if (d.rank) {
    j = {{"rank", *d.rank},
         {"world_size", d.world_size},
         {"top_dir", d.top_dir},
         {"parameter_digest", d.parameter_digest}};
  } else {
    j = {{"world_size", d.world_size},
         {"backend", d.backend},
         {"launcher", d.launcher},
         {"overlap", d.overlap},
         {"bucket_mb", d.bucket_mb},
         {"first_bucket_mb", d.first_bucket_mb},
         {"bucket_count", d.bucket_bytes.size()},
         {"bucket_bytes", d.bucket_bytes},
         {"bytes_per_step", d.bytes_per_step},
         {"rank0_comm_ms_first_step", opt(d.rank0_comm_ms_first_step)},
         {"rank0_comm_ms_per_step_median", opt(d.rank0_comm_ms_per_step_median)},
         {"comm_ms_note", d.comm_ms_note},
         {"times_note", d.times_note},
         {"rank_dirs", d.rank_dirs}};
    // The global figures' scope and each rank's own: written by a merge of several ranks.
    if (!d.ranks.empty()) {
      j["figures_scope"] = d.figures_scope;
      Json ranks = Json::array();
      for (const RankFigures& r : d.ranks) ranks.push_back(rank_json(r));
      j["ranks"] = ranks;
    }
  }
  if (d.comm) {
    j["comm"] = comm_json(*d.comm);
  } else if (!d.comm_error.empty()) {
    j["comm"] = {{"error", d.comm_error}};
  }
  return j;
}

DistributedFigures read_distributed(ObjectReader& o) {
  DistributedFigures d;
  d.world_size = o.integer("world_size").value_or(0);
  d.rank = o.integer("rank");
  d.top_dir = o.text("top_dir").value_or("");
  d.parameter_digest = o.text("parameter_digest").value_or("");
  d.backend = o.text("backend").value_or("");
  d.launcher = o.text("launcher").value_or("");
  d.overlap = o.boolean("overlap").value_or(false);
  d.bucket_mb = o.number("bucket_mb").value_or(0);
  d.first_bucket_mb = o.number("first_bucket_mb").value_or(0);
  o.integer("bucket_count");  // the number of bucket_bytes
  d.bucket_bytes = list_of<int64_t>(o, "bucket_bytes", &Json::is_number_integer,
                                    "an array of integers");
  d.bytes_per_step = o.integer("bytes_per_step").value_or(0);
  d.rank0_comm_ms_first_step = o.number("rank0_comm_ms_first_step");
  d.rank0_comm_ms_per_step_median = o.number("rank0_comm_ms_per_step_median");
  d.comm_ms_note = o.text("comm_ms_note").value_or("");
  d.times_note = o.text("times_note").value_or("");
  d.rank_dirs = list_of<std::string>(o, "rank_dirs", &Json::is_string, "an array of strings");
  d.figures_scope = o.text("figures_scope").value_or("");
  for (ObjectReader& r : o.objects("ranks")) {
    d.ranks.push_back(read_rank(r));
    r.keep_unknown();
  }
  // The analysis, or why there is none ({"error": ...}).
  if (std::optional<ObjectReader> c = o.object("comm")) {
    if (c->has("error")) {
      d.comm_error = c->text("error").value_or("");
    } else {
      d.comm = read_comm(*c);
    }
    c->keep_unknown();
  }
  return d;
}

}  // namespace llmprof::rundir::detail
