// Stand-in for the header a CUDA build of LibTorch generates, so the CUDA-only parts of llmprof
// (LLMPROF_WITH_CUDA) compile against the CPU LibTorch's c10/cuda headers for a syntax and type
// check (target llmprof_cuda_compile_check). Never linked, never used by a real CUDA build.
#pragma once
#define C10_CUDA_BUILD_SHARED_LIBS
