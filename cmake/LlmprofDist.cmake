# The dist concern's c10d wiring (src/dist/*_torch.cpp, target llmprof_dist_torch).
# LLMPROF_WITH_DIST (default ON where c10d's headers are found) compiles the process group and the
# reducer; OFF, or without the headers, the dist API builds and reports "built without c10d".
#  - Gloo: c10d's ProcessGroupGloo.hpp is compiled only with -DUSE_C10D_GLOO and needs gloo's own
#    headers (Debian: libgloo-dev; a pip LibTorch may bundle them under its include directory).
#  - NCCL: CUDA LibTorch only, where ProcessGroupNCCL.hpp and nccl.h are found (-DUSE_C10D_NCCL).
#  - Debian's reducer.hpp includes torch/csrc/distributed/autograd/context/context.h, which Debian
#    does not ship: cmake/dist_compat/ holds a two-name stand-in (see the file), used only then.
find_path(LLMPROF_C10D_INCLUDE_DIR torch/csrc/distributed/c10d/reducer.hpp
          HINTS ${TORCH_INCLUDE_DIRS} NO_DEFAULT_PATH)
if(NOT LLMPROF_C10D_INCLUDE_DIR)
  find_path(LLMPROF_C10D_INCLUDE_DIR torch/csrc/distributed/c10d/reducer.hpp)
endif()
set(dist_default OFF)
if(LLMPROF_C10D_INCLUDE_DIR)
  set(dist_default ON)
endif()
option(LLMPROF_WITH_DIST "Build data-parallel training over LibTorch's c10d" ${dist_default})
find_path(LLMPROF_GLOO_INCLUDE_DIR gloo/config.h HINTS ${TORCH_INCLUDE_DIRS})
# nccl.h: the CUDA toolkit, or a pip PyTorch's nvidia-nccl wheel beside torch/ in site-packages
# (Torch_DIR is site-packages/torch/share/cmake/Torch).
find_path(LLMPROF_NCCL_INCLUDE_DIR nccl.h
          HINTS ${TORCH_INCLUDE_DIRS} ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include
                ${Torch_DIR}/../../../../nvidia/nccl/include)

set(dist_backends "")
if(LLMPROF_WITH_DIST AND LLMPROF_C10D_INCLUDE_DIR AND TARGET llmprof_dist_torch)
  target_compile_definitions(llmprof_dist_torch PRIVATE LLMPROF_WITH_DIST=1)
  if(NOT EXISTS ${LLMPROF_C10D_INCLUDE_DIR}/torch/csrc/distributed/autograd/context/context.h)
    target_include_directories(llmprof_dist_torch SYSTEM PRIVATE
                               ${CMAKE_CURRENT_SOURCE_DIR}/cmake/dist_compat)
  endif()
  if(LLMPROF_GLOO_INCLUDE_DIR)
    target_compile_definitions(llmprof_dist_torch PRIVATE USE_C10D_GLOO LLMPROF_DIST_GLOO=1)
    target_include_directories(llmprof_dist_torch SYSTEM PRIVATE ${LLMPROF_GLOO_INCLUDE_DIR})
    list(APPEND dist_backends gloo)
  endif()
  if(LLMPROF_CUDA_TORCH AND LLMPROF_NCCL_INCLUDE_DIR AND
     EXISTS ${LLMPROF_C10D_INCLUDE_DIR}/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp)
    target_compile_definitions(llmprof_dist_torch PRIVATE USE_C10D_NCCL LLMPROF_DIST_NCCL=1
                               LLMPROF_WITH_CUDA)
    target_include_directories(llmprof_dist_torch SYSTEM PRIVATE ${LLMPROF_NCCL_INCLUDE_DIR})
    list(APPEND dist_backends nccl)
  endif()
endif()
message(STATUS "llmprof: dist (c10d) ${LLMPROF_WITH_DIST}: headers ${LLMPROF_C10D_INCLUDE_DIR}; "
               "backends [${dist_backends}]")
