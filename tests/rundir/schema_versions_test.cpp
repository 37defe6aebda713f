// Every schema version llmprof writes is a named constant of one of the two tables
// (rundir/files.h, hf/files.h): a scan of src/ and include/ finds a version constant defined
// elsewhere, or a "schema_version" given a literal number.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "llmprof/hf/files.h"
#include "llmprof/rundir/files.h"

namespace fs = std::filesystem;

namespace llmprof::rundir {
namespace {

TEST(SchemaVersions, TheReportPlanTriedAndTokenizerVersionsAreInTheTables) {
  EXPECT_EQ(kReportSchemaVersion, 1);
  EXPECT_EQ(kTriedSchemaVersion, 1);
  EXPECT_EQ(kPlanSchemaVersion, 1);
  EXPECT_EQ(kTried, "tried.json");
  for (const int v : {hf::kCharVocabSchemaVersion, hf::kGpt2TokenizerSchemaVersion,
                      hf::kWordPieceTokenizerSchemaVersion, hf::kHfTokenizerSchemaVersion}) {
    EXPECT_EQ(v, 1);
  }
}

TEST(SchemaVersions, NoneIsDefinedOrWrittenAsANumberOutsideTheTables) {
  const std::set<std::string> tables = {"include/llmprof/rundir/files.h",
                                        "include/llmprof/hf/files.h"};
  const std::regex defined(R"(constexpr\s+int\s+k\w*SchemaVersion\s*=)");
  const std::regex literal(R"re("schema_version"\s*(\]\s*=|,)\s*[0-9])re");
  const fs::path root(LLMPROF_SOURCE_DIR);
  std::vector<std::string> found;
  for (const char* top : {"src", "include"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
      const std::string rel = fs::relative(e.path(), root).string();
      if (tables.count(rel) != 0) continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      const std::string code = text.str();
      if (std::regex_search(code, defined)) found.push_back(rel + ": a version constant");
      if (std::regex_search(code, literal)) found.push_back(rel + ": a literal schema_version");
    }
  }
  EXPECT_TRUE(found.empty()) << "schema versions outside rundir/files.h and hf/files.h:\n"
                             << ::testing::PrintToString(found);
}

}  // namespace
}  // namespace llmprof::rundir
