// gnuplot back end: one data file and one script per plot, rendered twice
// (svg for the pages, pngcairo for viewers that want a bitmap).
#include "vla/report/plot.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "vla/report/process.hpp"

namespace vla::report {

namespace {

// Okabe-Ito: distinguishable with the common colour-vision deficiencies.
const char* const kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999999"};

const char* colour(int i) { return kPalette[((i % 8) + 8) % 8]; }

std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

bool drawable(double v, bool log) { return std::isfinite(v) && (!log || v > 0); }

std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

// Writes one gnuplot data block per series (blocks separated by two blank lines).
std::string data_blocks(const Plot& p) {
  std::ostringstream d;
  for (const auto& s : p.series) {
    d << "# " << s.title << "\n";
    bool any = false;
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!drawable(s.x[i], p.logx)) continue;
      if (s.style == Series::Style::boxes) {
        const double v[5] = {s.lo[i], s.q1[i], s.y[i], s.q3[i], s.hi[i]};
        bool ok = true;
        for (double e : v) ok = ok && drawable(e, p.logy);
        if (!ok) continue;
        d << num(s.x[i]);
        for (double e : v) d << ' ' << num(e);
        d << '\n';
      } else if (s.style == Series::Style::band && s.y.empty()) {
        if (!drawable(s.y_hi[i], p.logy)) continue;  // filled down to the bottom axis
        d << num(s.x[i]) << ' ' << num(s.y_hi[i]) << '\n';
      } else if (s.style == Series::Style::band) {
        if (!drawable(s.y[i], p.logy) || !drawable(s.y_hi[i], p.logy)) continue;
        d << num(s.x[i]) << ' ' << num(s.y[i]) << ' ' << num(s.y_hi[i]) << '\n';
      } else {
        if (!drawable(s.y[i], p.logy)) continue;
        d << num(s.x[i]) << ' ' << num(s.y[i]) << '\n';
      }
      any = true;
    }
    // gnuplot refuses an empty block: a point outside the view keeps the index numbering.
    if (!any) d << "NaN NaN NaN NaN NaN NaN\n";
    d << "\n\n";
  }
  return d.str();
}

std::string plot_clause(const Plot& p, const Series& s, std::size_t index, const std::string& dat) {
  std::ostringstream c;
  const std::string lc = std::string("lc rgb '") + colour(s.color) + "'";
  const std::string title = s.title.empty() ? "notitle" : "title " + quoted(s.title);
  c << quoted(dat) << " index " << index << ' ';
  switch (s.style) {
    case Series::Style::band:
      if (s.y.empty()) c << "using 1:2 with filledcurves x1 " << lc << " fs transparent solid 0.18 noborder " << title;
      else c << "using 1:2:3 with filledcurves " << lc << " fs transparent solid 0.18 noborder " << title;
      break;
    case Series::Style::line: c << "using 1:2 with lines lw 2 " << lc << ' ' << title; break;
    case Series::Style::dashed: c << "using 1:2 with lines lw 1.5 dt 2 " << lc << ' ' << title; break;
    case Series::Style::dotted: c << "using 1:2 with lines lw 2 dt 3 " << lc << ' ' << title; break;
    case Series::Style::points: c << "using 1:2 with points pt 7 ps 1.2 " << lc << ' ' << title; break;
    case Series::Style::linespoints: c << "using 1:2 with linespoints lw 2 pt 7 ps 0.8 " << lc << ' ' << title; break;
    case Series::Style::boxes:
      c << "using 1:3:2:6:5 with candlesticks whiskerbars 0.5 fs solid 0.35 " << lc << ' ' << title << ", "
        << quoted(dat) << " index " << index << " using 1:4:4:4:4 with candlesticks lw 2 lc rgb '#000000' notitle";
      break;
  }
  (void)p;
  return c.str();
}

// Range of the drawable values on one axis (x or y), over every series and mark.
std::pair<double, double> data_range(const Plot& p, bool y_axis) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  const bool log = y_axis ? p.logy : p.logx;
  auto add = [&](double v) {
    if (drawable(v, log)) lo = std::min(lo, v), hi = std::max(hi, v);
  };
  for (const auto& s : p.series) {
    if (!y_axis) {
      for (double v : s.x) add(v);
      continue;
    }
    for (const auto* v : {&s.y, &s.y_hi, &s.lo, &s.hi})
      for (double e : *v) add(e);
  }
  for (const auto& m : (y_axis ? p.hlines : p.vlines)) add(m.at);
  return {lo, hi};
}

// A log axis spanning less than a few decades gets 1-2-5 ticks with plain
// numbers: powers of ten alone would leave one or two labels.
std::string short_log_tics(const Plot& p, bool y_axis) {
  auto [lo, hi] = data_range(p, y_axis);
  const auto fixed = y_axis ? p.yrange : p.xrange;
  if (fixed) lo = fixed->first, hi = fixed->second;
  if (!(lo > 0) || !(hi >= lo) || hi / lo > 300) return "";
  std::ostringstream t;
  const char* axis = y_axis ? "y" : "x";
  t << "set format " << axis << " '%g'\nset " << axis << "tics (";
  bool first = true;
  for (int e = int(std::floor(std::log10(lo))) - 1; e <= int(std::ceil(std::log10(hi))); ++e)
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      t << (first ? "" : ", ") << num(v);
      first = false;
    }
  t << ")\n";
  return t.str();
}

std::string script(const Plot& p, const std::string& stem) {
  std::ostringstream g;
  g << "# generated by vla report; rerun with: gnuplot " << stem << ".gp\n";
  g << "set encoding utf8\n";
  g << "set terminal svg size 900,560 dynamic enhanced font 'Sans,14' background rgb 'white'\n";
  g << "set output " << quoted(stem + ".svg") << "\n";
  if (!p.title.empty()) g << "set title " << quoted(p.title) << " font ',15'\n";
  g << "set xlabel " << quoted(p.xlabel) << "\nset ylabel " << quoted(p.ylabel) << "\n";
  g << "set grid xtics ytics mxtics mytics lc rgb '#e0e0e0' lw 1, lc rgb '#f2f2f2' lw 1\n";
  g << "set border lc rgb '#444444'\n";
  g << "set key " << p.key << " box opaque samplen 2.5 spacing 1.1 font ',12'\n";
  if (p.logx) g << "set logscale x 10\nset format x '10^{%L}'\nset mxtics 10\n" << short_log_tics(p, false);
  if (p.logy) g << "set logscale y 10\nset format y '10^{%L}'\nset mytics 10\n" << short_log_tics(p, true);
  if (p.xrange) g << "set xrange [" << num(p.xrange->first) << ":" << num(p.xrange->second) << "]\n";
  if (p.yrange) {
    g << "set yrange [" << num(p.yrange->first) << ":" << num(p.yrange->second) << "]\n";
  } else if (p.logy) {
    // A margin above and below: points and marks at the extremes stay off the border.
    const auto [lo, hi] = data_range(p, true);
    if (lo > 0 && hi >= lo) g << "set yrange [" << num(lo / 2) << ":" << num(hi * 4) << "]\n";
  }
  if (!p.xtics.empty()) {
    g << "set xtics (";
    for (std::size_t i = 0; i < p.xtics.size(); ++i) {
      g << (i ? ", " : "") << quoted(p.xtics[i].second) << ' ' << num(p.xtics[i].first);
    }
    g << ") font ',12'\nunset mxtics\n";
  }
  for (const auto& s : p.series)
    if (s.style == Series::Style::boxes) {
      g << "set boxwidth 0.3 absolute\n";
      break;
    }
  int tag = 1;
  for (const auto& m : p.vlines) {
    g << "set arrow from first " << num(m.at) << ", graph 0 to first " << num(m.at)
      << ", graph 1 nohead dt 3 lw 1.5 lc rgb '#333333' front\n";
    g << "set label " << tag++ << ' ' << quoted(m.label) << " at first " << num(m.at)
      << ", graph 0.03 rotate by 90 left offset -0.8,0 font ',11' tc rgb '#333333' front\n";
  }
  for (const auto& m : p.hlines) {
    g << "set arrow from graph 0, first " << num(m.at) << " to graph 1, first " << num(m.at)
      << " nohead dt 3 lw 1.5 lc rgb '#333333' front\n";
    g << "set label " << tag++ << ' ' << quoted(m.label) << " at graph 0.98, first " << num(m.at)
      << " right offset 0,0.7 font ',11' tc rgb '#333333' front\n";
  }
  const std::string dat = stem + ".dat";
  g << "plot ";
  // Bands first so that lines are drawn over them.
  bool first = true;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < p.series.size(); ++i) {
      const bool band = p.series[i].style == Series::Style::band;
      if ((pass == 0) != band) continue;
      g << (first ? "" : ", \\\n     ") << plot_clause(p, p.series[i], i, dat);
      first = false;
    }
  }
  g << "\n";
  g << "set terminal pngcairo size 1200,750 enhanced font 'Sans,14' background rgb 'white'\n";
  g << "set output " << quoted(stem + ".png") << "\nreplot\nunset output\n";
  return g.str();
}

void write_text(const std::string& path, const std::string& s) {
  std::ofstream f(path, std::ios::binary);
  f << s;
  if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace

Plot step_plot(std::string id, std::string title, std::string ylabel, double last_step, bool logy) {
  Plot p;
  p.id = std::move(id);
  p.title = std::move(title);
  p.xlabel = "step t";
  p.ylabel = std::move(ylabel);
  p.logx = true;
  p.logy = logy;
  p.key = "outside right top vertical";
  p.xrange = std::make_pair(1.0, last_step);
  return p;
}

std::string gp_literal(const std::string& name) {
  std::string o;
  for (char c : name) {
    if (c == '_' || c == '^' || c == '{' || c == '}' || c == '@' || c == '&' || c == '~') o += '\\';
    o += c;
  }
  return o;
}

bool gnuplot_available() {
  static const bool ok = [] {
    const auto r = run_process({"gnuplot", "-e", "set terminal svg; set terminal pngcairo"});
    return r.status == 0 && r.output.find("unknown") == std::string::npos;
  }();
  return ok;
}

std::string gnuplot_version() {
  const auto r = run_process({"gnuplot", "--version"});
  std::string v = r.status == 0 ? r.output : "";
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
  return v;
}

void render_plot(const Plot& p, const std::string& dir) {
  if (p.series.empty()) throw std::logic_error("plot " + p.id + " has no series");
  for (const auto& s : p.series) {
    const bool band_to_axis = s.style == Series::Style::band && s.y.empty();
    const bool ok = (s.x.size() == s.y.size() || band_to_axis) &&
                    (s.style != Series::Style::band || s.y_hi.size() == s.x.size()) &&
                    (s.style != Series::Style::boxes ||
                     (s.lo.size() == s.x.size() && s.q1.size() == s.x.size() && s.q3.size() == s.x.size() && s.hi.size() == s.x.size()));
    if (!ok) throw std::logic_error("plot " + p.id + ": series '" + s.title + "' has mismatched lengths");
    // A legend naming two curves alike leaves the reader unable to tell them apart.
    const auto same = [&](const Series& o) { return o.title == s.title; };
    if (!s.title.empty() && std::count_if(p.series.begin(), p.series.end(), same) > 1)
      throw std::logic_error("plot " + p.id + ": two series are titled '" + s.title + "'");
  }
  write_text(dir + "/" + p.id + ".dat", data_blocks(p));
  write_text(dir + "/" + p.id + ".gp", script(p, p.id));
  // gnuplot resolves the data and output names relative to its working directory.
  const auto r = run_process({"sh", "-c", "cd " + shell_quote(dir) + " && gnuplot " + shell_quote(p.id + ".gp")});
  if (r.status != 0) throw std::runtime_error("gnuplot failed on " + p.id + ".gp: " + r.output);
  std::ifstream svg(dir + "/" + p.id + ".svg"), png(dir + "/" + p.id + ".png");
  if (!svg || !png) throw std::runtime_error("gnuplot produced no output for " + p.id);
}

nlohmann::json to_json(const Plot& p) {
  nlohmann::json series = nlohmann::json::array();
  for (const auto& s : p.series) {
    nlohmann::json j = {{"title", s.title}, {"x", s.x}, {"y", s.y}};
    if (s.style == Series::Style::band) j["y_hi"] = s.y_hi;
    if (s.style == Series::Style::boxes) {
      j["min"] = s.lo;
      j["q1"] = s.q1;
      j["q3"] = s.q3;
      j["max"] = s.hi;
    }
    series.push_back(j);
  }
  nlohmann::json marks = nlohmann::json::array();
  for (const auto& m : p.vlines) marks.push_back({{"axis", "x"}, {"at", m.at}, {"label", m.label}});
  for (const auto& m : p.hlines) marks.push_back({{"axis", "y"}, {"at", m.at}, {"label", m.label}});
  return {{"id", p.id},       {"title", p.title}, {"xlabel", p.xlabel}, {"ylabel", p.ylabel},
          {"logx", p.logx},   {"logy", p.logy},   {"series", series},   {"marks", marks},
          {"files", {"figures/" + p.id + ".svg", "figures/" + p.id + ".png"}}};
}

std::size_t undrawable_points(const Plot& p) {
  std::size_t n = 0;
  for (const auto& s : p.series)
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
      if (!drawable(s.x[i], p.logx) || !drawable(s.y[i], p.logy)) ++n;
  return n;
}

}  // namespace vla::report
