// summary.json and env.json as a CUDA run writes them, through the typed documents: files written
// on an NVIDIA H200 (LibTorch 2.11, CUDA 13, llmprof 644af2c) read with no unknown key and no
// note, and rewrite byte for byte. They carry what a CPU run never writes: NVML's energy counter,
// the gpu section of a run at profile.level=ops, cuda_graphs, the caching allocator's measured
// peak_reserved in plan, and a data-parallel run's distributed section (NCCL at world size 1).
//   graphs/           llmprof train -c configs/gpt2_small_cuda.yaml --set train.cuda_graphs=true
//                     --set profile.level=phases --set schedule.max_steps=12
//   nccl-ops/         RANK=0 WORLD_SIZE=1 ... --set ddp.backend=nccl --set model.n_layer=2
//                     --set train.batch_size=4 --set profile.level=ops --set profile.trace=true
//   edge-expandable/  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, batch 43 under a 24 GiB
//                     cap (scripts/gpu/plan_check.sh)
#include <gtest/gtest.h>

#include <string>

#include "llmprof/rundir/env.h"
#include "llmprof/rundir/files.h"
#include "llmprof/rundir/summary.h"
#include "rundir/doc_test.h"
#include "support/test_support.h"

namespace llmprof::rundir {
namespace {

std::string cuda_dir() {
  return std::string(LLMPROF_SOURCE_DIR) + "/tests/rundir/fixtures/cuda-h200-644af2c";
}

TEST(CudaRunDocs, SummariesRewriteByteIdenticalWithNoUnknownKey) {
  int files = 0;
  bool graphs = false, gpu = false, reserved = false, nccl = false;
  for (const std::string& path : doc_test::files_named(cuda_dir(), kSummary)) {
    const std::string text = test::read_file(path);
    const Summary s = parse_summary(text, path);
    EXPECT_EQ(summary_text(s), text) << path;
    EXPECT_TRUE(s.unknown.empty()) << path << ": " << s.unknown.begin()->first;
    EXPECT_TRUE(s.read_notes.empty()) << path << ": " << s.read_notes.front();
    graphs |= text.find("\"captured_before_step\"") != std::string::npos;
    gpu |= text.find("\"gpu\": {") != std::string::npos;
    reserved |= text.find("\"peak_reserved\"") != std::string::npos;
    nccl |= text.find("\"backend\": \"nccl\"") != std::string::npos;
    ++files;
  }
  EXPECT_EQ(files, 4);  // graphs, nccl-ops (top and rank0), edge-expandable
  EXPECT_TRUE(graphs && gpu && reserved && nccl) << graphs << gpu << reserved << nccl;
}

TEST(CudaRunDocs, EnvFilesWithNvmlRewriteByteIdenticalWithNoUnknownKey) {
  int files = 0, nvml = 0;
  for (const std::string& path : doc_test::files_named(cuda_dir(), kEnv)) {
    const std::string text = test::read_file(path);
    const Env e = parse_env(text, path);
    EXPECT_EQ(env_text(e), text) << path;
    EXPECT_TRUE(e.unknown.empty()) << path << ": " << e.unknown.begin()->first;
    EXPECT_TRUE(e.read_notes.empty()) << path << ": " << e.read_notes.front();
    nvml += text.find("\"source\": \"nvml\"") != std::string::npos;
    ++files;
  }
  EXPECT_EQ(files, 4);
  EXPECT_EQ(nvml, 3);  // the edge run had energy.enabled=false
}

}  // namespace
}  // namespace llmprof::rundir
