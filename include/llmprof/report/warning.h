// A part of an input left out because it was cut short (a row of a killed run, a file a full disk
// left empty). Readers carry these as data; only the CLI prints them.
#pragma once

#include <cstdint>
#include <string>

namespace llmprof::report {

struct InputWarning {
  std::string run;      // label of the run it belongs to; empty until the report names it
  std::string file;     // path of the file
  int64_t line = 0;     // 1-based line of the left-out row; 0 = the whole file
  std::string message;  // what was wrong and what was done about it

  // "<file> line <n>: <message>", or "<file>: <message>" for a whole file.
  std::string text() const;
};

}  // namespace llmprof::report
