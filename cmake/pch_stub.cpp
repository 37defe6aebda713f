// Compiled only to build the shared precompiled <torch/torch.h> header (see CMakeLists.txt).
