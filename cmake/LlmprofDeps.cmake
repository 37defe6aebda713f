# Third-party dependencies, all from Debian 12 packages (scripts/install_deps.sh installs them).
# On GPU hosts, point CMAKE_PREFIX_PATH at a CUDA LibTorch:
#   -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
find_package(Torch REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 REQUIRED)
message(STATUS "llmprof: LibTorch ${Torch_VERSION} from ${Torch_DIR}")
# ATen's headers need C++20 from LibTorch 2.12 on (GPU hosts bring whatever PyTorch they have).
if(Torch_VERSION VERSION_GREATER_EQUAL 2.12)
  set(CMAKE_CXX_STANDARD 20)
endif()
