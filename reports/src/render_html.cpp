#include <sstream>

#include "vla/report/render.hpp"

namespace vla::report {

namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string html_cell(const Cell& c) {
  if (const auto* code = std::get_if<Code>(&c)) return "<code>" + esc(code->text) + "</code>";
  if (std::holds_alternative<Num>(c)) return "<span class=\"num\">" + esc(cell_text(c)) + "</span>";
  return esc(cell_text(c));
}

const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222;line-height:1.5}
h1{font-size:1.8em;border-bottom:2px solid #0072B2;padding-bottom:.2em}
h2{margin-top:2.2em;border-bottom:1px solid #ccc;padding-bottom:.15em}
nav{background:#f5f7fa;padding:.6em 1em;border-radius:6px}
nav a{margin-right:1em}
table{border-collapse:collapse;margin:1em 0;font-size:.93em}
th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}
th{background:#eef2f7}
tr:nth-child(even) td{background:#fafafa}
caption{caption-side:top;text-align:left;font-weight:600;padding-bottom:.3em}
.num{font-variant-numeric:tabular-nums;white-space:nowrap}
figure{margin:1.5em 0}
figure img{width:100%;max-width:900px;border:1px solid #ddd}
figcaption{font-size:.92em;color:#444}
pre{background:#f5f5f5;padding:.6em;overflow-x:auto}
code{background:#f2f2f2;padding:0 .2em;border-radius:3px}
.status{display:inline-block;font-size:.6em;vertical-align:middle;padding:.1em .5em;border-radius:4px;background:#E69F00;color:#fff;margin-left:.5em}
)";

}  // namespace

std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string o;
  o.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
    o += t[v >> 18];
    o += t[(v >> 12) & 63];
    o += t[(v >> 6) & 63];
    o += t[v & 63];
  }
  if (i + 1 == in.size()) {
    const unsigned v = (unsigned char)in[i] << 16;
    o += t[v >> 18];
    o += t[(v >> 12) & 63];
    o += "==";
  } else if (i + 2 == in.size()) {
    const unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8;
    o += t[v >> 18];
    o += t[(v >> 12) & 63];
    o += t[(v >> 6) & 63];
    o += '=';
  }
  return o;
}

std::string render_html(const Document& d, const std::map<std::string, std::string>& svgs) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" << esc(d.title)
    << "</title>\n<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n<style>" << kStyle
    << "</style></head><body>\n<h1>" << esc(d.title) << "</h1>\n<nav>";
  for (const auto& s : d.sections) h << "<a href=\"#" << s.id << "\">" << esc(s.title) << "</a>";
  h << "</nav>\n";
  for (const auto& s : d.sections) {
    h << "<section id=\"" << s.id << "\"><h2>" << esc(s.title);
    if (s.status != "ok") h << "<span class=\"status\">" << esc(s.status) << "</span>";
    h << "</h2>\n";
    for (const auto& b : s.blocks) {
      if (const auto* p = std::get_if<Paragraph>(&b)) {
        h << "<p>" << fill(*p, esc, html_cell) << "</p>\n";
      } else if (const auto* t = std::get_if<Table>(&b)) {
        h << "<table>";
        if (!t->caption.empty()) h << "<caption>" << esc(t->caption) << "</caption>";
        h << "<thead><tr>";
        for (const auto& c : t->columns) h << "<th>" << esc(c) << "</th>";
        h << "</tr></thead><tbody>\n";
        for (std::size_t r = 0; r < t->rows.size(); ++r) {
          h << "<tr>";
          for (std::size_t i = 0; i < t->rows[r].size(); ++i) {
            std::string cell = html_cell(t->rows[r][i]);
            if (i == 0 && r < t->row_links.size() && !t->row_links[r].empty())
              cell = "<a href=\"#" + t->row_links[r] + "\">" + cell + "</a>";
            h << "<td>" << cell << "</td>";
          }
          h << "</tr>\n";
        }
        h << "</tbody></table>\n";
      } else if (const auto* f = std::get_if<Figure>(&b)) {
        h << "<figure id=\"fig-" << f->plot.id << "\">";
        const auto it = svgs.find(f->plot.id);
        if (it != svgs.end()) {
          h << "<img alt=\"" << esc(f->caption) << "\" src=\"data:image/svg+xml;base64," << base64(it->second) << "\">";
        }
        h << "<figcaption>" << esc(f->caption) << " <a href=\"figures/" << f->plot.id << ".svg\">SVG</a> · <a href=\"figures/"
          << f->plot.id << ".png\">PNG</a></figcaption></figure>\n";
      } else {
        h << "<pre><code>" << esc(std::get<Code>(b).text) << "</code></pre>\n";
      }
    }
    h << "</section>\n";
  }
  h << "</body></html>\n";
  return h.str();
}

}  // namespace vla::report
