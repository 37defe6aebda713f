#!/usr/bin/env bash
# Builds llmprof for CUDA devices: against the CUDA LibTorch of the installed PyTorch
# (torch.utils.cmake_prefix_path) and the CUDA toolkit at $CUDA_HOME (default /usr/local/cuda),
# in Release, into build-cuda/ (or $LLMPROF_BUILD_DIR). That build has LLMPROF_WITH_CUDA and links
# the CUDA runtime and CUPTI (CUDA events, kernel records). Extra arguments go to cmake:
#   scripts/build_gpu.sh -DLLMPROF_BUILD_TESTS=OFF
# $PYTHON picks the interpreter; $CMAKE_PREFIX_PATH and a .device/root/usr folder of unpacked
# Debian packages (the device machine's build dependencies) are added to the search path.
# Exits 2 with what is missing when PyTorch with CUDA or the CUDA toolkit cannot be found.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
build_dir=${LLMPROF_BUILD_DIR:-build-cuda}
problems=()

# -- PyTorch with CUDA -------------------------------------------------------------------------
torch_version="" torch_cuda="" torch_prefix=""
trap 'rm -f "${TMPDIR:-/tmp}/build_gpu.$$.err"' EXIT
if ! command -v "$python" >/dev/null 2>&1; then
  problems+=("$python not found: install Python 3 and a CUDA build of PyTorch, or set PYTHON")
elif ! torch_info=$("$python" -c 'import torch, torch.utils
print(torch.__version__); print(torch.version.cuda or ""); print(torch.utils.cmake_prefix_path)' \
                     2>"${TMPDIR:-/tmp}/build_gpu.$$.err"); then
  why=$(tail -n 1 "${TMPDIR:-/tmp}/build_gpu.$$.err")
  problems+=("PyTorch is not importable by $python ($why): install a CUDA build, e.g. pip install torch --index-url https://download.pytorch.org/whl/cu130")
else
  { read -r torch_version; read -r torch_cuda; read -r torch_prefix; } <<<"$torch_info"
  if [ -z "$torch_cuda" ]; then
    problems+=("PyTorch $torch_version is a CPU-only build (torch.version.cuda is None): install a CUDA wheel, e.g. pip install torch --index-url https://download.pytorch.org/whl/cu130")
  elif [ ! -f "$torch_prefix/Torch/TorchConfig.cmake" ]; then
    problems+=("PyTorch $torch_version has no TorchConfig.cmake under $torch_prefix/Torch")
  fi
fi

# -- CUDA toolkit (nvcc for LibTorch's CMake config, cudart and CUPTI for llmprof) --------------
cuda_version=""
if [ ! -x "$cuda_home/bin/nvcc" ]; then
  problems+=("no CUDA toolkit at $cuda_home ($cuda_home/bin/nvcc missing): install the CUDA toolkit${torch_cuda:+ $torch_cuda} or set CUDA_HOME")
else
  cuda_version=$("$cuda_home/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
fi

if [ ${#problems[@]} -gt 0 ]; then
  for p in "${problems[@]}"; do echo "build_gpu: $p" >&2; done
  echo "build_gpu: nothing built (the CPU build is scripts/build.sh)" >&2
  exit 2
fi

if [ "${cuda_version%%.*}" != "${torch_cuda%%.*}" ]; then
  echo "build_gpu: warning: CUDA toolkit $cuda_version at $cuda_home, PyTorch built with CUDA $torch_cuda" >&2
fi
if [ ! -f "$cuda_home/include/cupti_activity.h" ] && [ ! -f "$cuda_home/extras/CUPTI/include/cupti_activity.h" ]; then
  echo "build_gpu: warning: no CUPTI headers under $cuda_home: kernel records will be off" >&2
fi
prefix="$torch_prefix"
[ -n "${CMAKE_PREFIX_PATH:-}" ] && prefix="$prefix;$CMAKE_PREFIX_PATH"
if [ -d .device/root/usr ]; then
  prefix="$prefix;$PWD/.device/root/usr"
  echo "build_gpu: also searching dependencies unpacked under .device/root/usr"
fi
echo "build_gpu: PyTorch $torch_version (CUDA $torch_cuda) from $torch_prefix; CUDA $cuda_version at $cuda_home; into $build_dir"

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
mkdir -p "$build_dir"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DCUDAToolkit_ROOT="$cuda_home" -DCUDA_TOOLKIT_ROOT_DIR="$cuda_home" \
  -DCMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc" "${launcher[@]}" "$@" | tee "$build_dir/configure.log"
if ! grep -q "llmprof: GPU path: .*CUDA::cudart" "$build_dir/configure.log"; then
  echo "build_gpu: error: the configured build has no CUDA runtime (see $build_dir/configure.log):" \
       "LibTorch at $torch_prefix defined no torch_cuda target" >&2
  exit 2
fi
cmake --build "$build_dir" -j "$(nproc)"
