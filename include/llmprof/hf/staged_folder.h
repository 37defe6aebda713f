// A folder written whole or not at all (what `llmprof export` writes): files go into a fresh
// sibling folder, <out>.tmp-XXXXXX, and commit() renames it to out. out is never replaced, not
// even by a folder made meanwhile. Destroyed without commit (an error, an interruption), the
// staging folder and everything in it are removed. While one lives, SIGINT and SIGTERM set a flag
// instead of ending the process; check_interrupted() between steps turns the flag into
// Interrupted, so the folder is removed on the way out.
#pragma once

#include <string>

namespace llmprof::hf {

class StagedFolder {
 public:
  // ConfigError naming --out when out exists or its parent folder does not; IoError when the
  // parent cannot take a folder (permission, disk full).
  explicit StagedFolder(const std::string& out);
  ~StagedFolder();
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;

  // The staging folder: write here.
  const std::string& path() const { return path_; }
  // Throws Interrupted (exit 130) naming the signal when SIGINT or SIGTERM came since the start.
  void check_interrupted() const;
  // Renames the staging folder to out. ConfigError when out appeared meanwhile (the staging
  // folder is then removed), IoError when the rename fails.
  void commit();

 private:
  std::string out_;
  std::string path_;
  bool committed_ = false;
};

}  // namespace llmprof::hf
