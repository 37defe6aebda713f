// checkpoint.json, beside the weights (model.pt) of a checkpoint `llmprof train` saves: what the
// loader checks before it reads any weight. Torch-free; the weights are read in train.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmprof::rundir {

struct CheckpointMeta {
  std::string model_type;            // gpt | distilbert, as written
  std::string task;                  // lm | mlm | classify; empty when not written
  int64_t step = 0;                  // the optimizer step it was saved at; 0 when not written
  std::vector<std::string> tensors;  // the names of the tensors model.pt holds
};

// Reads checkpoint.json at `path`. A missing file, bad JSON (with line and column), a missing
// model_type or tensors list, or a field of the wrong type throws DataError naming the file and
// the field.
CheckpointMeta read_checkpoint_meta(const std::string& path);

}  // namespace llmprof::rundir
