// The project's own sources as the scans of the tables read them (file_names_test.cpp,
// schema_versions_test.cpp): every .cpp and .h under src/ and include/ but the two tables
// (rundir/files.h, hf/files.h), by path relative to the source directory, without whole-line
// comments (a comment may name a file or a version the way code builds it).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace llmprof::rundir::scan {

struct Source {
  std::string rel;   // e.g. "src/rundir/summary_io.cpp"
  std::string code;  // the file without its whole-line comments
};

inline std::string code_of(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::string out, line;
  while (std::getline(in, line)) {
    const size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 2, "//") == 0) continue;
    out += line + "\n";
  }
  return out;
}

inline std::vector<Source> sources_outside_the_tables() {
  namespace fs = std::filesystem;
  const fs::path root(LLMPROF_SOURCE_DIR);
  std::vector<Source> out;
  for (const char* top : {"src", "include"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
      std::string rel = fs::relative(e.path(), root).string();
      if (rel == "include/llmprof/rundir/files.h" || rel == "include/llmprof/hf/files.h") continue;
      out.push_back({std::move(rel), code_of(e.path())});
    }
  }
  return out;
}

}  // namespace llmprof::rundir::scan
