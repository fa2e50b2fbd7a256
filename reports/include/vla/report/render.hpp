// The two pages rendered from the document: report.md and index.html.
#pragma once

#include <map>
#include <string>

#include "vla/report/document.hpp"

namespace vla::report {

// Markdown; figures referenced as figures/<id>.svg (relative to the page).
std::string render_markdown(const Document& d);

// Self-contained HTML: `svgs` maps a plot id to its SVG file contents, inlined
// as data URIs (so gnuplot's element ids of several plots cannot collide).
std::string render_html(const Document& d, const std::map<std::string, std::string>& svgs);

std::string base64(const std::string& bytes);

}  // namespace vla::report
