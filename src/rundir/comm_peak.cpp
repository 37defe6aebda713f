// comm_peak.csv's writer and reader (llmprof/rundir/comm_peak.h).
#include "llmprof/rundir/comm_peak.h"

#include "llmprof/output/csv.h"
#include "read_util.h"

namespace llmprof::rundir {

namespace {
const std::vector<std::string> kColumns = {
    "bytes",    "elements", "dtype",   "world_size",       "backend",          "warmup_iters",
    "iters",    "time_us",  "min_rank_time_us", "max_rank_time_us", "algbw_gb_per_s",
    "busbw_gb_per_s"};
}

void write_comm_peak(const std::string& path, const std::vector<CommPeakRow>& rows) {
  output::CsvWriter csv(path, kColumns, output::CsvMode::kWhole);
  for (const CommPeakRow& r : rows) {
    csv.add(r.bytes).add(r.elements).add(std::string_view(r.dtype)).add(r.world_size);
    csv.add(std::string_view(r.backend)).add(r.warmup_iters).add(r.iters);
    csv.add(r.time_us).add(r.min_rank_time_us).add(r.max_rank_time_us);
    csv.add(r.algbw_gb_per_s).add(r.busbw_gb_per_s);
    csv.end_row();
  }
  csv.commit();
}

std::vector<CommPeakRow> read_comm_peak(const std::string& path) {
  const detail::CsvFile f = detail::read_csv(path);
  std::vector<int> col;
  for (const std::string& name : kColumns) col.push_back(f.require(name));
  std::vector<CommPeakRow> rows;
  for (size_t i = 0; i < f.rows.size(); ++i) {
    CommPeakRow r;
    r.bytes = f.required_integer(i, col[0]);
    r.elements = f.required_integer(i, col[1]);
    r.dtype = f.text(i, col[2]);
    r.world_size = f.required_integer(i, col[3]);
    r.backend = f.text(i, col[4]);
    r.warmup_iters = f.required_integer(i, col[5]);
    r.iters = f.required_integer(i, col[6]);
    r.time_us = f.required_number(i, col[7]);
    r.min_rank_time_us = f.required_number(i, col[8]);
    r.max_rank_time_us = f.required_number(i, col[9]);
    r.algbw_gb_per_s = f.required_number(i, col[10]);
    r.busbw_gb_per_s = f.required_number(i, col[11]);
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace llmprof::rundir
