#include "llmprof/data/corpus.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include "file_io.h"
#include "llmprof/error.h"
#include "rng.h"

namespace fs = std::filesystem;

namespace llmprof::data {

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) throw DataError("data: file not found: " + path);
  if (fs::is_directory(st)) throw DataError("data: expected a text file, got a directory: " + path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError("data: cannot open for reading (permissions?): " + path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw DataError("data: read failed: " + path);
  if (text.empty()) throw DataError("data: file is empty: " + path);
  return text;
}

namespace detail {

void write_text_atomic(const std::string& path, const std::string& text) {
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (ec)
    throw IoError("cannot create directory " + target.parent_path().string() + ": " + ec.message());
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw IoError("cannot open for writing: " + tmp);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();  // flushes and closes: a full disk shows in either
    if (!out) {
      const int err = errno;  // the failed write's or close's (ENOSPC, EFBIG, EIO, ...)
      fs::remove(tmp, ec);
      throw IoError("cannot write " + tmp + ": " +
                    (err != 0 ? std::strerror(err) : "the write failed (disk full?)"));
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) throw IoError("cannot rename " + tmp + " to " + path + ": " + ec.message());
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// The generated play. Word classes are listed most frequent first; a word of rank r (0-based)
// within its class is drawn with weight ~ 1 / (r + 2), a Zipf-like law. Sentences follow a few
// grammatical templates, so a char-level model finds spelling, word order, punctuation and the
// "NAME:\n lines \n\n" speech layout to learn.

namespace {

using WordList = std::vector<const char*>;

const WordList kCast = {"ANTONIO",   "BEATRICE",  "CLAUDIO",    "DUKE",        "EMILIA",
                        "FRIAR",     "GREGORY",   "HELENA",     "ISABEL",      "KING",
                        "LUCIO",     "MARIA",     "NURSE",      "OLIVER",      "QUEEN",
                        "SEBASTIAN", "MESSENGER", "FIRST LORD", "SECOND LORD", "OLD MAN"};
const WordList kPlaces = {"A street",
                          "The palace",
                          "A garden",
                          "The field",
                          "A room in the castle",
                          "Before the gates",
                          "A hall",
                          "The shore",
                          "A wood near the city",
                          "The prison"};
const WordList kDet = {"the",  "my",  "a",   "your",  "his", "this",  "her",
                       "that", "our", "thy", "their", "no",  "every", "some"};
const WordList kSubject = {"I", "you", "he", "we", "she", "they", "thou", "it"};
const WordList kObject = {"me", "you", "him", "her", "us", "them", "thee", "it"};
const WordList kNoun = {
    "lord",   "man",     "king",   "love",    "heart",  "life",   "day",     "night",   "time",
    "death",  "world",   "hand",   "eye",     "father", "son",    "blood",   "house",   "queen",
    "name",   "word",    "soul",   "friend",  "honour", "head",   "lady",    "grace",   "mind",
    "power",  "fear",    "hope",   "truth",   "crown",  "sword",  "war",     "peace",   "land",
    "city",   "field",   "gold",   "fortune", "tongue", "duty",   "mother",  "brother", "child",
    "heaven", "earth",   "sun",    "moon",    "grief",  "joy",    "faith",   "wife",    "body",
    "face",   "voice",   "letter", "door",    "gate",   "street", "horse",   "ship",    "sea",
    "fire",   "wind",    "rain",   "stone",   "bread",  "wine",   "law",     "oath",    "shame",
    "hour",   "morning", "court",  "tower",   "garden", "enemy",  "servant", "soldier", "master",
    "matter", "cause",   "reason", "news",    "story",  "song",   "dream"};
const WordList kVerb = {
    "know",  "love",   "see",  "come",   "speak",    "give",   "take",  "make",  "think", "hear",
    "tell",  "leave",  "find", "bear",   "keep",     "fear",   "swear", "call",  "bring", "hold",
    "stand", "follow", "meet", "die",    "live",     "seek",   "pray",  "serve", "kill",  "save",
    "trust", "win",    "lose", "forget", "remember", "answer", "break", "wake",  "sleep", "weep",
    "fight", "stay",   "send", "read",   "sing",     "pay",    "doubt", "wait"};
const WordList kPast = {"knew",    "loved", "saw",  "came",   "spoke",  "gave",  "took",  "made",
                        "thought", "heard", "told", "left",   "found",  "kept",  "swore", "called",
                        "brought", "held",  "met",  "served", "killed", "saved", "lost",  "sent"};
const WordList kAdj = {"good",   "noble",  "sweet",   "great",  "poor",  "old",    "young",
                       "fair",   "true",   "dear",    "gentle", "dead",  "brave",  "proud",
                       "false",  "cruel",  "strange", "little", "high",  "black",  "white",
                       "cold",   "dark",   "bright",  "happy",  "sad",   "wise",   "foolish",
                       "bloody", "honest", "royal",   "holy",   "heavy", "bitter", "fresh",
                       "wild",   "rich",   "kind",    "hard",   "free",  "long",   "last",
                       "whole",  "secret", "deep",    "quiet",  "sick",  "empty",  "green"};
const WordList kAdverb = {"now",   "here", "there", "then",   "so",    "well",   "yet",
                          "never", "ever", "still", "too",    "again", "indeed", "soon",
                          "truly", "away", "once",  "always", "hence", "tonight"};
const WordList kPrep = {"of",    "to",      "in",     "with",  "for",     "by",
                        "from",  "on",      "upon",   "at",    "against", "before",
                        "after", "without", "within", "under", "through", "into"};
const WordList kConj = {"and",  "but",   "or",    "for",   "if",     "though",
                        "when", "while", "since", "until", "because"};
const WordList kAux = {"will", "shall", "must", "would", "should",
                       "may",  "can",   "do",   "did",   "dare"};
const WordList kInterj = {"O",     "Alas", "Ay",  "Nay",    "Well", "Come",
                          "Peace", "Hark", "Fie", "Sirrah", "Ah"};
const WordList kWh = {"what", "why", "how", "where", "when", "who", "whither"};
const WordList kBe = {"is", "was", "be", "seems", "grows"};

// Sentence templates, most frequent first. Codes: P subject, O object, D determiner, N noun,
// A adjective, V verb, T past verb, R adverb, E preposition, C conjunction, X auxiliary,
// I interjection, W wh-word, B copula, S addressee name, ',' a comma.
// A template starting with W or X is a question; with I, an exclamation.
const WordList kTemplates = {"PVDN",         "DANTO",       "PXVDANEDN", "DNBA",    "I,S",
                             "PTOR",         "WXPV",        "XPVDN",     "VO,S",    "EDN,PVDN",
                             "PXRVO,CPXVDN", "R,DNBACDNBA", "DNEDNTDAN", "PTDNEDAN"};

// Zipf-weighted sampler over the indices of a list: weight(r) = 10^6 / (r + 2), integers only.
class ZipfTable {
 public:
  explicit ZipfTable(size_t n) {
    uint64_t total = 0;
    for (size_t r = 0; r < n; ++r) cumulative_.push_back(total += 1000000 / (r + 2));
  }
  // An index in [0, n).
  size_t draw(std::mt19937_64& rng) const {
    const uint64_t u = detail::uniform_below(rng, cumulative_.back());
    return static_cast<size_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), u) -
                               cumulative_.begin());
  }

 private:
  std::vector<uint64_t> cumulative_;
};

// Draws play text from an rng; one instance per generate_corpus call.
class PlayWriter {
 public:
  explicit PlayWriter(uint64_t seed) : rng_(seed) {}

  // Appends scenes until out holds at least n_chars characters.
  void write(std::string& out, size_t n_chars) {
    int64_t scene = 1;
    while (out.size() < n_chars) write_scene(out, scene++);
  }

 private:
  // A uniform index in [0, n).
  size_t uniform(size_t n) { return static_cast<size_t>(detail::uniform_below(rng_, n)); }
  // A Zipf-weighted word of a list.
  const char* word(const WordList& list) { return list[zipf(list.size()).draw(rng_)]; }
  // The (cached) Zipf table over n items.
  const ZipfTable& zipf(size_t n) {
    while (tables_.size() < n) tables_.emplace_back(tables_.size() + 1);
    return tables_[n - 1];
  }

  // "SCENE n. Place.\n\n", then 8-23 speeches among 2-4 cast members, never twice in a row.
  void write_scene(std::string& out, int64_t scene) {
    out += "SCENE " + std::to_string(scene) + ". " + kPlaces[uniform(kPlaces.size())] + ".\n\n";
    std::vector<size_t> cast;
    const size_t n_cast = 2 + uniform(3);
    while (cast.size() < n_cast) {
      const size_t who = zipf(kCast.size()).draw(rng_);
      if (std::find(cast.begin(), cast.end(), who) == cast.end()) cast.push_back(who);
    }
    const size_t n_speeches = 8 + uniform(16);
    size_t last = cast.size();
    for (size_t s = 0; s < n_speeches; ++s) {
      size_t who = uniform(cast.size());
      if (who == last) who = (who + 1) % cast.size();
      last = who;
      const size_t addressee = cast[(who + 1) % cast.size()];
      write_speech(out, kCast[cast[who]], kCast[addressee]);
    }
  }

  // "NAME:\n" and 1-4 lines of 1-2 sentences, then a blank line.
  void write_speech(std::string& out, const char* speaker, const char* addressee) {
    out += speaker;
    out += ":\n";
    const size_t n_lines = 1 + zipf(4).draw(rng_);
    for (size_t l = 0; l < n_lines; ++l) {
      write_sentence(out, addressee);
      if (uniform(3) == 0) {
        out += ' ';
        write_sentence(out, addressee);
      }
      out += '\n';
    }
    out += '\n';
  }

  // One capitalised sentence from a template, ending in . ! or ?.
  void write_sentence(std::string& out, const char* addressee) {
    const char* tmpl = word(kTemplates);
    const size_t start = out.size();
    for (const char* c = tmpl; *c; ++c) {
      if (*c == ',') {
        out += ',';
        continue;
      }
      if (c != tmpl) out += ' ';
      switch (*c) {
        case 'P':
          out += word(kSubject);
          break;
        case 'O':
          out += word(kObject);
          break;
        case 'D':
          out += word(kDet);
          break;
        case 'N':
          out += word(kNoun);
          break;
        case 'A':
          out += word(kAdj);
          break;
        case 'V':
          out += word(kVerb);
          break;
        case 'T':
          out += word(kPast);
          break;
        case 'R':
          out += word(kAdverb);
          break;
        case 'E':
          out += word(kPrep);
          break;
        case 'C':
          out += word(kConj);
          break;
        case 'X':
          out += word(kAux);
          break;
        case 'I':
          out += word(kInterj);
          break;
        case 'W':
          out += word(kWh);
          break;
        case 'B':
          out += word(kBe);
          break;
        case 'S':
          append_name(out, addressee);
          break;
        default:
          break;
      }
    }
    if (out[start] >= 'a' && out[start] <= 'z') out[start] = static_cast<char>(out[start] - 32);
    if (tmpl[0] == 'W' || tmpl[0] == 'X') {
      out += '?';
    } else if (tmpl[0] == 'I') {
      out += '!';
    } else {
      out += uniform(8) == 0 ? '!' : '.';
    }
  }

  // A cast name as it is spoken: "FIRST LORD" -> "First Lord".
  static void append_name(std::string& out, const char* name) {
    bool word_start = true;
    for (const char* c = name; *c; ++c) {
      const bool upper = *c >= 'A' && *c <= 'Z';
      out += (upper && !word_start) ? static_cast<char>(*c + 32) : *c;
      word_start = *c == ' ';
    }
  }

  std::mt19937_64 rng_;
  std::vector<ZipfTable> tables_;  // tables_[n - 1]: the table over n items
};

}  // namespace

std::string generate_corpus(uint64_t seed, int64_t n_chars) {
  if (n_chars < 0) {
    throw DataError("generate_corpus: n_chars must be >= 0, got " + std::to_string(n_chars));
  }
  std::string out;
  out.reserve(static_cast<size_t>(n_chars) + 1024);
  PlayWriter(seed).write(out, static_cast<size_t>(n_chars));
  out.resize(static_cast<size_t>(n_chars));
  return out;
}

}  // namespace llmprof::data
