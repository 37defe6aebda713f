// The dataset readers (data::read_text_dataset): the input read as text, JSONL, CSV and TSV in
// turn, gunzipped first when it starts with gzip's magic bytes (the file is then named *.gz).
// Properties: each read gives records or throws DataError naming the file; every row seen is
// either a record or counted bad; record lines are in order.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "llmprof/config/enums.h"
#include "llmprof/data/text_dataset.h"
#include "llmprof/error.h"

using namespace llmprof;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  const std::string path = fuzz::write_scratch(gzip ? "data.gz" : "data", text);
  for (auto format : {config::DataFormat::kText, config::DataFormat::kJsonl,
                      config::DataFormat::kCsv, config::DataFormat::kTsv}) {
    data::TextReadOptions opt;
    opt.format = format;
    opt.jsonl_fields = {"question", "answer"};
    opt.label_column = "label";
    opt.num_labels = 2;
    try {
      const data::TextDataset ds = data::read_text_dataset(path, opt);
      fuzz::check(static_cast<int64_t>(ds.records.size()) + ds.bad_rows == ds.rows_read,
                  "rows read are neither records nor bad rows");
      int64_t previous = 0;
      for (const data::TextRecord& r : ds.records) {
        fuzz::check(r.line > previous, "record lines out of order");
        previous = r.line;
      }
    } catch (const DataError& e) {
      fuzz::check_readable(e.what());
      fuzz::check(std::string(e.what()).find(path) != std::string::npos,
                  "a dataset DataError does not name the file");
    }
  }
  return 0;
}
