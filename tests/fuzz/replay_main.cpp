// The replay driver: runs a libFuzzer target's LLVMFuzzerTestOneInput once on each file it is
// given (a folder is taken whole, recursively, in sorted order), as libFuzzer does when it is
// handed inputs instead of a corpus to grow. Linked instead of libFuzzer into the ordinary build's
// fuzz_replay_<target> executables, so the test suite replays every kept regression input and
// the seeds without a clang build; a property that fails aborts, which ctest reports as a failure
// naming the input printed just before. The search for new inputs stays with scripts/fuzz.sh.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

// Every regular file at or under path, sorted so that runs replay in the same order.
std::vector<fs::path> inputs_under(const fs::path& path) {
  std::vector<fs::path> files;
  if (fs::is_directory(path)) {
    for (const auto& entry : fs::recursive_directory_iterator(path))
      if (entry.is_regular_file()) files.push_back(entry.path());
  } else if (fs::is_regular_file(path)) {
    files.push_back(path);
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s INPUT_OR_FOLDER...\n", argv[0]);
    return 2;
  }
  size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    if (!fs::exists(argv[i])) {
      std::fprintf(stderr, "replay: %s does not exist\n", argv[i]);
      return 2;
    }
    for (const fs::path& file : inputs_under(argv[i])) {
      std::ifstream in(file, std::ios::binary);
      const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      if (!in.good() && !in.eof()) {
        std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
        return 2;
      }
      std::fprintf(stderr, "replay: %s (%zu bytes)\n", file.c_str(), bytes.size());
      // libFuzzer hands a target a buffer of exactly size bytes; a copy keeps that true here.
      const std::vector<uint8_t> data(bytes.begin(), bytes.end());
      LLVMFuzzerTestOneInput(data.data(), data.size());
      ++replayed;
    }
  }
  std::printf("replay: %zu input(s), no property failed\n", replayed);
  return replayed > 0 ? 0 : 2;
}
