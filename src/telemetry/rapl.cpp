#include "llmprof/telemetry/rapl.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <utility>

#include "read_text.h"

namespace fs = std::filesystem;

namespace llmprof::telemetry {

namespace {

constexpr const char* kZonePrefix = "intel-rapl:";  // excludes intel-rapl-mmio:*, a duplicate view

// The numbers of "intel-rapl:0:1" -> {0, 1}; empty if the name is not a RAPL zone.
std::vector<int> zone_numbers(const std::string& entry) {
  std::vector<int> nums;
  if (entry.rfind(kZonePrefix, 0) != 0) return nums;
  std::string rest = entry.substr(std::string(kZonePrefix).size());
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t colon = rest.find(':', pos);
    std::string part =
        rest.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return {};
    nums.push_back(std::stoi(part));
    if (colon == std::string::npos) break;
    pos = colon + 1;
  }
  return nums;
}

// Whether a zone counts toward the CPU total. Packages and DRAM do; psys (the platform, which
// contains the packages) and core/uncore (inside a package) would count energy twice.
bool zone_in_total(const std::string& zone_name) {
  return zone_name.rfind("package", 0) == 0 || zone_name == "dram";
}

}  // namespace

uint64_t rapl_delta_uj(uint64_t prev_uj, uint64_t cur_uj, uint64_t max_range_uj) {
  if (cur_uj >= prev_uj) return cur_uj - prev_uj;
  return (max_range_uj > prev_uj ? max_range_uj - prev_uj : 0) + cur_uj;
}

RaplSource::RaplSource(std::string sysfs_root) : root_(std::move(sysfs_root)) {}

Availability RaplSource::available() {
  zones_.clear();
  channels_.clear();
  const std::string dir = root_ + "/class/powercap";
  std::vector<std::pair<std::vector<int>, std::string>> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string entry = it->path().filename().string();
    std::vector<int> nums = zone_numbers(entry);
    if (!nums.empty() && nums.size() <= 2) entries.emplace_back(std::move(nums), entry);
  }
  if (entries.empty()) {
    return {false, "no " + dir + "/intel-rapl:* zones (RAPL driver not loaded or not exposed)"};
  }
  std::sort(entries.begin(), entries.end());

  std::vector<std::pair<int, std::string>> package_names;  // top-level number -> name
  for (const auto& [nums, entry] : entries) {
    const std::string zone_dir = dir + "/" + entry;
    int err = 0;
    std::optional<std::string> zone_name = detail::read_trimmed(zone_dir + "/name", &err);
    if (!zone_name) return {false, detail::read_error(zone_dir + "/name", err)};
    std::optional<std::string> range =
        detail::read_trimmed(zone_dir + "/max_energy_range_uj", &err);
    if (!range) return {false, detail::read_error(zone_dir + "/max_energy_range_uj", err)};
    std::optional<uint64_t> max_range = detail::parse_u64(range->c_str());
    if (!max_range || *max_range == 0) {
      return {false,
              zone_dir + "/max_energy_range_uj: expected a positive integer, got '" + *range + "'"};
    }
    Zone zone;
    zone.energy_path = zone_dir + "/energy_uj";
    zone.max_range_uj = *max_range;
    char buf[64];
    int64_t n = detail::read_text(zone.energy_path.c_str(), buf, sizeof(buf));
    if (n < 0) return {false, detail::read_error(zone.energy_path, static_cast<int>(-n))};
    if (!detail::parse_u64(buf)) {
      return {false, zone.energy_path + ": expected an integer, got '" + std::string(buf) + "'"};
    }

    ChannelInfo ch;
    ch.source = "rapl";
    ch.kind = ChannelKind::kCounter;
    ch.in_total = zone_in_total(*zone_name);
    if (nums.size() == 1) {
      package_names.emplace_back(nums[0], *zone_name);
      ch.domain = *zone_name;
    } else {
      std::string parent = std::string(kZonePrefix) + std::to_string(nums[0]);
      for (const auto& [num, pname] : package_names) {
        if (num == nums[0]) parent = pname;
      }
      ch.domain = parent + "/" + *zone_name;
    }
    ch.label = entry + " (" + (ch.in_total ? "counted" : "inside another zone, not counted") +
               "; whole package, all processes)";
    zones_.push_back(std::move(zone));
    channels_.push_back(std::move(ch));
  }
  bool any_total = std::any_of(channels_.begin(), channels_.end(),
                               [](const ChannelInfo& c) { return c.in_total; });
  if (!any_total) return {false, dir + ": no package or dram zone among the RAPL zones"};
  return {true, ""};
}

bool RaplSource::read_counter(const Zone& zone, uint64_t* value_uj) const {
  char buf[64];
  if (detail::read_text(zone.energy_path.c_str(), buf, sizeof(buf)) < 0) return false;
  std::optional<uint64_t> v = detail::parse_u64(buf);
  if (!v) return false;
  *value_uj = *v;
  return true;
}

void RaplSource::start(int64_t /*now_ns*/) {
  for (Zone& zone : zones_) {
    zone.total_uj = 0;
    zone.has_last = read_counter(zone, &zone.last_uj);
  }
}

void RaplSource::sample(int64_t /*now_ns*/, Reading* out) {
  for (size_t i = 0; i < zones_.size(); ++i) {
    Zone& zone = zones_[i];
    out[i] = kEmptyReading;
    uint64_t cur = 0;
    if (!read_counter(zone, &cur)) continue;  // a failed read leaves a gap; the next read spans it
    if (zone.has_last) zone.total_uj += rapl_delta_uj(zone.last_uj, cur, zone.max_range_uj);
    zone.last_uj = cur;
    zone.has_last = true;
    out[i].energy_j = static_cast<double>(zone.total_uj) * 1e-6;
  }
}

}  // namespace llmprof::telemetry
