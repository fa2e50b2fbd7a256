// A plot described as data, rendered by gnuplot to SVG and PNG.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vla::report {

struct Series {
  enum class Style { line, dashed, dotted, points, linespoints, band, boxes };
  std::string title;   // legend entry; empty = no legend entry
  Style style = Style::line;
  int color = 0;       // index into the report's palette
  std::vector<double> x, y;
  std::vector<double> y_hi;  // band only: filled between y and y_hi (y empty: down to the bottom axis)
  // boxes only: a box-and-whisker per x (y = median); lo/q1/q3/hi.
  std::vector<double> lo, q1, q3, hi;
};

struct Mark {
  double at = 0.0;
  std::string label;
};

struct Plot {
  std::string id;       // file name stem: figures/<id>.svg, .png
  std::string title;
  std::string xlabel, ylabel;  // with units
  bool logx = false, logy = false;
  std::vector<Series> series;
  std::vector<Mark> vlines, hlines;
  std::optional<std::pair<double, double>> xrange, yrange;
  std::vector<std::pair<double, std::string>> xtics;  // explicit tick labels (categories)
  std::string key = "top left";  // gnuplot key position
};

// A name (a family, a claim id) as literal text in gnuplot's enhanced mode,
// where _ ^ { } @ & ~ would otherwise be markup.
std::string gp_literal(const std::string& name);

// A plot against the step t, as every per-step section draws one: log x from
// step 1 to last_step, log y unless told otherwise, the legend outside on the
// right. Callers add the series (and change what differs, e.g. the key).
Plot step_plot(std::string id, std::string title, std::string ylabel, double last_step, bool logy = true);

struct RenderedPlot {
  std::string svg;  // file contents
  std::string png;  // file contents (binary)
};

// True when a gnuplot executable with the svg and pngcairo terminals is on the PATH.
bool gnuplot_available();
std::string gnuplot_version();

// Writes <dir>/<id>.gp and <dir>/<id>.dat and runs gnuplot to produce
// <dir>/<id>.svg and <dir>/<id>.png. Throws std::runtime_error on failure.
void render_plot(const Plot& p, const std::string& dir);

// The plotted data, for report.json.
nlohmann::json to_json(const Plot& p);

// Points dropped because they cannot be drawn on a log axis (y <= 0 or NaN).
std::size_t undrawable_points(const Plot& p);

}  // namespace vla::report
