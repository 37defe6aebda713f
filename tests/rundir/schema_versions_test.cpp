// Every schema version llmprof writes is a named constant of one of the two tables
// (rundir/files.h, hf/files.h): a scan of src/ and include/ finds a version constant defined
// elsewhere, or a "schema_version" given a literal number.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "llmprof/hf/files.h"
#include "llmprof/rundir/files.h"
#include "rundir/source_scan.h"

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
  const std::regex defined(R"(constexpr\s+int\s+k\w*SchemaVersion\s*=)");
  const std::regex literal(R"re("schema_version"\s*(\]\s*=|,)\s*[0-9])re");
  std::vector<std::string> found;
  for (const scan::Source& s : scan::sources_outside_the_tables()) {
    if (std::regex_search(s.code, defined)) found.push_back(s.rel + ": a version constant");
    if (std::regex_search(s.code, literal)) found.push_back(s.rel + ": a literal schema_version");
  }
  EXPECT_TRUE(found.empty()) << "schema versions outside rundir/files.h and hf/files.h:\n"
                             << ::testing::PrintToString(found);
}

}  // namespace
}  // namespace llmprof::rundir
