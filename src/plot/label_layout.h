// Private to src/plot: where to put the text labels of a scatter chart so that no two overlap and
// none covers a marker, in the canvas's pixels (y down). Points close together (on a log-log
// roofline, ops of the same intensity and speed) get their labels spread around them, a leader
// line marking the labels set further out.
#pragma once

#include <string>
#include <vector>

namespace llmprof::plot::detail {

// An axis-aligned box in pixels: x to the right, y down.
struct Box {
  double left = 0, top = 0, right = 0, bottom = 0;
  bool overlaps(const Box& o) const {
    return left < o.right && o.left < right && top < o.bottom && o.top < bottom;
  }
  double overlap_area(const Box& o) const;
};

// A marker: its centre and radius in pixels, with the text to write beside it ("" for none).
struct Marker {
  double x_px = 0, y_px = 0, radius_px = 0;
  std::string label;
};

// A label's place: its centre in pixels and whether it sits away from its marker (draw a leader).
struct LabelPlace {
  double x_px = 0, y_px = 0;
  bool far = false;
  Box box;
};

// Text metrics of the label font, in pixels.
struct TextMetrics {
  double char_width_px = 6.5;
  double line_height_px = 14;
};

// Places the labels of markers in order (the first ones, the most important, get the nearest
// free spot): above, below, right, left and the diagonals, then the same twice and three times as
// far; the first spot inside area that overlaps no placed label, no marker and no obstacle (a
// legend, say), else the spot with the least overlap. Returns one place per marker, in order;
// markers without a label get none (their box is empty).
std::vector<LabelPlace> place_labels(const std::vector<Marker>& markers,
                                     const Box& area,
                                     const std::vector<Box>& obstacles,
                                     const TextMetrics& font);

}  // namespace llmprof::plot::detail
