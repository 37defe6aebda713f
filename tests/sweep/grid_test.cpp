// Grid expansion: lists, range and log values checked by hand, the file's sweep section, CLI
// axes replacing file axes, the default grid, canonical values, point order and ids, and errors
// that name the key (with the nearest known key) and the value.
#include "llmprof/sweep/grid.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "llmprof/config/schema.h"
#include "llmprof/error.h"
#include "support/test_support.h"

namespace llmprof::sweep {
namespace {

using test::expect_contains;

using Strings = std::vector<std::string>;

// The message of the ConfigError (or UsageError) fn throws; fails the test when it throws none.
template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

TEST(ExpandRange, IntegersIncludeStopAndFollowTheStep) {
  EXPECT_EQ(expand_range("2", "6", "2"), (Strings{"2", "4", "6"}));
  EXPECT_EQ(expand_range("2", "7", "2"), (Strings{"2", "4", "6"}));
  EXPECT_EQ(expand_range("6", "2", "-2"), (Strings{"6", "4", "2"}));
  EXPECT_EQ(expand_range("3", "3", "1"), (Strings{"3"}));
}

TEST(ExpandRange, FloatsRoundToTwelveDigitsAndKeepStop) {
  // 0.1 + 2*0.1 = 0.30000000000000004 in binary; printed to 12 digits it is 0.3.
  EXPECT_EQ(expand_range("0.1", "0.3", "0.1"), (Strings{"0.1", "0.2", "0.3"}));
  EXPECT_EQ(expand_range("0", "1", "0.25"), (Strings{"0", "0.25", "0.5", "0.75", "1"}));
}

TEST(ExpandRange, ThrowsWhenStepIsZeroOrMovesAway) {
  expect_contains(error_of([] { expand_range("1", "5", "0"); }), "step is 0");
  expect_contains(error_of([] { expand_range("5", "1", "1"); }), "away from stop");
  expect_contains(error_of([] { expand_range("1", "x", "1"); }), "'x' is not a number");
}

TEST(ExpandLog, ValuesHaveEqualRatiosFromStartToStop) {
  EXPECT_EQ(expand_log(1e-4, 1e-2, 3, false), (Strings{"0.0001", "0.001", "0.01"}));
  EXPECT_EQ(expand_log(1, 1000, 4, false), (Strings{"1", "10", "100", "1000"}));
  // 2 * 2^(i) for i = 0..3: ratio (16/2)^(1/3) = 2.
  EXPECT_EQ(expand_log(2, 16, 4, true), (Strings{"2", "4", "8", "16"}));
  // 3^(i/4): 1, 1.316, 1.732, 2.280, 3 -> rounded 1, 1, 2, 2, 3 -> duplicates dropped.
  EXPECT_EQ(expand_log(1, 3, 5, true), (Strings{"1", "2", "3"}));
  EXPECT_EQ(expand_log(5e-4, 1, 1, false), (Strings{"0.0005"}));
}

TEST(ExpandLog, ThrowsForNonPositiveBoundsOrCount) {
  expect_contains(error_of([] { expand_log(0, 1, 3, false); }), "must be > 0");
  expect_contains(error_of([] { expand_log(1, 10, 0, false); }), "count");
}

TEST(ReadSweepSection, ReadsListsRangesAndLogsInFileOrder) {
  test::ScratchDir dir;
  test::write_file(dir.file("base.yaml"),
                   "model:\n  n_layer: 2\nsweep:\n  grid:\n"
                   "    train.batch_size: [8, 16]\n"
                   "    optim.lr: {log: [1e-4, 1e-2, 3]}\n"
                   "    model.n_layer: {range: [2, 6, 2]}\n"
                   "    model.n_head: 2\n");
  Grid g = read_sweep_section(dir.file("base.yaml"));
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[0].key, "train.batch_size");
  EXPECT_EQ(g[0].values, (Strings{"8", "16"}));
  EXPECT_EQ(g[1].values, (Strings{"0.0001", "0.001", "0.01"}));
  EXPECT_EQ(g[2].values, (Strings{"2", "4", "6"}));
  EXPECT_EQ(g[3].values, (Strings{"2"}));
  expect_contains(g[1].origin, "base.yaml line 6");
  // load_config skips the section: the same file trains.
  EXPECT_EQ(config::load_config(dir.file("base.yaml")).model.n_layer, 2);
}

TEST(ReadSweepSection, LogOfAnIntKeyRoundsToWholeNumbers) {
  test::ScratchDir dir;
  test::write_file(dir.file("b.yaml"), "sweep:\n  grid:\n    model.n_layer: {log: [1, 8, 4]}\n");
  EXPECT_EQ(read_sweep_section(dir.file("b.yaml"))[0].values, (Strings{"1", "2", "4", "8"}));
}

TEST(ReadSweepSection, EmptyWhenAbsentAndErrorsNameKeyAndLine) {
  test::ScratchDir dir;
  test::write_file(dir.file("none.yaml"), "model:\n  n_layer: 2\n");
  EXPECT_TRUE(read_sweep_section(dir.file("none.yaml")).empty());
  test::write_file(dir.file("bad.yaml"), "sweep:\n  grid:\n    optim.lr: {linear: [1, 2, 3]}\n");
  std::string msg = error_of([&] { read_sweep_section(dir.file("bad.yaml")); });
  expect_contains(msg, "sweep.grid.optim.lr");
  expect_contains(msg, "bad.yaml line 3");
  expect_contains(msg, "linear");
  test::write_file(dir.file("bad2.yaml"), "sweep:\n  grids: {}\n");
  expect_contains(error_of([&] { read_sweep_section(dir.file("bad2.yaml")); }), "sweep.grids");
  test::write_file(dir.file("bad3.yaml"), "sweep:\n  grid:\n    optim.lr: {range: [1, 2]}\n");
  expect_contains(error_of([&] { read_sweep_section(dir.file("bad3.yaml")); }),
                  "[start, stop, step]");
}

TEST(ParseGridArg, SplitsValuesAndRejectsMalformedArguments) {
  GridAxis a = parse_grid_arg("optim.lr=1e-4, 3e-4,1e-3");
  EXPECT_EQ(a.key, "optim.lr");
  EXPECT_EQ(a.values, (Strings{"1e-4", "3e-4", "1e-3"}));
  expect_contains(error_of([] { parse_grid_arg("optim.lr"); }), "key=v1,v2");
  expect_contains(error_of([] { parse_grid_arg("optim.lr=1,,2"); }),
                  "value 2 of optim.lr is empty");
}

TEST(MergeGrids, CliAxisReplacesFileAxisInPlaceAndNewOnesAppend) {
  Grid file{{"train.batch_size", {"8", "16"}, "file"}, {"optim.lr", {"1e-3"}, "file"}};
  Grid cli{{"optim.lr", {"1e-4", "1e-2"}, "--grid"}, {"model.n_layer", {"2"}, "--grid"}};
  Grid m = merge_grids(file, cli);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].values, (Strings{"8", "16"}));
  EXPECT_EQ(m[1].key, "optim.lr");
  EXPECT_EQ(m[1].values, (Strings{"1e-4", "1e-2"}));
  EXPECT_EQ(m[2].key, "model.n_layer");
  expect_contains(error_of([&] { merge_grids({}, {cli[0], cli[0]}); }), "given twice");
}

TEST(MergeGrids, DefaultGridWhenNoneIsGiven) {
  Grid m = merge_grids({}, {});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].key, "train.batch_size");
  EXPECT_EQ(m[0].values, (Strings{"8", "16", "32"}));
  EXPECT_EQ(m[1].key, "optim.lr");
  EXPECT_EQ(m[1].values, (Strings{"1e-4", "3e-4", "1e-3"}));
}

TEST(ResolveGrid, WritesValuesCanonicallyAsTheConfigPrintsThem) {
  config::Config base;
  Grid g = resolve_grid(base, {{"optim.lr", {"1e-4", "3.0e-4"}, "--grid"},
                               {"train.batch_size", {"8", "1.6e1"}, "--grid"},
                               {"train.precision", {"bf16"}, "--grid"}});
  EXPECT_EQ(g[0].values, (Strings{"0.0001", "0.0003"}));
  EXPECT_EQ(g[1].values, (Strings{"8", "16"}));
  EXPECT_EQ(g[2].values, (Strings{"bf16"}));
}

TEST(ResolveGrid, UnknownKeyNamesItAndSuggestsTheNearest) {
  config::Config base;
  std::string msg = error_of([&] {
    resolve_grid(base, {{"optim.lrr", {"1e-3"}, "--grid optim.lrr=1e-3"}});
  });
  expect_contains(msg, "--grid optim.lrr=1e-3");
  expect_contains(msg, "'optim.lrr'");
  expect_contains(msg, "did you mean 'optim.lr'");
}

TEST(ResolveGrid, BadValueNamesKeyAndValue) {
  config::Config base;
  std::string msg = error_of([&] {
    resolve_grid(base, {{"train.batch_size", {"8", "abc"}, "--grid train.batch_size=8,abc"}});
  });
  expect_contains(msg, "train.batch_size");
  expect_contains(msg, "abc");
  EXPECT_EQ(msg.find("--set"), std::string::npos) << msg;
  expect_contains(error_of([&] {
                    resolve_grid(base, {{"optim.lr", {"1e-3", "0.001"}, "g"}});
                  }),
                  "given twice");
  expect_contains(error_of([&] {
                    resolve_grid(base, {{"output.name", {"x"}, "g"}});
                  }),
                  "set by llmprof sweep");
}

TEST(ExpandPoints, FirstAxisOutermostRepeatsInnermost) {
  Grid g{{"train.batch_size", {"8", "16"}, ""}, {"optim.lr", {"0.0001", "0.0003", "0.001"}, ""}};
  std::vector<Point> pts = expand_points(g, 2);
  ASSERT_EQ(pts.size(), 12u);
  EXPECT_EQ(pts[0].id, "p001-train.batch_size=8-optim.lr=0.0001-r1");
  EXPECT_EQ(pts[1].id, "p001-train.batch_size=8-optim.lr=0.0001-r2");
  EXPECT_EQ(pts[2].id, "p002-train.batch_size=8-optim.lr=0.0003-r1");
  EXPECT_EQ(pts[8].id, "p005-train.batch_size=16-optim.lr=0.0003-r1");
  EXPECT_EQ(pts[8].index, 5);
  EXPECT_EQ(pts[8].repeat, 1);
  EXPECT_EQ(pts[8].values[0].second, "16");
  // The same grid always gives the same ids (resume relies on it).
  EXPECT_EQ(expand_points(g, 2)[8].id, pts[8].id);
}

TEST(PointId, SanitisesAndWidensTheIndex) {
  EXPECT_EQ(point_id(3, 9, {{"train.batch_size", "16"}, {"optim.lr", "0.0003"}}, 1),
            "p003-train.batch_size=16-optim.lr=0.0003-r1");
  EXPECT_EQ(point_id(7, 1200, {{"data.path", "/tmp/my corpus.txt"}}, 2),
            "p0007-data.path=_tmp_my_corpus.txt-r2");
  std::string long_id = point_id(1, 1, {{"data.path", std::string(400, 'a')}}, 1);
  EXPECT_LT(long_id.size(), 255u);
}

TEST(ValidatePoints, CrossKeyConflictNamesThePointAndKey) {
  config::Config base;  // n_embd 128
  Grid g = resolve_grid(base, {{"model.n_head", {"4", "3"}, "--grid"}});
  std::string msg = error_of([&] { validate_points(base, expand_points(g, 1)); });
  expect_contains(msg, "p002-model.n_head=3-r1");
  expect_contains(msg, "model.n_head: 3 does not divide model.n_embd=128");
  Grid ok = resolve_grid(base, {{"model.n_head", {"4", "8"}, "--grid"}});
  EXPECT_NO_THROW(validate_points(base, expand_points(ok, 1)));
}

}  // namespace
}  // namespace llmprof::sweep
