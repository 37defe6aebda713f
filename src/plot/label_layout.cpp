// Greedy label placement: each label, in order, takes the first free spot of a fixed ring of
// candidates around its marker (8 directions at 1, 2 and 3 times the gap), the least crowded one
// when none is free. Cheap (labels x candidates x boxes, a dozen labels) and deterministic.
#include "label_layout.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmprof::plot::detail {

double Box::overlap_area(const Box& o) const {
  const double w = std::min(right, o.right) - std::max(left, o.left);
  const double h = std::min(bottom, o.bottom) - std::max(top, o.top);
  return w > 0 && h > 0 ? w * h : 0;
}

namespace {

// Gap between a marker's edge and its label, in pixels.
constexpr double kGapPx = 3;
// Candidate directions (unit steps, y down): above, below, right, left, then the diagonals.
constexpr double kDirections[8][2] = {{0, -1}, {0, 1},   {1, 0}, {-1, 0},
                                      {1, -1}, {-1, -1}, {1, 1}, {-1, 1}};
constexpr int kRings = 3;

Box box_at(double cx, double cy, double w, double h) {
  return {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2};
}

Box marker_box(const Marker& m) { return box_at(m.x_px, m.y_px, 2 * m.radius_px, 2 * m.radius_px); }

// How much of b lies on what is already there (labels, markers, obstacles) or outside area.
double crowding(const Box& b,
                const Box& area,
                const std::vector<Box>& taken,
                const std::vector<Marker>& markers) {
  double sum = 0;
  for (const Box& t : taken) sum += t.overlap_area(b);
  for (const Marker& m : markers) sum += marker_box(m).overlap_area(b);
  const double inside = area.overlap_area(b);
  sum += (b.right - b.left) * (b.bottom - b.top) - inside;
  return sum;
}

}  // namespace

std::vector<LabelPlace> place_labels(const std::vector<Marker>& markers,
                                     const Box& area,
                                     const std::vector<Box>& obstacles,
                                     const TextMetrics& font) {
  std::vector<LabelPlace> out(markers.size());
  std::vector<Box> taken = obstacles;
  for (size_t i = 0; i < markers.size(); ++i) {
    const Marker& m = markers[i];
    if (m.label.empty()) continue;
    const double w = font.char_width_px * static_cast<double>(m.label.size());
    const double h = font.line_height_px;
    LabelPlace best;
    double best_crowding = std::numeric_limits<double>::infinity();
    for (int ring = 1; ring <= kRings && best_crowding > 0; ++ring) {
      for (const auto& d : kDirections) {
        // The label's near edge kGapPx * ring beyond the marker's edge in direction d.
        const double reach = m.radius_px + kGapPx * ring + (ring - 1) * h;
        const double cx = m.x_px + d[0] * (reach + w / 2);
        const double cy = m.y_px + d[1] * (reach + h / 2);
        const Box b = box_at(cx, cy, w, h);
        const double c = crowding(b, area, taken, markers);
        if (c < best_crowding) {
          best_crowding = c;
          best = {cx, cy, ring > 1, b};
        }
        if (c == 0) break;
      }
    }
    out[i] = best;
    taken.push_back(best.box);
  }
  return out;
}

}  // namespace llmprof::plot::detail
